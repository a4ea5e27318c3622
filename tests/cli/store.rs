//! The store across versions: migrations from committed old data directories; what the
//! table file and its checkpoints take as the table fills.

use serde_json::Value;

use crate::util::*;

#[test]
fn a_schema_1_data_directory_is_upgraded_and_keeps_its_results() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    copy_dir(&fixture("v1-datadir"), &data);
    // Readers ask for the upgrade rather than misread.
    let out = run(&data, &["list"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("upgrade"), "{}", String::from_utf8_lossy(&out.stderr));
    ok(&data, &["upgrade"]);
    // Every old result is unchanged; only the near_duplicates field is new.
    let old = std::fs::read_to_string(fixture("v1-export.jsonl")).unwrap();
    let new = ok(&data, &["export"]);
    assert_eq!(old.lines().count(), new.lines().count());
    let mut quoting = Vec::new();
    for (o, n) in old.lines().zip(new.lines()) {
        let mut n: Value = serde_json::from_str(n).unwrap();
        assert_eq!(n["near_duplicates"], serde_json::json!([]));
        n.as_object_mut().unwrap().remove("near_duplicates");
        n.as_object_mut().unwrap().remove("dominant_origin_rule");
        let q = n.as_object_mut().unwrap().remove("quotations").unwrap();
        quoting.push(q.as_array().unwrap().len());
        assert_eq!(serde_json::from_str::<Value>(o).unwrap(), n);
    }
    // The backfilled quotation search found the blog's and the roundup's quoted sentences.
    assert_eq!(quoting[0], 0);
    assert!(quoting[1] >= 2 && quoting[2] >= 3, "{quoting:?}");
    // The backfilled index finds an old document.
    let out =
        bin().arg("ingest").arg("--data").arg(&data).arg(examples().join("02-commuter-blog.txt")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = json(&data, &["neardups", "4", "--json"]);
    assert_eq!(v["near_duplicates"][0]["id"], 2);
    assert_eq!(v["near_duplicates"][0]["exact"], true);
}

#[test]
fn a_schema_4_data_directory_is_upgraded_and_takes_new_documents() {
    // Written by the build before the workspace restructure (tests/fixtures/README.md).
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    copy_dir(&fixture("v4-datadir"), &data);
    let out = run(&data, &["list"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("schema version 4 needs an upgrade"));
    ok(&data, &["upgrade"]);
    assert!(ok(&data, &["check"]).contains("ok"));
    // Schema 7 re-derives the dominant and most-copied origins (argmax, tokens) and
    // exports the 10% rule beside them; all else is as stored, and replay recomputes
    // the re-derived results exactly (below).
    let want = std::fs::read_to_string(fixture("v4-export.jsonl")).unwrap();
    let got = ok(&data, &["export"]);
    assert_eq!(without_derived(&got), without_derived(&want));
    assert_ne!(got, want, "the fixture has a document whose rule and argmax differ");
    let before = json(&data, &["stats", "--json"]);
    assert_eq!(before["table_digest"], std::fs::read_to_string(fixture("v4-digest.txt")).unwrap().trim());
    let n = before["documents"].as_u64().unwrap();
    let out =
        bin().arg("ingest").arg("--data").arg(&data).arg(examples().join("03-weekly-roundup.txt")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(documents(&data), n + 1);
    let v = json(&data, &["neardups", &(n + 1).to_string(), "--json"]);
    assert_eq!(v["near_duplicates"][0]["exact"], true, "the stored index finds the earlier copy: {v}");
    // Schema 7 keeps the old data directory's behaviour (no propagation, no alignment):
    // replay recomputes its stored results exactly.
    let out = run(&data, &["rebuild"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("0 recomputed result(s) differed"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(ok(&data, &["stats"]).contains("propagation off, alignment off"));
}

#[test]
fn schema_2_and_3_data_directories_are_upgraded_to_what_ingestion_writes() {
    // Written by the builds of those schemas (tests/fixtures/README.md) from the three
    // examples, which are also the first three documents of the schema-4 fixture.
    let want: String = std::fs::read_to_string(fixture("v4-export.jsonl"))
        .unwrap()
        .lines()
        .take(3)
        .map(|l| format!("{l}\n"))
        .collect();
    for version in [2, 3] {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        copy_dir(&fixture(&format!("v{version}-datadir")), &data);
        let out = run(&data, &["list"]);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("schema version {version} needs an upgrade")), "{err}");
        ok(&data, &["upgrade"]);
        assert_eq!(
            without_rule(&ok(&data, &["export"])),
            without_rule(&want),
            "schema {version}: the backfilled results differ from ingestion's"
        );
        assert!(ok(&data, &["check"]).ends_with("ok\n"));
    }
}

/// An export's lines without the fields schema 7 derives anew: the dominant origin
/// (argmax), the most-copied origin (by tokens) and the 10% rule.
fn without_derived(export: &str) -> Vec<Value> {
    export
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().retain(|k, _| {
                !matches!(k.as_str(), "dominant_origin" | "most_copied_origin" | "dominant_origin_rule")
            });
            v
        })
        .collect()
}

/// An export's lines without the field schema 7 adds (the 10% rule); on these three
/// documents the argmax and the rule agree with what schemas 2-4 stored.
fn without_rule(export: &str) -> Vec<Value> {
    export
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("dominant_origin_rule");
            v
        })
        .collect()
}

