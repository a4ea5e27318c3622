//! The feature switches: a feature switched off does no work, stores and
//! indexes nothing, and leaves the origins as they are; `rebuild --reanalyse` turns it
//! on and gives what a data directory that always had it holds. And a restart from a
//! checkpoint slot an older build wrote.

use std::path::Path;

use textorigin_core::config::Overrides;

use super::{DataDir, DataDirError, RebuildOptions};
use crate::input::InputDoc;
use crate::intake::Policy;

/// Documents with a near-duplicate (#2 of #1, one word changed) and a quotation (#3
/// quotes a sentence of #1).
fn corpus() -> Vec<InputDoc> {
    let first = "The council approved the new bridge over the river on Monday after a long debate about its cost. \
                 Engineers expect the work to take two years and to close the old crossing for a month. \
                 Residents of the east bank asked for a ferry while the crossing is closed.";
    let second = first.replace("Monday", "Tuesday");
    let third = "In other news, the bakery on Main Street reopened. \
                 Engineers expect the work to take two years and to close the old crossing for a month. \
                 The mayor did not comment on the schedule of the works.";
    [first, &second, third]
        .iter()
        .enumerate()
        .map(|(i, t)| InputDoc {
            name: format!("d{i}"),
            source: format!("d{i}"),
            text: t.to_string(),
            url: None,
            ..InputDoc::default()
        })
        .collect()
}

fn ingest_all(dir: &Path, overrides: &Overrides) -> DataDir {
    let mut dd = DataDir::open_write(dir, overrides, Policy::default()).unwrap();
    for doc in corpus() {
        dd.ingest(&doc).unwrap();
    }
    dd
}

fn small(near_duplicates: bool, quotations: bool) -> Overrides {
    Overrides {
        table_bytes: Some(64 << 10),
        index_bytes: Some(8 << 20),
        near_duplicates: Some(near_duplicates),
        quotations: Some(quotations),
        ..Overrides::default()
    }
}

#[test]
fn a_feature_switched_off_does_no_work_and_stores_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let on = ingest_all(&tmp.path().join("on"), &small(true, true));
    let times = on.stage_times();
    assert_eq!((times.sketches, times.quote_searches), (3, 3));
    let idx = on.indexes().stats();
    assert!(idx.nd_inserts > 0 && idx.sig_inserts > 0 && idx.df_inserts > 0, "{idx:?}");
    assert!(on.store().near_dups(2).unwrap().iter().any(|d| d.seq == 1), "#2 is a near-duplicate of #1");
    assert!(!on.store().quotations(3).unwrap().is_empty(), "#3 quotes #1");

    for (nd, q) in [(false, true), (true, false), (false, false)] {
        let dd = ingest_all(&tmp.path().join(format!("{nd}-{q}")), &small(nd, q));
        let times = dd.stage_times();
        assert_eq!((times.sketches, times.quote_searches), (3 * u64::from(nd), 3 * u64::from(q)));
        let idx = dd.indexes().stats();
        assert_eq!(idx.nd_inserts > 0, nd, "{idx:?}");
        assert_eq!((idx.sig_inserts > 0, idx.df_inserts > 0), (q, q), "{idx:?}");
        for seq in 1..=3 {
            let s = dd.store();
            if !nd {
                assert!(s.near_dups(seq).unwrap().is_empty());
            }
            assert_eq!(
                s.result(seq).unwrap(),
                on.store().result(seq).unwrap(),
                "origins do not depend on the switches"
            );
            if !q {
                assert!(s.quotations(seq).unwrap().is_empty());
            }
        }
        dd.close().unwrap();
    }
    on.close().unwrap();
}

