use std::collections::{BTreeSet, HashMap};

use proptest::prelude::*;

use super::grow::Section;
use super::*;

/// A document of the generated streams: its words, sentence signatures, key hashes.
fn doc(words: &[u64], sigs: &[u64], keys: &[u64]) -> IndexAdd {
    let mut w = words.to_vec();
    w.sort_unstable();
    w.dedup();
    IndexAdd {
        words: w,
        signatures: sigs.iter().enumerate().map(|(i, &s)| (i as u32, s)).collect(),
        nd_keys: keys.to_vec(),
    }
}

fn stream() -> impl Strategy<Value = Vec<(Vec<u64>, Vec<u64>, Vec<u64>)>> {
    // Few distinct values, so that words, signatures and keys repeat.
    let doc = (
        prop::collection::vec(0u64..300, 0..40),
        prop::collection::vec(
            prop_oneof![
                3 => any::<u32>().prop_map(|x| u64::from(x) & 0xffff_00ff),
                // A few signatures within a few bits of each other, repeated often.
                1 => (0u64..6).prop_map(|x| 0x0f0f_00f0 | x),
            ],
            0..6,
        ),
        prop::collection::vec(0u64..200, 0..8),
    );
    prop::collection::vec(doc, 1..60)
}

/// The bytes of the buckets `part` holds, section after section.
fn held_bytes(idx: &Indexes<Vec<u8>>, part: IndexPart) -> Vec<u8> {
    let s = idx.shape();
    let sections = [
        (s.df_at(), s.df_buckets, DF_BUCKET, 1),
        (s.sig_at(), s.sig_buckets, s.sig_entries, SIG_BLOCK),
        (s.nd_at(), s.nd_buckets, ND_BUCKET, 1),
    ];
    let mut out = Vec::new();
    for (at, n, entries, group) in sections {
        for b in (0..n).filter(|b| part.holds(b / group, n.div_ceil(group))) {
            let from = at + b as usize * entries * ENTRY;
            out.extend_from_slice(&idx.bytes()[from..from + entries * ENTRY]);
        }
    }
    out
}

/// A region of more than one signature block.
const BLOCKS_BYTES: u64 = 2 << 20;

/// Documents of four distinct signatures, many of them, three with a piece whose home
/// is among the last buckets of a signature block: their chains fill, reach the block's
/// end and evict.
fn spilling_stream() -> impl Strategy<Value = Vec<(Vec<u64>, Vec<u64>, Vec<u64>)>> {
    // Chains are the layout by pieces'.
    let q = QuoteConfig { exact_index: false, ..QuoteConfig::default() };
    let shape = IndexShape::new(BLOCKS_BYTES, &q).unwrap();
    assert!(shape.sig_buckets > SIG_BLOCK, "more than one block");
    let mut sigs: Vec<u64> = (0u64..)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) & 0xffff_00ff)
        .filter(|&sig| (0..q.pieces).any(|p| shape.sig_home(p, quote::piece(&q, sig, p)) % SIG_BLOCK >= SIG_BLOCK - 4))
        .take(3)
        .collect();
    sigs.push(0x0f0f_00ff);
    let doc = (
        prop::collection::vec(0u64..300, 0..20),
        prop::collection::vec(prop::sample::select(sigs), 0..16),
        prop::collection::vec(0u64..200, 0..8),
    );
    prop::collection::vec(doc, 100..250)
}

/// Documents of signatures spread over every signature block: eight of any bits, each
/// with variants a bit or two apart (candidates within small radii).
fn spread_stream() -> impl Strategy<Value = Vec<(Vec<u64>, Vec<u64>, Vec<u64>)>> {
    let bases = (1u64..=8).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17) ^ 0x5555_aaaa_3333_cccc);
    let sigs: Vec<u64> = bases.flat_map(|b| [b, b ^ 1 << 7, b ^ (1 << 40 | 1 << 3)]).collect();
    let doc = (
        prop::collection::vec(0u64..300, 0..20),
        prop::collection::vec(prop::sample::select(sigs), 0..16),
        prop::collection::vec(0u64..200, 0..8),
    );
    prop::collection::vec(doc, 50..150)
}

