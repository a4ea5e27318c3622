//! A damaged store: each kind of RocksDB file removed or truncated,
//! every command run on it, again and again as a service manager restarts a failing
//! daemon. Nothing of the store may be deleted or rewritten, and the error must say what
//! is wrong and how to repair it; `repair` then brings the documents back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::util::*;

/// The store's files with their sizes and contents' hashes, but RocksDB's own
/// diagnostic log (`LOG`, `LOG.old.*`: text for people, rotated at every open) and the
/// lock file.
fn store_files(dir: &Path) -> BTreeMap<String, (u64, u64)> {
    std::fs::read_dir(dir.join("db"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            !(name == "LOCK" || name == "LOG" || name.starts_with("LOG.old"))
        })
        .map(|e| {
            let bytes = std::fs::read(e.path()).unwrap();
            (e.file_name().to_string_lossy().into_owned(), (bytes.len() as u64, xxhash_rust::xxh3::xxh3_64(&bytes)))
        })
        .collect()
}

/// The first file of the store whose name passes `pick`.
fn file_of(dir: &Path, pick: impl Fn(&str) -> bool) -> PathBuf {
    let mut names: Vec<String> = store_files(dir).into_keys().filter(|n| pick(n)).collect();
    names.sort();
    dir.join("db").join(names.first().unwrap_or_else(|| panic!("no such file in {:?}", store_files(dir))))
}

/// A data directory of 40 documents whose store has table files, a write-ahead log with
/// records, a manifest and an options file (two runs: the second open flushes the
/// first's log), and its export.
fn made() -> (tempfile::TempDir, tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let inputs = tempfile::tempdir().unwrap();
    let files = generated_corpus(inputs.path(), 40);
    assert!(ingest(dir.path(), &[], &files[..20].iter().map(|p| p.as_path()).collect::<Vec<_>>()).status.success());
    assert!(ingest(dir.path(), &[], &files[20..].iter().map(|p| p.as_path()).collect::<Vec<_>>()).status.success());
    let export = ok(dir.path(), &["export"]);
    let files = store_files(dir.path());
    for kind in [".sst", ".log", "MANIFEST-", "OPTIONS-", "CURRENT"] {
        assert!(files.keys().any(|n| n.contains(kind)), "the store has a {kind} file: {files:?}");
    }
    (dir, inputs, export)
}

/// Every command that opens the data directory, each run three times in a row.
fn every_command(dir: &Path, input: &Path) -> Vec<(String, std::process::Output)> {
    let commands: [&[&str]; 9] = [
        &["ingest", "--table-size", "4MiB", input.to_str().unwrap()],
        &["list"],
        &["show", "1"],
        &["export"],
        &["check"],
        &["stats"],
        &["rebuild"],
        &["query", input.to_str().unwrap()],
        &["upgrade"],
    ];
    let mut outs = Vec::new();
    for _ in 0..3 {
        for c in commands {
            outs.push((c[0].to_string(), run(dir, c)));
        }
        // The daemon as systemd's Restart=on-failure starts it.
        outs.push(("serve".into(), serve_a_while(dir)));
    }
    outs
}

