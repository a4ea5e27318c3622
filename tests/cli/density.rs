//! Selection density and the dominant origin by blocks through the command
//! line: the density falls as a small table fills, each result and `stats` say which
//! one was in force, a rebuild replays it exactly, an older data directory keeps the
//! paper's, a new one moves it at document ends (schema 23), and the sharded
//! deployment refuses it.

use serde_json::Value;

use crate::util::*;

/// The density labels of an export, in sequence order (`paper` where it says none).
fn densities(dir: &std::path::Path) -> Vec<String> {
    ok(dir, &["export"])
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["density"].as_str().unwrap_or("paper").to_string())
        .collect()
}

/// The rank of a density label: 0 for `1`, t for `1/2^t`, 8 for `paper`.
fn threshold(label: &str) -> u32 {
    match label {
        "paper" => 8,
        l => l.strip_prefix("1/").map_or(0, |d| d.parse::<u32>().unwrap().trailing_zeros()),
    }
}

#[test]
fn the_density_falls_as_a_small_table_fills_and_a_rebuild_replays_it_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let out = ingest(dir.path(), &["--table-size", "48KiB"], &[&fixture("gcc-sample.jsonl")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let seen = densities(dir.path());
    assert_eq!(seen[0], "1/4", "a new table selects a quarter of the shingles the selection leaves out");
    let t: Vec<u32> = seen.iter().map(|l| threshold(l)).collect();
    assert!(t.windows(2).all(|w| w[0] <= w[1]), "the density only falls: {seen:?}");
    assert!(t.last() > Some(&2), "a 48 KiB table falls below 1/4 on 400 entries: {seen:?}");
    let stats = json(dir.path(), &["stats", "--json"]);
    assert_eq!(stats["table"]["density"].as_str(), seen.last().map(String::as_str), "stats says the one in force");
    assert!(ok(dir.path(), &["stats"]).contains("density:"));
    let before = ok(dir.path(), &["export"]);
    let out = run(dir.path(), &["rebuild"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && said.contains(" 0 recomputed result(s) differed"), "{said}");
    assert_eq!(ok(dir.path(), &["export"]), before);
}

#[test]
fn the_paper_density_and_the_tables_dominant_origin_are_one_option_away() {
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--density", "paper", "--dominant", "table"];
    assert!(ingest(dir.path(), &flags, &[&fixture("gcc-sample.jsonl")]).status.success());
    assert!(densities(dir.path()).iter().all(|d| d == "paper"));
    let stats = json(dir.path(), &["stats", "--json"]);
    assert_eq!(stats["table"]["density"], "paper");
    let config = stats["config"].as_str().unwrap();
    assert!(!config.contains("density") && !config.contains("dominant"), "{config}");
    // The dominant origin is the argmax of the origins' counts, as the table answered.
    for l in ok(dir.path(), &["export"]).lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        let (top, second) = (&v["origins"][0], &v["origins"][1]);
        if second.is_null() || top["shingles"].as_u64() > second["shingles"].as_u64() {
            assert_eq!(v["dominant_origin"]["id"], top["id"], "{}", v["name"]);
        }
    }
    // A data directory remembers its settings: another one is refused.
    let out = ingest(dir.path(), &["--density", "adaptive"], &[&fixture("mail-sample.jsonl")]);
    assert!(!out.status.success());
    // `rebuild --reanalyse` moves it to the new defaults.
    let out = run(dir.path(), &["rebuild", "--reanalyse", "--density", "adaptive", "--dominant", "blocks"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(densities(dir.path())[0], "1/4");
}

/// Schema 23: a new data directory's density moves at document ends, at least 32
/// documents apart (`density=adaptive/32` in its configuration); `--density-lag 0` raises
/// it at once, as data directories made before, and `rebuild --reanalyse --density-lag
/// 32` moves such a directory to exactly the new rule's results.
#[test]
fn the_density_moves_at_document_ends_and_a_rebuild_moves_a_directory_to_the_lag() {
    let (lagged, at_once) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for (dir, flags) in [(&lagged, &[][..]), (&at_once, &["--density-lag", "0"][..])] {
        let out = ingest(dir.path(), &[&["--table-size", "48KiB"], flags].concat(), &[&fixture("gcc-sample.jsonl")]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let config = |d: &std::path::Path| json(d, &["stats", "--json"])["config"].as_str().unwrap().to_string();
    assert!(config(lagged.path()).contains(" density=adaptive/32 "), "{}", config(lagged.path()));
    assert!(config(at_once.path()).contains(" density=adaptive "), "{}", config(at_once.path()));
    let seen = densities(lagged.path());
    let moved: Vec<usize> = (1..seen.len()).filter(|&i| seen[i] != seen[i - 1]).collect();
    assert!(!moved.is_empty() && moved[0] >= 32, "the first raise comes 32 documents after an ask: {moved:?}");
    assert!(moved.windows(2).all(|w| w[1] - w[0] >= 32), "raises at least the lag apart: {moved:?}");
    assert_ne!(export_without_sources(at_once.path()), export_without_sources(lagged.path()));
    // Another lag changes results: only with --reanalyse, and then to the new rule's.
    let out = run(at_once.path(), &["rebuild", "--density-lag", "32"]);
    assert!(!out.status.success(), "a rebuild that changes results needs --reanalyse");
    let out = run(at_once.path(), &["rebuild", "--reanalyse", "--density-lag", "32"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(config(at_once.path()), config(lagged.path()));
    assert_eq!(export_without_sources(at_once.path()), export_without_sources(lagged.path()));
    let digest = |d: &std::path::Path| json(d, &["stats", "--json"])["table_digest"].clone();
    assert_eq!(digest(at_once.path()), digest(lagged.path()));
}

/// Once the table evicts, the adaptive density does at least as well
/// as the paper's on every metric of `eval`. On real licence texts (the committed
/// sample: version chains that copy whole paragraphs), at four table sizes that evict,
/// with the last 60 documents as queries (`docs/EVALUATION.md` has the figures).
#[test]
fn once_the_table_evicts_the_adaptive_density_is_at_least_the_papers_on_every_metric() {
    let out = bin()
        .args(["eval", "--corpus"])
        .arg(fixture("spdx-sample.jsonl"))
        .args(["--attribution", "earliest", "--align", "on", "--queries", "60", "--json"])
        .args(["--density", "paper,adaptive", "--table-size", "41KiB,20KiB,12KiB,8KiB"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 8, "two densities at four sizes");
    let higher = ["do", "do_rule", "do_blocks", "tf", "overall", "origin_right"];
    let lower = ["origin_wrong", "origin_unlabelled"];
    for (paper, adaptive) in rows[..4].iter().zip(&rows[4..]) {
        assert_eq!(paper["table_bytes"], adaptive["table_bytes"]);
        assert!(adaptive["evictions"].as_u64().unwrap() > 0 && paper["evictions"].as_u64().unwrap() > 0);
        let size = &paper["table_bytes"];
        for m in higher {
            let (p, a) = (paper[m].as_f64().unwrap(), adaptive[m].as_f64().unwrap());
            assert!(a >= p - 1e-9, "{m} at {size} bytes: adaptive {a:.1} below the paper's {p:.1}");
        }
        for m in lower {
            let (p, a) = (paper[m].as_f64().unwrap(), adaptive[m].as_f64().unwrap());
            assert!(a <= p + 1e-9, "{m} at {size} bytes: adaptive {a:.1} above the paper's {p:.1}");
        }
    }
}
