//! Input formats and bad input: reported, skipped, leaving no state.

use crate::util::*;

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
    std::fs::write(
        p("page.html"),
        "<html><script>alert(1)</script><body><h1>Title</h1><p>Body &eacute;t&eacute;</p></body></html>",
    )
    .unwrap();
    let missing = p("missing.txt");
    let out = ingest(dir.path(), &[], &[inputs.path(), &missing]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "some inputs failed, the others stored: exit 3 ({err})");
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
    // Nothing processable at all: exit 3 as well.
    let out = ingest(dir.path(), &[], &[&p("empty.txt")]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(json(dir.path(), &["stats", "--json"])["documents"], 4);
}

/// Issue 21, items 9 and 10: ingest is idempotent (documents stored before are skipped,
/// `--force` stores them again), an empty input is a warning, exit 0 when all is well.
#[test]
fn ingesting_twice_stores_nothing_twice_and_an_empty_input_warns() {
    let dir = tempfile::tempdir().unwrap();
    let out = ingest(dir.path(), &[], &[&examples()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = ingest(dir.path(), &[], &[&examples()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("ingested 0 document(s), 0 failed, 3 stored before (skipped"), "{err}");
    assert_eq!(documents(dir.path()), 3);
    let out = ingest(dir.path(), &["--force"], &[&examples().join("01-harbour-bridge.txt")]);
    assert!(out.status.success() && String::from_utf8_lossy(&out.stderr).contains("ingested 1 document(s)"));
    assert_eq!(documents(dir.path()), 4);

    let inputs = tempfile::tempdir().unwrap();
    let empty = inputs.path().join("none.jsonl");
    std::fs::write(&empty, "").unwrap();
    let out = ingest(dir.path(), &[], &[&empty]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("warning: ") && err.contains("none.jsonl: no documents"), "{err}");

    // A JSONL file fixed after one line failed: only the fixed line is new.
    let file = inputs.path().join("batch.jsonl");
    std::fs::write(&file, "{\"id\":\"b1\",\"text\":\"the first line of a batch with words\"}\nnot json\n{\"id\":\"b3\",\"text\":\"the third line of a batch with words\"}\n").unwrap();
    assert_eq!(ingest(dir.path(), &[], &[&file]).status.code(), Some(3));
    std::fs::write(&file, "{\"id\":\"b1\",\"text\":\"the first line of a batch with words\"}\n{\"id\":\"b2\",\"text\":\"the second line, fixed now, with words\"}\n{\"id\":\"b3\",\"text\":\"the third line of a batch with words\"}\n").unwrap();
    let out = ingest(dir.path(), &[], &[&file]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && err.contains("ingested 1 document(s), 0 failed, 2 stored before"), "{err}");
    assert_eq!(documents(dir.path()), 7);
}

/// Issue 21, item 14: `-` reads standard input, JSON lines or one text document.
#[test]
fn ingest_and_query_read_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let jsonl = "{\"id\":\"s1\",\"text\":\"the old harbour bridge reopened to traffic on monday morning after repairs\"}\n{\"id\":\"s2\",\"text\":\"an unrelated note about the weather and the tides of the week\"}\n";
    let out = bin()
        .args(["ingest", "--table-size", "4MiB", "--data"])
        .arg(dir.path())
        .arg("-")
        .write_stdin(jsonl)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let list = json(dir.path(), &["list", "--json"]);
    let names: Vec<&str> = list.as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["s1", "s2"]);
    let text = "Yesterday the old harbour bridge reopened to traffic on monday morning after repairs, they said.";
    let out = bin().args(["query", "--json", "--data"]).arg(dir.path()).arg("-").write_stdin(text).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["name"], "stdin");
    assert_eq!(v["copied_blocks"][0]["origin"]["name"], "s1", "{v}");
}

