//! Exact copies: the first document of each token sequence, and the documents answered
//! as exact copies of an earlier one. A document whose terms equal an earlier stored
//! document's (`textorigin_core::text::tokens_hash`: case, punctuation and spacing
//! aside) is not analysed again (`crate::storage::datadir`'s analysis): every token is
//! copied from that document, and it adds nothing to the table or the derived indexes.
//! The records are what a later document finds its earlier copy by, and what a replay
//! of the copy (recovery, `rebuild`) needs to do as its analysis did.

use rocksdb::WriteBatch;

use super::codec::{decode_with_tail, encode};
use super::table::Value;
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
    /// An exact copy of this earlier document; with the hash of its tokens where it
    /// is that document's first copy with near-duplicates on: its batch gives the
    /// document's record the near-duplicate keys it computed ([`FirstHolder`]).
    CopyOf(u64, Option<u128>),
}

/// The first stored document of a token sequence, as its later exact copies read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstHolder {
    pub seq: u64,
    /// Its near-duplicate index keys (`textorigin_core::index::nd_keys`), a copy's too
    /// (the same tokens), written by its first copy, which sketched itself: later copies
    /// are indexed without a sketch of their own. None until a first copy (most texts
    /// have none: the keys are kept only where they save work), where near-duplicates
    /// are off, and in records of the build that made schema 28.
    pub nd_keys: Option<Vec<u64>>,
}

/// The values of `tokens`: the version byte, the first holder's sequence number
/// (postcard u64), then, where it has them, its keys (postcard `Vec<u64>`): the build
/// that made schema 28 reads the number and ignores what follows (postcard reads what
/// it needs), and its values read as without keys.
pub(super) struct FirstValue;

impl Value for FirstValue {
    type In = FirstHolder;
    type Out = FirstHolder;
    fn encode(first: &FirstHolder) -> Vec<u8> {
        let mut v = encode(&first.seq);
        if let Some(keys) = &first.nd_keys {
            v.extend(postcard::to_allocvec(keys).expect("postcard encoding of a vector cannot fail"));
        }
        v
    }
    fn decode(bytes: &[u8]) -> std::result::Result<FirstHolder, String> {
        let (seq, tail) = decode_with_tail::<u64>(bytes)?;
        let nd_keys = match tail.is_empty() {
            true => None,
            false => Some(postcard::from_bytes(tail).map_err(|e| format!("near-duplicate keys: {e}"))?),
        };
        Ok(FirstHolder { seq, nd_keys })
    }
}

/// The key of a token sequence's hash.
fn tokens_key(hash: u128) -> [u8; 16] {
    hash.to_be_bytes()
}

impl Store {
    /// The first stored document whose tokens hash to `hash`.
    pub fn first_with_tokens(&self, hash: u128) -> Result<Option<FirstHolder>> {
        self.read(CF_TOKENS, &tokens_key(hash)[..])
    }

    /// The earlier document that document `seq` is an exact copy of, if it is one.
    pub fn copy_of(&self, seq: u64) -> Result<Option<u64>> {
        self.read(CF_COPY_OF, &seq)
    }

    /// Adds document `seq`'s exact-copy record to a batch; a first copy's
    /// near-duplicate index keys `nd_keys` go into its earlier document's record.
    pub(crate) fn add_exact(&self, b: &mut WriteBatch, seq: u64, exact: Exact, nd_keys: Option<&[u64]>) {
        match exact {
            Exact::Unrecorded => {}
            Exact::First(hash) => self.put(b, CF_TOKENS, &tokens_key(hash)[..], &FirstHolder { seq, nd_keys: None }),
            Exact::CopyOf(of, first_copy) => {
                self.put(b, CF_COPY_OF, &seq, &of);
                if let (Some(hash), Some(keys)) = (first_copy, nd_keys) {
                    let first = FirstHolder { seq: of, nd_keys: Some(keys.to_vec()) };
                    self.put(b, CF_TOKENS, &tokens_key(hash)[..], &first);
                }
            }
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
        s.add_exact(&mut b, 1, Exact::First(u128::MAX), Some(&[9]));
        s.add_exact(&mut b, 2, Exact::First(7), None);
        s.write(b, false).unwrap();
        let first = |seq, keys: Option<Vec<u64>>| Some(FirstHolder { seq, nd_keys: keys });
        assert_eq!(s.first_with_tokens(u128::MAX).unwrap(), first(1, None), "no keys before a first copy");
        assert_eq!(s.first_with_tokens(7).unwrap(), first(2, None));
        // The first copy gives its earlier document's record its keys; a later copy
        // leaves it as it is.
        let mut b = WriteBatch::default();
        s.add_exact(&mut b, 3, Exact::CopyOf(2, Some(7)), Some(&[5, u64::MAX]));
        s.add_exact(&mut b, 4, Exact::CopyOf(1, None), Some(&[6]));
        s.add_exact(&mut b, 5, Exact::Unrecorded, None);
        s.write(b, false).unwrap();
        assert_eq!(s.first_with_tokens(7).unwrap(), first(2, Some(vec![5, u64::MAX])));
        assert_eq!(s.first_with_tokens(u128::MAX).unwrap(), first(1, None));
        assert_eq!(s.first_with_tokens(8).unwrap(), None);
        assert_eq!((s.copy_of(3).unwrap(), s.copy_of(2).unwrap(), s.copy_of(5).unwrap()), (Some(2), None, None));
        s.clear_exact().unwrap();
        assert_eq!((s.first_with_tokens(u128::MAX).unwrap(), s.first_with_tokens(7).unwrap()), (None, None));
        assert_eq!(s.copy_of(3).unwrap(), None);
    }

    /// A record of the build that made schema 28 (the version byte and the number
    /// alone) reads as without keys, and that build's decoding (a postcard u64) reads
    /// this one's number.
    #[test]
    fn records_with_and_without_keys_read_both_ways() {
        let old = encode(&9u64);
        assert_eq!(FirstValue::decode(&old).unwrap(), FirstHolder { seq: 9, nd_keys: None });
        let new = FirstValue::encode(&FirstHolder { seq: 9, nd_keys: Some(vec![1, 2, 3]) });
        assert_eq!(super::super::codec::decode::<u64>(&new).unwrap(), 9);
        assert_eq!(FirstValue::decode(&new).unwrap().nd_keys, Some(vec![1, 2, 3]));
        assert!(FirstValue::decode(&new[..new.len() - 1]).is_err(), "a cut record is an error");
    }
}
