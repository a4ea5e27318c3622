//! The shards' equality with one node, against the single-node engine as the reference.

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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// A shard's part of a document split at the starting threshold, kept at any
    /// higher one by the document's marks, is the part of the document kept there.
    #[test]
    fn a_part_kept_at_a_higher_threshold_is_the_part_of_the_document_kept_there(
        seed in any::<u64>(),
        count in 1u32..6,
        buckets in 1u64..40,
    ) {
        let cfg = adaptive_table(Eviction::Lucky, buckets, 32);
        let mut e = Engine::new(cfg.clone());
        let n = Table::in_memory(&cfg.table_params()).unwrap().buckets();
        for text in corpus(seed, 4) {
            let mut doc = e.prepare(&text);
            doc.at_density(crate::select::START);
            let (ranks, tops) = marks(doc.items());
            let parts = split(doc.items(), n, count);
            for t in crate::select::START..=crate::select::FLOOR {
                let mut at_t = doc.clone();
                at_t.at_density(t);
                let want = split(at_t.items(), n, count);
                for s in 0..count as usize {
                    prop_assert_eq!(&part_at_density(&parts[s], (&ranks, &tops), t), &want[s], "threshold {}", t);
                }
            }
        }
    }
}

#[test]
fn merging_refuses_a_gap_or_an_overlap() {
    let p = |items: Vec<u32>| Probe { hits: vec![None; items.len()], items, ..Probe::default() };
    assert_eq!(merge_hits(3, &[p(vec![0, 2]), p(vec![1])]).unwrap().len(), 3);
    assert_eq!(merge_hits(3, &[p(vec![0, 2])]), Err(ShardError::Coverage { item: 1, n: 3, answers: 0 }));
    assert_eq!(merge_hits(3, &[p(vec![0, 1, 2]), p(vec![1])]), Err(ShardError::Coverage { item: 1, n: 3, answers: 2 }));
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
        probing_ahead_equals_single(&small_table(eviction, propagate, buckets), &corpus(seed, docs), count, seed, cap)?;
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
        probing_ahead_equals_single(&adaptive_table(eviction, buckets, lag), &corpus(seed, docs), count, seed, cap)?;
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

/// [`sharded_ahead`] gives [`single`]'s results, and their union its table, counters
/// included.
fn probing_ahead_equals_single(
    cfg: &Config,
    texts: &[String],
    count: u32,
    seed: u64,
    cap: usize,
) -> Result<(), TestCaseError> {
    let (want, one) = single(cfg, texts);
    let (got, all, _) = sharded_ahead(cfg, texts, count, seed, cap);
    prop_assert_eq!(got, want);
    prop_assert_eq!(all.stats(), one.stats());
    prop_assert!(all.memory() == one.memory(), "the union of the shards is the single-node table");
    Ok(())
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
