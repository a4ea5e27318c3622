//! `textorigin neardup-eval`: precision and recall of the near-duplicate verdicts
//! against the exact Jaccard resemblance of shingle sets, on a real corpus.
//!
//! The corpus is ingested, in order, into a fresh data directory through the real
//! ingestion path (so the figures are those of the stored `near_duplicates`), timing
//! documents per second. The truth is computed independently: the exact k-shingle set
//! of every document (no sampling) and, through an inverted index, the exact Jaccard
//! of every pair that shares a shingle. A pair (later, earlier) is a true
//! near-duplicate when its Jaccard is at least the threshold (default 0.9).
//!
//! Reported per verdict (default, B, C, combined): reported pairs, recall (share of
//! true pairs reported), precision (share of reported pairs that are true), and the
//! share of reported pairs with Jaccard at least 0.7.
//!
//! **Planted edits** (`--planted N`): N documents of at least 100 terms are
//! chosen (seeded) and copied once per rate of [`RATES`], each copy with that share of
//! its terms (at random positions) replaced by words seen nowhere else, the way dedup
//! tools are tried on lightly edited copies. The copies follow the corpus in a seeded
//! order. Per rate: the share of copies reported (default verdict) as near-duplicates
//! of their original, and the mean exact Jaccard of the pair's shingles; the precision
//! above covers every reported pair, copies and corpus alike (a pair whose exact
//! Jaccard is below the threshold counts as wrong).

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use super::Result;
use serde::Serialize;

use textorigin_core::config::Overrides;
use textorigin_core::neardup::{Mode, NearDupConfig};
use textorigin_core::rabin::Rabin;
use textorigin_core::testdata::XorShift;
use textorigin_core::text::tokenize;
use textorigin_store::input::InputDoc;
use textorigin_store::intake::Policy;
use textorigin_store::storage::datadir::DataDir;

/// Scores of one verdict.
#[derive(Debug, Clone, Serialize)]
pub struct VerdictScore {
    pub mode: String,
    pub reported: u64,
    pub true_positives: u64,
    pub recall: f64,
    pub precision: f64,
    pub precision_at_0_7: f64,
}

/// Recall of the planted copies of one edit rate.
#[derive(Debug, Clone, Serialize)]
pub struct PlantedRate {
    /// Share of the terms replaced.
    pub rate: f64,
    pub copies: usize,
    /// Copies reported (default verdict) as near-duplicates of their original.
    pub found: usize,
    pub recall: f64,
    /// Mean exact Jaccard of (copy, original) shingle sets, and the share at or above
    /// the threshold.
    pub mean_jaccard: f64,
    pub above_threshold: f64,
}

/// The evaluation's result.
#[derive(Debug, Clone, Serialize)]
pub struct NearDupEval {
    pub documents: usize,
    /// Shingle length, threshold, margin and LSH bands of the run.
    pub k: u32,
    pub threshold: f64,
    pub margin: f64,
    pub bands: u32,
    pub rows: u32,
    /// Whether pairs near the threshold were decided by their exact resemblance, and
    /// how near ([`textorigin_core::neardup::verify_window`]).
    pub verify: bool,
    pub verify_window: f64,
    pub true_pairs: u64,
    pub exact_duplicate_pairs: u64,
    pub ingest_seconds: f64,
    pub documents_per_second: f64,
    pub verdicts: Vec<VerdictScore>,
    /// With planted copies: recall by edit rate.
    pub planted: Vec<PlantedRate>,
}

/// Edit rates of the planted copies: the share of a copy's terms replaced.
pub const RATES: [f64; 4] = [0.01, 0.025, 0.05, 0.10];

/// A planted copy: its index among the documents ingested, its original's and its rate.
struct Copy {
    at: usize,
    original: usize,
    rate: usize,
}

