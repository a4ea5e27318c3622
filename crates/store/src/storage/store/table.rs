//! Typed column families, as redb's table definitions are: a [`Table`] names a column
//! family with the type of its keys ([`Key`]) and the codec of its values ([`Value`]),
//! so that every record of a kind is written and read through one pair of functions
//! ([`Store::read`], [`Store::put`], [`Store::pairs`], [`Store::scan`]) instead of
//! each call site encoding bytes. The tables themselves are declared in `schema.rs`.
//! A column family that holds records of several kinds (`meta`, `admitted`, `book`)
//! is a table of byte keys and raw values, read by the typed functions of its module.

use std::marker::PhantomData;

use rocksdb::{IteratorMode, WriteBatch};
use serde::de::DeserializeOwned;
use serde::Serialize;
use textorigin_core::engine::DocResult;

use super::codec::{self, pair_key, seq_key};
use super::{Result, Store, StoreError};

/// A column family whose keys are `K` and whose values are written and read by `V`.
pub(crate) struct Table<K: ?Sized, V> {
    pub(crate) name: &'static str,
    types: PhantomData<fn(&K, V)>,
}

impl<K: ?Sized, V> Table<K, V> {
    pub(crate) const fn new(name: &'static str) -> Self {
        Table { name, types: PhantomData }
    }
}

impl<K: ?Sized, V> Table<K, V> {
    /// The records of this column family whose values `W` reads (of a column family
    /// that holds records of several kinds, one kind).
    pub(crate) const fn records<W>(self) -> Table<K, W> {
        Table::new(self.name)
    }
}

impl<K: ?Sized, V> Clone for Table<K, V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K: ?Sized, V> Copy for Table<K, V> {}

/// The bytes of a key.
pub(crate) trait Key {
    fn bytes(&self) -> impl AsRef<[u8]>;
}

/// A document: its sequence number, big-endian.
impl Key for u64 {
    fn bytes(&self) -> impl AsRef<[u8]> {
        seq_key(*self)
    }
}

/// Two documents ([`codec::pair_key`]): a prefix scan on the first finds its pairs.
impl Key for (u64, u64) {
    fn bytes(&self) -> impl AsRef<[u8]> {
        pair_key(self.0, self.1)
    }
}

/// A document's sentence: its sequence number, then the sentence's index (u32 BE).
impl Key for (u64, u32) {
    fn bytes(&self) -> impl AsRef<[u8]> {
        let mut k = [0u8; 12];
        k[..8].copy_from_slice(&seq_key(self.0));
        k[8..].copy_from_slice(&self.1.to_be_bytes());
        k
    }
}

/// A key its module makes (a column family of several kinds of records, or of names).
impl Key for [u8] {
    fn bytes(&self) -> impl AsRef<[u8]> {
        self
    }
}

/// How the values of a table are written and read.
pub(crate) trait Value {
    /// What is written.
    type In: ?Sized;
    /// What is read.
    type Out;
    fn encode(v: &Self::In) -> Vec<u8>;
    fn decode(bytes: &[u8]) -> std::result::Result<Self::Out, String>;
}

/// A version byte, then postcard ([`codec::encode`]).
pub(crate) struct Postcard<T>(PhantomData<T>);

impl<T: Serialize + DeserializeOwned> Value for Postcard<T> {
    type In = T;
    type Out = T;
    fn encode(v: &T) -> Vec<u8> {
        codec::encode(v)
    }
    fn decode(bytes: &[u8]) -> std::result::Result<T, String> {
        codec::decode(bytes)
    }
}

/// A version byte, then UTF-8 ([`codec::encode_text`]).
pub(crate) struct Text;

impl Value for Text {
    type In = str;
    type Out = String;
    fn encode(v: &str) -> Vec<u8> {
        codec::encode_text(v)
    }
    fn decode(bytes: &[u8]) -> std::result::Result<String, String> {
        codec::decode_text(bytes)
    }
}

/// A document's result with the tail later schemas added ([`codec::encode_result`]).
pub(crate) struct ResultValue;

impl Value for ResultValue {
    type In = DocResult;
    type Out = DocResult;
    fn encode(v: &DocResult) -> Vec<u8> {
        codec::encode_result(v)
    }
    fn decode(bytes: &[u8]) -> std::result::Result<DocResult, String> {
        codec::decode_result(bytes)
    }
}

