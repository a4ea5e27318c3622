//! The selection density's side of the table (the module docs of
//! [`super`] say the rules): the threshold in force, the slot a full bucket gives up
//! while extra entries are in it, and the sweep at the floor.

use super::bucket::{copy_entry, is_extra, occupied, stored_bits};
use super::{BucketMemory, Table, ALL_SLOTS, ENTRY_BYTES};
use crate::select::{density_rank, kept, FLOOR, SELECTED};

/// A raise of the density threshold asked for and not made yet (with a lag), as the
/// table file's header keeps it (and a deployment's shard image).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PendingRaise {
    /// The documents applied since the one during which the first ask came, plus one
    /// (at most the lag); 0: none.
    pub age: u8,
    /// The asks since (every full bucket that found no extra entry to give up, or
    /// refused an extra shingle). Counted, as a deployment sums its shards'; the raise
    /// goes to the floor whatever their number.
    pub asks: u64,
}

impl<M: BucketMemory> Table<M> {
    /// Says whether the density is adaptive and its lag (a table file's header leaves
    /// both to the configuration text).
    pub fn set_density(&mut self, adaptive: bool, lag: u8) {
        self.adaptive = adaptive;
        self.density_lag = lag;
    }

    /// Whether extra entries may be in the table: the density is adaptive and below the
    /// floor, or the sweep is still to come.
    pub(super) fn holds_guests(&self) -> bool {
        self.adaptive && (self.stats.density < FLOOR || self.sweep)
    }

    /// The pending raise as the table file's header keeps it.
    pub fn pending_raise(&self) -> PendingRaise {
        PendingRaise { age: self.ask.map_or(0, |d| (self.stats.documents - d + 1).min(255) as u8), asks: self.asks }
    }

    /// How many documents after the last one ended select at the threshold in force
    /// whatever their asks and the next ones' (at least 1; unbounded when the density
    /// is not adaptive, has no lag or is at the floor): a pending raise comes at the end
    /// of the lag's document after the first ask, and an ask still to come raises the
    /// lag's documents later. A deployment's worker probes no document beyond them
    /// before the feedback that may raise the threshold (`docs/SCALE-OUT.md`).
    pub fn density_fixed_for(&self) -> u64 {
        if !self.adaptive || self.density_lag == 0 || self.stats.density >= FLOOR {
            return u64::MAX;
        }
        let lag = u64::from(self.density_lag);
        self.ask.map_or(lag, |d| d + lag - self.stats.documents)
    }

    /// Restores the pending raise [`Table::pending_raise`] gave (the counters set
    /// first).
    pub fn set_pending_raise(&mut self, p: PendingRaise) {
        self.ask = (p.age > 0).then(|| (self.stats.documents + 1).saturating_sub(u64::from(p.age)));
        self.asks = p.asks;
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

    /// Ends a document (its counters counted): raises the threshold to the floor when
    /// the first ask is the lag's documents old, and when the threshold reached the
    /// floor removes every extra entry (each bucket keeps its other entries' order), so
    /// that the table holds the policy's entries only from then on: the paper's table
    /// ([`super`], "Extra entries are guests").
    pub fn end_document(&mut self) {
        self.end_document_asked(self.doc_asks);
    }

    /// The asks for a raise this table's buckets made while the current document was
    /// applied (a deployment's worker answers them).
    pub fn asks_of_document(&self) -> u64 {
        self.doc_asks
    }

    /// [`Table::end_document`] with the document's asks in every part of the table
    /// (`asks`: a shard's table holds a part, and the document's feedback sums them): the
    /// first document with asks opens the wait.
    pub fn end_document_asked(&mut self, asks: u64) {
        self.doc_asks = 0;
        if asks > 0 {
            self.ask.get_or_insert(self.stats.documents.saturating_sub(1));
            self.asks += asks;
        }
        if self.ask.is_some_and(|d| self.stats.documents >= d + u64::from(self.density_lag)) {
            self.ask = None;
            self.asks = 0;
            self.raise();
        }
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

    /// Asks for a raise (with a lag), counted at the document's end.
    fn ask(&mut self) {
        self.doc_asks += 1;
    }

    /// Raises the threshold to the floor, the sweep due: one step would keep extra
    /// entries while the table evicts, where their results fall below the paper's.
    fn raise(&mut self) {
        self.stats.density = FLOOR;
        self.sweep = true;
    }

    /// The slot a full bucket (final bucket `c`, the table spanning its memory, the
    /// threshold below the floor or the sweep still to come) gives up for `fp` of rank
    /// `rank`, asking for a raise of the threshold when it must, which a lag of 0 makes
    /// at once (see the module docs); `None`: `fp` is not inserted.
    pub(super) fn victim(&mut self, c: u64, fp: u64, salt: u64, rank: u8) -> Option<usize> {
        let n = self.entries;
        let data = self.bucket(c);
        let extras: Vec<(usize, u8)> =
            (0..n).filter(|&s| is_extra(data, n, s)).map(|s| (s, density_rank(stored_bits(data, n, s)))).collect();
        if extras.is_empty() {
            // A bucket of policy entries refuses an extra shingle: with a lag, it asks
            // too (the raise comes so late that the buckets may have none left to ask).
            if rank != SELECTED && self.density_lag > 0 && self.stats.density < FLOOR {
                self.ask();
            }
            return (rank == SELECTED).then(|| self.policy_victim(c, fp, salt, &ALL_SLOTS[..n]));
        }
        let stale = |t: u8| extras.iter().filter(move |e| !kept(e.1, t)).map(|e| e.0);
        if self.stats.density < FLOOR && stale(self.stats.density).next().is_none() {
            match self.density_lag {
                0 => self.raise(),
                _ => self.ask(),
            }
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