/// `docs` followed by `n` planted copies per rate of [`RATES`] (in a seeded order),
/// and where each copy and its original are.
fn plant(docs: &[InputDoc], n: usize) -> Result<(Vec<InputDoc>, Vec<Copy>)> {
    let rabin = Rabin::new(1).with_terms(textorigin_core::config::Config::default().terms);
    let mut tokens = Vec::new();
    let eligible: Vec<usize> = (0..docs.len())
        .filter(|&i| {
            tokenize(&docs[i].text, &rabin, &mut tokens);
            tokens.len() >= 100
        })
        .collect();
    if eligible.len() < n {
        return Err(super::EvalError::Corpus(format!(
            "--planted {n}: the corpus has {} documents of at least 100 terms",
            eligible.len()
        )));
    }
    let mut rng = XorShift::new(0x006e_6561_7264_7570);
    let mut pool = eligible;
    let mut originals = Vec::with_capacity(n);
    for i in 0..n {
        let j = i + rng.below((pool.len() - i) as u64) as usize;
        pool.swap(i, j);
        originals.push(pool[i]);
    }
    let mut copies: Vec<(InputDoc, usize, usize)> = Vec::new();
    for &o in &originals {
        let doc = &docs[o];
        tokenize(&doc.text, &rabin, &mut tokens);
        for (r, &rate) in RATES.iter().enumerate() {
            let replace = ((tokens.len() as f64 * rate).round() as usize).max(1);
            let mut at: Vec<usize> = (0..tokens.len()).collect();
            for i in 0..replace {
                let j = i + rng.below((at.len() - i) as u64) as usize;
                at.swap(i, j);
            }
            let mut at = at[..replace].to_vec();
            at.sort_unstable();
            let mut text = String::with_capacity(doc.text.len() + 8 * replace);
            let mut from = 0;
            for (w, &t) in at.iter().enumerate() {
                let t = tokens[t];
                text.push_str(&doc.text[from..t.start as usize]);
                text.push_str(&format!("zqedit{}x{w}", copies.len()));
                from = t.end as usize;
            }
            text.push_str(&doc.text[from..]);
            let name = format!("{}~edit{}", doc.name, rate);
            let copy = InputDoc { name: name.clone(), source: name, text, ..doc.clone() };
            copies.push((copy, o, r));
        }
    }
    for i in (1..copies.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        copies.swap(i, j);
    }
    let mut all = docs.to_vec();
    let mut placed = Vec::with_capacity(copies.len());
    for (copy, original, rate) in copies {
        placed.push(Copy { at: all.len(), original, rate });
        all.push(copy);
    }
    Ok((all, placed))
}

/// Exact Jaccard of every (later, earlier) pair sharing a shingle, with J ≥ `floor`.
fn exact_pairs(docs: &[InputDoc], k: usize, floor: f64) -> HashMap<(u64, u64), f64> {
    let rabin = Rabin::new(k).with_terms(textorigin_core::config::Config::default().terms);
    let mut tokens = Vec::new();
    let mut postings: HashMap<u64, Vec<u32>> = HashMap::new();
    let mut sizes: Vec<usize> = Vec::new();
    let mut out = HashMap::new();
    let mut shingles = Vec::new();
    for (d, doc) in docs.iter().enumerate() {
        tokenize(&doc.text, &rabin, &mut tokens);
        let fps: Vec<u64> = tokens.iter().map(|t| t.fp).collect();
        rabin.shingles(&fps, &mut shingles);
        shingles.sort_unstable();
        shingles.dedup();
        let mut inter: HashMap<u32, u32> = HashMap::new();
        for s in &shingles {
            let list = postings.entry(*s).or_default();
            for &e in list.iter() {
                *inter.entry(e).or_default() += 1;
            }
            list.push(d as u32);
        }
        for (e, i) in inter {
            let union = sizes[e as usize] + shingles.len() - i as usize;
            let j = f64::from(i) / union as f64;
            if j >= floor {
                out.insert((d as u64 + 1, u64::from(e) + 1), j);
            }
        }
        sizes.push(shingles.len());
    }
    out
}

