//! Schema 20 → 21 (`migrations/0021-templates.md`): the configuration gains
//! `templates` and `template_pages` (issue 54), written `Off` for an existing data
//! directory: its stored results and derived indexes counted every repeated line as a
//! copy, and replay must give them again (`rebuild --reanalyse --templates site` moves
//! it). The template records (`meta` keys `tpl/`) start empty. The stamp keeps older
//! builds, which cannot read the longer configuration, out.

use serde::Deserialize;
use textorigin_core::config::{Attribution, Config, Density, Dominant, HtmlMode, Templates, TEMPLATE_PAGES};

use super::rewrite_meta;
use super::v17_density::{config_of_v16, ConfigV16};
use crate::storage::store::meta::MetaKey;
use crate::storage::store::{Result, Store};

/// The configuration as schema 20 stored it: schema 16's fields, then `density`,
/// `dominant`, `html` and `attribution`.
#[derive(Deserialize)]
pub(super) struct ConfigV20 {
    v16: ConfigV16,
    density: Density,
    dominant: Dominant,
    html: HtmlMode,
    attribution: Attribution,
}

pub(super) fn run(store: &mut Store) -> Result<()> {
    rewrite_meta(store, MetaKey::Config, "config", config_of_v20)
}

/// Schema 20's configuration in today's encoding: no template labelling.
pub(super) fn config_of_v20(o: ConfigV20) -> Config {
    Config {
        density: o.density,
        dominant: o.dominant,
        html: o.html,
        attribution: o.attribution,
        templates: Templates::Off,
        template_pages: TEMPLATE_PAGES,
        ..config_of_v16(o.v16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::store::codec::encode;
    use textorigin_core::config::SubmittedSites;

    #[test]
    fn a_schema_20_config_gets_no_template_labelling_and_keeps_every_other_setting() {
        let made = Config { html: HtmlMode::All, attribution: Attribution::Earliest, k: 5, ..Config::default() };
        // Schema 20 wrote the fields up to `attribution`: the templates' two and schema
        // 23's lag are one byte each.
        let full = encode(&made);
        let cfg = super::super::config_after(&full[..full.len() - 3], run);
        assert_eq!(
            cfg,
            Config {
                templates: Templates::Off,
                density_lag: 0,
                submitted_sites: SubmittedSites::Trust,
                exact_copies: false,
                ..made
            }
        );
    }
}
