use super::*;
use crate::config::Density;
use crate::reference::Reference;
use crate::select::FLOOR;
use crate::table::{Shape, TableStats};
use crate::text::tokenize;
use proptest::prelude::*;

fn table(cfg: &Config) -> Table<Vec<u8>> {
    Table::in_memory(&cfg.table_params()).unwrap()
}

fn exact_config() -> Config {
    Config {
        selection: crate::select::Selection::All,
        estimation: crate::estimate::Estimation::Nb,
        table_bytes: 64 << 20,
        ..Config::default()
    }
}

/// Generated corpus: documents that copy runs of words from earlier ones.
pub(crate) fn corpus(seed: u64, docs: usize) -> Vec<String> {
    let mut g = crate::testdata::XorShift::new(seed | 1);
    let mut next = move |m: u64| g.below(m);
    let mut out: Vec<Vec<String>> = Vec::new();
    for _ in 0..docs {
        let mut words = Vec::new();
        let parts = 1 + next(4);
        for _ in 0..parts {
            if !out.is_empty() && next(2) == 0 {
                let src = &out[next(out.len() as u64) as usize];
                let a = next(src.len() as u64) as usize;
                let len = (5 + next(30) as usize).min(src.len() - a);
                words.extend_from_slice(&src[a..a + len]);
            } else {
                for _ in 0..(3 + next(40)) {
                    words.push(format!("w{}", next(500)));
                }
            }
        }
        out.push(words);
    }
    out.into_iter().map(|w| w.join(" ")).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn all_nb_large_table_equals_brute_force(seed in any::<u64>(), docs in 1usize..25) {
        let cfg = exact_config();
        let mut t = table(&cfg);
        let mut e = Engine::new(cfg.clone());
        let mut reference = Reference::new(cfg.k as usize);
        for (i, text) in corpus(seed, docs).iter().enumerate() {
            let seq = i as u64 + 1;
            let got = e.apply(&mut t, seq, text);
            let want = reference.apply(seq, text);
            let got_origins: Vec<u64> = got.selected_origins.iter().map(|s| s.origin).collect();
            prop_assert_eq!(&got_origins, &want.origins, "doc {}", seq);
            prop_assert_eq!(got.fresh_tokens, want.fresh_tokens);
            prop_assert_eq!(got.dominant_by_rule(), want.dominant_origin);
            // Every shingle selected, none evicted: the blocks hold exactly the copied
            // shingles, so counting by blocks is counting the oracle's origins.
            prop_assert_eq!(got.dominant_by_blocks(), got.dominant_origin);
        }
        prop_assert_eq!(t.stats().evictions, 0);
    }

    /// Alignment with the default sampled selection and a table that evicts nothing:
    /// every aligned block is a run of its origin's text, every token it labels old
    /// is old for the oracle, and every token a found shingle covers stays old. The
    /// argmax agrees with the 10% rule wherever the rule answers. (Without origin
    /// propagation: a propagated entry carries an estimated origin, which may not
    /// hold the shingle; its block then does not align and is dropped.)
    #[test]
    fn aligned_blocks_are_common_runs_and_only_label_old_tokens(seed in any::<u64>(), docs in 2usize..25) {
        // Exact runs (the passage attribution's runs go through light edits: its own
        // property is in `align`'s tests).
        let cfg = Config { table_bytes: 64 << 20, propagate: false, attribution: crate::config::Attribution::Earliest, ..Config::default() };
        let texts = corpus(seed, docs);
        let mut t = table(&cfg);
        let mut e = Engine::new(cfg.clone());
        let mut reference = Reference::new(cfg.k as usize);
        let rabin = Rabin::new(cfg.k as usize);
        let tokens_of = |s: &str| { let mut v = Vec::new(); tokenize(s, &rabin, &mut v); v.iter().map(|t| t.fp).collect::<Vec<u64>>() };
        let mut blocks: Vec<Vec<Block>> = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            let seq = i as u64 + 1;
            let mut doc = e.prepare(text);
            let mut got = e.apply_prepared(&mut t, &mut doc, seq, &by_arrival).0;
            let want = reference.apply(seq, text);
            if let Some(o) = got.dominant_by_rule() {
                prop_assert_eq!(got.dominant_origin, Some(o));
            }
            let found: Vec<(u32, u32)> = got.selected_origins.iter().filter(|s| s.how == How::Found && s.origin != seq).map(|s| (s.start_token, s.end_token)).collect();
            e.align(&doc, &mut got, |o| Some(Arc::new(OriginText::new(&texts[o as usize - 1], &rabin, &blocks[o as usize - 1]))), |_| Vec::new(), &by_arrival);
            blocks.push(got.copied_blocks.clone());
            let doc = tokens_of(text);
            let mut old = vec![false; doc.len()];
            for b in &got.copied_blocks {
                let run = &doc[b.span.start_token as usize..b.span.end_token as usize];
                let origin = tokens_of(&texts[b.origin as usize - 1]);
                prop_assert!(b.origin < seq && origin.windows(run.len()).any(|w| w == run), "doc {} block {:?}", seq, b);
                old[b.span.start_token as usize..b.span.end_token as usize].iter_mut().for_each(|x| *x = true);
            }
            for (tok, &o) in old.iter().enumerate() {
                prop_assert!(!o || !want.fresh[tok], "doc {} token {} labelled old, fresh for the oracle", seq, tok);
            }
            for &(a, b) in &found {
                prop_assert!(old[a as usize..b as usize].iter().all(|&x| x), "doc {}: a found shingle's tokens lost", seq);
            }
            prop_assert_eq!(got.old_tokens as usize, old.iter().filter(|&&x| x).count());
        }
    }

    /// Origin propagation: after a document, every entry it inserted for a shingle
    /// estimation labelled copied carries the estimated origin (and without
    /// propagation, the document itself).
    #[test]
    fn propagation_stores_the_estimated_origin(seed in any::<u64>(), docs in 2usize..30, propagate in any::<bool>()) {
        propagated(seed, docs, propagate)?;
    }
}

