//! Documents larger than the log server takes in one message (nats-server's
//! `max_payload`, 1 MiB by default): `cluster submit` reports each with the way on and
//! admits the others, where it used to retry the append and stop with the server's
//! words.

use serde_json::Value;

use super::{with_config, Nats, OneShard};

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
}
