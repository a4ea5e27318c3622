//! Origins by publication date: documents that arrive out of order.

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

    // The copies stored before it are revised: each ends as in a date-ordered run,
    // the revisions recorded.
    let ordered = tempfile::tempdir().unwrap();
    let f = examples_jsonl(inputs.path(), "ordered.jsonl", &["report", "blog", "roundup"], true);
    assert!(ingest(ordered.path(), &[], &[&f]).status.success());
    let by_name = |dir: &Path, name: &str| {
        let v = json(dir, &["show", "--json", name]);
        let origin = |o: &Value| o["name"].as_str().unwrap().to_string();
        let blocks: Vec<(u64, u64, String)> = v["copied_blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| (b["start_token"].as_u64().unwrap(), b["end_token"].as_u64().unwrap(), origin(&b["origin"])))
            .collect();
        (v["old_tokens"].clone(), blocks, v["dominant_origin"]["name"].clone())
    };
    for name in ["report", "blog", "roundup"] {
        assert_eq!(by_name(dated.path(), name), by_name(ordered.path(), name), "{name}");
    }
    // Quotations are oriented by date too: the report quotes nothing; the roundup and
    // the blog quote it, found when it arrived after them.
    assert_eq!(json(dated.path(), &["quotes", "--json", "report"])["quotations"], json!([]));
    for name in ["blog", "roundup"] {
        let quotes = json(dated.path(), &["quotes", "--json", name]);
        let from_report: Vec<&Value> = quotes["quotations"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|q| q["sources"].as_array().unwrap())
            .filter(|s| s["name"] == "report")
            .collect();
        assert!(!from_report.is_empty() && from_report.iter().all(|s| s["arrived_after"] == true), "{quotes}");
    }
    assert!(ok(dated.path(), &["quotes", "roundup"]).contains("report (published before, arrived after)"));
    let pairs = |dir: &Path, name: &str| {
        let v = json(dir, &["quotes", "--json", name]);
        let mut out: Vec<(u64, String)> = v["quotations"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|q| {
                let start = q["start_byte"].as_u64().unwrap();
                q["sources"].as_array().unwrap().iter().map(move |s| (start, s["name"].as_str().unwrap().to_string()))
            })
            .collect();
        out.sort();
        out
    };
    for name in ["report", "blog", "roundup"] {
        assert_eq!(pairs(dated.path(), name), pairs(ordered.path(), name), "{name}'s quotations");
    }
    let roundup = json(dated.path(), &["show", "--json", "roundup"]);
    let causes: Vec<u64> =
        roundup["revisions"].as_array().unwrap().iter().map(|r| r["caused_by"]["id"].as_u64().unwrap()).collect();
    assert_eq!(causes, [2, 3], "revised by the blog, then by the report: {roundup}");
    assert_eq!(roundup["revisions"][0]["old_tokens_before"], 0, "it had been all new");
    assert!(ok(dated.path(), &["show", "roundup"]).contains("revised by #3 report"));
    let page = inputs.path().join("roundup.html");
    assert!(run(dated.path(), &["show", "--html", page.to_str().unwrap(), "roundup"]).status.success());
    assert!(std::fs::read_to_string(&page).unwrap().contains("Revised by #2 blog, then #3 report"));
    let history = ok(dated.path(), &["show", "--history", "roundup"]);
    assert!(history.contains("2 revision(s)") && history.contains("before: 0 old tokens"), "{history}");
    // Issue 35: each revision shows the state after it too: the next one's before, the
    // last one's the result now.
    let states = |when: &str| -> Vec<String> {
        history
            .lines()
            .filter(|l| l.contains(&format!("{when}: ")) && l.contains("old tokens"))
            .map(str::to_string)
            .collect()
    };
    let (befores, afters) = (states("before"), states("after"));
    assert_eq!(afters.len(), 2, "{history}");
    assert_eq!(afters[0].replace("after", "before"), befores[1], "{history}");
    let now = roundup["old_tokens"].as_u64().unwrap();
    assert!(afters[1].contains(&format!("after: {now} old tokens")), "{history}");
    assert!(history.lines().any(|l| l.contains("after: tokens")), "the blocks after: {history}");
    assert!(json(ordered.path(), &["show", "--json", "roundup"]).get("revisions").is_none(), "in order: none");

    // The take-overs replay from the stored dates: a rebuilt table is the same.
    let before = digest(dated.path());
    let out = run(dated.path(), &["rebuild"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(digest(dated.path()), before);
    assert!(ok(dated.path(), &["check"]).contains("ok"));
    // Re-analysed, the documents are revised again as they arrived: the same results.
    let export = ok(dated.path(), &["export"]);
    let out = run(dated.path(), &["rebuild", "--reanalyse"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(ok(dated.path(), &["export"]), export);
    // Regression: it said "2 origin result(s) differ" (each revised
    // result against the one it first had) of an export it left byte-identical.
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("0 origin result(s) differ"), "{said}");
    assert_eq!(json(dated.path(), &["show", "--json", "roundup"])["revisions"].as_array().map(Vec::len), Some(2));
}
