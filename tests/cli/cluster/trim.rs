//! `cluster trim` against deployments driven by hand: what it drops, what it keeps,
//! and the restarts and readers that come after it.

use serde_json::Value;

use crate::util::fixture;

use super::{
    assert_equal, corpus, finish, shuffled, single, single_of, with_config, Nats, OneShard, UNBOUNDED_REVISIONS,
};

#[test]
fn a_trim_outlives_a_restart_of_every_log_server() {
    let (tmp, config) = with_config();
    let one = single(tmp.path(), &config, 1);
    let mut nats = Nats::start(tmp.path(), 3);
    let d = OneShard::init(tmp.path(), &nats.url, &config, &["--replicas", "3"]);
    d.submit(&[fixture("gcc-sample.jsonl")]);
    // Both processes stop at document 10 with a checkpoint at every document: the older
    // of their slots is at document 9, so the trim keeps the log from document 10 on.
    finish(&mut d.run("10", "0"), 120, "the first ten documents");
    let out = d.cluster(&["trim"]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && said.contains("keeps documents from #10 on"), "{said}");
    // More documents after the trim, then every log server loses power and comes back:
    // each replays its record of the trim, which later entries mark as committed
    // (nats-server 2.9 replayed a partial purge as a full one, nats-server#4196).
    let last = d.submit(&[fixture("mail-sample.jsonl")]);
    nats.kill();
    nats.restart();
    finish(&mut d.run(&last, "30"), 300, "the rest after the restart");
    assert_equal(&one, &d.outcome(), "after a trim and a restart of the log");
}

#[test]
fn a_trim_drops_the_lookups_of_earlier_revisions_and_a_restart_after_it_needs_none() {
    let (tmp, config) = with_config();
    let files = shuffled(tmp.path(), &corpus(tmp.path(), 1));
    let one = single_of(tmp.path(), &config, &files, UNBOUNDED_REVISIONS);
    let nats = Nats::start(tmp.path(), 1);
    let d = OneShard::init(tmp.path(), &nats.url, &config, &[]);
    let last = d.submit(&files);
    // Both stop at document 300 with a checkpoint at every document: the trim keeps the
    // log from document 300 on, and the lookups of the revisions caused before it go
    // too (the feedback and answer streams drop 2 × 299 records, the documents stream
    // its batches that end before #300).
    finish(&mut d.run("300", "0"), 300, "the first 300 documents");
    let log = textorigin_cluster::log::Log::connect(&nats.url, 1).unwrap();
    let lookups = log.last_seq("TXO_LOOKUPS_0").unwrap();
    assert!(lookups > 0 && log.first_seq("TXO_LOOKUPS_0").unwrap() == 1, "revisions were looked up");
    let trimmed = serde_json::from_slice::<Value>(&d.cluster(&["trim", "--json"]).output().unwrap().stdout).unwrap();
    assert_eq!(trimmed["kept_from"], 300, "{trimmed}");
    assert!(trimmed["dropped"].as_u64().unwrap() > 2 * 299, "{trimmed}");
    assert!(log.first_seq("TXO_LOOKUPS_0").unwrap() > 1, "the lookups before #300 dropped too: {trimmed}");
    // Restarted after the trim, both finish from their checkpoints as one node would.
    finish(&mut d.run(&last, "30"), 300, "the rest after the trim");
    assert_equal(&one, &d.outcome(), "shuffled, after a trim");
}

/// With several partitions `cluster trim` drops what every process's checkpoint is past:
/// a partition reads the texts of the other partitions' documents that the
/// documents stream no longer holds from their owners' stores, beside its own, and the
/// deployment ends with one node's export.
#[test]
fn a_trim_with_partitions_leaves_older_texts_to_their_owners_stores() {
    let (tmp, config) = with_config();
    let one = single(tmp.path(), &config, 1);
    let nats = Nats::start(tmp.path(), 1);
    let d = OneShard::init(tmp.path(), &nats.url, &config, &["--partitions", "2"]);
    let last = d.submit(&corpus(tmp.path(), 1));
    let run = |until: &str, every: &str| d.run_partitions(until, every, [&d.agg, &d.agg]);
    // Every process writes a slot at each of its documents up to #300: the older of
    // partition 0's is at #297, so the log keeps documents from #298 on.
    finish(&mut run("300", "0"), 300, "the first 300 documents");
    let out = d.cluster(&["trim", "--json"]).output().unwrap();
    let trimmed = serde_json::from_slice::<Value>(&out.stdout).unwrap();
    assert_eq!(trimmed["kept_from"], 298, "{trimmed}");
    assert!(trimmed["dropped"].as_u64().unwrap() > 3 * 297, "documents, answers, feedback and outcomes: {trimmed}");
    // The rest: the partitions start again with no text in memory, and the documents
    // after #300 copy from earlier ones.
    let mut children = run(&last, "30");
    finish(&mut children, 300, "the rest after the trim");
    assert_equal(&one, &d.outcome(), "partitions after a trim");
    let from_stores: u64 = children[1..]
        .iter_mut()
        .map(|c| {
            let mut said = String::new();
            std::io::Read::read_to_string(&mut c.stderr.take().unwrap(), &mut said).unwrap();
            let n = said.split("; ").find_map(|p| p.strip_suffix(" text(s) read from the other partitions' stores"));
            n.unwrap_or_else(|| panic!("{said}")).parse::<u64>().unwrap()
        })
        .sum();
    assert!(from_stores > 0, "texts read from the other partition's store");
}

