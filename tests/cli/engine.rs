//! The engine through the command line: attribution, determinism, queries, parameters.

use serde_json::Value;

use crate::util::*;

#[test]
fn three_document_chain_is_attributed_to_earliest_sources() {
    let dir = tempfile::tempdir().unwrap();
    let out = ingest(dir.path(), &[], &[&examples()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let c = json(dir.path(), &["show", "03-weekly-roundup", "--json"]);
    let text = std::fs::read_to_string(examples().join("03-weekly-roundup.txt")).unwrap();
    // The paragraph B took from A is attributed to A, not B.
    assert_eq!(
        origin_of(&c, &text, "after twenty-six months of repairs that cost the city almost twice").as_deref(),
        Some("01-harbour-bridge")
    );
    // B's own commentary, copied by C, is attributed to B.
    assert_eq!(
        origin_of(&c, &text, "how many small shops along the detour lost their passing trade").as_deref(),
        Some("02-commuter-blog")
    );
    // Aligned to its edges: the copied paragraph's last words, which no selected
    // shingle covers, are inside the block (`--align off`: the paper's block ends early).
    let last_words = "during winter storms";
    assert_eq!(origin_of(&c, &text, last_words).as_deref(), Some("01-harbour-bridge"));
    let paper = tempfile::tempdir().unwrap();
    assert!(ingest(paper.path(), &["--align", "off", "--density", "paper"], &[&examples()]).status.success());
    assert_eq!(origin_of(&json(paper.path(), &["show", "03-weekly-roundup", "--json"]), &text, last_words), None);
    // C's own text is fresh: inside a novel segment, in no copied block.
    let fresh = "the school board postponed its vote on the new timetable until January";
    assert_eq!(origin_of(&c, &text, fresh), None);
    let at = text.find(fresh).unwrap();
    assert!(c["novel_segments"].as_array().unwrap().iter().any(|s| {
        s["start_byte"].as_u64().unwrap() as usize <= at && at + fresh.len() <= s["end_byte"].as_u64().unwrap() as usize
    }));
    // The required JSON fields.
    for key in ["id", "name", "dominant_origin", "dominant_origin_rule", "copied_blocks", "fresh_tokens", "old_tokens"]
    {
        assert!(c.get(key).is_some(), "missing {key}");
    }
    let b0 = &c["copied_blocks"][0];
    for key in ["start_token", "end_token", "start_byte", "end_byte"] {
        assert!(b0[key].is_u64(), "copied block lacks {key}");
    }
    assert!(b0["origin"]["id"].is_u64() && b0["origin"]["name"].is_string());
    // A is all fresh and its own dominant origin.
    let a = json(dir.path(), &["show", "1", "--json"]);
    assert_eq!(a["old_tokens"], 0);
    assert_eq!(a["dominant_origin"]["id"], 1);
    // B copied one paragraph of A: A is its most-copied origin.
    let b = json(dir.path(), &["show", "02-commuter-blog", "--json"]);
    assert_eq!(b["most_copied_origin"]["name"], "01-harbour-bridge");
    // The text view names the origins.
    let shown = ok(dir.path(), &["show", "03-weekly-roundup"]);
    assert!(shown.contains("from #1 01-harbour-bridge") && shown.contains("from #2 02-commuter-blog"), "{shown}");
}

#[test]
fn same_documents_same_order_give_identical_tables_and_exports() {
    let runs: Vec<(Vec<u8>, Vec<u8>, String)> = (0..2)
        .map(|_| {
            let dir = tempfile::tempdir().unwrap();
            // Two ingest runs (a restart in between) with a tiny table, so evictions happen.
            let extra = ["--table-size", "12KiB", "--bucket-entries", "8"];
            assert!(ingest(dir.path(), &extra, &[&examples().join("01-harbour-bridge.txt")]).status.success());
            let out = bin()
                .arg("ingest")
                .arg("--data")
                .arg(dir.path())
                .arg(examples())
                .arg(fixture("spdx-sample.jsonl"))
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let stats = json(dir.path(), &["stats", "--json"]);
            assert!(stats["table"]["evictions"].as_u64().unwrap() > 0);
            let export = ok(dir.path(), &["export"]).into_bytes();
            let table = std::fs::read(dir.path().join("table")).unwrap();
            (table, export, stats["table_digest"].as_str().unwrap().to_string())
        })
        .collect();
    assert!(runs[0].0 == runs[1].0, "table files differ");
    assert!(runs[0].1 == runs[1].1, "exports differ");
    assert_eq!(runs[0].2, runs[1].2);
    let first: Value = serde_json::from_str(String::from_utf8_lossy(&runs[0].1).lines().next().unwrap()).unwrap();
    assert!(first.get("ingested_at_ms").is_none(), "times only with --times");
}

#[test]
fn query_analyses_without_changing_state() {
    let dir = tempfile::tempdir().unwrap();
    let a = examples().join("01-harbour-bridge.txt");
    assert!(ingest(dir.path(), &[], &[&a]).status.success());
    let before = (ok(dir.path(), &["stats", "--json"]), ok(dir.path(), &["export"]));
    let table_before = std::fs::read(dir.path().join("table")).unwrap();
    let q = json(dir.path(), &["query", examples().join("02-commuter-blog.txt").to_str().unwrap(), "--json"]);
    assert_eq!(q["id"], Value::Null);
    assert_eq!(q["most_copied_origin"]["name"], "01-harbour-bridge");
    assert!(q["old_tokens"].as_u64().unwrap() >= 50);
    assert_eq!((ok(dir.path(), &["stats", "--json"]), ok(dir.path(), &["export"])), before);
    assert!(std::fs::read(dir.path().join("table")).unwrap() == table_before);
}

#[test]
fn differing_parameters_are_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let a = examples().join("01-harbour-bridge.txt");
    assert!(ingest(dir.path(), &["--selection", "nw8"], &[&a]).status.success());
    // Same stored parameters: no options needed (`--force`: the document again).
    let out = bin().arg("ingest").arg("--data").arg(dir.path()).arg("--force").arg(&a).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = bin().arg("ingest").arg("--data").arg(dir.path()).args(["--k", "6"]).arg(&a).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("other parameters") && err.contains("k=8") && err.contains("k=6"), "{err}");
    // Issue 53: its lines are lines, not a literal `\u{a}`.
    assert!(err.contains("\n  stored:") && !err.contains("\\u{a}"), "{err}");
    // A TOML config file is read; unknown keys are refused.
    let cfg = dir.path().join("c.toml");
    std::fs::write(&cfg, "selektion = \"all\"\n").unwrap();
    let out = bin().arg("ingest").arg("--data").arg(dir.path()).arg("--config").arg(&cfg).arg(&a).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("selektion"));
    assert_eq!(json(dir.path(), &["stats", "--json"])["documents"], 2);
}

