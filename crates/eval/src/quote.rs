//! `textorigin quote-eval`: recall and speed of qSign against a naive full scan and an
//! inverted-index baseline, as in Table 2 and Figures 8-10 of the qSign paper.
//!
//! The corpus (in order) is split into a collection (all but the last Q documents) and
//! the query documents (the last Q). The collection is ingested through the real path
//! into a fresh data directory whose index is built for radii up to 5 (3 pieces of
//! 11/11/10 bits, each probed within 1 bit), with no cap per probe, so every radius
//! d = 0..5 is searched exactly. For every query sentence (at least `min_words`
//! distinct words):
//! - **naive**: the score against every collection sentence (in memory); the pairs
//!   scoring at least 0.5 are the ground truth, grouped by score level as in Table 2;
//! - **inverted index**: every collection sentence sharing a word with the query (from
//!   in-memory postings) is scored; no prefix filtering, so this is a simple stand-in
//!   for the all-pairs method of Bayardo et al.;
//! - **qSign** at d = 0..5 and at the formula's radius: candidates from the RocksDB
//!   index, then scored;
//! - **the defaults**, before issue 23 and now: the collection ingested again with
//!   each configuration's index (part signatures, their radius 0, the per-sentence
//!   cap), candidates found and ranked as `quote::find` does, then scored (every source
//!   counted, not only the `max_sources` best).
//!
//! - **what a reader sees** at default settings: the query documents ingested after
//!   the collection into the defaults' data directory, and each query sentence with a
//!   pair of 0.8 or more counted found when its stored quotation names such a pair, or
//!   (found either way) when copied blocks whose origin holds such a pair cover at
//!   least [`BLOCK_COVER`] of its words; the rest by why.
//!
//! Reported: recall per level and radius, candidates per sentence, time per sentence
//! and the speed-up over the two baselines. qSign reads RocksDB; the baselines run in
//! memory, so the speed-ups are conservative.

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use super::{EvalError, Result};
use serde::Serialize;

use textorigin_core::config::Overrides;
use textorigin_core::index::Indexes;
use textorigin_core::quote::{self, QuoteConfig, Sentence};
use textorigin_core::rabin::Rabin;
use textorigin_core::text::tokenize;
use textorigin_store::input::InputDoc;
use textorigin_store::intake::Policy;
use textorigin_store::storage::datadir::DataDir;

/// Score levels of Table 2 (lower bound inclusive for the last, exclusive otherwise).
pub const LEVELS: [(f64, f64); 5] = [(0.9, 1.0), (0.8, 0.9), (0.7, 0.8), (0.6, 0.7), (0.5, 0.6)];

/// One radius (or the formula) of the qSign run.
#[derive(Debug, Clone, Serialize)]
pub struct RadiusRow {
    /// "0".."5" or "formula".
    pub radius: String,
    /// Recall per level of [`LEVELS`].
    pub recall: Vec<f64>,
    /// Recall over all pairs scoring ≥ 0.5.
    pub recall_all: f64,
    /// Of the query sentences with a true pair scoring 0.8 or more, the share for which
    /// one was found: what a user sees (a quotation is reported with its best
    /// `max_sources` sources, so a boilerplate sentence with hundreds of earlier copies
    /// is served by a few of them, while pair recall counts them all).
    pub sentence_recall_08: f64,
    pub candidates_per_sentence: f64,
    pub micros_per_sentence: f64,
    pub speedup_vs_naive: f64,
    pub speedup_vs_inverted: f64,
}

/// The evaluation's result.
#[derive(Debug, Clone, Serialize)]
pub struct QuoteEval {
    pub collection_documents: usize,
    pub collection_sentences: usize,
    pub query_documents: usize,
    pub query_sentences: usize,
    /// Ground-truth pairs per level of [`LEVELS`].
    pub pairs_per_level: Vec<u64>,
    pub naive_micros_per_sentence: f64,
    pub inverted_micros_per_sentence: f64,
    pub inverted_candidates_per_sentence: f64,
    pub rows: Vec<RadiusRow>,
    /// The query sentences with a true pair of 0.8 or more that the defaults' search
    /// misses, by why.
    pub misses: Vec<MissRow>,
    /// What a reader of the defaults' results sees of the same sentences, the query
    /// documents ingested after the collection through the real path.
    pub seen: Seen,
}

