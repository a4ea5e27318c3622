//! The selection density's side of the table (the module docs of
//! [`super`] say the rules): the threshold in force, the slot a full bucket gives up
//! while extra entries are in it, and the sweep at the floor.

use super::bucket::{copy_entry, is_extra, occupied, stored_bits};
use super::{BucketMemory, Table, ALL_SLOTS, ENTRY_BYTES};
use crate::select::{density_rank, kept, FLOOR, SELECTED};

impl<M: BucketMemory> Table<M> {
    /// Says whether the density is adaptive (a table file's header leaves it to the
    /// configuration text).
    pub fn set_adaptive(&mut self, on: bool) {
        self.adaptive = on;
    }

    /// The density threshold a document applied now selects at: the table's with an
    /// adaptive density, else [`FLOOR`] (the policy's selection alone).
    pub fn density(&self) -> u8 {
        if self.adaptive {
            self.stats.density.min(FLOOR)
        } else {
            FLOOR
        }
    }

    /// Ends a document: when the threshold reached the floor during it, removes every
    /// extra entry (each bucket keeps its other entries' order), so that the table
    /// holds the policy's entries only from then on.
    pub fn end_document(&mut self) {
        if !std::mem::take(&mut self.sweep) {
            return;
        }
        let n = self.entries;
        let mut out = vec![0u8; n * ENTRY_BYTES];
        for b in 0..self.used_buckets() {
            let data = self.bucket(b);
            let count = occupied(data, n);
            if !(0..count).any(|s| is_extra(data, n, s)) {
                continue;
            }
            out.fill(0);
            let mut kept = 0;
            for s in (0..count).filter(|&s| !is_extra(data, n, s)) {
                copy_entry(data, s, &mut out, kept, n);
                kept += 1;
            }
            self.stats.occupied -= (count - kept) as u64;
            self.bucket_mut(b).copy_from_slice(&out);
        }
    }

    /// The slot a full bucket (final bucket `c`, the table spanning its memory, the
    /// threshold below the floor or the sweep still to come) gives up for `fp` of rank
    /// `rank`, raising the threshold when it must (see the module docs); `None`: `fp`
    /// is not inserted.
    pub(super) fn victim(&mut self, c: u64, fp: u64, salt: u64, rank: u8) -> Option<usize> {
        let n = self.entries;
        let data = self.bucket(c);
        let extras: Vec<(usize, u8)> =
            (0..n).filter(|&s| is_extra(data, n, s)).map(|s| (s, density_rank(stored_bits(data, n, s)))).collect();
        if extras.is_empty() {
            return (rank == SELECTED).then(|| self.policy_victim(c, fp, salt, &ALL_SLOTS[..n]));
        }
        let stale = |t: u8| extras.iter().filter(move |e| !kept(e.1, t)).map(|e| e.0);
        if self.stats.density < FLOOR && stale(self.stats.density).next().is_none() {
            self.stats.density += 1;
            self.sweep = self.stats.density == FLOOR;
        }
        let t = self.stats.density;
        if !kept(rank, t) {
            return None;
        }
        let pool: Vec<usize> = match stale(t).next() {
            Some(_) => stale(t).collect(),
            None => extras.iter().map(|e| e.0).collect(),
        };
        Some(self.policy_victim(c, fp, salt, &pool))
    }
}
