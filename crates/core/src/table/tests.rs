//! The bucket logic against a model: capacity, eviction policies, counters.

use super::*;
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
    assert_eq!(t.process(fp, hit(5), 0).0, None);
    assert_eq!(t.process(fp, hit(9), 0).0, Some(hit(5)));
    assert_eq!(t.lookup(fp).map(|x| x.1), Some(hit(5)));
    assert_eq!(t.lookup(fp ^ 1), None);
    assert_eq!(t.stats().hits, 1);
    assert_eq!(t.stats().occupied, 1);
}

#[test]
fn lru_evicts_least_recently_used() {
    // One bucket of 4 entries: every fingerprint lands in it.
    let p = params(HEADER_BYTES as u64 + 4 * 16, 4, Eviction::Lru);
    let mut t = Table::in_memory(&p).unwrap();
    for fp in 1..=4 {
        t.process(fp, hit(fp), 0);
    }
    t.process(1, hit(9), 0); // 1 becomes most recent
    t.process(5, hit(5), 0); // evicts 2
    assert!(t.lookup(2).is_none());
    for fp in [1, 3, 4, 5] {
        assert_eq!(t.lookup(fp).unwrap().1.origin, fp);
    }
}

#[test]
fn copy_count_evicts_lowest_count() {
    let p = params(HEADER_BYTES as u64 + 4 * 16, 4, Eviction::CopyCount);
    let mut t = Table::in_memory(&p).unwrap();
    for fp in 1..=4 {
        t.process(fp, hit(fp), 0);
    }
    for fp in [1, 2, 4, 1, 2, 4] {
        t.process(fp, hit(99), 0);
    }
    t.process(5, hit(5), 0); // 3 has count 1
    assert!(t.lookup(3).is_none());
    assert!(t.lookup(5).is_some());
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
            let (found, pos) = t.process(fp, hit(i as u64 + 1), i as u64);
            prop_assert!(t.holds(pos, fp));
            if found.is_some() { prop_assert!(model.contains(&fp)); }
            model.insert(fp);
            if eviction == Eviction::Lucky && i % 5 == 0 {
                t.add_scores(&[(pos, 3)]);
            }
        }
        let mut total = 0;
        for b in 0..t.buckets() {
            let e = t.entries_of(b);
            prop_assert!(e.len() <= 8);
            total += e.len() as u64;
            for (fp48, _, _) in e {
                prop_assert!(model.iter().any(|fp| fp & ((1 << 48) - 1) == fp48));
            }
        }
        prop_assert_eq!(total, t.stats().occupied);
        prop_assert_eq!(t.stats().inserts, t.stats().occupied + t.stats().evictions);
        prop_assert!(total <= t.capacity());
        prop_assert_eq!(t.memory().len(), 3 * 8 * 16, "the table never changes size");
    }
}