/// Of the query sentences with a true pair scoring 0.8 or more, how many a reader of
/// the stored results finds: by a quotation naming such a pair, or either by that or by
/// copied blocks whose origin holds such a pair and that cover at least 80% of the
/// sentence's words; and the rest by why (as [`MissRow`]).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Seen {
    pub sentences: u64,
    pub by_quotation: u64,
    pub either_way: u64,
    pub misses: Vec<MissRow>,
}

/// The share of the blocks' coverage a sentence needs to count as found by them.
pub const BLOCK_COVER: f64 = 0.8;

/// One kind of sentence the defaults miss: how many, and their length in distinct words.
#[derive(Debug, Clone, Serialize)]
pub struct MissRow {
    pub kind: &'static str,
    pub sentences: u64,
    pub mean_words: f64,
    /// The mean length of their best earlier sentence, in distinct words.
    pub mean_source_words: f64,
}

/// Why the defaults miss query sentence `q`, whose true pairs scoring 0.8 or more are
/// `best` (key, score): one of them among the candidates before the cap; its earlier
/// sentence at least a quarter longer (the query is a part of it, as a headline's
/// sentence with its first line, or a quotation inside a longer sentence), or shorter by
/// a quarter (the query adds to it); or of about its length (edited).
fn miss_kind(
    q: &Sentence,
    best: &[((u64, u32), f64)],
    uncapped: &[(u64, u32)],
    by_key: &HashMap<(u64, u32), &Sentence>,
) -> (&'static str, usize) {
    let (key, _) = best.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)).expect("a pair of 0.8 or more");
    let n_s = by_key[&key].words.len();
    let n_q = q.words.len();
    let kind = if best.iter().any(|(k, _)| uncapped.contains(k)) {
        "cut by the cap of candidates"
    } else if n_s * 4 >= n_q * 5 {
        "inside a longer earlier sentence"
    } else if n_s * 5 <= n_q * 4 {
        "adds to a shorter earlier sentence"
    } else {
        "edited (about the same length)"
    };
    (kind, n_s)
}

fn level_of(score: f64) -> Option<usize> {
    LEVELS.iter().position(|&(lo, hi)| if lo == 0.5 { score >= lo && score <= hi } else { score > lo && score <= hi })
}

