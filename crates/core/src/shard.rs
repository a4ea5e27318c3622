//! Shards of the table: S processes that together hold exactly the single-node table
//! (`docs/SCALE-OUT.md`).
//!
//! The table of Section 2.2 of the origin-detection paper is a fixed array of buckets,
//! and every operation on it — lookup, insert, eviction (Random, LRU, Copy-Count,
//! Lucky), origin propagation, Lucky's scores and its halving rule (e) — reads and
//! writes one bucket only. A bucket's content is therefore a function of the sequence
//! of operations on that bucket alone, and splitting the table by whole buckets keeps
//! every bucket's sequence as it is. Shard `s` of `S` holds the buckets `b` with
//! `⌊b·S/N⌋ = s`: a contiguous range, so that the shards' ranges laid side by side are
//! the table (the bucket of a fingerprint is a multiply-shift of its top 32 bits, so a
//! range of buckets is a range of fingerprints). Splitting by fingerprint bits the
//! bucket index does not use would put entries of one bucket on several shards, and
//! eviction (which compares the entries of a bucket) would no longer be the
//! single-node one.
//!
//! Per document: each shard probes its selected shingles ([`Engine::probe_where`] on
//! the prepared document, or [`probe_items`] on the shingles [`split`] gave it),
//! the answers are merged in item order ([`merge_hits`]) for estimation (Section 2.3),
//! whose [`Feedback`] goes back to every shard for phase 3 ([`Engine::score`]).
//! [`union`] lays the shards' bucket ranges side by side and sums their counters:
//! equal to the single-node table, byte for byte (the property test below).
//!
//! For the same reason a shard may probe the next documents before the feedback of an
//! earlier one arrives ([`Ahead`]): when the later document touches none of the buckets
//! the earlier ones touched, its phase 1 and their phase 3 change disjoint buckets (and
//! counters that add up), and every bucket still sees its operations in the
//! single-node order.
//!
//! [`Engine::probe_where`]: crate::engine::Engine::probe_where
//! [`Engine::score`]: crate::engine::Engine::score
//! [`probe_items`]: crate::engine::probe_items
//! [`Feedback`]: crate::engine::Feedback

use std::collections::{HashMap, VecDeque};
use std::ops::Range;

use crate::engine::{places, probe_items_dated, Engine, Feedback, Probe, ShardItem};
use crate::select::{kept, Item};
use crate::table::{bucket_of, top_byte, BucketMemory, Hit, Table, TableStats};

/// Errors of shard arithmetic and merging.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    #[error("shard {index} of {count}: the index must be below the count, and the count at least 1")]
    Bad { index: u32, count: u32 },
    #[error("feedback of document #{got} where #{want}'s was due")]
    Feedback { want: u64, got: u64 },
    #[error(
        "selected shingle {item} of {n} was answered by {answers} shards, not one: the shards disagree on their ranges"
    )]
    Coverage { item: usize, n: usize, answers: usize },
    #[error("the shard tables disagree on {what}: {a} and {b}")]
    Disagree { what: &'static str, a: u64, b: u64 },
    #[error("the shards of a union must be 0..{count} of {count}, each once, over tables of one shape")]
    Set { count: usize },
}

/// Shard `index` of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    index: u32,
    count: u32,
}

impl Shard {
    /// Shard `index` of `count` (`index < count`).
    pub fn new(index: u32, count: u32) -> Result<Shard, ShardError> {
        if count == 0 || index >= count {
            return Err(ShardError::Bad { index, count });
        }
        Ok(Shard { index, count })
    }

    /// The shard's index.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The number of shards.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Whether bucket `b` of a table of `buckets` buckets is this shard's.
    #[inline]
    pub fn owns(&self, b: u64, buckets: u64) -> bool {
        shard_of(b, buckets, self.count) == self.index
    }

    /// The shard's buckets: `⌈s·N/S⌉ .. ⌈(s+1)·N/S⌉`.
    pub fn buckets(&self, buckets: u64) -> Range<u64> {
        let first = |s: u32| (u128::from(s) * u128::from(buckets)).div_ceil(u128::from(self.count)) as u64;
        first(self.index)..first(self.index + 1)
    }
}

