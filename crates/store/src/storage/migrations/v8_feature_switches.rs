//! Schema 7 → 8 (`migrations/0008-feature-switches.md`): the configuration gains the
//! feature switches `near_duplicates` and `quotations`, both written on for an existing
//! data directory (its stored results have both), and the quotation parameters gain
//! part signatures of pairs of groups (`pairs`) and the per-sentence candidate cap
//! (`max_candidates`), written off (`false`, `u32::MAX`: the directory's index keeps
//! its meaning and it searches as before). A data directory with a feature off stores nothing
//! for it, which a build of schema 7 would read as "none found": the stamp keeps such
//! builds out.

use serde::Deserialize;
use textorigin_core::config::Config;
use textorigin_core::quote::QuoteConfig;

use super::rewrite_meta;
use super::v7_origin_options::{config_of, quote_config_of, ConfigV6, QuoteConfigV6};
use crate::storage::store::meta::MetaKey;
use crate::storage::store::{Result, Store};

/// The configuration as schema 7 stored it: schema 6's fields, then two (postcard
/// writes a nested struct as its fields, in order).
#[derive(Deserialize)]
pub(super) struct ConfigV7 {
    v6: ConfigV6,
    propagate: bool,
    align: bool,
}

/// Schema 7's configuration in today's encoding (see [`config_of`]), with its options.
pub(super) fn config_of_v7(o: ConfigV7) -> Config {
    Config { propagate: o.propagate, align: o.align, ..config_of(o.v6) }
}

/// The quotation parameters as schema 7 stored them: schema 6's, then two.
#[derive(Deserialize)]
struct QuoteConfigV7 {
    v6: QuoteConfigV6,
    split_words: u32,
    splits: u32,
}

pub(super) fn run(store: &mut Store) -> Result<()> {
    rewrite_meta(store, MetaKey::QuoteConfig, "quote config", |o: QuoteConfigV7| QuoteConfig {
        split_words: o.split_words,
        splits: o.splits,
        ..quote_config_of(o.v6)
    })?;
    rewrite_meta(store, MetaKey::Config, "config", config_of_v7)
}