/// Applies a generated corpus and checks, after each document, the entries it
/// inserted for shingles estimation labelled copied; returns how many there were.
fn propagated(seed: u64, docs: usize, propagate: bool) -> Result<usize, TestCaseError> {
    let cfg = Config { table_bytes: 64 << 20, propagate, ..Config::default() };
    let mut t = table(&cfg);
    let mut e = Engine::new(cfg);
    let mut checked = 0;
    for (i, text) in corpus(seed, docs).iter().enumerate() {
        let seq = i as u64 + 1;
        let doc = e.prepare(text);
        let probe = e.probe(&mut t, &doc, seq, &by_arrival);
        let estimate = e.estimate(&doc, seq, &probe.hits, &by_arrival);
        e.score(&mut t, &probe, &e.feedback(&doc, &estimate));
        for (j, s) in estimate.result.selected_origins.iter().enumerate() {
            if probe.hits[j].is_none() && matches!(s.how, How::Bridged | How::Expanded) {
                let (_, hit) = t.lookup(doc.items()[j].fp).expect("nothing is evicted");
                let want = if propagate { (s.origin, estimate.offsets[j]) } else { (seq, j as u8) };
                prop_assert_eq!((hit.origin, hit.offset), want);
                checked += 1;
            }
        }
    }
    Ok(checked)
}

#[test]
fn propagation_is_exercised() {
    assert!(propagated(42, 60, true).unwrap() > 0, "the generated corpus has estimated shingles that were inserted");
}

#[test]
fn alignment_extends_to_the_edges_and_drops_blocks_not_in_the_origin() {
    let cfg = Config::default();
    let mut t = table(&cfg);
    let mut e = Engine::new(cfg.clone());
    let rabin = Rabin::new(cfg.k as usize);
    let a = "the storm closed every road north of the river and the county asked residents to stay home during winter storms until the plows could reach them";
    e.apply(&mut t, 1, a);
    let b = "officials said on monday that the storm closed every road north of the river and the county asked residents to stay home during winter storms until the plows could reach them, a spokesman added";
    let mut db = e.prepare(b);
    let plain = e.apply_prepared(&mut t, &mut db, 2, &by_arrival).0;
    assert!(!plain.copied_blocks.is_empty());
    let mut aligned = plain.clone();
    e.align(&db, &mut aligned, |_| Some(Arc::new(OriginText::new(a, &rabin, &[]))), |_| Vec::new(), &by_arrival);
    assert_eq!(aligned.copied_blocks.len(), 1);
    let blk = aligned.copied_blocks[0];
    assert_eq!(
        &b[blk.span.start_byte as usize..blk.span.end_byte as usize],
        a,
        "the whole copied sentence, to its edges"
    );
    let novel: Vec<&str> =
        aligned.novel_segments.iter().map(|s| &b[s.start_byte as usize..s.end_byte as usize]).collect();
    assert_eq!(novel, ["officials said on monday that", "a spokesman added"]);
    // An origin whose text does not hold the seeds: the block was never copied.
    let mut wrong = plain.clone();
    let nothing = "nothing in common with the document at all here";
    e.align(&db, &mut wrong, |_| Some(Arc::new(OriginText::new(nothing, &rabin, &[]))), |_| Vec::new(), &by_arrival);
    assert!(wrong.copied_blocks.is_empty() && wrong.old_tokens == 0);
    // No stored text: the block stays as estimation made it.
    let mut unknown = plain.clone();
    e.align(&db, &mut unknown, |_| None, |_| Vec::new(), &by_arrival);
    assert_eq!(unknown.copied_blocks, plain.copied_blocks);
    // Alignment off: the paper's blocks.
    let off = Engine::new(Config { align: false, ..cfg });
    let mut same = plain.clone();
    off.align(&db, &mut same, |_| Some(Arc::new(OriginText::new(a, &rabin, &[]))), |_| Vec::new(), &by_arrival);
    assert_eq!(same, plain);
}