/// Runs the evaluation with `queries` query documents; `dir` receives the data directory.
pub fn run(
    docs: &[InputDoc],
    queries: usize,
    dir: &Path,
    mut progress: impl FnMut(&str, usize, usize),
) -> Result<QuoteEval> {
    if docs.len() <= queries {
        return Err(EvalError::Corpus(format!("the corpus needs more than {queries} documents")));
    }
    // The paper's qSign: full signatures only (part signatures are measured by
    // `--planted`, [`super::planted`]).
    let qcfg =
        QuoteConfig { d_max: 5, pieces: 3, max_per_probe: u32::MAX, splits: 0, pairs: false, ..QuoteConfig::default() };
    // An index large enough that few signatures are evicted: this measures the search.
    let overrides = Overrides {
        table_bytes: Some(16 << 20),
        index_bytes: Some(64 << 20),
        quotes: Some(qcfg.clone()),
        ..Default::default()
    };
    let (collection, query_docs) = docs.split_at(docs.len() - queries);
    let mut dd = DataDir::open_write(dir, &overrides, Policy::default())?;
    for (i, d) in collection.iter().enumerate() {
        let _ = dd.ingest(d); // token-less documents are skipped as in ingestion
        progress("ingest", i + 1, collection.len());
    }
    let store = dd.store();
    let indexes = dd.indexes();
    let sentences: Vec<((u64, u32), Sentence)> = dd.recomputer().all_sentences(store)?;
    let (qs, q_doc) = query_sentences(query_docs, &qcfg)?;
    // Precompute idf for all query words (so timings measure the search, not df reads).
    let n_docs = indexes.documents();
    let mut idf_cache: HashMap<u64, f64> = HashMap::new();
    for &w in qs.iter().flat_map(|s| &s.words) {
        if let std::collections::hash_map::Entry::Vacant(e) = idf_cache.entry(w) {
            e.insert((n_docs as f64 / indexes.df(w).max(1) as f64).ln().max(0.0));
        }
    }
    let idf_of = |w: u64| idf_cache.get(&w).copied().unwrap_or(0.0);
    let (truth, naive) = naive_scan(&qs, &sentences, idf_of, &mut progress);
    let mut pairs_per_level = vec![0u64; LEVELS.len()];
    for &l in truth.iter().flat_map(HashMap::values) {
        pairs_per_level[l] += 1;
    }
    let (inverted, inv_candidates) = inverted_scan(&qs, &sentences, idf_of);
    // Query sentences with a true pair scoring 0.8 or more (levels 0 and 1).
    let with08 = truth.iter().filter(|t| t.values().any(|&l| l <= 1)).count() as u64;
    let by_key: HashMap<(u64, u32), &Sentence> = sentences.iter().map(|(k, s)| (*k, s)).collect();
    let share = |a: u64, b: u64| if b == 0 { 1.0 } else { a as f64 / b as f64 };
    // A search's row from what [`measure`] found.
    let row = |radius: String, (found, candidates, secs, hit08): (Vec<u64>, u64, f64, u64)| RadiusRow {
        radius,
        recall: found.iter().zip(&pairs_per_level).map(|(&f, &t)| share(f, t)).collect(),
        recall_all: share(found.iter().sum(), pairs_per_level.iter().sum()),
        sentence_recall_08: share(hit08, with08),
        candidates_per_sentence: candidates as f64 / qs.len() as f64,
        micros_per_sentence: secs * 1e6,
        speedup_vs_naive: naive / secs,
        speedup_vs_inverted: inverted / secs,
    };
    let mut rows = Vec::new();
    let mut misses = Vec::new();
    for radius in (0..=5u32).map(Some).chain([None]) {
        let measured = measure(&qs, &by_key, &truth, idf_of, qsign_search(&indexes, &qcfg, radius));
        rows.push(row(radius.map_or("formula".to_string(), |d| d.to_string()), measured));
        progress("qSign radii", rows.len(), 9);
    }
    let mut seen = Seen::default();
    let configurations =
        [("defaults before issue 23", QuoteConfig::before_schema_8()), ("defaults", QuoteConfig::default())];
    for (n, (name, cfg)) in configurations.into_iter().enumerate() {
        // Every other setting at its default (the table's and the index's sizes too).
        let overrides = Overrides { quotes: Some(cfg.clone()), ..Default::default() };
        let mut other =
            DataDir::open_write(&dir.with_extension(format!("defaults-{n}")), &overrides, Policy::default())?;
        for d in collection {
            let _ = other.ingest(d); // token-less documents are skipped as in ingestion
        }
        let indexes = other.indexes();
        rows.push(row(name.to_string(), measure(&qs, &by_key, &truth, idf_of, defaults_search(&indexes, &cfg))));
        if name == "defaults" {
            let why = miss_kinds(&qs, &by_key, &truth, idf_of, &indexes, &cfg);
            misses = tally_misses(&qs, &why, |i| why[i].is_some_and(|w| w.0 != FOUND_BY_SEARCH));
            let (quoted, either) = seen_by_reader(&mut other, query_docs, &qs, &q_doc, &truth)?;
            seen = Seen {
                sentences: with08,
                by_quotation: quoted.iter().filter(|&&f| f).count() as u64,
                either_way: either.iter().filter(|&&f| f).count() as u64,
                misses: tally_misses(&qs, &why, |i| !either[i]),
            };
        }
        other.close()?;
        progress("qSign radii", rows.len(), 9);
    }
    let result = QuoteEval {
        collection_documents: collection.len(),
        collection_sentences: sentences.len(),
        query_documents: query_docs.len(),
        query_sentences: qs.len(),
        pairs_per_level,
        naive_micros_per_sentence: naive * 1e6,
        inverted_micros_per_sentence: inverted * 1e6,
        inverted_candidates_per_sentence: inv_candidates as f64 / qs.len() as f64,
        rows,
        misses,
        seen,
    };
    dd.close()?;
    Ok(result)
}