/// Partitions whose data directories are not side by side (machines of their own, each
/// data directory made by `cluster init` with an unused store for the other partition):
/// each says it cannot read the other's store, and `cluster trim` keeps the whole log
/// rather than drop texts no partition could read again.
#[test]
fn partitions_that_cannot_read_each_others_stores_keep_the_whole_log() {
    let (tmp, config) = with_config();
    let nats = Nats::start(tmp.path(), 1);
    let d = OneShard::init(tmp.path(), &nats.url, &config, &["--partitions", "2"]);
    let elsewhere = tmp.path().join("elsewhere");
    let mut init = d.cluster(&["init", "--shards", "1", "--partitions", "2", "--config"]);
    let out = init.arg(&config).arg("--data").arg(&elsewhere).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    d.submit(&[fixture("gcc-sample.jsonl")]);
    finish(&mut d.run_partitions("100", "0", [&d.agg, &elsewhere]), 300, "the first 100 documents");
    let out = d.cluster(&["status", "--json", "--interval", "0.1"]).output().unwrap();
    let rows = serde_json::from_slice::<Value>(&out.stdout).unwrap()["processes"].clone();
    for r in rows.as_array().unwrap().iter().filter(|r| r["process"] != "w0") {
        assert!(r["checkpoint"].is_u64() && r["whole_log"] == Value::Bool(true), "{rows}");
    }
    let trimmed = serde_json::from_slice::<Value>(&d.cluster(&["trim", "--json"]).output().unwrap().stdout).unwrap();
    assert_eq!((trimmed["whole_log_for"].clone(), trimmed["dropped"].clone()), ("agg0".into(), 0.into()), "{trimmed}");
}

/// Regression (found by the chaos test at four shards and four partitions): a
/// partition's lookups readers stay where its last revision left them, and a trim below
/// the slowest process drops the other partitions' revisions' lookups after them; the
/// partition's next revision read on from there and stopped ("no longer holds record").
/// Here partition 1 is slowed (200 ms a document) while the log is trimmed again and
/// again: its next revisions' lookups are found again past what was dropped.
#[test]
#[cfg(feature = "failpoints")]
fn a_partitions_revision_after_a_trim_dropped_the_others_lookups_finds_its_own() {
    let (tmp, config) = with_config();
    let files = shuffled(tmp.path(), &corpus(tmp.path(), 1));
    let one = single_of(tmp.path(), &config, &files, UNBOUNDED_REVISIONS);
    let nats = Nats::start(tmp.path(), 1);
    let d = OneShard::init(tmp.path(), &nats.url, &config, &["--partitions", "2"]);
    let last = d.submit(&files);
    let control = tmp.path().join("failpoints");
    std::fs::write(&control, "partition.after-store=sleep\n").unwrap();
    let mut children = vec![d.worker(&last, "0")];
    for p in ["0", "1"] {
        let mut c = d.cluster(&["aggregate", "--partition", p, "--until", &last, "--checkpoint-secs", "0", "--data"]);
        c.arg(&d.agg).stderr(std::process::Stdio::piped());
        if p == "1" {
            c.env("TEXTORIGIN_FAILPOINTS", &control);
        }
        children.push(c.spawn().unwrap());
    }
    let mut trimmed_meanwhile = false;
    while children[2].try_wait().unwrap().is_none() {
        let out = d.cluster(&["trim", "--json"]).output().unwrap();
        let trimmed = serde_json::from_slice::<Value>(&out.stdout).unwrap_or_default();
        trimmed_meanwhile |= trimmed["kept_from"].as_u64().is_some_and(|k| k > 1);
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let mut said = String::new();
    std::io::Read::read_to_string(&mut children[2].stderr.take().unwrap(), &mut said).unwrap();
    finish(&mut children, 300, &format!("the deployment trimmed as it runs:\n{said}"));
    assert!(trimmed_meanwhile, "the log was trimmed during the run");
    assert_equal(&one, &d.outcome(), "partitions trimmed as they run");
}
