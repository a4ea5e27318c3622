//! Quotations: exact and lightly edited quotes found, unrelated sentences not.

use crate::util::*;

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
        [
            "\"Our country needs fast trains between every large city.\"",
            "PASSENGERS WILL SAVE FORTY MINUTES ON EACH JOURNEY TO COAST!"
        ]
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

/// `quote-eval` with `args` on real mail (the committed sample), which must succeed:
/// its `--json` answer.
fn quote_eval_on_mail(args: &[&str]) -> serde_json::Value {
    let out = bin().arg("quote-eval").args(args).arg("--json").arg(fixture("mail-sample.jsonl")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `quote-eval --planted` on real mail: the planted sentences of 10-17 and of 18-40
/// words with one word changed are found with the default part signatures (pairs of
/// groups), through the real ingestion path, all but one at most; with schema 7's search, fewer of the
/// 10-17; without part signatures, fewer still of the long ones.
#[test]
fn planted_edited_sentences_are_found_with_part_signatures() {
    let v = quote_eval_on_mail(&["--planted", "--queries", "20"]);
    let row = |configuration: &str, words: &str| {
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["configuration"].as_str().unwrap().starts_with(configuration) && r["words"] == words)
            .unwrap_or_else(|| panic!("no row {configuration} {words}: {v}"))
            .clone()
    };
    for words in ["10-17", "18-40"] {
        let r = row("default", words);
        assert_eq!(r["planted"], 20);
        // 20 planted a band: one miss at most (the gate, `quote-eval --planted` on
        // 300 news queries, is 97% in each band: docs/PERFORMANCE.md).
        assert!(r["recall"].as_f64().unwrap() >= 95.0 && r["precision"] == 100.0, "{words}: {v}");
    }
    let found = |configuration: &str, words: &str| row(configuration, words)["found"].as_u64().unwrap();
    assert!(found("before issue 23", "10-17") < found("default", "10-17"), "{v}");
    assert!(found("no part signatures", "18-40") < found("default", "18-40"), "{v}");
}

/// `quote-eval` reads what a reader sees: the query documents ingested after the
/// collection at default settings, each sentence with a pair of 0.8 or more found by
/// its stored quotation (matched by its bytes) or by copied blocks, the rest by kind.
/// On real mail every such sentence quotes an earlier message, and the stored
/// quotations show all of them.
#[test]
fn quote_eval_counts_what_the_stored_results_show() {
    let v = quote_eval_on_mail(&["--queries", "30"]);
    let seen = &v["seen"];
    let n = |key: &str| seen[key].as_u64().unwrap();
    assert!(n("sentences") >= 40, "quoted replies: {seen}");
    assert_eq!(n("by_quotation"), n("sentences"), "{seen}");
    let missed: u64 = seen["misses"].as_array().unwrap().iter().map(|m| m["sentences"].as_u64().unwrap()).sum();
    assert_eq!(n("either_way") + missed, n("sentences"), "every sentence found or told: {seen}");
    assert!(n("either_way") >= n("by_quotation"), "{seen}");
}