/// The kind of a sentence `cfg`'s search finds (a reader may still not see it).
const FOUND_BY_SEARCH: &str = "found by the search, not shown in the results";

/// For each query sentence with a true pair of 0.8 or more: whether `cfg`'s search
/// finds it ([`FOUND_BY_SEARCH`]) or why not ([`miss_kind`]), and the length of its
/// best earlier sentence; `None` for the other sentences.
fn miss_kinds(
    qs: &[Sentence],
    by_key: &HashMap<(u64, u32), &Sentence>,
    truth: &[HashMap<(u64, u32), usize>],
    idf_of: impl Fn(u64) -> f64 + Copy,
    indexes: &Indexes<&[u8]>,
    cfg: &QuoteConfig,
) -> Vec<Option<(&'static str, usize)>> {
    let uncapped_cfg = QuoteConfig { max_candidates: u32::MAX, ..cfg.clone() };
    let (mut capped, mut uncapped) = (defaults_search(indexes, cfg), defaults_search(indexes, &uncapped_cfg));
    qs.iter()
        .zip(truth)
        .map(|(q, truth)| {
            if !truth.values().any(|&l| l <= 1) {
                return None;
            }
            let scorer = quote::Scorer::with_idf(&q.words, idf_of);
            let best: Vec<((u64, u32), f64)> =
                truth.iter().filter(|(_, &l)| l <= 1).map(|(&k, _)| (k, scorer.score(&by_key[&k].words))).collect();
            if capped(q).iter().any(|k| truth.get(k).is_some_and(|&l| l <= 1)) {
                let (key, _) = best.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)).expect("a pair of 0.8 or more");
                return Some((FOUND_BY_SEARCH, by_key[&key].words.len()));
            }
            Some(miss_kind(q, &best, &uncapped(q), by_key))
        })
        .collect()
}

