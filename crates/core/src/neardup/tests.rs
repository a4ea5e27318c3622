//! Tests of near-duplicate detection: sketches, verdicts and their estimates against
//! exact resemblance.

use super::*;
use crate::text::tokenize;
use proptest::prelude::*;

fn sk(cfg: &NearDupConfig, text: &str) -> (Sketch, std::collections::HashSet<u64>) {
    let r = Rabin::new(cfg.k as usize);
    let mut t = Vec::new();
    tokenize(text, &r, &mut t);
    let fps: Vec<u64> = t.iter().map(|x| x.fp).collect();
    let mut sh = Vec::new();
    r.shingles(&fps, &mut sh);
    (sketch(cfg, &t, &r), sh.into_iter().collect())
}

fn words(seed: u64, n: usize) -> Vec<String> {
    let mut g = crate::testdata::XorShift::new(seed | 1);
    (0..n).map(|_| format!("w{}", g.below(5000))).collect()
}

proptest! {
    /// An exact copy's verdict made without its sketch is the one its sketch and its
    /// earlier copy's give, whatever the document's size (its sampling ratio) and
    /// the sketch's shape.
    #[test]
    fn identical_is_the_comparison_of_two_equal_sketches(
        seed in any::<u64>(),
        n in 3usize..3000,
        shape in prop::sample::select(vec![(84u32, 6u32, 384u32), (84, 21, 64), (600, 6, 128), (100, 7, 256), (16, 16, 64)]),
    ) {
        let (minhashes, supershingles, simhash_bits) = shape;
        let cfg = NearDupConfig { minhashes, supershingles, simhash_bits, ..NearDupConfig::default() };
        let (s, _) = sk(&cfg, &words(seed, n).join(" "));
        prop_assert_eq!(identical(&cfg, 7), compare(&cfg, 7, &s, &s));
    }
}

#[test]
fn identical_documents_are_exact_and_similar_under_every_verdict() {
    let cfg = NearDupConfig::default();
    let text = words(1, 300).join(" ");
    let (a, _) = sk(&cfg, &text);
    let (b, _) = sk(&cfg, &text.to_uppercase());
    let d = compare(&cfg, 1, &a, &b);
    assert!(d.exact && d.b && d.c && d.combined && d.default);
    assert_eq!((d.b_similarity, d.c_similarity, d.resemblance), (6, 384, 1.0));
}

/// Near-identical documents on either side of every size-group boundary (adaptive
/// sampling gives them different rates): the default verdict holds, and B under the
/// papers' setting (k = 8: at 14 min-values a supershingle, two of six agree at
/// J ≈ 0.92 only about half the time; the combined one also needs SimHash, which
/// sampling does not touch), and they share an index key, so each finds the other.
#[test]
fn pairs_straddling_each_sampling_boundary_are_found() {
    let papers = NearDupConfig::default().tuned(8, 0.9);
    for (cfg, below, extra) in [(480, 40), (2900, 200), (9700, 600)]
        .into_iter()
        .flat_map(|(b, e)| [(NearDupConfig::default(), b, e), (papers.clone(), b, e)])
    {
        let w = words(below as u64, below + extra);
        let (a, sa) = sk(&cfg, &w[..below].join(" "));
        let (b, sb) = sk(&cfg, &w.join(" "));
        let jaccard = sa.intersection(&sb).count() as f64 / sa.union(&sb).count() as f64;
        assert!(jaccard >= 0.9, "{below}: J = {jaccard}");
        assert_ne!(
            sampling_ratio(&cfg, below),
            sampling_ratio(&cfg, below + extra),
            "{below}: the pair straddles a boundary"
        );
        for (x, y) in [(&a, &b), (&b, &a)] {
            let d = compare(&cfg, 1, x, y);
            assert!(d.default && (d.b || cfg.k != 8), "{below}: {d:?}");
            assert!((d.resemblance - jaccard).abs() < 0.12, "{below}: estimate {} for J = {jaccard}", d.resemblance);
        }
        let keys: std::collections::HashSet<u64> = crate::index::nd_keys(&cfg, &a).into_iter().collect();
        assert!(crate::index::nd_keys(&cfg, &b).iter().any(|k| keys.contains(k)), "{below}: no shared index key");
    }
}

