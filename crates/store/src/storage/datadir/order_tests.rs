//! Pairs by publication: whatever the arrival order of documents with
//! distinct dates, a data directory ends with the near-duplicate and quotation pairs of
//! the date-ordered run, oriented by date, and the same origins.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use proptest::prelude::*;
use textorigin_core::config::Overrides;
use textorigin_core::testdata::XorShift;

use super::DataDir;
use crate::input::InputDoc;
use crate::intake::Policy;

/// A sentence of `min` to `min + spread - 1` distinct random words (capitalised,
/// ending a sentence).
fn sentence(g: &mut XorShift, min: usize, spread: u64) -> String {
    let n = min + g.below(spread) as usize;
    let mut words = BTreeSet::new();
    while words.len() < n {
        words.insert(g.below(20_000));
    }
    let mut out: Vec<String> = words.into_iter().map(|w| format!("w{w}")).collect();
    g.shuffle(&mut out);
    format!("W{} {}.", &out[0][1..], out[1..].join(" "))
}

/// `n` documents, dated a day apart in the order made: fresh sentences, sentences of a
/// shared pool (quotations, and copied passages), and near-copies of an earlier
/// document (one word appended) or exact ones.
pub(super) fn corpus(seed: u64, n: usize) -> Vec<InputDoc> {
    let mut g = XorShift::new(seed | 1);
    let pool: Vec<String> = (0..12).map(|_| sentence(&mut g, 6, 20)).collect();
    let mut texts: Vec<String> = Vec::with_capacity(n);
    for i in 0..n {
        let text = match g.below(5) {
            0 if i > 0 => texts[g.below(i as u64) as usize].clone(),
            1 if i > 0 => format!("{} Wend{i}.", texts[g.below(i as u64) as usize]),
            _ => {
                let mut picked: Vec<usize> = (0..pool.len()).collect();
                g.shuffle(&mut picked);
                let mut parts: Vec<String> =
                    picked[..2 + g.below(4) as usize].iter().map(|&p| pool[p].clone()).collect();
                for _ in 0..2 + g.below(4) {
                    parts.push(sentence(&mut g, 6, 8));
                }
                g.shuffle(&mut parts);
                parts.join(" ")
            }
        };
        texts.push(text);
    }
    texts
        .into_iter()
        .enumerate()
        .map(|(i, text)| InputDoc {
            name: format!("d{i}"),
            source: format!("d{i}"),
            text,
            published_at: Some(format!("2026-01-{:02}", i + 1)),
            ..InputDoc::default()
        })
        .collect()
}

/// Near-duplicate pairs (later name, earlier name, verdict without the id), quotation
/// pairs (quoting name, sentence, source name, its sentence) and each document's
/// origins (old tokens, copied blocks with their origins' names, dominant origin), by
/// name: what must not depend on the arrival order.
type Outcome = (BTreeSet<(String, String, String)>, BTreeSet<(String, u32, String, u32)>, BTreeMap<String, String>);

