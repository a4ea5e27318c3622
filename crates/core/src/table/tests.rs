//! The bucket logic against a model: capacity, eviction policies, counters.

use super::*;
use crate::select::{density_rank, FLOOR, SELECTED};
use proptest::prelude::*;

fn params(bytes: u64, entries: u32, eviction: Eviction) -> TableParams {
    TableParams {
        bytes,
        bucket_entries: entries,
        eviction,
        seed: 7,
        lucky_limit: 11,
        index_bytes: crate::index::MIN_INDEX_BYTES,
        fingerprint_text: format!("test {eviction}"),
        adaptive: false,
        density_lag: 0,
    }
}

fn hit(origin: u64) -> Hit {
    Hit { origin, offset: origin as u8, prev: 1, next: 2 }
}

#[test]
fn insert_then_find() {
    let p = params(1 << 20, 64, Eviction::Lucky);
    let mut t = Table::in_memory(&p).unwrap();
    let fp = 0x2bad_cafe_f00d_1234 & crate::rabin::MASK;
    assert_eq!(t.process(fp, hit(5), 0, SELECTED).0, None);
    assert_eq!(t.process(fp, hit(9), 0, SELECTED).0, Some(hit(5)));
    assert_eq!(t.lookup(fp).map(|x| x.1), Some(hit(5)));
    assert_eq!(t.lookup(fp ^ 1 << 6), None);
    assert_eq!(t.stats().hits, 1);
    assert_eq!(t.stats().occupied, 1);
}

#[test]
fn lru_evicts_least_recently_used() {
    // One bucket of 4 entries: every fingerprint lands in it.
    let p = params(HEADER_BYTES as u64 + 4 * 16, 4, Eviction::Lru);
    let mut t = Table::in_memory(&p).unwrap();
    for fp in 1..=4 {
        t.process(fp << 6, hit(fp), 0, SELECTED);
    }
    t.process(1 << 6, hit(9), 0, SELECTED); // 1 becomes most recent
    t.process(5 << 6, hit(5), 0, SELECTED); // evicts 2
    assert!(t.lookup(2 << 6).is_none());
    for fp in [1, 3, 4, 5] {
        assert_eq!(t.lookup(fp << 6).unwrap().1.origin, fp);
    }
}

#[test]
fn copy_count_evicts_lowest_count() {
    let p = params(HEADER_BYTES as u64 + 4 * 16, 4, Eviction::CopyCount);
    let mut t = Table::in_memory(&p).unwrap();
    for fp in 1..=4 {
        t.process(fp << 6, hit(fp), 0, SELECTED);
    }
    for fp in [1, 2, 4, 1, 2, 4] {
        t.process(fp << 6, hit(99), 0, SELECTED);
    }
    t.process(5 << 6, hit(5), 0, SELECTED); // 3 has count 1
    assert!(t.lookup(3 << 6).is_none());
    assert!(t.lookup(5 << 6).is_some());
}

proptest! {
    #[test]
    fn eviction_never_exceeds_capacity(fps in proptest::collection::vec(1u64..5000, 1..600), ev in 0u8..4) {
        let eviction = [Eviction::Random, Eviction::Lru, Eviction::CopyCount, Eviction::Lucky][ev as usize];
        let p = params(HEADER_BYTES as u64 + 3 * 8 * 16, 8, eviction);
        let mut t = Table::in_memory(&p).unwrap();
        let mut model = std::collections::HashSet::new();
        for (i, &fp) in fps.iter().enumerate() {
            // spread over all 62 bits so buckets differ
            let fp = crate::hash::mix(fp) & crate::rabin::MASK;
            let (found, pos) = t.process(fp, hit(i as u64 + 1), i as u64, SELECTED);
            prop_assert!(t.holds(pos, fp));
            if found.is_some() { prop_assert!(model.contains(&fp)); }
            model.insert(fp);
            if eviction == Eviction::Lucky && i % 5 == 0 {
                t.add_scores(&[(pos, fp, 3)]);
            }
        }
        let mut total = 0;
        for b in 0..t.buckets() {
            let e = t.entries_of(b);
            prop_assert!(e.len() <= 8);
            total += e.len() as u64;
            for (stored, _, _) in e {
                prop_assert!(model.iter().any(|fp| fp & !0x3f == stored));
            }
        }
        prop_assert_eq!(total, t.stats().occupied);
        prop_assert_eq!(t.stats().inserts, t.stats().occupied + t.stats().evictions);
        prop_assert!(total <= t.capacity());
        prop_assert_eq!(t.memory().len(), 3 * 8 * 16, "the table never changes size");
    }
}