/// The query sentences with a kind in `why` that `missed` says are missed, by kind.
fn tally_misses(
    qs: &[Sentence],
    why: &[Option<(&'static str, usize)>],
    missed: impl Fn(usize) -> bool,
) -> Vec<MissRow> {
    let mut kinds: Vec<(&'static str, u64, usize, usize)> = Vec::new();
    for (i, q) in qs.iter().enumerate().filter(|&(i, _)| missed(i)) {
        let Some((kind, n_s)) = why[i] else { continue };
        match kinds.iter_mut().find(|k| k.0 == kind) {
            Some(k) => {
                k.1 += 1;
                k.2 += q.words.len();
                k.3 += n_s;
            }
            None => kinds.push((kind, 1, q.words.len(), n_s)),
        }
    }
    kinds
        .into_iter()
        .map(|(kind, n, w, s)| MissRow {
            kind,
            sentences: n,
            mean_words: w as f64 / n as f64,
            mean_source_words: s as f64 / n as f64,
        })
        .collect()
}

/// Ingests the query documents into `dd` (which holds the collection) and says, for
/// each query sentence, whether its stored result shows a true pair of 0.8 or more: by
/// a quotation naming one as a source, and either by that or by copied blocks whose
/// origin holds one covering at least [`BLOCK_COVER`] of the sentence's words.
fn seen_by_reader(
    dd: &mut DataDir,
    query_docs: &[InputDoc],
    qs: &[Sentence],
    q_doc: &[usize],
    truth: &[HashMap<(u64, u32), usize>],
) -> Result<(Vec<bool>, Vec<bool>)> {
    let rabin = Rabin::new(1).with_terms(textorigin_core::config::Config::default().terms);
    let (mut quoted, mut either) = (vec![false; qs.len()], vec![false; qs.len()]);
    let mut tokens = Vec::new();
    let mut i = 0;
    for (n, d) in query_docs.iter().enumerate() {
        // A document that fails (no tokens) has no sentence here.
        let Ok((_, result)) = dd.ingest(d) else { continue };
        let quotations = dd.store().quotations(result.seq)?;
        tokenize(&d.text, &rabin, &mut tokens);
        while i < qs.len() && q_doc[i] < n {
            i += 1;
        }
        while i < qs.len() && q_doc[i] == n {
            let (q, truth) = (&qs[i], &truth[i]);
            let true_pair = |k: &(u64, u32)| truth.get(k).is_some_and(|&l| l <= 1);
            quoted[i] = quotations.iter().any(|x| {
                x.start_byte == q.start
                    && x.end_byte == q.end
                    && x.sources.iter().any(|s| true_pair(&(s.seq, s.sentence)))
            });
            let origins: Vec<u64> = truth.iter().filter(|(k, _)| true_pair(k)).map(|(k, _)| k.0).collect();
            let words = tokens.iter().filter(|t| t.start >= q.start && t.end <= q.end);
            let covered = words.clone().filter(|t| {
                result
                    .copied_blocks
                    .iter()
                    .any(|b| origins.contains(&b.origin) && b.span.start_byte <= t.start && t.end <= b.span.end_byte)
            });
            let (n_words, n_covered) = (words.count(), covered.count());
            either[i] = quoted[i] || (n_words > 0 && n_covered as f64 >= BLOCK_COVER * n_words as f64);
            i += 1;
        }
    }
    Ok((quoted, either))
}

/// The query documents' sentences of at least `min_words` words, and the index of each
/// one's document.
fn query_sentences(query_docs: &[InputDoc], qcfg: &QuoteConfig) -> Result<(Vec<Sentence>, Vec<usize>)> {
    let rabin = Rabin::new(1).with_terms(textorigin_core::config::Config::default().terms);
    let mut tokens = Vec::new();
    let (mut qs, mut q_doc): (Vec<Sentence>, Vec<usize>) = (Vec::new(), Vec::new());
    for (n, d) in query_docs.iter().enumerate() {
        tokenize(&d.text, &rabin, &mut tokens);
        for s in quote::sentences(&d.text, &tokens, rabin.terms()) {
            if s.words.len() as u32 >= qcfg.min_words {
                qs.push(s);
                q_doc.push(n);
            }
        }
    }
    if qs.is_empty() {
        return Err(EvalError::Corpus(format!(
            "the query documents have no sentence of {} words or more",
            qcfg.min_words
        )));
    }
    Ok((qs, q_doc))
}

/// For each query sentence: the stored sentences scoring 0.5 or more, with their level.
type Truth = Vec<HashMap<(u64, u32), usize>>;

/// The ground truth by a naive full scan: for each query sentence, the level of every
/// stored sentence scoring 0.5 or more; and the seconds per query sentence.
fn naive_scan(
    qs: &[Sentence],
    sentences: &[((u64, u32), Sentence)],
    idf_of: impl Fn(u64) -> f64 + Copy,
    progress: &mut impl FnMut(&str, usize, usize),
) -> (Truth, f64) {
    let start = Instant::now();
    let mut truth: Truth = Vec::with_capacity(qs.len());
    for (i, q) in qs.iter().enumerate() {
        let mut t = HashMap::new();
        let scorer = quote::Scorer::with_idf(&q.words, idf_of);
        for (key, s) in sentences {
            let sc = scorer.score(&s.words);
            if let Some(level) = level_of(sc) {
                t.insert(*key, level);
            }
        }
        truth.push(t);
        if i % 16 == 0 {
            progress("naive scan", i + 1, qs.len());
        }
    }
    (truth, start.elapsed().as_secs_f64() / qs.len() as f64)
}

/// An inverted index over words: seconds and candidates per query sentence.
fn inverted_scan(
    qs: &[Sentence],
    sentences: &[((u64, u32), Sentence)],
    idf_of: impl Fn(u64) -> f64 + Copy,
) -> (f64, u64) {
    let mut postings: HashMap<u64, Vec<u32>> = HashMap::new();
    for (i, (_, s)) in sentences.iter().enumerate() {
        for &w in &s.words {
            postings.entry(w).or_default().push(i as u32);
        }
    }
    let start = Instant::now();
    let mut inv_candidates = 0u64;
    let mut seen = vec![false; sentences.len()];
    for q in qs {
        let mut cands = Vec::new();
        for w in &q.words {
            for &c in postings.get(w).map(Vec::as_slice).unwrap_or(&[]) {
                if !seen[c as usize] {
                    seen[c as usize] = true;
                    cands.push(c);
                }
            }
        }
        inv_candidates += cands.len() as u64;
        let scorer = quote::Scorer::with_idf(&q.words, idf_of);
        for c in cands {
            seen[c as usize] = false;
            std::hint::black_box(scorer.score(&sentences[c as usize].1.words));
        }
    }
    (start.elapsed().as_secs_f64() / qs.len() as f64, inv_candidates)
}

/// Scores query sentence `q` against `cands` and counts the true pairs (score ≥ 0.5,
/// in `truth`) found, per level, into `found`; whether one of them scores 0.8 or more.
fn score_found(
    q: &Sentence,
    cands: Vec<(u64, u32)>,
    by_key: &HashMap<(u64, u32), &Sentence>,
    truth: &HashMap<(u64, u32), usize>,
    idf_of: impl Fn(u64) -> f64 + Copy,
    found: &mut [u64],
) -> bool {
    let scorer = quote::Scorer::with_idf(&q.words, idf_of);
    let mut hit08 = false;
    for key in cands {
        let Some(s) = by_key.get(&key) else { continue };
        if scorer.score(&s.words) >= 0.5 {
            if let Some(&l) = truth.get(&key) {
                found[l] += 1;
                hit08 |= l <= 1;
            }
        }
    }
    hit08
}

/// Scores every query sentence against the candidates `search` gives it: true pairs
/// found per level, candidates, seconds per query sentence, and the query sentences
/// with a pair of 0.8 or more found.
fn measure(
    qs: &[Sentence],
    by_key: &HashMap<(u64, u32), &Sentence>,
    truth: &[HashMap<(u64, u32), usize>],
    idf_of: impl Fn(u64) -> f64 + Copy,
    mut search: impl FnMut(&Sentence) -> Vec<(u64, u32)>,
) -> (Vec<u64>, u64, f64, u64) {
    let start = Instant::now();
    let mut found = vec![0u64; LEVELS.len()];
    let (mut candidates, mut hit08) = (0u64, 0u64);
    for (q, truth) in qs.iter().zip(truth) {
        let cands = search(q);
        candidates += cands.len() as u64;
        hit08 += u64::from(score_found(q, cands, by_key, truth, idf_of, &mut found));
    }
    (found, candidates, start.elapsed().as_secs_f64() / qs.len() as f64, hit08)
}

/// A configuration's search as `quote::find` does it, over its own `indexes`: a
/// sentence's part signatures at radius 0 (or its full signature at the formula's
/// radius), candidates ranked by parts matched, then age, at most `max_candidates`.
fn defaults_search<'a>(
    indexes: &'a Indexes<&[u8]>,
    cfg: &'a QuoteConfig,
) -> impl FnMut(&Sentence) -> Vec<(u64, u32)> + 'a {
    move |q| {
        // The signatures `quote::find` searches with: the full one within the radius,
        // or the parts (and the clauses' parts) exactly.
        let sigs: Vec<u64> = quote::signatures(cfg, std::slice::from_ref(q)).into_iter().map(|(_, s)| s).collect();
        let d = if quote::parted(cfg, q.words.len()) { 0 } else { quote::radius(cfg, q.words.len() as u32) };
        let cands =
            sigs.iter().flat_map(|&sig| indexes.quote_candidates(cfg, sig, d).0).map(|(s, x, _)| (s, x)).collect();
        let mut ranked = quote::rank(cands);
        ranked.truncate(cfg.max_candidates as usize);
        ranked
    }
}

/// qSign at `radius` (None: the formula's), every candidate within it.
fn qsign_search<'a>(
    indexes: &'a Indexes<&[u8]>,
    qcfg: &'a QuoteConfig,
    radius: Option<u32>,
) -> impl FnMut(&Sentence) -> Vec<(u64, u32)> + 'a {
    move |q| {
        let sig = quote::signature(qcfg, &q.words);
        let d = radius.unwrap_or_else(|| quote::radius(&QuoteConfig::default(), q.words.len() as u32));
        indexes.quote_candidates(qcfg, sig, d).0.into_iter().map(|(s, x, _)| (s, x)).collect()
    }
}

