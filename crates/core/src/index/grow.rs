//! The buckets **in use** of each section: a section grows inside its part of the
//! region as the shingle table grows inside its file (`docs/table-format.md`, "The
//! buckets in use"), so that a small collection touches (and a flush writes) a few
//! pages of the region, not a page for nearly every key spread over all of it.
//!
//! A section of `n` buckets at shift `s` uses its first `((n − 1) >> s) + 1`; the
//! bucket `b` a key maps to (its *final* bucket: where it lies once the section spans
//! its buckets) is read and written at bucket `b >> s`, which holds the entries of
//! up to `2^s` final buckets in the order they came. A new section has `s = ⌈log2 n⌉`
//! (one bucket in use); an insertion into a full bucket in use that holds another final
//! bucket's entries, while `s > 0`, first **doubles** the buckets in use (`s − 1`):
//! each bucket's entries go, in their order, to the two it splits into by their final
//! bucket. A full bucket in use of one final bucket's entries alone is that final
//! bucket, full: it evicts as the section spanning its buckets does.
//!
//! So a growing section answers every question as the section spanning its buckets
//! does, and holds its bytes once it spans them (the property test
//! `a_growing_region_answers_as_one_spanning_it`): a bucket in use holds every entry of
//! its final buckets, so a final bucket is full exactly when its entries alone fill the
//! bucket in use, and both evict the same entry; every question filters a bucket by its
//! key (a word, a signature, a key hash), whose entries all share one final bucket, so
//! the other final buckets' entries beside them are never read as theirs; and a bucket
//! keeps its entries in their order. Each
//! section's doublings so far are counted in the counters page (0 in a new region);
//! the signatures of a region laid out by pieces (chains that spill into the next
//! buckets when full) always span their section.
//!
//! Shard workers hold a part of the region each ([`IndexPart`]): their regions span
//! every section from the start ([`Indexes::spanning`]), since a bucket in use would
//! hold final buckets of other parts.

use super::{
    bucket_of, entries, full, get, put, IndexPart, Indexes, DF_BUCKET, DF_SALT, ENTRY, INDEX_HEADER_BYTES, ND_BUCKET,
    ND_SALT,
};
use crate::memory::RangeMut;
use crate::quote;

/// Counter offsets of the sections' doublings in the counters page.
const C_DF_GROWN: usize = 72;
const C_SIG_GROWN: usize = 80;
const C_ND_GROWN: usize = 88;
/// Doublings that make any section span its buckets (`⌈log2 n⌉ ≤ 64`).
const SPANS: u64 = 64;

/// A section of the region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Section {
    Df,
    Sig,
    Nd,
}

/// Where a section's buckets in use lie.
#[derive(Debug, Clone, Copy)]
pub(super) struct InUse {
    /// Byte offset of the section's first bucket.
    at: usize,
    /// The section's buckets (final).
    buckets: u64,
    bucket_bytes: usize,
    pub(super) shift: u32,
}

impl InUse {
    /// Byte offset of the bucket in use that holds final bucket `b`.
    #[inline]
    pub(super) fn of(&self, b: u64) -> usize {
        self.at + (b >> self.shift) as usize * self.bucket_bytes
    }

    /// Buckets in use.
    pub(super) fn len(&self) -> u64 {
        ((self.buckets.max(1) - 1) >> self.shift) + 1
    }
}

/// `⌈log2 n⌉`: the shift at which one bucket of `n` is in use.
fn widest(n: u64) -> u32 {
    if n <= 1 {
        0
    } else {
        64 - (n - 1).leading_zeros()
    }
}

impl Section {
    fn counter(self) -> usize {
        match self {
            Section::Df => C_DF_GROWN,
            Section::Sig => C_SIG_GROWN,
            Section::Nd => C_ND_GROWN,
        }
    }
}

impl<M: AsRef<[u8]>> Indexes<M> {
    /// The buckets in use of section `sec`.
    #[inline]
    pub(super) fn in_use(&self, sec: Section) -> InUse {
        let s = &self.shape;
        let (at, buckets, bucket_bytes) = match sec {
            Section::Df => (s.df_at(), s.df_buckets, DF_BUCKET * ENTRY),
            Section::Sig => (s.sig_at(), s.sig_buckets, s.sig_entries * ENTRY),
            Section::Nd => (s.nd_at(), s.nd_buckets, ND_BUCKET * ENTRY),
        };
        let grows = sec != Section::Sig || s.sig_exact;
        let grown = get(self.bytes(), sec.counter());
        let shift = if grows { widest(buckets).saturating_sub(grown.min(SPANS) as u32) } else { 0 };
        InUse { at, buckets, bucket_bytes, shift }
    }

