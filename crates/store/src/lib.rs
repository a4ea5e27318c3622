//! textorigin's storage, over the pure core: everything a data directory is made of
//! and every way documents get into one.
//!
//! - [`storage`]: the table file (the mmap and its header) and its A/B checkpoints,
//!   the RocksDB store split by concern, and the data directory that keeps them
//!   consistent.
//! - [`input`]: the input formats (text, HTML, JSON, JSONL, standard input) and
//!   directory walking.
//! - [`ingest`]: batch ingestion through the [`pipeline`] (ordered parallel work).
//! - [`intake`]: what a data directory refuses of a document, checked in one place.
//! - [`check`]: the invariant checker of a data directory.
//! - [`telemetry`]: seconds per ingestion stage and per-document latency histograms.
//! - [`failpoint`]: fault injection at named steps (the crash tests).
//! - [`error`]: I/O errors with their context.
//! - [`clock`]: the wall clock, read in one place.
//! - [`sys`]: the only `unsafe` code (the mapping, preallocation, a prefetch hint).
//!
//! Nothing here serves, renders or measures: the daemon and the views are
//! `textorigin-server`, the evaluation tools `textorigin-eval`. See
//! `docs/ARCHITECTURE.md` for the map.

pub mod check;
pub mod clock;
pub mod error;
pub mod failpoint;
pub mod ingest;
pub mod input;
pub mod intake;
pub mod pipeline;
pub mod storage;
pub mod sys;
pub mod telemetry;
