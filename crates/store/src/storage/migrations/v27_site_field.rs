//! Schema 26 → 27 (`migrations/0027-site-field.md`): the configuration gains
//! `site_field`, the metadata field that names a document's site, written `site` for
//! an existing data directory (the field its sites were named by). The stamp keeps
//! older builds, which cannot read the longer configuration, out.

use serde::Deserialize;
use textorigin_core::config::{Config, SITE_FIELD};

use super::rewrite_meta;
use super::v26_origins::{config_of_v25, ConfigV25};
use crate::storage::store::meta::MetaKey;
use crate::storage::store::{Result, Store};

/// The configuration as schema 26 stored it: schema 25's fields, then `origins`.
#[derive(Deserialize)]
pub(super) struct ConfigV26 {
    v25: ConfigV25,
    origins: bool,
}

pub(super) fn run(store: &mut Store) -> Result<()> {
    rewrite_meta(store, MetaKey::Config, "config", |o: ConfigV26| config_of_v26(o, SITE_FIELD.to_string()))
}

/// Schema 26's configuration in today's encoding, with `site_field`.
pub(super) fn config_of_v26(o: ConfigV26, site_field: String) -> Config {
    Config { site_field, ..config_of_v25(o.v25, o.origins) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::store::codec::encode;
    use textorigin_core::config::{SubmittedSites, Templates};

    #[test]
    fn a_schema_26_config_names_sites_by_their_site_field_and_keeps_every_other_setting() {
        let made = Config {
            templates: Templates::All,
            k: 5,
            submitted_sites: SubmittedSites::Trust,
            origins: false,
            ..Config::default()
        };
        // Schema 26 wrote the fields up to `origins`: the new one is a length and `site`,
        // and schema 28's exact copies one byte.
        let full = encode(&made);
        assert_eq!(
            super::super::config_after(&full[..full.len() - 6], run),
            Config { exact_copies: false, ..made.clone() }
        );
        assert!(!made.canonical().contains("site_field"), "the default's line is as before: {}", made.canonical());
        let other = Config { site_field: "publisher".into(), exact_copies: false, ..made };
        assert!(other.canonical().ends_with(" site_field=publisher origins=off"), "{}", other.canonical());
    }
}
