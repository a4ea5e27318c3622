//! The buckets in use growing inside the table's memory (decision 2).
//!
//! A table of N buckets (its memory's) with shift `s` uses the first `⌈N / 2^s⌉` of
//! them: bucket `b` in use holds the entries whose final bucket `c` (their bucket in the
//! N-bucket table, `bucket_of(fp, N)`) has `c >> s == b`. Growing takes `s` to `s - 1`:
//! bucket `b`'s entries go to `2b` and `2b + 1`, each keeping its order, the buckets
//! rewritten from the last down so that nothing is overwritten before it is read. An
//! entry's final bucket comes from its stored placement bits (bits 30-61 of its
//! fingerprint), so growing needs nothing but the table.
//!
//! The table grows only when an insertion finds its bucket in use full, and then until
//! the bucket has room or the table spans its memory: a final bucket is full only when
//! its bucket in use is, so the N-bucket table would not have evicted either, and the
//! first eviction happens with the table spanning its memory. What the eviction policies
//! keep is kept per final bucket while the table grows (`Table::process`,
//! `Table::add_scores`): Copy-Count's and Lucky's halving count a final bucket's entries
//! only, LRU's move to the back keeps each final bucket's queue order, a [`Position`] is
//! a final bucket and a rank in it. So every answer, score and order is the N-bucket
//! table's, and on spanning the memory the bytes are its bytes.

use xxhash_rust::xxh3::Xxh3;

use super::bucket::{copy_entry, is_extra, occupied, placement, record, COL_SCORE};
use super::{BucketMemory, Position, Table, ENTRY_BYTES};

/// The final bucket of the entry at `slot`, in a table of `buckets` buckets.
#[inline]
fn final_of(data: &[u8], n: usize, slot: usize, buckets: u64) -> u64 {
    (u64::from(placement(data, n, slot)) * buckets) >> 32
}

impl<M: BucketMemory> Table<M> {
    /// Grows the buckets in use until they span the memory (a shard's table, whose
    /// bucket ranges are copied as they are; a no-op on a table that spans it).
    pub fn span(&mut self) {
        while self.shift > 0 {
            self.grow();
        }
    }

    /// Doubles the buckets in use (shift `s` to `s - 1`).
    pub(super) fn grow(&mut self) {
        debug_assert!(self.shift > 0);
        let n = self.entries;
        let len = self.entries * ENTRY_BYTES;
        let old_used = self.used_buckets();
        self.shift -= 1;
        let (new_used, shift, buckets) = (self.used_buckets(), self.shift, self.buckets);
        let mut src = vec![0u8; len];
        let mut halves = [vec![0u8; len], vec![0u8; len]];
        for b in (0..old_used).rev() {
            src.copy_from_slice(self.bucket(b));
            let mut next = [0usize; 2];
            for s in 0..occupied(&src, n) {
                let half = ((final_of(&src, n, s, buckets) >> shift) - 2 * b) as usize;
                copy_entry(&src, s, &mut halves[half], next[half], n);
                next[half] += 1;
            }
            for (half, bytes) in halves.iter_mut().enumerate() {
                let t = 2 * b + half as u64;
                // A bucket past the old ones in use is zero already: written only when
                // it gets entries, so that the memory touched follows the entries.
                if t < new_used && (t < old_used || next[half] > 0) {
                    self.bucket_mut(t).copy_from_slice(bytes);
                }
                bytes.fill(0);
            }
        }
    }

    /// The first entry that is not where the shift puts it, as (bucket of the memory,
    /// slot, final bucket): every occupied entry must lie in bucket `c >> shift` of its
    /// final bucket `c`, inside the buckets in use. A header whose shift was changed
    /// (and its checksum recomputed) gave wrong answers silently: `check`
    /// reads every bucket in use for this, and of the buckets beyond, `beyond` (a
    /// table file's holes, never written, hold no entry: reading them would only
    /// allocate pages on a tmpfs).
    pub fn misplaced(&self, beyond: impl IntoIterator<Item = u64>) -> Option<(u64, usize, u64)> {
        let n = self.entries;
        let used = self.used_buckets();
        (0..used).chain(beyond.into_iter().filter(|&b| b >= used && b < self.buckets)).find_map(|b| {
            let data = self.bucket(b);
            (0..occupied(data, n)).find_map(|s| {
                let c = final_of(data, n, s, self.buckets);
                (c >> self.shift != b).then_some((b, s, c))
            })
        })
    }