/// Documents of few words, signatures and keys, each repeated more often than a
/// bucket holds entries: final buckets full of one key.
fn hot_stream() -> impl Strategy<Value = Vec<(Vec<u64>, Vec<u64>, Vec<u64>)>> {
    let doc = (
        prop::collection::vec(0u64..20, 0..10),
        prop::collection::vec(prop::sample::select(vec![0xffff_fff0u64, 0xffff_ff0f, 0x0f0f_00f0, 0x1234]), 0..6),
        prop::collection::vec(0u64..3, 1..8),
    );
    prop::collection::vec(doc, 100..200)
}

/// A part's searched ranges hold exactly the signature buckets and near-duplicate
/// buckets it holds, and the parts' ranges tile the two sections.
#[test]
fn searched_ranges_hold_the_parts_buckets() {
    let q = QuoteConfig::default();
    for bytes in [MIN_INDEX_BYTES, BLOCKS_BYTES, 8 << 20] {
        let s = IndexShape::new(bytes, &q).unwrap();
        for shards in 1..=5 {
            let mut covered = 0;
            for shard in 0..shards {
                let part = IndexPart { shard, shards };
                let [head, sig, nd] = part.searched_ranges(&s);
                assert_eq!(head, 0..INDEX_HEADER_BYTES);
                let sig_len = s.sig_entries * ENTRY;
                for b in 0..s.sig_buckets {
                    let at = s.sig_at() + b as usize * sig_len;
                    let holds = part.holds(b / SIG_BLOCK, s.sig_buckets.div_ceil(SIG_BLOCK));
                    assert_eq!(sig.contains(&at), holds, "{bytes} {shard}/{shards} signature bucket {b}");
                }
                for b in 0..s.nd_buckets {
                    let at = s.nd_at() + b as usize * ND_BUCKET * ENTRY;
                    assert_eq!(
                        nd.contains(&at),
                        part.holds(b, s.nd_buckets),
                        "{bytes} {shard}/{shards} key bucket {b}"
                    );
                }
                covered += sig.len() + nd.len();
            }
            let sections = s.sig_buckets as usize * s.sig_entries * ENTRY + s.nd_buckets as usize * ND_BUCKET * ENTRY;
            assert_eq!(covered, sections, "{bytes} {shards}: the sections' bytes, once");
        }
    }
}

