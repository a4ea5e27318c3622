//! Why a data directory operation failed ([`DataDirError`]; why one document was not
//! applied, the document's fault, is [`DocError`]).

use std::path::PathBuf;

use crate::error::IoError;
use crate::intake::DocError;
use crate::storage::checkpoint::CheckpointError;
use crate::storage::stage::StageError;
use crate::storage::store::StoreError;
use crate::storage::table_file::TableError;
use textorigin_core::config::ConfigError;
use textorigin_core::index;

/// Errors of a data directory.
#[derive(Debug, thiserror::Error)]
pub enum DataDirError {
    #[error(transparent)]
    Doc(#[from] DocError),
    #[error(transparent)]
    Io(#[from] IoError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Table(#[from] TableError),
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("turning origins, origin propagation, alignment, near-duplicates, quotations or exact copies on or off changes the stored results: add --reanalyse")]
    NeedsReanalysis,
    #[error("{feature} are {} in data directory {}; turning them {} changes the stored results:\n  textorigin rebuild --data {} --reanalyse --{flag} {}", on_off(!*on), dir.display(), on_off(*on), dir.display(), on_off(*on))]
    FeatureSwitch { dir: PathBuf, feature: &'static str, flag: &'static str, on: bool },
    #[error("{0}")]
    InvalidParams(String),
    #[error(transparent)]
    IndexSize(#[from] index::IndexTooSmall),
    #[error("data directory {} was created with other parameters.\n  stored:    {stored}\n  requested: {requested}\nOmit the differing options or use a new data directory", dir.display())]
    ConfigDiffers { dir: PathBuf, stored: String, requested: String },
    #[error("data directory {} was created with other {what} parameters.\n  stored:    {stored}\n  requested: {requested}", dir.display())]
    ParamsDiffer { dir: PathBuf, what: &'static str, stored: String, requested: String },
    #[error("data directory {} has no configuration yet", .0.display())]
    NoConfig(PathBuf),
    #[error("table file {} is missing but the store holds documents; run `textorigin rebuild`", .0.display())]
    TableMissing(PathBuf),
    #[error("data directory {} holds documents: a sharded deployment's aggregator starts from an empty one", .0.display())]
    NotEmpty(PathBuf),
    #[error("table {} has applied documents up to #{table_last} but the store has them up to #{store_last}; run `textorigin rebuild --data {}`", table.display(), dir.display())]
    OutOfStep { table: PathBuf, table_last: u64, store_last: u64, dir: PathBuf },
    #[error("text of document #{0} is missing")]
    MissingText(u64),
    #[error("document #{0} has no stage record (stored by a build before schema 18?): a partition restarts from them")]
    MissingRecord(u64),
    #[error("checkpoint table holds #{found} but its meta says #{meta}")]
    CheckpointSeq { found: u64, meta: u64 },
    #[error("a store write or read failed after the table applied a document; the table must be recovered first")]
    Poisoned,
    #[error("recovery stopped before its end (a stop was asked for); the next start resumes it")]
    Interrupted,
    #[error("not closing the table cleanly: a store write or read failed after it applied a document (the next start recovers it)")]
    PoisonedClose,
    #[error("data directory {} is a sharded deployment's aggregator (see its file `cluster`): only `textorigin cluster aggregate` writes to it; the reading commands work as usual", .0.display())]
    Aggregator(PathBuf),
    #[error("{} exists: a backup or a restore writes a new directory (move it away, or name another)", .0.display())]
    Exists(PathBuf),
    #[error("{} is not a textorigin backup (its {}): {reason}", path.display(), crate::storage::datadir::backup::MANIFEST)]
    NotABackup { path: PathBuf, reason: String },
    #[error("data directory {} is a sharded deployment's: `backup` copies a single node's data directory (back up the aggregator's with the deployment stopped, as files)", .0.display())]
    ShardedBackup(PathBuf),
    #[error("the table's phases failed: {0}")]
    Stage(StageError),
    #[error("{doc}: cannot store document #{seq}")]
    StoreWrite {
        doc: String,
        seq: u64,
        #[source]
        source: StoreError,
    },
}

fn on_off(on: bool) -> &'static str {
    if on {
        "on"
    } else {
        "off"
    }
}
