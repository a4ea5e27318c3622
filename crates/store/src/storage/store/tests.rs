//! The store's unit tests.

use super::*;
use crate::storage::recompute::Recomputer;
use crate::storage::search;
use textorigin_core::index::Indexes;
use textorigin_core::neardup::{NearDupConfig, Sketch};
use textorigin_core::quote::QuoteConfig;
use textorigin_core::text::Terms;

pub(crate) fn meta(seq: u64, name: &str) -> DocMeta {
    DocMeta {
        seq,
        name: name.into(),
        source: "x".into(),
        url: None,
        published_at: None,
        text_bytes: 1,
        tokens: 1,
        content_hash: "h".into(),
        ingested_at_ms: 0,
        meta: None,
        via: None,
        by_arrival: false,
        id_number: false,
        date_field: false,
    }
}

/// Stores a document with its text and an empty result, nothing else.
pub(crate) fn put_bare(s: &Store, meta: &DocMeta, text: &str) {
    let result = DocResult { seq: meta.seq, ..DocResult::default() };
    let doc = DocumentWrite {
        meta,
        text,
        result: &result,
        nd: None,
        q: None,
        revised: &Default::default(),
        stage: None,
        templates: None,
        exact: Default::default(),
    };
    s.put_document(&doc).unwrap();
}

fn put(s: &Store, meta: &DocMeta, text: &str, result: &DocResult, nd: &NearDupWrite, q: &QuoteFind) -> Result<()> {
    s.put_document(&DocumentWrite {
        meta,
        text,
        result,
        nd: Some(nd),
        q: Some(q),
        revised: &Default::default(),
        stage: None,
        templates: None,
        exact: Default::default(),
    })
}

#[test]
fn documents_round_trip_and_resolve() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path()).unwrap();
    assert_eq!(s.next_seq().unwrap(), 1);
    let r = DocResult { seq: 1, tokens: 3, ..Default::default() };
    let c = NearDupConfig::default();
    let qc = QuoteConfig::default();
    let idx = Indexes::in_memory(1 << 20, &qc).unwrap();
    let rc = Recomputer::new(Terms::Words, c.clone(), qc.clone());
    let nd = |seq| {
        search::near_dups(
            &s,
            &rc,
            seq,
            Sketch { exact: seq.into(), mins: vec![], simhash: vec![0; 6], rate: 1, coarse: vec![] },
            &idx,
            |_| false,
            None,
        )
        .unwrap()
    };
    let q = |seq| search::quotations(&s, &rc, seq, vec![], &idx, |_| false).unwrap();
    put(&s, &meta(1, "a"), "text a", &r, &nd(1), &q(1)).unwrap();
    put(&s, &meta(2, "a"), "text a again", &DocResult { seq: 2, ..Default::default() }, &nd(2), &q(2)).unwrap();
    put(&s, &meta(3, "17"), "named by digits", &DocResult { seq: 3, ..Default::default() }, &nd(3), &q(3)).unwrap();
    assert_eq!(s.next_seq().unwrap(), 4);
    assert_eq!(s.resolve("a").unwrap(), 2, "latest of a name");
    assert_eq!(s.resolve("1").unwrap(), 1, "by id");
    assert_eq!(s.resolve("17").unwrap(), 3, "a name that is no id");
    assert_eq!(s.resolve("#1").unwrap(), 1, "#N is always an id");
    assert!(matches!(s.resolve("#17"), Err(StoreError::NotFound(_))), "#N is never a name");
    assert!(matches!(s.resolve("nope"), Err(StoreError::NotFound(_))));
    // Issue 21, item 7: a name that is also another document's id is ambiguous.
    put(
        &s,
        &meta(4, "2"),
        "named by the digits of another id",
        &DocResult { seq: 4, ..Default::default() },
        &nd(4),
        &q(4),
    )
    .unwrap();
    match s.resolve("2") {
        Err(e @ StoreError::Ambiguous { named: 4, id: 2, .. }) => {
            assert!(e.to_string().contains("#2") && e.to_string().contains("#4"), "{e}")
        }
        other => panic!("ambiguous, not {other:?}"),
    }
    assert_eq!(s.resolve("#2").unwrap(), 2);
    put(&s, &meta(5, "5"), "named by its own id", &DocResult { seq: 5, ..Default::default() }, &nd(5), &q(5)).unwrap();
    assert_eq!(s.resolve("5").unwrap(), 5, "a name and an id of the same document");
    assert_eq!(s.text(2).unwrap().unwrap(), "text a again");
    assert_eq!(s.result(1).unwrap().unwrap(), r);
    assert_eq!(s.docs().count(), 5);
}

/// Issue 32: a document revised again and again kept its whole result each time; a
/// revision after the first keeps what the history shows, the first the whole result
/// (which recovery reproduces); a revised document leaves the revision queue.
#[test]
fn later_revisions_keep_what_the_history_shows() {
    use textorigin_core::engine::ShingleOrigin;
    use textorigin_core::estimate::How;
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path()).unwrap();
    let whole = |old_tokens| DocResult {
        seq: 1,
        old_tokens,
        dominant_origin: Some(1),
        origin_counts: vec![(1, 3)],
        selected_origins: vec![ShingleOrigin { start_token: 0, end_token: 8, origin: 1, how: How::Found }; 3],
        ..Default::default()
    };
    let mut b = WriteBatch::default();
    s.add_queued(&mut b, 2, &[1]);
    s.write(b, false).unwrap();
    assert_eq!(s.queued().unwrap(), [(1, 2)]);
    for (cause, old_tokens) in [(2, 0), (3, 5)] {
        let r = Revised { seq: 1, after: whole(old_tokens + 5), before: whole(old_tokens) };
        s.put_drained(&[(cause, r)], &[1]).unwrap();
    }
    assert_eq!(s.queue_len().unwrap(), 0, "revised: out of the queue");
    let revs = s.revisions(1).unwrap();
    assert_eq!(revs[0].before, whole(0), "the first: whole");
    assert_eq!(s.first_result(1).unwrap().unwrap(), whole(0));
    let seen = &revs[1].before;
    assert_eq!((seen.old_tokens, seen.dominant_origin), (5, Some(1)));
    assert!(seen.selected_origins.is_empty() && seen.origin_counts.is_empty(), "{seen:?}");
}

