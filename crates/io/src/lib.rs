//! textorigin's I/O: everything that touches the world, over the pure core.
//!
//! - [`storage`]: the table file (the mmap and its header) and its A/B checkpoints,
//!   the RocksDB store split by concern, and the data directory that keeps them
//!   consistent.
//! - [`input`]: the input formats (text, HTML, JSON, JSONL) and directory walking.
//! - [`daemon`]: `serve`, the spool intake with exactly-once admission and recovery.
//! - [`check`]: the invariant checker of a data directory.
//! - [`view`]: the typed view model of results, rendered as JSON, text and HTML.
//! - [`eval`]: the evaluation and measurement tools (origins, near-duplicates,
//!   quotations, throughput, the daemon).
//!
//! - [`sys`]: the only `unsafe` code (the mapping, preallocation, a prefetch hint).
//!
//! See `docs/ARCHITECTURE.md` for the map.

pub mod check;
pub mod daemon;
pub mod error;
pub mod eval;
pub mod http;
pub mod failpoint;
pub mod ingest;
pub mod input;
pub mod pipeline;
pub mod storage;
pub mod sys;
pub mod view;