/// The shard of `count` holding bucket `b` of a table of `buckets` buckets: `⌊b·S/N⌋`.
#[inline]
fn shard_of(b: u64, buckets: u64, count: u32) -> u32 {
    (u128::from(b) * u128::from(count) / u128::from(buckets)) as u32
}

/// A document's selected shingles `items` split among `count` shards of a table of
/// `buckets` buckets: shard `s`'s, in order, as [`probe_items`](crate::engine::probe_items) takes them (what a
/// worker that does not prepare documents receives). [`Engine::probe_where`] on shard
/// `s`'s range probes the same shingles.
///
/// [`Engine::probe_where`]: crate::engine::Engine::probe_where
pub fn split(items: &[Item], buckets: u64, count: u32) -> Vec<Vec<ShardItem>> {
    let mut out = vec![Vec::new(); count as usize];
    for it in ShardItem::all_of(items) {
        out[shard_of(bucket_of(it.fp, buckets), buckets, count) as usize].push(it);
    }
    out
}

/// What every shard needs of a document's selected shingles `items` (kept at the
/// lowest threshold a table starts at, [`crate::select::START`]) to keep its part of
/// them at a higher threshold ([`part_at_density`]): each shingle's rank and top byte,
/// in order. A deployment whose documents are prepared at submission with the
/// adaptive density sends them to every shard with its part ([`split`]).
pub fn marks(items: &[Item]) -> (Vec<u8>, Vec<u8>) {
    items.iter().map(|it| (it.rank, top_byte(it.fp))).unzip()
}

/// Shard items `part` of a document whose selected shingles have `ranks` and `tops`
/// ([`marks`]; `part` indexes them) kept at threshold `t`: those `t` selects, with
/// their indexes among the shingles `t` selects and their offsets and neighbours'
/// top bytes as [`ShardItem::all_of`] takes them, as [`split`] of the document kept
/// at `t` gives them.
pub fn part_at_density(part: &[ShardItem], (ranks, tops): (&[u8], &[u8]), t: u8) -> Vec<ShardItem> {
    let selected: Vec<usize> = (0..ranks.len()).filter(|&j| kept(ranks[j], t)).collect();
    let places = places(&selected, (ranks, tops));
    let mut place = vec![u32::MAX; ranks.len()];
    for (p, &j) in selected.iter().enumerate() {
        place[j] = p as u32;
    }
    part.iter()
        .filter(|it| kept(ranks[it.index as usize], t))
        .map(|it| {
            let p = place[it.index as usize] as usize;
            let (place, prev, next) = places[p];
            ShardItem { index: p as u32, prev, next, rank: ranks[it.index as usize], place, ..*it }
        })
        .collect()
}

/// The hits of a document's `n` selected shingles, in order, from the probes of all
/// shards; an error unless every shingle was answered by exactly one.
pub fn merge_hits(n: usize, probes: &[Probe]) -> Result<Vec<Option<Hit>>, ShardError> {
    let mut hits = vec![None; n];
    let mut answers = vec![0usize; n];
    for p in probes {
        for (&i, &hit) in p.items.iter().zip(&p.hits) {
            let i = i as usize;
            if i >= n {
                return Err(ShardError::Coverage { item: i, n, answers: 1 });
            }
            hits[i] = hit;
            answers[i] += 1;
        }
    }
    match answers.iter().position(|&a| a != 1) {
        Some(item) => Err(ShardError::Coverage { item, n, answers: answers[item] }),
        None => Ok(hits),
    }
}