/// The evaluation for people: a markdown table by radius.
pub fn markdown(r: &QuoteEval) -> String {
    let mut out = format!(
        "collection: {} documents, {} sentences; queries: {} documents, {} sentences\n",
        r.collection_documents, r.collection_sentences, r.query_documents, r.query_sentences
    );
    out += &format!(
        "naive scan: {:.0} µs/sentence; inverted index: {:.0} µs/sentence ({:.0} candidates/sentence)\n",
        r.naive_micros_per_sentence, r.inverted_micros_per_sentence, r.inverted_candidates_per_sentence
    );
    let levels: Vec<String> =
        LEVELS.iter().zip(&r.pairs_per_level).map(|((lo, hi), n)| format!("{lo}-{hi} ({n})")).collect();
    out += &format!(
        "| d | recall {} | all | sentences ≥ 0.8 | candidates/sentence | µs/sentence | × naive | × inverted |\n",
        levels.join(" | ")
    );
    out += &format!("|{}\n", " --- |".repeat(levels.len() + 7));
    for row in &r.rows {
        let rec: Vec<String> = row.recall.iter().map(|x| format!("{:.3}", x)).collect();
        out += &format!(
            "| {} | {} | {:.3} | {:.3} | {:.1} | {:.0} | {:.0} | {:.1} |\n",
            row.radius,
            rec.join(" | "),
            row.recall_all,
            row.sentence_recall_08,
            row.candidates_per_sentence,
            row.micros_per_sentence,
            row.speedup_vs_naive,
            row.speedup_vs_inverted
        );
    }
    out += &misses_table(
        "The defaults' search misses (query sentences with a pair of 0.8 or more, none found)",
        &r.misses,
    );
    let s = &r.seen;
    let share = |n: u64| if s.sentences == 0 { 1.0 } else { n as f64 / s.sentences as f64 };
    out += &format!(
        "\nWhat a reader sees, the query documents ingested after the collection at default settings: of {} query sentences with a pair of 0.8 or more, {:.3} are found by a quotation naming one, {:.3} either by that or by copied blocks from a document holding one covering {:.0}% of the sentence's words\n",
        s.sentences,
        share(s.by_quotation),
        share(s.either_way),
        100.0 * BLOCK_COVER
    );
    out += &misses_table("Missed either way", &s.misses);
    out
}

/// A markdown table of misses by kind under `title` (nothing when there are none).
fn misses_table(title: &str, misses: &[MissRow]) -> String {
    if misses.is_empty() {
        return String::new();
    }
    let mut out = format!("\n{title}:\n");
    out += "| why | sentences | distinct words | of the best earlier sentence |\n| --- | --- | --- | --- |\n";
    for m in misses {
        out += &format!("| {} | {} | {:.1} | {:.1} |\n", m.kind, m.sentences, m.mean_words, m.mean_source_words);
    }
    out
}
