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


/// Regression: terminal escape sequences in names passed through to the terminal.
#[test]
fn control_characters_in_names_are_shown_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = tempfile::tempdir().unwrap();
    let doc = inputs.path().join("evil.json");
    std::fs::write(&doc, r#"{"id": "evil\u001b[2J\u001b]0;pwned\u0007name\nline", "text": "some words of an ordinary document"}"#).unwrap();
    assert!(ingest(dir.path(), &[], &[&doc]).status.success());
    for args in [&["list"][..], &["show", "1"][..]] {
        let out = ok(dir.path(), args);
        assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{args:?}: {out:?}");
        assert!(out.contains("evil\\u{1b}[2J"), "{args:?}: {out}");
    }
    // JSON keeps the name exactly.
    assert_eq!(json(dir.path(), &["show", "1", "--json"])["name"], "evil\u{1b}[2J\u{1b}]0;pwned\u{7}name\nline");
}