/// Runs the evaluation with near-duplicate parameters `cfg` (and `planted` copies per
/// edit rate, see the module docs); `dir` receives the temporary data directory. `progress` is
/// told the documents ingested and their number.
pub fn run(
    docs: &[InputDoc],
    cfg: &NearDupConfig,
    planted: usize,
    dir: &Path,
    mut progress: impl FnMut(usize, usize),
) -> Result<NearDupEval> {
    let (all, copies) = if planted > 0 { plant(docs, planted)? } else { (docs.to_vec(), Vec::new()) };
    let docs = &all[..];
    let threshold = cfg.threshold;
    let overrides = Overrides { table_bytes: Some(16 << 20), neardup: Some(cfg.clone()), ..Default::default() };
    let mut dd = DataDir::open_write(dir, &overrides, Policy::default())?;
    let k = dd.neardup_config().k as usize;
    let start = Instant::now();
    let mut seqs = Vec::with_capacity(docs.len());
    for (i, doc) in docs.iter().enumerate() {
        // Token-less documents are skipped by ingestion; keep the numbering aligned.
        match dd.ingest(doc) {
            Ok((meta, _)) => seqs.push(Some(meta.seq)),
            Err(_) => seqs.push(None),
        }
        progress(i + 1, docs.len());
    }
    let ingest_seconds = start.elapsed().as_secs_f64();
    let kept: Vec<InputDoc> = docs.iter().zip(&seqs).filter(|(_, s)| s.is_some()).map(|(d, _)| d.clone()).collect();
    let truth = exact_pairs(&kept, k, threshold.min(0.7));
    let true_pairs = truth.values().filter(|&&j| j >= threshold).count() as u64;
    let mut verdicts = Vec::new();
    let mut exact_duplicate_pairs = 0;
    let n = kept.len() as u64;
    let mut found_lists: Vec<Vec<textorigin_core::neardup::NearDup>> = Vec::with_capacity(kept.len());
    for seq in 1..=n {
        let list = dd.store().near_dups(seq)?;
        exact_duplicate_pairs += list.iter().filter(|d| d.exact).count() as u64;
        found_lists.push(list);
    }
    for (mode, name) in [(Mode::Default, "default"), (Mode::B, "B"), (Mode::C, "C"), (Mode::Combined, "combined")] {
        let (mut reported, mut tp, mut above) = (0u64, 0u64, 0u64);
        for (i, list) in found_lists.iter().enumerate() {
            for d in list.iter().filter(|d| d.says(mode)) {
                reported += 1;
                let j = truth.get(&(i as u64 + 1, d.seq)).copied().unwrap_or(0.0);
                tp += u64::from(j >= threshold);
                above += u64::from(j >= 0.7);
            }
        }
        let share = |a: u64, b: u64| if b == 0 { 1.0 } else { a as f64 / b as f64 };
        verdicts.push(VerdictScore {
            mode: name.into(),
            reported,
            true_positives: tp,
            recall: share(tp, true_pairs),
            precision: share(tp, reported),
            precision_at_0_7: share(above, reported),
        });
    }
    // Each copy against its original, by their places among the documents kept.
    let rank: Vec<Option<u64>> = seqs
        .iter()
        .scan(0u64, |n, s| {
            *n += u64::from(s.is_some());
            Some(s.map(|_| *n))
        })
        .collect();
    let rabin = Rabin::new(k).with_terms(textorigin_core::config::Config::default().terms);
    let planted = (0..RATES.len())
        .map(|r| {
            let (mut n, mut found, mut jsum, mut above) = (0, 0, 0.0, 0);
            for c in copies.iter().filter(|c| c.rate == r) {
                let (Some(copy), Some(original)) = (rank[c.at], rank[c.original]) else { continue };
                n += 1;
                let j = jaccard(&rabin, &docs[c.at].text, &docs[c.original].text);
                jsum += j;
                above += usize::from(j >= threshold);
                found += usize::from(found_pair(&found_lists, copy, original));
            }
            let share = |a: usize| if n == 0 { 0.0 } else { a as f64 / n as f64 };
            PlantedRate {
                rate: RATES[r],
                copies: n,
                found,
                recall: share(found),
                mean_jaccard: if n == 0 { 0.0 } else { jsum / n as f64 },
                above_threshold: share(above),
            }
        })
        .filter(|p| p.copies > 0)
        .collect();
    let nd = dd.neardup_config().clone();
    dd.close()?;
    Ok(NearDupEval {
        documents: kept.len(),
        k: nd.k,
        threshold,
        margin: nd.margin,
        bands: nd.bands,
        rows: nd.rows,
        verify: nd.verify,
        verify_window: textorigin_core::neardup::verify_window(&nd),
        true_pairs,
        exact_duplicate_pairs,
        ingest_seconds,
        documents_per_second: kept.len() as f64 / ingest_seconds,
        verdicts,
        planted,
    })
}

