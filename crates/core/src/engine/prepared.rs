//! A document prepared for the table's phases, as a value every phase takes: the engine
//! keeps no current document.

use crate::select::{kept, Item};
use crate::table::bucket_of;
use crate::text::Token;

use super::ShardItem;

/// A document's tokens and selected shingles ([`super::Engine::prepare`]), kept at a
/// density threshold ([`Prepared::at_density`]; with an adaptive density a document
/// is prepared with every extra shingle and its rank, threshold 0).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prepared {
    tokens: Vec<Token>,
    items: Vec<Item>,
    density: u8,
    /// Every k-shingle's fingerprint, as the selection computed them (none where it
    /// did not: origins off, a selection by segments).
    shingles: Vec<u64>,
}

impl Prepared {
    /// Tokens and selected items as [`super::Engine::prepare`] makes them, kept at
    /// threshold `density`.
    pub(super) fn new(tokens: Vec<Token>, items: Vec<Item>, density: u8, shingles: Vec<u64>) -> Prepared {
        Prepared { tokens, items, density, shingles }
    }

    pub fn tokens(&self) -> &[Token] {
        &self.tokens
    }

    /// Its selected shingles at its threshold.
    pub fn items(&self) -> &[Item] {
        &self.items
    }

    /// The same tokens with no shingle selected: what the table's phases take of an
    /// exact copy ([`super::Engine::exact_copy`]): they touch no entry, and the table's
    /// counters of applied documents move on as for any document.
    pub fn without_shingles(&self) -> Prepared {
        Prepared { tokens: self.tokens.clone(), items: Vec::new(), density: self.density, shingles: Vec::new() }
    }

    /// Every k-shingle's fingerprint in order, where the selection computed them (else
    /// none): what alignment would compute again on the thread that applies documents.
    pub fn shingles(&self) -> &[u64] {
        &self.shingles
    }

    /// How many shingles are selected.
    pub fn selected(&self) -> usize {
        self.items.len()
    }

    /// The threshold its items are kept at.
    pub fn density(&self) -> u8 {
        self.density
    }

    /// Keeps the shingles that threshold `t` selects (the table's,
    /// [`crate::table::Table::density`]; a stored document's own,
    /// [`super::DocResult::density`]). A threshold below the one already applied keeps
    /// what is there.
    pub fn at_density(&mut self, t: u8) {
        if t > self.density {
            self.items.retain(|it| kept(it.rank, t));
            self.density = t;
        }
    }

    /// Its selected shingles whose bucket, in a table of `buckets` buckets, `owns`
    /// accepts (a shard's range): what [`super::Engine::probe_where`] probes.
    pub fn items_where(&self, buckets: u64, owns: impl Fn(u64) -> bool) -> Vec<ShardItem> {
        ShardItem::all_of(&self.items).into_iter().filter(|it| owns(bucket_of(it.fp, buckets))).collect()
    }
}
