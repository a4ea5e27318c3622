//! `textorigin eval`: the experiments of Section 3 of the origin-detection paper.
//!
//! 1. **Oracle** (Section 3.2): every document of the corpus, in order, through an exact
//!    unbounded index of all k-shingles (selection All, unlimited memory), keyed by the
//!    62-bit Rabin fingerprint of the shingle (one pass, linear in the corpus): the true
//!    origin of every shingle, the true fresh/old label of every token (fresh: no
//!    shingle covering it has an earlier origin) and the true dominant origin (10% rule
//!    over all shingles).
//! 2. **Query set** (Section 3.2): the last Q documents that have a dominant origin;
//!    everything before them forms S.
//! 3. **Runs**: for each configuration (selection × eviction × estimation) and table
//!    size, the engine processes the whole corpus in order (each document is looked up
//!    and then inserted, as in a stream) in a fresh table; the query documents are
//!    scored: DO = share of query documents whose dominant origin the engine gets right
//!    (the engine's argmax; `DO rule`: the paper's 10% rule applied to the engine's
//!    counts, which fails on ties; `DO blocks`: the argmax with each selected shingle
//!    inside a copied block counted for the block's origin,
//!    `DocResult::dominant_by_blocks`), TF = share of their tokens labelled right, ssr =
//!    selected shingles / all shingles, overall = (DO + TF) / 2. Beyond the paper,
//!    **per-token origin accuracy**: of the query tokens the oracle calls copied, the
//!    share inside a copied block whose origin is the earliest source of a shingle
//!    covering the token (right), inside blocks of other origins only (wrong), or in no
//!    block (unlabelled). Runs go in parallel on the available cores; each setup also
//!    says whether origin propagation and alignment were on (alignment reads the
//!    corpus's texts, as ingestion reads the stored ones).
//!
//! Table sizes are bytes or a percentage: the share of all k-shingles of the corpus
//! (Table 2's definition) whose 16-byte entries fit in the table, plus the header page.
//! The same table is also given as a share of the *distinct* shingles: on a corpus with
//! much reuse a percentage of all shingles holds far more of the distinct ones than on
//! the paper's blogs (`docs/EVALUATION.md`).

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Instant;

use super::arrival::{renumber, Arrival};
use super::tally::Tally;
pub use super::tally::{DocTruth, Reply};
use super::{EvalError, Result};
use serde::Serialize;

use textorigin_core::align::{OriginText, MAX_COPIERS};
use textorigin_core::config::{Config, Density};
use textorigin_core::engine::{by_arrival, Block, DocResult, Engine, Prepared, When};
use textorigin_core::estimate::Estimation;
use textorigin_core::rabin::Rabin;
use textorigin_core::select::Selection;
use textorigin_core::table::Eviction;
use textorigin_core::text::tokenize;
use textorigin_store::storage::table_file::TableFile;

/// The documents with at least `min` tokens (the paper's corpora have at least 45).
pub fn at_least_tokens(
    docs: Vec<textorigin_store::input::InputDoc>,
    min: usize,
) -> Vec<textorigin_store::input::InputDoc> {
    let rabin = Rabin::new(1).with_terms(textorigin_core::config::Config::default().terms);
    let mut tokens = Vec::new();
    docs.into_iter()
        .filter(|d| {
            tokenize(&d.text, &rabin, &mut tokens);
            tokens.len() >= min
        })
        .collect()
}

/// Replies with known ancestors, from `message_id` / `in_reply_to` (mail corpora).
pub fn replies(docs: &[textorigin_store::input::InputDoc]) -> Vec<Reply> {
    let mut by_id: HashMap<&str, u64> = HashMap::new();
    let rabin = Rabin::new(1).with_terms(textorigin_core::config::Config::default().terms);
    let mut tokens = Vec::new();
    let mut out = Vec::new();
    for (i, d) in docs.iter().enumerate() {
        let ancestors: Vec<u64> = d.in_reply_to.iter().filter_map(|m| by_id.get(m.as_str()).copied()).collect();
        if !ancestors.is_empty() {
            tokenize(&d.text, &rabin, &mut tokens);
            let mut quoted = Vec::new();
            let mut at = 0;
            for line in d.text.split_inclusive('\n') {
                let (s, e) = (at, at + line.len());
                at = e;
                if line.trim_start().starts_with('>') {
                    let first = tokens.partition_point(|t| (t.start as usize) < s) as u32;
                    let last = tokens.partition_point(|t| (t.start as usize) < e) as u32;
                    if last > first {
                        quoted.push((first, last));
                    }
                }
            }
            if !quoted.is_empty() {
                out.push(Reply { doc: i, ancestors, quoted });
            }
        }
        if let Some(m) = &d.message_id {
            by_id.insert(m.as_str(), i as u64 + 1);
        }
    }
    out
}

