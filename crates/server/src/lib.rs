//! textorigin's daemon and what it shows, over the storage crate.
//!
//! - [`daemon`]: `serve`, the spool intake with exactly-once admission and recovery.
//! - [`budget`]: the bytes of text under analysis at once, shared by the intake and
//!   the HTTP queries.
//! - [`http`]: the daemon's HTTP inspector (`serve --http`).
//! - [`view`]: the typed view model of results, rendered as JSON, text, HTML and the
//!   Prometheus text format (the command line renders through it too).
//!
//! It never measures: the evaluation tools are `textorigin-eval`. See
//! `docs/ARCHITECTURE.md` for the map.

pub mod budget;
pub mod daemon;
pub mod http;
pub mod view;
