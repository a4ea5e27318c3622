use super::*;
use crate::estimate::How;
use proptest::prelude::*;

/// Random streams for the brute-force oracle: each origin its own words with, at
/// random places, phrases of the origins before it (stock phrases, copies of
/// copies); the document passages of random origins, apart by at least
/// `MAX_EDIT + 1` words of its own (so no run can go on from one to the next).
fn streams(seed: u64, origins: usize) -> (Vec<Vec<String>>, Vec<String>) {
    let mut rng = seed | 1;
    let mut next = move |n: usize| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % n as u64) as usize
    };
    let mut texts: Vec<Vec<String>> = Vec::new();
    for o in 0..origins {
        let mut t: Vec<String> = (0..40 + next(60)).map(|i| format!("o{o}w{i}")).collect();
        for _ in 0..next(3) {
            if o == 0 {
                break;
            }
            let from = &texts[next(o)];
            let len = 8 + next(25).min(from.len() - 8);
            let at = next(from.len() - len + 1);
            let phrase = from[at..at + len].to_vec();
            let put = next(t.len());
            t.splice(put..put, phrase);
        }
        texts.push(t);
    }
    let mut doc: Vec<String> = Vec::new();
    for part in 0..2 + next(4) {
        doc.extend((0..MAX_EDIT + 1 + next(5)).map(|i| format!("d{part}w{i}")));
        let from = &texts[next(origins)];
        let len = 8 + next(from.len() - 8);
        let at = next(from.len() - len + 1);
        doc.extend(from[at..at + len].iter().cloned());
    }
    doc.extend((0..MAX_EDIT + 1).map(|i| format!("end{i}")));
    (texts, doc)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// With every shingle selected and labelled by its earliest holder (a table
    /// that evicts nothing), the passage attribution credits every token to the
    /// origin of the longest common run covering it (the earliest on a tie),
    /// found by brute force over every origin; the earliest attribution credits it
    /// to the earliest origin holding a common run through it of at least k.
    #[test]
    fn tokens_go_to_the_longest_common_run(seed in any::<u64>(), origins in 2usize..7) {
        let k = 8;
        let (texts, doc) = streams(seed, origins);
        // The longest maximal common run with each origin covering each token.
        let mut longest = vec![(0usize, 0u64); doc.len()];
        let mut earliest = vec![0u64; doc.len()];
        for (o, t) in texts.iter().enumerate().rev() {
            let o = o as u64 + 1;
            for i in 0..doc.len() {
                for x in 0..t.len() {
                    // Maximal runs start where the tokens before differ.
                    if (i > 0 && x > 0 && doc[i - 1] == t[x - 1]) || doc[i] != t[x] {
                        continue;
                    }
                    let len = doc[i..].iter().zip(&t[x..]).take_while(|(a, b)| a == b).count();
                    if len < k {
                        continue;
                    }
                    for tok in i..i + len {
                        if len >= longest[tok].0 {
                            longest[tok] = (len, o);
                        }
                        earliest[tok] = o;
                    }
                }
            }
        }
        for attribution in [Attribution::Passage, Attribution::Earliest] {
            let (_, labels, passages) = align_words(&texts, &doc, attribution);
            let want: Vec<u64> = match attribution {
                Attribution::Passage => longest.iter().map(|x| x.1).collect(),
                Attribution::Earliest => earliest.clone(),
            };
            prop_assert_eq!(&labels, &want, "{:?}: {:?}", attribution, doc);
            prop_assert!(passages.edits.is_empty(), "no edits in these streams");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Estimation labels a copied shingle with any of the documents holding it, in
    /// turns: alignment counting a seed on a run found before as that run gives what
    /// extending it again gives, blocks, labels and passages.
    #[test]
    fn a_run_found_again_is_the_run_found_before(seed in any::<u64>(), origins in 2usize..10, every in 1usize..6) {
        let rabin = Rabin::new(8);
        let k = 8;
        let (mut texts, doc) = streams(seed, origins);
        // Each origin repeats its first words in its middle: a seed's first
        // occurrence may lie off the diagonal of the run it was found on.
        for t in &mut texts {
            let again = t[..t.len().min(12)].to_vec();
            let at = t.len() / 2;
            t.splice(at..at, again);
        }
        let seq = origins as u64 + 1;
        let mut toks = Vec::new();
        tokenize(&doc.join(" "), &rabin, &mut toks);
        let mut rng = seed | 1;
        let mut next = move || {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (rng >> 33) as usize
        };
        // One shingle in `every` selected (the second pass finds the rest), each labelled
        // with one of its holders at random.
        let mut selected: Vec<ShingleOrigin> = Vec::new();
        for p in 0..doc.len() + 1 - k {
            if next() % every != 0 {
                continue;
            }
            let holders: Vec<u64> =
                (1..seq).filter(|&o| texts[o as usize - 1].windows(k).any(|w| w == &doc[p..p + k])).collect();
            let origin = if holders.is_empty() { seq } else { holders[next() % holders.len()] };
            selected.push(ShingleOrigin { start_token: p as u32, end_token: (p + k) as u32, origin, how: How::Found });
        }
        let origin = |o: u64| Some(Arc::new(OriginText::new(&texts[o as usize - 1].join(" "), &rabin, &[])));
        for attribution in [Attribution::Passage, Attribution::Earliest] {
            let a = Alignment { seq, tokens: &toks, shingles: &[], selected: &selected, rabin: &rabin, when: &crate::spans::by_arrival, attribution };
            prop_assert_eq!(align_runs(&a, origin, |_| Vec::new(), true), align_runs(&a, origin, |_| Vec::new(), false), "{:?}", attribution);
        }
    }

    /// The shingles a caller hands in (the selection's, computed on a preparation
    /// thread) give what alignment gives computing them; a list of the wrong length
    /// (none computed) is not read.
    #[test]
    fn given_shingles_align_as_computed_ones(seed in any::<u64>(), origins in 2usize..8, every in 1usize..6) {
        let rabin = Rabin::new(8);
        let (texts, doc) = streams(seed, origins);
        let seq = origins as u64 + 1;
        let mut toks = Vec::new();
        tokenize(&doc.join(" "), &rabin, &mut toks);
        let fps: Vec<u64> = toks.iter().map(|t| t.fp).collect();
        let mut shingles = Vec::new();
        rabin.shingles(&fps, &mut shingles);
        let holder = |p: usize| (1..seq).find(|&o| texts[o as usize - 1].windows(8).any(|w| w == &doc[p..p + 8]));
        let selected: Vec<ShingleOrigin> = (0..shingles.len())
            .step_by(every)
            .map(|p| ShingleOrigin { start_token: p as u32, end_token: p as u32 + 8, origin: holder(p).unwrap_or(seq), how: How::Found })
            .collect();
        prop_assume!(selected.iter().any(|s| s.origin != seq));
        let origin = |o: u64| Some(Arc::new(OriginText::new(&texts[o as usize - 1].join(" "), &rabin, &[])));
        for attribution in [Attribution::Passage, Attribution::Earliest] {
            let computed = Alignment { seq, tokens: &toks, shingles: &[], selected: &selected, rabin: &rabin, when: &crate::spans::by_arrival, attribution };
            let given = Alignment { shingles: &shingles, ..computed };
            let wrong = Alignment { shingles: &shingles[1..], ..computed };
            let expected = align(&computed, origin);
            prop_assert!(!expected.0.is_empty());
            prop_assert_eq!(&align(&given, origin), &expected, "{:?}", attribution);
            prop_assert_eq!(&align(&wrong, origin), &expected, "{:?}", attribution);
        }
    }
}

/// A verbatim passage of B that holds a stock phrase of A, copied into C, is one
/// block of B with A listed beside it; with one word in eight changed, still one
/// block, its edits listed; `Earliest` keeps the blocks it made before.
#[test]
fn a_passage_keeps_its_source_through_stock_phrases_and_light_edits() {
    let stock: Vec<String> = "for the fiscal year ending on the 30th of June".split(' ').map(str::to_string).collect();
    let a: Vec<String> = [&words("a", 30)[..], &stock, &words("a", 30)[..]].concat();
    let passage: Vec<String> = [&words("p", 40)[..], &stock, &words("q", 40)[..]].concat();
    let b: Vec<String> = [&words("b", 20)[..], &passage, &words("b", 20)[..]].concat();
    // One word in eight changed, at random places (a change every 8th word exactly
    // leaves no 8-word shingle to find the passage by).
    let mut rng = 54u64;
    let edited: Vec<String> = passage
        .iter()
        .enumerate()
        .map(|(i, w)| {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if (rng >> 33).is_multiple_of(8) {
                format!("x{i}")
            } else {
                w.clone()
            }
        })
        .collect();
    let changed = edited.iter().filter(|w| w.starts_with('x')).count();
    assert!((8..=14).contains(&changed), "{changed} words of 90 changed");
    let texts = [a, b];
    let run = |doc: &[String], attribution: Attribution| align_words(&texts, doc, attribution);
    let c: Vec<String> = [&words("c", 10)[..], &passage, &words("c", 10)[..]].concat();
    let spans =
        |blocks: &[Block]| blocks.iter().map(|b| (b.span.start_token, b.span.end_token, b.origin)).collect::<Vec<_>>();
    let (blocks, _, passages) = run(&c, Attribution::Passage);
    assert_eq!(spans(&blocks), [(10, 100, 2)]);
    assert_eq!(passages.also_earlier, [AlsoEarlier { origin: 1, start_token: 50, end_token: 60 }]);
    let (blocks, _, passages) = run(&c, Attribution::Earliest);
    assert_eq!(spans(&blocks), [(10, 50, 2), (50, 60, 1), (60, 100, 2)], "the paper's earliest source, per token");
    assert!(passages.is_empty());
    // One word in eight changed: at most two blocks over the passage, the edits listed
    // (those at its very edges, with fewer than 3 words after them, left out).
    let d: Vec<String> = [&words("d", 10)[..], &edited, &words("d", 10)[..]].concat();
    let (blocks, labels, passages) = run(&d, Attribution::Passage);
    assert!(blocks.len() <= 2, "{:?}", spans(&blocks));
    let credited = labels[10..100].iter().filter(|&&l| l == 2).count();
    assert!(credited >= 81, "{credited} of 90 tokens credited to the source");
    // Every changed word inside a block is listed as an edit.
    for b in &blocks {
        for t in b.span.start_token..b.span.end_token {
            let changed = edited.get(t as usize - 10).is_some_and(|w| w.starts_with('x'));
            assert!(!changed || passages.edits.contains(&t), "token {t}: {:?}", passages.edits);
        }
    }
    let (blocks, _, _) = run(&d, Attribution::Earliest);
    assert!(blocks.len() > 3, "exact runs: {:?}", spans(&blocks));
}

/// Aligns `doc` against `texts` (documents 1, 2, ...; `doc` is the next one) with
/// every k-shingle selected and labelled by its earliest holder, as a table that
/// evicts nothing labels them.
fn align_words(texts: &[Vec<String>], doc: &[String], attribution: Attribution) -> (Vec<Block>, Vec<u64>, Passages) {
    let (rabin, k) = (Rabin::new(8), 8);
    let seq = texts.len() as u64 + 1;
    let mut toks = Vec::new();
    tokenize(&doc.join(" "), &rabin, &mut toks);
    assert_eq!(toks.len(), doc.len());
    let holder = |p: usize| (1..seq).find(|&o| texts[o as usize - 1].windows(k).any(|w| w == &doc[p..p + k]));
    let selected: Vec<ShingleOrigin> = (0..doc.len() + 1 - k)
        .map(|p| ShingleOrigin {
            start_token: p as u32,
            end_token: (p + k) as u32,
            origin: holder(p).unwrap_or(seq),
            how: How::Found,
        })
        .collect();
    let a = Alignment {
        seq,
        tokens: &toks,
        shingles: &[],
        selected: &selected,
        rabin: &rabin,
        when: &crate::spans::by_arrival,
        attribution,
    };
    align(&a, |o| Some(Arc::new(OriginText::new(&texts[o as usize - 1].join(" "), &rabin, &[]))))
}

/// C copies a stretch of B whole, where B holds A's words with five of B's own
/// between two phrases of A, or with four of A's words left out: C's copy is B's (one
/// exact run of 20 tokens), not A's run through the edit, which spans as many tokens
/// but agrees on fewer (15) or as many with A's words left out.
#[test]
fn an_edited_run_does_not_outrank_an_exact_run_as_long() {
    let (a, b_own, c_own) = (words("a", 40), words("b", 25), words("c", 12));
    let inserted: Vec<String> = [&b_own[..10], &a[..8], &b_own[10..15], &a[8..15], &b_own[15..]].concat();
    let left_out: Vec<String> = [&b_own[..10], &a[..14], &a[18..24], &b_own[10..]].concat();
    for b in [inserted, left_out] {
        let c: Vec<String> = [&c_own[..6], &b[10..30], &c_own[6..]].concat();
        let (blocks, labels, passages) = align_words(&[a.clone(), b], &c, Attribution::Passage);
        let spans: Vec<(u32, u32, u64)> =
            blocks.iter().map(|x| (x.span.start_token, x.span.end_token, x.origin)).collect();
        assert_eq!(spans, [(6, 26, 2)], "{labels:?}");
        assert!(passages.edits.is_empty(), "{:?}", passages.edits);
        assert_eq!(passages.also_earlier, [AlsoEarlier { origin: 1, start_token: 6, end_token: 26 }]);
    }
}

fn words(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

/// C copies a stretch of B that B itself copied from A: the part from A is
/// attributed to A (B's stored result says so), the rest of the stretch to B.
#[test]
fn a_copy_of_a_copy_is_attributed_to_the_earliest_source() {
    let rabin = Rabin::new(8);
    let (a, b_own, c_own) = (words("a", 20), words("b", 20), words("c", 10));
    let b: Vec<String> = [&b_own[..10], &a[..], &b_own[10..]].concat();
    let c: Vec<String> = [&c_own[..5], &b[4..36], &c_own[5..]].concat();
    let (b_text, c_text) = (b.join(" "), c.join(" "));
    let mut toks = Vec::new();
    tokenize(&c_text, &rabin, &mut toks);
    // Estimation found one shingle of the copied stretch, labelled B (document 2).
    let selected = [ShingleOrigin { start_token: 10, end_token: 18, origin: 2, how: How::Found }];
    let doc = Alignment {
        seq: 3,
        tokens: &toks,
        shingles: &[],
        selected: &selected,
        rabin: &rabin,
        when: &crate::spans::by_arrival,
        attribution: Attribution::Earliest,
    };
    let span = |s: u32, e: u32| Span { start_token: s, end_token: e, start_byte: 0, end_byte: 0 };
    // B's own result: its tokens 10..30 were copied from A (document 1).
    let b_blocks = [Block { span: span(10, 30), origin: 1, shingles: 3 }];
    let (blocks, labels, _) = align(&doc, |o| (o == 2).then(|| Arc::new(OriginText::new(&b_text, &rabin, &b_blocks))));
    let got: Vec<(u32, u32, u64)> = blocks.iter().map(|x| (x.span.start_token, x.span.end_token, x.origin)).collect();
    // C's tokens 5..37 are B's 4..36: B's 4..10 (C 5..11) from B, A's words (C 11..31)
    // from A, B's 30..36 (C 31..37) from B.
    assert_eq!(got, [(5, 11, 2), (11, 31, 1), (31, 37, 2)]);
    assert_eq!(labels.iter().filter(|&&l| l == 1).count(), 20);
    // Without B's result the whole stretch is B's.
    let (blocks, _, _) = align(&doc, |o| (o == 2).then(|| Arc::new(OriginText::new(&b_text, &rabin, &[]))));
    assert_eq!(
        blocks.iter().map(|x| (x.span.start_token, x.span.end_token, x.origin)).collect::<Vec<_>>(),
        [(5, 37, 2)]
    );
}

/// B copies a passage of A with one word replaced; C copies B's version word for word.
/// The table names A for every shingle of C's copy (origin propagation relabelled B's
/// own shingles over the edit with A): the copy is B's, exactly, with A listed beside
/// it as an earlier holder; without B among A's copiers (or with the earliest
/// attribution), A's, through the edit.
#[test]
fn a_verbatim_copy_of_an_edited_version_is_credited_to_that_version() {
    let rabin = Rabin::new(8);
    let (a_own, b_own, c_own) = (words("a", 40), words("b", 10), words("c", 12));
    let mut b: Vec<String> = [&b_own[..5], &a_own[..30], &b_own[5..]].concat();
    b[5 + 15] = "edited".to_string();
    let c: Vec<String> = [&c_own[..6], &b[5..35], &c_own[6..]].concat();
    let texts = [a_own.join(" "), b.join(" ")];
    let mut toks = Vec::new();
    tokenize(&c.join(" "), &rabin, &mut toks);
    let selected: Vec<ShingleOrigin> = (0..c.len() - 7)
        .map(|p| {
            let copied = (6..=28).contains(&p);
            let (origin, how) = if copied { (1, How::Found) } else { (3, How::Own) };
            ShingleOrigin { start_token: p as u32, end_token: p as u32 + 8, origin, how }
        })
        .collect();
    let origin = |o: u64| Some(Arc::new(OriginText::new(&texts[o as usize - 1], &rabin, &[])));
    let spans =
        |blocks: &[Block]| blocks.iter().map(|x| (x.span.start_token, x.span.end_token, x.origin)).collect::<Vec<_>>();
    for attribution in [Attribution::Passage, Attribution::Earliest] {
        let doc = Alignment {
            seq: 3,
            tokens: &toks,
            shingles: &[],
            selected: &selected,
            rabin: &rabin,
            when: &crate::spans::by_arrival,
            attribution,
        };
        let (blocks, _, passages) = align_with_copiers(&doc, origin, |o| if o == 1 { vec![2] } else { Vec::new() });
        let (without, _, _) = align_with_copiers(&doc, origin, |_| Vec::new());
        if attribution == Attribution::Passage {
            assert_eq!(spans(&blocks), [(6, 36, 2)]);
            assert!(passages.edits.is_empty(), "{:?}", passages.edits);
            assert_eq!(passages.also_earlier, [AlsoEarlier { origin: 1, start_token: 6, end_token: 36 }]);
            assert_eq!(spans(&without), [(6, 36, 1)]);
        } else {
            // A's exact runs on either side of the edited word.
            assert_eq!(spans(&blocks), [(6, 21, 1), (22, 36, 1)]);
            assert_eq!(spans(&without), spans(&blocks));
        }
    }
}