/// Share of quoted tokens covered by a copied shingle or block whose origin is an
/// ancestor: `covering(doc, token)` lists the origins covering a token.
fn reply_accuracy(replies: &[Reply], mut origin_ok: impl FnMut(&Reply, u32) -> bool) -> (f64, u64) {
    let (mut ok, mut n) = (0u64, 0u64);
    for r in replies {
        for &(a, b) in &r.quoted {
            for t in a..b {
                n += 1;
                ok += u64::from(origin_ok(r, t));
            }
        }
    }
    (if n == 0 { 0.0 } else { 100.0 * ok as f64 / n as f64 }, n)
}

/// What the oracle found.
#[derive(Debug, Clone, Serialize)]
pub struct OracleSummary {
    pub docs: usize,
    /// All k-shingles of all documents.
    pub shingles: u64,
    /// Distinct k-shingles.
    pub distinct_shingles: u64,
    pub queries: usize,
    /// Query documents that are their own dominant origin (percent).
    pub self_dominant: f64,
    /// Fresh tokens among the query documents' tokens (percent).
    pub fresh_token_share: f64,
    /// Shingles whose origin is an earlier document (percent of all).
    pub shingle_copy_ratio: f64,
    /// Mail corpora: replies whose parent is in the corpus, and their quoted tokens.
    pub replies: usize,
    pub quoted_tokens: u64,
    /// Share of quoted tokens the oracle attributes to the parent or an ancestor.
    pub oracle_reply_accuracy: Option<f64>,
}

/// The oracle over a corpus: truths per document (sequence number = index + 1).
pub fn oracle(texts: &[String], k: usize) -> (Vec<DocTruth>, u64, u64, u64) {
    let rabin = Rabin::new(k).with_terms(textorigin_core::config::Config::default().terms);
    let mut first: HashMap<u64, u32> = HashMap::new();
    let mut tokens = Vec::new();
    let mut fps = Vec::new();
    let mut sh = Vec::new();
    let (mut total, mut copied) = (0u64, 0u64);
    let mut out = Vec::with_capacity(texts.len());
    for (i, text) in texts.iter().enumerate() {
        let seq = i as u32 + 1;
        tokenize(text, &rabin, &mut tokens);
        fps.clear();
        fps.extend(tokens.iter().map(|t| t.fp));
        rabin.shingles(&fps, &mut sh);
        let mut fresh = vec![true; tokens.len()];
        let mut counts: HashMap<u32, u32> = HashMap::new();
        for (j, &s) in sh.iter().enumerate() {
            let o = *first.entry(s).or_insert(seq);
            *counts.entry(o).or_default() += 1;
            if o != seq {
                copied += 1;
                fresh[j..j + k].iter_mut().for_each(|f| *f = false);
            }
        }
        total += sh.len() as u64;
        let mut c: Vec<(u32, u32)> = counts.into_iter().collect();
        c.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let dominant = c.first().and_then(|&(o, top)| {
            let second = c.get(1).map_or(0, |x| x.1);
            (10 * u64::from(top) >= 11 * u64::from(second)).then_some(u64::from(o))
        });
        let origins = sh.iter().map(|s| first[s]).collect();
        out.push(DocTruth { fresh, dominant, origins });
    }
    let distinct = first.len() as u64;
    (out, total, distinct, copied)
}

/// One measured configuration and table size.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The arrival order of the run (`in-order`: the corpus's).
    pub arrival: String,
    pub selection: String,
    pub eviction: String,
    pub estimation: String,
    pub propagate: bool,
    pub align: bool,
    pub table_bytes: u64,
    /// Entries that fit, as a percentage of all k-shingles of the corpus.
    pub table_pct: f64,
    /// The same entries as a percentage of the distinct k-shingles.
    pub table_pct_distinct: f64,
    pub ssr: f64,
    /// Dominant origin right: the engine's argmax.
    #[serde(rename = "do")]
    pub do_: f64,
    /// Dominant origin right by the paper's 10% rule over the engine's counts.
    pub do_rule: f64,
    pub do_blocks: f64,
    pub tf: f64,
    pub overall: f64,
    /// Per-token origin accuracy: of the tokens the oracle calls copied, the shares
    /// with a right origin, only wrong ones, none (percent).
    pub origin_right: f64,
    pub origin_wrong: f64,
    pub origin_unlabelled: f64,
    pub hits: u64,
    pub evictions: u64,
    pub seconds: f64,
    /// Share of the replies' quoted tokens attributed to the parent or an ancestor.
    pub reply_accuracy: Option<f64>,
}