/// The exact Jaccard of two texts' k-shingle sets (`rabin` built for k).
fn jaccard(rabin: &Rabin, a: &str, b: &str) -> f64 {
    let set = |text: &str| {
        let mut tokens = Vec::new();
        tokenize(text, rabin, &mut tokens);
        let fps: Vec<u64> = tokens.iter().map(|t| t.fp).collect();
        let mut shingles = Vec::new();
        rabin.shingles(&fps, &mut shingles);
        shingles.into_iter().collect::<std::collections::HashSet<u64>>()
    };
    let (a, b) = (set(a), set(b));
    let union = a.union(&b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(&b).count() as f64 / union as f64
}

/// Whether document `copy`'s near-duplicates (default verdict) name `original`.
fn found_pair(found: &[Vec<textorigin_core::neardup::NearDup>], copy: u64, original: u64) -> bool {
    found[copy as usize - 1].iter().any(|d| d.seq == original && d.says(Mode::Default))
}

/// The evaluation for people: a markdown table of the verdicts.
pub fn markdown(r: &NearDupEval) -> String {
    let decided = if r.verify {
        format!(
            "a pair with an estimate within {:.3} of the threshold decided by its exact resemblance",
            r.verify_window
        )
    } else {
        format!(
            "accepted at an estimate >= {:.2} (threshold {} less margin {})",
            r.threshold - r.margin,
            r.threshold,
            r.margin
        )
    };
    let mut out = format!(
        "{} documents, {} pairs with Jaccard >= {} ({} exact duplicates); ingest {:.1} documents/s\n\
         shingles of {} terms, {decided}, {} bands of {}\n",
        r.documents, r.true_pairs, r.threshold, r.exact_duplicate_pairs, r.documents_per_second, r.k, r.bands, r.rows
    );
    out += "| verdict | reported | recall | precision | reported with J >= 0.7 |\n| --- | --- | --- | --- | --- |\n";
    for v in &r.verdicts {
        out += &format!(
            "| {} | {} | {:.1}% | {:.1}% | {:.1}% |\n",
            v.mode,
            v.reported,
            100.0 * v.recall,
            100.0 * v.precision,
            100.0 * v.precision_at_0_7
        );
    }
    if !r.planted.is_empty() {
        out += "\n| words replaced | copies | found | recall | mean Jaccard | at or above the threshold |\n| --- | --- | --- | --- | --- | --- |\n";
        for p in &r.planted {
            out += &format!(
                "| {}% | {} | {} | {:.1}% | {:.3} | {:.1}% |\n",
                100.0 * p.rate,
                p.copies,
                p.found,
                100.0 * p.recall,
                p.mean_jaccard,
                100.0 * p.above_threshold
            );
        }
    }
    out
}
