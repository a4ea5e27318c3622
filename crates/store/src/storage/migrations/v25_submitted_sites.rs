//! Schema 24 → 25 (`migrations/0025-submitted-sites.md`): the configuration gains
//! `submitted_sites`, written `Trust` for an existing data directory: the `site` and
//! `url` of the documents its spool and HTTP server took named their sites, and replay
//! must give their template lines again (`rebuild --reanalyse --submitted-sites ignore`
//! moves it). The stamp keeps older builds, which cannot read the longer configuration,
//! out.

use serde::Deserialize;
use textorigin_core::config::{Config, SubmittedSites};

use super::rewrite_meta;
use super::v23_density_lag::{config_of_v22, ConfigV22};
use crate::storage::store::codec::decode;
use crate::storage::store::meta::MetaKey;
use crate::storage::store::{Result, Store, StoreError, CF_META};

/// The configuration as schemas 23 and 24 stored it: schema 22's fields, then the
/// density's lag.
#[derive(Deserialize)]
pub(super) struct ConfigV24 {
    v22: ConfigV22,
    density_lag: u8,
}

/// The configuration of a store of schema 23 or 24, read as those schemas wrote it (the
/// steps before this one read it so).
pub(super) fn config_v24(store: &Store) -> Result<Option<Config>> {
    let Some(bytes) = store.read(CF_META, MetaKey::Config.bytes())? else { return Ok(None) };
    let o: ConfigV24 = decode(&bytes).map_err(|reason| StoreError::Corrupt {
        path: store.path.clone(),
        what: "config".into(),
        reason,
    })?;
    Ok(Some(config_of_v22(o.v22, o.density_lag)))
}

pub(super) fn run(store: &mut Store) -> Result<()> {
    rewrite_meta(store, MetaKey::Config, "config", |o: ConfigV24| config_of_v24(o, SubmittedSites::Trust))
}

/// Schema 24's configuration in today's encoding, with `submitted_sites`.
pub(super) fn config_of_v24(o: ConfigV24, submitted_sites: SubmittedSites) -> Config {
    Config { submitted_sites, ..config_of_v22(o.v22, o.density_lag) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::store::codec::encode;
    use textorigin_core::config::{Density, Templates};

    #[test]
    fn a_schema_24_config_trusts_submitted_sites_and_keeps_every_other_setting() {
        let made =
            Config { density: Density::Adaptive, density_lag: 9, templates: Templates::All, k: 5, ..Config::default() };
        // Schema 24 wrote the fields up to `density_lag`: the later ones are a byte each.
        let full = encode(&made);
        let trusted = Config { submitted_sites: SubmittedSites::Trust, exact_copies: false, ..made };
        assert_eq!(super::super::config_after(&full[..full.len() - 2], run), trusted);
        assert!(trusted.canonical().ends_with(" templates=all/5"), "{}", trusted.canonical());
    }
}