/// A table size as asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Size {
    Bytes(u64),
    Percent(f64),
}

impl std::str::FromStr for Size {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Size, String> {
        match s.trim().strip_suffix('%') {
            Some(p) => {
                p.trim().parse::<f64>().map(Size::Percent).map_err(|_| format!("table size `{s}`: bad percentage"))
            }
            None => textorigin_core::config::parse_size(s).map(Size::Bytes),
        }
    }
}

/// One configuration (without the size).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setup {
    pub selection: Selection,
    /// Selection density: the selection alone, or more while the table has
    /// room.
    pub density: Density,
    pub eviction: Eviction,
    pub estimation: Estimation,
    /// Origin propagation.
    pub propagate: bool,
    /// Alignment of copied blocks against their origins' texts.
    pub align: bool,
    /// The order the documents arrive in (the corpus's is their publication order).
    pub arrival: Arrival,
    /// What the engine makes of the documents' dates (the corpus's order).
    pub dated: DateUse,
}

/// What the engine makes of publication dates in an evaluation run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateUse {
    /// None: arrival order is taken for publication order (the engine before).
    Off,
    /// A document published before what it finds takes it over, and "earlier" is by
    /// date; stored results are not revised (the data directory before schema 9).
    TakeOver,
    /// As `TakeOver`, and the documents it took from and their copiers are revised.
    Revise,
}

impl std::str::FromStr for DateUse {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<DateUse, String> {
        match s.trim() {
            "off" => Ok(DateUse::Off),
            "take-over" => Ok(DateUse::TakeOver),
            "on" | "revise" => Ok(DateUse::Revise),
            other => Err(format!("unknown date use `{other}`; expected on, take-over or off")),
        }
    }
}

impl Setup {
    /// The paper's algorithms with the options beyond it off.
    pub fn paper(selection: Selection, eviction: Eviction, estimation: Estimation) -> Setup {
        Setup {
            selection,
            density: Density::Paper,
            eviction,
            estimation,
            propagate: false,
            align: false,
            arrival: Arrival::InOrder,
            dated: DateUse::Revise,
        }
    }

    /// Every combination, selections outermost (each at every density); `options`
    /// lists (propagate, align).
    pub fn product(
        selections: &[(Selection, Density)],
        evictions: &[Eviction],
        estimations: &[Estimation],
        options: &[(bool, bool)],
    ) -> Vec<Setup> {
        let mut out = Vec::new();
        for &(selection, density) in selections {
            for &eviction in evictions {
                for &estimation in estimations {
                    for &(propagate, align) in options {
                        out.push(Setup {
                            selection,
                            density,
                            eviction,
                            estimation,
                            propagate,
                            align,
                            arrival: Arrival::InOrder,
                            dated: DateUse::Revise,
                        });
                    }
                }
            }
        }
        out
    }
}

/// The evaluation's result.
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    pub oracle: OracleSummary,
    pub rows: Vec<Row>,
}

/// How far [`run`] is: the texts' bytes read over all runs (each run reads the whole
/// corpus), and the runs done.
#[derive(Debug, Clone, Copy)]
pub struct RunsDone {
    pub bytes: u64,
    pub of_bytes: u64,
    pub runs: usize,
    pub of_runs: usize,
}

