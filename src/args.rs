//! Flags shared by several commands, and their conversion into the library's typed
//! values at this edge (ripgrep's "low args → high args").

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use serde::Deserialize;
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

/// A TOML config file: its `[daemon]` table (`serve`'s own settings) apart, and the
/// rest (the algorithm options).
fn config_tables(path: &Path) -> Result<(Option<toml::Table>, toml::Table)> {
    let text = std::fs::read_to_string(path).with_context(|| format!("config file {}", path.display()))?;
    let mut table: toml::Table = text.parse().with_context(|| format!("config file {}", path.display()))?;
    let daemon = match table.remove("daemon") {
        None => None,
        Some(toml::Value::Table(t)) => Some(t),
        Some(_) => anyhow::bail!("config file {}: `daemon` must be a table ([daemon])", path.display()),
    };
    Ok((daemon, table))
}

/// The `[daemon]` table of the config file `path`, if it has one.
pub fn config_daemon_table(path: &Path) -> Result<Option<toml::Table>> {
    Ok(config_tables(path)?.0)
}

/// The overrides of an optional TOML file (its algorithm options: a `[daemon]` table is
/// `serve`'s), then of the flags (later ones win).
pub fn overrides(config: Option<&Path>, flags: &ConfigArgs) -> Result<Overrides> {
    let file = match config {
        Some(path) => {
            let (_, rest) = config_tables(path)?;
            ConfigArgs::deserialize(rest)
                .with_context(|| format!("config file {}", path.display()))?
                .typed()
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("config file {}", path.display()))?
        }
        None => Overrides::default(),
    };
    Ok(file.or(flags.typed().map_err(anyhow::Error::msg)?))
}

/// What one input may hold: its documents' size, and what a compressed file may
/// decode to (a compression bomb stops there, with an error for its file).
#[derive(Args, Clone, Debug)]
pub struct LimitArgs {
    /// Largest document (bytes, or with a unit such as MiB; 64MiB when not given); a
    /// larger one fails with the reason.
    #[arg(long, value_name = "SIZE")]
    max_doc_bytes: Option<String>,
    /// A gzip or zstd file stops decoding past this size (0: no limit); its documents
    /// before that point are stored, the file is reported as failed.
    #[arg(long, default_value = "4GiB", value_name = "SIZE")]
    max_decoded_bytes: String,
    /// A gzip or zstd file stops decoding once past its first MiB it has decoded to
    /// more than this many times the bytes read (text compresses 3-40 times; a bomb
    /// thousands of times; 0: no limit).
    #[arg(long, default_value_t = textorigin_store::input::DEFAULT_MAX_RATIO, value_name = "N")]
    max_ratio: u64,
    /// The column of a Parquet file that holds a row's text (a row whose text is null,
    /// or a file without the column, reads an `html` column as HTML).
    #[arg(long, default_value = "text", value_name = "COLUMN")]
    text_column: String,
    /// The column of a Parquet file that names a row (a string or an integer; without
    /// it a row is named from its `url`, else FILE:ROW).
    #[arg(long, default_value = "id", value_name = "COLUMN")]
    id_column: String,
}

impl LimitArgs {
    /// Whether `--max-doc-bytes` was given (`cluster submit` lowers the default to what
    /// the log takes, and refuses a larger one given).
    pub fn max_doc_bytes_given(&self) -> bool {
        self.max_doc_bytes.is_some()
    }

    pub fn limits(&self) -> Result<textorigin_store::input::Limits> {
        Ok(textorigin_store::input::Limits {
            doc_bytes: size(self.max_doc_bytes.as_deref().unwrap_or(DEFAULT_MAX_DOC_BYTES))
                .context("--max-doc-bytes")?,
            decoded_bytes: size(&self.max_decoded_bytes).context("--max-decoded-bytes")?,
            ratio: self.max_ratio,
            // The data directory's setting, set where it is opened.
            html: Default::default(),
            // Named once for the process's life (the limits are copied to every reader).
            text_column: Box::leak(self.text_column.clone().into_boxed_str()),
            id_column: Box::leak(self.id_column.clone().into_boxed_str()),
        })
    }
}

/// What a document's publication date may do (`serve`, `ingest`): which ways in may
/// take origins over, and how much re-analysis a take-over may do at once.
#[derive(Args, Clone, Debug)]
pub struct TakeOverArgs {
    /// The ways in whose publication dates may take origins over (a document dated
    /// before what it copies becomes their origin, and revises them): some of spool,
    /// http, ingest, python, cluster (comma-separated), or none. A document from
    /// another way stands in arrival order, its date kept. By default every way but
    /// http: a token may be handed to many producers, and one back-dated POST of a
    /// stored document's text would make the original "revised by" its copy.
    #[arg(long, value_name = "WAYS", default_value = "spool,ingest,python,cluster", value_parser = crate::args::ways)]
    take_over: crate::args::Ways,
    /// Re-analysis a take-over may do before its document is stored: documents ...
    #[arg(long, value_name = "N", default_value_t = textorigin_store::storage::datadir::DEFAULT_REVISION_BUDGET.docs)]
    revision_budget: u64,
    /// ... and bytes of their text. The documents beyond wait in a durable revision
    /// queue, revised a budget at a time after each document, while the daemon is
    /// idle and at the end of `ingest` (`stats` shows the queue).
    #[arg(long, value_name = "SIZE", default_value = "8MiB")]
    revision_budget_bytes: String,
}

impl TakeOverArgs {
    /// The intake policy of these flags, with `--bad-dates` (`undated`: stored undated).
    pub fn policy(&self, bad_dates: &str) -> Result<textorigin_store::intake::Policy> {
        Ok(textorigin_store::intake::Policy {
            undated_bad_dates: bad_dates == "undated",
            take_over: self.take_over.0.clone(),
            revision_budget: textorigin_store::storage::datadir::Budget {
                docs: self.revision_budget,
                bytes: size(&self.revision_budget_bytes).context("--revision-budget-bytes")?,
            },
        })
    }
}

/// Ways in (`--take-over`).
#[derive(Clone, Debug)]
pub struct Ways(Vec<textorigin_store::storage::store::Via>);

/// Parses `--take-over`: ways in (spool, http, ingest, python, cluster), comma-separated,
/// or `none`.
pub fn ways(s: &str) -> std::result::Result<Ways, String> {
    use textorigin_store::storage::store::Via;
    if s == "none" {
        return Ok(Ways(Vec::new()));
    }
    s.split(',')
        .map(|w| {
            Via::named(w.trim()).ok_or_else(|| {
                let all: Vec<&str> = Via::ALL.iter().map(|v| v.name()).collect();
                format!("`{w}` is not a way in: give some of {} (comma-separated), or none", all.join(", "))
            })
        })
        .collect::<std::result::Result<_, _>>()
        .map(Ways)
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
