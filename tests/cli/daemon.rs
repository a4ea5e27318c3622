//! The daemon: bad spool files, log rotation, one daemon per directory, `check`.

use std::path::PathBuf;

use textorigin_io::storage::checkpoint;

use crate::util::*;

#[test]
fn bad_spool_files_go_to_failed_with_reasons_and_the_daemon_carries_on() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let inputs = tempfile::tempdir().unwrap();
    let p = |n: &str| inputs.path().join(n);
    std::fs::write(p("a-binary.txt"), b"\x7fELF\x02\x01\x01\0\0\0\0").unwrap();
    std::fs::write(p("b-empty.txt"), "  \n").unwrap();
    std::fs::write(p("c-words.txt"), "... !!! ---").unwrap();
    std::fs::write(p("d-bad.json"), "{\"text\": ").unwrap();
    std::fs::write(p("e-big.txt"), "word ".repeat(400)).unwrap();
    std::fs::write(p("f-mixed.jsonl"), "{\"id\":\"ok1\",\"text\":\"a fine document with words\"}\nnot json\n").unwrap();
    std::fs::write(p("g-good.txt"), "a good document that should be processed").unwrap();
    let files: Vec<PathBuf> = ["a-binary.txt", "b-empty.txt", "c-words.txt", "d-bad.json", "e-big.txt", "f-mixed.jsonl", "g-good.txt"]
        .iter()
        .map(|n| p(n))
        .collect();
    let daemon = Daemon::start(dir, &["--table-size", "32KiB", "--max-doc-bytes", "1000"], None);
    drop_into_spool(dir, &files);
    wait_drained(dir, 2);
    daemon.stop();
    let names: Vec<String> = json(dir, &["list", "--json"]).as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(names, ["ok1", "g-good"]);
    let failed = dir.join("spool/failed");
    for (file, reason) in [
        ("a-binary.txt", "binary file"),
        ("b-empty.txt", "empty document"),
        ("c-words.txt", "no words"),
        ("d-bad.json", "malformed JSON"),
        ("e-big.txt", "over the limit"),
        ("f-mixed.jsonl", "f-mixed.jsonl:2: malformed JSON"),
    ] {
        assert!(failed.join(file).exists(), "{file} not in failed/");
        let r = std::fs::read_to_string(failed.join(format!("{file}.reason"))).unwrap();
        assert!(r.contains(reason), "{file}: {r}");
    }
    let listed = json(dir, &["failed", "--json"]);
    assert_eq!(listed.as_array().unwrap().len(), 6);
    assert_eq!(spool_count(dir, "new"), 0);
}

#[test]
fn sighup_reopens_the_log_file_and_query_reads_the_newest_checkpoint() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let log = dir.join("serve.log");
    std::fs::create_dir_all(dir.join("spool/tmp")).unwrap();
    std::fs::create_dir_all(dir.join("spool/new")).unwrap();
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("textorigin"));
    c.args(["serve", "--table-size", "1MiB", "--checkpoint-docs", "1", "--data"])
        .arg(dir)
        .arg("--log")
        .arg(&log)
        .env("TEXTORIGIN_LOG", "info")
        .env_remove("TEXTORIGIN_DATA");
    let daemon = Daemon::spawn(c);
    drop_into_spool(dir, &[examples().join("01-harbour-bridge.txt")]);
    wait_drained(dir, 1);
    // Rotate: move the log away, SIGHUP, and the daemon writes a new one.
    std::fs::rename(&log, dir.join("serve.log.1")).unwrap();
    daemon.signal("HUP");
    drop_into_spool(dir, &[examples().join("02-commuter-blog.txt")]);
    wait_drained(dir, 2);
    wait_until("the reopened log", 20, || std::fs::read_to_string(&log).unwrap_or_default().contains("log file reopened"));
    assert!(std::fs::read_to_string(&log).unwrap().contains("log file reopened"));
    assert!(std::fs::read_to_string(dir.join("serve.log.1")).unwrap().contains("serving"));
    // query uses the newest checkpoint while the daemon runs, and changes nothing.
    let q = json(dir, &["query", examples().join("03-weekly-roundup.txt").to_str().unwrap(), "--json"]);
    let origins: Vec<&str> = q["copied_blocks"].as_array().unwrap().iter().map(|b| b["origin"]["name"].as_str().unwrap()).collect();
    assert!(origins.contains(&"01-harbour-bridge") && origins.contains(&"02-commuter-blog"), "{origins:?}");
    daemon.stop();
    assert_eq!(documents(dir), 2);
}

#[test]
fn one_daemon_per_data_directory_and_check_names_a_corrupt_slot() {
    let data = tempfile::tempdir().unwrap();
    let first = Daemon::small(data.path(), 7, None);
    drop_into_spool(data.path(), &[examples().join("01-harbour-bridge.txt")]);
    wait_drained(data.path(), 1);
    let second = bin().args(["serve", "--data"]).arg(data.path()).output().unwrap();
    assert!(!second.status.success());
    assert!(String::from_utf8_lossy(&second.stderr).contains("in use by another textorigin process"), "{}", String::from_utf8_lossy(&second.stderr));
    first.stop();
    assert!(run(data.path(), &["check"]).status.success());
    // Flip a byte of the newest checkpoint: check names it and fails.
    let (slot, _) = checkpoint::newest_valid(data.path()).unwrap();
    let path = checkpoint::slot_paths(data.path(), slot).0;
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[5000] ^= 0xff;
    std::fs::write(&path, bytes).unwrap();
    let out = run(data.path(), &["check"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("violation: checkpoint slot"), "{}", String::from_utf8_lossy(&out.stderr));
}