/// Runs the evaluation. `base` carries k, T, bucket size, seed and Lucky parameters;
/// `progress` is told how far it is as the runs read their documents.
#[allow(clippy::too_many_arguments)] // one call site, each argument a different input
pub fn run(
    texts: &[String],
    replies: &[Reply],
    base: &Config,
    setups: &[Setup],
    sizes: &[Size],
    queries: usize,
    dir: &Path,
    progress: impl Fn(RunsDone) + Sync,
) -> Result<EvalReport> {
    let k = base.k as usize;
    let (truths, shingles, distinct, copied) = oracle(texts, k);
    let oracle_reply = (!replies.is_empty()).then(|| {
        reply_accuracy(replies, |r, t| {
            let o = &truths[r.doc].origins;
            let lo = (t as usize + 1).saturating_sub(k);
            (lo..=(t as usize).min(o.len().saturating_sub(1)))
                .any(|j| j < o.len() && r.ancestors.contains(&u64::from(o[j])))
        })
        .0
    });
    let (summary, query_set) = summarize(texts, replies, &truths, (shingles, distinct, copied), oracle_reply, queries)?;
    let is_query: Vec<bool> = {
        let mut v = vec![false; texts.len()];
        for &i in &query_set {
            v[i] = true;
        }
        v
    };
    let jobs: Vec<(Setup, Size)> = setups.iter().flat_map(|s| sizes.iter().map(move |z| (*s, *z))).collect();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    // Progress by the texts' bytes every run goes through (a run reads the corpus once).
    let of_bytes = texts.iter().map(|t| t.len() as u64).sum::<u64>() * jobs.len() as u64;
    let bytes = AtomicU64::new(0);
    let read = |b: u64| {
        let bytes = bytes.fetch_add(b, Ordering::Relaxed) + b;
        progress(RunsDone { bytes, of_bytes, runs: done.load(Ordering::SeqCst), of_runs: jobs.len() });
    };
    let rows: Mutex<Vec<(usize, Row)>> = Mutex::new(Vec::new());
    let errors: Mutex<Vec<EvalError>> = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(jobs.len()).max(1);
    std::thread::scope(|scope| {
        for t in 0..threads {
            let (next, done, rows, errors, jobs, truths, is_query, read) =
                (&next, &done, &rows, &errors, &jobs, &truths, &is_query, &read);
            std::thread::Builder::new()
                .name(format!("eval-{t}"))
                .spawn_scoped(scope, move || loop {
                    let j = next.fetch_add(1, Ordering::SeqCst);
                    if j >= jobs.len() {
                        break;
                    }
                    let (setup, size) = jobs[j];
                    match run_one(
                        texts,
                        replies,
                        base,
                        setup,
                        size,
                        (shingles, distinct),
                        truths,
                        is_query,
                        &dir.join(format!("table-{j}")),
                        read,
                    ) {
                        Ok(row) => rows.lock().expect("no panics hold this lock").push((j, row)),
                        Err(e) => errors.lock().expect("no panics hold this lock").push(e),
                    }
                    done.fetch_add(1, Ordering::SeqCst);
                    read(0);
                })
                .expect("spawn an evaluation thread");
        }
    });
    if let Some(e) = errors.into_inner().expect("threads finished").into_iter().next() {
        return Err(e);
    }
    let mut rows = rows.into_inner().expect("threads finished");
    rows.sort_by_key(|r| r.0);
    Ok(EvalReport { oracle: summary, rows: rows.into_iter().map(|r| r.1).collect() })
}

/// The oracle's summary and the query set: the last `queries` documents with a
/// dominant origin.
fn summarize(
    texts: &[String],
    replies: &[Reply],
    truths: &[DocTruth],
    (shingles, distinct, copied): (u64, u64, u64),
    oracle_reply: Option<f64>,
    queries: usize,
) -> Result<(OracleSummary, Vec<usize>)> {
    let with_dominant: Vec<usize> = (0..texts.len()).filter(|&i| truths[i].dominant.is_some()).collect();
    let query_set: Vec<usize> = with_dominant[with_dominant.len().saturating_sub(queries)..].to_vec();
    if query_set.is_empty() {
        return Err(EvalError::Corpus("no document of the corpus has a dominant origin".into()));
    }
    let q_tokens: usize = query_set.iter().map(|&i| truths[i].fresh.len()).sum();
    let q_fresh: usize = query_set.iter().map(|&i| truths[i].fresh.iter().filter(|f| **f).count()).sum();
    let self_dom = query_set.iter().filter(|&&i| truths[i].dominant == Some(i as u64 + 1)).count();
    let summary = OracleSummary {
        docs: texts.len(),
        shingles,
        distinct_shingles: distinct,
        queries: query_set.len(),
        self_dominant: 100.0 * self_dom as f64 / query_set.len() as f64,
        fresh_token_share: 100.0 * q_fresh as f64 / q_tokens.max(1) as f64,
        shingle_copy_ratio: 100.0 * copied as f64 / shingles.max(1) as f64,
        replies: replies.len(),
        quoted_tokens: reply_accuracy(replies, |_, _| true).1,
        oracle_reply_accuracy: oracle_reply,
    };
    Ok((summary, query_set))
}