#[test]
fn a_schema_7_data_directory_gets_its_features_on_and_keeps_every_result() {
    // Written by the last build of schema 7 (tests/fixtures/README.md).
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    copy_dir(&fixture("v7-datadir"), &data);
    let out = run(&data, &["list"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("schema version 7 needs an upgrade"));
    let digest = "25197cd92826b00b";
    ok(&data, &["upgrade"]);
    assert_eq!(ok(&data, &["export"]), std::fs::read_to_string(fixture("v7-export.jsonl")).unwrap());
    // Its near-duplicate search is the one it was made with (schema 14 keeps it deciding
    // by the estimate).
    let stats = ok(&data, &["stats"]);
    assert!(
        stats.contains(
            "features:    near-duplicates on (shingles of 8 terms at Jaccard 0.9, by the estimate), quotations on"
        ),
        "{stats}"
    );
    let out = run(&data, &["rebuild"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("0 recomputed result(s) differed"));
    assert_eq!(json(&data, &["stats", "--json"])["table_digest"], digest);
}

#[test]
fn a_schema_10_data_directory_keeps_its_term_rule_its_search_and_every_result() {
    // Written by the last build of schema 10 (tests/fixtures/README.md).
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    copy_dir(&fixture("v10-datadir"), &data);
    let out = run(&data, &["list"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("schema version 10 needs an upgrade"));
    ok(&data, &["upgrade"]);
    assert_eq!(ok(&data, &["export"]), std::fs::read_to_string(fixture("v10-export.jsonl")).unwrap());
    let stats = ok(&data, &["stats"]);
    assert!(!stats.contains("terms="), "the rule before (a new data directory's says terms=unicode)");
    // Schema 16: its sketches and sentences are what this build computes from the
    // texts, so none is kept (the export above is unchanged).
    let kinds = stats.lines().find(|l| l.starts_with("store:")).unwrap();
    assert!(kinds.contains("text") && !kinds.contains("nd_sketch") && !kinds.contains("q_sent"), "{kinds}");
    assert!(!stats.contains("by clause"), "no clause signatures in its index, none searched (schema 12)");
    assert!(stats.contains("its index by pieces"), "its index as it was laid out (schema 22)");
    let out = run(&data, &["rebuild"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("0 recomputed result(s) differed"), "{out:?}");
    // A Chinese document given now is tokenized as the stored ones were: each run of
    // ideographs one term (under the new rule its copied sentence would be a block).
    let copy = dir.path().join("05-chinese-copy.txt");
    std::fs::write(&copy, std::fs::read_to_string(fixture("v10-chinese.txt")).unwrap() + "另外一句新话。").unwrap();
    assert!(ingest(&data, &["--table-size", "16KiB", "--index-size", "64KiB"], &[&copy]).status.success());
    assert_eq!(json(&data, &["show", "--json", "05-chinese-copy"])["tokens"], 4, "four runs, not 33 characters");
    // `rebuild --reanalyse --quote-clauses on` moves it to the search of schema 12 (not
    // without --reanalyse: the stored quotations follow from the index).
    assert!(!run(&data, &["rebuild", "--quote-clauses", "on"]).status.success());
    ok(&data, &["rebuild", "--reanalyse", "--quote-clauses", "on"]);
    assert!(ok(&data, &["stats"]).contains("quotations on (by sentence and by clause)"));
    // `rebuild --reanalyse --quote-exact-index on` moves it to the index of schema 22.
    assert!(!run(&data, &["rebuild", "--quote-exact-index", "on"]).status.success());
    assert_eq!(json(&data, &["stats", "--json"])["quote_exact_index"], false);
    ok(&data, &["rebuild", "--reanalyse", "--quote-exact-index", "on"]);
    assert_eq!(json(&data, &["stats", "--json"])["quote_exact_index"], true);
    assert!(!ok(&data, &["stats"]).contains("by pieces"));
}

/// Schema 24: an adaptive data directory made before keeps every
/// stored result; `rebuild` replays it under the new rule without reporting its
/// documents as differing (they were made by the rule before), documents added later
/// are compared, and `rebuild --reanalyse` gives every document the new rule's result.
#[test]
fn a_schema_23_adaptive_data_directory_keeps_its_results_and_replays_by_the_new_rule() {
    // Written by the last build of schema 23 (tests/fixtures/README.md).
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    copy_dir(&fixture("v23-datadir"), &data);
    let stored = std::fs::read_to_string(fixture("v23-export.jsonl")).unwrap();
    ok(&data, &["upgrade"]);
    assert_eq!(ok(&data, &["export"]), stored);
    // Schema 25: its submitted documents' sites stay trusted (`/own-sites` is the rule
    // of new data directories).
    let config = json(&data, &["stats", "--json"])["config"].to_string();
    assert!(config.contains("templates=site/5") && !config.contains("own-sites"), "{config}");
    let out = run(&data, &["rebuild"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("0 recomputed result(s) differed"), "{out:?}");
    assert_eq!(ok(&data, &["export"]), stored, "the stored results are kept");
    // Documents given now follow the new rule, and replay gives their results again.
    let more = dir.path().join("more.jsonl");
    let lines: Vec<&str> = std::fs::read_to_string(fixture("gcc-sample.jsonl")).unwrap().leak().lines().collect();
    std::fs::write(&more, lines[120..160].join("\n") + "\n").unwrap();
    assert!(ingest(&data, &["--table-size", "10KiB", "--index-size", "64KiB"], &[&more]).status.success());
    let out = run(&data, &["rebuild"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("0 recomputed result(s) differed"), "{out:?}");
    // `rebuild --reanalyse` makes every result the new rule's: on this table, which the
    // density fell on by steps, the first 120 documents' results change.
    ok(&data, &["rebuild", "--reanalyse"]);
    let now = ok(&data, &["export"]);
    assert_ne!(now.lines().take(120).collect::<Vec<_>>(), stored.lines().collect::<Vec<_>>());
    let out = run(&data, &["rebuild"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("0 recomputed result(s) differed"), "{out:?}");
}

/// Schema 16's step (decision 3) killed after it deleted what this build
/// computes alike, before the version stamp: the next open runs it again and ends as
/// an uninterrupted upgrade does.
#[test]
#[cfg(feature = "failpoints")]
fn a_crash_in_the_schema_16_step_is_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    copy_dir(&fixture("v10-datadir"), &data);
    let control = dir.path().join("failpoints");
    std::fs::write(&control, "upgrade.recomputed=abort\n").unwrap();
    let out = bin().args(["upgrade", "--data"]).arg(&data).env("TEXTORIGIN_FAILPOINTS", &control).output().unwrap();
    assert!(!out.status.success(), "aborted in the step");
    let stderr = String::from_utf8_lossy(&run(&data, &["list"]).stderr).to_string();
    assert!(stderr.contains("schema version 15 needs an upgrade"), "{stderr}");
    ok(&data, &["upgrade"]);
    assert_eq!(ok(&data, &["export"]), std::fs::read_to_string(fixture("v10-export.jsonl")).unwrap());
}

/// Issue 34, decision 2: the table's buckets in use grow inside its file, so its memory,
/// its disk blocks and a checkpoint slot's follow the entries it holds (within about 3x
/// their bytes) until it spans the file; before, a table of 1% fill took the whole file.
#[test]
fn the_table_file_and_its_checkpoints_follow_the_entries_held() {
    let scratch = tempfile::tempdir().unwrap();
    let out = bin()
        .args(["bench", "--checkpoints", "--table-size", "64MiB", "--index-size", "8MiB", "--json", "--dir"])
        .arg(scratch.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6);
    for row in rows {
        let n = |k: &str| row[k].as_u64().unwrap();
        let (entries, in_use) = (n("entry_bytes"), n("in_use_bytes"));
        if row["fill_pct"].as_f64().unwrap() < 50.0 {
            assert!(in_use <= 4 * entries, "{row}");
        }
        // The header page and the derived indexes' counters page beside the buckets.
        assert!(n("table_disk_bytes") <= in_use + 64 * 1024, "{row}");
        assert!(n("slot_disk_bytes") <= in_use + 64 * 1024, "{row}");
    }
}

/// Issue 79, item 4: `check` beside a healthy live daemon that had recovered from a
/// `kill -9` reported "the table's bucket shift ... does not fit its entries ... run
/// `textorigin rebuild`" (exit 1, three times in a row) and passed once the daemon
/// stopped. Beside a live writer it checks the newest checkpoint's table.
#[test]
fn check_beside_a_live_daemon_after_a_recovery_passes() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let inputs = tempfile::tempdir().unwrap();
    let files = generated_corpus(inputs.path(), 2_500);
    let args = ["--table-size", "4MiB", "--rescan-secs", "1", "--checkpoint-docs", "500"];
    let daemon = Daemon::start(dir, &args, None);
    drop_into_spool(dir, &files[..1_000]);
    wait_drained(dir, 1_000);
    daemon.kill();
    let daemon = Daemon::start(dir, &args, None);
    drop_into_spool(dir, &files[1_000..]);
    wait_drained(dir, 2_500);
    wait_until("the idle checkpoint of the last document", 60, || {
        textorigin_store::storage::checkpoint::newest_valid(dir).is_some_and(|(_, m)| m.seq == 2_500)
    });
    for _ in 0..3 {
        let out = run(dir, &["check"]);
        let said = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && !said.contains("rebuild"), "{said}");
    }
    daemon.stop();
    assert!(run(dir, &["check"]).status.success());
}
