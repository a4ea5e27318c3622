//! Schema 11 → 12 (`migrations/0012-clauses.md`): the quotation configuration gains
//! `clauses` (issue 34), written `false` for an existing data directory: its index holds
//! no clause signatures, and a search by clauses would find only the sentences indexed
//! after the step. The stamp keeps older builds, which cannot read the longer
//! configuration, out.

use serde::Deserialize;
use textorigin_core::quote::QuoteConfig;

use super::super::meta::MetaKey;
use super::super::{Result, Store};
use super::rewrite_meta;

/// The quotation configuration as schemas 8 to 11 stored it.
#[derive(Deserialize)]
struct QuoteConfigV11 {
    m: u32,
    l: u32,
    k_flex: u32,
    fp_bound: f64,
    d_max: u32,
    radius: Option<u32>,
    pieces: u32,
    threshold: f64,
    min_words: u32,
    max_sources: u32,
    max_per_probe: u32,
    seed: u64,
    split_words: u32,
    splits: u32,
    pairs: bool,
    max_candidates: u32,
}

pub(super) fn run(store: &mut Store) -> Result<()> {
    rewrite_meta(store, MetaKey::QuoteConfig, "quote config", |o: QuoteConfigV11| QuoteConfig {
        m: o.m,
        l: o.l,
        k_flex: o.k_flex,
        fp_bound: o.fp_bound,
        d_max: o.d_max,
        radius: o.radius,
        pieces: o.pieces,
        threshold: o.threshold,
        min_words: o.min_words,
        max_sources: o.max_sources,
        max_per_probe: o.max_per_probe,
        seed: o.seed,
        split_words: o.split_words,
        splits: o.splits,
        pairs: o.pairs,
        max_candidates: o.max_candidates,
        clauses: false,
    })
}
