//! Side by side: each copied block's passage in its source, the
//! similarity to each source, `show --side-by-side` and the compare page, on a planted
//! copy with a substitution, an insertion and a deletion.

use serde_json::Value;

use crate::util::*;

const SOURCE: &str = "Harbour bridge reopens after two years of repairs.\n\nThe old harbour bridge reopened to traffic on Monday morning after twenty-six months of repairs that cost the city almost twice the original estimate. Engineers replaced all eleven steel cables, rebuilt the southern ramp and installed a new drainage system that should keep salt water away from the deck during winter storms.\n\nMayor Ingrid Solberg cut the ribbon shortly after seven o'clock while a small crowd of commuters cheered.\n";

/// The source's second paragraph with `twenty-six` made `twenty-seven` (the term
/// `six` made `seven`), `quickly` inserted and `southern` left out, between two novel
/// sentences.
const COPY: &str = "A reader wrote to us this week about the bridge.\n\nThe old harbour bridge reopened to traffic on Monday morning after twenty-seven months of repairs that cost the city almost twice the original estimate. Engineers quickly replaced all eleven steel cables, rebuilt the ramp and installed a new drainage system that should keep salt water away from the deck during winter storms.\n\nShe thinks the toll question is far from settled.\n";

fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let inputs = tmp.path().join("in");
    std::fs::create_dir(&inputs).unwrap();
    std::fs::write(inputs.join("1-source.txt"), SOURCE).unwrap();
    std::fs::write(inputs.join("2-copy.txt"), COPY).unwrap();
    let dir = tmp.path().join("d");
    assert!(ingest(&dir, &[], &[&inputs]).status.success());
    (tmp, dir)
}

/// The byte span `[a, b]` of `v` cut from `text`.
fn cut<'a>(text: &'a str, v: &Value) -> &'a str {
    &text[v[0].as_u64().unwrap() as usize..v[1].as_u64().unwrap() as usize]
}

#[test]
fn a_planted_copys_passage_its_edits_and_similarity_are_shown_side_by_side() {
    let (_tmp, dir) = setup();
    let v = json(&dir, &["show", "2-copy", "--json"]);
    let blocks = v["copied_blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 1, "{v}");
    let b = &blocks[0];
    let there = &b["source"];
    let passage = &SOURCE[there["start_byte"].as_u64().unwrap() as usize..there["end_byte"].as_u64().unwrap() as usize];
    assert!(passage.starts_with("The old harbour bridge reopened"), "{passage}");
    assert!(passage.contains("keep salt water away from the deck"), "{passage}");
    let copied = (b["end_token"].as_u64().unwrap() - b["start_token"].as_u64().unwrap()) as f64;
    let percent = (1000.0 * copied / v["tokens"].as_f64().unwrap()).round() / 10.0;
    assert_eq!(v["similarity"][0]["origin"]["name"], "1-source");
    assert_eq!(v["similarity"][0]["percent"].as_f64().unwrap(), percent);
    // `export` is as it was: no sources read, no spans.
    let export = ok(&dir, &["export"]);
    assert!(!export.contains("\"similarity\"") && !export.contains("\"source\":{"), "{export}");

    let s = json(&dir, &["show", "2-copy", "--side-by-side", "--json"]);
    assert_eq!(s["source"]["name"], "1-source", "the default source: the one copied most");
    let pairs = s["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 1);
    let edits: Vec<&str> = pairs[0]["edits"].as_array().unwrap().iter().map(|e| cut(COPY, e)).collect();
    let dropped: Vec<&str> = pairs[0]["source_edits"].as_array().unwrap().iter().map(|e| cut(SOURCE, e)).collect();
    assert_eq!(edits, ["seven", "quickly"], "the copy's own words");
    assert_eq!(dropped, ["six", "southern"], "the source's words the copy changed or left out");
    assert_eq!(s["percent"], v["similarity"][0]["percent"]);

    let text = bin()
        .args(["show", "2-copy", "--side-by-side", "1-source", "--data"])
        .arg(&dir)
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("twenty-[seven]") && text.contains("twenty-[six]") && text.contains("[southern]"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 100 || !l.contains(" | ")), "{text}");

    let page = _tmp.path().join("compare.html");
    ok(&dir, &["show", "2-copy", "--side-by-side", "--html", page.to_str().unwrap()]);
    let dom = crate::html::chromium_dom_of(&format!("file://{}", page.display()));
    assert!(dom.contains("id=\"a-0\"") && dom.contains("href=\"#b-0\""), "the copy's passage links the source's");
    assert!(dom.contains("id=\"b-0\"") && dom.contains("href=\"#a-0\""));
    assert!(dom.contains("<mark class=\"edit\">quickly</mark>"), "{dom}");
    assert!(dom.contains("<mark class=\"edit added\">southern</mark>"), "{dom}");

    // A source it did not copy from: no passage; a document with no source: said so.
    let none = json(&dir, &["show", "2-copy", "--side-by-side", "2-copy", "--json"]);
    assert_eq!(none["pairs"].as_array().unwrap().len(), 0);
    let out = run(&dir, &["show", "1-source", "--side-by-side"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no copied blocks"));
}

#[test]
fn the_inspector_compares_a_document_with_each_source() {
    let (_tmp, dir) = setup();
    let port = free_port();
    let daemon = Daemon::start(&dir, &["--http", &format!("127.0.0.1:{port}")], None);
    let base = format!("http://127.0.0.1:{port}");
    wait_until("the inspector", 60, || {
        crate::html::chromium_dom_of(&format!("{base}/documents/2-copy")).contains("side by side")
    });
    let doc = crate::html::chromium_dom_of(&format!("{base}/documents/2-copy"));
    assert!(doc.contains("href=\"/compare?a=%232&amp;b=%231\""), "{doc}");
    let page = crate::html::chromium_dom_of(&format!("{base}/compare?a=%232&b=%231"));
    assert!(page.contains("of <a href=\"/documents/%232\">#2 2-copy</a> is copied from"), "{page}");
    assert!(page.contains("<mark class=\"edit\">quickly</mark>"), "{page}");
    assert_eq!(page, crate::html::chromium_dom_of(&format!("{base}/compare?a=2-copy")), "b: the source copied most");
    let api = json_get(port, "/api/documents/2-copy");
    assert_eq!(api, json(&dir, &["show", "2-copy", "--json"]), "the API's document is show --json");
    daemon.stop();
}

fn json_get(port: u16, path: &str) -> Value {
    let (status, _, body) =
        raw(port, format!("GET {path} HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n").as_bytes());
    assert_eq!(status, 200);
    serde_json::from_slice(&body).unwrap()
}
