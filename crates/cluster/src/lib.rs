//! textorigin's sharded deployment (`docs/SCALE-OUT.md`): S shard workers hold the
//! table's bucket ranges ([`textorigin_core::shard`]), an aggregator runs estimation and
//! everything after it into the result store the inspector reads, and an existing log,
//! NATS JetStream, orders and keeps everything they exchange. Every process is a client
//! of the log and can be killed at any moment: it restarts from the log.
//!
//! - [`log`]: the log, a blocking facade over `async-nats` with exactly-once appends;
//!   [`auth`]: its users, one per process, and what each may publish.
//! - [`wire`]: the streams and their messages.
//! - [`deploy`]: a deployment's settings, creation, description, positions, trimming
//!   and status; [`mod@submit`]: admitting documents.
//! - [`worker`]: a shard worker, [`aggregate`]: the aggregator.

pub mod aggregate;
pub mod auth;
pub mod batch;
pub mod book;
pub mod deploy;
pub mod log;
pub mod searched;
pub mod submit;
pub mod wire;
pub mod worker;

use std::path::PathBuf;

use crate::log::LogError;
use crate::wire::WireError;

pub use deploy::{create, init, publish_position, read_meta, settle, status, trim, ProcessAt, Trimmed};
pub use submit::{submit, Submitted};

/// Errors of the deployment's processes.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error(transparent)]
    Log(#[from] LogError),
    #[error(transparent)]
    Wire(#[from] WireError),
    #[error(transparent)]
    Shard(#[from] textorigin_core::shard::ShardError),
    #[error(transparent)]
    DataDir(#[from] textorigin_store::storage::datadir::DataDirError),
    #[error(transparent)]
    Params(#[from] textorigin_core::table::ParamsError),
    #[error(transparent)]
    Checkpoint(#[from] textorigin_store::storage::checkpoint::CheckpointError),
    #[error(transparent)]
    Index(#[from] textorigin_core::index::IndexTooSmall),
    #[error("the sharded deployment {does}: omit `{setting}` or give `--{setting} {value}`")]
    Unsupported { setting: &'static str, does: &'static str, value: &'static str },
    #[error(
        "the sharded deployment raises the adaptive density at document ends: a density lag of 0 raises it within \
         a document, which no shard can follow; give `--density-lag` (TOML `density_lag`) of at least 1 (32 by \
         default), or `--density paper`"
    )]
    LagZero,
    #[error("the log has no deployment yet: run `textorigin cluster init` first")]
    NoMeta,
    #[error(
        "the log has no stream of the documents' admission keys (TXO_KEYS): the deployment was made by an earlier \
         build; run `textorigin cluster init` again with its settings, which adds the stream"
    )]
    NoKeys,
    #[error("the log's deployment differs from the one asked for.\n  in the log: {stored}\n  asked for:  {requested}")]
    MetaDiffers { stored: String, requested: String },
    #[error("{what} is out of step: expected document #{want}, got #{got}")]
    OutOfStep { what: &'static str, want: u64, got: u64 },
    #[error(
        "document #{seq}: shard {shard} selected its shingles at density threshold {got}, shard 0 at {want}: \
         the shards' tables disagree (a determinism bug, or shards of different deployments)"
    )]
    DensityDiffers { seq: u64, shard: u32, want: u8, got: u8 },
    #[error("shard {shard}: {source}")]
    File { shard: u32, source: std::io::Error },
    #[error("shard image {path}: {source}")]
    Image { path: PathBuf, source: std::io::Error },
    #[error("{what}: {source}")]
    Io { what: &'static str, source: std::io::Error },
    #[error("partition {partition}: the deployment has {partitions} partition(s)")]
    NoPartition { partition: u32, partitions: u32 },
    #[error(
        "document #{seq}'s outcome revises results, read on demand while document #{analysing} was analysed: \
         only a document published before an earlier arrival revises, and those are applied before"
    )]
    RevisedOnDemand { seq: u64, analysing: u64 },
    #[error(
        "document #{seq}: its text was trimmed from the documents stream and is not in partition {partition}'s store at {}: \
         `cluster trim` drops texts only when every partition can read the others' stores",
        path.display()
    )]
    TextGone { seq: u64, partition: u32, path: PathBuf },
}

pub(crate) type Result<T> = std::result::Result<T, ClusterError>;