/// Regression: terminal escape sequences in names passed through to the terminal.
#[test]
fn control_characters_in_names_are_shown_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = tempfile::tempdir().unwrap();
    let doc = inputs.path().join("evil.json");
    std::fs::write(
        &doc,
        r#"{"id": "evil\u001b[2J\u001b]0;pwned\u0007name\nline", "text": "some words of an ordinary document"}"#,
    )
    .unwrap();
    assert!(ingest(dir.path(), &[], &[&doc]).status.success());
    for args in [&["list"][..], &["show", "1"][..]] {
        let out = ok(dir.path(), args);
        assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{args:?}: {out:?}");
        assert!(out.contains("evil\\u{1b}[2J"), "{args:?}: {out}");
    }
    // JSON keeps the name exactly.
    assert_eq!(json(dir.path(), &["show", "1", "--json"])["name"], "evil\u{1b}[2J\u{1b}]0;pwned\u{7}name\nline");
}

/// Issue 24: gzip and Zstandard input, from files (told by magic number and name) and
/// from standard input, read as the plain file is; a truncated file keeps the documents
/// before the cut and names the file, the line and the cause.
#[test]
fn compressed_input_is_read_streaming_as_the_plain_file() {
    use std::io::Write;
    let inputs = tempfile::tempdir().unwrap();
    let jsonl: String = generated_corpus(inputs.path(), 300)
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            serde_json::json!({"id": p.file_stem().unwrap().to_str().unwrap(), "text": text}).to_string() + "\n"
        })
        .collect();
    let gzip = |parts: &[&[u8]]| -> Vec<u8> {
        parts.iter().fold(Vec::new(), |mut out, part| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(part).unwrap();
            out.extend(e.finish().unwrap());
            out
        })
    };
    let (a, b) = jsonl.as_bytes().split_at(jsonl.len() / 2);
    let p = |n: &str| inputs.path().join(n);
    std::fs::write(p("c.jsonl"), &jsonl).unwrap();
    std::fs::write(p("c.jsonl.gz"), gzip(&[a, b])).unwrap();
    let zst = ruzstd::encoding::compress_to_vec(jsonl.as_bytes(), ruzstd::encoding::CompressionLevel::Fastest);
    std::fs::write(p("c.jsonl.zst"), &zst).unwrap();
    std::fs::write(p("unnamed.gz"), gzip(&[jsonl.as_bytes()])).unwrap();
    let plain = tempfile::tempdir().unwrap();
    assert!(ingest(plain.path(), &[], &[&p("c.jsonl")]).status.success());
    let expected = export_without_sources(plain.path());
    assert_eq!(expected.len(), 300);
    for name in ["c.jsonl.gz", "c.jsonl.zst", "unnamed.gz"] {
        let dir = tempfile::tempdir().unwrap();
        let out = ingest(dir.path(), &[], &[&p(name)]);
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let got = export_without_sources(dir.path());
        // `unnamed.gz` names its documents `unnamed:LINE`.
        let names = |v: &[serde_json::Value]| v.iter().map(|d| d["name"].clone()).collect::<Vec<_>>();
        if name != "unnamed.gz" {
            assert_eq!(got, expected, "{name}");
        } else {
            let strip = |v: &[serde_json::Value]| {
                v.iter()
                    .map(|d| {
                        let mut d = d.clone();
                        d.as_object_mut().unwrap().remove("name");
                        d
                    })
                    .collect::<Vec<_>>()
            };
            assert_eq!(strip(&got), strip(&expected), "{name}");
            assert_eq!(names(&got).len(), 300);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .args(["ingest", "--table-size", "4MiB", "--data"])
        .arg(dir.path())
        .arg("-")
        .write_stdin(zst.clone())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(export_without_sources(dir.path()).len(), 300);

    // Truncated: the documents before the cut are stored, the error names file and line.
    let whole = gzip(&[jsonl.as_bytes()]);
    std::fs::write(p("t.jsonl.gz"), &whole[..whole.len() * 2 / 3]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = ingest(dir.path(), &[], &[&p("t.jsonl.gz")]);
    assert_eq!(out.status.code(), Some(3), "some input failed");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("t.jsonl.gz:") && stderr.contains("cannot read: the gzip data ends early"), "{stderr}");
    let stored = export_without_sources(dir.path());
    assert!(stored.len() >= 100 && stored.len() < 300, "{}", stored.len());
    assert_eq!(stored[..], expected[..stored.len()], "the documents before the cut, as the plain file's");
}

/// Issue 24: every field of a JSON document beyond the ones the engine reads is kept as
/// its `meta`: in `show --json` and `export`, in the text and HTML views, and an origin
/// is shown with its title (and, on the page, its URL and date); past the bound, the
/// document fails with a clear error and the others are stored.
#[test]
fn metadata_is_kept_and_shown_with_origins() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = tempfile::tempdir().unwrap();
    let story = "the harbour authority said on monday that the old swing bridge will stay closed to road traffic until the spring while engineers replace its rusted gears";
    let a = serde_json::json!({"id": "a", "text": story, "url": "https://news.example/a", "date": "2020-01-02",
        "title": "Bridge stays shut", "author": "R. Port", "tags": ["local", "transport"], "wordcount": 27});
    let b = serde_json::json!({"id": "b", "text": format!("Reports say {story}. Drivers are unhappy."), "title": "Drivers unhappy"});
    let c = serde_json::json!({"id": "c", "text": "a document with far too much metadata", "blob": "x".repeat(70_000)});
    let d = serde_json::json!({"id": "d", "text": "a plain document without further fields at all"});
    let lines = [a, b, c, d].iter().map(|v| v.to_string() + "\n").collect::<String>();
    let f = inputs.path().join("news.jsonl");
    std::fs::write(&f, lines).unwrap();
    let out = ingest(dir.path(), &[], &[&f]);
    assert_eq!(out.status.code(), Some(3), "one document failed");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("news.jsonl:3: its metadata (the fields beyond id, text, html, url, published_at and date) is 70011 bytes of JSON, over the limit of 65536 bytes"), "{stderr}");
    let export: Vec<serde_json::Value> =
        ok(dir.path(), &["export"]).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(export.len(), 3);
    assert_eq!(
        export[0]["meta"],
        serde_json::json!({"author": "R. Port", "tags": ["local", "transport"], "title": "Bridge stays shut", "wordcount": 27})
    );
    assert_eq!(
        (export[0]["url"].as_str(), export[0]["published_at"].as_str()),
        (Some("https://news.example/a"), Some("2020-01-02"))
    );
    assert!(export[2].get("meta").is_none(), "no further fields, no meta: {}", export[2]);
    let b = json(dir.path(), &["show", "--json", "b"]);
    assert_eq!(b["meta"]["title"], "Drivers unhappy");
    assert_eq!(
        b["copied_blocks"][0]["origin"],
        serde_json::json!({"id": 1, "name": "a", "title": "Bridge stays shut"})
    );
    assert_eq!(b["dominant_origin"]["title"], "Bridge stays shut");
    let text = ok(dir.path(), &["show", "b"]);
    assert!(text.contains("dominant origin: #1 a “Bridge stays shut”"), "{text}");
    assert!(text.contains("  meta: {\"title\":\"Drivers unhappy\"}"), "{text}");
    let page = inputs.path().join("b.html");
    ok(dir.path(), &["show", "b", "--html", page.to_str().unwrap()]);
    let page = std::fs::read_to_string(page).unwrap();
    assert!(
        page.contains("#1 a “Bridge stays shut” (<a href=\"https://news.example/a\" rel=\"noreferrer\">https://news.example/a</a>, 2020-01-02)"),
        "{page}"
    );
    assert!(page.contains("<dt>title</dt><dd>Drivers unhappy</dd>"), "{page}");
}