proptest! {
    /// Shards that each add only the keys of their part answer, together, what
    /// the whole region answers: document frequencies, quotation candidates (with what
    /// the caps left out), near-duplicate candidates and the counters; in the smallest
    /// region (buckets evict) and in one of several signature blocks (values spill to
    /// the ends of their blocks); each part given the whole work or only its part of it
    /// (`IndexWork::part`, as `cluster submit --prepared` sends it).
    #[test]
    fn parts_answer_as_the_whole(
        docs in prop_oneof![spilling_stream(), spread_stream()],
        shards in 1u32..=4,
        d in 0u32..=3,
        bytes in prop::sample::select(vec![MIN_INDEX_BYTES, BLOCKS_BYTES]),
        parted in any::<bool>(),
        exact in any::<bool>(),
    ) {
        // Laid out for exact searches (the default) or by pieces, for searches within `d`.
        let q = QuoteConfig { max_per_probe: 3, exact_index: exact, ..QuoteConfig::default() };
        let d = if q.exact_only() { 0 } else { d };
        let nd = NearDupConfig { max_per_key: 2, ..NearDupConfig::default() };
        // Spanning from the start, as a worker's part is (the whole, to compare bytes).
        let mut whole = Indexes::spanning(bytes, &q).unwrap();
        let parts: Vec<IndexPart> = (0..shards).map(|shard| IndexPart { shard, shards }).collect();
        let mut held: Vec<_> = parts.iter().map(|_| Indexes::spanning(bytes, &q).unwrap()).collect();
        let shape = whole.shape();
        for (i, (w, s, k)) in docs.iter().enumerate() {
            let seq = i as u64 + 1;
            let add = doc(w, s, k);
            let queries = IndexQueries { quotes: s.iter().map(|&sig| (sig, d)).collect(), nd_keys: k.clone() };
            let work = IndexWork { queries, add: add.clone() };
            let works: Vec<IndexWork> = match parted {
                true => parts.iter().map(|part| work.part(&q, &shape, *part)).collect(),
                false => parts.iter().map(|_| work.clone()).collect(),
            };
            let got = IndexAnswers::merge(
                parts.iter().zip(&held).zip(&works).map(|((part, idx), w)| idx.answer_part((&q, &nd), seq, &w.queries, *part)),
            );
            let answered = Answered { frequencies: &whole, answers: &got };
            for &sig in s {
                prop_assert_eq!(answered.quote_candidates(&q, sig, d).unwrap(), whole.quote_candidates(&q, sig, d));
            }
            prop_assert_eq!(answered.nd_candidates(&nd, seq, k), whole.nd_candidates(&nd, seq, k));
            for &x in &add.words {
                let holder = parts.iter().position(|p| p.holds_word(&shape, x)).unwrap();
                prop_assert_eq!(held[holder].df(x), whole.df(x));
            }
            whole.add(&q, seq, &add);
            for ((part, idx), w) in parts.iter().zip(&mut held).zip(&works) {
                idx.add_part(&q, seq, &w.add, *part);
            }
        }
        for (part, idx) in parts.iter().zip(&held) {
            prop_assert!(held_bytes(idx, *part) == held_bytes(&whole, *part), "part {:?} holds other bytes", part);
        }
        let sum = |f: fn(&IndexStats) -> u64| held.iter().map(|i| f(&i.stats())).sum::<u64>();
        let st = whole.stats();
        prop_assert_eq!(sum(|s| s.df_inserts + s.df_evictions), st.df_inserts + st.df_evictions);
        prop_assert_eq!(sum(|s| s.sig_inserts + s.sig_evictions), st.sig_inserts + st.sig_evictions);
        prop_assert_eq!(sum(|s| s.nd_inserts + s.nd_evictions), st.nd_inserts + st.nd_evictions);
        for idx in &held {
            prop_assert_eq!(idx.documents(), st.documents);
        }
    }

    /// Without evictions (and without the copy bound) the bounded indexes answer
    /// exactly what a full scan of every added entry answers.
    #[test]
    fn unevicted_indexes_equal_a_full_scan(docs in stream(), d in 0u32..=3, exact in any::<bool>()) {
        let q = QuoteConfig { max_per_probe: u32::MAX, max_sources: u32::MAX, exact_index: exact, ..QuoteConfig::default() };
        let d = if q.exact_only() { 0 } else { d };
        let nd = NearDupConfig { max_per_key: u32::MAX, ..NearDupConfig::default() };
        let mut idx = Indexes::in_memory(16 << 20, &q).unwrap();
        let mut df: HashMap<u64, u64> = HashMap::new();
        let mut sigs: Vec<(u64, u64, u32)> = Vec::new();
        let mut keys: Vec<(u64, u64)> = Vec::new();
        for (i, (w, s, k)) in docs.iter().enumerate() {
            let seq = i as u64 + 1;
            let add = doc(w, s, k);
            // Queries before the document is added see only the earlier ones.
            for &sig in s {
                let want: BTreeSet<(u64, u32, u32)> =
                    sigs.iter().filter(|e| (e.0 ^ sig).count_ones() <= d).map(|e| (e.1, e.2, (e.0 ^ sig).count_ones())).collect();
                prop_assert_eq!(idx.quote_candidates(&q, sig, d).0, want.into_iter().collect::<Vec<_>>());
            }
            let want: BTreeSet<u64> = keys.iter().filter(|e| k.contains(&e.0)).map(|e| e.1).collect();
            prop_assert_eq!(idx.nd_candidates(&nd, seq, k), want);
            for &x in &add.words {
                prop_assert_eq!(idx.df(x), df.get(&x).copied().unwrap_or(0));
            }
            idx.add(&q, seq, &add);
            for &x in &add.words {
                *df.entry(x).or_default() += 1;
            }
            sigs.extend(add.signatures.iter().map(|&(n, s)| (s, seq, n)));
            keys.extend(k.iter().map(|&x| (x, seq)));
        }
        let st = idx.stats();
        prop_assert_eq!(st.documents, docs.len() as u64);
        prop_assert_eq!(st.df_evictions + st.sig_evictions + st.nd_evictions, 0);
        prop_assert_eq!(st.sig_copies, 0);
    }

    /// A small region evicts, never answers what was not added, and is deterministic.
    #[test]
    fn evicting_indexes_answer_a_subset_of_a_full_scan(docs in stream()) {
        let q = QuoteConfig::default();
        let nd = NearDupConfig::default();
        let build = || {
            let mut idx = Indexes::in_memory(MIN_INDEX_BYTES, &q).unwrap();
            let mut all: Vec<(u64, u64)> = Vec::new();
            for (i, (w, s, k)) in docs.iter().enumerate() {
                let seq = i as u64 + 1;
                let found = idx.nd_candidates(&nd, seq, k);
                let want: BTreeSet<u64> = all.iter().filter(|e| k.contains(&e.0)).map(|e| e.1).collect();
                assert!(found.is_subset(&want));
                idx.add(&q, seq, &doc(w, s, k));
                all.extend(k.iter().map(|&x| (x, seq)));
            }
            idx.digest()
        };
        prop_assert_eq!(build(), build());
    }
}

