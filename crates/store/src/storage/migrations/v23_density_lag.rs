//! Schema 22 → 23 (`migrations/0023-density-lag.md`): the configuration gains
//! `density_lag`, written 0 for an existing data directory: its adaptive threshold was
//! raised in the middle of documents, and replay must give its table and results again
//! (`rebuild --reanalyse --density-lag 128` moves it). The stamp keeps older builds,
//! which cannot read the longer configuration, out.

use serde::Deserialize;
use textorigin_core::config::{Config, Templates};

use super::rewrite_meta;
use super::v21_templates::{config_of_v20, ConfigV20};
use crate::storage::store::meta::MetaKey;
use crate::storage::store::{Result, Store};

/// The configuration as schemas 21 and 22 stored it: schema 20's fields, then the
/// templates.
#[derive(Deserialize)]
pub(super) struct ConfigV22 {
    v20: ConfigV20,
    templates: Templates,
    template_pages: u32,
}

pub(super) fn run(store: &mut Store) -> Result<()> {
    rewrite_meta(store, MetaKey::Config, "config", |o: ConfigV22| config_of_v22(o, 0))
}

/// Schema 22's configuration in today's encoding, with the density's lag `density_lag`.
pub(super) fn config_of_v22(o: ConfigV22, density_lag: u8) -> Config {
    Config { templates: o.templates, template_pages: o.template_pages, density_lag, ..config_of_v20(o.v20) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::store::codec::encode;
    use textorigin_core::config::{Density, SubmittedSites};

    #[test]
    fn a_schema_22_config_raises_its_density_at_once_and_keeps_every_other_setting() {
        let made = Config { density: Density::Adaptive, templates: Templates::All, k: 5, ..Config::default() };
        // Schema 22 wrote the fields up to `template_pages`: the new one is one byte.
        let full = encode(&made);
        let cfg = super::super::config_after(&full[..full.len() - 1], run);
        assert_eq!(cfg, Config { density_lag: 0, submitted_sites: SubmittedSites::Trust, exact_copies: false, ..made });
        assert!(
            cfg.canonical()
                .ends_with(" density=adaptive dominant=blocks html=main attribution=passage templates=all/5"),
            "{}",
            cfg.canonical()
        );
    }
}
