//! Schema 27 → 28 (`migrations/0028-exact-copies.md`): the configuration gains
//! `exact_copies`, written off for an existing data directory (its results were
//! analysed in full, copies too; `rebuild --reanalyse --exact-copies on` answers them
//! from their earlier documents), and the column families `tokens` and `copy_of`
//! (`crate::storage::store::exact`), which opening creates and which stay empty while
//! exact copies are off. The stamp keeps older builds, which cannot read the longer
//! configuration, out.

use serde::Deserialize;
use textorigin_core::config::Config;

use super::rewrite_meta;
use super::v27_site_field::{config_of_v26, ConfigV26};
use crate::storage::store::meta::MetaKey;
use crate::storage::store::{Result, Store};

/// The configuration as schema 27 stored it: schema 26's fields, then `site_field`.
#[derive(Deserialize)]
struct ConfigV27 {
    v26: ConfigV26,
    site_field: String,
}

pub(super) fn run(store: &mut Store) -> Result<()> {
    rewrite_meta(store, MetaKey::Config, "config", |o: ConfigV27| Config {
        exact_copies: false,
        ..config_of_v26(o.v26, o.site_field)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::store::codec::encode;
    use textorigin_core::config::Templates;

    #[test]
    fn a_schema_27_config_analyses_exact_copies_in_full_and_keeps_every_other_setting() {
        let made = Config { templates: Templates::All, k: 5, site_field: "publisher".into(), ..Config::default() };
        assert!(made.exact_copies, "on for a new data directory");
        // Schema 27 wrote the fields up to `site_field`: the new one is one byte.
        let full = encode(&made);
        let cfg = super::super::config_after(&full[..full.len() - 1], run);
        assert_eq!(cfg, Config { exact_copies: false, ..made.clone() });
        assert!(!cfg.canonical().contains("exact_copies"), "off, the line is as before: {}", cfg.canonical());
        assert!(made.canonical().ends_with(" site_field=publisher exact_copies=on"), "{}", made.canonical());
    }
}