fn run(dir: &Path, docs: &[InputDoc], order: &[usize], exact_copies: bool) -> Outcome {
    let overrides = Overrides {
        table_bytes: Some(1 << 20),
        index_bytes: Some(8 << 20),
        // Exact under any arrival order without propagation (engine tests).
        propagate: Some(false),
        exact_copies: Some(exact_copies),
        ..Overrides::default()
    };
    let mut dd = DataDir::open_write(dir, &overrides, Policy::default()).unwrap();
    let mut names = BTreeMap::new();
    for &i in order {
        let (meta, _) = dd.ingest(&docs[i]).unwrap();
        names.insert(meta.seq, meta.name);
    }
    let name = |seq: u64| names[&seq].clone();
    let (mut near, mut quotes, mut origins) = (BTreeSet::new(), BTreeSet::new(), BTreeMap::new());
    let s = dd.store();
    for (&seq, n) in &names {
        for d in s.near_dups(seq).unwrap() {
            let verdict = format!("{:?}", textorigin_core::neardup::NearDup { seq: 0, ..d });
            near.insert((n.clone(), name(d.seq), verdict));
        }
        let later: BTreeSet<String> = s.near_dups_later(seq).unwrap().iter().map(|d| name(d.seq)).collect();
        let earlier_of_others: BTreeSet<String> =
            names.keys().filter(|&&o| s.near_dups(o).unwrap().iter().any(|d| d.seq == seq)).map(|&o| name(o)).collect();
        assert_eq!(later, earlier_of_others, "{n}: its later near-duplicates are those that name it");
        for q in s.quotations(seq).unwrap() {
            for src in &q.sources {
                quotes.insert((n.clone(), q.sentence, name(src.seq), src.sentence));
            }
        }
        let r = s.result(seq).unwrap().unwrap();
        let blocks: Vec<_> =
            r.copied_blocks.iter().map(|b| (b.span.start_token, b.span.end_token, name(b.origin))).collect();
        origins.insert(n.clone(), format!("{} {:?} {:?}", r.old_tokens, blocks, r.dominant_origin.map(name)));
    }
    dd.close().unwrap();
    (near, quotes, origins)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Exact copies analysed in full: any arrival order.
    #[test]
    fn any_arrival_order_ends_with_the_pairs_and_origins_of_date_order(seed in any::<u64>(), n in 3usize..9) {
        let docs = corpus(seed, n);
        let mut order: Vec<usize> = (0..n).collect();
        XorShift::new(seed ^ 0x5eed).shuffle(&mut order);
        same_as_date_order(&docs, &order, false)?;
    }

    /// Exact copies answered from their earlier documents: any arrival order in which
    /// the first-published document of each text comes before its copies (a copy
    /// arriving before its original is analysed in full, and stays so).
    #[test]
    fn exact_copies_after_their_original_end_with_the_pairs_and_origins_of_date_order(seed in any::<u64>(), n in 3usize..9) {
        let docs = corpus(seed, n);
        let mut order: Vec<usize> = (0..n).collect();
        XorShift::new(seed ^ 0x5eed).shuffle(&mut order);
        // The places the documents of one text take, given to them in date order.
        let mut by_text: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (at, &i) in order.iter().enumerate() {
            by_text.entry(docs[i].text.as_str()).or_default().push(at);
        }
        for places in by_text.values() {
            let mut members: Vec<usize> = places.iter().map(|&at| order[at]).collect();
            members.sort_unstable();
            for (&at, m) in places.iter().zip(members) {
                order[at] = m;
            }
        }
        same_as_date_order(&docs, &order, true)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// An exact copy's near-duplicates, taken from its earlier document's without a
    /// search (`search::copy_near_dups`), are those the search finds: the same pairs and
    /// verdicts with exact copies answered as analysed in full, copies of copies and
    /// near copies of either among them.
    #[test]
    fn exact_copies_have_the_near_duplicates_a_search_finds(seed in any::<u64>(), n in 4usize..14) {
        let docs = corpus(seed, n);
        let tmp = tempfile::tempdir().unwrap();
        let order: Vec<usize> = (0..n).collect();
        let answered = run(&tmp.path().join("answered"), &docs, &order, true);
        let analysed = run(&tmp.path().join("analysed"), &docs, &order, false);
        prop_assert_eq!(answered.0, analysed.0);
    }
}

fn same_as_date_order(docs: &[InputDoc], order: &[usize], exact_copies: bool) -> Result<(), TestCaseError> {
    let tmp = tempfile::tempdir().unwrap();
    let by_date = run(&tmp.path().join("by-date"), docs, &(0..docs.len()).collect::<Vec<_>>(), exact_copies);
    let shuffled = run(&tmp.path().join("shuffled"), docs, order, exact_copies);
    prop_assert_eq!(&shuffled.0, &by_date.0, "near-duplicates, arrival {:?}", order);
    prop_assert_eq!(&shuffled.1, &by_date.1, "quotations, arrival {:?}", order);
    prop_assert_eq!(&shuffled.2, &by_date.2, "origins, arrival {:?}", order);
    Ok(())
}

/// The pairs a late original finds are found from its side and oriented by date: the
/// copy it arrived after names it as its earlier near-duplicate and quotes it.
#[test]
fn a_late_original_is_the_earlier_member_of_its_pairs() {
    let docs = corpus(7, 2);
    let mut copy = docs[0].clone();
    copy.name = "copy".into();
    copy.text = format!("{} An added closing sentence here.", docs[0].text);
    copy.published_at = Some("2026-02-01".into());
    let tmp = tempfile::tempdir().unwrap();
    let mut dd = DataDir::open_write(tmp.path(), &Overrides::default(), Policy::default()).unwrap();
    dd.ingest(&copy).unwrap();
    dd.ingest(&docs[0]).unwrap();
    let s = dd.store();
    assert_eq!(s.near_dups(2).unwrap(), [], "the original has no earlier near-duplicate");
    assert_eq!(s.near_dups(1).unwrap().iter().map(|d| d.seq).collect::<Vec<_>>(), [2], "the copy's is the original");
    assert_eq!(s.near_dups_later(2).unwrap().iter().map(|d| d.seq).collect::<Vec<_>>(), [1]);
    assert!(s.quotations(2).unwrap().is_empty(), "the original quotes nothing");
    let quotes = s.quotations(1).unwrap();
    assert!(!quotes.is_empty() && quotes.iter().all(|q| q.sources.iter().all(|x| x.seq == 2)), "{quotes:?}");
}

/// A sentence found again and again: sources from several late arrivals are joined,
/// cut at `max_sources`, the earliest published kept, as in a run in date order.
#[test]
fn a_sentence_keeps_its_earliest_published_sources_whatever_the_arrival_order() {
    let mut g = XorShift::new(11);
    let shared = sentence(&mut g, 9, 1);
    let docs: Vec<InputDoc> = (0..13)
        .map(|i| {
            let mut d = corpus(i + 1, 1).remove(0);
            d.name = format!("d{i}");
            d.text = format!("{} {shared} {}", sentence(&mut g, 8, 1), sentence(&mut g, 8, 1));
            d.published_at = Some(format!("2026-01-{:02}", i + 1));
            d
        })
        .collect();
    let sources = |order: Vec<usize>| {
        let tmp = tempfile::tempdir().unwrap();
        let mut dd = DataDir::open_write(tmp.path(), &Overrides::default(), Policy::default()).unwrap();
        let mut newest = 0;
        for i in order {
            let (meta, _) = dd.ingest(&docs[i]).unwrap();
            if i == 12 {
                newest = meta.seq;
            }
        }
        let s = dd.store();
        let quotes = s.quotations(newest).unwrap();
        assert_eq!(quotes.len(), 1, "{quotes:?}");
        quotes[0].sources.iter().map(|x| s.doc(x.seq).unwrap().unwrap().name).collect::<Vec<_>>()
    };
    let earliest: Vec<String> = (0..10).map(|i| format!("d{i}")).collect();
    assert_eq!(sources((0..13).collect()), earliest, "in date order");
    assert_eq!(sources((0..13).rev().collect()), earliest, "newest first");
}