#[allow(clippy::too_many_arguments)] // the inputs of one run, each different; one call site
fn run_one(
    texts: &[String],
    replies: &[Reply],
    base: &Config,
    setup: Setup,
    size: Size,
    (shingles, distinct): (u64, u64),
    truths: &[DocTruth],
    is_query: &[bool],
    path: &Path,
    read: &(dyn Fn(u64) + Sync),
) -> Result<Row> {
    let table_bytes = match size {
        Size::Bytes(b) => b,
        Size::Percent(p) => crate::fill::bytes_for_percent(p, shingles, base.bucket_entries),
    };
    let cfg = Config {
        selection: setup.selection,
        density: setup.density,
        eviction: setup.eviction,
        estimation: setup.estimation,
        propagate: setup.propagate,
        align: setup.align,
        table_bytes,
        ..base.clone()
    };
    cfg.validate()?;
    let _ = std::fs::remove_file(path);
    let mut table = TableFile::create(path, &cfg.table_params())?;
    let mut engine = Engine::new(cfg.clone());
    let start = Instant::now();
    let mut tally = Tally { k: cfg.k as usize, ..Tally::default() };
    let reply_of: HashMap<usize, usize> = replies.iter().enumerate().map(|(n, r)| (r.doc, n)).collect();
    // Origins' texts for alignment, as the store's cache holds them: bounded, refilled.
    let mut origin_texts: HashMap<u64, Arc<OriginText>> = HashMap::new();
    // Each document's copied blocks, as the store keeps its result.
    let mut blocks: Vec<Vec<Block>> = Vec::with_capacity(texts.len());
    // Documents are numbered as they arrive; results are scored in publication numbers.
    let order = setup.arrival.order(texts.len(), cfg.seed);
    let rank = |s: u64| order[s as usize - 1];
    // Publication order (the corpus's), or arrival order without dates.
    let dated = |s: u64| (rank(s) as i64, s);
    let when: When<'_> = if setup.dated == DateUse::Off { &by_arrival } else { &dated };
    let mut results: Vec<DocResult> = Vec::with_capacity(texts.len());
    // Who copied from whom (arrival numbers), as the store's reverse index keeps it.
    let mut copiers: HashMap<u64, BTreeSet<u64>> = HashMap::new();
    let note = |copiers: &mut HashMap<u64, BTreeSet<u64>>, r: &DocResult| {
        for s in r.selected_origins.iter().filter(|s| s.origin != r.seq) {
            copiers.entry(s.origin).or_default().insert(r.seq);
        }
    };
    let mut unreported = 0;
    for (pos, &i) in order.iter().enumerate() {
        let seq = pos as u64 + 1;
        unreported += texts[i].len() as u64;
        if pos % 256 == 255 || pos + 1 == order.len() {
            read(std::mem::take(&mut unreported));
        }
        let mut doc = engine.prepare(&texts[i]);
        // With dates, a document published before an entry's origin takes
        // the entry over, and the documents it took from and their copiers are revised.
        let (mut r, taken) = engine.apply_prepared(&mut *table, &mut doc, seq, when);
        align((&engine, &doc), &mut r, &mut origin_texts, (&blocks, &copiers), texts, &order, when);
        blocks.push(r.copied_blocks.clone());
        note(&mut copiers, &r);
        results.push(r);
        let taken = if setup.dated == DateUse::Revise { taken } else { Vec::new() };
        let mut affected: Vec<u64> = taken.iter().flat_map(|o| copiers.get(o).into_iter().flatten()).copied().collect();
        affected.extend(&taken);
        affected.sort_unstable_by_key(|&s| (rank(s), s));
        affected.dedup();
        for s in affected {
            let mut doc = engine.prepare(&texts[rank(s)]);
            let mut r = engine.reanalyse(&*table, &mut doc, s, results[s as usize - 1].density, when);
            align((&engine, &doc), &mut r, &mut origin_texts, (&blocks, &copiers), texts, &order, when);
            origin_texts.remove(&s); // its blocks, which its copiers' alignment reads, changed
            blocks[s as usize - 1] = r.copied_blocks.clone();
            note(&mut copiers, &r);
            results[s as usize - 1] = r;
        }
    }
    for (pos, r) in results.into_iter().enumerate() {
        let i = order[pos];
        let r = renumber(r, |s| order[s as usize - 1] as u64 + 1);
        tally.add(&r, reply_of.get(&i).map(|&n| &replies[n]), is_query[i].then(|| &truths[i]));
    }
    let seconds = start.elapsed().as_secs_f64();
    let stats = table.stats();
    let capacity = table.capacity();
    drop(table);
    let _ = std::fs::remove_file(path);
    let pct = |a: u64, b: u64| if b == 0 { 0.0 } else { 100.0 * a as f64 / b as f64 };
    let Tally { k: _, do_ok, do_rule_ok, do_blocks_ok, do_n, origin, tf_ok, tf_n, selected, all, reply_ok, reply_n } =
        tally;
    let (do_, tf) = (pct(do_ok, do_n), pct(tf_ok, tf_n));
    let copied: u64 = origin.iter().sum();
    Ok(Row {
        arrival: match setup.dated {
            DateUse::Revise => setup.arrival.to_string(),
            DateUse::TakeOver => format!("{}, no revisions", setup.arrival),
            DateUse::Off => format!("{}, undated", setup.arrival),
        },
        selection: match setup.density {
            Density::Paper => setup.selection.to_string(),
            Density::Adaptive => format!("{} + density", setup.selection),
        },
        eviction: setup.eviction.to_string(),
        estimation: setup.estimation.to_string(),
        propagate: setup.propagate,
        align: setup.align,
        table_bytes,
        table_pct: pct(capacity, shingles),
        table_pct_distinct: pct(capacity, distinct),
        ssr: pct(selected, all),
        do_,
        do_rule: pct(do_rule_ok, do_n),
        do_blocks: pct(do_blocks_ok, do_n),
        tf,
        overall: (do_ + tf) / 2.0,
        origin_right: pct(origin[0], copied),
        origin_wrong: pct(origin[1], copied),
        origin_unlabelled: pct(origin[2], copied),
        hits: stats.hits,
        evictions: stats.evictions,
        seconds,
        reply_accuracy: (!replies.is_empty()).then(|| pct(reply_ok, reply_n)),
    })
}

