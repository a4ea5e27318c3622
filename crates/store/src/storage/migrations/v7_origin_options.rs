//! Schema 6 → 7 (`migrations/0007-origin-options.md`): the configuration gains
//! `propagate` (origin propagation) and `align` (seed-and-extend), both written off for
//! an existing data directory: its table was built without propagation and its stored
//! results without alignment, and replay must reproduce both. `rebuild --reanalyse
//! --propagate on --align on` turns them on. Every stored result gets the dominant
//! origin (argmax) and most-copied origin (by tokens) re-derived from what it holds, as
//! the engine now derives them; every near-duplicate sketch gains its sampling ratio
//! (unknown: 0) and coarse min-values (none), so it compares as before; the quotation
//! parameters gain part signatures, off.

use rocksdb::WriteBatch;
use serde::{Deserialize, Serialize};
use textorigin_core::config::Config;
use textorigin_core::estimate::Estimation;
use textorigin_core::neardup::Sketch;
use textorigin_core::quote::QuoteConfig;
use textorigin_core::select::Selection;
use textorigin_core::table::Eviction;

use super::rewrite_meta;
use crate::storage::store::codec::{decode, encode, seq_key};
use crate::storage::store::meta::MetaKey;
use crate::storage::store::{DocMeta, Result, Store, StoreError, CF_ND_SKETCH, CF_RESULTS};

/// The configuration as schema 6 stored it (postcard: field order matters).
#[derive(Serialize, Deserialize)]
pub(super) struct ConfigV6 {
    pub k: u32,
    pub selection: Selection,
    pub eviction: Eviction,
    pub estimation: Estimation,
    pub bridge_limit: u32,
    pub table_bytes: u64,
    pub bucket_entries: u32,
    pub seed: u64,
    pub lucky_y: u32,
    pub lucky_limit: u8,
    pub index_bytes: u64,
}

/// A near-duplicate sketch as schema 6 stored it.
#[derive(Deserialize)]
struct SketchV6 {
    exact: u128,
    mins: Vec<u64>,
    simhash: Vec<u64>,
}

/// The quotation parameters as schema 6 stored them.
#[derive(Deserialize)]
pub(super) struct QuoteConfigV6 {
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
}

/// Schema 6's quotation parameters in today's encoding: part signatures off (the index
/// of the stored sentences has none), and the rest as before schema 8.
pub(super) fn quote_config_of(o: QuoteConfigV6) -> QuoteConfig {
    QuoteConfig {
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
        splits: 0,
        // Schema 8's fields as the search was (written here in today's encoding, which
        // the schema 8 step then finds written).
        ..QuoteConfig::before_schema_8()
    }
}

/// Schema 6's configuration in today's encoding: propagation and alignment off (the
/// table and the stored results were made without them), the feature switches of
/// schema 8 on, as they were, the terms of schema 11 as they were (`Words`), and the
/// density and dominant origin of schema 17 as they were (`Paper`, `Table`, no lag).
pub(super) fn config_of(old: ConfigV6) -> Config {
    Config {
        k: old.k,
        selection: old.selection,
        eviction: old.eviction,
        estimation: old.estimation,
        bridge_limit: old.bridge_limit,
        table_bytes: old.table_bytes,
        bucket_entries: old.bucket_entries,
        seed: old.seed,
        lucky_y: old.lucky_y,
        lucky_limit: old.lucky_limit,
        index_bytes: old.index_bytes,
        propagate: false,
        align: false,
        near_duplicates: true,
        quotations: true,
        terms: textorigin_core::text::Terms::Words,
        density: textorigin_core::config::Density::Paper,
        dominant: textorigin_core::config::Dominant::Table,
        html: textorigin_core::config::HtmlMode::All,
        attribution: textorigin_core::config::Attribution::Earliest,
        templates: textorigin_core::config::Templates::Off,
        template_pages: textorigin_core::config::TEMPLATE_PAGES,
        density_lag: 0,
        // Later steps' settings, as they write them (they then find this value new).
        submitted_sites: textorigin_core::config::SubmittedSites::Trust,
        origins: true,
        site_field: textorigin_core::config::SITE_FIELD.to_string(),
        exact_copies: false,
    }
}

pub(super) fn run(store: &mut Store) -> Result<()> {
    rewrite_meta(store, MetaKey::QuoteConfig, "quote config", quote_config_of)?;
    // Re-deriving is idempotent, and a sketch already rewritten reads as one: a re-run
    // after a crash does it again.
    let metas: Vec<DocMeta> = store.docs().collect::<Result<_>>()?;
    for meta in metas {
        let mut b = WriteBatch::default();
        if let Some(mut result) = store.result(meta.seq)? {
            result.rederive_schema_6();
            b.put_cf(store.cf(CF_RESULTS.name), seq_key(meta.seq), encode(&result));
        }
        if let Some(bytes) = store.read(CF_ND_SKETCH.records::<crate::storage::store::table::Raw>(), &meta.seq)? {
            if decode::<Sketch>(&bytes).is_err() {
                let old: SketchV6 = decode(&bytes).map_err(|reason| StoreError::Corrupt {
                    path: store.path.clone(),
                    what: format!("sketch of {}", meta.seq),
                    reason,
                })?;
                // Its sampling ratio is unknown (0): it compares on its own min-values, as before.
                let new =
                    Sketch { exact: old.exact, mins: old.mins, simhash: old.simhash, rate: 0, coarse: Vec::new() };
                b.put_cf(store.cf(CF_ND_SKETCH.name), seq_key(meta.seq), encode(&new));
            }
        }
        store.write(b, false)?;
    }
    store.sync()?;
    rewrite_meta(store, MetaKey::Config, "config", config_of)
}