/// A stream that outgrew its table is resized by one command: the rebuilt table and
/// indexes are what ingesting with the new sizes gives, the stored results are kept
/// unless re-analysed, and re-analysed they equal a fresh ingestion's.
#[test]
fn rebuild_resizes_the_table_and_keeps_or_reanalyses_results() {
    let corpus = tempfile::tempdir().unwrap();
    let mut files = generated_corpus(corpus.path(), 40);
    files.push(fixture("mail-sample.jsonl"));
    let paths: Vec<&std::path::Path> = files.iter().map(|p| p.as_path()).collect();
    let small = tempfile::tempdir().unwrap();
    assert!(ingest(small.path(), &["--table-size", "12KiB"], &paths).status.success());
    let before = json(small.path(), &["stats", "--json"]);
    assert!(before["table"]["evictions"].as_u64().unwrap() > 0, "the small table must evict");
    let export_small = ok(small.path(), &["export"]);
    let big = tempfile::tempdir().unwrap();
    assert!(ingest(big.path(), &["--table-size", "2MiB"], &paths).status.success());
    assert_ne!(export_small, ok(big.path(), &["export"]), "the sizes must give other results");

    let out = run(small.path(), &["rebuild", "--table-size", "2MiB"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("stored results kept"));
    let after = json(small.path(), &["stats", "--json"]);
    assert_eq!(after["table"]["bytes"], 2 << 20);
    assert_eq!(after["indexes"]["bytes"], 8 << 20, "the index size follows the table's default");
    assert_eq!(digest(small.path()), digest(big.path()), "the table and indexes a fresh ingestion builds");
    assert_eq!(ok(small.path(), &["export"]), export_small, "results kept");
    assert!(ok(small.path(), &["check"]).contains("ok"));

    let out = run(small.path(), &["rebuild", "--reanalyse"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(ok(small.path(), &["export"]), ok(big.path(), &["export"]), "re-analysed like a fresh ingestion");
    assert_eq!(digest(small.path()), digest(big.path()));
    // It goes on taking documents with the new size.
    let extra = examples().join("01-harbour-bridge.txt");
    assert!(ingest(small.path(), &["--table-size", "2MiB"], &[&extra]).status.success());
    assert!(ingest(big.path(), &["--table-size", "2MiB"], &[&extra]).status.success());
    assert_eq!(digest(small.path()), digest(big.path()));
}

/// Origin propagation and alignment are switched by a re-analysis, never silently:
/// the stored results must stay what replay recomputes.
#[test]
fn rebuild_switches_propagation_and_alignment_only_with_a_reanalysis() {
    let corpus = tempfile::tempdir().unwrap();
    let files = generated_corpus(corpus.path(), 30);
    let paths: Vec<&std::path::Path> = files.iter().map(|p| p.as_path()).collect();
    let paper = tempfile::tempdir().unwrap();
    assert!(ingest(paper.path(), &["--table-size", "12KiB", "--propagate", "off", "--align", "off"], &paths)
        .status
        .success());
    let default = tempfile::tempdir().unwrap();
    assert!(ingest(default.path(), &["--table-size", "12KiB"], &paths).status.success());
    assert_ne!(ok(paper.path(), &["export"]), ok(default.path(), &["export"]));
    assert_ne!(digest(paper.path()), digest(default.path()), "propagation changes the table");

    let out = run(paper.path(), &["rebuild", "--propagate", "on", "--align", "on"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--reanalyse"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = run(paper.path(), &["rebuild", "--reanalyse", "--propagate", "on", "--align", "on"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(ok(paper.path(), &["export"]), ok(default.path(), &["export"]));
    assert_eq!(digest(paper.path()), digest(default.path()));
    // Replay recomputes exactly what is stored.
    let out = run(paper.path(), &["rebuild"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("0 recomputed result(s) differed"));
}

/// Issue 21, item 11: a document mostly copied, but from several origins none of which
/// holds more of it than its own new words, is not "itself (mostly new text)".
#[test]
fn a_mostly_copied_document_without_a_dominant_origin_says_so() {
    let dir = tempfile::tempdir().unwrap();
    assert!(ingest(dir.path(), &[], &[&examples()]).status.success());
    let show = ok(dir.path(), &["show", "03-weekly-roundup"]);
    assert!(
        show.contains("dominant origin: none (58% copied from 2 origins, none more than its own new text)"),
        "{show}"
    );
    let blog = ok(dir.path(), &["show", "02-commuter-blog"]);
    assert!(blog.contains("dominant origin: itself (mostly new text)"), "{blog}");
    let list = ok(dir.path(), &["list"]);
    assert!(list.lines().any(|l| l.contains("03-weekly-roundup") && l.ends_with("none (mixed)")), "{list}");
    assert!(list.lines().any(|l| l.contains("02-commuter-blog") && l.ends_with("itself")), "{list}");
}