/// One step of a stream applied to two tables: process a fingerprint of a small pool
/// (so that hits happen), and for Lucky add scores to the positions processed since the
/// last step of that kind, or relabel the entry just processed.
#[derive(Debug, Clone)]
enum Step {
    Process(u16),
    Scores,
    Relabel(u16),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => any::<u16>().prop_map(Step::Process),
        1 => Just(Step::Scores),
        1 => any::<u16>().prop_map(Step::Relabel),
    ]
}

proptest! {
    /// Issue 34, decision 2: a table growing inside its memory answers every operation
    /// as the table spanning its memory from the start (hits, positions, holds, counters
    /// and content digest after every step, every policy, bucket sizes 4-256, bucket
    /// counts that are not powers of two), and once spanned its bytes are that table's.
    #[test]
    fn a_growing_table_is_the_table_that_spans_its_memory(
        steps in proptest::collection::vec(step(), 1..1500),
        buckets in 1u64..40,
        entries_at in 0usize..5,
        ev in 0u8..4,
        pool in 8u16..2000,
    ) {
        let entries = [4u32, 8, 16, 64, 256][entries_at];
        let eviction = [Eviction::Random, Eviction::Lru, Eviction::CopyCount, Eviction::Lucky][ev as usize];
        let p = params(HEADER_BYTES as u64 + buckets * u64::from(entries) * 16, entries, eviction);
        let mut grows = Table::in_memory(&p).unwrap();
        let mut spans = Table::in_memory(&p).unwrap();
        spans.span();
        prop_assert_eq!(grows.used_buckets(), 1);
        let mut recent: Vec<(Position, u64)> = Vec::new();
        for (i, s) in steps.iter().enumerate() {
            let seq = i as u64 + 1;
            match *s {
                Step::Process(k) => {
                    let fp = crate::hash::mix(u64::from(k % pool)) & crate::rabin::MASK;
                    let a = grows.process(fp, hit(seq), seq, SELECTED);
                    let b = spans.process(fp, hit(seq), seq, SELECTED);
                    prop_assert_eq!(a, b);
                    recent.push((a.1, fp));
                }
                Step::Scores if eviction == Eviction::Lucky => {
                    let mut updates: Vec<(Position, u64, u32)> = recent
                        .drain(..)
                        .filter(|&(pos, fp)| spans.holds(pos, fp))
                        .map(|(pos, fp)| (pos, fp, 1 + (fp % 13) as u32))
                        .collect();
                    updates.sort_by_key(|u| u.0);
                    updates.dedup_by_key(|u| u.0);
                    grows.add_scores(&updates);
                    spans.add_scores(&updates);
                }
                Step::Scores => recent.clear(),
                Step::Relabel(o) => {
                    if let Some(&(pos, fp)) = recent.last() {
                        let held = spans.holds(pos, fp);
                        prop_assert_eq!(grows.holds(pos, fp), held);
                        if held {
                            grows.relabel(pos, fp, u64::from(o) + 1, o as u8);
                            spans.relabel(pos, fp, u64::from(o) + 1, o as u8);
                        }
                    }
                }
            }
            prop_assert_eq!(grows.stats(), spans.stats());
            prop_assert_eq!(grows.digest(), spans.digest());
            prop_assert_eq!(grows.misplaced(0..buckets), None, "every entry where its shift puts it");
            if spans.stats().evictions == 0 {
                prop_assert!(grows.stats().occupied <= grows.used_buckets() * u64::from(entries));
            } else {
                prop_assert_eq!(grows.shift(), 0, "no eviction before the table spans its memory");
            }
        }
        let used = grows.used_buckets() as usize * entries as usize * ENTRY_BYTES;
        prop_assert!(grows.memory()[used..].iter().all(|&b| b == 0), "nothing is written past the buckets in use");
        grows.span();
        prop_assert!(grows.memory() == spans.memory(), "spanned, the bytes are the same");
    }
}

#[test]
fn the_buckets_in_use_double_and_follow_the_entries() {
    let p = params(HEADER_BYTES as u64 + 1000 * 64 * 16, 64, Eviction::Lucky);
    let mut t = Table::in_memory(&p).unwrap();
    assert_eq!((t.shift(), t.used_buckets()), (10, 1));
    let mut used = vec![t.used_buckets()];
    for i in 0..20_000u64 {
        t.process(crate::hash::mix(i) & crate::rabin::MASK, hit(i + 1), i, SELECTED);
        if *used.last().unwrap() != t.used_buckets() {
            used.push(t.used_buckets());
        }
        // Room for at least a third as many entries again as the table holds: the
        // buckets in use double only when one would overflow.
        assert!(t.used_buckets() == 1 || t.used_buckets() * 64 <= 4 * t.stats().occupied.max(64), "{i}");
    }
    assert_eq!(used, [1, 2, 4, 8, 16, 32, 63, 125, 250, 500]);
    assert_eq!(t.stats().evictions, 0);
}

