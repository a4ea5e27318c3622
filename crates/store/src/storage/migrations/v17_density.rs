//! Schema 16 → 17 (`migrations/0017-density.md`): the configuration gains `density` and
//! `dominant` (issue 36), written `Paper` and `Table` for an existing data directory:
//! its table and stored results were made with the selection alone and the table's
//! dominant origin, and keep them (`rebuild --reanalyse --density adaptive --dominant
//! blocks` moves it). A result selected at a density threshold keeps it behind its
//! value (one byte an older build ignores): nothing else is rewritten. The stamp keeps
//! older builds, which cannot read the longer configuration, out.

use serde::Deserialize;
use textorigin_core::text::Terms;

use super::rewrite_meta;
use super::v11_terms::{config_of_v10, ConfigV10};
use crate::storage::store::meta::MetaKey;
use crate::storage::store::{Result, Store};

/// The configuration as schemas 11 to 16 stored it: schema 10's fields, then `terms`.
#[derive(Deserialize)]
pub(super) struct ConfigV16 {
    v10: ConfigV10,
    terms: Terms,
}

/// Schema 16's configuration in today's encoding.
pub(super) fn config_of_v16(o: ConfigV16) -> textorigin_core::config::Config {
    config_of_v10(o.v10, o.terms)
}

pub(super) fn run(store: &mut Store) -> Result<()> {
    rewrite_meta(store, MetaKey::Config, "config", config_of_v16)
}
