//! Exact copies: answered from their earlier document, adding nothing to the table.

use serde_json::Value;

use crate::util::*;

/// The licence texts of the fixture, by id.
fn licences() -> Vec<(String, String)> {
    std::fs::read_to_string(fixture("spdx-sample.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (v["id"].as_str().unwrap().to_string(), v["text"].as_str().unwrap().to_string())
        })
        .collect()
}

fn write_jsonl(path: &std::path::Path, docs: &[(&str, &str)]) {
    let lines: Vec<String> =
        docs.iter().map(|(id, text)| serde_json::json!({"id": id, "text": text}).to_string()).collect();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

#[test]
fn an_exact_copy_is_answered_from_its_earlier_document_and_adds_nothing_to_the_table() {
    let all = licences();
    let inputs = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let originals: Vec<(&str, &str)> = all[..40].iter().map(|(i, t)| (i.as_str(), t.as_str())).collect();
    write_jsonl(&inputs.path().join("1-originals.jsonl"), &originals);
    assert!(ingest(d, &[], &[&inputs.path().join("1-originals.jsonl")]).status.success());
    // The copied document: the first licence that quotes an earlier one.
    let quotes = |name: &str| json(d, &["quotes", name, "--json"])["quotations"].clone();
    let (name, text) =
        originals.iter().find(|(n, _)| !quotes(n).as_array().unwrap().is_empty()).expect("a licence quoting another");
    let id = json(d, &["show", name, "--json"])["id"].as_u64().unwrap();
    // The table's digest (the derived indexes take a copy's near-duplicate keys).
    let table_digest = |d: &std::path::Path| digest(d)[0].clone();
    let table_before = table_digest(d);

    // The same bytes, and the same terms in other case and spacing.
    let shouted = text.to_uppercase().replace(' ', "  ");
    write_jsonl(&inputs.path().join("2-copies.jsonl"), &[("copy-bytes", text), ("copy-case", &shouted)]);
    assert!(ingest(d, &[], &[&inputs.path().join("2-copies.jsonl")]).status.success());
    assert_eq!(table_digest(d), table_before, "the copies added nothing to the table");
    for copy in ["copy-bytes", "copy-case"] {
        let v = json(d, &["show", copy, "--json"]);
        assert_eq!(v["exact_copy_of"]["id"].as_u64(), Some(id), "{copy}: {v}");
        assert_eq!(v["old_tokens"], v["tokens"], "{copy}: every token copied");
        assert_eq!(v["dominant_origin"]["id"].as_u64(), Some(id));
        let blocks = v["copied_blocks"].as_array().unwrap();
        assert!(!blocks.is_empty() && blocks.iter().all(|b| b["origin"]["id"].as_u64() == Some(id)), "{copy}: {v}");
        // Its near-duplicates are its earlier document's, and that document, exact.
        let nd = json(d, &["neardups", copy, "--json"])["near_duplicates"].clone();
        let of = nd.as_array().unwrap().iter().find(|n| n["id"].as_u64() == Some(id)).expect("its earlier document");
        assert_eq!((&of["exact"], of["resemblance"].as_f64()), (&Value::Bool(true), Some(1.0)), "{copy}: {nd}");
        assert!(ok(d, &["show", copy]).contains(&format!("an exact copy of #{id} {name}")));
    }
    let between = json(d, &["neardups", "copy-case", "--json"])["near_duplicates"].clone();
    assert!(between.as_array().unwrap().iter().any(|n| n["name"] == "copy-bytes" && n["exact"] == true), "{between}");
    assert_eq!(quotes("copy-bytes"), quotes(name), "the same bytes: the earlier document's quotations");
    let (theirs, mine) = (quotes(name), quotes("copy-case"));
    assert_eq!(mine.as_array().unwrap().len(), theirs.as_array().unwrap().len());
    for (q, t) in mine.as_array().unwrap().iter().zip(theirs.as_array().unwrap()) {
        assert_eq!(q["sources"], t["sources"]);
        assert_eq!(
            q["text"].as_str().unwrap(),
            t["text"].as_str().unwrap().to_uppercase().replace(' ', "  "),
            "the same words of its own text"
        );
    }
    assert!(ok(d, &["list"]).contains(&format!("an exact copy of #{id} {name}")));
    let original = json(d, &["show", name, "--json"]);
    assert!(original.get("exact_copy_of").is_none(), "only copies say it: {original}");

    // One word changed: a near copy, analysed in full.
    let near = text.replacen(' ', " changed ", 1);
    write_jsonl(&inputs.path().join("3-near.jsonl"), &[("near", &near)]);
    assert!(ingest(d, &[], &[&inputs.path().join("3-near.jsonl")]).status.success());
    assert!(json(d, &["show", "near", "--json"]).get("exact_copy_of").is_none());
    assert_ne!(table_digest(d), table_before);

    // Replayed, the copies take nothing from the table either; analysed again, every
    // result is as stored.
    let export = ok(d, &["export"]);
    let table = digest(d);
    let said = |args: &[&str]| {
        let out = run(d, args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let replayed = said(&["rebuild"]);
    assert!(replayed.contains(" 0 recomputed result(s) differed"), "{replayed}");
    assert_eq!(digest(d), table);
    assert!(ok(d, &["check"]).contains("ok"));
    let reanalysed = said(&["rebuild", "--reanalyse"]);
    assert!(reanalysed.contains(" 0 origin result(s) differ"), "{reanalysed}");
    assert_eq!(ok(d, &["export"]), export);
    assert_eq!(digest(d), table);
}