#[test]
fn a_tie_for_the_top_makes_the_document_its_own_dominant_origin() {
    let mut t = table(&exact_config());
    let mut e = Engine::new(exact_config());
    let a: Vec<String> = (0..20).map(|i| format!("a{i}")).collect();
    let b: Vec<String> = (0..20).map(|i| format!("b{i}")).collect();
    e.apply(&mut t, 1, &a.join(" "));
    e.apply(&mut t, 2, &b.join(" "));
    // 13 shingles from each (and 7 of its own): a tie; the rule has no answer, the
    // argmax the document.
    let r = e.apply(&mut t, 3, &format!("{} {}", a.join(" "), b.join(" ")));
    assert_eq!(r.origin_counts, [(1, 13), (2, 13), (3, 7)]);
    assert_eq!(r.dominant_by_rule(), None);
    assert_eq!(r.dominant_origin, Some(3));
}

#[test]
fn apply_is_deterministic_across_tables() {
    let texts = corpus(42, 60);
    let mut digests = Vec::new();
    for _ in 0..2 {
        let cfg = Config { table_bytes: 4096 + 16 * 64 * 4, ..Config::default() }; // tiny: evictions
        let mut t = table(&cfg);
        let mut e = Engine::new(cfg);
        let results: Vec<DocResult> = texts.iter().enumerate().map(|(i, s)| e.apply(&mut t, i as u64 + 1, s)).collect();
        assert!(t.stats().evictions > 0);
        digests.push((t.digest(), results, t.stats(), t.memory().clone()));
    }
    assert!(digests[0] == digests[1]);
}

#[test]
fn query_changes_nothing() {
    let cfg = Config { table_bytes: 1 << 20, ..Config::default() };
    let mut t = table(&cfg);
    let mut e = Engine::new(cfg);
    let texts = corpus(5, 10);
    for (i, s) in texts.iter().enumerate() {
        e.apply(&mut t, i as u64 + 1, s);
    }
    let before = (t.digest(), t.stats());
    let q = e.query(&t, 11, &texts[3]);
    assert_eq!((t.digest(), t.stats()), before);
    assert_eq!(q.dominant_origin, Some(4), "a copy of doc 4 is dominated by it");
}

#[test]
fn blocks_and_labels() {
    let mut t = table(&exact_config());
    let mut e = Engine::new(exact_config());
    let a = "one two three four five six seven eight nine ten eleven twelve";
    e.apply(&mut t, 1, a);
    let b = "fresh words here then one two three four five six seven eight nine and more";
    let r = e.apply(&mut t, 2, b);
    assert_eq!(r.copied_blocks.len(), 1);
    let blk = r.copied_blocks[0];
    assert_eq!(blk.origin, 1);
    assert_eq!(
        &b[blk.span.start_byte as usize..blk.span.end_byte as usize],
        "one two three four five six seven eight nine"
    );
    assert_eq!(r.old_tokens, 9);
    assert_eq!(r.fresh_tokens, 6);
    let novel: Vec<&str> = r.novel_segments.iter().map(|s| &b[s.start_byte as usize..s.end_byte as usize]).collect();
    assert_eq!(novel, ["fresh words here then", "and more"]);
    assert_eq!(r.most_copied_origin, Some(1));
}

