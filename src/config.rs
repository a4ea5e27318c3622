//! Configuration: the algorithm choices and sizes, from defaults, a TOML file and
//! command-line flags (in that order; later ones override).
//!
//! A data directory remembers the configuration it was created with; later runs start
//! from it, so only an explicit option that differs is an error (reported by the table
//! and the store, never silently reinterpreted).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::estimate::Estimation;
use crate::select::Selection;
use crate::table::{Eviction, TableParams};

/// Every algorithm choice and size that shapes a data directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// Shingle length in tokens (paper: 8).
    pub k: u32,
    /// Selection algorithm (paper's best: NHs).
    pub selection: Selection,
    /// Eviction policy (paper's best: Lucky).
    pub eviction: Eviction,
    /// Estimation algorithm (paper's best: BE).
    pub estimation: Estimation,
    /// Bridging limit T in selected shingles (paper: 30; 2-256).
    pub bridge_limit: u32,
    /// Table file size in bytes.
    pub table_bytes: u64,
    /// Entries per bucket (paper: 64; 4-256).
    pub bucket_entries: u32,
    /// Seed of Random eviction and of eviction tie-breaking.
    pub seed: u64,
    /// Lucky rule (d): every y-th selected shingle gets +1 (paper: 7).
    pub lucky_y: u32,
    /// Lucky rule (e): halve a bucket whose average score reaches this (paper: 11).
    pub lucky_limit: u8,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            k: 8,
            selection: Selection::default(),
            eviction: Eviction::default(),
            estimation: Estimation::default(),
            bridge_limit: 30,
            table_bytes: 256 << 20,
            bucket_entries: 64,
            seed: 0,
            lucky_y: 7,
            lucky_limit: 11,
        }
    }
}

/// Options that override a configuration: the TOML file's keys and the flags.
#[derive(Debug, Clone, Default, Deserialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct Overrides {
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
    /// Near-duplicate parameters (TOML table `[neardup]` only; see `NearDupConfig`).
    #[arg(skip)]
    pub neardup: Option<crate::neardup::NearDupConfig>,
    /// Quotation-search parameters (TOML table `[quotes]` only; see `QuoteConfig`).
    #[arg(skip)]
    pub quotes: Option<crate::quote::QuoteConfig>,
}

/// Parses a size such as `4096`, `64MiB`, `1.5GB`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| format!("size `{s}`: expected a number with an optional unit, e.g. 64MiB"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        u => return Err(format!("size `{s}`: unknown unit `{u}` (use B, KiB, MiB, GiB, KB, MB, GB)")),
    };
    let bytes = value * mult as f64;
    if !(bytes.is_finite() && (1.0..1.8e19).contains(&bytes)) {
        return Err(format!("size `{s}` is out of range"));
    }
    Ok(bytes.round() as u64)
}

impl Overrides {
    /// Reads a TOML file of overrides.
    pub fn from_toml_file(path: &Path) -> Result<Overrides, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("config file {}: {e}", path.display()))?;
        toml::from_str(&text).map_err(|e| format!("config file {}: {e}", path.display()))
    }

    /// `other`'s values where it has them, else ours.
    pub fn or(self, other: Overrides) -> Overrides {
        Overrides {
            k: other.k.or(self.k),
            selection: other.selection.or(self.selection),
            eviction: other.eviction.or(self.eviction),
            estimation: other.estimation.or(self.estimation),
            bridge_limit: other.bridge_limit.or(self.bridge_limit),
            table_size: other.table_size.or(self.table_size),
            bucket_entries: other.bucket_entries.or(self.bucket_entries),
            seed: other.seed.or(self.seed),
            lucky_y: other.lucky_y.or(self.lucky_y),
            lucky_limit: other.lucky_limit.or(self.lucky_limit),
            neardup: other.neardup.or(self.neardup),
            quotes: other.quotes.or(self.quotes),
        }
    }

    /// Applies the overrides to `base` and validates the result.
    pub fn apply(&self, base: &Config) -> Result<Config, String> {
        let mut c = base.clone();
        if let Some(k) = self.k {
            c.k = k;
        }
        if let Some(s) = &self.selection {
            c.selection = s.parse()?;
        }
        if let Some(s) = &self.eviction {
            c.eviction = s.parse()?;
        }
        if let Some(s) = &self.estimation {
            c.estimation = s.parse()?;
        }
        if let Some(t) = self.bridge_limit {
            c.bridge_limit = t;
        }
        if let Some(s) = &self.table_size {
            c.table_bytes = parse_size(s)?;
        }
        if let Some(b) = self.bucket_entries {
            c.bucket_entries = b;
        }
        if let Some(s) = self.seed {
            c.seed = s;
        }
        if let Some(y) = self.lucky_y {
            c.lucky_y = y;
        }
        if let Some(l) = self.lucky_limit {
            c.lucky_limit = l;
        }
        c.validate()?;
        Ok(c)
    }
}

impl Config {
    /// Checks ranges.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=64).contains(&self.k) {
            return Err(format!("k = {} is out of range (1-64)", self.k));
        }
        if !(2..=256).contains(&self.bridge_limit) {
            return Err(format!("bridge limit T = {} is out of range (2-256)", self.bridge_limit));
        }
        if self.lucky_y == 0 {
            return Err("lucky y must be at least 1".into());
        }
        if self.lucky_limit == 0 {
            return Err("lucky limit must be at least 1".into());
        }
        crate::table::Table::check_params(&self.table_params()).map_err(|e| e.to_string())
    }

    /// One line naming every value that shapes the table's content (stored in the
    /// table header and compared on open).
    pub fn canonical(&self) -> String {
        format!(
            "k={} selection={} eviction={} estimation={} bridge_limit={} lucky_y={} lucky_limit={} bucket_entries={} table_bytes={} seed={}",
            self.k,
            self.selection,
            self.eviction,
            self.estimation,
            self.bridge_limit,
            self.lucky_y,
            self.lucky_limit,
            self.bucket_entries,
            self.table_bytes,
            self.seed
        )
    }

    /// The table's parameters.
    pub fn table_params(&self) -> TableParams {
        TableParams {
            bytes: self.table_bytes,
            bucket_entries: self.bucket_entries,
            eviction: self.eviction,
            seed: self.seed,
            lucky_limit: self.lucky_limit,
            fingerprint_text: self.canonical(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("64MiB").unwrap(), 64 << 20);
        assert_eq!(parse_size("1.5 GB").unwrap(), 1_500_000_000);
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("").is_err());
    }

    #[test]
    fn toml_and_flags_override_in_order() {
        let file: Overrides = toml::from_str("selection = \"nw8\"\nk = 6\ntable_size = \"8MiB\"").unwrap();
        let flags = Overrides { k: Some(5), ..Default::default() };
        let c = file.or(flags).apply(&Config::default()).unwrap();
        assert_eq!(c.k, 5);
        assert_eq!(c.selection.to_string(), "NW8");
        assert_eq!(c.table_bytes, 8 << 20);
        assert!(toml::from_str::<Overrides>("selektion = \"all\"").is_err(), "unknown keys are errors");
        let bad = Overrides { bucket_entries: Some(3), ..Default::default() };
        assert!(bad.apply(&Config::default()).is_err());
    }
}
