//! The buckets **in use** of each section: a section grows inside its part of the
//! region as the shingle table grows inside its file (`docs/table-format.md`, "The
//! buckets in use"), so that a small collection touches (and a flush writes) a few
//! pages of the region, not a page for nearly every key spread over all of it.
//!
//! A section of `n` buckets at shift `s` uses its first `((n − 1) >> s) + 1`; the
//! bucket `b` a key maps to (its *final* bucket: where it lies once the section spans
//! its buckets) is read and written in bucket `b >> s`, which holds the entries of up
//! to `2^s` final buckets in the order they came. A bucket in use has the room of one
//! final bucket; a signature bucket in use the room of `2^min(s, 2)` (a repeated
//! sentence puts its `max_sources` copies in one final bucket of 32: with the room of
//! one, two or three such sentences would double the buckets in use until they span
//! the section). A new section has `s = ⌈log2 n⌉` (one bucket in use). An insertion
//! into a full bucket in use whose final bucket is not full first **doubles** the
//! buckets in use (`s − 1`): each bucket's entries go, in their order, to the two it
//! splits into by their final bucket. An insertion into a full final bucket evicts
//! within it as the section spanning its buckets does (the other final buckets'
//! entries beside it stay as they are).
//!
//! So a growing section answers every question as the section spanning its buckets
//! does (the property test `a_growing_region_answers_as_one_spanning_it`): a bucket in
//! use holds every entry of its final buckets, and doubles before any of them would
//! need more room than a final bucket has, so each final bucket is full, and evicts
//! the same entry, exactly when it does in the spanning section; every question
//! filters a bucket by its key (a word, a signature, a key hash), whose entries all
//! share one final bucket, so the other final buckets' entries beside them are never
//! read as theirs; and a bucket keeps its entries in their order. Each section's
//! doublings so far are counted in the counters page (0 in a new region); the
//! signatures of a region laid out by pieces (chains that spill into the next buckets
//! when full) always span their section.
//!
//! Shard workers hold a part of the region each ([`IndexPart`]): their regions span
//! every section from the start ([`Indexes::spanning`]), since a bucket in use would
//! hold final buckets of other parts.