/// Each final bucket's entries in order, section after section: those of the bucket
/// in use holding it that map to it.
fn final_entries(idx: &Indexes<Vec<u8>>) -> Vec<Vec<(u64, u64)>> {
    let mut out = Vec::new();
    for sec in [Section::Df, Section::Sig, Section::Nd] {
        let in_use = idx.in_use(sec);
        let n = match sec {
            Section::Df => idx.shape.df_buckets,
            Section::Sig => idx.shape.sig_buckets,
            Section::Nd => idx.shape.nd_buckets,
        };
        for b in 0..n {
            let bucket = &idx.bytes()[in_use.of(b)];
            let mine = |&(a, _): &(u64, u64)| in_use.shift == 0 || idx.final_bucket(sec, a) == b;
            out.push(entries(bucket).filter(mine).collect());
        }
    }
    out
}

proptest! {
    /// A new region, whose sections grow, answers every question as a region spanning
    /// its sections from the start, and holds the same entries in each final bucket in
    /// the same order after every document: in the smallest region (every section
    /// evicts) and in larger ones, laid out for exact searches or by pieces.
    #[test]
    fn a_growing_region_answers_as_one_spanning_it(
        docs in prop_oneof![stream(), spread_stream(), hot_stream()],
        bytes in prop::sample::select(vec![MIN_INDEX_BYTES, 96 << 10, BLOCKS_BYTES]),
        exact in any::<bool>(),
        d in 0u32..=3,
    ) {
        let q = QuoteConfig { max_per_probe: 3, max_sources: 2, exact_index: exact, ..QuoteConfig::default() };
        let d = if q.exact_only() { 0 } else { d };
        let nd = NearDupConfig { max_per_key: 2, ..NearDupConfig::default() };
        let mut growing = Indexes::in_memory(bytes, &q).unwrap();
        let mut spanning = Indexes::spanning(bytes, &q).unwrap();
        prop_assert_eq!(growing.buckets_in_use(), (1, if q.exact_only() { 1 } else { growing.shape.sig_buckets }, 1));
        for (i, (w, s, k)) in docs.iter().enumerate() {
            let seq = i as u64 + 1;
            for &sig in s {
                prop_assert_eq!(growing.quote_candidates(&q, sig, d), spanning.quote_candidates(&q, sig, d));
            }
            prop_assert_eq!(growing.nd_candidates(&nd, seq, k), spanning.nd_candidates(&nd, seq, k));
            let add = doc(w, s, k);
            growing.add(&q, seq, &add);
            spanning.add(&q, seq, &add);
            prop_assert!(final_entries(&growing) == final_entries(&spanning), "document {}", seq);
            prop_assert_eq!(growing.stats(), spanning.stats());
        }
        for x in 0..300 {
            prop_assert_eq!(growing.df(x), spanning.df(x));
        }
    }
}