#[test]
fn bands_are_tuned_to_the_threshold() {
    assert_eq!(band_shape(84, 0.9), (10, 8));
    assert_eq!(band_shape(84, 0.7), (21, 4));
    assert_eq!(band_shape(84, 0.5), (42, 2));
    for t in [0.3, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95] {
        let (b, r) = band_shape(84, t);
        assert!(b * r <= 84 && candidate_probability(t, b, r) >= 0.995, "{t}: {b}x{r}");
        // One more row per band would lose pairs at the threshold.
        let (b2, r2) = (84 / (r + 1), r + 1);
        assert!(candidate_probability(t, b2, r2) < 0.995, "{t}: {b2}x{r2} would do");
    }
    let c = NearDupConfig::default().tuned(5, 0.7);
    assert_eq!((c.k, c.threshold, c.bands, c.rows), (5, 0.7, 21, 4));
    assert_eq!(NearDupConfig::default(), NearDupConfig::default().tuned(3, 0.7));
    assert!(c.validate().is_ok());
}

/// A pair near the threshold is decided by its exact resemblance, and its verdict
/// carries it; one far from it by the estimate (the exact value is not asked for);
/// without `verify`, by the estimate alone.
#[test]
fn pairs_near_the_threshold_are_decided_exactly() {
    let cfg = NearDupConfig::default();
    let w = words(3, 400);
    let (a, sa) = sk(&cfg, &w.join(" "));
    let mut edited = w.clone();
    for i in (0..400).step_by(25) {
        edited[i] = format!("new{i}");
    }
    let (b, sb) = sk(&cfg, &edited.join(" "));
    let j = sa.intersection(&sb).count() as f64 / sa.union(&sb).count() as f64;
    let estimate = compare(&cfg, 1, &b, &a).resemblance;
    assert!((estimate - cfg.threshold).abs() < verify_window(&cfg), "estimate {estimate} for J = {j}");
    for (exact, holds) in [(0.69, false), (0.7, true)] {
        let mut asked = vec![];
        let v = verified_verdicts(&cfg, &b, [(1, &a)], |c| {
            asked.push(c);
            Ok::<_, ()>(Some(exact))
        })
        .unwrap();
        assert_eq!(asked, [1]);
        assert_eq!(
            v.iter().find(|d| d.seq == 1).map(|d| (d.default, d.resemblance)).unwrap_or((false, exact)),
            (holds, exact)
        );
    }
    let off = NearDupConfig { verify: false, ..cfg.clone() };
    let v = verified_verdicts(&off, &b, [(1, &a)], |_| Err("not asked")).unwrap();
    assert_eq!(v.first().map(|d| d.default), Some(estimate >= off.threshold - off.margin));
    let (far, _) = sk(&cfg, &words(99, 400).join(" "));
    assert!(verified_verdicts(&cfg, &far, [(1, &a)], |_| Err("not asked")).unwrap().iter().all(|d| !d.default));
}

#[test]
fn sampling_ratio_follows_document_size() {
    let cfg = NearDupConfig::default();
    let ratio = |tokens| sampling_ratio(&cfg, tokens);
    assert_eq!((ratio(100), ratio(499), ratio(500), ratio(5000), ratio(20_000)), (1, 1, 2, 4, 8));
    // A short document whose sample would be empty falls back to all its shingles.
    let (s, _) = sk(&NearDupConfig { sampling: vec![(u32::MAX, 1 << 30)], ..cfg.clone() }, &words(5, 30).join(" "));
    assert_eq!(s.mins.len(), 84);
}

