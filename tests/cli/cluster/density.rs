//! One node's default density in a deployment: the adaptive density, raised at
//! document ends (schema 23) by the asks of every shard, which the partitions sum into
//! the feedback, and by workers that probe no document whose threshold feedback still
//! to come may raise.

use std::path::PathBuf;

use serde_json::Value;

use crate::util::bin;

use super::{assert_equal, cluster_of, corpus, shuffled, single, single_of, Nats, OneShard, UNBOUNDED_REVISIONS};

/// A temporary directory holding a configuration file of one node's defaults on a
/// table small enough that the density rises on the sample corpus (once, to the
/// paper's): (the directory, the file).
fn with_default_density() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("config.toml");
    std::fs::write(&config, "table_size = \"48KiB\"\nexact_copies = false\n").unwrap();
    (tmp, config)
}

/// The density label of each document of an export.
fn densities(export: &[Value]) -> Vec<&str> {
    export.iter().map(|d| d["density"].as_str().unwrap_or("paper")).collect()
}

/// One node's default density (adaptive, raised at document ends 32 documents after
/// an ask) on a table small enough that it rises: workers that probe no document whose
/// threshold feedback still to come may raise, partitions that select each document at
/// its answers' threshold and sum the workers' asks into its feedback, give one node's
/// results and table, documents in date order or shuffled (revisions look up shingles at
/// the threshold their document was selected at), with one partition or several.
#[test]
fn a_deployment_with_default_settings_raises_the_density_as_one_node_does() {
    let (tmp, config) = with_default_density();
    let files = corpus(tmp.path(), 1);
    let shuffled = shuffled(tmp.path(), &files);
    for (files, one_args, runs) in [
        (
            &files,
            &[][..],
            &[
                &["--shards", "1"][..],
                &["--shards", "4"],
                &["--shards", "2", "--partitions", "2"],
                // Prepared at submission at the starting threshold, kept by each worker
                // at the one in force.
                &["--shards", "4", "--prepared"],
            ][..],
        ),
        (
            &shuffled,
            UNBOUNDED_REVISIONS,
            &[&["--shards", "2"][..], &["--shards", "2", "--partitions", "2"], &["--shards", "2", "--prepared"]],
        ),
    ] {
        let round = tempfile::tempdir().unwrap();
        let one = single_of(round.path(), &config, files, one_args);
        let seen = densities(&one.0);
        let raises = seen.windows(2).filter(|w| w[0] != w[1]).count();
        assert!(
            raises == 1 && seen[0] != "paper" && seen.last() == Some(&"paper"),
            "the density starts adaptive and rises to the paper's: {seen:?}"
        );
        for args in runs {
            let c = cluster_of(round.path(), &config, files, &[*args, &["--servers", "1"]].concat());
            assert_equal(&one, &c, &format!("{args:?}, default density"));
        }
    }
}

/// A worker restarted from a checkpoint slot written while a raise of the density was
/// pending (asked for during an earlier document, to come at a later one's end) raises
/// it where one node does: the slot keeps the pending raise.
#[test]
fn a_worker_restarted_with_a_raise_of_the_density_pending_raises_it_as_one_node_does() {
    let (tmp, config) = with_default_density();
    let one = single(tmp.path(), &config, 1);
    // The first raise comes at the end of document `raise`, 32 documents after the
    // first ask: the slot of document `raise − 8` holds it pending.
    let seen = densities(&one.0);
    let raise = (1..seen.len()).find(|&i| seen[i] != seen[i - 1]).expect("the density rises");
    let until = (raise - 8).to_string();
    let nats = Nats::start(tmp.path(), 1);
    let d = OneShard::init(tmp.path(), &nats.url, &config, &[]);
    let last = d.submit(&corpus(tmp.path(), 1));
    assert_equal(&one, &d.restarted_at(&until, &last), "a worker restarted with a raise pending");
}

/// `cluster init` refuses, before it reaches the log, the density a deployment's workers
/// could not follow.
#[test]
fn a_sharded_deployment_refuses_a_density_its_workers_cannot_follow() {
    let dir = tempfile::tempdir().unwrap();
    // Raised within a document, where no shard sees the others' buckets.
    for (flags, refusal) in [
        (&["--density-lag", "0"][..], "a density lag of 0 raises it within a document"),
        (&["--prepared", "--density", "adaptive", "--density-lag", "0"], "a density lag of 0"),
    ] {
        let out = bin()
            .args(["cluster", "init", "--shards", "1"])
            .args(flags)
            .arg("--data")
            .arg(dir.path())
            .env("TEXTORIGIN_NATS", "nats://127.0.0.1:1")
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && said.contains(refusal), "{flags:?}: {said}");
    }
}