/// Lays the shards' bucket ranges side by side into `into` (a table of their shape,
/// spanned first) and gives it their counters: per-operation counters summed,
/// per-document ones (equal in every shard) kept. A shard's table spans its memory
/// ([`Table::span`]): its bucket range is copied as it is.
pub fn union<M: BucketMemory, N: BucketMemory>(
    shards: &[(Shard, &Table<M>)],
    into: &mut Table<N>,
) -> Result<(), ShardError> {
    let count = shards.len();
    let n = into.buckets();
    let valid = shards.iter().enumerate().all(|(i, (s, t))| {
        s.index as usize == i
            && s.count as usize == count
            && t.buckets() == n
            && t.bucket_entries() == into.bucket_entries()
            && t.shift() == 0
    });
    if count == 0 || !valid {
        return Err(ShardError::Set { count });
    }
    into.span();
    let first = shards[0].1.stats();
    let mut stats = TableStats { lookups: 0, hits: 0, inserts: 0, evictions: 0, occupied: 0, ..first };
    for (s, t) in shards {
        let st = t.stats();
        for (what, a, b) in [
            ("documents", first.documents, st.documents),
            ("the last document", first.last_seq, st.last_seq),
            ("shingles", first.shingles, st.shingles),
        ] {
            if a != b {
                return Err(ShardError::Disagree { what, a, b });
            }
        }
        stats.lookups += st.lookups;
        stats.hits += st.hits;
        stats.inserts += st.inserts;
        stats.evictions += st.evictions;
        stats.occupied += st.occupied;
        let r = s.buckets(n);
        into.range_bytes_mut(r.clone()).copy_from_slice(t.range_bytes(r));
    }
    *into.stats_mut() = stats;
    Ok(())
}

/// The documents a shard probed whose feedback it has not applied yet, oldest first,
/// and how many of them touched each bucket: a document may be probed ahead of an
/// earlier one's feedback only when [`Ahead::conflicts`] says it touches none of those
/// buckets (module documentation). The table is then the one of the single-node order
/// at every point where nothing is pending.
///
/// Dates: a pending document that may take entries over (published before
/// one already seen) may revise earlier documents, whose shingles are then looked up
/// in the table as it is right after its phase 3 ([`Ahead::score_and_look_up`]). A
/// later document probed meanwhile touches other buckets only, so those are kept as
/// they were before it touched them: the lookups read the table of the single-node
/// order without waiting for the feedback before probing on.
#[derive(Debug, Default)]
pub struct Ahead {
    probes: VecDeque<(u64, Probe, Vec<u64>)>,
    touched: HashMap<u64, u32>,
    /// The pending documents that may take entries over, oldest first; the buckets
    /// documents probed after the newest of them touched, each as it was before the
    /// first of them (document, bucket, bytes; in probing order); and the document of
    /// each bucket's latest such copy.
    causes: VecDeque<u64>,
    kept: VecDeque<(u64, u64, Vec<u8>)>,
    kept_at: HashMap<u64, u64>,
}

impl Ahead {
    /// Documents pending.
    pub fn len(&self) -> usize {
        self.probes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.probes.is_empty()
    }

    /// Whether probing `items` now would touch a bucket a pending document touched.
    pub fn conflicts<M: BucketMemory>(&self, table: &Table<M>, items: &[ShardItem]) -> bool {
        !self.touched.is_empty() && items.iter().any(|it| self.touched.contains_key(&table.bucket_of(it.fp)))
    }

    /// Phase 1 for document `seq`'s `items` ([`probe_items`](crate::engine::probe_items)), pending until its
    /// feedback: the probe, whose hits are the shard's answer.
    pub fn probe<M: BucketMemory>(&mut self, table: &mut Table<M>, seq: u64, items: &[ShardItem]) -> &Probe {
        self.probe_dated(table, (seq, false), items, |_| false)
    }

    /// [`Ahead::probe`] for a document that may be older than what the table holds:
    /// an entry whose origin `later` says was published after it is taken over
    /// ([`probe_items_dated`]). `may_take_over`: whether it can (it was published
    /// before a document already seen; else `later` is false for every origin).
    pub fn probe_dated<M: BucketMemory>(
        &mut self,
        table: &mut Table<M>,
        (seq, may_take_over): (u64, bool),
        items: &[ShardItem],
        later: impl Fn(u64) -> bool,
    ) -> &Probe {
        debug_assert!(!self.conflicts(table, items));
        let buckets: Vec<u64> = items.iter().map(|it| table.bucket_of(it.fp)).collect();
        // A bucket first touched since the newest pending cause is kept as it was: each
        // cause reads the first copy after it (the first document after it touching it).
        if let Some(&newest) = self.causes.back() {
            for &b in &buckets {
                if self.kept_at.get(&b).is_none_or(|&m| m < newest) {
                    self.kept.push_back((seq, b, table.range_bytes(b..b + 1).to_vec()));
                    self.kept_at.insert(b, seq);
                }
            }
        }
        if may_take_over {
            self.causes.push_back(seq);
        }
        for &b in &buckets {
            *self.touched.entry(b).or_default() += 1;
        }
        self.probes.push_back((seq, probe_items_dated(table, seq, items, later), buckets));
        &self.probes.back().expect("just pushed").1
    }

