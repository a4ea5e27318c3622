//! Flags shared by several commands, and their conversion into the library's typed
//! values at this edge (ripgrep's "low args → high args").

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use serde::Deserialize;
use textorigin_core::config::{parse_size, Overrides};
use textorigin_core::neardup::NearDupConfig;
use textorigin_core::quote::QuoteConfig;

/// Default limit on one document's size.
pub const DEFAULT_MAX_DOC_BYTES: &str = "64MiB";

/// The data directory.
#[derive(Args, Clone, Debug)]
pub struct DataArg {
    /// Data directory (table file + RocksDB store).
    #[arg(long = "data", env = "TEXTORIGIN_DATA", value_name = "DIR")]
    pub dir: PathBuf,
}

/// Algorithm options as the flags and a TOML file spell them; [`ConfigArgs::typed`]
/// parses them into the core's [`Overrides`].
#[derive(Debug, Clone, Default, Deserialize, Args)]
#[serde(deny_unknown_fields)]
pub struct ConfigArgs {
    /// Shingle length k in tokens (default 8).
    #[arg(long)]
    pub k: Option<u32>,
    /// Selection algorithm: all, <l>th (every l-th), m<l> / nm<l> (modulo),
    /// w<w> / nw<w> (winnowing), hs / nhs (Hailstorm), hb<p> (hash-breaking),
    /// dct<p>. An `n` prefix drops shingles completely overlapped by others.
    /// Default nhs.
    #[arg(long)]
    pub selection: Option<String>,
    /// Eviction of a full bucket: random, lru, cc (copy-count), lucky. Default lucky.
    #[arg(long)]
    pub eviction: Option<String>,
    /// Estimation of unfound shingles: nb (none), e (expansion), b (bridging),
    /// be (bridging with expansion). Default be.
    #[arg(long)]
    pub estimation: Option<String>,
    /// Bridging limit T, in selected shingles (2-256, default 30).
    #[arg(long)]
    pub bridge_limit: Option<u32>,
    /// Table file size: bytes, or with a unit (KiB, MiB, GiB, KB, MB, GB). Default 256MiB.
    #[arg(long)]
    pub table_size: Option<String>,
    /// Size of the derived indexes (document frequencies, quotation signatures,
    /// near-duplicate keys) stored behind the table in the same file: bytes or with a
    /// unit. Default half the table size, at least 8MiB. Fixed at creation.
    #[arg(long)]
    pub index_size: Option<String>,
    /// Entries per table bucket (4-256, default 64).
    #[arg(long)]
    pub bucket_entries: Option<u32>,
    /// Seed of random eviction and of tie-breaking (default 0).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Lucky eviction: every y-th selected shingle gets a bonus (default 7).
    #[arg(long)]
    pub lucky_y: Option<u32>,
    /// Lucky eviction: halve a bucket's scores when their average reaches this (default 11).
    #[arg(long)]
    pub lucky_limit: Option<u8>,
    /// Origin propagation: a shingle estimation labels copied is stored with the
    /// estimated origin, so that later copies find the earliest source (on or off;
    /// default on for a new data directory).
    #[arg(long, value_name = "on|off", value_parser = on_off)]
    pub propagate: Option<bool>,
    /// Seed-and-extend: copied blocks aligned against their origins' stored texts to
    /// the exact edges of the common run; off gives the paper's blocks (on or off;
    /// default on for a new data directory).
    #[arg(long, value_name = "on|off", value_parser = on_off)]
    pub align: Option<bool>,
    /// Near-duplicate detection (on or off; default on for a new data directory). Off:
    /// no sketch is made or stored, and the views say "off". TOML: `near_duplicates`.
    /// Turning it on later: `rebuild --reanalyse --neardup on`.
    #[arg(long = "neardup", value_name = "on|off", value_parser = on_off)]
    pub near_duplicates: Option<bool>,
    /// Quotation search (on or off; default on for a new data directory). Off: no
    /// sentence is signed, indexed or searched, and the views say "off". TOML:
    /// `quotations`. Turning it on later: `rebuild --reanalyse --quotes on`.
    #[arg(long = "quotes", value_name = "on|off", value_parser = on_off)]
    pub quotations: Option<bool>,
    /// Near-duplicate parameters (TOML table `[neardup]` only; see `NearDupConfig`).
    #[arg(skip)]
    pub neardup: Option<NearDupConfig>,
    /// Quotation-search parameters (TOML table `[quotes]` only; see `QuoteConfig`).
    #[arg(skip)]
    pub quotes: Option<QuoteConfig>,
}

impl ConfigArgs {
    /// Parses the strings into typed overrides.
    pub fn typed(&self) -> Result<Overrides> {
        fn parse<T: std::str::FromStr<Err = String>>(s: &Option<String>) -> Result<Option<T>> {
            s.as_deref().map(str::parse).transpose().map_err(anyhow::Error::msg)
        }
        Ok(Overrides {
            k: self.k,
            selection: parse(&self.selection)?,
            eviction: parse(&self.eviction)?,
            estimation: parse(&self.estimation)?,
            bridge_limit: self.bridge_limit,
            table_bytes: self.table_size.as_deref().map(size).transpose()?,
            index_bytes: self.index_size.as_deref().map(size).transpose()?,
            bucket_entries: self.bucket_entries,
            seed: self.seed,
            lucky_y: self.lucky_y,
            lucky_limit: self.lucky_limit,
            propagate: self.propagate,
            align: self.align,
            near_duplicates: self.near_duplicates,
            quotations: self.quotations,
            neardup: self.neardup.clone(),
            quotes: self.quotes.clone(),
        })
    }
}

/// The overrides of an optional TOML file, then of the flags (later ones win).
pub fn overrides(config: Option<&Path>, flags: &ConfigArgs) -> Result<Overrides> {
    let file = match config {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("config file {}", path.display()))?;
            toml::from_str::<ConfigArgs>(&text)
                .with_context(|| format!("config file {}", path.display()))?
                .typed()
                .with_context(|| format!("config file {}", path.display()))?
        }
        None => Overrides::default(),
    };
    Ok(file.or(flags.typed()?))
}

/// Parses an on/off flag.
pub fn on_off(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" => Ok(true),
        "off" | "false" | "no" => Ok(false),
        _ => Err(format!("`{s}`: expected on or off")),
    }
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
