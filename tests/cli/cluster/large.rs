//! Documents larger than the log server takes in one message (nats-server's
//! `max_payload`, 1 MiB by default): `cluster submit` reports each with the way on and
//! admits the others, where it used to retry the append and stop with the server's
//! words; and what `ingest`'s limits refuse, `cluster submit` refuses alike.

use serde_json::Value;

use super::{with_config, Nats, OneShard};
use crate::util::{bin, json};

#[test]
fn a_document_larger_than_the_logs_messages_is_refused_with_the_way_on_and_the_rest_admitted() {
    let (tmp, config) = with_config();
    let input = tmp.path().join("large.jsonl");
    let big = "the council approved the new bridge over the river ".repeat(30_000); // 1.5 MB
    let docs = [
        serde_json::json!({ "id": "small-1", "text": "A bakery on Main Street reopened after the flood." }),
        serde_json::json!({ "id": "large", "text": big }),
        serde_json::json!({ "id": "small-2", "text": "Engineers expect the work on the tunnel to take two years." }),
    ];
    std::fs::write(&input, docs.iter().map(|d| d.to_string() + "\n").collect::<String>()).unwrap();
    let nats = Nats::start(tmp.path(), 1);
    let d = OneShard::init(tmp.path(), &nats.url, &config, &[]);
    let out = d.cluster(&["submit", "--json"]).arg(&input).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((report["admitted"].as_u64(), report["failed"].as_u64()), (Some(2), Some(1)), "{said}");
    assert!(said.contains("large") && said.contains("max_payload"), "the document and the way on: {said}");
    // The cap is what the log takes, said with the `ingest` that admits the same.
    let fits = (1 << 20) - 4096 - (64 << 10);
    assert!(said.contains(&format!("`ingest --max-doc-bytes {fits}`")), "{said}");
    // A cap given beyond it is refused before anything is submitted.
    let out = d.cluster(&["submit", "--json", "--max-doc-bytes", "2MiB"]).arg(&input).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("raise max_payload") && said.contains(&format!("--max-doc-bytes {fits} or less")), "{said}");
    assert!(said.contains("nothing was submitted"), "{said}");
    let status = d.cluster(&["status", "--json", "--interval", "0.1"]).output().unwrap();
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["documents"].as_u64(), Some(2), "{status}");
}

/// `cluster submit` takes `ingest`'s limits, the compressed files' too, so that it
/// admits the documents `ingest` stores: a gzip file past `--max-decoded-bytes` fails as
/// `ingest` fails it, its documents before the point admitted as `ingest` stores them.
#[test]
fn submit_takes_ingests_limits_on_compressed_files() {
    let (tmp, config) = with_config();
    let input = tmp.path().join("many.jsonl.gz");
    let line = |i: usize| {
        serde_json::json!({ "id": format!("d{i}"), "text": format!("Report {i} of the council on the river, the bridge and the budget of the town.") })
            .to_string()
            + "\n"
    };
    let jsonl: String = (0..20_000).map(line).collect(); // ~2 MB, compressing well
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, jsonl.as_bytes()).unwrap();
    std::fs::write(&input, gz.finish().unwrap()).unwrap();
    let limit = ["--max-decoded-bytes", "1MiB"];
    let nats = Nats::start(tmp.path(), 1);
    let d = OneShard::init(tmp.path(), &nats.url, &config, &[]);
    let out = d.cluster(&["submit", "--json"]).args(limit).arg(&input).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(report["failed"].as_u64(), Some(1), "{said}");
    let admitted = report["admitted"].as_u64().unwrap();
    let single = tmp.path().join("single");
    let out = bin()
        .args(["ingest", "--data"])
        .arg(&single)
        .args(limit)
        .arg("--config")
        .arg(&config)
        .arg(&input)
        .output()
        .unwrap();
    let ingested = String::from_utf8_lossy(&out.stderr);
    let limit_said = "over the limit (--max-decoded-bytes)";
    assert!(said.contains(limit_said) && ingested.contains(limit_said), "the same limit said:\n{said}\n{ingested}");
    let stored = json(&single, &["stats", "--json"])["documents"].as_u64();
    assert!(admitted > 1000 && admitted < 20_000 && stored == Some(admitted), "{admitted} against {stored:?}");
}
