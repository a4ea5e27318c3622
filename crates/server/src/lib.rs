//! textorigin's daemon and what it shows, over the storage crate.
//!
//! - [`daemon`]: `serve`, the spool intake with exactly-once admission and recovery.
//! - [`budget`]: the bytes of text under analysis at once, shared by the intake and
//!   the HTTP queries.
//! - [`http`]: the daemon's HTTP inspector (`serve --http`).
//! - [`view`]: the typed view model of results, rendered as JSON, text, HTML and the
//!   Prometheus text format (the command line renders through it too).
//!
//! - [`layout`], [`status`], [`share`]: what the daemon and the HTTP server share (the
//!   spool's directories, the status file, the open store), below both, so that
//!   `daemon`, `http` and `view` import downwards only.
//!
//! It never measures: the evaluation tools are `textorigin-eval`. See
//! `docs/ARCHITECTURE.md` for the map.

pub mod budget;
pub mod daemon;
pub mod http;
pub mod layout;
pub mod share;
pub mod status;
pub mod view;
