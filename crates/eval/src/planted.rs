//! `textorigin quote-eval --planted`: recall and precision of quotation search on
//! lightly edited sentences, planted in real documents.
//!
//! The corpus (in order) is split into a collection (all but the last Q documents) and
//! Q query documents. Each query document gets a planted quotation of each length band
//! ([`BANDS`]), each appended as a paragraph of its own: a sentence of 5-9, one of 10-17
//! and one of 18-40 distinct words (the short and middle bands,
//! where an edit costs most, and the long ones), each taken from a random collection document, with one word (at a random
//! position) replaced by a word seen nowhere else. Everything is ingested through the
//! real path (shingle table, alignment, quotation search) into a fresh data directory,
//! once per configuration: the default, the parameters before issue 23 (part
//! signatures from 18 words on, no per-sentence candidate cap), and without the part
//! signatures of
//! [`textorigin_core::quote::part_signatures`] (the paper's qSign). For each planted
//! sentence:
//! - **recall**: it is reported as a quotation with the original sentence (or a
//!   sentence with the same words) among its sources;
//! - **precision**: of the planted sentences reported as quotations, the share whose
//!   best-scored source is the original (or has the same words).
//!
//! Also reported: index entries within the radius the per-probe cap left out, and the
//! ingestion time. The random choices are seeded, so a run is repeatable.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;
use textorigin_core::config::Overrides;
use textorigin_core::quote::{self, QuoteConfig};
use textorigin_core::rabin::Rabin;
use textorigin_core::testdata::XorShift;
use textorigin_core::text::tokenize;

use super::{EvalError, Result};
use textorigin_store::input::InputDoc;
use textorigin_store::intake::Policy;
use textorigin_store::storage::datadir::DataDir;

/// One planted sentence: where it went and where it came from.
#[derive(Debug, Clone)]
struct Plant {
    /// Index of the query document in the corpus.
    query: usize,
    /// Byte offset of the planted sentence in the query document's new text.
    start: u32,
    /// Index of the source document in the corpus, and of the sentence in it.
    source: usize,
    sentence: u32,
    /// The original sentence's distinct words.
    words: Vec<u64>,
    /// Its length band ([`BANDS`]).
    band: usize,
}

/// The planted sentences' lengths in distinct words.
pub const BANDS: [(usize, usize); 3] = [(5, 9), (10, 17), (18, 40)];

/// One configuration and length band.
#[derive(Debug, Clone, Serialize)]
pub struct PlantedRow {
    pub configuration: &'static str,
    /// Distinct words of the planted sentences: a band of [`BANDS`], "10-17" say.
    pub words: String,
    pub planted: usize,
    pub found: usize,
    pub recall: f64,
    /// Planted sentences reported with any source.
    pub reported: usize,
    pub best_right: usize,
    pub precision: f64,
    /// Entries within the radius the per-probe and per-sentence caps left out, over
    /// the whole run (of the configuration, every band).
    pub capped: u64,
    pub ingest_seconds: f64,
}

/// The evaluation's result.
#[derive(Debug, Clone, Serialize)]
pub struct PlantedEval {
    pub collection_documents: usize,
    pub query_documents: usize,
    pub rows: Vec<PlantedRow>,
}

/// A seeded generator (repeatable runs).
struct Rng(XorShift);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0.below(n as u64) as usize
    }
}

/// Picks the planted sentences and returns the query documents' new texts.
fn plant(docs: &[InputDoc], queries: usize) -> Result<(Vec<Plant>, Vec<String>)> {
    let rabin = Rabin::new(1).with_terms(textorigin_core::config::Config::default().terms);
    let collection = docs.len() - queries;
    let mut rng = Rng(XorShift::new(0x9e37_79b9_7f4a_7c15));
    let mut tokens = Vec::new();
    let mut plants = Vec::new();
    let mut texts = Vec::new();
    for query in collection..docs.len() {
        let mut text = docs[query].text.trim_end().to_string();
        for (band, &(lo, hi)) in BANDS.iter().enumerate() {
            let mut chosen = None;
            for _ in 0..200 {
                let source = rng.below(collection);
                let src = &docs[source].text;
                tokenize(src, &rabin, &mut tokens);
                let fit: Vec<(u32, quote::Sentence)> = quote::sentences(src, &tokens, rabin.terms())
                    .into_iter()
                    .enumerate()
                    .filter(|(_, s)| (lo..=hi).contains(&s.words.len()))
                    .map(|(i, s)| (i as u32, s))
                    .collect();
                if !fit.is_empty() {
                    chosen = Some((source, fit[rng.below(fit.len())].clone()));
                    break;
                }
            }
            let Some((source, (sentence, s))) = chosen else {
                return Err(EvalError::Corpus(format!("the collection has no sentence of {lo}-{hi} distinct words")));
            };
            // Replace one word of the sentence by one seen nowhere else.
            let original = &docs[source].text[s.start as usize..s.end as usize];
            tokenize(original, &rabin, &mut tokens);
            let t = tokens[rng.below(tokens.len())];
            let edited =
                format!("{}zqplanted{}{}", &original[..t.start as usize], plants.len(), &original[t.end as usize..]);
            let start = (text.len() + 2) as u32;
            text = format!("{text}\n\n{edited}");
            plants.push(Plant { query, start, source, sentence, words: s.words, band });
        }
        texts.push(format!("{text}\n"));
    }
    Ok((plants, texts))
}