#[test]
fn a_publication_date_that_is_not_one_fails_its_document_unless_undated_is_asked() {
    let inputs = tempfile::tempdir().unwrap();
    let words = |i: usize| format!("document number {i} has a few words of its own to be stored");
    let dates = [
        serde_json::json!("2020-01-02T03:04:05Z"),
        serde_json::json!("2020-01-02"),
        serde_json::json!("2020"),
        serde_json::json!(1_577_934_245),
        serde_json::json!("next tuesday"),
        serde_json::json!("1577934245.5"),
    ];
    let lines: String = dates
        .iter()
        .enumerate()
        .map(|(i, d)| {
            serde_json::json!({"id": format!("d{i}"), "text": words(i), "published_at": d}).to_string() + "\n"
        })
        .collect();
    let f = inputs.path().join("dated.jsonl");
    std::fs::write(&f, lines).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = ingest(dir.path(), &[], &[&f]);
    assert_eq!(out.status.code(), Some(3), "one document failed");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("dated.jsonl:5: published_at \"next tuesday\" is not a date: give RFC 3339 (2026-11-27T08:00:00Z), YYYY-MM-DD, YYYY or Unix seconds (or store it undated: ingest or serve with --bad-dates undated)"),
        "{stderr}"
    );
    let names: Vec<String> = ok(dir.path(), &["export"])
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["d0", "d1", "d2", "d3", "d5"], "the others are stored, in order");
    // Asked for: stored, its date kept as it was given.
    let dir = tempfile::tempdir().unwrap();
    let out = ingest(dir.path(), &["--bad-dates", "undated"], &[&f]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(json(dir.path(), &["show", "--json", "d4"])["published_at"], "next tuesday");
}