/// `serve` on `dir`: its exit, or, when it still runs after 5 s (it took the data
/// directory), the exit of a SIGTERM then.
fn serve_a_while(dir: &Path) -> std::process::Output {
    let err = tempfile::NamedTempFile::new().unwrap();
    let mut serve = serve_command(dir, &["--table-size", "4MiB"]);
    serve.stderr(err.reopen().unwrap());
    let daemon = Daemon::spawn(serve);
    let t0 = std::time::Instant::now();
    let mut daemon = Some(daemon);
    let status = loop {
        let d = daemon.as_mut().unwrap();
        if !d.is_running() {
            break daemon.take().unwrap().wait_exit(1);
        }
        if t0.elapsed() > std::time::Duration::from_secs(5) {
            let d = daemon.take().unwrap();
            d.signal("TERM");
            break d.wait_exit(30);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    std::process::Output { status, stdout: Vec::new(), stderr: std::fs::read(err.path()).unwrap() }
}

/// Regression: a lost `db/CURRENT` and three starts (as `Restart=on-failure` gives)
/// ended with every table file deleted and an empty collection served. Now, for each
/// kind of file removed or truncated, every command fails, names the damage, and leaves
/// every file of the store as it was; the read commands no longer say "run ingest".
#[test]
fn a_damaged_store_is_refused_by_every_command_and_nothing_is_deleted() {
    let (base, inputs, _) = made();
    let extra = inputs.path().join("extra.txt");
    std::fs::write(&extra, "one more document with words enough to be stored in the damaged store").unwrap();
    type Damage = (&'static str, fn(&Path) -> PathBuf, bool, &'static str);
    let damages: [Damage; 8] = [
        ("CURRENT removed", |d| d.join("db/CURRENT"), false, "is damaged: its file CURRENT is missing"),
        ("CURRENT truncated", |d| d.join("db/CURRENT"), true, "is damaged: its file CURRENT is truncated"),
        ("manifest removed", |d| file_of(d, |n| n.starts_with("MANIFEST-")), false, "MANIFEST-"),
        ("manifest truncated", |d| file_of(d, |n| n.starts_with("MANIFEST-")), true, "MANIFEST-"),
        ("table file removed", |d| file_of(d, |n| n.ends_with(".sst")), false, ".sst"),
        ("table file truncated", |d| file_of(d, |n| n.ends_with(".sst")), true, ".sst"),
        ("options removed", |d| file_of(d, |n| n.starts_with("OPTIONS-")), false, ""),
        ("log removed", |d| file_of(d, |n| n.ends_with(".log")), false, ""),
    ];
    for (what, file, truncate, says) in damages {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(base.path(), dir.path());
        let path = file(dir.path());
        if truncate {
            let len = std::fs::metadata(&path).unwrap().len();
            std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(len / 2).unwrap();
        } else {
            std::fs::remove_file(&path).unwrap();
        }
        let before = store_files(dir.path());
        for (command, out) in every_command(dir.path(), &extra) {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!err.contains("run `textorigin ingest"), "{what}, {command}: points at ingest:\n{err}");
            if says.is_empty() {
                continue; // a damage RocksDB tolerates: checked below that nothing was lost
            }
            assert!(!out.status.success(), "{what}, {command}: succeeded:\n{err}");
            assert!(err.contains(says), "{what}, {command}: the error does not name `{says}`:\n{err}");
            if command != "check" || !err.contains("is damaged") {
                continue;
            }
            assert!(err.contains("textorigin repair --data"), "{what}, {command}: no way to repair:\n{err}");
        }
        if !says.is_empty() {
            assert_eq!(store_files(dir.path()), before, "{what}: the store's files changed");
        } else {
            // Nothing that held a document was lost: every document is there.
            let listed = json(dir.path(), &["list", "--json"]);
            assert!(listed.as_array().unwrap().len() >= 40, "{what}: documents lost");
        }
    }
}

/// `repair` rebuilds a lost `CURRENT`'s manifest from the store's files (RocksDB's
/// repair), keeping a copy of the damaged store first; the documents and their results
/// are all there again and the data directory takes new documents.
#[test]
fn repair_brings_back_a_store_whose_current_was_lost() {
    let (dir, inputs, export) = made();
    std::fs::remove_file(dir.path().join("db/CURRENT")).unwrap();
    let refused = run(dir.path(), &["list"]);
    assert!(String::from_utf8_lossy(&refused.stderr).contains("is damaged"), "{refused:?}");
    let repaired = run(dir.path(), &["repair"]);
    let err = String::from_utf8_lossy(&repaired.stderr);
    assert!(repaired.status.success(), "{err}");
    assert!(err.contains("a copy of the damaged store is in"), "{err}");
    let kept: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("db.damaged-"))
        .collect();
    assert_eq!(kept.len(), 1, "one copy of the damaged store");
    assert!(!kept[0].join("CURRENT").exists(), "the copy is the store as it was");
    assert_eq!(ok(dir.path(), &["export"]), export, "every document and result is back");
    let c = run(dir.path(), &["check"]);
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
    let extra = inputs.path().join("extra.txt");
    std::fs::write(&extra, "one more document with words enough to be stored after the repair").unwrap();
    assert!(ingest(dir.path(), &[], &[&extra]).status.success());
    assert_eq!(documents(dir.path()), 41);
    // A store that is not damaged is left alone.
    let again = run(dir.path(), &["repair"]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("not damaged"), "{again:?}");
}

/// Regression: a table header with its bucket shift changed and its
/// checksum recomputed passed `check`, and every lookup then went to the wrong bucket
/// (40 exact copies found 0.64 old in all). `check` now reads where each entry lies.
#[test]
fn check_finds_a_table_header_whose_shift_was_changed() {
    let (dir, _inputs, _) = made();
    let table = dir.path().join("table");
    let original = std::fs::read(&table).unwrap();
    let shift = original[53];
    assert!(shift >= 1, "a table of 4 MiB with 40 documents does not span its memory yet");
    assert!(run(dir.path(), &["check"]).status.success());
    for changed in [shift - 1, shift + 1] {
        let mut bytes = original.clone();
        bytes[53] = changed;
        let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..640]);
        bytes[640..648].copy_from_slice(&sum.to_le_bytes());
        std::fs::write(&table, &bytes).unwrap();
        let out = run(dir.path(), &["check"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "shift {changed} instead of {shift}: check passed");
        assert!(err.contains(&format!("bucket shift {changed} (its header) does not fit its entries")), "{err}");
    }
    std::fs::write(&table, &original).unwrap();
    assert!(run(dir.path(), &["check"]).status.success());
}

/// Issue 79, item 19: with the largest table file of the store removed, `repair` said
/// "store repaired" while every text was lost, and `serve` started on it silently. It
/// now checks what it made, names the losses (in `repair-losses.txt` too) and exits 1,
/// and `serve` refuses the data directory until that file is removed.
#[test]
fn a_repair_that_lost_documents_says_so_and_serve_refuses_until_told() {
    let (dir, _inputs, _) = made();
    let db = dir.path().join("db");
    let largest = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .expect("a table file");
    std::fs::remove_file(&largest).unwrap();
    let repaired = run(dir.path(), &["repair"]);
    let err = String::from_utf8_lossy(&repaired.stderr);
    assert_eq!(repaired.status.code(), Some(1), "{err}");
    assert!(err.contains("lost data") && !err.contains("nothing lost"), "{err}");
    let losses = std::fs::read_to_string(dir.path().join("repair-losses.txt")).unwrap();
    assert!(losses.contains("has no text") || losses.contains("has no result"), "{losses}");
    let served = run(dir.path(), &["serve", "--table-size", "4MiB"]);
    let err = String::from_utf8_lossy(&served.stderr);
    assert!(!served.status.success() && err.contains("lost data in a repair"), "{err}");
}