#[test]
fn switching_a_feature_needs_a_reanalysis_which_gives_what_it_always_had() {
    let tmp = tempfile::tempdir().unwrap();
    let (off, on) = (tmp.path().join("off"), tmp.path().join("on"));
    ingest_all(&off, &small(false, false)).close().unwrap();
    let err = DataDir::open_write(
        &off,
        &Overrides { near_duplicates: Some(true), ..Overrides::default() },
        Policy::default(),
    );
    assert!(matches!(err, Err(DataDirError::FeatureSwitch { on: true, .. })), "{:?}", err.err());
    assert!(matches!(
        DataDir::rebuild(&off, RebuildOptions { quotations: Some(true), ..RebuildOptions::default() }, |_, _| {}),
        Err(DataDirError::NeedsReanalysis)
    ));
    let opts = RebuildOptions {
        reanalyse: true,
        near_duplicates: Some(true),
        quotations: Some(true),
        ..RebuildOptions::default()
    };
    DataDir::rebuild(&off, opts, |_, _| {}).unwrap();
    ingest_all(&on, &small(true, true)).close().unwrap();
    let (a, b) = (DataDir::open_read(&off).unwrap(), DataDir::open_read(&on).unwrap());
    assert_eq!(a.config(), b.config());
    for seq in 1..=3 {
        assert_eq!(a.store().near_dups(seq).unwrap(), b.store().near_dups(seq).unwrap());
        assert_eq!(a.store().quotations(seq).unwrap(), b.store().quotations(seq).unwrap());
        assert_eq!(a.recomputer().sketch(a.store(), seq).unwrap(), b.recomputer().sketch(b.store(), seq).unwrap());
    }
    assert_eq!(a.indexes().digest(), b.indexes().digest());
    assert_eq!(a.table().digest(), b.table().digest());
    // And off again: the stored findings go.
    drop(a);
    let opts = RebuildOptions { reanalyse: true, quotations: Some(false), ..RebuildOptions::default() };
    DataDir::rebuild(&off, opts, |_, _| {}).unwrap();
    let a = DataDir::open_read(&off).unwrap();
    assert!(a.store().quotations(3).unwrap().is_empty());
    assert!(!a.store().near_dups(2).unwrap().is_empty());
}

/// A checkpoint slot whose table is of an older format (written before an upgrade, the
/// table file lost with the crash) is no start: the recovery replays every document and
/// ends where an uninterrupted run does.
#[test]
fn a_slot_of_an_older_table_format_is_replayed_over() {
    let (tmp, clean) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let dir = tmp.path();
    let docs = corpus();
    let mut dd = DataDir::open_write(dir, &small(true, true), Policy::default()).unwrap();
    dd.ingest(&docs[0]).unwrap();
    dd.ingest(&docs[1]).unwrap();
    dd.checkpoint().unwrap();
    let mut older = std::fs::read(super::table_path(dir)).unwrap();
    older[8..12].copy_from_slice(&3u32.to_le_bytes());
    let store = dd.store().id().unwrap();
    dd.ingest(&docs[2]).unwrap();
    drop(dd);
    crate::storage::checkpoint::write_parts(dir, &[&older], 2, store).unwrap();
    std::fs::remove_file(super::table_path(dir)).unwrap();
    let recovery = DataDir::recover(dir, |_, _| std::ops::ControlFlow::Continue(())).unwrap().expect("a recovery");
    assert_eq!((recovery.from_checkpoint, recovery.replayed), (0, 3));
    ingest_all(clean.path(), &small(true, true)).close().unwrap();
    let (a, b) = (DataDir::open_read(dir).unwrap(), DataDir::open_read(clean.path()).unwrap());
    assert_eq!(a.table().digest(), b.table().digest());
    assert_eq!(a.indexes().digest(), b.indexes().digest());
}

