//! Revisions: who copied from whom, and the stored results that a document
//! published before their origins changed.
//!
//! - `copiers`: key origin (8 bytes, big-endian), copier (8): a document whose result
//!   names the origin for one of its selected shingles. Written with every result (a
//!   revision adds the revised result's); never removed (a superset is enough: a
//!   copier that no longer names the origin is re-analysed for nothing).
//! - `revisions`: key document (8), cause (8): the document's result before the
//!   arrival of `cause` changed it (postcard, behind a version byte). The stored result
//!   is always the current one; the first revision holds the result the document got
//!   when it was applied, whole, which recovery's replay reproduces; a later one holds
//!   only what the history shows of it (old tokens, dominant origin, copied
//!   blocks; the per-shingle origins, origin counts and novel segments left empty), so
//!   that a document revised again and again does not store its whole result each
//!   time. The format is the same, so every build reads both.
//! - the revision queue, in `meta` under `revise_queue/` + document (8):
//!   the cause (8). The documents a take-over would revise beyond its budget wait here,
//!   written in the causing document's batch; a document queued again (back-dated
//!   again) is one entry, with its newest cause: it is re-analysed once. An entry goes
//!   in the batch of its revision. No schema step: older builds never read these keys.

use rocksdb::WriteBatch;
use serde::{Deserialize, Serialize};
use textorigin_core::engine::DocResult;

use super::codec::{self, decode_made, decode_with_tail, encode, encode_made, push_result_tail, read_result_tail};
use super::table::{Raw, Value};
use super::{Result, Store, StoreError, CF_COPIERS, CF_META, CF_RESULTS, CF_REVISIONS};

/// The prefix of the revision queue's keys in `meta`.
const QUEUE: &[u8] = b"revise_queue/";

fn queue_key(seq: u64) -> Vec<u8> {
    [QUEUE, &seq.to_be_bytes()[..]].concat()
}

/// A partition's record of every revision a document made.
const MADE: &[u8] = b"revisions_made/";

fn made_key(cause: u64) -> Vec<u8> {
    [MADE, &cause.to_be_bytes()[..]].concat()
}

/// A stored result that changed: why, and what it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Revision {
    /// The document whose arrival changed it.
    pub cause: u64,
    /// The result before.
    pub before: DocResult,
}

/// What a document's arrival revised: the revisions made within its budget,
/// and the documents left for the revision queue.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Revisions {
    pub done: Vec<Revised>,
    pub queued: Vec<u64>,
    /// Of a partition's document: the revisions of other partitions'
    /// documents, which their owners store (recorded here with the others, for the
    /// document's outcome: [`Store::revisions_made_by`]).
    pub elsewhere: Vec<Revised>,
}

/// A revision to write with the document that caused it: the revised document, its new
/// result and its result before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revised {
    pub seq: u64,
    pub after: DocResult,
    pub before: DocResult,
}

impl Store {
    /// Adds the copier edges of `result` (document `seq`) to a batch.
    pub(crate) fn add_copiers(&self, b: &mut WriteBatch, seq: u64, result: &DocResult) {
        let mut origins: Vec<u64> = result.selected_origins.iter().map(|s| s.origin).filter(|&o| o != seq).collect();
        origins.sort_unstable();
        origins.dedup();
        for o in origins {
            self.put(b, CF_COPIERS, &(o, seq), &());
        }
    }

    /// Adds revisions caused by document `cause` to a batch: each revised document's new
    /// result, the record of its result before (whole for its first revision, what the
    /// history shows for a later one: see the module docs), and its new copier edges; a
    /// revised document leaves the revision queue.
    pub(super) fn add_revisions(&self, b: &mut WriteBatch, cause: u64, revised: &[Revised]) -> Result<()> {
        for r in revised {
            self.delete(b, CF_META, &queue_key(r.seq));
            self.put(b, CF_RESULTS, &r.seq, &r.after);
            let first = self.pairs(CF_REVISIONS.records::<Raw>(), r.seq)?.is_empty();
            let before = match first {
                true => r.before.clone(),
                false => DocResult {
                    origin_counts: Vec::new(),
                    novel_segments: Vec::new(),
                    selected_origins: Vec::new(),
                    ..r.before.clone()
                },
            };
            self.put(b, CF_REVISIONS, &(r.seq, cause), &Revision { cause, before });
            self.add_copiers(b, r.seq, &r.after);
        }
        Ok(())
    }

    /// Whether the revision of document `seq` by document `cause` is stored.
    pub(super) fn has_revision(&self, seq: u64, cause: u64) -> Result<bool> {
        Ok(self.read(CF_REVISIONS.records::<Raw>(), &(seq, cause))?.is_some())
    }

    /// Records, in a partition's store, every revision document `cause` made (its own
    /// documents' and the others'; none: nothing).
    pub(super) fn add_made(&self, b: &mut WriteBatch, cause: u64, revised: &Revisions) {
        if !self.partitioned() || (revised.done.is_empty() && revised.elsewhere.is_empty()) {
            return;
        }
        let all: Vec<(u64, &DocResult, &DocResult)> =
            revised.done.iter().chain(&revised.elsewhere).map(|r| (r.seq, &r.after, &r.before)).collect();
        self.put(b, CF_META, &made_key(cause), &encode_made(&all));
    }

    /// Every revision document `cause` made, as a partition recorded it.
    pub fn revisions_made_by(&self, cause: u64) -> Result<Vec<Revised>> {
        let Some(bytes) = self.read(CF_META.records::<Raw>(), &made_key(cause))? else { return Ok(Vec::new()) };
        let all = decode_made(&bytes).map_err(|reason| StoreError::Corrupt {
            path: self.path.clone(),
            what: format!("the revisions document #{cause} made"),
            reason,
        })?;
        Ok(all.into_iter().map(|(seq, after, before)| Revised { seq, after, before }).collect())
    }

