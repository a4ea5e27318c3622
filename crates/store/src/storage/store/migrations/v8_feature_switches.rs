//! Schema 7 → 8 (`migrations/0008-feature-switches.md`): the configuration gains the
//! feature switches `near_duplicates` and `quotations`, both written on for an existing
//! data directory (its stored results have both). A data directory with a feature off
//! stores nothing for it, which a build of schema 7 would read as "none found": the
//! stamp keeps such builds out.

use serde::{Deserialize, Serialize};
use textorigin_core::config::Config;
use textorigin_core::estimate::Estimation;
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

pub(super) fn run(store: &mut Store) -> Result<()> {
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
