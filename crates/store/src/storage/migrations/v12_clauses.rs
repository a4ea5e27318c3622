//! Schema 11 → 12 (`migrations/0012-clauses.md`): the quotation configuration gains
//! `clauses` (issue 34), written `false` for an existing data directory: its index holds
//! no clause signatures, and a search by clauses would find only the sentences indexed
//! after the step. The stamp keeps older builds, which cannot read the longer
//! configuration, out.

use serde::Deserialize;
use textorigin_core::quote::QuoteConfig;

use super::rewrite_meta;
use super::v7_origin_options::{quote_config_of, QuoteConfigV6};
use crate::storage::store::meta::MetaKey;
use crate::storage::store::{Result, Store};

/// The quotation configuration as schemas 8 to 11 stored it: schema 6's fields, then
/// four.
#[derive(Deserialize)]
pub(super) struct QuoteConfigV11 {
    v6: QuoteConfigV6,
    split_words: u32,
    splits: u32,
    pairs: bool,
    max_candidates: u32,
}

/// Schema 11's quotation configuration in this build's terms: no clauses, nor any setting
/// after them.
pub(super) fn quote_config_of_v11(o: QuoteConfigV11) -> QuoteConfig {
    QuoteConfig {
        split_words: o.split_words,
        splits: o.splits,
        pairs: o.pairs,
        max_candidates: o.max_candidates,
        clauses: false,
        exact_index: false,
        ..quote_config_of(o.v6)
    }
}

pub(super) fn run(store: &mut Store) -> Result<()> {
    rewrite_meta(store, MetaKey::QuoteConfig, "quote config", quote_config_of_v11)
}
