//! What the engine's phase 3 does to the entries a document made or found
//! ([`crate::engine`]): whether one is still held, origin propagation's relabelling, a
//! take-over by an earlier document, Lucky's scores and rule (e) (the module docs of
//! [`super`] say the rules).

use super::bucket::{entry_matches, find, halve, is_extra, occupied, read_hit, write_hit, COL_SCORE};
use super::{BucketMemory, Eviction, Hit, Position, Table, GUEST, MAX_ORIGIN};

impl<M: BucketMemory> Table<M> {
    /// Whether the entry at `pos`, a position [`Table::process`] gave for `fp`, still
    /// holds `fp`.
    pub fn holds(&self, pos: Position, fp: u64) -> bool {
        let data = self.bucket(pos.bucket >> self.shift);
        if pos.slot == GUEST {
            return find(data, self.entries, fp).is_some_and(|s| is_extra(data, self.entries, s));
        }
        if self.shift > 0 && self.eviction != Eviction::Lru {
            // Nothing leaves a bucket before the table spans its memory (an entry moves
            // only behind the others: an LRU hit, a policy entry made over an extra one).
            return find(data, self.entries, fp).is_some();
        }
        self.slot_at(data, pos).is_some_and(|slot| {
            data[COL_SCORE * self.entries + slot] != 0 && entry_matches(data, self.entries, slot, fp)
        })
    }

    /// The slot of `fp`, held at `pos`, in its bucket in use.
    fn held_slot(&self, pos: Position, fp: u64) -> usize {
        if self.shift == 0 && !self.holds_guests() {
            return pos.slot as usize;
        }
        find(self.bucket(pos.bucket >> self.shift), self.entries, fp).expect("a held position")
    }

    /// Gives the entry at `pos`, which must still hold `fp` ([`Table::holds`]), a new
    /// origin and offset: origin propagation relabels an entry the document just inserted.
    pub fn relabel(&mut self, pos: Position, fp: u64, origin: u64, offset: u8) {
        debug_assert!(self.holds(pos, fp) && origin != 0 && origin <= MAX_ORIGIN);
        let n = self.entries;
        let slot = self.held_slot(pos, fp);
        let data = self.bucket_mut(pos.bucket >> self.shift);
        let hit = Hit { origin, offset, ..read_hit(data, n, slot) };
        write_hit(data, n, slot, hit);
    }

    /// Gives the entry at `pos`, which must still hold `fp`, all of `new`'s data (origin,
    /// offset, neighbour bytes), keeping its score: a document published before the
    /// entry's origin takes the shingle over.
    pub fn take_over(&mut self, pos: Position, fp: u64, new: Hit) {
        debug_assert!(self.holds(pos, fp) && new.origin != 0 && new.origin <= MAX_ORIGIN);
        let n = self.entries;
        let slot = self.held_slot(pos, fp);
        write_hit(self.bucket_mut(pos.bucket >> self.shift), n, slot, new);
    }

    /// Adds Lucky score increments to the entries of `fp`s held at positions (sorted by
    /// position, each position once), saturating at 255, then applies rule (e) to every
    /// touched (final) bucket.
    pub fn add_scores(&mut self, updates: &[(Position, u64, u32)]) {
        let n = self.entries;
        let (limit, spans, guests) = (u32::from(self.lucky_limit), self.shift == 0, self.holds_guests());
        let mut i = 0;
        while i < updates.len() {
            let b = updates[i].0.bucket >> self.shift;
            let group = &updates[i..i + updates[i..].iter().take_while(|u| u.0.bucket >> self.shift == b).count()];
            i += group.len();
            let slots: Vec<usize> = group.iter().map(|&(pos, fp, _)| self.held_slot(pos, fp)).collect();
            let data = self.bucket_mut(b);
            for (&(_, _, add), &slot) in group.iter().zip(&slots) {
                let s = &mut data[COL_SCORE * n + slot];
                *s = (u32::from(*s) + add).min(255) as u8;
            }
            let count = occupied(data, n);
            // Whether the average score of the slots `member` takes reaches the limit:
            // of the policy's entries among them (extra ones are never scored), as in the
            // paper's table.
            let reached = |data: &[u8], member: &dyn Fn(usize) -> bool| {
                let (sum, members) = (0..count)
                    .filter(|&s| member(s) && !(guests && is_extra(data, n, s)))
                    .fold((0u32, 0u32), |(sum, m), s| (sum + u32::from(data[COL_SCORE * n + s]), m + 1));
                members > 0 && sum >= limit * members
            };
            if spans {
                if reached(data, &|_| true) {
                    halve(data, n, |_| true);
                }
                continue;
            }
            // No final bucket averages the limit when no entry reaches it: the final
            // buckets (read from the records) only when one does.
            if data[COL_SCORE * n..COL_SCORE * n + count].iter().all(|&s| u32::from(s) < limit) {
                continue;
            }
            let finals = self.finals(b).expect("shift > 0");
            let data = self.bucket_mut(b);
            for run in group.chunk_by(|x, y| x.0.bucket == y.0.bucket) {
                let c = run[0].0.bucket;
                if reached(data, &|s| finals[s] == c) {
                    halve(data, n, |s| s < count && finals[s] == c);
                }
            }
        }
    }
}
