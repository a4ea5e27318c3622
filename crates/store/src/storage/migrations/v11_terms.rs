//! Schema 10 → 11 (`migrations/0011-terms.md`): the configuration gains `terms` (issue
//! 33), written `Words` for an existing data directory: its table, indexes and stored
//! results were made with a run of letters and digits as a term whatever the script, and
//! keep that rule (`rebuild --reanalyse --terms unicode` moves it to the Unicode rule). The stamp keeps older builds, which cannot read the longer
//! configuration, out.

use serde::Deserialize;
use textorigin_core::config::Config;
use textorigin_core::text::Terms;

use super::rewrite_meta;
use super::v8_feature_switches::{config_of_v7, ConfigV7};
use crate::storage::store::meta::MetaKey;
use crate::storage::store::{Result, Store};

/// The configuration as schemas 8 to 10 stored it: schema 7's fields, then two.
#[derive(Deserialize)]
pub(super) struct ConfigV10 {
    v7: ConfigV7,
    near_duplicates: bool,
    quotations: bool,
}

/// Schema 10's configuration in today's encoding, with `terms`.
pub(super) fn config_of_v10(o: ConfigV10, terms: Terms) -> Config {
    Config { near_duplicates: o.near_duplicates, quotations: o.quotations, terms, ..config_of_v7(o.v7) }
}

pub(super) fn run(store: &mut Store) -> Result<()> {
    rewrite_meta(store, MetaKey::Config, "config", |o: ConfigV10| config_of_v10(o, Terms::Words))
}
