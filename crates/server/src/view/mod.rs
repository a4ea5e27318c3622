//! The inspector's views: a document's results, the list, the statistics, the export,
//! near-duplicates, quotations and the `check` report.
//!
//! [`model`] builds `Serialize` structs from the store: they are the JSON interface
//! (`docs/ARCHITECTURE.md` lists the fields). [`text`] and [`html`] render the same
//! structs for people. Everything here reads; nothing writes. Output is deterministic:
//! wall-clock times appear only when asked for.

pub mod compare;
mod copied_by;
pub mod dedup;
pub mod html;
pub mod model;
pub mod prometheus;
pub mod report;
pub mod text;

pub use model::{DocParts, DocumentView, ViewError, ViewOptions};