/// Fingerprints whose density rank `rank` accepts, distinct from `not`.
fn with_rank(rank: impl Fn(u8) -> bool, not: &[u64]) -> u64 {
    (1u64..)
        .map(|i| crate::hash::mix(i) & crate::rabin::MASK)
        .find(|&fp| rank(density_rank(fp)) && !not.contains(&fp))
        .expect("some fingerprint")
}

/// One bucket of four entries with an adaptive density.
fn adaptive_bucket() -> Table<Vec<u8>> {
    Table::in_memory(&TableParams { adaptive: true, ..params(4096 + 16 * 4, 4, Eviction::Lucky) }).unwrap()
}

/// Fills `t` (one bucket of four) at threshold 0 with two policy shingles and two extra
/// ones, of ranks 0 (`e0`) and at least 2 (`e2`): returns the four policy shingles (two
/// of them not in yet) and `[e0, e2, e0b]`, `e0b` another of rank 0 not in yet.
fn fill_at_threshold_0(t: &mut Table<Vec<u8>>) -> (Vec<u64>, [u64; 3]) {
    t.stats_mut().density = 0;
    let p: Vec<u64> = (0..4).fold(Vec::new(), |mut v, _| {
        v.push(with_rank(|_| true, &v));
        v
    });
    let e0 = with_rank(|r| r == 0, &p);
    let e2 = with_rank(|r| r >= 2, &[&p[..], &[e0]].concat());
    let e0b = with_rank(|r| r == 0, &[&p[..], &[e0, e2]].concat());
    for (i, (fp, rank)) in [(p[0], SELECTED), (p[1], SELECTED), (e0, 0), (e2, density_rank(e2))].into_iter().enumerate()
    {
        t.process(fp, hit(i as u64 + 1), 0, rank);
    }
    (p, [e0, e2, e0b])
}

#[test]
fn extra_entries_go_first_and_the_density_falls_to_the_papers_when_the_table_needs_room() {
    let mut t = adaptive_bucket();
    assert_eq!(t.density(), crate::select::START, "a new table starts at a quarter");
    let (p, [e0, e2, e0b]) = fill_at_threshold_0(&mut t);
    assert_eq!((t.stats().occupied, t.density()), (4, 0));
    // A policy shingle into the full bucket: no extra entry is stale at 0, so the
    // threshold goes to the floor (at once: no lag), which leaves both extra entries
    // behind; one goes, and the new entry is last.
    let (_, pos) = t.process(p[2], hit(5), 0, SELECTED);
    assert_eq!((t.density(), pos.slot), (FLOOR, 2));
    assert!(t.lookup(p[2]).is_some() && (t.lookup(e0).is_some() != t.lookup(e2).is_some()));
    // At the floor an extra shingle is not selected: looked up, not inserted.
    let (found, pos) = t.process(e0b, hit(6), 0, 0);
    assert!(found.is_none() && t.lookup(e0b).is_none() && !t.holds(pos, e0b));
    // A policy shingle that finds the extra entry left makes the policy's entry anew, as
    // the paper's table would (not found: the paper's never held it; last in the
    // bucket, with its own data): the next policy shingle then evicts by Lucky's
    // scores among four policy entries.
    let left = if t.lookup(e0).is_some() { e0 } else { e2 };
    let (found, pos) = t.process(left, hit(7), 0, SELECTED);
    assert_eq!((found, pos.slot), (None, 3));
    assert_eq!(t.lookup(left).map(|(_, h)| h), Some(hit(7)));
    t.process(p[3], hit(8), 0, SELECTED);
    assert_eq!((t.stats().evictions, t.stats().occupied), (2, 4));
}