    /// The final buckets of the occupied entries of bucket `b` in use; `None` when the
    /// table spans its memory (they are all `b`).
    pub(super) fn finals(&self, b: u64) -> Option<Vec<u64>> {
        if self.shift == 0 {
            return None;
        }
        let (n, data) = (self.entries, self.bucket(b));
        Some((0..occupied(data, n)).map(|s| final_of(data, n, s, self.buckets)).collect())
    }

    /// The position of the entry at `slot` of `data`, the bucket in use holding final
    /// bucket `c`: its rank among `c`'s entries.
    pub(super) fn position(&self, data: &[u8], c: u64, slot: usize) -> Position {
        let n = self.entries;
        let guests = self.holds_guests();
        let rank = if self.shift == 0 && !guests {
            slot
        } else if guests && is_extra(data, n, slot) {
            return Position { bucket: c, slot: super::GUEST };
        } else {
            (0..slot).filter(|&s| self.ranked(data, c, s, guests)).count()
        };
        Position { bucket: c, slot: rank as u32 }
    }

    /// Whether slot `s` of `data` counts in the ranks of final bucket `c`'s positions:
    /// its entries, the policy's alone where extra entries may be there (`guests`).
    fn ranked(&self, data: &[u8], c: u64, s: usize, guests: bool) -> bool {
        let n = self.entries;
        (self.shift == 0 || final_of(data, n, s, self.buckets) == c) && !(guests && is_extra(data, n, s))
    }

    /// The slot of `data` (the bucket in use holding `pos.bucket`) at `pos`; `None` when
    /// the final bucket has no entry of that rank.
    pub(super) fn slot_at(&self, data: &[u8], pos: Position) -> Option<usize> {
        let n = self.entries;
        let guests = self.holds_guests();
        if self.shift == 0 && !guests {
            return (pos.slot < n as u32).then_some(pos.slot as usize);
        }
        (0..occupied(data, n)).filter(|&s| self.ranked(data, pos.bucket, s, guests)).nth(pos.slot as usize)
    }

    /// xxh3-64 of the table's content as the table spanning its memory holds it: for each
    /// final bucket with entries, in order, its number, its entry count and its entries
    /// (tag, score, record). Equal digests, equal content, whatever the buckets in use.
    pub fn digest(&self) -> u64 {
        self.digest_of(0..self.used_buckets())
    }

    /// [`Table::digest`] reading only `buckets` (ascending) of the buckets in use: the
    /// others must hold no entry (a table file's holes, which a reader does not touch:
    /// on a tmpfs each page read of a hole is allocated).
    pub fn digest_of(&self, buckets: impl IntoIterator<Item = u64>) -> u64 {
        self.digest_where(buckets, |_, _| true)
    }

    /// [`Table::digest`] of the policy's entries alone, leaving out the extra ones (the
    /// guests of an adaptive density): equal to the paper's table's digest at every
    /// document's end ([`crate::table`], "Extra entries are guests").
    pub fn policy_digest(&self) -> u64 {
        self.digest_where(0..self.used_buckets(), |data, s| !is_extra(data, self.entries, s))
    }

    fn digest_where(&self, buckets: impl IntoIterator<Item = u64>, keep: impl Fn(&[u8], usize) -> bool) -> u64 {
        let n = self.entries;
        let mut h = Xxh3::new();
        let mut buf = Vec::with_capacity(n * ENTRY_BYTES + 12);
        let used = self.used_buckets();
        for b in buckets.into_iter().take_while(|&b| b < used) {
            let data = self.bucket(b);
            let count = occupied(data, n);
            let mut order: Vec<(u64, usize)> =
                (0..count).filter(|&s| keep(data, s)).map(|s| (final_of(data, n, s, self.buckets), s)).collect();
            order.sort_unstable();
            for run in order.chunk_by(|x, y| x.0 == y.0) {
                buf.clear();
                buf.extend_from_slice(&run[0].0.to_le_bytes());
                buf.extend_from_slice(&(run.len() as u32).to_le_bytes());
                for &(_, s) in run {
                    buf.extend_from_slice(&data[2 * s..2 * s + 2]);
                    buf.push(data[COL_SCORE * n + s]);
                    buf.extend_from_slice(&data[record(n, s)..record(n, s) + ENTRY_BYTES - 3]);
                }
                h.update(&buf);
            }
        }
        h.digest()
    }
}
