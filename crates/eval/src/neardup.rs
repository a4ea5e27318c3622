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

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use super::Result;
use serde::Serialize;

use textorigin_core::config::Overrides;
use textorigin_core::neardup::Mode;
use textorigin_core::rabin::Rabin;
use textorigin_core::text::tokenize;
use textorigin_store::input::InputDoc;
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

/// The evaluation's result.
#[derive(Debug, Clone, Serialize)]
pub struct NearDupEval {
    pub documents: usize,
    pub threshold: f64,
    pub true_pairs: u64,
    pub exact_duplicate_pairs: u64,
    pub ingest_seconds: f64,
    pub documents_per_second: f64,
    pub verdicts: Vec<VerdictScore>,
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

/// Runs the evaluation; `dir` receives the temporary data directory.
pub fn run(docs: &[InputDoc], threshold: f64, dir: &Path, mut progress: impl FnMut(usize)) -> Result<NearDupEval> {
    let overrides = Overrides {
        table_bytes: Some(16 << 20),
        neardup: Some(textorigin_core::neardup::NearDupConfig { threshold, ..Default::default() }),
        ..Default::default()
    };
    let mut dd = DataDir::open_write(dir, &overrides)?;
    let k = dd.neardup_config().k as usize;
    let start = Instant::now();
    let mut seqs = Vec::with_capacity(docs.len());
    for (i, doc) in docs.iter().enumerate() {
        // Token-less documents are skipped by ingestion; keep the numbering aligned.
        match dd.ingest(doc) {
            Ok((meta, _)) => seqs.push(Some(meta.seq)),
            Err(_) => seqs.push(None),
        }
        progress(i + 1);
    }
    let ingest_seconds = start.elapsed().as_secs_f64();
    let kept: Vec<InputDoc> = docs.iter().zip(&seqs).filter(|(_, s)| s.is_some()).map(|(d, _)| d.clone()).collect();
    let truth = exact_pairs(&kept, k, 0.7);
    let true_pairs = truth.values().filter(|&&j| j >= threshold).count() as u64;
    let mut verdicts = Vec::new();
    let mut exact_duplicate_pairs = 0;
    let n = kept.len() as u64;
    let mut found: Vec<Vec<textorigin_core::neardup::NearDup>> = Vec::with_capacity(kept.len());
    for seq in 1..=n {
        let list = dd.store().near_dups(seq)?;
        exact_duplicate_pairs += list.iter().filter(|d| d.exact).count() as u64;
        found.push(list);
    }
    for (mode, name) in [(Mode::Default, "default"), (Mode::B, "B"), (Mode::C, "C"), (Mode::Combined, "combined")] {
        let (mut reported, mut tp, mut above) = (0u64, 0u64, 0u64);
        for (i, list) in found.iter().enumerate() {
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
    dd.close()?;
    Ok(NearDupEval {
        documents: kept.len(),
        threshold,
        true_pairs,
        exact_duplicate_pairs,
        ingest_seconds,
        documents_per_second: kept.len() as f64 / ingest_seconds,
        verdicts,
    })
}

/// The evaluation for people: a markdown table of the verdicts.
pub fn markdown(r: &NearDupEval) -> String {
    let mut out = format!(
        "{} documents, {} pairs with Jaccard >= {} ({} exact duplicates); ingest {:.1} documents/s\n",
        r.documents, r.true_pairs, r.threshold, r.exact_duplicate_pairs, r.documents_per_second
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
    out
}