use super::{
    bucket_of, drop_and_append, entries, get, occupied, put, IndexPart, Indexes, DF_BUCKET, DF_SALT, ENTRY,
    INDEX_HEADER_BYTES, ND_BUCKET, ND_SALT,
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

/// A signature bucket in use holds the room of up to `2^SIG_WIDE` final buckets (the
/// room of the `2^s` it holds while `s ≤ SIG_WIDE`): a few final buckets holding a
/// repeated sentence's `max_sources` copies each then share one without doubling
/// them all.
const SIG_WIDE: u32 = 2;

/// Where a section's buckets in use lie.
#[derive(Debug, Clone, Copy)]
pub(super) struct InUse {
    /// Byte offset of the section's first bucket.
    at: usize,
    /// The section's buckets (final).
    buckets: u64,
    /// Bytes of a final bucket.
    pub(super) base: usize,
    pub(super) shift: u32,
    /// A bucket in use has the room of up to `2^wide` final buckets.
    wide: u32,
}

impl InUse {
    /// Bytes of a bucket in use.
    #[inline]
    fn width(&self) -> usize {
        self.base << self.shift.min(self.wide)
    }

    /// The bytes of the bucket in use that holds final bucket `b` (the last one ends
    /// at the section's end).
    #[inline]
    pub(super) fn of(&self, b: u64) -> std::ops::Range<usize> {
        let start = self.at + (b >> self.shift) as usize * self.width();
        let end = self.at + self.buckets as usize * self.base;
        start..(start + self.width()).min(end)
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
        let (at, buckets, base) = match sec {
            Section::Df => (s.df_at(), s.df_buckets, DF_BUCKET * ENTRY),
            Section::Sig => (s.sig_at(), s.sig_buckets, s.sig_entries * ENTRY),
            Section::Nd => (s.nd_at(), s.nd_buckets, ND_BUCKET * ENTRY),
        };
        let grows = sec != Section::Sig || s.sig_exact;
        let grown = get(self.bytes(), sec.counter());
        let shift = if grows { widest(buckets).saturating_sub(grown.min(SPANS) as u32) } else { 0 };
        let wide = if sec == Section::Sig { SIG_WIDE } else { 0 };
        InUse { at, buckets, base, shift, wide }
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

    /// Whether an entry whose first half is `a`, in the bucket in use holding final
    /// bucket `b` of `sec`, belongs to `b` (`key` is known to).
    pub(super) fn mine(&self, sec: Section, key: u64, b: u64) -> impl Fn(u64) -> bool + '_ {
        let shift = self.in_use(sec).shift;
        move |a| shift == 0 || a == key || self.final_bucket(sec, a) == b
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
    /// The bucket in use where an entry of `key` (a word, a signature, a key hash), of
    /// final bucket `b` of `sec`, goes, and whether final bucket `b` is full there (it
    /// evicts as the section spanning its buckets does): the buckets in use are doubled
    /// while that one is full and `b` is not.
    pub(super) fn room_for(&mut self, sec: Section, key: u64, b: u64) -> (std::ops::Range<usize>, bool) {
        loop {
            let in_use = self.in_use(sec);
            let r = in_use.of(b);
            let bucket = &self.bytes()[r.clone()];
            let (occupied, room, per_final) = (occupied(bucket), bucket.len() / ENTRY, in_use.base / ENTRY);
            let b_full = occupied >= per_final && {
                let mine = self.mine(sec, key, b);
                entries(bucket).filter(|&(a, _)| mine(a)).count() >= per_final
            };
            if b_full || occupied < room {
                return (r, b_full);
            }
            self.double(sec);
        }
    }

    /// Appends `(a, v)`, `a` of final bucket `b` of `sec`, to the bucket in use holding
    /// it, after doubling them if it needs room: a full final bucket keeps its older
    /// half and drops the oldest entry of its newer half, as `push_queue` does in a
    /// section spanning its buckets (the other final buckets' entries beside it stay as
    /// they are). True when one was dropped.
    pub(super) fn push(&mut self, sec: Section, b: u64, a: u64, v: u64) -> bool {
        let (r, evict) = self.room_for(sec, a, b);
        let bucket = &self.bytes()[r.clone()];
        let n = occupied(bucket);
        let dropped = evict.then(|| {
            let (mine, newer) = (self.mine(sec, a, b), self.in_use(sec).base / ENTRY / 2);
            entries(bucket).enumerate().filter(|&(_, (x, _))| mine(x)).nth(newer).expect("a full final bucket").0
        });
        drop_and_append(self.range_mut(r.start, r.len()), n, dropped, a, v);
        evict
    }

    /// Doubles the buckets in use of `sec` (its shift is above its `wide`): each bucket's
    /// entries, in their order, go to the two buckets it splits into.
    pub(super) fn double(&mut self, sec: Section) {
        let old = self.in_use(sec);
        // At `s ≤ wide` a bucket in use has the room of its final buckets: it is full
        // only when they all are.
        assert!(old.shift > old.wide, "buckets in use with their final buckets' room do not double");
        let new = InUse { shift: old.shift - 1, ..old };
        let len = old.width();
        let mut bucket = vec![0u8; len];
        // From the last bucket down: bucket i splits into 2i and 2i + 1 (as wide), which
        // are past every bucket not yet split (or i itself, copied out first).
        for i in (0..old.len()).rev() {
            let r = old.of(i << old.shift);
            let bucket = &mut bucket[..r.len()];
            bucket.copy_from_slice(&self.bytes()[r.clone()]);
            if entries(bucket).next().is_none() {
                continue;
            }
            self.range_mut(r.start, r.len()).fill(0);
            let mut filled = [0usize; 2];
            for (a, b) in entries(bucket) {
                let to = new.of(self.final_bucket(sec, a)).start;
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