    /// Drops every copier edge and revision, and the revision queue (`rebuild
    /// --reanalyse` writes them again).
    pub fn clear_revisions(&self) -> Result<()> {
        let mut b = WriteBatch::default();
        self.delete_range(&mut b, CF_COPIERS, &(0, 0), &(u64::MAX, u64::MAX));
        self.delete_range(&mut b, CF_REVISIONS, &(0, 0), &(u64::MAX, u64::MAX));
        self.delete_range(&mut b, CF_META, &queue_key(0), &[QUEUE, &[0xffu8; 9][..]].concat());
        self.write(b, false)
    }

    /// Adds documents to the revision queue, as revised by `cause` (see the module docs).
    pub(super) fn add_queued(&self, b: &mut WriteBatch, cause: u64, queued: &[u64]) {
        for &seq in queued {
            self.put(b, CF_META, &queue_key(seq), &cause.to_be_bytes());
        }
    }

    /// The revision queue: (document, cause), by document.
    pub fn queued(&self) -> Result<Vec<(u64, u64)>> {
        let mode = rocksdb::IteratorMode::From(QUEUE, rocksdb::Direction::Forward);
        let mut out = Vec::new();
        for item in self.scan(CF_META, mode) {
            let (k, v) = item?;
            let Some(seq) = k.strip_prefix(QUEUE) else { break };
            if let (Ok(seq), Ok(cause)) = (<[u8; 8]>::try_from(seq), <[u8; 8]>::try_from(&v[..])) {
                out.push((u64::from_be_bytes(seq), u64::from_be_bytes(cause)));
            }
        }
        Ok(out)
    }

    /// Documents waiting in the revision queue.
    pub fn queue_len(&self) -> Result<u64> {
        Ok(self.queued()?.len() as u64)
    }

    /// Writes the revisions of queued documents (each leaves the queue, revised or
    /// not: `drained`), caused by the causes they were queued with.
    pub fn put_drained(&self, revised: &[(u64, Revised)], drained: &[u64]) -> Result<()> {
        let mut b = WriteBatch::default();
        for &seq in drained {
            self.delete(&mut b, CF_META, &queue_key(seq));
        }
        for (cause, r) in revised {
            self.add_revisions(&mut b, *cause, std::slice::from_ref(r))?;
        }
        self.write(b, false)?;
        for (_, r) in revised {
            self.caches.origin_texts.remove(&r.seq);
        }
        Ok(())
    }

    /// The documents whose results named `origin` (ascending).
    pub fn copiers_of(&self, origin: u64) -> Result<Vec<u64>> {
        if let Some(e) = self.elsewhere.get() {
            let mut copiers = e.copiers_of(origin).map_err(|source| StoreError::Elsewhere { seq: origin, source })?;
            copiers.extend(self.book_copiers(origin)?);
            copiers.sort_unstable();
            copiers.dedup();
            return Ok(copiers);
        }
        Ok(self.pairs(CF_COPIERS, origin)?.into_iter().map(|(c, ())| c).collect())
    }

    /// The newest `limit` documents before `before` whose results named `origin`
    /// (ascending): read backwards from `before`, so an origin that thousands of
    /// documents copied costs `limit` keys, not thousands.
    pub fn copiers_before(&self, origin: u64, before: u64, limit: usize) -> Result<Vec<u64>> {
        if self.elsewhere.get().is_some() {
            let mut copiers = self.copiers_of(origin)?;
            copiers.retain(|&c| c < before);
            return Ok(copiers.split_off(copiers.len().saturating_sub(limit)));
        }
        let (prefix, from) = (codec::seq_key(origin), codec::pair_key(origin, before));
        let mut out = Vec::new();
        for s in std::iter::once(self).chain(self.siblings()) {
            let mode = rocksdb::IteratorMode::From(&from, rocksdb::Direction::Reverse);
            for item in s.db.iterator_cf(s.cf(CF_COPIERS.name), mode).take(limit + 1) {
                let (k, _) = item.map_err(s.db_err())?;
                match k.get(8..).and_then(|c| <[u8; 8]>::try_from(c).ok()) {
                    Some(c) if k.starts_with(&prefix) => out.push(u64::from_be_bytes(c)),
                    _ => break,
                }
            }
        }
        out.retain(|&c| c < before);
        out.sort_unstable();
        out.dedup();
        Ok(out.split_off(out.len().saturating_sub(limit)))
    }

    /// Document `seq`'s revisions, oldest first.
    pub fn revisions(&self, seq: u64) -> Result<Vec<Revision>> {
        Ok(self.pairs(CF_REVISIONS, seq)?.into_iter().map(|(_, r)| r).collect())
    }

    /// The result document `seq` got when it was applied: its first revision's before,
    /// else its stored result.
    pub fn first_result(&self, seq: u64) -> Result<Option<DocResult>> {
        match self.pairs(CF_REVISIONS, seq)?.into_iter().next() {
            Some((_, r)) => Ok(Some(r.before)),
            None => self.result(seq),
        }
    }
}

/// The values of `revisions`: a [`Revision`], then the result before's tail
/// (its density threshold and passages, behind it as behind a stored result).
pub(super) struct RevisionValue;

impl Value for RevisionValue {
    type In = Revision;
    type Out = Revision;
    fn encode(r: &Revision) -> Vec<u8> {
        let mut v = encode(r);
        push_result_tail(&mut v, &r.before);
        v
    }
    fn decode(bytes: &[u8]) -> std::result::Result<Revision, String> {
        let (mut r, tail) = decode_with_tail::<Revision>(bytes)?;
        read_result_tail(&mut r.before, tail)?;
        Ok(r)
    }
}
