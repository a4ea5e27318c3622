//! Flags shared by several commands, and their conversion into the library's typed
//! values at this edge (ripgrep's "low args → high args").

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use textorigin_core::config::{parse_size, Overrides};

/// Default limit on one document's size.
pub const DEFAULT_MAX_DOC_BYTES: &str = "64MiB";

/// The data directory.
#[derive(Args, Clone, Debug)]
pub struct DataArg {
    /// Data directory (table file + RocksDB store).
    #[arg(long = "data", env = "TEXTORIGIN_DATA", value_name = "DIR")]
    pub dir: PathBuf,
}

/// Algorithm options (the flags, a TOML file's keys): the core's settings.
pub use textorigin_core::settings::{on_off, Settings as ConfigArgs};

/// The overrides of an optional TOML file, then of the flags (later ones win).
pub fn overrides(config: Option<&Path>, flags: &ConfigArgs) -> Result<Overrides> {
    let file = match config {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("config file {}", path.display()))?;
            toml::from_str::<ConfigArgs>(&text)
                .with_context(|| format!("config file {}", path.display()))?
                .typed()
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("config file {}", path.display()))?
        }
        None => Overrides::default(),
    };
    Ok(file.or(flags.typed().map_err(anyhow::Error::msg)?))
}

/// Parses a size flag (`64MiB`).
pub fn size(s: &str) -> Result<u64> {
    parse_size(s).map_err(anyhow::Error::msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_and_flags_override_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "selection = \"nw8\"\nk = 6\ntable_size = \"8MiB\"").unwrap();
        let flags = ConfigArgs { k: Some(5), ..Default::default() };
        let o = overrides(Some(&path), &flags).unwrap();
        assert_eq!(o.k, Some(5));
        assert_eq!(o.selection.unwrap().to_string(), "NW8");
        assert_eq!(o.table_bytes, Some(8 << 20));
        assert!(toml::from_str::<ConfigArgs>("selektion = \"all\"").is_err(), "unknown keys are errors");
        let bad = ConfigArgs { eviction: Some("sometimes".into()), ..Default::default() };
        assert!(bad.typed().unwrap_err().to_string().contains("unknown eviction"));
    }
}
