//! The I/O error with what was being done, shared by the error enums of the modules
//! (each module has its own thiserror enum; `anyhow` is only in the command line).

use std::fmt::Display;

/// A failed file-system operation and what it was for.
#[derive(Debug, thiserror::Error)]
#[error("{what}")]
pub struct IoError {
    /// What was being done ("cannot create /x/y").
    pub what: String,
    /// The operating system's error.
    #[source]
    pub source: std::io::Error,
}

/// Adds what was being done to an `io::Result`.
pub trait IoContext<T> {
    /// The error says `what()`, with the I/O error as its source.
    fn io<D: Display>(self, what: impl FnOnce() -> D) -> Result<T, IoError>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn io<D: Display>(self, what: impl FnOnce() -> D) -> Result<T, IoError> {
        self.map_err(|source| IoError { what: what().to_string(), source })
    }
}

/// An error with its sources, `a: b: c` (for a log line or a message).
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        s += &format!(": {inner}");
        source = inner.source();
    }
    s
}