/// Issue 56: a process that starts with empty caches sketches and splits a text that n
/// earlier copies share once, not n times (the n-th re-publication of a document cost
/// n times the first); each copy's sketch and sentences are what it gets alone.
#[test]
fn copies_of_one_text_are_sketched_and_split_once_by_a_fresh_process() {
    let dir = tempfile::tempdir().unwrap();
    let mut dd = DataDir::open_write(dir.path(), &small(true, true), Policy::default()).unwrap();
    let docs = corpus();
    for i in 0..3 {
        let name = format!("copy{i}");
        dd.ingest(&InputDoc { name: name.clone(), source: name, ..docs[0].clone() }).unwrap();
    }
    dd.ingest(&docs[2]).unwrap();
    dd.close().unwrap();
    let fresh = || DataDir::open_read(dir.path()).unwrap();
    let dd = fresh();
    let sketch = |seq| dd.recomputer().sketch(dd.store(), seq).unwrap().unwrap();
    let (first, other) = (sketch(1), sketch(4));
    for seq in 2..=3 {
        assert!(std::sync::Arc::ptr_eq(&first, &sketch(seq)), "copy #{seq} was sketched again");
        let alone = fresh();
        assert_eq!(*alone.recomputer().sketch(alone.store(), seq).unwrap().unwrap(), *first, "#{seq} alone");
    }
    assert!(!std::sync::Arc::ptr_eq(&first, &other));
    let sentence = |seq| dd.recomputer().sentence(dd.store(), seq, 0).unwrap().unwrap();
    let one = sentence(1);
    for seq in 2..=3 {
        assert!(std::ptr::eq(one.words(), sentence(seq).words()), "copy #{seq} was split again");
        let alone = fresh();
        let split = alone.recomputer().sentence(alone.store(), seq, 0).unwrap().unwrap();
        assert_eq!(split.to_sentence(), one.to_sentence(), "#{seq} alone");
    }
    assert!(!std::ptr::eq(one.words(), sentence(4).words()));
}

/// A document this process stored is read as an origin from the token fingerprints it
/// kept, as from its stored text: the same tokens, shingles and blocks.
#[test]
fn an_origin_read_from_its_kept_tokens_is_the_one_read_from_its_text() {
    let tmp = tempfile::tempdir().unwrap();
    let dd = ingest_all(tmp.path(), &small(true, true));
    let mut copied = 0;
    for seq in 1..=3 {
        let kept = crate::storage::recompute::origin_text(&dd.store, &dd.engine, seq).unwrap().unwrap();
        let text = dd.store.text(seq).unwrap().unwrap();
        let blocks = dd.store.result(seq).unwrap().unwrap().copied_blocks;
        copied += blocks.len();
        assert_eq!(*kept, dd.engine.origin_text(&text, &blocks), "document {seq}");
    }
    assert!(copied > 0, "the blocks are compared too");
}

/// An exact copy reads its earlier document as an origin from its own tokens and
/// shingles (the same ones) with that document's stored blocks: what reading its text
/// gives, so the copy's block names the passage's earlier source beside it.
#[test]
fn an_exact_copys_source_read_from_the_copy_is_the_one_read_from_its_text() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dd = ingest_all(tmp.path(), &small(true, true));
    let quoting = corpus()[2].clone();
    let (meta, result) = dd.ingest(&InputDoc { name: "copy".into(), source: "copy".into(), ..quoting }).unwrap();
    assert_eq!(meta.seq, 4);
    let spans: Vec<_> = result.copied_blocks.iter().map(|b| (b.span.start_token, b.span.end_token, b.origin)).collect();
    assert_eq!(spans, [(0, result.tokens, 3)], "one block of its earlier document");
    let own = dd.store.result(3).unwrap().unwrap().copied_blocks;
    assert!(own.iter().any(|b| b.origin == 1), "#3 quotes #1: {own:?}");
    let beside: Vec<_> = result.passages.also_earlier.iter().map(|a| a.origin).collect();
    assert!(beside.contains(&1), "the quoted sentence's source is listed beside the block: {beside:?}");
    let read = dd.store.cached_origin_text(3).expect("read as the copy's origin");
    let text = dd.store.text(3).unwrap().unwrap();
    assert_eq!(*read, dd.engine.origin_text(&text, &own));
}
