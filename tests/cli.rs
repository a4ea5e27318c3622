//! Integration tests: the real `textorigin` binary on real files in temporary data
//! directories.

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

fn bin() -> Command {
    let mut c = Command::cargo_bin("textorigin").unwrap();
    c.env_remove("TEXTORIGIN_DATA");
    c
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/docs")
}

fn run(dir: &Path, args: &[&str]) -> Output {
    bin().args(args).arg("--data").arg(dir).output().unwrap()
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn json(dir: &Path, args: &[&str]) -> Value {
    serde_json::from_str(&ok(dir, args)).unwrap()
}

/// `ingest` with a 4 MiB table unless `extra` names a size.
fn ingest(dir: &Path, extra: &[&str], paths: &[&Path]) -> Output {
    let mut c = bin();
    c.arg("ingest").arg("--data").arg(dir).args(extra);
    if !extra.contains(&"--table-size") {
        c.args(["--table-size", "4MiB"]);
    }
    c.args(paths).output().unwrap()
}

/// The name of the origin of the copied block containing `needle`.
fn origin_of(doc: &Value, text: &str, needle: &str) -> Option<String> {
    let at = text.find(needle).expect("needle in text");
    let end = at + needle.len();
    doc["copied_blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["start_byte"].as_u64().unwrap() as usize <= at && end <= b["end_byte"].as_u64().unwrap() as usize)
        .map(|b| b["origin"]["name"].as_str().unwrap().to_string())
}

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
    // C's own text is fresh: inside a novel segment, in no copied block.
    let fresh = "the school board postponed its vote on the new timetable until January";
    assert_eq!(origin_of(&c, &text, fresh), None);
    let at = text.find(fresh).unwrap();
    assert!(c["novel_segments"].as_array().unwrap().iter().any(|s| {
        s["start_byte"].as_u64().unwrap() as usize <= at && at + fresh.len() <= s["end_byte"].as_u64().unwrap() as usize
    }));
    // The required JSON fields.
    for key in ["id", "name", "dominant_origin", "copied_blocks", "fresh_tokens", "old_tokens"] {
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
fn bad_inputs_are_reported_skipped_and_leave_no_state() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = tempfile::tempdir().unwrap();
    let p = |n: &str| inputs.path().join(n);
    std::fs::write(p("empty.txt"), "   \n").unwrap();
    std::fs::write(p("punct.txt"), "... --- !!!").unwrap();
    std::fs::write(p("binary.txt"), b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0").unwrap();
    std::fs::write(p("bad.json"), "{\"id\": \"x\", \"text\": ").unwrap();
    std::fs::write(p("good.json"), r#"{"id": "good-one", "text": "a perfectly ordinary sentence with enough words in it", "url": "https://example.org/a"}"#).unwrap();
    std::fs::write(p("mixed.jsonl"), "{\"id\":\"l1\",\"text\":\"first line document with some words\"}\nnot json\n{\"id\":\"l3\",\"html\":\"<p>third &amp; last</p>\"}\n").unwrap();
    std::fs::write(p("page.html"), "<html><script>alert(1)</script><body><h1>Title</h1><p>Body &eacute;t&eacute;</p></body></html>").unwrap();
    let missing = p("missing.txt");
    let out = ingest(dir.path(), &[], &[inputs.path(), &missing]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "some documents were processed: {err}");
    for needle in [
        "empty.txt: empty document",
        "punct.txt: no words",
        "binary.txt: binary file",
        "bad.json: malformed JSON",
        "mixed.jsonl:2: malformed JSON",
        "missing.txt: cannot read",
    ] {
        assert!(err.contains(needle), "stderr lacks `{needle}`:\n{err}");
    }
    let list = json(dir.path(), &["list", "--json"]);
    let names: Vec<&str> = list.as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["good-one", "l1", "l3", "page"]);
    let ids: Vec<u64> = list.as_array().unwrap().iter().map(|r| r["id"].as_u64().unwrap()).collect();
    assert_eq!(ids, [1, 2, 3, 4], "failed documents take no sequence number");
    let page = json(dir.path(), &["show", "page", "--json"]);
    assert_eq!(page["tokens"], 3, "script dropped, entities decoded: {page}");
    let good = json(dir.path(), &["show", "good-one", "--json"]);
    assert_eq!(good["url"], "https://example.org/a");
    // Nothing processable at all: non-zero exit.
    let out = ingest(dir.path(), &[], &[&p("empty.txt")]);
    assert!(!out.status.success());
    assert_eq!(json(dir.path(), &["stats", "--json"])["documents"], 4);
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
                .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/spdx-sample.jsonl"))
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
    // Same stored parameters: no options needed.
    let out = bin().arg("ingest").arg("--data").arg(dir.path()).arg(&a).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = bin().arg("ingest").arg("--data").arg(dir.path()).args(["--k", "6"]).arg(&a).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("other parameters") && err.contains("k=8") && err.contains("k=6"), "{err}");
    // A TOML config file is read; unknown keys are refused.
    let cfg = dir.path().join("c.toml");
    std::fs::write(&cfg, "selektion = \"all\"\n").unwrap();
    let out = bin().arg("ingest").arg("--data").arg(dir.path()).arg("--config").arg(&cfg).arg(&a).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("selektion"));
    assert_eq!(json(dir.path(), &["stats", "--json"])["documents"], 2);
}

#[test]
fn killed_ingest_is_refused_until_rebuilt_then_matches_an_uninterrupted_run() {
    // A real crash: kill -9 the ingest half-way through many documents.
    let corpus = tempfile::tempdir().unwrap();
    let fixture = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/spdx-sample.jsonl")).unwrap();
    for (i, line) in fixture.lines().enumerate() {
        let v: Value = serde_json::from_str(line).unwrap();
        for rep in 0..20 {
            // Each license twenty times with its paragraphs rotated: plenty of copying.
            let text = v["text"].as_str().unwrap();
            let paras: Vec<&str> = text.split("\n\n").collect();
            let r = rep % paras.len().max(1);
            let rotated = [&paras[r..], &paras[..r]].concat().join("\n\n");
            std::fs::write(corpus.path().join(format!("{:03}-{rep}.txt", i)), rotated).unwrap();
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("textorigin"))
        .arg("ingest")
        .arg("--data")
        .arg(dir.path())
        .args(["--table-size", "256KiB"])
        .arg(corpus.path())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until some documents are in (read through the live inspector), then kill.
    let t0 = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() || t0.elapsed().as_secs() > 60 {
            break;
        }
        let out = run(dir.path(), &["stats", "--json"]);
        if out.status.success() {
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            if v["documents"].as_u64().unwrap() >= 100 {
                break;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let _ = child.kill();
    let status = child.wait().unwrap();
    assert!(!status.success(), "ingest finished before the kill: the crash path was not exercised");
    let out = bin().arg("ingest").arg("--data").arg(dir.path()).arg(corpus.path()).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("rebuild"), "{err}");
    let out = bin().arg("rebuild").arg("--data").arg(dir.path()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains(" 0 recomputed result(s) differed"));
    // Ingest what is not stored yet; the end state must equal an uninterrupted run's.
    let stored: std::collections::HashSet<String> = json(dir.path(), &["list", "--json"])
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect();
    let mut rest: Vec<PathBuf> = std::fs::read_dir(corpus.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !stored.contains(p.file_stem().unwrap().to_str().unwrap()))
        .collect();
    rest.sort();
    assert!(!rest.is_empty());
    let out = bin().arg("ingest").arg("--data").arg(dir.path()).args(&rest).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let clean = tempfile::tempdir().unwrap();
    let out = bin().arg("ingest").arg("--data").arg(clean.path()).args(["--table-size", "256KiB"]).arg(corpus.path()).output().unwrap();
    assert!(out.status.success());
    assert_eq!(ok(dir.path(), &["export"]), ok(clean.path(), &["export"]));
    assert_eq!(json(dir.path(), &["stats", "--json"])["table_digest"], json(clean.path(), &["stats", "--json"])["table_digest"]);
}

/// The longest text of the license fixture (about 1,700 words).
fn long_license() -> String {
    let fixture = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/spdx-sample.jsonl")).unwrap();
    fixture
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["text"].as_str().unwrap().to_string())
        .max_by_key(|t| t.split_whitespace().count())
        .unwrap()
}

fn near_names(v: &Value, key: &str) -> Vec<String> {
    v[key].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn planted_near_duplicates_are_found_and_unrelated_documents_are_not() {
    let base = long_license();
    assert!(base.split_whitespace().count() > 1000);
    let inputs = tempfile::tempdir().unwrap();
    let p = |n: &str| inputs.path().join(n);
    std::fs::write(p("a-base.txt"), &base).unwrap();
    // A few words changed.
    let mut words: Vec<String> = base.split(' ').map(str::to_string).collect();
    for at in [100, 500, 900] {
        words[at] = "CHANGED".into();
    }
    std::fs::write(p("b-words-changed.txt"), words.join(" ")).unwrap();
    // A paragraph deleted.
    let paras: Vec<&str> = base.split("\n\n").collect();
    let longest = (0..paras.len()).max_by_key(|&i| paras[i].len()).unwrap();
    let cut: Vec<&str> = paras.iter().enumerate().filter(|(i, _)| *i != longest).map(|(_, p)| *p).collect();
    let deleted = cut.join("\n\n");
    assert!(deleted.len() * 100 > base.len() * 85, "the deleted paragraph is a small part");
    std::fs::write(p("c-paragraph-deleted.txt"), &deleted).unwrap();
    // The same page served twice with another session id.
    let page = |sid: &str| {
        format!(
            "<html><body><p>Welcome back. <a href=\"/cart?sid={sid}\">Your cart ({sid})</a></p><div>{}</div></body></html>",
            base.replace('<', "&lt;")
        )
    };
    std::fs::write(p("d-page.html"), page("a81f93c2")).unwrap();
    std::fs::write(p("e-page-new-session.html"), page("77d0e1b4")).unwrap();
    // Unrelated documents.
    for f in std::fs::read_dir(examples()).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, p(&format!("f-{}", f.file_name().unwrap().to_str().unwrap()))).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    assert!(ingest(dir.path(), &[], &[inputs.path()]).status.success());
    let nd = |name: &str| json(dir.path(), &["neardups", name, "--json"]);
    assert_eq!(near_names(&nd("b-words-changed"), "near_duplicates"), ["a-base"]);
    let c = nd("c-paragraph-deleted");
    assert_eq!(near_names(&c, "near_duplicates"), ["a-base", "b-words-changed"]);
    let r = c["near_duplicates"][0]["resemblance"].as_f64().unwrap();
    assert!((0.8..1.0).contains(&r), "resemblance {r}");
    let e = nd("e-page-new-session");
    assert!(near_names(&e, "near_duplicates").contains(&"d-page".to_string()), "{e}");
    let d0 = e["near_duplicates"].as_array().unwrap().iter().find(|d| d["name"] == "d-page").unwrap();
    assert_eq!(d0["exact"], false);
    assert!(d0["c_similarity"].as_u64().unwrap() >= 372 && d0["b_similarity"].as_u64().unwrap() >= 2, "{d0}");
    for unrelated in ["f-01-harbour-bridge", "f-02-commuter-blog", "f-03-weekly-roundup"] {
        assert!(near_names(&nd(unrelated), "near_duplicates").is_empty(), "{unrelated}");
    }
    // --later from the base; show --json and export carry them too.
    let later = json(dir.path(), &["neardups", "a-base", "--later", "--json"]);
    let l = near_names(&later, "later");
    assert!(l.contains(&"b-words-changed".to_string()) && l.contains(&"c-paragraph-deleted".to_string()), "{l:?}");
    let shown = json(dir.path(), &["show", "b-words-changed", "--json"]);
    let first = &shown["near_duplicates"][0];
    for key in ["id", "name", "exact", "b_similarity", "c_similarity", "resemblance"] {
        assert!(first.get(key).is_some(), "near_duplicates lacks {key}");
    }
    let export = ok(dir.path(), &["export"]);
    assert!(export.lines().all(|l| serde_json::from_str::<Value>(l).unwrap().get("near_duplicates").is_some()));
    // An identical copy is an exact duplicate.
    std::fs::write(p("z-copy.txt"), &base).unwrap();
    assert!(ingest(dir.path(), &[], &[&p("z-copy.txt")]).status.success());
    let z = nd("z-copy");
    let exact: Vec<&Value> = z["near_duplicates"].as_array().unwrap().iter().filter(|d| d["exact"] == true).collect();
    assert_eq!(exact.len(), 1);
    assert_eq!(exact[0]["name"], "a-base");
}

#[test]
fn a_schema_1_data_directory_is_upgraded_and_keeps_its_results() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v1-datadir");
    let data = dir.path().join("data");
    std::fs::create_dir_all(data.join("db")).unwrap();
    std::fs::copy(fixture.join("table"), data.join("table")).unwrap();
    for f in std::fs::read_dir(fixture.join("db")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, data.join("db").join(f.file_name().unwrap())).unwrap();
    }
    // Readers ask for the upgrade rather than misread.
    let out = run(&data, &["list"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("upgrade"), "{}", String::from_utf8_lossy(&out.stderr));
    ok(&data, &["upgrade"]);
    // Every old result is unchanged; only the near_duplicates field is new.
    let old = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v1-export.jsonl")).unwrap();
    let new = ok(&data, &["export"]);
    assert_eq!(old.lines().count(), new.lines().count());
    let mut quoting = Vec::new();
    for (o, n) in old.lines().zip(new.lines()) {
        let mut n: Value = serde_json::from_str(n).unwrap();
        assert_eq!(n["near_duplicates"], serde_json::json!([]));
        n.as_object_mut().unwrap().remove("near_duplicates");
        let q = n.as_object_mut().unwrap().remove("quotations").unwrap();
        quoting.push(q.as_array().unwrap().len());
        assert_eq!(serde_json::from_str::<Value>(o).unwrap(), n);
    }
    // The backfilled quotation search found the blog's and the roundup's quoted sentences.
    assert_eq!(quoting[0], 0);
    assert!(quoting[1] >= 2 && quoting[2] >= 3, "{quoting:?}");
    // The backfilled index finds an old document.
    let out = bin()
        .arg("ingest")
        .arg("--data")
        .arg(&data)
        .arg(examples().join("02-commuter-blog.txt"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = json(&data, &["neardups", "4", "--json"]);
    assert_eq!(v["near_duplicates"][0]["id"], 2);
    assert_eq!(v["near_duplicates"][0]["exact"], true);
}

#[test]
fn neardup_eval_meets_the_default_verdict_targets_on_real_licenses() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/spdx-sample.jsonl");
    let out = bin().arg("neardup-eval").arg(&fixture).arg("--json").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["true_pairs"].as_u64().unwrap() >= 5, "the fixture has near-duplicates: {v}");
    let default = v["verdicts"].as_array().unwrap().iter().find(|x| x["mode"] == "default").unwrap();
    assert!(default["recall"].as_f64().unwrap() >= 0.9, "{default}");
    assert!(default["precision_at_0_7"].as_f64().unwrap() >= 0.9, "{default}");
}

#[test]
fn quoted_lightly_edited_and_unrelated_sentences() {
    let inputs = tempfile::tempdir().unwrap();
    let p = |n: &str| inputs.path().join(n);
    std::fs::write(
        p("1-speech.txt"),
        "The minister opened the new railway station on Tuesday. \
         Our country needs fast trains between every large city. \
         Passengers will save forty minutes on each journey to the coast. \
         The project was finished two months ahead of schedule.",
    )
    .unwrap();
    std::fs::write(
        p("2-unrelated.txt"),
        "Gardeners expect a warm spring this year. Tomatoes should be planted after the last frost. \
         Water them early in the morning.",
    )
    .unwrap();
    std::fs::write(
        p("3-column.txt"),
        // An exact quotation (in quotation marks), a lightly edited one (a word dropped,
        // other case and punctuation), and sentences of its own.
        "Critics were not impressed by the ceremony. \
         \"Our country needs fast trains between every large city.\" \
         PASSENGERS WILL SAVE FORTY MINUTES ON EACH JOURNEY TO COAST! \
         Nobody asked what the tickets would cost for ordinary families.",
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    assert!(ingest(dir.path(), &[], &[inputs.path()]).status.success());
    let v = json(dir.path(), &["quotes", "3-column", "--json"]);
    let quotes = v["quotations"].as_array().unwrap();
    let text = std::fs::read_to_string(p("3-column.txt")).unwrap();
    let quoting: Vec<&str> = quotes
        .iter()
        .map(|q| &text[q["start_byte"].as_u64().unwrap() as usize..q["end_byte"].as_u64().unwrap() as usize])
        .collect();
    assert_eq!(
        quoting,
        ["\"Our country needs fast trains between every large city.\"", "PASSENGERS WILL SAVE FORTY MINUTES ON EACH JOURNEY TO COAST!"]
    );
    for q in quotes {
        let s = &q["sources"][0];
        assert_eq!(s["name"], "1-speech");
        assert!(s["score"].as_f64().unwrap() >= 0.5 && s["distance"].as_u64().unwrap() <= 3, "{s}");
        assert!(s["sentence"].as_str().unwrap().len() > 20);
    }
    assert_eq!(quotes[0]["sources"][0]["sentence"], "Our country needs fast trains between every large city.");
    assert_eq!(quotes[0]["sources"][0]["score"], 1.0);
    // Nothing quotes the unrelated document; show --json and export carry quotations.
    assert!(json(dir.path(), &["quotes", "2-unrelated", "--json"])["quotations"].as_array().unwrap().is_empty());
    let shown = json(dir.path(), &["show", "3-column", "--json"]);
    assert_eq!(shown["quotations"].as_array().unwrap().len(), 2);
    for key in ["start_byte", "end_byte", "sources"] {
        assert!(shown["quotations"][0].get(key).is_some());
    }
    for key in ["id", "name", "sentence", "distance", "score"] {
        assert!(shown["quotations"][0]["sources"][0].get(key).is_some());
    }
}

/// The DOM of a page after headless Chromium loaded it.
fn chromium_dom(page: &Path) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("headless Chromium (Debian's `chromium`, installed by scripts/test.sh)");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn html_pages_highlight_copied_blocks_and_escape_document_text_in_chromium() {
    let inputs = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(examples()).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, inputs.path().join(f.file_name().unwrap())).unwrap();
    }
    std::fs::write(
        inputs.path().join("04-markup.txt"),
        "A note with markup: <script>document.title='pwned'</script> and <b>bold</b> & more. \
         The old harbour bridge reopened to traffic on Monday morning after twenty-six months of repairs.",
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    assert!(ingest(dir.path(), &[], &[inputs.path()]).status.success());
    let out = tempfile::tempdir().unwrap();
    let page = out.path().join("roundup.html");
    ok(dir.path(), &["show", "03-weekly-roundup", "--html", page.to_str().unwrap()]);
    let dom = chromium_dom(&page);
    // Two copied blocks, from the report and from the blog, with links to the legend.
    let blocks: Vec<&str> = dom.match_indices("<a class=\"copied\"").map(|(i, _)| &dom[i..]).collect();
    assert!(blocks.len() >= 2, "{dom}");
    assert!(dom.contains("data-origin-id=\"1\"") && dom.contains("data-origin-id=\"2\""));
    assert!(dom.contains("href=\"#origin-1\"") && dom.contains("id=\"origin-1\""));
    assert!(dom.contains("data-origin-name=\"01-harbour-bridge\""));
    let first_block = blocks.iter().find(|b| b.contains("data-origin-id=\"1\"")).unwrap();
    assert!(first_block[..first_block.find("</a>").unwrap()].contains("The old harbour bridge reopened"));
    // Novel text is not inside a block; the summary bar is there.
    let novel = "the school board postponed its vote";
    let at = dom.find(novel).unwrap();
    assert!(dom[..at].rfind("<a class=\"copied\"").is_none_or(|open| dom[open..at].contains("</a>")));
    assert!(dom.contains("id=\"summary\""));
    // Markup in a document renders as text, never as elements.
    let evil = out.path().join("markup.html");
    ok(dir.path(), &["show", "04-markup", "--html", evil.to_str().unwrap()]);
    let dom = chromium_dom(&evil);
    assert!(!dom.contains("<script"), "a script element leaked into the page");
    assert!(!dom.contains("<b>bold"));
    assert!(dom.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;"), "{dom}");
    assert!(!dom.contains("<title>pwned"));
    // The collection report.
    let report = out.path().join("report.html");
    ok(dir.path(), &["report", "--html", report.to_str().unwrap()]);
    let dom = chromium_dom(&report);
    assert!(dom.contains("id=\"sources\"") && dom.contains("id=\"graph\"") && dom.contains("class=\"edge\""));
    assert!(dom.contains("#1 01-harbour-bridge"));
    assert!(!dom.contains("<script"));
}

/// 300 documents with known copying: each takes runs of words from earlier ones.
fn generated_corpus(dir: &Path, n: usize) -> Vec<PathBuf> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    let mut docs: Vec<Vec<String>> = Vec::new();
    let mut paths = Vec::new();
    for i in 0..n {
        let mut w = Vec::new();
        for _ in 0..(2 + next(3)) {
            if !docs.is_empty() && next(3) > 0 {
                let src = &docs[next(docs.len() as u64) as usize];
                let a = next(src.len() as u64) as usize;
                w.extend_from_slice(&src[a..(a + 12 + next(30) as usize).min(src.len())]);
            } else {
                w.extend((0..20 + next(40)).map(|_| format!("w{}", next(4000))));
            }
        }
        let text = w.chunks(12).map(|c| c.join(" ") + ".").collect::<Vec<_>>().join(" ");
        let p = dir.join(format!("{i:04}.txt"));
        std::fs::write(&p, &text).unwrap();
        paths.push(p);
        docs.push(w);
    }
    paths
}

/// The export without the `source` field (batch and spool read different paths).
fn export_without_sources(dir: &Path) -> Vec<Value> {
    ok(dir, &["export"])
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("source");
            v
        })
        .collect()
}

