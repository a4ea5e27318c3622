//! Schema 19 → 20 (`migrations/0020-html.md`): the configuration gains `html` and
//! `attribution` (issue 54), written `All` and `Earliest` for an existing data
//! directory: its stored texts were read from HTML with every visible text, and the
//! documents it takes next are read alike (`ingest --html main` on it is refused as a
//! changed setting; a new data directory reads the main content); its stored results
//! credit each token to the earliest origin, and so do the next ones (`rebuild
//! --reanalyse --attribution passage` moves it). Nothing else is rewritten. The stamp
//! keeps older builds, which cannot read the longer configuration, out.

use serde::Deserialize;
use textorigin_core::config::{Attribution, Config, Density, Dominant, HtmlMode, Templates, TEMPLATE_PAGES};

use super::rewrite_meta;
use super::v17_density::{config_of_v16, ConfigV16};
use crate::storage::store::meta::MetaKey;
use crate::storage::store::{Result, Store};

/// The configuration as schemas 17 to 19 stored it: schema 16's fields, then `density`
/// and `dominant`.
#[derive(Deserialize)]
struct ConfigV19 {
    v16: ConfigV16,
    density: Density,
    dominant: Dominant,
}

pub(super) fn run(store: &mut Store) -> Result<()> {
    rewrite_meta(store, MetaKey::Config, "config", |o: ConfigV19| Config {
        density: o.density,
        dominant: o.dominant,
        html: HtmlMode::All,
        attribution: Attribution::Earliest,
        // Schema 21's settings, as its step writes them (it then finds this value new).
        templates: Templates::Off,
        template_pages: TEMPLATE_PAGES,
        ..config_of_v16(o.v16)
    })
}