/// Runs the evaluation with `queries` planted documents; `dir` receives the data
/// directories.
pub fn run(
    docs: &[InputDoc],
    queries: usize,
    dir: &Path,
    mut progress: impl FnMut(&str, usize, usize),
) -> Result<PlantedEval> {
    if docs.len() <= queries || queries == 0 {
        return Err(EvalError::Corpus(format!("the corpus needs more than {queries} documents")));
    }
    let (plants, texts) = plant(docs, queries)?;
    let collection = docs.len() - queries;
    let mut rows = Vec::new();
    let configurations = [
        ("default", QuoteConfig::default()),
        ("before issue 23 (3 single groups from 18 words, no per-sentence cap)", QuoteConfig::before_schema_8()),
        ("no part signatures (qSign)", QuoteConfig { splits: 0, pairs: false, ..QuoteConfig::default() }),
    ];
    for (n, (configuration, quotes)) in configurations.into_iter().enumerate() {
        let overrides = Overrides { quotes: Some(quotes), ..Overrides::default() };
        let mut dd = DataDir::open_write(&dir.join(format!("data-{n}")), &overrides, Policy::default())?;
        let mut seqs = vec![None; docs.len()];
        let start = Instant::now();
        for (i, d) in docs.iter().enumerate() {
            let doc =
                if i < collection { d.clone() } else { InputDoc { text: texts[i - collection].clone(), ..d.clone() } };
            // Token-less documents are skipped, as in ingestion.
            if let Ok((meta, _)) = dd.ingest(&doc) {
                seqs[i] = Some(meta.seq);
            }
            progress(configuration, i + 1, docs.len());
        }
        let ingest_seconds = start.elapsed().as_secs_f64();
        let mut counts = [(0, 0, 0, 0); BANDS.len()]; // planted, found, reported, best right
        for p in &plants {
            let (planted, found, reported, best_right) = &mut counts[p.band];
            *planted += 1;
            let (Some(qseq), Some(sseq)) = (seqs[p.query], seqs[p.source]) else { continue };
            let Some(q) = dd.store().quotations(qseq)?.into_iter().find(|q| q.start_byte == p.start) else { continue };
            let right = |seq: u64, idx: u32| -> Result<bool> {
                Ok((seq, idx) == (sseq, p.sentence)
                    || dd.recomputer().sentence(dd.store(), seq, idx)?.is_some_and(|s| s.words() == p.words))
            };
            *reported += 1;
            let mut any = false;
            for s in &q.sources {
                any |= right(s.seq, s.sentence)?;
            }
            *found += usize::from(any);
            *best_right +=
                usize::from(q.sources.first().map(|s| right(s.seq, s.sentence)).transpose()?.unwrap_or(false));
        }
        let pct = |a: usize, b: usize| if b == 0 { 0.0 } else { 100.0 * a as f64 / b as f64 };
        for (&(lo, hi), (planted, found, reported, best_right)) in BANDS.iter().zip(counts) {
            rows.push(PlantedRow {
                configuration,
                words: format!("{lo}-{hi}"),
                planted,
                found,
                recall: pct(found, planted),
                reported,
                best_right,
                precision: pct(best_right, reported),
                capped: dd.quote_capped(),
                ingest_seconds,
            });
        }
        dd.close()?;
    }
    Ok(PlantedEval { collection_documents: collection, query_documents: queries, rows })
}

/// The evaluation for people.
pub fn markdown(r: &PlantedEval) -> String {
    let bands: Vec<String> = BANDS.iter().map(|(lo, hi)| format!("{lo}-{hi}")).collect();
    let mut out = format!(
        "collection: {} documents; {} query documents, each with a planted sentence of {} distinct words, each with one word changed\n",
        r.collection_documents,
        r.query_documents,
        bands.join(", ")
    );
    out += "| configuration | words | planted | found | recall | reported | best source right | precision | capped entries | ingest s |\n";
    out += "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
    for x in &r.rows {
        out += &format!(
            "| {} | {} | {} | {} | {:.1}% | {} | {} | {:.1}% | {} | {:.1} |\n",
            x.configuration,
            x.words,
            x.planted,
            x.found,
            x.recall,
            x.reported,
            x.best_right,
            x.precision,
            x.capped,
            x.ingest_seconds
        );
    }
    out
}