fn start_daemon(dir: &Path) -> std::process::Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("textorigin"))
        .args(["serve", "--table-size", "32KiB", "--checkpoint-docs", "40", "--rescan-secs", "1", "--data"])
        .arg(dir)
        .env_remove("TEXTORIGIN_DATA")
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

fn drop_into_spool(dir: &Path, files: &[PathBuf]) {
    for f in files {
        let name = f.file_name().unwrap();
        let tmp = dir.join("spool/tmp").join(name);
        std::fs::copy(f, &tmp).unwrap();
        std::fs::rename(&tmp, dir.join("spool/new").join(name)).unwrap();
    }
}

fn documents(dir: &Path) -> u64 {
    let out = run(dir, &["stats", "--json"]);
    if !out.status.success() {
        return 0;
    }
    serde_json::from_slice::<Value>(&out.stdout).map_or(0, |v| v["documents"].as_u64().unwrap_or(0))
}

#[test]
fn daemon_killed_at_random_moments_ends_like_an_uninterrupted_batch_run() {
    let corpus = tempfile::tempdir().unwrap();
    let files = generated_corpus(corpus.path(), 300);
    // The reference: the same files, same order, one batch ingest.
    let reference = tempfile::tempdir().unwrap();
    let out = bin().arg("ingest").arg("--data").arg(reference.path()).args(["--table-size", "32KiB"]).args(&files).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stats = json(reference.path(), &["stats", "--json"]);
    assert!(stats["table"]["evictions"].as_u64().unwrap() > 0, "the table must be small enough to evict");

    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    std::fs::create_dir_all(dir.join("spool/tmp")).unwrap();
    std::fs::create_dir_all(dir.join("spool/new")).unwrap();
    let mut child = start_daemon(dir);
    let mut kills = 0;
    let mut x = 0x9e37_79b9u64;
    for chunk in files.chunks(10) {
        drop_into_spool(dir, chunk);
        // SIGKILL at a pseudo-random moment: often mid-batch, sometimes while idle.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        std::thread::sleep(std::time::Duration::from_millis(x % 40));
        child.kill().unwrap();
        child.wait().unwrap();
        kills += 1;
        child = start_daemon(dir);
        // The new daemon found the table in use and recovered it from a checkpoint.
        let t0 = std::time::Instant::now();
        let status = loop {
            let s = std::fs::read(dir.join("daemon.json")).ok().and_then(|b| serde_json::from_slice::<Value>(&b).ok());
            if let Some(s) = s.filter(|s| s["pid"] == child.id()) {
                break s;
            }
            assert!(t0.elapsed().as_secs() < 60, "the restarted daemon wrote no status");
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        assert!(status["replayed"].is_u64(), "{status}");
    }
    // Wait for the spool to drain, then stop cleanly.
    let t0 = std::time::Instant::now();
    while (documents(dir) < 300 || std::fs::read_dir(dir.join("spool/new")).unwrap().count() > 0) && t0.elapsed().as_secs() < 120 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY-free: send SIGTERM through kill(1).
    let status = std::process::Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap();
    assert!(status.success());
    let exit = child.wait().unwrap();
    assert!(exit.success(), "SIGTERM must end the daemon with status 0: {exit:?}");
    assert_eq!(kills, 30);
    assert_eq!(documents(dir), 300, "every document once");
    for sub in ["new", "tmp", "failed"] {
        assert_eq!(std::fs::read_dir(dir.join("spool").join(sub)).unwrap().count(), 0, "spool/{sub} is not empty");
    }
    assert_eq!(export_without_sources(dir), export_without_sources(reference.path()));
    assert_eq!(json(dir, &["stats", "--json"])["table_digest"], stats["table_digest"]);
    // The final checkpoint holds exactly the uncrashed run's table content.
    let (slot, meta) = textorigin::checkpoint::newest_valid(dir).expect("a valid checkpoint");
    assert_eq!(meta.seq, 300);
    let slot_table = textorigin::table::Table::open_any(&textorigin::checkpoint::slot_paths(dir, slot).0, false).unwrap();
    assert_eq!(format!("{:016x}", slot_table.digest()), stats["table_digest"].as_str().unwrap());
    let check = run(dir, &["check"]);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
}

/// Runs the daemon over `files` with a failpoint control file; returns the data dir.
fn daemon_with_failpoints(files: &[PathBuf], control: &Path, data: &Path) -> std::process::Child {
    std::fs::create_dir_all(data.join("spool/tmp")).unwrap();
    std::fs::create_dir_all(data.join("spool/new")).unwrap();
    std::process::Command::new(assert_cmd::cargo::cargo_bin("textorigin"))
        .args(["serve", "--table-size", "32KiB", "--checkpoint-docs", "7", "--rescan-secs", "1", "--data"])
        .arg(data)
        .env("TEXTORIGIN_FAILPOINTS", control)
        .env_remove("TEXTORIGIN_DATA")
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|c| {
            drop_into_spool(data, files);
            c
        })
        .unwrap()
}