    /// Phase 3 ([`Engine::score`]) for the oldest pending document, whose feedback `fb`
    /// must be; returns that document.
    pub fn score<M: BucketMemory>(
        &mut self,
        engine: &Engine,
        table: &mut Table<M>,
        fb: &Feedback,
    ) -> Result<u64, ShardError> {
        Ok(self.score_and_look_up(engine, table, fb, |_| true)?.0)
    }

    /// [`Ahead::score`], then, when the feedback lists documents its take-overs revise
    /// ([`Feedback::revise`]), what the shingles of each whose buckets `owns` accepts
    /// find in the table right after this phase 3 (the buckets later documents touched
    /// read as they were): a probe's `items` (indexes among the document's shingles)
    /// and `hits` per revised document, in the feedback's order.
    pub fn score_and_look_up<M: BucketMemory>(
        &mut self,
        engine: &Engine,
        table: &mut Table<M>,
        fb: &Feedback,
        owns: impl Fn(u64) -> bool,
    ) -> Result<(u64, Vec<Probe>), ShardError> {
        let seq = self.score_only(engine, table, fb)?;
        if self.causes.front() == Some(&seq) {
            self.causes.pop_front();
        }
        let found = if fb.revise.is_empty() { Vec::new() } else { self.look_up(table, seq, fb, owns) };
        // Copies no pending cause reads any more.
        let oldest = self.causes.front().copied().unwrap_or(u64::MAX);
        while self.kept.front().is_some_and(|k| k.0 <= oldest) {
            let (m, b, _) = self.kept.pop_front().expect("checked");
            if self.kept_at.get(&b) == Some(&m) {
                self.kept_at.remove(&b);
            }
        }
        Ok((seq, found))
    }

    /// The lookups of [`Ahead::score_and_look_up`] for document `seq`, just scored.
    fn look_up<M: BucketMemory>(
        &mut self,
        table: &mut Table<M>,
        seq: u64,
        fb: &Feedback,
        owns: impl Fn(u64) -> bool,
    ) -> Vec<Probe> {
        // The buckets as they were right after this document, for the lookups only.
        let mut first = HashMap::new();
        for (i, (m, b, _)) in self.kept.iter().enumerate() {
            if *m > seq {
                first.entry(*b).or_insert(i);
            }
        }
        for (&b, &i) in &first {
            table.range_bytes_mut(b..b + 1).swap_with_slice(&mut self.kept[i].2);
        }
        let found = fb
            .revise
            .iter()
            .map(|(_, fps)| {
                let items: Vec<u32> =
                    (0..fps.len() as u32).filter(|&i| owns(table.bucket_of(fps[i as usize]))).collect();
                let hits = items.iter().map(|&i| table.lookup(fps[i as usize]).map(|(_, h)| h)).collect();
                Probe { items, hits, ..Probe::default() }
            })
            .collect();
        for (&b, &i) in &first {
            table.range_bytes_mut(b..b + 1).swap_with_slice(&mut self.kept[i].2);
        }
        found
    }

    fn score_only<M: BucketMemory>(
        &mut self,
        engine: &Engine,
        table: &mut Table<M>,
        fb: &Feedback,
    ) -> Result<u64, ShardError> {
        match self.probes.front() {
            Some((seq, _, _)) if *seq == fb.seq => {}
            front => return Err(ShardError::Feedback { want: front.map_or(0, |f| f.0), got: fb.seq }),
        }
        let (seq, probe, buckets) = self.probes.pop_front().expect("checked");
        engine.score(table, &probe, fb);
        for b in buckets {
            match self.touched.get_mut(&b) {
                Some(n) if *n > 1 => *n -= 1,
                _ => drop(self.touched.remove(&b)),
            }
        }
        Ok(seq)
    }
}

#[cfg(test)]
mod tests;
