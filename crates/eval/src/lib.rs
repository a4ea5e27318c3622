//! The evaluation and measurement tools behind `eval`, `neardup-eval`, `quote-eval`,
//! `bench` and `bench-daemon`.

pub mod arrival;
pub mod bench;
pub mod daemon;
pub mod endtoend;
pub mod fill;
pub mod neardup;
pub mod origin;
pub mod planted;
pub mod quote;
mod report;
mod tally;

use textorigin_core::config::ConfigError;
use textorigin_store::error::IoError;
use textorigin_store::input::InputError;
use textorigin_store::storage::datadir::DataDirError;
use textorigin_store::storage::store::StoreError;
use textorigin_store::storage::table_file::TableError;

/// Why an evaluation or measurement could not run.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error(transparent)]
    Io(#[from] IoError),
    #[error(transparent)]
    DataDir(#[from] DataDirError),
    #[error(transparent)]
    Ingest(#[from] textorigin_store::ingest::IngestError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Table(#[from] TableError),
    #[error(transparent)]
    Checkpoint(#[from] textorigin_store::storage::checkpoint::CheckpointError),
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// The corpus does not allow the measurement.
    #[error("{0}")]
    Corpus(String),
    /// The daemon under measurement misbehaved.
    #[error("{0}")]
    Daemon(String),
}

/// The result of the evaluation tools.
pub type Result<T> = std::result::Result<T, EvalError>;