/// A region's sections double as they fill: one bucket in use at first, the entries
/// of a bucket that splits in their final buckets, a part refused in a growing region.
#[test]
fn a_section_doubles_when_its_bucket_in_use_fills() {
    let q = QuoteConfig::default();
    let mut idx = Indexes::in_memory(8 << 20, &q).unwrap();
    assert_eq!(idx.buckets_in_use(), (1, 1, 1));
    // The one key bucket in use has a final bucket's room; a signature bucket in use
    // the room of four.
    let room = ND_BUCKET;
    let keys: Vec<u64> = (0..room as u64 + 1).collect();
    idx.add(&q, 1, &doc(&[], &[], &keys[..room]));
    assert_eq!(idx.buckets_in_use().2, 1, "a bucket in use of {room} holds them");
    idx.add(&q, 2, &doc(&[], &[], &keys[room..]));
    assert_eq!(idx.buckets_in_use().2, 2, "the next one doubles them");
    let sigs: Vec<u64> = (1..=4 * idx.shape.sig_entries as u64 + 1).map(|i| i << 8).collect();
    idx.add(&q, 3, &doc(&[], &sigs[1..], &[]));
    assert_eq!(idx.buckets_in_use().1, 1, "a signature bucket in use of four final buckets' room holds them");
    idx.add(&q, 4, &doc(&[], &sigs[..1], &[]));
    assert_eq!(idx.buckets_in_use().1, 2);
    assert_eq!(idx.stats().nd_evictions, 0);
    let nd = NearDupConfig { max_per_key: u32::MAX, ..NearDupConfig::default() };
    assert_eq!(idx.nd_candidates(&nd, 3, &keys).len(), 2);
    // A final bucket full of one key evicts in place: no doubling can make it room.
    let mut hot = Indexes::in_memory(8 << 20, &q).unwrap();
    for seq in 1..=2 * ND_BUCKET as u64 {
        hot.add(&q, seq, &doc(&[], &[], &[7]));
    }
    assert_eq!(hot.buckets_in_use().2, 1);
    assert_eq!(hot.stats().nd_evictions, ND_BUCKET as u64);
    let part = IndexPart { shard: 0, shards: 2 };
    let refused = std::panic::catch_unwind(|| idx.quote_candidates_part(&q, 1, 0, part));
    assert!(refused.is_err(), "a part is held in a spanning region");
}

#[test]
fn a_full_bucket_keeps_its_older_half_and_queues_the_newer() {
    let q = QuoteConfig::default();
    let nd = NearDupConfig::default();
    let mut idx = Indexes::in_memory(MIN_INDEX_BYTES, &q).unwrap();
    let n = ND_BUCKET as u64;
    for seq in 1..=n + 3 {
        idx.add(&q, seq, &IndexAdd { nd_keys: vec![7], ..IndexAdd::default() });
    }
    let found = idx.nd_candidates(&NearDupConfig { max_per_key: u32::MAX, ..nd.clone() }, u64::MAX, &[7]);
    let half = n / 2;
    let want: BTreeSet<u64> = (1..=half).chain(half + 4..=n + 3).collect();
    assert_eq!(found, want, "the oldest half kept, the oldest 3 of the newer half dropped");
    assert_eq!(idx.stats().nd_evictions, 3);
    let first = idx.nd_candidates(&NearDupConfig { max_per_key: 2, ..nd }, u64::MAX, &[7]);
    assert_eq!(first, [1, 2].into_iter().collect(), "the oldest first");
}

#[test]
fn a_full_df_bucket_evicts_its_rarest_word() {
    let q = QuoteConfig::default();
    let mut idx = Indexes::in_memory(MIN_INDEX_BYTES, &q).unwrap();
    // Words that share one final bucket (the buckets in use double until it is one).
    let bucket = |w: u64| bucket_of(w, DF_SALT, idx.shape.df_buckets);
    let same: Vec<u64> = (0..).filter(|&w| bucket(w) == bucket(0)).take(DF_BUCKET + 1).collect();
    for (i, &w) in same[..DF_BUCKET].iter().enumerate() {
        // Word i is in i + 2 documents, except word 5, in one.
        let times = if i == 5 { 1 } else { i + 2 };
        for _ in 0..times {
            idx.add(&q, 1, &IndexAdd { words: vec![w], ..IndexAdd::default() });
        }
    }
    idx.add(&q, 2, &IndexAdd { words: vec![same[DF_BUCKET]], ..IndexAdd::default() });
    assert_eq!(idx.df(same[5]), 0, "the rarest word was evicted");
    assert_eq!(idx.df(same[DF_BUCKET]), 1);
    assert_eq!(idx.df(same[3]), 5);
    assert_eq!(idx.stats().df_evictions, 1);
}

#[test]
fn shapes_fit_their_region() {
    for bytes in [MIN_INDEX_BYTES, 1 << 20, 3 << 20, 256 << 20] {
        let s = IndexShape::new(bytes, &QuoteConfig::default()).unwrap();
        assert!(s.nd_at() + s.nd_buckets as usize * ND_BUCKET * ENTRY <= bytes as usize);
        assert!(s.df_buckets >= 1 && s.sig_buckets >= 1 && s.nd_buckets >= 1, "{s:?}");
    }
    let by_pieces = QuoteConfig { exact_index: false, ..QuoteConfig::default() };
    let s = IndexShape::new(256 << 20, &by_pieces).unwrap();
    assert_eq!(s.sig_buckets, 2 << 16, "one bucket per piece value");
    let s = IndexShape::new(256 << 20, &QuoteConfig::default()).unwrap();
    assert_eq!(s.sig_entries, SIG_MIN_BUCKET, "laid out for exact searches: buckets of 32");
    assert_eq!(s.sig_buckets as usize, ((256 << 20) - INDEX_HEADER_BYTES) / 8 * 3 / ENTRY / SIG_MIN_BUCKET);
    assert!(IndexShape::new(MIN_INDEX_BYTES - 1, &QuoteConfig::default()).is_err());
}