/// Issue 21, item 12: adjacent blocks of one origin read as one.
#[test]
fn adjacent_blocks_of_one_origin_are_joined_for_readers() {
    let span = |s: u32, e: u32| Span { start_token: s, end_token: e, start_byte: s * 10, end_byte: e * 10 - 1 };
    let block = |s, e, origin, shingles| Block { span: span(s, e), origin, shingles };
    let r = DocResult {
        copied_blocks: vec![
            block(0, 10, 1, 2),
            block(10, 20, 1, 3),
            block(20, 21, 2, 0),
            block(25, 30, 2, 1),
            block(30, 40, 1, 1),
        ],
        ..DocResult::default()
    };
    let joined = r.joined_blocks();
    assert_eq!(joined, [block(0, 20, 1, 5), block(20, 21, 2, 0), block(25, 30, 2, 1), block(30, 40, 1, 1)]);
    assert_eq!(joined[0].span.end_byte, 199);
}

/// A seeded arrival order of `docs` documents: `perm[a]` is the date rank (corpus
/// index) of the a-th to arrive.
fn arrival_order(docs: usize, seed: u64) -> Vec<usize> {
    let mut perm: Vec<usize> = (0..docs).collect();
    crate::testdata::XorShift::new(seed | 1).shuffle(&mut perm);
    perm
}

/// `texts` (in date order) applied in the arrival order `perm` with their dates
/// (`when`), the documents each one took shingles from and their copiers re-analysed
/// after it, as the evaluation does: the table and every document's final result, by
/// arrival number.
fn arrive_with_dates(
    e: &mut Engine,
    texts: &[String],
    perm: &[usize],
    when: When<'_>,
) -> (Table<Vec<u8>>, Vec<DocResult>) {
    let mut t = table(e.config());
    let mut results: Vec<DocResult> = Vec::new();
    for (a, &i) in perm.iter().enumerate() {
        let seq = a as u64 + 1;
        let mut doc = e.prepare(&texts[i]);
        let (r, taken) = e.apply_prepared(&mut t, &mut doc, seq, when);
        results.push(r);
        let mut affected: Vec<u64> = (1..seq)
            .filter(|&s| {
                taken.contains(&s)
                    || results[s as usize - 1].selected_origins.iter().any(|so| taken.contains(&so.origin))
            })
            .collect();
        affected.sort_by_key(|&s| when(s));
        for s in affected {
            let mut doc = e.prepare(&texts[perm[s as usize - 1]]);
            results[s as usize - 1] = e.reanalyse(&t, &mut doc, s, results[s as usize - 1].density, when);
        }
    }
    (t, results)
}