/// Aligns `r`'s copied blocks against their origins' texts (arrival numbers; `order`
/// gives their publication indexes), as the store does: the origins' texts and blocks
/// in a bounded cache, refilled, and each origin's newest copiers before `r`.
fn align(
    (engine, doc): (&Engine, &Prepared),
    r: &mut DocResult,
    cache: &mut HashMap<u64, Arc<OriginText>>,
    (blocks, copiers): (&[Vec<Block>], &HashMap<u64, BTreeSet<u64>>),
    texts: &[String],
    order: &[usize],
    when: When<'_>,
) {
    if cache.len() > 4096 {
        cache.clear();
    }
    let origin_text = |o: u64| {
        let t = texts.get(*order.get(o as usize - 1)?)?;
        Some(Arc::clone(cache.entry(o).or_insert_with(|| Arc::new(engine.origin_text(t, &blocks[o as usize - 1])))))
    };
    let seq = r.seq;
    let copiers_of = |o: u64| {
        let before = copiers.get(&o).into_iter().flat_map(|c| c.range(..seq).rev().take(MAX_COPIERS));
        let mut newest: Vec<u64> = before.copied().collect();
        newest.reverse();
        newest
    };
    engine.align(doc, r, origin_text, copiers_of, when);
}

pub use super::report::{markdown, svg};

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus() -> Vec<String> {
        let mut g = textorigin_core::testdata::XorShift::new(7);
        let mut next = move |m: u64| g.below(m);
        let mut docs: Vec<Vec<String>> = Vec::new();
        for _ in 0..80 {
            let mut w = Vec::new();
            for _ in 0..(1 + next(3)) {
                if !docs.is_empty() && next(2) == 0 {
                    let src = &docs[next(docs.len() as u64) as usize];
                    let a = next(src.len() as u64) as usize;
                    w.extend_from_slice(&src[a..(a + 40).min(src.len())]);
                } else {
                    w.extend((0..30 + next(40)).map(|_| format!("w{}", next(3000))));
                }
            }
            docs.push(w);
        }
        docs.into_iter().map(|w| w.join(" ")).collect()
    }

    #[test]
    fn all_nb_with_room_for_every_shingle_reproduces_the_oracle() {
        let texts = corpus();
        let dir = tempfile::tempdir().unwrap();
        let setup = Setup::paper(Selection::All, Eviction::Lucky, Estimation::Nb);
        let r =
            run(&texts, &[], &Config::default(), &[setup], &[Size::Percent(200.0)], 30, dir.path(), |_| {}).unwrap();
        let row = &r.rows[0];
        assert_eq!(row.evictions, 0);
        assert_eq!((row.do_, row.do_rule, row.tf), (100.0, 100.0, 100.0), "{row:?}");
        assert_eq!((row.origin_right, row.origin_wrong, row.origin_unlabelled), (100.0, 0.0, 0.0), "{row:?}");
        assert!((row.ssr - 100.0).abs() < 1e-9);
        assert!(r.oracle.self_dominant < 100.0, "the corpus has copying");
    }

    /// Issue 25: a run in another arrival order is numbered as it arrives and scored in
    /// publication numbers. In order it is the oracle exactly (above). Without dates,
    /// newest first, every copy arrives before its source, so no copied token gets its
    /// origin; with them, late sources take their passages over and revise their
    /// copiers, and every order ends as the in-order run (all shingles, no estimation,
    /// a table that evicts nothing: the core's property test).
    #[test]
    fn runs_out_of_order_are_scored_against_the_publication_order() {
        let texts = corpus();
        let dir = tempfile::tempdir().unwrap();
        let setup = Setup::paper(Selection::All, Eviction::Lucky, Estimation::Nb);
        let setups: Vec<Setup> = [
            (Arrival::InOrder, DateUse::Revise),
            (Arrival::Reverse, DateUse::Off),
            (Arrival::Shuffled, DateUse::Off),
            (Arrival::Reverse, DateUse::Revise),
            (Arrival::Shuffled, DateUse::Revise),
            (Arrival::Lag(20), DateUse::Revise),
            (Arrival::Shuffled, DateUse::TakeOver),
        ]
        .into_iter()
        .map(|(arrival, dated)| Setup { arrival, dated, ..setup })
        .collect();
        let r = run(&texts, &[], &Config::default(), &setups, &[Size::Percent(200.0)], 30, dir.path(), |_| {}).unwrap();
        let (inorder, reverse, shuffled) = (&r.rows[0], &r.rows[1], &r.rows[2]);
        assert_eq!((inorder.arrival.as_str(), inorder.origin_right), ("in-order", 100.0));
        assert_eq!((reverse.arrival.as_str(), reverse.origin_right), ("reverse, undated", 0.0), "{reverse:?}");
        assert!(reverse.tf < 100.0 && reverse.do_ < 100.0, "{reverse:?}");
        assert!(shuffled.origin_right < 100.0, "{shuffled:?}");
        // Without revisions the copies that came before their source keep what they
        // were given: between the two.
        let no_revisions = &r.rows[6];
        assert!(
            shuffled.origin_right < no_revisions.origin_right && no_revisions.origin_right < 100.0,
            "{shuffled:?} {no_revisions:?}"
        );
        for dated in &r.rows[3..6] {
            assert_eq!(
                (dated.origin_right, dated.do_, dated.tf),
                (inorder.origin_right, inorder.do_, inorder.tf),
                "{}: {dated:?}",
                dated.arrival
            );
        }
    }

    #[test]
    fn small_tables_degrade_and_sizes_follow_the_percentage() {
        let texts = corpus();
        let dir = tempfile::tempdir().unwrap();
        let setup = Setup::paper(Selection::default(), Eviction::Lucky, Estimation::Be);
        let r = run(
            &texts,
            &[],
            &Config { bucket_entries: 8, ..Config::default() },
            &[setup],
            &[Size::Percent(1.0), Size::Percent(100.0)],
            30,
            dir.path(),
            |_| {},
        )
        .unwrap();
        assert!(r.rows[0].evictions > 0 && r.rows[1].evictions == 0);
        assert!(r.rows[0].table_pct >= 1.0 && r.rows[0].table_pct < 1.5, "{}", r.rows[0].table_pct);
        assert!(r.rows[0].do_ <= r.rows[1].do_);
        let svg = svg(&r);
        assert!(svg.starts_with("<svg") && svg.contains("NHs + LS + BE") && svg.matches("<polyline").count() == 2);
    }
}