/// Schema 23: with a lag, a full bucket whose extra entries are all current gives one
/// up and asks for a raise, which comes at the end of the lag's last document (here 3:
/// the end of the table's document 2), not at once; a second ask meanwhile waits for
/// it. The raise goes to the floor, and the end of that document sweeps the extra
/// entries out.
#[test]
fn with_a_lag_the_density_falls_at_a_document_end_the_lag_after_the_first_ask() {
    let mut t = adaptive_bucket();
    t.set_density(true, 3);
    let end = |t: &mut Table<Vec<u8>>| {
        t.stats_mut().documents += 1;
        t.end_document();
    };
    let (p, [e0, e2, e0b]) = fill_at_threshold_0(&mut t);
    assert_eq!(t.density_fixed_for(), 3, "no ask: the next three documents select at 0");
    // Document 0: nothing is stale at 0, so the bucket gives up an extra entry by
    // the policy's rule and asks (counted at the document's end); the threshold stays.
    t.process(p[2], hit(5), 0, SELECTED);
    assert_eq!((t.density(), t.asks_of_document(), t.stats().evictions), (0, 1, 1));
    assert!(t.lookup(p[2]).is_some() && (t.lookup(e0).is_some() != t.lookup(e2).is_some()));
    end(&mut t);
    assert_eq!((t.density(), t.pending_raise().age), (0, 2));
    assert_eq!(t.density_fixed_for(), 2, "documents 1 and 2 select at 0, the raise comes at 2's end");
    // Document 1: an extra shingle of rank 0 takes the other extra entry's place (a
    // second ask, which waits for the first).
    let (found, pos) = t.process(e0b, hit(6), 0, 0);
    assert!(found.is_none() && t.holds(pos, e0b) && t.lookup(e0).is_none() && t.lookup(e2).is_none());
    end(&mut t);
    assert_eq!((t.density(), t.pending_raise().age, t.density_fixed_for()), (0, 3, 1));
    // The end of document 2 raises it to the floor and sweeps the extra entry out.
    end(&mut t);
    assert_eq!((t.density(), t.pending_raise()), (FLOOR, PendingRaise::default()));
    assert_eq!((t.density_fixed_for(), t.stats().occupied), (u64::MAX, 3));
    assert!(t.lookup(e0b).is_none());
    t.process(p[3], hit(7), 0, SELECTED);
    assert_eq!((t.stats().occupied, t.stats().evictions), (4, 2), "a free slot: nothing evicted");
}

#[test]
fn at_the_floor_the_extra_entries_are_swept_out_at_the_end_of_the_document() {
    let mut t = adaptive_bucket();
    t.stats_mut().density = FLOOR - 1;
    let p0 = with_rank(|_| true, &[]);
    let e = [with_rank(|r| r >= FLOOR, &[p0])];
    let e = [e[0], with_rank(|r| r >= FLOOR, &[p0, e[0]])];
    let e = [e[0], e[1], with_rank(|r| r >= FLOOR, &[p0, e[0], e[1]])];
    t.process(p0, hit(1), 0, SELECTED);
    for (i, &fp) in e.iter().enumerate() {
        t.process(fp, hit(i as u64 + 2), 0, density_rank(fp));
    }
    let p1 = with_rank(|_| true, &[p0, e[0], e[1], e[2]]);
    t.process(p1, hit(5), 0, SELECTED);
    assert_eq!((t.density(), t.stats().occupied, t.stats().evictions), (FLOOR, 4, 1));
    t.end_document();
    assert_eq!(t.stats().occupied, 2);
    assert!(t.lookup(p0).is_some() && t.lookup(p1).is_some() && e.iter().all(|&fp| t.lookup(fp).is_none()));
}

proptest! {
    /// A bucket's entries in use and its lookup, read several slots at a time, against
    /// a slot at a time: buckets of any size, filled to any count, with fingerprints
    /// that share tags (the lookup must go on past a tag whose record differs).
    #[test]
    fn a_bucket_read_by_words_is_the_bucket_read_by_slots(
        n in 4usize..=80,
        fill in 0usize..=80,
        pool in proptest::collection::vec(any::<u64>(), 1..6),
        picks in proptest::collection::vec((0usize..6, any::<u16>()), 80),
        probe in (0usize..6, any::<u16>()),
    ) {
        use bucket::{entry_matches, find, occupied, write_entry};
        let count = fill.min(n);
        let mut data = vec![0u8; n * 16];
        // A fingerprint of the pool with its tag bits (6-21) kept or replaced.
        let fp = |(i, t): (usize, u16)| {
            let f = pool[i % pool.len()];
            if t % 3 == 0 { f } else { f & !(0xffff << 6) | u64::from(t % 4) << 6 }
        };
        for (slot, &pick) in picks.iter().enumerate().take(count) {
            write_entry(&mut data, n, slot, fp(pick), hit(1), false);
        }
        prop_assert_eq!(occupied(&data, n), count);
        let want = fp(probe);
        prop_assert_eq!(find(&data, n, want), (0..count).find(|&s| entry_matches(&data, n, s, want)));
    }
}
