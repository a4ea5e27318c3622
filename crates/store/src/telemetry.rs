//! What ingestion measures about itself: seconds per stage ([`StageTimes`]) and
//! per-document latency histograms ([`Latency`]). The data directory fills them as it
//! applies documents; the daemon publishes them and the views render them (`stats`,
//! `/metrics`, `bench --end-to-end`). A new measurement is a field here, filled in
//! `storage::datadir` and rendered in the server's `view::prometheus`.

/// Seconds spent per stage of ingestion (wall time of the thread doing it; preparation
/// is counted where it runs, on a parser thread or inline), and the documents each
/// switchable feature worked on.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct StageTimes {
    /// Tokens, fingerprints, selection, sketch and sentences.
    pub prepare: f64,
    /// Site template lines: their counts, the records of the pages given one.
    pub templates: f64,
    /// Near-duplicate candidates and verdicts.
    pub neardup: f64,
    /// Quotation search.
    pub quotes: f64,
    /// Table lookups, insertions and Lucky scoring.
    pub table: f64,
    /// Estimation and the document's result.
    pub estimation: f64,
    /// Aligning copied blocks against their origins' texts.
    pub align: f64,
    /// Adding the document to the derived indexes.
    pub index: f64,
    /// The document's write batch.
    pub store: f64,
    /// Documents sketched and compared for near-duplicates (0 when that is off).
    pub sketches: u64,
    /// Documents whose sentences were searched for quotations (0 when that is off).
    pub quote_searches: u64,
}

impl StageTimes {
    /// Each stage with its name, in pipeline order.
    pub fn named(&self) -> [(&'static str, f64); 9] {
        [
            ("prepare", self.prepare),
            ("templates", self.templates),
            ("table", self.table),
            ("estimation", self.estimation),
            ("align", self.align),
            ("neardup", self.neardup),
            ("quotes", self.quotes),
            ("index", self.index),
            ("store", self.store),
        ]
    }

    /// The seconds spent since `before` (an earlier reading of the same counters).
    pub fn since(&self, before: &StageTimes) -> StageTimes {
        StageTimes {
            prepare: self.prepare - before.prepare,
            templates: self.templates - before.templates,
            neardup: self.neardup - before.neardup,
            quotes: self.quotes - before.quotes,
            table: self.table - before.table,
            estimation: self.estimation - before.estimation,
            align: self.align - before.align,
            index: self.index - before.index,
            store: self.store - before.store,
            sketches: self.sketches - before.sketches,
            quote_searches: self.quote_searches - before.quote_searches,
        }
    }

    /// The sum of all stages.
    pub fn total(&self) -> f64 {
        self.named().iter().map(|x| x.1).sum()
    }
}

/// Upper bounds (seconds) of the buckets of [`Latency`].
pub const LATENCY_BOUNDS: [f64; 13] =
    [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0];

/// A histogram of seconds with cumulative buckets (Prometheus's convention).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Histogram {
    /// Observations of at most [`LATENCY_BOUNDS`]`[i]` seconds.
    pub buckets: [u64; LATENCY_BOUNDS.len()],
    pub count: u64,
    pub sum: f64,
}

impl Histogram {
    pub(crate) fn add(&mut self, seconds: f64) {
        for (b, &bound) in self.buckets.iter_mut().zip(&LATENCY_BOUNDS) {
            *b += u64::from(seconds <= bound);
        }
        self.count += 1;
        self.sum += seconds;
    }
}

/// Per document applied: seconds from the start of its analysis to its stored batch,
/// seconds per stage of [`StageTimes`] (preparation, done elsewhere, aside), text bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Latency {
    pub document: Histogram,
    /// In the order of [`StageTimes::named`], preparation left out.
    pub stages: [Histogram; 8],
    pub text_bytes: u64,
}

impl Latency {
    pub(crate) fn add(&mut self, seconds: f64, before: &StageTimes, after: &StageTimes, text_bytes: u64) {
        self.document.add(seconds);
        for (h, (_, v)) in self.stages.iter_mut().zip(after.since(before).named().into_iter().skip(1)) {
            h.add(v);
        }
        self.text_bytes += text_bytes;
    }
}
