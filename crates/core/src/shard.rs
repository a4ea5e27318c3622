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

use crate::engine::{probe_items_dated, Engine, Feedback, Probe, ShardItem};
use crate::select::Item;
use crate::table::{bucket_of, BucketMemory, Hit, Table, TableStats};

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
    for i in 0..items.len() {
        let b = bucket_of(items[i].fp, buckets);
        out[shard_of(b, buckets, count) as usize].push(ShardItem::of(items, i));
    }
    out
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
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::engine::tests::corpus;
    use crate::engine::{by_arrival, probe_items, DocResult, Engine};
    use crate::table::Eviction;
    use proptest::prelude::*;

    #[test]
    fn ranges_partition_the_buckets_and_agree_with_owns() {
        for buckets in [1u64, 2, 3, 7, 64, 1000, 262_143] {
            for count in 1..=9u32 {
                let mut next = 0;
                for index in 0..count {
                    let s = Shard::new(index, count).unwrap();
                    let r = s.buckets(buckets);
                    assert_eq!(r.start, next, "{buckets} buckets, shard {index} of {count}");
                    next = r.end;
                    for b in [r.start, r.end.saturating_sub(1)].into_iter().filter(|b| r.contains(b)) {
                        assert!(s.owns(b, buckets));
                    }
                    if r.end < buckets {
                        assert!(!s.owns(r.end, buckets));
                    }
                }
                assert_eq!(next, buckets);
            }
        }
        assert!(Shard::new(2, 2).is_err() && Shard::new(0, 0).is_err());
    }

    #[test]
    fn merging_refuses_a_gap_or_an_overlap() {
        let p = |items: Vec<u32>| Probe { hits: vec![None; items.len()], items, ..Probe::default() };
        assert_eq!(merge_hits(3, &[p(vec![0, 2]), p(vec![1])]).unwrap().len(), 3);
        assert_eq!(merge_hits(3, &[p(vec![0, 2])]), Err(ShardError::Coverage { item: 1, n: 3, answers: 0 }));
        assert_eq!(
            merge_hits(3, &[p(vec![0, 1, 2]), p(vec![1])]),
            Err(ShardError::Coverage { item: 1, n: 3, answers: 2 })
        );
    }

    /// The S empty shard tables of `cfg`.
    fn shard_tables(cfg: &Config, count: u32) -> (Vec<Shard>, Vec<Table<Vec<u8>>>) {
        let shards: Vec<Shard> = (0..count).map(|i| Shard::new(i, count).unwrap()).collect();
        let tables = shards
            .iter()
            .map(|_| {
                let mut t = Table::in_memory(&cfg.table_params()).unwrap();
                t.span();
                t
            })
            .collect();
        (shards, tables)
    }

    /// The union of the shard tables.
    fn union_of(cfg: &Config, shards: &[Shard], tables: &[Table<Vec<u8>>]) -> Table<Vec<u8>> {
        let mut all = Table::in_memory(&cfg.table_params()).unwrap();
        let parts: Vec<(Shard, &Table<Vec<u8>>)> = shards.iter().copied().zip(tables).collect();
        union(&parts, &mut all).unwrap();
        all
    }

    /// The default configuration as the sharded deployment runs it: the paper's
    /// selection density.
    fn paper() -> Config {
        Config { density: crate::config::Density::Paper, ..Config::default() }
    }

    /// A table of `buckets` buckets of 8 entries: small enough to evict.
    fn small_table(eviction: Eviction, propagate: bool, buckets: u64) -> Config {
        let entries = 8;
        Config {
            eviction,
            propagate,
            bucket_entries: entries,
            table_bytes: 4096 + 16 * u64::from(entries) * buckets,
            ..paper()
        }
    }

    /// [`small_table`] with the adaptive density raised `lag` documents after the first
    /// ask (schema 23).
    fn adaptive_table(eviction: Eviction, buckets: u64, lag: u8) -> Config {
        Config { density: crate::config::Density::Adaptive, density_lag: lag, ..small_table(eviction, false, buckets) }
    }

    /// The single-node results and table of a generated corpus (the table grows while
    /// the corpus is applied, spanned at the end for comparing bytes).
    fn single(cfg: &Config, texts: &[String]) -> (Vec<DocResult>, Table<Vec<u8>>) {
        let mut t = Table::in_memory(&cfg.table_params()).unwrap();
        let mut e = Engine::new(cfg.clone());
        let results = texts.iter().enumerate().map(|(i, s)| e.apply(&mut t, i as u64 + 1, s)).collect();
        t.span();
        (results, t)
    }

    /// The same corpus through `count` shard tables, probe, merge, estimate and feedback
    /// per document as the scale-out deployment does (each shard preparing the document,
    /// or probing the shingles `split` gave it); returns the results and the union.
    fn sharded(cfg: &Config, texts: &[String], count: u32, prepared: bool) -> (Vec<DocResult>, Table<Vec<u8>>) {
        let (shards, mut tables) = shard_tables(cfg, count);
        let n = tables[0].buckets();
        let mut e = Engine::new(cfg.clone());
        let mut results = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            let seq = i as u64 + 1;
            let mut doc = e.prepare(text);
            // Every shard holds the threshold in force (schema 23: it moves at document
            // ends, by the asks of every shard).
            let t = tables[0].density();
            assert!(tables.iter().all(|x| x.density() == t), "document {seq}: the shards' thresholds differ");
            doc.at_density(t);
            let parts = split(doc.items(), n, count);
            let selected = doc.selected();
            let probes: Vec<Probe> = if prepared {
                tables.iter_mut().zip(&parts).map(|(t, items)| probe_items(t, seq, items)).collect()
            } else {
                shards.iter().zip(&mut tables).map(|(s, t)| e.probe_where(t, &doc, seq, |b| s.owns(b, n))).collect()
            };
            let estimate = e.estimate(&doc, seq, &merge_hits(selected, &probes).unwrap(), &by_arrival);
            let mut fb = e.feedback(&doc, &estimate);
            fb.asks = Some(tables.iter().map(|t| t.asks_of_document()).sum());
            for (t, p) in tables.iter_mut().zip(&probes) {
                e.score(t, p, &fb);
            }
            results.push(estimate.result);
        }
        let all = union_of(cfg, &shards, &tables);
        (results, all)
    }

    /// [`sharded`] with every shard probing ahead of the feedback, at most `cap`
    /// documents, as a worker does: each shard gets the feedback of its pending
    /// documents after a random number of later ones (`seed`), when a document
    /// conflicts, or when the next document's threshold may still rise
    /// ([`Table::density_fixed_for`]); it selects the document's shingles at its
    /// threshold, and the feedback sums the asks each shard's probe made. Also returns
    /// how many documents some shard probed while an earlier one was pending.
    fn sharded_ahead(
        cfg: &Config,
        texts: &[String],
        count: u32,
        seed: u64,
        cap: usize,
    ) -> (Vec<DocResult>, Table<Vec<u8>>, usize) {
        let (shards, mut tables) = shard_tables(cfg, count);
        let mut aheads: Vec<Ahead> = shards.iter().map(|_| Ahead::default()).collect();
        let mut delivered = vec![0usize; shards.len()];
        let n = tables[0].buckets();
        let mut e = Engine::new(cfg.clone());
        let (mut results, mut feedback, mut ahead) = (Vec::new(), Vec::<Feedback>::new(), 0);
        let mut g = crate::testdata::XorShift::new(seed | 1);
        let mut rng = move || g.next_u64();
        for (i, text) in texts.iter().enumerate() {
            let seq = i as u64 + 1;
            let prepared = e.prepare(text);
            let (mut probes, mut density, mut asks) = (Vec::new(), None, 0);
            let mut doc = prepared.clone();
            for s in 0..shards.len() {
                let (sh, t) = (shards[s], &mut tables[s]);
                while aheads[s].len() >= cap || aheads[s].len() as u64 >= t.density_fixed_for() {
                    aheads[s].score(&e, t, &feedback[delivered[s]]).unwrap();
                    delivered[s] += 1;
                }
                doc = prepared.clone();
                doc.at_density(t.density());
                assert!(density.is_none_or(|d| d == doc.density()), "document {seq}: the shards' thresholds differ");
                density = Some(doc.density());
                let part = doc.items_where(n, |b| sh.owns(b, n));
                while aheads[s].conflicts(t, &part) {
                    aheads[s].score(&e, t, &feedback[delivered[s]]).unwrap();
                    delivered[s] += 1;
                }
                ahead += usize::from(!aheads[s].is_empty());
                let before = t.asks_of_document();
                probes.push(aheads[s].probe(t, seq, &part).clone());
                asks += t.asks_of_document() - before;
            }
            let estimate = e.estimate(&doc, seq, &merge_hits(doc.selected(), &probes).unwrap(), &by_arrival);
            let mut fb = e.feedback(&doc, &estimate);
            fb.asks = Some(asks);
            feedback.push(fb);
            results.push(estimate.result);
            for s in 0..shards.len() {
                for _ in 0..rng() % 3 {
                    if delivered[s] < feedback.len() {
                        aheads[s].score(&e, &mut tables[s], &feedback[delivered[s]]).unwrap();
                        delivered[s] += 1;
                    }
                }
            }
        }
        for s in 0..shards.len() {
            for fb in &feedback[delivered[s]..] {
                aheads[s].score(&e, &mut tables[s], fb).unwrap();
            }
            assert!(aheads[s].is_empty());
        }
        let all = union_of(cfg, &shards, &tables);
        (results, all, ahead)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        /// Probing ahead of the feedback, wherever the feedback arrives, changes nothing:
        /// the single-node results and table, for every eviction.
        #[test]
        fn probing_ahead_equals_one_node(
            seed in any::<u64>(),
            docs in 1usize..40,
            count in 1u32..4,
            eviction in prop_oneof![Just(Eviction::Random), Just(Eviction::Lru), Just(Eviction::CopyCount), Just(Eviction::Lucky)],
            propagate in any::<bool>(),
            buckets in 1u64..40,
            cap in 1usize..8,
        ) {
            let cfg = small_table(eviction, propagate, buckets);
            let texts = corpus(seed, docs);
            let (want, one) = single(&cfg, &texts);
            let (got, all, _) = sharded_ahead(&cfg, &texts, count, seed, cap);
            prop_assert_eq!(got, want);
            prop_assert_eq!(all.stats(), one.stats());
            prop_assert!(all.memory() == one.memory(), "the union of the shards is the single-node table");
        }

        /// With the adaptive density, shards probing ahead of the feedback (far more
        /// documents than the lag) stop where the threshold may still rise, select at
        /// their threshold and sum their probes' asks in the feedback: one node's results
        /// and table.
        #[test]
        fn adaptive_probing_ahead_equals_one_node(
            seed in any::<u64>(),
            docs in 1usize..50,
            count in 1u32..5,
            eviction in prop_oneof![Just(Eviction::Random), Just(Eviction::Lru), Just(Eviction::CopyCount), Just(Eviction::Lucky)],
            buckets in 1u64..40,
            lag in 1u8..5,
            cap in 1usize..40,
        ) {
            let cfg = adaptive_table(eviction, buckets, lag);
            let texts = corpus(seed, docs);
            let (want, one) = single(&cfg, &texts);
            let (got, all, _) = sharded_ahead(&cfg, &texts, count, seed, cap);
            prop_assert_eq!(got, want);
            prop_assert_eq!(all.stats(), one.stats());
            prop_assert!(all.memory() == one.memory(), "the union of the shards is the single-node table");
        }

        /// Dates: documents published out of order take entries over where
        /// the entries live, and the lookups a revision needs, made by each shard right
        /// after the cause's feedback (a document that may take over is not probed past),
        /// give one node's re-analyses; results and tables are one node's.
        #[test]
        fn dated_shards_equal_one_node(
            seed in any::<u64>(),
            docs in 1usize..30,
            count in 1u32..4,
            eviction in prop_oneof![Just(Eviction::Lru), Just(Eviction::Lucky)],
            propagate in any::<bool>(),
            buckets in 1u64..40,
            cap in 1usize..8,
        ) {
            let cfg = small_table(eviction, propagate, buckets);
            let texts = corpus(seed, docs);
            let mut g = crate::testdata::XorShift::new(seed ^ 0x5eed);
            let times: Vec<i64> = texts.iter().map(|_| (g.next_u64() % 8) as i64).collect();
            let want = single_dated(&cfg, &texts, &times);
            let got = sharded_dated(&cfg, &texts, &times, count, seed, cap);
            prop_assert_eq!(got.0, want.0);
            prop_assert_eq!(got.1, want.1, "the revisions' re-analyses");
            prop_assert!(got.2.memory() == want.2.memory(), "the union of the shards is the single-node table");
        }

        /// The scale-out issue's equality gate on the engine: for every eviction, with and
        /// without propagation, on tables small enough to evict, S shards give the
        /// single-node results and their union the single-node table, counters included.
        #[test]
        fn shards_equal_one_node(
            seed in any::<u64>(),
            docs in 1usize..40,
            count in 1u32..6,
            eviction in prop_oneof![Just(Eviction::Random), Just(Eviction::Lru), Just(Eviction::CopyCount), Just(Eviction::Lucky)],
            propagate in any::<bool>(),
            buckets in 1u64..40,
            prepared in any::<bool>(),
        ) {
            sharded_equals_single(&small_table(eviction, propagate, buckets), &corpus(seed, docs), count, prepared)?;
        }

        /// With the adaptive density and a lag, shards whose feedback sums their asks
        /// keep one threshold, the single node's, and give its results and table.
        #[test]
        fn adaptive_shards_equal_one_node(
            seed in any::<u64>(),
            docs in 1usize..50,
            count in 1u32..6,
            eviction in prop_oneof![Just(Eviction::Random), Just(Eviction::Lru), Just(Eviction::CopyCount), Just(Eviction::Lucky)],
            buckets in 1u64..40,
            lag in 1u8..5,
            prepared in any::<bool>(),
        ) {
            sharded_equals_single(&adaptive_table(eviction, buckets, lag), &corpus(seed, docs), count, prepared)?;
        }
    }

    /// [`sharded`] gives [`single`]'s results, and their union its table, counters included.
    fn sharded_equals_single(cfg: &Config, texts: &[String], count: u32, prepared: bool) -> Result<(), TestCaseError> {
        let (want, one) = single(cfg, texts);
        let (got, all) = sharded(cfg, texts, count, prepared);
        prop_assert_eq!(got, want);
        prop_assert_eq!(all.stats(), one.stats());
        prop_assert!(all.memory() == one.memory(), "the union of the shards is the single-node table");
        Ok(())
    }

    /// One node's results of a corpus published at `times`, and, after each document
    /// that took entries over, the re-analysis of every earlier document (what revisions
    /// would compute), and the table.
    type Dated = (Vec<DocResult>, Vec<DocResult>, Table<Vec<u8>>);

    fn single_dated(cfg: &Config, texts: &[String], times: &[i64]) -> Dated {
        let when = |o: u64| (times[o as usize - 1], o);
        let mut t = Table::in_memory(&cfg.table_params()).unwrap();
        let (mut e, mut other) = (Engine::new(cfg.clone()), Engine::new(cfg.clone()));
        let (mut results, mut revisions) = (Vec::new(), Vec::new());
        for (i, text) in texts.iter().enumerate() {
            let seq = i as u64 + 1;
            let mut doc = e.prepare(text);
            let (result, taken) = e.apply_prepared(&mut t, &mut doc, seq, &when);
            results.push(result);
            if !taken.is_empty() {
                for (j, earlier) in texts[..i].iter().enumerate() {
                    let mut doc = other.prepare(earlier);
                    revisions.push(other.reanalyse(&t, &mut doc, j as u64 + 1, None, &when));
                }
            }
        }
        t.span();
        (results, revisions, t)
    }

    /// [`single_dated`] through `count` shards probing ahead as a worker does (see
    /// [`sharded_ahead`]), each taking entries over by the dates; the feedback of a
    /// document that took over lists every earlier document, and each shard looks
    /// their shingles up when it applies that feedback, whenever it arrives.
    fn sharded_dated(cfg: &Config, texts: &[String], times: &[i64], count: u32, seed: u64, cap: usize) -> Dated {
        let when = |o: u64| (times[o as usize - 1], o);
        let (shards, mut tables) = shard_tables(cfg, count);
        let mut aheads: Vec<Ahead> = shards.iter().map(|_| Ahead::default()).collect();
        let mut delivered = vec![0usize; shards.len()];
        let n = tables[0].buckets();
        let (mut e, mut other) = (Engine::new(cfg.clone()), Engine::new(cfg.clone()));
        let (mut results, mut feedback) = (Vec::new(), Vec::<Feedback>::new());
        // Per document whose feedback revises, each shard's lookups.
        let mut looked_up: std::collections::BTreeMap<u64, Vec<Vec<Probe>>> = Default::default();
        let scorer = Engine::new(cfg.clone());
        let mut deliver = |s: usize, tables: &mut [Table<Vec<u8>>], aheads: &mut [Ahead], fb: &Feedback| {
            let (sh, t) = (shards[s], &mut tables[s]);
            let (seq, found) = aheads[s].score_and_look_up(&scorer, t, fb, |b| sh.owns(b, n)).unwrap();
            if !fb.revise.is_empty() {
                looked_up.entry(seq).or_default().push(found);
            }
        };
        let mut g = crate::testdata::XorShift::new(seed | 1);
        let mut latest = i64::MIN;
        for (i, text) in texts.iter().enumerate() {
            let seq = i as u64 + 1;
            let doc = e.prepare(text);
            let parts = split(doc.items(), n, count);
            let selected = doc.selected();
            let may_take_over = times[i] < latest;
            latest = latest.max(times[i]);
            let (mut probes, mut taken) = (Vec::new(), Vec::new());
            for s in 0..shards.len() {
                while aheads[s].len() >= cap || aheads[s].conflicts(&tables[s], &parts[s]) {
                    deliver(s, &mut tables, &mut aheads, &feedback[delivered[s]]);
                    delivered[s] += 1;
                }
                let later = |o| when(o) > when(seq);
                let p = aheads[s].probe_dated(&mut tables[s], (seq, may_take_over), &parts[s], later).clone();
                taken.extend(p.taken.iter().copied());
                probes.push(p);
            }
            assert!(taken.is_empty() || may_take_over, "only a document published before one seen takes over");
            let estimate = e.estimate(&doc, seq, &merge_hits(selected, &probes).unwrap(), &when);
            let mut fb = e.feedback(&doc, &estimate);
            if !taken.is_empty() {
                fb.revise = texts[..i]
                    .iter()
                    .enumerate()
                    .map(|(j, t)| (j as u64 + 1, other.prepare(t).items().iter().map(|it| it.fp).collect()))
                    .collect();
            }
            feedback.push(fb);
            results.push(estimate.result);
            for s in 0..shards.len() {
                for _ in 0..g.next_u64() % 3 {
                    if delivered[s] < feedback.len() {
                        deliver(s, &mut tables, &mut aheads, &feedback[delivered[s]]);
                        delivered[s] += 1;
                    }
                }
            }
        }
        for s in 0..shards.len() {
            for fb in &feedback[delivered[s]..] {
                deliver(s, &mut tables, &mut aheads, fb);
            }
        }
        let mut revisions = Vec::new();
        for (cause, per_shard) in looked_up {
            for (k, (j, fps)) in feedback[cause as usize - 1].revise.iter().enumerate() {
                let probes: Vec<Probe> = per_shard.iter().map(|f| f[k].clone()).collect();
                let doc = other.prepare(&texts[*j as usize - 1]);
                revisions.push(other.reanalyse_found(&doc, *j, &merge_hits(fps.len(), &probes).unwrap(), &when));
            }
        }
        (results, revisions, union_of(cfg, &shards, &tables))
    }

    #[test]
    fn the_equality_test_runs_with_evictions_and_several_shards() {
        let cfg = Config { bucket_entries: 8, table_bytes: 4096 + 16 * 8 * 13, ..paper() };
        let texts = corpus(7, 40);
        let (want, one) = single(&cfg, &texts);
        assert!(one.stats().evictions > 100, "the small table evicts");
        assert!(want.iter().any(|r| !r.copied_blocks.is_empty()), "the corpus has copies");
        for prepared in [false, true] {
            let (got, all) = sharded(&cfg, &texts, 3, prepared);
            assert_eq!((got, all.memory()), (want.clone(), one.memory()), "prepared: {prepared}");
        }
        // A larger table, where documents rarely share buckets: shards probe ahead.
        let cfg = Config { bucket_entries: 8, table_bytes: 4096 + 16 * 8 * 4096, ..paper() };
        let (want, one) = single(&cfg, &texts);
        let (got, all, ahead) = sharded_ahead(&cfg, &texts, 2, 11, 4);
        assert!(ahead > 20, "the shards probed ahead ({ahead} times)");
        assert_eq!((got, all.memory()), (want, one.memory()));
        // The adaptive density's property above raises the threshold, more than a step
        // at a time, and sweeps at the floor.
        let cfg = adaptive_table(Eviction::Lucky, 13, 3);
        let (want, one) = single(&cfg, &texts);
        let seen: Vec<Option<u8>> = want.iter().map(|r| r.density).collect();
        assert!(seen.windows(2).any(|w| w[1].unwrap_or(crate::select::FLOOR) > w[0].unwrap_or(0) + 1), "{seen:?}");
        assert_eq!(one.density(), crate::select::FLOOR, "{seen:?}");
        let (got, all) = sharded(&cfg, &texts, 3, true);
        assert_eq!((got, all.memory()), (want, one.memory()));
    }
}