/// Issue 25: documents applied in any arrival order with their dates (a late older one
/// taking its shingles over, [`Engine::apply_prepared`]), and the documents it took from
/// and their copiers re-analysed ([`Engine::reanalyse`]), end with the origins the
/// brute-force reference gives in date order; re-analysing every document then changes
/// nothing (the revised set was enough).
fn dated_arrival_equals_date_order(seed: u64, docs: usize, arrival_seed: u64) -> Result<(), TestCaseError> {
    let cfg = exact_config();
    let texts = corpus(seed, docs);
    let perm = arrival_order(docs, arrival_seed);
    let date = |seq: u64| perm[seq as usize - 1];
    let when = |seq: u64| (date(seq) as i64, seq);
    let mut e = Engine::new(cfg.clone());
    let (t, results) = arrive_with_dates(&mut e, &texts, &perm, &when);
    prop_assert_eq!(t.stats().evictions, 0);
    let mut reference = Reference::new(cfg.k as usize);
    let truths: Vec<_> = texts.iter().enumerate().map(|(i, text)| reference.apply(i as u64 + 1, text)).collect();
    for (a, r) in results.iter().enumerate() {
        let seq = a as u64 + 1;
        let want = &truths[date(seq)];
        let got: Vec<u64> = r.selected_origins.iter().map(|s| date(s.origin) as u64 + 1).collect();
        prop_assert_eq!(&got, &want.origins, "document {} (date rank {})", seq, date(seq));
        prop_assert_eq!(r.fresh_tokens, want.fresh_tokens);
        let mut doc = e.prepare(&texts[date(seq)]);
        prop_assert_eq!(
            &e.reanalyse(&t, &mut doc, seq, r.density, &when),
            r,
            "document {} needed a revision it did not get",
            seq
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    #[test]
    fn any_arrival_order_ends_as_date_order(seed in any::<u64>(), docs in 1usize..25, arrival in any::<u64>()) {
        dated_arrival_equals_date_order(seed, docs, arrival)?;
    }
}

#[test]
fn a_late_original_takes_its_passage_over_and_its_copier_is_revised() {
    let mut t = table(&exact_config());
    let mut e = Engine::new(exact_config());
    let original = "the harbour authority said on monday that the old swing bridge will stay closed";
    let roundup =
        "this week in brief: the harbour authority said on monday that the old swing bridge will stay closed, and more";
    // The roundup (published later) arrives first; the original (published earlier) second.
    let published = |seq: u64| (if seq == 1 { 2 } else { 1 }, seq);
    let mut doc = e.prepare(roundup);
    let (first, taken) = e.apply_prepared(&mut t, &mut doc, 1, &published);
    assert!(first.copied_blocks.is_empty() && taken.is_empty());
    let mut doc = e.prepare(original);
    let (r, taken) = e.apply_prepared(&mut t, &mut doc, 2, &published);
    assert_eq!((r.old_tokens, r.copied_blocks.len()), (0, 0), "the original copies from nothing published before it");
    assert_eq!(taken, [1], "it took its passage over from the roundup");
    let mut doc = e.prepare(roundup);
    let revised = e.reanalyse(&t, &mut doc, 1, first.density, &published);
    assert_eq!(revised.copied_blocks.iter().map(|b| b.origin).collect::<Vec<_>>(), [2]);
    assert_eq!(revised.dominant_origin, Some(2));
    // Without dates nothing is taken over: today's behaviour.
    let mut t2 = table(&exact_config());
    e.apply(&mut t2, 1, roundup);
    let plain = e.apply(&mut t2, 2, original);
    assert_eq!(plain.copied_blocks.iter().map(|b| b.origin).collect::<Vec<_>>(), [1]);
}

/// Issue 25, for a selection policy with the default estimation (bridging and
/// expansion): any arrival order with dates and revisions, against the date-ordered
/// ingestion's results (copied blocks, token labels, dominant origins). Returns how
/// many documents differ and how many were compared.
fn dated_arrival_against_date_ordered_ingestion(
    (selection, density, propagate): (crate::select::Selection, Density, bool),
    seed: u64,
    docs: usize,
    arrival: u64,
) -> (usize, usize) {
    let cfg = Config { selection, table_bytes: 64 << 20, propagate, density, ..Config::default() };
    let texts = corpus(seed, docs);
    let perm = arrival_order(docs, arrival);
    let date = |seq: u64| perm[seq as usize - 1];
    let when = |seq: u64| (date(seq) as i64, seq);
    // Date order: document i is number i + 1.
    let mut t = table(&cfg);
    let mut e = Engine::new(cfg.clone());
    let in_order: Vec<DocResult> = texts.iter().enumerate().map(|(i, x)| e.apply(&mut t, i as u64 + 1, x)).collect();
    // Arrival order with dates, revising what the late ones take over.
    let (t, results) = arrive_with_dates(&mut e, &texts, &perm, &when);
    assert_eq!(t.stats().evictions, 0);
    let by_date = |o: u64| date(o) as u64 + 1;
    let view = |r: &DocResult, number: &dyn Fn(u64) -> u64| {
        let blocks: Vec<(u32, u32, u64)> =
            r.copied_blocks.iter().map(|b| (b.span.start_token, b.span.end_token, number(b.origin))).collect();
        (blocks, r.old_tokens, r.dominant_origin.map(number))
    };
    let differ =
        results.iter().enumerate().filter(|(a, r)| view(r, &by_date) != view(&in_order[perm[*a]], &|o| o)).count();
    (differ, docs)
}

/// Without propagation every selection ends exactly as in date order. With it, an entry
/// keeps the origin propagation gave it, not who inserted it: an entry that a document
/// published later inserted for a shingle bridged to an earlier source carries that
/// source, and a document published before the inserter but after the source, arriving
/// after it, finds the shingle there instead of calling it its own (redoing propagation
/// in revisions does not help: measured). Measured 0 of 240 documents for six policies,
/// 1 (Hb3) and 2 (Dct8) of 240 for the sparse ones, which bridge most; held here under
/// 2%.
///
/// With the adaptive density the same holds where the policy's selection of a shingle
/// is the shingle's alone (All, the Hailstorms, Hb3, Dct8). Where it depends on the
/// shingle's place (4th, NM4, NW8) one shingle is a policy shingle of one document and
/// an extra one of another, and an extra shingle never touches a policy entry (issue
/// 79, item 3: the table's extra entries are guests): a document published between two
/// that select it, which arrived before both and found the later one's entry, is not
/// revised when the earlier one takes that entry over. Measured (20-document corpora,
/// 12 seeds) 21, 3 and 3 of 240 documents without propagation, 23, 4 and 3 with it;
/// held here under 12.5%.
#[test]
fn any_arrival_order_ends_as_date_ordered_ingestion_for_every_selection() {
    use crate::select::Selection::*;
    let selections = [
        All,
        Every(4),
        Modulo { l: 4, no_overlap: true },
        Winnowing { w: 8, no_overlap: true },
        Hailstorm { no_overlap: false },
        Hailstorm { no_overlap: true },
        HashBreaking(3),
        Dct(8),
    ];
    for (density, propagate, selection) in [Density::Paper, Density::Adaptive]
        .into_iter()
        .flat_map(|d| [false, true].map(|p| (d, p)))
        .flat_map(|(d, p)| selections.map(|s| (d, p, s)))
    {
        let (mut differ, mut all) = (0, 0);
        for seed in 0..12u64 {
            let (d, n) = dated_arrival_against_date_ordered_ingestion(
                (selection, density, propagate),
                seed * 7919 + 1,
                20,
                seed ^ 0xa11,
            );
            differ += d;
            all += n;
        }
        let by_place = density == Density::Adaptive
            && matches!(selection, Every(_) | Modulo { no_overlap: true, .. } | Winnowing { no_overlap: true, .. });
        match (propagate, by_place) {
            (_, true) => assert!(differ * 8 <= all, "{selection}, {density}: {differ} of {all} documents differ"),
            (false, false) => {
                assert_eq!(differ, 0, "{selection}, {density}: {differ} of {all} documents differ from date order")
            }
            (true, false) => {
                assert!(differ * 50 <= all, "{selection}, {density}, propagation: {differ} of {all} documents differ")
            }
        }
    }
}

/// A small table of `cfg`'s shape (`bytes` of buckets, 16 entries each) and the
/// documents of `corpus(seed, docs)` applied to it: the results.
fn apply_all(cfg: &Config, t: &mut Table<Vec<u8>>, texts: &[String]) -> Vec<DocResult> {
    let mut e = Engine::new(cfg.clone());
    texts.iter().enumerate().map(|(i, text)| e.apply(t, i as u64 + 1, text)).collect()
}

fn small(density: Density) -> Config {
    Config { table_bytes: 8 << 10, bucket_entries: 16, density, ..Config::default() }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    /// Issue 36: with the density at its floor from the start, an adaptive table gives
    /// the paper's results and table, byte for byte.
    #[test]
    fn density_at_the_floor_is_the_paper(seed in any::<u64>(), docs in 60usize..100) {
        let texts = corpus(seed, docs);
        let mut paper = table(&small(Density::Paper));
        let want = apply_all(&small(Density::Paper), &mut paper, &texts);
        let mut floor = table(&small(Density::Adaptive));
        floor.stats_mut().density = FLOOR;
        let got = apply_all(&small(Density::Adaptive), &mut floor, &texts);
        prop_assert_eq!(got, want);
        prop_assert_eq!(floor.digest(), paper.digest());
        prop_assert_eq!(floor.stats(), TableStats { density: FLOOR, ..paper.stats() });
        prop_assert!(paper.stats().evictions > 0, "the table evicts");
    }

    /// Whatever the adaptive density does — its extra entries taken
    /// in and given up, the raises, with or without a lag, under every eviction policy
    /// — the policy's entries of its table are the paper's table at every document's
    /// end (the same entries, data, scores and order per bucket), and once the sweep
    /// at the floor has removed the extra ones the two tables are one, so that the
    /// documents after it get the paper's results.
    #[test]
    fn guests_leave_the_papers_table_as_it_is(
        seed in any::<u64>(),
        docs in 60usize..100,
        lag in prop_oneof![Just(0u8), Just(3u8)],
        eviction in prop_oneof![Just(Eviction::Lucky), Just(Eviction::CopyCount), Just(Eviction::Lru), Just(Eviction::Random)],
    ) {
        let texts = corpus(seed, docs);
        let paper_cfg = Config { eviction, ..small(Density::Paper) };
        let cfg = Config { density_lag: lag, ..Config { density: Density::Adaptive, ..paper_cfg.clone() } };
        let (mut paper, mut adaptive) = (table(&paper_cfg), table(&cfg));
        let (mut pe, mut ae) = (Engine::new(paper_cfg), Engine::new(cfg));
        let mut floor_at = None;
        for (i, text) in texts.iter().enumerate() {
            let seq = i as u64 + 1;
            let want = pe.apply(&mut paper, seq, text);
            let got = ae.apply(&mut adaptive, seq, text);
            prop_assert_eq!(adaptive.policy_digest(), paper.digest(), "document {}", seq);
            if let Some(at) = floor_at {
                prop_assert_eq!(adaptive.digest(), paper.digest(), "document {} (the floor from {})", seq, at);
                prop_assert_eq!(&got, &want, "document {} (the floor from {})", seq, at);
            } else if adaptive.density() == FLOOR {
                floor_at = Some(seq);
            }
        }
        prop_assert!(paper.stats().evictions > 0, "the table evicts");
        prop_assert!(floor_at.is_some_and(|at| at < docs as u64), "the density reaches its floor");
    }

    /// Issue 36: replayed from a checkpoint taken anywhere (the table's bytes and
    /// counters, the density threshold among them), the documents after it get the
    /// same results and leave the same table, while the density falls mid-stream.
    #[test]
    fn replay_from_any_checkpoint_is_exact_while_the_density_falls(
        seed in any::<u64>(),
        cut in 0usize..60,
        lag in prop_oneof![Just(0u8), Just(3u8)],
    ) {
        // Schema 23: with a lag, the checkpoint keeps the pending ask for a raise.
        let cfg = Config { density_lag: lag, ..small(Density::Adaptive) };
        let texts = corpus(seed, 60);
        let mut whole = table(&cfg);
        let mut e = Engine::new(cfg.clone());
        let mut results = Vec::new();
        let mut checkpoint = None;
        for (i, text) in texts.iter().enumerate() {
            if i == cut {
                checkpoint = Some((whole.memory().clone(), whole.stats(), whole.shift(), whole.pending_raise()));
            }
            results.push(e.apply(&mut whole, i as u64 + 1, text));
        }
        let (mem, stats, shift, asked) = checkpoint.expect("cut < 60");
        let shape = Shape { shift, ..Shape::from(&cfg.table_params()) };
        let mut replayed = Table::over(mem, shape, stats);
        replayed.set_pending_raise(asked);
        let mut e = Engine::new(cfg.clone());
        for (i, text) in texts.iter().enumerate().skip(cut) {
            prop_assert_eq!(&e.apply(&mut replayed, i as u64 + 1, text), &results[i], "document {}", i + 1);
        }
        prop_assert_eq!(replayed.digest(), whole.digest());
        prop_assert_eq!(replayed.stats(), whole.stats());
    }
}

/// The density falls from a quarter of the other shingles to the paper's selection as
/// the table fills, in one raise, and each result records the
/// threshold it was selected at; with a lag (schema 23) the raise comes the lag's
/// documents after the first full bucket, one document later than at once: the first
/// asking document is selected before either.
#[test]
fn the_density_falls_to_the_paper_once_as_the_table_fills() {
    let raised: Vec<usize> = [0u8, 4]
        .into_iter()
        .map(|lag| {
            let cfg = Config { density_lag: lag, ..small(Density::Adaptive) };
            let mut t = table(&cfg);
            let results = apply_all(&cfg, &mut t, &corpus(7, 150));
            let seen: Vec<Option<u8>> = results.iter().map(|r| r.density).collect();
            let at = seen.iter().position(|d| d.is_none()).expect("the floor is reached");
            assert!(at > 0 && seen[..at].iter().all(|&d| d == Some(crate::select::START)), "lag {lag}: {seen:?}");
            assert!(seen[at..].iter().all(|d| d.is_none()), "lag {lag}: {seen:?}");
            // At the floor every extra entry was swept out: the next documents are the paper's.
            assert_eq!(t.density(), FLOOR);
            assert!(t.stats().evictions > 0);
            at
        })
        .collect();
    assert_eq!(raised[1], raised[0] + 3, "the lag of 4 binds: {raised:?}");
}

/// Issue 36: a short copy that the policy's selection misses is found while the table
/// has room.
#[test]
fn a_short_copy_is_found_while_the_table_has_room() {
    let source = (0..200).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
    let copied = (50..70).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
    let copy = format!("{copied} and then new words follow here");
    let found: Vec<usize> = [Density::Paper, Density::Adaptive]
        .into_iter()
        .map(|density| {
            let cfg = Config { density, selection: crate::select::Selection::default(), ..exact_config() };
            let cfg = Config { estimation: crate::estimate::Estimation::Be, ..cfg };
            let mut t = table(&cfg);
            let mut e = Engine::new(cfg);
            e.apply(&mut t, 1, &source);
            let r = e.apply(&mut t, 2, &copy);
            r.selected_origins.iter().filter(|s| s.origin == 1).count()
        })
        .collect();
    assert!(found[1] > found[0] + 2, "found in the source, paper against adaptive: {found:?}");
}

/// With origins off the engine looks nothing up and inserts nothing: a document
/// copying an earlier one whole has no copied block, no token labelled, no dominant
/// origin, and the table holds no entry; its counters still follow the documents.
#[test]
fn origins_off_touch_no_entry_and_label_nothing() {
    let cfg = Config { origins: false, table_bytes: 1 << 20, ..Config::default() };
    let mut t = table(&cfg);
    let mut e = Engine::new(cfg.clone());
    let text = corpus(7, 1).remove(0);
    for seq in 1..=2 {
        let r = e.apply(&mut t, seq, &text);
        let words = r.tokens;
        assert!(words > 8, "{text}");
        let want = DocResult { seq, tokens: words, shingles: words - 7, ..DocResult::default() };
        assert_eq!(r, want, "document {seq}");
    }
    let stats = t.stats();
    assert_eq!((stats.occupied, stats.documents, stats.last_seq), (0, 2, 2));
    // The same copy with origins on: the second document's tokens are copied from the first.
    let on = Config { origins: true, ..cfg };
    let (mut t, mut e) = (table(&on), Engine::new(on));
    e.apply(&mut t, 1, &text);
    let r = e.apply(&mut t, 2, &text);
    assert!(r.old_tokens > r.tokens / 2 && r.dominant_origin == Some(1), "{r:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// An exact copy answered from its earlier document equals the full analysis where
    /// the table holds every shingle of it, apart from the origins: the same counts,
    /// hits, old and fresh tokens and novel segments; its blocks cover the same tokens,
    /// each credited to the earlier document (the direct source), which is dominant.
    /// Case and punctuation do not make a copy inexact.
    #[test]
    fn an_exact_copy_is_the_full_analysis_with_its_source_direct(seed in any::<u64>(), docs in 1usize..20, pick in any::<usize>()) {
        let cfg = Config { table_bytes: 64 << 20, ..Config::default() };
        let texts = corpus(seed, docs);
        let mut t = table(&cfg);
        let mut e = Engine::new(cfg.clone());
        let rabin = Rabin::new(cfg.k as usize);
        let mut blocks: Vec<Vec<Block>> = Vec::new();
        let origin_text = |blocks: &[Vec<Block>], o: u64| Some(Arc::new(OriginText::new(&texts[o as usize - 1], &rabin, &blocks[o as usize - 1])));
        for (i, text) in texts.iter().enumerate() {
            let mut doc = e.prepare(text);
            let mut r = e.apply_prepared(&mut t, &mut doc, i as u64 + 1, &by_arrival).0;
            e.align(&doc, &mut r, |o| origin_text(&blocks, o), |_| Vec::new(), &by_arrival);
            blocks.push(r.copied_blocks);
        }
        prop_assert_eq!(t.stats().evictions, 0);
        let of = (pick % docs) as u64 + 1;
        let copy = texts[of as usize - 1].to_uppercase().replace(' ', ", ");
        let seq = docs as u64 + 1;
        let mut doc = e.prepare(&copy);
        doc.at_density(t.density());
        let mut full = e.query_prepared(&t, &doc, seq);
        e.align(&doc, &mut full, |o| origin_text(&blocks, o), |_| Vec::new(), &by_arrival);
        let mut fast = e.exact_copy(&doc, seq, of, &by_arrival);
        e.align(&doc, &mut fast, |o| origin_text(&blocks, o), |_| Vec::new(), &by_arrival);
        let counts = |r: &DocResult| (r.tokens, r.shingles, r.selected, r.hits, r.old_tokens, r.fresh_tokens, r.density);
        prop_assert_eq!(counts(&fast), counts(&full));
        prop_assert_eq!(&fast.novel_segments, &full.novel_segments);
        let covered = |r: &DocResult| r.copied_blocks.iter().flat_map(|b| b.span.start_token..b.span.end_token).collect::<Vec<u32>>();
        prop_assert_eq!(covered(&fast), covered(&full));
        prop_assert!(fast.copied_blocks.iter().all(|b| b.origin == of), "{:?}", fast.copied_blocks);
        if fast.selected > 0 {
            prop_assert_eq!(fast.dominant_origin, Some(of));
            prop_assert_eq!(fast.old_tokens, fast.tokens);
        }
    }
}
