//! What a partition of a sharded deployment (`docs/SCALE-OUT.md`,
//! "Partitions") keeps of the documents the other partitions own, in its own store
//! (schema 19, column family `book`): every document's place in publication order, the
//! others' current results, every document's copier edges, and how far the book has
//! read the log. Its memory holds only what came since its last write
//! ([`Store::write_book`]): a partition's memory no longer grows with the log, and its
//! restart reads the log from where its book stopped, not from the first document.
//!
//! Keys: `t` + document (big-endian) → its time (little-endian); `r` + document → its
//! result (the results' codec); `c` + origin + copier → nothing; `s` → the
//! [`BookState`]. Every write is one batch with the state: after a crash the book is
//! as it was after one of its writes, and everything in it is a function of the log.

use rocksdb::{Direction, IteratorMode, WriteBatch};
use serde::{Deserialize, Serialize};
use textorigin_core::engine::DocResult;

use super::codec::seq_key;
use super::table::{Empty, Postcard, ResultValue};
use super::{Result, Store, CF_BOOK};

/// How far a partition's book has read the log.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BookState {
    /// The last document whose place it knows (every one before it too).
    pub known: u64,
    /// The last document whose outcome it applied (every one before it too).
    pub applied: u64,
    /// The latest place known, and the last document published before one that
    /// arrived before it.
    pub latest: i64,
    pub back_dated: u64,
}

/// What a book writes at once: what it learnt since its last write, and its state.
#[derive(Debug, Clone, Default)]
pub struct BookWrite {
    /// Documents `from`, `from + 1`, ...: their places.
    pub from: u64,
    pub times: Vec<i64>,
    /// Other partitions' documents' results (first or revised: the current one).
    pub results: Vec<(u64, DocResult)>,
    /// (origin, copier) edges.
    pub copiers: Vec<(u64, u64)>,
    pub state: BookState,
}

const STATE: &[u8] = b"s";

fn key(tag: u8, seq: u64) -> [u8; 9] {
    let mut k = [tag; 9];
    k[1..].copy_from_slice(&seq_key(seq));
    k
}

impl Store {
    /// The book's state, none before its first write.
    pub fn book_state(&self) -> Result<Option<BookState>> {
        self.read(CF_BOOK.records::<Postcard<BookState>>(), STATE)
    }

    /// Writes what the book learnt, with its state, in one batch (not synced: a crash
    /// leaves the book as after an earlier write, and it reads the log again from
    /// there).
    pub fn write_book(&self, w: &BookWrite) -> Result<()> {
        let mut b = WriteBatch::default();
        for (seq, t) in (w.from..).zip(&w.times) {
            self.put(&mut b, CF_BOOK, &key(b't', seq), &t.to_le_bytes());
        }
        for (seq, r) in &w.results {
            self.put(&mut b, CF_BOOK.records::<ResultValue>(), &key(b'r', *seq), r);
        }
        for &(origin, copier) in &w.copiers {
            let mut k = [0u8; 17];
            k[..9].copy_from_slice(&key(b'c', origin));
            k[9..].copy_from_slice(&seq_key(copier));
            self.put(&mut b, CF_BOOK, &k, &[]);
        }
        self.put(&mut b, CF_BOOK.records::<Postcard<BookState>>(), STATE, &w.state);
        self.write(b, false)
    }

    /// Document `seq`'s place as the book wrote it.
    pub(super) fn book_time(&self, seq: u64) -> Result<Option<i64>> {
        let v = self.read(CF_BOOK, &key(b't', seq))?;
        Ok(v.and_then(|v| <[u8; 8]>::try_from(v.as_slice()).ok()).map(i64::from_le_bytes))
    }

    /// Another partition's document `seq`'s result as the book wrote it.
    pub(super) fn book_result(&self, seq: u64) -> Result<Option<DocResult>> {
        self.read(CF_BOOK.records::<ResultValue>(), &key(b'r', seq))
    }

    /// The copiers of `origin` the book wrote, ascending.
    pub(super) fn book_copiers(&self, origin: u64) -> Result<Vec<u64>> {
        let prefix = key(b'c', origin);
        let mut out = Vec::new();
        let mode = IteratorMode::From(&prefix, Direction::Forward);
        for item in self.scan(CF_BOOK.records::<Empty>(), mode) {
            let (k, ()) = item?;
            if !k.starts_with(&prefix) {
                break;
            }
            if let Ok(copier) = <[u8; 8]>::try_from(&k[9..]) {
                out.push(u64::from_be_bytes(copier));
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_book_reads_back_what_it_wrote_and_its_state() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(store.book_state().unwrap(), None);
        let r = DocResult { tokens: 7, ..DocResult::default() };
        let state = BookState { known: 4, applied: 2, latest: 30, back_dated: 3 };
        let w = BookWrite {
            from: 2,
            times: vec![10, 30, 20],
            results: vec![(2, r.clone())],
            copiers: vec![(1, 3), (1, 2), (2, 4)],
            state,
        };
        store.write_book(&w).unwrap();
        assert_eq!(store.book_state().unwrap(), Some(state));
        let times: Vec<_> = (1..=5).map(|s| store.book_time(s).unwrap()).collect();
        assert_eq!(times, [None, Some(10), Some(30), Some(20), None]);
        assert_eq!(store.book_result(2).unwrap(), Some(r));
        assert_eq!(store.book_result(3).unwrap(), None);
        assert_eq!(store.book_copiers(1).unwrap(), [2, 3]);
        assert_eq!(store.book_copiers(2).unwrap(), [4]);
        assert!(store.book_copiers(3).unwrap().is_empty());
    }
}