#[test]
fn pieces_cover_all_bits_once() {
    let cfg = NearDupConfig::default();
    let mut covered = 0;
    for p in 0..cfg.pieces() {
        let (lo, hi) = piece_range(&cfg, p);
        assert!(hi - lo <= 64 && hi > lo);
        covered += hi - lo;
    }
    assert_eq!(covered, 384);
    assert_eq!(cfg.pieces(), 13);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    #[test]
    fn resemblance_estimate_converges_to_exact_jaccard(seed in any::<u64>(), keep in 0usize..300) {
        // B shares a prefix of A of `keep` words, then differs.
        let cfg = NearDupConfig { minhashes: 600, supershingles: 6, sampling: vec![(u32::MAX, 1)], ..Default::default() };
        let a = words(seed, 300);
        let mut b = a[..keep].to_vec();
        b.extend(words(seed ^ 0xdead_beef, 300 - keep));
        let (sa, set_a) = sk(&cfg, &a.join(" "));
        let (sb, set_b) = sk(&cfg, &b.join(" "));
        let j = set_a.intersection(&set_b).count() as f64 / set_a.union(&set_b).count() as f64;
        let est = resemblance(&sa.mins, &sb.mins);
        // 600 samples: standard deviation at most 0.021.
        prop_assert!((est - j).abs() < 0.09, "estimate {} exact {}", est, j);
    }

    #[test]
    fn adaptive_sampling_keeps_the_estimate_on_long_documents(seed in any::<u64>(), keep in 9000usize..12000) {
        // Documents over 10000 tokens sample 1 shingle in 8 (by fingerprint, the same
        // shingles in both documents), so the estimate still tracks the exact Jaccard.
        let cfg = NearDupConfig { minhashes: 600, supershingles: 6, ..Default::default() };
        let a = words(seed, 12000);
        let mut b = a[..keep].to_vec();
        b.extend(words(seed ^ 0xfeed, 12000 - keep));
        let (sa, set_a) = sk(&cfg, &a.join(" "));
        let (sb, set_b) = sk(&cfg, &b.join(" "));
        let j = set_a.intersection(&set_b).count() as f64 / set_a.union(&set_b).count() as f64;
        prop_assert!((resemblance(&sa.mins, &sb.mins) - j).abs() < 0.09);
    }

    #[test]
    fn exact_resemblance_is_the_jaccard_of_the_shingle_sets(
        a in proptest::collection::vec(0u64..40, 0..60),
        b in proptest::collection::vec(0u64..40, 0..60),
        k in 1u32..5,
    ) {
        let set = |t: &[u64]| -> std::collections::HashSet<Vec<u64>> {
            let k = (k as usize).clamp(1, t.len().max(1));
            t.windows(k).map(<[u64]>::to_vec).collect()
        };
        let (sa, sb) = (set(&a), set(&b));
        let union = sa.union(&sb).count();
        let want = if union == 0 { 0.0 } else { sa.intersection(&sb).count() as f64 / union as f64 };
        let got = exact_resemblance(&shingle_set(&a, k), &shingle_set(&b, k));
        prop_assert!((got - want).abs() < 1e-12, "{got} != {want}");
    }

    #[test]
    fn pigeonhole_pieces_find_every_pair_within_the_threshold(
        base in proptest::collection::vec(any::<u64>(), 6),
        flips in proptest::collection::vec(0u32..384, 0..13),
    ) {
        let cfg = NearDupConfig::default();
        let mut other = base.clone();
        for f in &flips { other[(f / 64) as usize] ^= 1 << (f % 64); }
        let within = c_similarity(&base, &other) >= cfg.c_threshold;
        let share = pieces(&cfg, &base).iter().zip(pieces(&cfg, &other)).any(|(a, b)| *a == b);
        prop_assert!(!within || share, "a pair within {} differing bits shares no piece", 384 - cfg.c_threshold);
    }
}

/// A document keeps its [`MAX_PAIRS`] closest near-duplicates, exact
/// copies first, then the earliest of equal resemblance, in ascending order.
#[test]
fn a_document_keeps_its_closest_pairs_only() {
    let cfg = NearDupConfig::default();
    let w = words(7, 400);
    let (a, _) = sk(&cfg, &w.join(" "));
    let (near, _) = sk(&cfg, &w[..390].join(" "));
    let candidates: Vec<(u64, &Sketch)> = (1..=150).map(|c| (c, if c % 2 == 1 { &a } else { &near })).collect();
    let all = candidates.iter().filter(|(_, s)| any_verdict(&compare(&cfg, 0, &a, s))).count();
    assert_eq!(all, 150, "every candidate is a near-duplicate");
    let kept = verdicts(&cfg, &a, candidates);
    assert_eq!(kept.len(), MAX_PAIRS);
    let seqs: Vec<u64> = kept.iter().map(|d| d.seq).collect();
    let expected: Vec<u64> = (1..=150).filter(|c| c % 2 == 1 || *c <= 50).collect();
    assert_eq!(seqs, expected, "the 75 exact copies, then the 25 earliest near ones");
    assert!(NearDupConfig::default().tuned(MAX_K + 1, 0.7).validate().is_err());
    assert!(NearDupConfig::default().tuned(MAX_K, 0.7).validate().is_ok());
}