fn wait_drained(dir: &Path, n: u64) {
    let t0 = std::time::Instant::now();
    while (documents(dir) < n || std::fs::read_dir(dir.join("spool/new")).unwrap().count() > 0) && t0.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn stop(child: &mut std::process::Child) {
    assert!(std::process::Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap().success());
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_crash_at_every_failpoint_recovers_to_the_uncrashed_state() {
    let corpus = tempfile::tempdir().unwrap();
    let files = generated_corpus(corpus.path(), 40);
    let reference = tempfile::tempdir().unwrap();
    assert!(bin().arg("ingest").arg("--data").arg(reference.path()).args(["--table-size", "32KiB"]).args(&files).output().unwrap().status.success());
    let want = (export_without_sources(reference.path()), json(reference.path(), &["stats", "--json"])["table_digest"].clone());
    for point in
        ["admit.before-commit", "admit.after-commit", "spool.after-sync", "spool.after-unlink", "checkpoint.after-copy", "checkpoint.after-meta"]
    {
        let data = tempfile::tempdir().unwrap();
        let control = data.path().join("failpoints");
        std::fs::write(&control, format!("{point}=abort\n")).unwrap();
        let mut child = daemon_with_failpoints(&files[..20], &control, data.path());
        let status = child.wait().unwrap();
        assert!(!status.success(), "{point}: the daemon should have aborted");
        // Restart without the failpoint; the rest of the stream arrives.
        std::fs::write(&control, "").unwrap();
        let mut child = daemon_with_failpoints(&files[20..], &control, data.path());
        wait_drained(data.path(), 40);
        stop(&mut child);
        assert_eq!(documents(data.path()), 40, "{point}: every document exactly once");
        assert_eq!(export_without_sources(data.path()), want.0, "{point}");
        assert_eq!(json(data.path(), &["stats", "--json"])["table_digest"], want.1, "{point}");
        assert!(run(data.path(), &["check"]).status.success(), "{point}");
    }
}

#[test]
fn a_full_disk_keeps_files_in_the_spool_and_the_daemon_resumes() {
    let corpus = tempfile::tempdir().unwrap();
    let files = generated_corpus(corpus.path(), 30);
    let reference = tempfile::tempdir().unwrap();
    assert!(bin().arg("ingest").arg("--data").arg(reference.path()).args(["--table-size", "32KiB"]).args(&files).output().unwrap().status.success());
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let control = dir.join("failpoints");
    std::fs::write(&control, "").unwrap();
    let mut child = daemon_with_failpoints(&files[..10], &control, dir);
    wait_drained(dir, 10);
    // The disk fills up: nothing is taken, nothing is lost, the state says so.
    std::fs::write(&control, "store.write=error\n").unwrap();
    drop_into_spool(dir, &files[10..]);
    let t0 = std::time::Instant::now();
    let status = loop {
        let s: Value = serde_json::from_slice(&std::fs::read(dir.join("daemon.json")).unwrap()).unwrap();
        if s["state"].as_str().unwrap().starts_with("degraded") || t0.elapsed().as_secs() > 30 {
            break s;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(status["state"].as_str().unwrap().starts_with("degraded"), "{status}");
    assert_eq!(documents(dir), 10);
    assert_eq!(std::fs::read_dir(dir.join("spool/new")).unwrap().count(), 20, "the files wait in the spool");
    // Space again: it resumes by itself and ends where an uninterrupted run ends.
    std::fs::write(&control, "").unwrap();
    wait_drained(dir, 30);
    stop(&mut child);
    assert_eq!(export_without_sources(dir), export_without_sources(reference.path()));
    assert_eq!(json(dir, &["stats", "--json"])["table_digest"], json(reference.path(), &["stats", "--json"])["table_digest"]);
}

#[test]
fn bad_spool_files_go_to_failed_with_reasons_and_the_daemon_carries_on() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let inputs = tempfile::tempdir().unwrap();
    let p = |n: &str| inputs.path().join(n);
    std::fs::write(p("a-binary.txt"), b"\x7fELF\x02\x01\x01\0\0\0\0").unwrap();
    std::fs::write(p("b-empty.txt"), "  \n").unwrap();
    std::fs::write(p("c-words.txt"), "... !!! ---").unwrap();
    std::fs::write(p("d-bad.json"), "{\"text\": ").unwrap();
    std::fs::write(p("e-big.txt"), "word ".repeat(400)).unwrap();
    std::fs::write(p("f-mixed.jsonl"), "{\"id\":\"ok1\",\"text\":\"a fine document with words\"}\nnot json\n").unwrap();
    std::fs::write(p("g-good.txt"), "a good document that should be processed").unwrap();
    let files: Vec<PathBuf> = ["a-binary.txt", "b-empty.txt", "c-words.txt", "d-bad.json", "e-big.txt", "f-mixed.jsonl", "g-good.txt"]
        .iter()
        .map(|n| p(n))
        .collect();
    std::fs::create_dir_all(dir.join("spool/tmp")).unwrap();
    std::fs::create_dir_all(dir.join("spool/new")).unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("textorigin"))
        .args(["serve", "--table-size", "32KiB", "--max-doc-bytes", "1000", "--data"])
        .arg(dir)
        .env_remove("TEXTORIGIN_DATA")
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    drop_into_spool(dir, &files);
    wait_drained(dir, 2);
    stop(&mut child);
    let names: Vec<String> = json(dir, &["list", "--json"]).as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(names, ["ok1", "g-good"]);
    let failed = dir.join("spool/failed");
    for (file, reason) in [
        ("a-binary.txt", "binary file"),
        ("b-empty.txt", "empty document"),
        ("c-words.txt", "no words"),
        ("d-bad.json", "malformed JSON"),
        ("e-big.txt", "over the limit"),
        ("f-mixed.jsonl", "f-mixed.jsonl:2: malformed JSON"),
    ] {
        assert!(failed.join(file).exists(), "{file} not in failed/");
        let r = std::fs::read_to_string(failed.join(format!("{file}.reason"))).unwrap();
        assert!(r.contains(reason), "{file}: {r}");
    }
    let listed = json(dir, &["failed", "--json"]);
    assert_eq!(listed.as_array().unwrap().len(), 6);
    assert_eq!(std::fs::read_dir(dir.join("spool/new")).unwrap().count(), 0);
}

#[test]
fn sighup_reopens_the_log_file_and_query_reads_the_newest_checkpoint() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let log = dir.join("serve.log");
    std::fs::create_dir_all(dir.join("spool/tmp")).unwrap();
    std::fs::create_dir_all(dir.join("spool/new")).unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("textorigin"))
        .args(["serve", "--table-size", "1MiB", "--checkpoint-docs", "1", "--data"])
        .arg(dir)
        .arg("--log")
        .arg(&log)
        .env("TEXTORIGIN_LOG", "info")
        .env_remove("TEXTORIGIN_DATA")
        .spawn()
        .unwrap();
    drop_into_spool(dir, &[examples().join("01-harbour-bridge.txt")]);
    wait_drained(dir, 1);
    // Rotate: move the log away, SIGHUP, and the daemon writes a new one.
    std::fs::rename(&log, dir.join("serve.log.1")).unwrap();
    assert!(std::process::Command::new("kill").arg("-HUP").arg(child.id().to_string()).status().unwrap().success());
    drop_into_spool(dir, &[examples().join("02-commuter-blog.txt")]);
    wait_drained(dir, 2);
    let t0 = std::time::Instant::now();
    while !std::fs::read_to_string(&log).unwrap_or_default().contains("log file reopened") && t0.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(std::fs::read_to_string(&log).unwrap().contains("log file reopened"));
    assert!(std::fs::read_to_string(dir.join("serve.log.1")).unwrap().contains("serving"));
    // query uses the newest checkpoint while the daemon runs, and changes nothing.
    let q = json(dir, &["query", examples().join("03-weekly-roundup.txt").to_str().unwrap(), "--json"]);
    let origins: Vec<&str> = q["copied_blocks"].as_array().unwrap().iter().map(|b| b["origin"]["name"].as_str().unwrap()).collect();
    assert!(origins.contains(&"01-harbour-bridge") && origins.contains(&"02-commuter-blog"), "{origins:?}");
    stop(&mut child);
    assert_eq!(documents(dir), 2);
}