#[test]
fn newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = Store::open(dir.path()).unwrap();
        let mut b = WriteBatch::default();
        b.put_cf(s.cf(CF_META.name), b"schema_version", 99u32.to_le_bytes());
        s.write(b, true).unwrap();
    }
    let err = Store::open(dir.path()).err().unwrap().to_string();
    assert!(err.contains("newer") && err.contains("99"), "{err}");
    assert!(Store::open_read_only(dir.path()).is_err());
}

#[test]
fn a_read_only_open_tells_whether_a_writer_wrote_since() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Store::open(dir.path()).unwrap();
    assert!(!writer.unchanged(), "a writer's open never says so");
    let write = |n: u64, sync: bool| {
        let mut b = WriteBatch::default();
        b.put_cf(writer.cf(CF_META.name), b"counter", n.to_le_bytes());
        writer.write(b, sync).unwrap();
    };
    write(1, true);
    let reader = Store::open_read_only(dir.path()).unwrap();
    assert!(reader.unchanged(), "nothing written since the open");
    write(2, false);
    assert!(!reader.unchanged(), "an unsynced write grows the log");
    let again = Store::open_read_only(dir.path()).unwrap();
    assert!(again.unchanged());
    writer.flush_memtables().unwrap();
    assert!(!again.unchanged(), "a flush changes the manifest");
    let last = Store::open_read_only(dir.path()).unwrap();
    assert_eq!(last.read(CF_META, b"counter").unwrap().unwrap(), 2u64.to_le_bytes());
}

#[test]
fn a_read_only_open_beside_a_reopening_writer_sees_every_committed_write() {
    // Each reopen of the writer recovers its log into a table file, rewrites the
    // manifest and deletes the log: a reader that read the manifest before and lists
    // the logs after would miss the writes in between without an error.
    let dir = tempfile::tempdir().unwrap();
    drop(Store::open(dir.path()).unwrap());
    let committed = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (path, committed, done) = (dir.path().to_path_buf(), committed.clone(), done.clone());
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                let s = Store::open(&path).unwrap();
                n += 1;
                let mut b = WriteBatch::default();
                b.put_cf(s.cf(CF_META.name), b"counter", n.to_le_bytes());
                s.write(b, true).unwrap();
                committed.store(n, std::sync::atomic::Ordering::SeqCst);
            }
        })
    };
    // At least 4 s and 25 opens: a busy machine (the whole suite running) opens
    // slower, and the check is of what every open sees, not of how many there are.
    let started = std::time::Instant::now();
    let mut opens = 0;
    let enough = |opens: u32| opens > 25 && started.elapsed() >= std::time::Duration::from_secs(4);
    while !enough(opens) && started.elapsed() < std::time::Duration::from_secs(120) {
        let before = committed.load(std::sync::atomic::Ordering::SeqCst);
        let s = Store::open_read_only(dir.path()).unwrap_or_else(|e| panic!("open {opens}: {e}"));
        let seen = s.read(CF_META, b"counter").unwrap().map_or(0, |v| u64::from_le_bytes(v.try_into().unwrap()));
        assert!(seen >= before, "open {opens}: saw write {seen}, {before} were committed before the open");
        opens += 1;
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    writer.join().unwrap();
    assert!(opens > 25, "{opens} opens in 120 s");
}

/// The schema's table is made from the one list the store opens (`schema.rs`); the
/// architecture map names every column family of it, and every schema step from 2 to
/// [`SCHEMA_VERSION`] has its upgrade step and its ledger file in `migrations/`: a
/// description kept by hand drifts from the code unless something fails when it does.
#[test]
fn the_map_and_the_ledger_follow_the_column_families_and_the_steps() {
    let crate_dir = std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
    let root = std::path::Path::new(&crate_dir).join("../..");
    let map = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    for cf in COLUMN_FAMILIES {
        assert!(map.contains(&format!("`{cf}`")), "docs/ARCHITECTURE.md does not name the column family `{cf}`");
    }
    let ledger = root.join("migrations");
    let files: Vec<String> =
        std::fs::read_dir(&ledger).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    for version in 2..=SCHEMA_VERSION {
        let prefix = format!("{version:04}-");
        assert!(files.iter().any(|f| f.starts_with(&prefix)), "no ledger file {prefix}*.md in migrations/");
        assert!(
            crate::storage::migrations::MIGRATIONS.iter().any(|m| m.from + 1 == version),
            "no upgrade step to schema {version}"
        );
    }
    assert!(
        !files.iter().any(|f| f.starts_with(&format!("{:04}-", SCHEMA_VERSION + 1))),
        "a ledger file beyond the schema"
    );
}