/// No value: the key says it all.
pub(crate) struct Empty;

impl Value for Empty {
    type In = ();
    type Out = ();
    fn encode(_: &()) -> Vec<u8> {
        Vec::new()
    }
    fn decode(_: &[u8]) -> std::result::Result<(), String> {
        Ok(())
    }
}

/// Bytes its module reads (records of several kinds, or a stage's own record).
pub(crate) struct Raw;

impl Value for Raw {
    type In = [u8];
    type Out = Vec<u8>;
    fn encode(v: &[u8]) -> Vec<u8> {
        v.to_vec()
    }
    fn decode(bytes: &[u8]) -> std::result::Result<Vec<u8>, String> {
        Ok(bytes.to_vec())
    }
}

impl Store {
    /// The value of `key` in `t` (in a read of partitions, from the partition that owns
    /// what the key is about).
    pub(crate) fn read<K: Key + ?Sized, V: Value>(&self, t: Table<K, V>, key: &K) -> Result<Option<V::Out>> {
        let k = key.bytes();
        let Some(bytes) = self.get(t.name, k.as_ref())? else { return Ok(None) };
        self.decode_value::<V>(t.name, k.as_ref(), &bytes).map(Some)
    }

    /// Adds `key` → `value` of `t` to a batch.
    pub(crate) fn put<K: Key + ?Sized, V: Value>(&self, b: &mut WriteBatch, t: Table<K, V>, key: &K, value: &V::In) {
        b.put_cf(self.cf(t.name), key.bytes(), V::encode(value));
    }

    /// Adds the deletion of `key` of `t` to a batch.
    pub(crate) fn delete<K: Key + ?Sized, V>(&self, b: &mut WriteBatch, t: Table<K, V>, key: &K) {
        b.delete_cf(self.cf(t.name), key.bytes());
    }

    /// Adds the deletion of the keys of `t` from `from` on, before `to`, to a batch.
    pub(crate) fn delete_range<K: Key + ?Sized, V>(&self, b: &mut WriteBatch, t: Table<K, V>, from: &K, to: &K) {
        b.delete_range_cf(self.cf(t.name), from.bytes(), to.bytes());
    }

