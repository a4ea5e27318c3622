//! The words a document's result is written in, shared by the engine that makes it and
//! the alignment that refines it (each imports them from here, neither from the
//! other): spans of tokens, copied blocks, a selected shingle's origin, and the
//! publication order key. [`crate::engine`] re-exports them with the result.

use serde::{Deserialize, Serialize};

use crate::estimate::How;

/// When a document was published, as an order key: (time, sequence number);
/// "earlier" everywhere (the origin a token takes, ties between origins, which entry
/// a document takes over) is the smaller key. [`by_arrival`] is arrival order.
pub type When<'a> = &'a dyn Fn(u64) -> (i64, u64);

/// Arrival order: every document published when it arrived (the engine without dates).
pub fn by_arrival(seq: u64) -> (i64, u64) {
    (0, seq)
}

/// A selected shingle and its estimated origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShingleOrigin {
    pub start_token: u32,
    pub end_token: u32,
    pub origin: u64,
    pub how: How,
}

/// A span of tokens, with its byte span in the stored text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    pub start_token: u32,
    /// Exclusive.
    pub end_token: u32,
    pub start_byte: u32,
    /// Exclusive.
    pub end_byte: u32,
}

/// A copied block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    pub span: Span,
    pub origin: u64,
    /// Selected shingles in the block.
    pub shingles: u32,
}
