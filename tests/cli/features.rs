//! The feature switches from the command line: `--neardup off --quotes off`,
//! `--origins off` (or the TOML file) remembered by the data directory, shown as off in
//! every view, refused when switched without a re-analysis, turned on by `rebuild
//! --reanalyse`.

use serde_json::Value;

use crate::util::*;

#[test]
fn switched_off_features_are_shown_as_off_and_turned_on_by_a_reanalysis() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, config) = (tmp.path().join("data"), tmp.path().join("jobs.toml"));
    std::fs::write(&config, "near_duplicates = false\n").unwrap();
    let out = ingest(&data, &["--config", config.to_str().unwrap(), "--quotes", "off"], &[&examples()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let show = ok(&data, &["show", "3"]);
    assert!(show.contains("near-duplicates of earlier documents: off in this data directory"), "{show}");
    assert!(show.contains("quotations: off in this data directory"), "{show}");
    let v = json(&data, &["show", "3", "--json"]);
    assert_eq!((&v["near_duplicates"], &v["quotations"]), (&Value::Null, &Value::Null), "off is null, not []");
    assert!(v["copied_blocks"].as_array().is_some_and(|b| !b.is_empty()), "origins are on: {v}");
    for line in ok(&data, &["export"]).lines() {
        let d: Value = serde_json::from_str(line).unwrap();
        assert!(d["near_duplicates"].is_null() && d["quotations"].is_null(), "{line}");
    }
    assert!(ok(&data, &["stats"]).contains("features:    near-duplicates off, quotations off"));
    let stats = json(&data, &["stats", "--json"]);
    assert_eq!((&stats["near_duplicates"], &stats["quotations"]), (&Value::Bool(false), &Value::Bool(false)));
    let prom = ok(&data, &["stats", "--prometheus"]);
    assert!(prom.contains("textorigin_feature_enabled{feature=\"near_duplicates\"} 0"), "{prom}");
    assert!(prom.contains("textorigin_feature_enabled{feature=\"quotations\"} 0"), "{prom}");
    for (cmd, what) in [("neardups", "near-duplicates are off"), ("quotes", "quotations are off")] {
        let out = run(&data, &[cmd, "3"]);
        assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains(what), "{cmd}");
    }
    // A later run with the stored switches needs no flags; switching one is refused
    // with the command that does it.
    let more = tmp.path().join("more.txt");
    std::fs::write(&more, "A short note about the harbour bridge and its repairs.").unwrap();
    assert!(ingest(&data, &[], &[&more]).status.success());
    let out = ingest(&data, &["--neardup", "on"], &[&more]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--reanalyse --neardup on"), "{err}");

    // rebuild --reanalyse turns both on: the views list what a data directory that
    // always had them lists.
    let out = run(&data, &["rebuild", "--neardup", "on"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("add --reanalyse"));
    ok(&data, &["rebuild", "--reanalyse", "--neardup", "on", "--quotes", "on"]);
    let always = tmp.path().join("always");
    assert!(ingest(&always, &[], &[&examples(), &more]).status.success());
    assert_eq!(
        ok(&data, &["export"]),
        ok(&always, &["export"]).replace(&*always.to_string_lossy(), &data.to_string_lossy())
    );
    let v = json(&data, &["show", "3", "--json"]);
    assert!(v["quotations"].as_array().is_some_and(|q| !q.is_empty()), "{v}");
}

/// A near-duplicates-only data directory: no origin found, the table's buckets never
/// written, near-duplicates and quotations found as with origins on; every view says
/// origins are off; turning them on is refused but for `rebuild --reanalyse`, which
/// then gives what a data directory that always had them gives.
#[test]
fn origins_off_find_near_duplicates_alone_and_a_reanalysis_turns_them_on() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let words: Vec<String> = (0..400).map(|i| format!("w{}", (i * 7919) % 1009)).collect();
    let (a, b) = (tmp.path().join("a.txt"), tmp.path().join("b.txt"));
    std::fs::write(&a, words.join(" ")).unwrap();
    let mut edited = words.clone();
    edited[200] = "changed".into();
    std::fs::write(&b, edited.join(" ")).unwrap();
    let out = ingest(&data, &["--origins", "off"], &[&examples(), &a, &b]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let docs: Vec<Value> = ok(&data, &["export"]).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let last = docs.last().unwrap();
    assert_eq!(last["near_duplicates"][0]["id"], docs[docs.len() - 2]["id"], "{last}");
    for d in &docs {
        assert!(d["origins_off"] == Value::Bool(true) && d["dominant_origin"].is_null(), "{d}");
        assert_eq!((d["copied_blocks"].as_array().map(Vec::len), d["old_tokens"].as_u64()), (Some(0), Some(0)), "{d}");
    }
    let id = last["id"].to_string();
    let show = ok(&data, &["show", &id]);
    assert!(show.contains("origins: off in this data directory") && !show.contains("copied blocks"), "{show}");
    assert!(ok(&data, &["list"]).lines().last().unwrap().ends_with("origins off"));
    assert!(ok(&data, &["stats"]).contains("origins:     off"));
    let stats = json(&data, &["stats", "--json"]);
    assert_eq!((&stats["origins"], &stats["table"]["occupied"]), (&Value::Bool(false), &Value::from(0)), "{stats}");
    let prom = ok(&data, &["stats", "--prometheus"]);
    assert!(prom.contains("textorigin_feature_enabled{feature=\"origins\"} 0"), "{prom}");
    let out = ingest(&data, &["--origins", "on"], &[&a]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--reanalyse --origins on"), "{err}");

    ok(&data, &["rebuild", "--reanalyse", "--origins", "on"]);
    let always = tmp.path().join("always");
    assert!(ingest(&always, &[], &[&examples(), &a, &b]).status.success());
    assert_eq!(
        ok(&data, &["export"]),
        ok(&always, &["export"]).replace(&*always.to_string_lossy(), &data.to_string_lossy())
    );
}
