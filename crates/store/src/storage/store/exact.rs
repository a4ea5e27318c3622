//! Exact copies: the first document of each token sequence, and the documents answered
//! as exact copies of an earlier one. A document whose terms equal an earlier stored
//! document's (`textorigin_core::text::tokens_hash`: case, punctuation and spacing
//! aside) is not analysed again (`crate::storage::datadir`'s analysis): every token is
//! copied from that document, and it adds nothing to the table or the derived indexes.
//! The records are what a later document finds its earlier copy by, and what a replay
//! of the copy (recovery, `rebuild`) needs to do as its analysis did.

use rocksdb::WriteBatch;

use super::{Result, Store, CF_COPY_OF, CF_TOKENS};

/// What a document's batch writes of it in the exact-copy records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Exact {
    /// Nothing: no shingle, a deployment's document, or a token sequence an earlier
    /// document holds already while this one was analysed in full (published before
    /// it).
    #[default]
    Unrecorded,
    /// The first document with these tokens (their hash): later exact copies find it.
    First(u128),
    /// An exact copy of this earlier document.
    CopyOf(u64),
}

/// The key of a token sequence's hash.
fn tokens_key(hash: u128) -> [u8; 16] {
    hash.to_be_bytes()
}

impl Store {
    /// The first stored document whose tokens hash to `hash`.
    pub fn first_with_tokens(&self, hash: u128) -> Result<Option<u64>> {
        self.read(CF_TOKENS, &tokens_key(hash)[..])
    }

    /// The earlier document that document `seq` is an exact copy of, if it is one.
    pub fn copy_of(&self, seq: u64) -> Result<Option<u64>> {
        self.read(CF_COPY_OF, &seq)
    }

    /// Adds document `seq`'s exact-copy record to a batch.
    pub(crate) fn add_exact(&self, b: &mut WriteBatch, seq: u64, exact: Exact) {
        match exact {
            Exact::Unrecorded => {}
            Exact::First(hash) => self.put(b, CF_TOKENS, &tokens_key(hash)[..], &seq),
            Exact::CopyOf(of) => self.put(b, CF_COPY_OF, &seq, &of),
        }
    }

    /// Deletes every exact-copy record, before a re-analysis writes them anew in order.
    pub fn clear_exact(&self) -> Result<()> {
        let mut b = WriteBatch::default();
        self.delete_range(&mut b, CF_TOKENS, &[0u8; 16][..], &[0xffu8; 17][..]);
        self.delete_range(&mut b, CF_COPY_OF, &0, &u64::MAX);
        self.write(b, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_document_of_a_token_sequence_and_its_copies_are_found_and_cleared() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        let mut b = WriteBatch::default();
        s.add_exact(&mut b, 1, Exact::First(u128::MAX));
        s.add_exact(&mut b, 2, Exact::First(7));
        s.add_exact(&mut b, 3, Exact::CopyOf(2));
        s.add_exact(&mut b, 4, Exact::Unrecorded);
        s.write(b, false).unwrap();
        assert_eq!(s.first_with_tokens(u128::MAX).unwrap(), Some(1));
        assert_eq!(s.first_with_tokens(7).unwrap(), Some(2));
        assert_eq!(s.first_with_tokens(8).unwrap(), None);
        assert_eq!((s.copy_of(3).unwrap(), s.copy_of(2).unwrap(), s.copy_of(4).unwrap()), (Some(2), None, None));
        s.clear_exact().unwrap();
        assert_eq!((s.first_with_tokens(u128::MAX).unwrap(), s.first_with_tokens(7).unwrap()), (None, None));
        assert_eq!(s.copy_of(3).unwrap(), None);
    }
}