/// Issue 35: a mistyped input path makes no data directory (it used to make an empty
/// one); with a data directory there, a bad path is a failed input beside the others.
#[test]
fn no_data_directory_is_made_when_no_input_can_be_read() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let out = bin().arg("ingest").arg("--data").arg(&data).arg(tmp.path().join("mistyped.jsonl")).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("mistyped.jsonl") && err.contains("no data directory was made"), "{err}");
    assert!(!data.exists());
    ok(&data, &["ingest", examples().join("01-harbour-bridge.txt").to_str().unwrap()]);
    let out = bin().arg("ingest").arg("--data").arg(&data).arg(tmp.path().join("mistyped.jsonl")).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "a failed input of an existing data directory");
}

/// Regression: two symbolic links back to their directory
/// (`ln -s . docs/x`, `ln -s . docs/y`) made the walk expand 2^40 paths (1.36 GB after
/// two minutes, nothing stored). Each directory is walked once: the one document is
/// stored, the loops are reported by name, and the run ends at once.
#[test]
fn symbolic_link_loops_in_an_input_tree_are_walked_once_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = tempfile::tempdir().unwrap();
    let docs = inputs.path().join("docs");
    std::fs::create_dir_all(docs.join("sub")).unwrap();
    std::fs::write(docs.join("a.txt"), "a document with enough words to be stored once").unwrap();
    std::fs::write(docs.join("sub/b.txt"), "another document in a directory below the first one").unwrap();
    for (link, to) in [("x", "."), ("y", "."), ("sub/up", "..")] {
        std::os::unix::fs::symlink(to, docs.join(link)).unwrap();
    }
    let t0 = std::time::Instant::now();
    let out = ingest(dir.path(), &[], &[&docs]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(t0.elapsed() < std::time::Duration::from_secs(30), "the walk ended: {err}");
    assert_eq!(out.status.code(), Some(3), "the loops are reported as failures: {err}");
    for link in ["x", "y", "sub/up"] {
        let needle = format!("{}: cannot read: the directory walked already as", docs.join(link).display());
        assert!(err.contains(&needle), "stderr lacks `{needle}`:\n{err}");
    }
    let list = json(dir.path(), &["list", "--json"]);
    let names: Vec<&str> = list.as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["a", "b"], "each document once");
}
