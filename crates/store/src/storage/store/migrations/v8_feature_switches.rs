//! Schema 7 → 8 (`migrations/0008-feature-switches.md`): the configuration gains the
//! feature switches `near_duplicates` and `quotations`, both written on for an existing
//! data directory (its stored results have both), and the quotation parameters gain
//! part signatures of pairs of groups (`pairs`) and the per-sentence candidate cap
//! (`max_candidates`), written off (`false`, `u32::MAX`: the directory's index keeps
//! its meaning and it searches as before). A data directory with a feature off stores nothing
//! for it, which a build of schema 7 would read as "none found": the stamp keeps such
//! builds out.

use serde::{Deserialize, Serialize};
use textorigin_core::config::Config;
use textorigin_core::estimate::Estimation;
use textorigin_core::quote::QuoteConfig;
use textorigin_core::select::Selection;
use textorigin_core::table::Eviction;

use super::super::meta::MetaKey;
use super::super::{Result, Store};
use super::rewrite_meta;

/// The configuration as schema 7 stored it (postcard: field order matters).
#[derive(Serialize, Deserialize)]
struct ConfigV7 {
    k: u32,
    selection: Selection,
    eviction: Eviction,
    estimation: Estimation,
    bridge_limit: u32,
    table_bytes: u64,
    bucket_entries: u32,
    seed: u64,
    lucky_y: u32,
    lucky_limit: u8,
    index_bytes: u64,
    propagate: bool,
    align: bool,
}

/// The quotation parameters as schema 7 stored them.
#[derive(Serialize, Deserialize)]
struct QuoteConfigV7 {
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
}

pub(super) fn run(store: &mut Store) -> Result<()> {
    rewrite_meta(store, MetaKey::QuoteConfig, "quote config", |o: QuoteConfigV7| QuoteConfig {
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
        pairs: false,
        max_candidates: u32::MAX,
    })?;
    rewrite_meta(store, MetaKey::Config, "config", |o: ConfigV7| Config {
        k: o.k,
        selection: o.selection,
        eviction: o.eviction,
        estimation: o.estimation,
        bridge_limit: o.bridge_limit,
        table_bytes: o.table_bytes,
        bucket_entries: o.bucket_entries,
        seed: o.seed,
        lucky_y: o.lucky_y,
        lucky_limit: o.lucky_limit,
        index_bytes: o.index_bytes,
        propagate: o.propagate,
        align: o.align,
        near_duplicates: true,
        quotations: true,
    })
}
