//! Schema 25 → 26 (`migrations/0026-origins.md`): the configuration gains `origins`,
//! written on for an existing data directory, whose table and results hold its origins
//! (a new one may be made with them off: near-duplicates and quotations alone). The
//! stamp keeps older builds, which cannot read the longer configuration, out.

use serde::Deserialize;
use textorigin_core::config::{Config, SubmittedSites};

use super::rewrite_meta;
use super::v25_submitted_sites::{config_of_v24, ConfigV24};
use crate::storage::store::meta::MetaKey;
use crate::storage::store::{Result, Store};

/// The configuration as schema 25 stored it: schema 24's fields, then whether
/// submitted documents name their sites.
#[derive(Deserialize)]
pub(super) struct ConfigV25 {
    v24: ConfigV24,
    submitted_sites: SubmittedSites,
}

pub(super) fn run(store: &mut Store) -> Result<()> {
    rewrite_meta(store, MetaKey::Config, "config", |o: ConfigV25| config_of_v25(o, true))
}

/// Schema 25's configuration in today's encoding, with `origins`.
pub(super) fn config_of_v25(o: ConfigV25, origins: bool) -> Config {
    Config { origins, ..config_of_v24(o.v24, o.submitted_sites) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::store::codec::encode;
    use textorigin_core::config::Templates;

    #[test]
    fn a_schema_25_config_keeps_its_origins_and_every_other_setting() {
        let made =
            Config { templates: Templates::All, k: 5, submitted_sites: SubmittedSites::Trust, ..Config::default() };
        // Schema 25 wrote the fields up to `submitted_sites`: origins is one byte,
        // schema 27's site field (`site`) five and schema 28's exact copies one.
        let full = encode(&made);
        assert_eq!(
            super::super::config_after(&full[..full.len() - 7], run),
            Config { exact_copies: false, ..made.clone() }
        );
        assert!(!made.canonical().contains("origins"), "on, the canonical line is as before: {}", made.canonical());
        let off = Config { origins: false, exact_copies: false, ..made.clone() };
        assert!(off.canonical().ends_with(" origins=off"), "{}", off.canonical());
    }
}