#[test]
fn a_frequent_piece_value_spills_into_the_next_buckets() {
    let q =
        QuoteConfig { max_per_probe: u32::MAX, max_sources: u32::MAX, exact_index: false, ..QuoteConfig::default() };
    let mut idx = Indexes::in_memory(1 << 20, &q).unwrap();
    let per_bucket = idx.shape().sig_entries as u64;
    let n = 3 * per_bucket;
    let sig = 0x0f0f_00ff;
    for seq in 1..=n {
        idx.add(&q, seq, &IndexAdd { signatures: vec![(0, sig)], ..IndexAdd::default() });
    }
    assert_eq!(idx.stats().sig_evictions, 0, "three buckets' worth fit in the chain");
    let (found, _) = idx.quote_candidates(&q, sig, 0);
    assert_eq!(found.len() as u64, n, "every one found through the chain");
    // Past the chain, the home bucket evicts, and what is found is still a subset.
    for seq in n + 1..=n + SIG_SPILL * per_bucket {
        idx.add(&q, seq, &IndexAdd { signatures: vec![(0, sig)], ..IndexAdd::default() });
    }
    assert!(idx.stats().sig_evictions > 0);
    assert!(idx.quote_candidates(&q, sig, 0).0.iter().all(|&(s, i, d)| s >= 1 && i == 0 && d == 0));
}

/// A signature is added to a bucket while fewer than `max_sources` entries there hold
/// it (a sentence repeated in a thousand documents is found through its first copies,
/// what a search reports): the copies after are counted, not added, in each piece's
/// chain; a signature sharing its first piece is still added.
#[test]
fn a_signature_is_added_at_most_max_sources_times() {
    let q = QuoteConfig { max_sources: 3, exact_index: false, ..QuoteConfig::default() };
    let mut idx = Indexes::in_memory(1 << 20, &q).unwrap();
    let sig: u64 = 0x0f0f_00ff;
    for seq in 1..=6 {
        idx.add(&q, seq, &IndexAdd { signatures: vec![(0, sig), (1, sig ^ 0x0100_0000)], ..IndexAdd::default() });
    }
    assert_eq!(idx.quote_candidates(&q, sig, 0).0, vec![(1, 0, 0), (2, 0, 0), (3, 0, 0)]);
    assert_eq!(idx.quote_candidates(&q, sig ^ 0x0100_0000, 0).0.len(), 3);
    assert_eq!(idx.quote_candidates(&q, sig, 1).0.len(), 6, "both signatures within one bit");
    let st = idx.stats();
    assert_eq!((st.sig_inserts, st.sig_copies), (2 * 2 * 3, 2 * 2 * 3), "two pieces' chains each");
    // A signature with most bits set (a long sentence's) is shared by different
    // sentences: every one is added.
    let long: u64 = 0xffff_fffe;
    for seq in 7..=12 {
        idx.add(&q, seq, &IndexAdd { signatures: vec![(0, long)], ..IndexAdd::default() });
    }
    assert_eq!(idx.quote_candidates(&q, long, 0).0.len(), 6);
}