    /// Whether every section spans its buckets.
    pub fn spans(&self) -> bool {
        [Section::Df, Section::Sig, Section::Nd].into_iter().all(|sec| self.in_use(sec).shift == 0)
    }

    /// Buckets in use of each section: (document frequencies, signatures,
    /// near-duplicate keys).
    pub fn buckets_in_use(&self) -> (u64, u64, u64) {
        (self.in_use(Section::Df).len(), self.in_use(Section::Sig).len(), self.in_use(Section::Nd).len())
    }

    /// The final bucket of an entry whose first half is `a` (a word, a signature, a key
    /// hash).
    pub(super) fn final_bucket(&self, sec: Section, a: u64) -> u64 {
        let s = &self.shape;
        match sec {
            Section::Df => bucket_of(a, DF_SALT, s.df_buckets),
            Section::Sig => {
                let (p, v) = quote::exact_probe(a);
                s.sig_home(p, v)
            }
            Section::Nd => bucket_of(a, ND_SALT, s.nd_buckets),
        }
    }

    /// Panics unless `part` is the whole region or the region spans every section (a
    /// bucket in use would hold other parts' final buckets).
    pub(super) fn assert_held(&self, part: IndexPart) {
        assert!(part == IndexPart::WHOLE || self.spans(), "a part of the indexes must be held in a spanning region");
    }
}

impl Indexes<Vec<u8>> {
    /// An empty region in memory whose sections span their buckets from the start: a
    /// shard worker's part ([`IndexPart`]).
    pub fn spanning(bytes: u64, q: &quote::QuoteConfig) -> Result<Self, super::IndexTooSmall> {
        let mut idx = Indexes::in_memory(bytes, q)?;
        for sec in [Section::Df, Section::Sig, Section::Nd] {
            put(&mut idx.mem, sec.counter(), SPANS);
        }
        Ok(idx)
    }
}

impl<M: AsRef<[u8]> + RangeMut> Indexes<M> {
    /// Byte offset of the bucket in use where an entry of `key` (a word, a signature,
    /// a key hash), of final bucket `b` of `sec`, goes: the buckets in use are doubled
    /// while that one is full and holds another final bucket's entry. A full bucket of
    /// final bucket `b`'s entries alone is that final bucket, full: it evicts as a
    /// section spanning its buckets does.
    pub(super) fn room_for(&mut self, sec: Section, key: u64, b: u64) -> usize {
        loop {
            let in_use = self.in_use(sec);
            let at = in_use.of(b);
            let bucket = &self.bytes()[at..at + in_use.bucket_bytes];
            // A bucket of one repeated key (a hot key's) is told without a hash.
            let mine = |(a, _): (u64, u64)| a == key || self.final_bucket(sec, a) == b;
            if in_use.shift == 0 || !full(bucket) || entries(bucket).all(mine) {
                return at;
            }
            self.double(sec);
        }
    }

    /// Doubles the buckets in use of `sec` (its shift is above 0): each bucket's
    /// entries, in their order, go to the two buckets it splits into.
    pub(super) fn double(&mut self, sec: Section) {
        let old = self.in_use(sec);
        assert!(old.shift > 0, "a section spanning its buckets does not double");
        let new = InUse { shift: old.shift - 1, ..old };
        let len = old.bucket_bytes;
        let mut bucket = vec![0u8; len];
        // From the last bucket down: bucket i splits into 2i and 2i + 1, which are
        // past every bucket not yet split (or i itself, copied out first).
        for i in (0..old.len()).rev() {
            let at = old.at + i as usize * len;
            bucket.copy_from_slice(&self.bytes()[at..at + len]);
            if entries(&bucket).next().is_none() {
                continue;
            }
            self.range_mut(at, len).fill(0);
            let mut filled = [0usize; 2];
            for (a, b) in entries(&bucket) {
                let to = new.of(self.final_bucket(sec, a));
                let half = (to - old.at) / len - 2 * i as usize;
                debug_assert!(half < 2, "bucket i splits into 2i and 2i + 1");
                let slot = to + filled[half] * ENTRY;
                let out = self.range_mut(slot, ENTRY);
                put(out, 0, a);
                put(out, 8, b);
                filled[half] += 1;
            }
        }
        let grown = get(self.bytes(), sec.counter()) + 1;
        put(self.range_mut(sec.counter(), 8), 0, grown);
    }
}

const _: () = assert!(C_ND_GROWN + 8 <= INDEX_HEADER_BYTES);