#[test]
fn a_dead_parser_thread_stops_the_daemon_with_an_error() {
    let data = tempfile::tempdir().unwrap();
    let control = data.path().join("failpoints");
    std::fs::write(&control, "parse=panic\n").unwrap();
    let mut child = daemon_with_failpoints(&[examples().join("01-harbour-bridge.txt")], &control, data.path());
    let t0 = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(t0.elapsed().as_secs() < 30, "the daemon hangs instead of stopping");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(!status.success());
    // Nothing was lost: the file waits in the spool for the next start.
    assert_eq!(std::fs::read_dir(data.path().join("spool/new")).unwrap().count(), 1);
}

#[test]
fn one_daemon_per_data_directory_and_check_names_a_corrupt_slot() {
    let data = tempfile::tempdir().unwrap();
    let control = data.path().join("failpoints");
    std::fs::write(&control, "").unwrap();
    let mut first = daemon_with_failpoints(&[examples().join("01-harbour-bridge.txt")], &control, data.path());
    wait_drained(data.path(), 1);
    let second = bin().args(["serve", "--data"]).arg(data.path()).output().unwrap();
    assert!(!second.status.success());
    assert!(String::from_utf8_lossy(&second.stderr).contains("in use by another textorigin process"), "{}", String::from_utf8_lossy(&second.stderr));
    stop(&mut first);
    assert!(run(data.path(), &["check"]).status.success());
    // Flip a byte of the newest checkpoint: check names it and fails.
    let (slot, _) = textorigin::checkpoint::newest_valid(data.path()).unwrap();
    let path = textorigin::checkpoint::slot_paths(data.path(), slot).0;
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[5000] ^= 0xff;
    std::fs::write(&path, bytes).unwrap();
    let out = run(data.path(), &["check"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("violation: checkpoint slot"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_failed_fsync_stops_the_daemon_and_the_restart_recovers() {
    let corpus = tempfile::tempdir().unwrap();
    let files = generated_corpus(corpus.path(), 20);
    let reference = tempfile::tempdir().unwrap();
    assert!(bin().arg("ingest").arg("--data").arg(reference.path()).args(["--table-size", "32KiB"]).args(&files).output().unwrap().status.success());
    let data = tempfile::tempdir().unwrap();
    let control = data.path().join("failpoints");
    std::fs::write(&control, "store.sync=error\n").unwrap();
    let mut child = daemon_with_failpoints(&files, &control, data.path());
    let status = child.wait().unwrap();
    assert!(!status.success(), "a failed fsync must stop the daemon");
    assert_eq!(std::fs::read_dir(data.path().join("spool/new")).unwrap().count(), 20, "no file left the spool");
    std::fs::write(&control, "").unwrap();
    let mut child = daemon_with_failpoints(&[], &control, data.path());
    wait_drained(data.path(), 20);
    stop(&mut child);
    assert_eq!(export_without_sources(data.path()), export_without_sources(reference.path()));
}