/// Laid out for exact searches, a signature is added once, to its home bucket alone:
/// a bucket's worth of one signature fills it and the next evicts (no spill), the
/// copy bound holds in it, and a search finds what the bucket holds.
#[test]
fn the_exact_layout_adds_a_signature_once_to_one_bucket() {
    let q = QuoteConfig { max_per_probe: u32::MAX, max_sources: u32::MAX, ..QuoteConfig::default() };
    assert!(q.exact_only());
    let mut idx = Indexes::in_memory(1 << 20, &q).unwrap();
    let per_bucket = idx.shape().sig_entries as u64;
    let sig = 0x0f0f_00ff;
    for seq in 1..=per_bucket {
        idx.add(&q, seq, &IndexAdd { signatures: vec![(0, sig)], ..IndexAdd::default() });
    }
    assert_eq!((idx.stats().sig_inserts, idx.stats().sig_evictions), (per_bucket, 0), "once each");
    assert_eq!(idx.quote_candidates(&q, sig, 0).0.len() as u64, per_bucket);
    idx.add(&q, per_bucket + 1, &IndexAdd { signatures: vec![(0, sig)], ..IndexAdd::default() });
    assert_eq!(idx.stats().sig_evictions, 1, "no spill: the home bucket evicts");
    let found = idx.quote_candidates(&q, sig, 0).0;
    assert_eq!(found.len() as u64, per_bucket);
    assert!(found.iter().any(|&(s, ..)| s == 1) && found.iter().any(|&(s, ..)| s == per_bucket + 1), "older half kept");
    // The copy bound, in the one bucket.
    let q3 = QuoteConfig { max_sources: 3, ..QuoteConfig::default() };
    let mut idx = Indexes::in_memory(1 << 20, &q3).unwrap();
    for seq in 1..=6 {
        idx.add(&q3, seq, &IndexAdd { signatures: vec![(0, sig), (1, sig ^ 0x0100_0000)], ..IndexAdd::default() });
    }
    assert_eq!(idx.quote_candidates(&q3, sig, 0).0, vec![(1, 0, 0), (2, 0, 0), (3, 0, 0)]);
    assert_eq!(idx.quote_candidates(&q3, sig ^ 0x0100_0000, 0).0.len(), 3);
    assert_eq!((idx.stats().sig_inserts, idx.stats().sig_copies), (2 * 3, 2 * 3), "one entry a signature");
}

/// The per-probe cap reads the oldest entries within the radius: entries that share
/// the probed piece but lie outside the radius do not use it up, and what it leaves
/// out is counted.
#[test]
fn the_probe_cap_takes_the_oldest_entries_within_the_radius() {
    let q = QuoteConfig { max_per_probe: 4, ..QuoteConfig::default() };
    let mut idx = Indexes::in_memory(1 << 20, &q).unwrap();
    let sig: u64 = 0x0f0f_00ff;
    // Ten sentences with the same first piece but 8 bits away in the second.
    for seq in 1..=10 {
        idx.add(&q, seq, &IndexAdd { signatures: vec![(0, sig ^ 0x00ff_0000)], ..IndexAdd::default() });
    }
    // Then six exact matches, added newest first in signature order terms.
    for seq in 11..=16 {
        idx.add(&q, seq, &IndexAdd { signatures: vec![(0, sig)], ..IndexAdd::default() });
    }
    let (found, capped) = idx.quote_candidates(&q, sig, 0);
    assert_eq!(found, vec![(11, 0, 0), (12, 0, 0), (13, 0, 0), (14, 0, 0)], "the four oldest within the radius");
    assert_eq!(capped, 2);
}

/// Issue 53: the digest of the parts that hold data, the rest hashed as zeros without
/// being read, is the digest of the whole region, whatever ranges are given around the
/// data (a table file's holes, as `SEEK_DATA` tells them, cover no written byte).
#[test]
fn the_digest_of_the_parts_with_data_is_the_digest_of_the_whole() {
    let q = QuoteConfig::default();
    let mut idx = Indexes::in_memory(1 << 20, &q).unwrap();
    for seq in 1..=200u64 {
        let add = IndexAdd { signatures: vec![(0, seq * 7919)], ..IndexAdd::default() };
        idx.add(&q, seq, &add);
    }
    let whole = idx.digest();
    let bytes = idx.bytes();
    // The written stretches, in 4 KiB pages as a file system keeps them.
    let mut data: Vec<std::ops::Range<usize>> = Vec::new();
    for (page, chunk) in bytes.chunks(4096).enumerate() {
        if chunk.iter().any(|&b| b != 0) {
            let r = page * 4096..(page * 4096 + chunk.len());
            match data.last_mut() {
                Some(last) if last.end == r.start => last.end = r.end,
                _ => data.push(r),
            }
        }
    }
    assert!(data.iter().map(|r| r.len()).sum::<usize>() < bytes.len(), "the region has holes");
    assert_eq!(idx.digest_of(&data), whole);
    let all: Vec<std::ops::Range<usize>> = std::iter::once(0..bytes.len()).collect();
    assert_eq!(idx.digest_of(&all), whole, "all of it data");
    assert_ne!(idx.digest_of(&[]), whole, "nothing read: the zeros of an empty region");
}
