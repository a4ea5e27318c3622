//! Origins by publication date (issue 25): documents that arrive out of order.

use std::path::Path;

use serde_json::{json, Value};

use crate::util::*;

/// The three example documents as JSON lines, in the order given, with their dates
/// when `dated`: the report (1 November), the blog that quotes it (2 November), the
/// roundup that quotes both (7 November).
fn examples_jsonl(dir: &Path, file: &str, order: &[&str], dated: bool) -> std::path::PathBuf {
    let date = |name: &str| match name {
        "report" => "2026-11-01",
        "blog" => "2026-11-02",
        _ => "2026-11-07",
    };
    let text = |name: &str| {
        let f = match name {
            "report" => "01-harbour-bridge.txt",
            "blog" => "02-commuter-blog.txt",
            _ => "03-weekly-roundup.txt",
        };
        std::fs::read_to_string(examples().join(f)).unwrap()
    };
    let lines: String = order
        .iter()
        .map(|&n| {
            let mut d = json!({"id": n, "text": text(n)});
            if dated {
                d["published_at"] = json!(date(n));
            }
            d.to_string() + "\n"
        })
        .collect();
    let path = dir.join(file);
    std::fs::write(&path, lines).unwrap();
    path
}

fn origins(v: &Value) -> Vec<u64> {
    v["copied_blocks"].as_array().unwrap().iter().map(|b| b["origin"]["id"].as_u64().unwrap()).collect()
}

#[test]
fn a_late_original_is_not_called_a_copy_and_later_copies_name_it() {
    let inputs = tempfile::tempdir().unwrap();
    let newest_first = ["roundup", "blog", "report"];
    // Without dates, arrival order is publication order: the report is "copied" from
    // the roundup that quoted it.
    let plain = tempfile::tempdir().unwrap();
    let f = examples_jsonl(inputs.path(), "plain.jsonl", &newest_first, false);
    assert!(ingest(plain.path(), &[], &[&f]).status.success());
    let report = json(plain.path(), &["show", "--json", "report"]);
    assert!(report["old_tokens"].as_u64().unwrap() > 0, "{report}");
    assert!(origins(&report).contains(&1), "the roundup, #1: {report}");

    // With dates the report, published first, copies from nothing.
    let dated = tempfile::tempdir().unwrap();
    let f = examples_jsonl(inputs.path(), "dated.jsonl", &newest_first, true);
    assert!(ingest(dated.path(), &[], &[&f]).status.success());
    let report = json(dated.path(), &["show", "--json", "report"]);
    assert_eq!(
        (report["old_tokens"].as_u64(), report["copied_blocks"].as_array().map(Vec::len)),
        (Some(0), Some(0)),
        "{report}"
    );
    assert_eq!(report["dominant_origin"]["id"], 3, "its own");
    // A later article quoting the report names the report, not the earlier arrivals
    // that quoted it.
    let text = std::fs::read_to_string(examples().join("01-harbour-bridge.txt")).unwrap();
    let opening: Vec<&str> = text.split_whitespace().take(60).collect();
    let follow = inputs.path().join("follow.jsonl");
    let doc =
        json!({"id": "follow-up", "published_at": "2026-11-20", "text": format!("A follow-up. {}", opening.join(" "))});
    std::fs::write(&follow, doc.to_string() + "\n").unwrap();
    assert!(ingest(dated.path(), &[], &[&follow]).status.success());
    let f = json(dated.path(), &["show", "--json", "follow-up"]);
    assert!(!origins(&f).is_empty() && origins(&f).iter().all(|&o| o == 3), "{f}");

    // The take-overs replay from the stored dates: a rebuilt table is the same.
    let before = digest(dated.path());
    let out = run(dated.path(), &["rebuild"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(digest(dated.path()), before);
    assert!(ok(dated.path(), &["check"]).contains("ok"));
}