    /// The records of `t` from `mode` on, as (key, value), this store's only.
    pub(crate) fn scan<'a, K: ?Sized, V: Value>(
        &'a self,
        t: Table<K, V>,
        mode: IteratorMode<'_>,
    ) -> impl Iterator<Item = Result<(Box<[u8]>, V::Out)>> + 'a {
        self.db.iterator_cf(self.cf(t.name), mode).map(move |item| {
            let (k, v) = item.map_err(self.db_err())?;
            let value = self.decode_value::<V>(t.name, &k, &v)?;
            Ok((k, value))
        })
    }

    /// (second document, value) of the pairs of `t` whose first document is `first`,
    /// by the second; in a read of partitions, every partition's, merged.
    pub(crate) fn pairs<V: Value>(&self, t: Table<(u64, u64), V>, first: u64) -> Result<Vec<(u64, V::Out)>> {
        self.first_pairs(t, first, usize::MAX)
    }

    /// [`Store::pairs`], the first `limit` of them (by the second number).
    pub(crate) fn first_pairs<V: Value>(
        &self,
        t: Table<(u64, u64), V>,
        first: u64,
        limit: usize,
    ) -> Result<Vec<(u64, V::Out)>> {
        let decode =
            |(second, v): (u64, Vec<u8>)| Ok((second, self.decode_value::<V>(t.name, &pair_key(first, second), &v)?));
        self.pairs_raw(t.name, first, limit)?.into_iter().map(decode).collect()
    }

    /// The bytes of `key` in column family `cf`, from the store that holds it.
    fn get(&self, cf: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let s = self.holder(cf, key);
        s.db.get_cf(s.cf(cf), key).map_err(s.db_err())
    }

    /// The value of `key` of column family `name` decoded by `V`, its failure a corrupt
    /// record (named by its column family and key).
    pub(super) fn decode_value<V: Value>(&self, name: &str, key: &[u8], bytes: &[u8]) -> Result<V::Out> {
        V::decode(bytes).map_err(|reason| StoreError::Corrupt {
            path: self.path.clone(),
            what: format!("`{name}` key `{}`", key.escape_ascii()),
            reason,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::store::{CF_ND_LATE, CF_ND_LATER, CF_Q_SENT, CF_RESULTS, CF_TEXT};
    use textorigin_core::neardup::NearDup;

    #[test]
    fn keys_keep_the_byte_order_of_the_sequence_numbers() {
        assert_eq!(7u64.bytes().as_ref(), &7u64.to_be_bytes());
        assert_eq!((1u64, 2u64).bytes().as_ref(), &pair_key(1, 2));
        let sentence = (3u64, 258u32).bytes();
        assert_eq!(sentence.as_ref(), &[0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 1, 2]);
        // Sentences sort by document, then index; pairs by first, then second.
        assert!((3u64, u32::MAX).bytes().as_ref() < (4u64, 0u32).bytes().as_ref());
        assert!((1u64, u64::MAX).bytes().as_ref() < (2u64, 0u64).bytes().as_ref());
    }

    /// A document's pairs read a limited number at a time stop there, the first by the
    /// second number, and read no other document's (an exact copy of a text copied
    /// thousands of times reads its earliest pairs only).
    #[test]
    fn the_first_pairs_of_a_document_are_read_up_to_a_limit() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        let pair = |seq| NearDup {
            seq,
            exact: true,
            b_similarity: 6,
            c_similarity: 384,
            resemblance: 1.0,
            b: true,
            c: true,
            combined: true,
            default: true,
        };
        let mut b = WriteBatch::default();
        for later in [12, 10, 11, 13] {
            s.put(&mut b, CF_ND_LATER, &(4, later), &pair(later));
        }
        s.put(&mut b, CF_ND_LATER, &(5, 6), &pair(6));
        s.put(&mut b, CF_ND_LATE, &(4, 2), &pair(2));
        s.write(b, true).unwrap();
        let seqs = |limit| s.near_dup_pairs(4, limit).unwrap().iter().map(|d| d.seq).collect::<Vec<_>>();
        assert_eq!(seqs(2), [2, 10, 11]);
        assert_eq!(seqs(usize::MAX), [2, 10, 11, 12, 13]);
        assert_eq!(s.first_pairs(CF_ND_LATER, 5, 0).unwrap(), []);
    }

    #[test]
    fn a_record_reads_back_as_written_and_a_corrupt_one_names_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        let later = NearDup {
            seq: 9,
            exact: false,
            b_similarity: 3,
            c_similarity: 60,
            resemblance: 0.9,
            b: true,
            c: true,
            combined: true,
            default: true,
        };
        let result = DocResult { seq: 4, tokens: 12, density: Some(2), ..DocResult::default() };
        let mut b = WriteBatch::default();
        s.put(&mut b, CF_TEXT, &4, "héllo");
        s.put(&mut b, CF_RESULTS, &4, &result);
        s.put(&mut b, CF_ND_LATER, &(4, 9), &later);
        s.put(&mut b, CF_Q_SENT, &(4, 1), &(2, 5, vec![7, 8]));
        s.write(b, true).unwrap();
        assert_eq!(s.read(CF_TEXT, &4).unwrap().as_deref(), Some("héllo"));
        assert_eq!(s.read(CF_RESULTS, &4).unwrap(), Some(result));
        assert_eq!(s.pairs(CF_ND_LATER, 4).unwrap(), vec![(9, later)]);
        assert_eq!(s.read(CF_Q_SENT, &(4, 1)).unwrap(), Some((2, 5, vec![7, 8])));
        assert_eq!(s.read(CF_TEXT, &5).unwrap(), None);
        // The bytes are those of the codecs (what older builds read).
        assert_eq!(s.read(CF_TEXT.records::<Raw>(), &4).unwrap().unwrap(), codec::encode_text("héllo"));

        let mut b = WriteBatch::default();
        s.put(&mut b, CF_TEXT.records::<Raw>(), &5, &[9, b'x']);
        s.write(b, true).unwrap();
        let err = s.read(CF_TEXT, &5).unwrap_err().to_string();
        assert!(err.contains("`text` key `\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x05`"), "{err}");
        let mut b = WriteBatch::default();
        s.delete(&mut b, CF_TEXT, &5);
        s.delete_range(&mut b, CF_Q_SENT, &(4, 0), &(5, 0));
        s.write(b, true).unwrap();
        assert_eq!(s.read(CF_TEXT.records::<Raw>(), &5).unwrap(), None);
        assert_eq!(s.read(CF_Q_SENT, &(4, 1)).unwrap(), None);
    }
}
