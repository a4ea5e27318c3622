//! The daemon: bad spool files, log rotation, one daemon per directory, `check`.

use std::path::PathBuf;

use textorigin_store::storage::checkpoint;

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
    let files: Vec<PathBuf> =
        ["a-binary.txt", "b-empty.txt", "c-words.txt", "d-bad.json", "e-big.txt", "f-mixed.jsonl", "g-good.txt"]
            .iter()
            .map(|n| p(n))
            .collect();
    let daemon = Daemon::start(dir, &["--table-size", "32KiB", "--max-doc-bytes", "1000"], None);
    drop_into_spool(dir, &files);
    wait_drained(dir, 2);
    daemon.stop();
    let names: Vec<String> = json(dir, &["list", "--json"])
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect();
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
    let mut c = serve_command(dir, &["--table-size", "1MiB", "--checkpoint-docs", "1"]);
    c.arg("--log").arg(&log).env("TEXTORIGIN_LOG", "info");
    let daemon = Daemon::spawn(c);
    drop_into_spool(dir, &[examples().join("01-harbour-bridge.txt")]);
    wait_drained(dir, 1);
    // Rotate: move the log away, SIGHUP, and the daemon writes a new one.
    std::fs::rename(&log, dir.join("serve.log.1")).unwrap();
    daemon.signal("HUP");
    drop_into_spool(dir, &[examples().join("02-commuter-blog.txt")]);
    wait_drained(dir, 2);
    wait_until("the reopened log", 20, || {
        std::fs::read_to_string(&log).unwrap_or_default().contains("log file reopened")
    });
    assert!(std::fs::read_to_string(&log).unwrap().contains("log file reopened"));
    assert!(std::fs::read_to_string(dir.join("serve.log.1")).unwrap().contains("serving"));
    // query uses the newest checkpoint while the daemon runs, and changes nothing (the
    // checkpoint of the second document may follow its storage by a moment).
    wait_until("the checkpoint of both documents", 20, || {
        checkpoint::newest_valid(dir).is_some_and(|(_, m)| m.seq == 2)
    });
    let q = json(dir, &["query", examples().join("03-weekly-roundup.txt").to_str().unwrap(), "--json"]);
    let origins: Vec<&str> =
        q["copied_blocks"].as_array().unwrap().iter().map(|b| b["origin"]["name"].as_str().unwrap()).collect();
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
    assert!(
        String::from_utf8_lossy(&second.stderr).contains("in use by another textorigin process"),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
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
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("violation: checkpoint slot"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// CPU seconds (user + system) a process has used, from `/proc/PID/stat`.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let rest: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: u64 = rest[11].parse::<u64>().unwrap() + rest[12].parse::<u64>().unwrap(); // utime, stime
    let hz = std::process::Command::new("getconf").arg("CLK_TCK").output().unwrap();
    ticks as f64 / String::from_utf8_lossy(&hz.stdout).trim().parse::<f64>().unwrap()
}

/// Regression: listing `new/` woke the watcher (IN_OPEN) and the idle daemon spun at
/// half a core, rewriting its status file about 1,400 times a second.
#[test]
fn an_idle_daemon_uses_almost_no_cpu() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let daemon = Daemon::start(dir, &["--table-size", "1MiB"], None);
    drop_into_spool(dir, &[examples().join("01-harbour-bridge.txt")]);
    wait_drained(dir, 1);
    // Issue 53: an idle daemon checkpoints its new documents once, soon; from then on
    // it has nothing to do.
    wait_until("the idle checkpoint", 20, || {
        json(dir, &["stats", "--json"])["daemon"]["last_checkpoint_seq"].as_u64() == Some(1)
    });
    let status_written = || std::fs::metadata(dir.join("daemon.json")).and_then(|m| m.modified()).unwrap();
    let (cpu0, t0, status0) = (cpu_seconds(daemon.id()), std::time::Instant::now(), status_written());
    std::thread::sleep(std::time::Duration::from_secs(10));
    let cpu = cpu_seconds(daemon.id()) - cpu0;
    let share = cpu / t0.elapsed().as_secs_f64();
    assert!(share < 0.01, "the idle daemon used {:.1}% of a core", 100.0 * share);
    assert_eq!(status_written(), status0, "an idle daemon has nothing new to write");
    daemon.stop();
}

/// Regression: a bad file with a 250-byte name made the daemon exit (its `.reason`
/// name exceeded NAME_MAX) on every restart; a second failed file of the same name
/// replaced the first in `failed/`.
#[test]
fn long_and_repeated_names_of_failed_files_neither_stop_the_daemon_nor_lose_evidence() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let inputs = tempfile::tempdir().unwrap();
    let long = format!("{}.txt", "x".repeat(246)); // 250 bytes: the longest names are allowed
    std::fs::write(inputs.path().join(&long), "... !!!").unwrap();
    std::fs::write(inputs.path().join("b-good.txt"), "a good document that should be processed").unwrap();
    let daemon = Daemon::start(dir, &["--table-size", "32KiB"], None);
    drop_into_spool(dir, &[inputs.path().join(&long), inputs.path().join("b-good.txt")]);
    wait_drained(dir, 1);
    // The same name fails again with other content: both stay as evidence.
    std::fs::write(inputs.path().join(&long), "--- ???").unwrap();
    drop_into_spool(dir, &[inputs.path().join(&long)]);
    wait_until("the second failure", 30, || spool_count(dir, "new") == 0 && spool_count(dir, "failed") == 4);
    let names: Vec<String> = std::fs::read_dir(dir.join("spool/failed"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.iter().filter(|n| n.ends_with(".reason")).count(), 2, "{names:?}");
    assert!(names.iter().all(|n| n.len() <= 255));
    let contents: std::collections::BTreeSet<String> = names
        .iter()
        .filter(|n| !n.ends_with(".reason"))
        .map(|n| std::fs::read_to_string(dir.join("spool/failed").join(n)).unwrap())
        .collect();
    assert_eq!(contents, ["--- ???".to_string(), "... !!!".to_string()].into_iter().collect());
    assert_eq!(documents(dir), 1);
    daemon.stop();
}

/// Regression: symlinks and FIFOs in `new/` were skipped by the listing yet followed
/// when opened by path (a symlink renamed over a listed name had its target stored; a
/// FIFO blocked a parser so that SIGTERM no longer stopped the daemon), and stayed in
/// `new/` forever. Now every entry is opened once, without following links and without
/// blocking, and whatever is not a regular file goes to `failed/` with its reason.
#[test]
fn symlinks_fifos_and_directories_in_the_spool_go_to_failed_unread() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let daemon = Daemon::start(dir, &["--table-size", "32KiB"], None);
    let secret = dir.join("secret.txt");
    std::fs::write(&secret, "a secret document that must never be stored").unwrap();
    let tmp = dir.join("spool/tmp");
    std::os::unix::fs::symlink(&secret, tmp.join("a-link.txt")).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(tmp.join("b-fifo.txt")).status().unwrap().success());
    std::fs::create_dir(tmp.join("c-dir")).unwrap();
    for n in ["a-link.txt", "b-fifo.txt", "c-dir"] {
        std::fs::rename(tmp.join(n), dir.join("spool/new").join(n)).unwrap();
    }
    drop_into_spool(dir, &[examples().join("01-harbour-bridge.txt")]);
    wait_until("the spool to empty", 30, || spool_count(dir, "new") == 0);
    assert_eq!(documents(dir), 1, "only the regular file is stored");
    for n in ["a-link.txt", "b-fifo.txt", "c-dir"] {
        let reason = std::fs::read_to_string(dir.join("spool/failed").join(format!("{n}.reason"))).unwrap();
        assert!(reason.contains("not a regular file"), "{n}: {reason}");
    }
    daemon.stop(); // a FIFO never blocks SIGTERM
}

/// Regression: `check` called the older checkpoint slot a violation while a daemon was
/// rewriting it, or after a crash tore it: a normal state that recovery handles.
#[test]
fn check_accepts_an_older_slot_that_is_being_rewritten_or_torn() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let daemon = Daemon::start(dir, &["--table-size", "32KiB", "--checkpoint-docs", "1"], None);
    for f in ["01-harbour-bridge.txt", "02-commuter-blog.txt"] {
        let n = documents(dir) + 1;
        drop_into_spool(dir, &[examples().join(f)]);
        wait_drained(dir, n);
    }
    daemon.stop();
    let metas: Vec<_> = (0..2).map(|s| checkpoint::read_meta(dir, s).expect("both slots written")).collect();
    let older = if metas[0].generation < metas[1].generation { 0 } else { 1 };
    // Tear the older slot as a crash in the middle of its copy would.
    let path = checkpoint::slot_paths(dir, older).0;
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[5000] ^= 0xff;
    std::fs::write(&path, bytes).unwrap();
    let out = ok(dir, &["check"]);
    assert!(out.contains("being rewritten or torn") && out.ends_with("ok\n"), "{out}");
}

/// Regression: with SIGPIPE at its default, `serve` died at its first log line once
/// the reader of its standard error (a pipe to a logger) had gone away.
#[test]
fn serve_outlives_the_reader_of_its_log() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let mut c = serve_command(dir, &["--table-size", "32KiB"]);
    c.env("TEXTORIGIN_LOG", "info").stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    drop(child.stderr.take()); // the logger went away
    let daemon = Daemon::adopt(child);
    drop_into_spool(dir, &[examples().join("01-harbour-bridge.txt")]);
    wait_drained(dir, 1);
    daemon.stop();
}

/// `stats --prometheus` is the Prometheus text format: each metric declared by HELP and
/// TYPE before its samples, counters ending in `_total`, the daemon's status included.
#[test]
fn stats_prometheus_is_the_text_exposition_format() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let daemon = Daemon::small(dir, 100, None);
    let files: Vec<PathBuf> =
        ["01-harbour-bridge.txt", "02-commuter-blog.txt"].iter().map(|f| examples().join(f)).collect();
    drop_into_spool(dir, &files);
    wait_drained(dir, 2);
    daemon.status(dir);
    let out = ok(dir, &["stats", "--prometheus"]);
    let mut declared: Option<(String, String)> = None;
    let mut samples = std::collections::HashMap::new();
    for line in out.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            assert!(rest.split_once(' ').is_some_and(|(_, help)| !help.is_empty()), "{line}");
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            assert!(kind == "gauge" || kind == "counter", "{line}");
            assert_eq!(kind == "counter", name.ends_with("_total"), "{line}");
            declared = Some((name.to_string(), kind.to_string()));
        } else {
            let (series, value) = line.rsplit_once(' ').unwrap();
            let name = series.split('{').next().unwrap();
            assert_eq!(Some(name), declared.as_ref().map(|d| d.0.as_str()), "a sample before its TYPE: {line}");
            assert!(name.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{line}");
            samples.insert(series.to_string(), value.parse::<f64>().unwrap());
        }
    }
    assert_eq!(samples["textorigin_documents"], 2.0);
    assert_eq!(samples["textorigin_daemon_running"], 1.0);
    assert!(samples["textorigin_index_inserts_total{section=\"neardup_keys\"}"] > 0.0);
    // Issue 53: the store's size counts its write-ahead log, where a running daemon's
    // documents are until a flush (it said 0.0 MB where `du` said 37 MB).
    let on_disk: u64 = std::fs::read_dir(dir.join("db"))
        .unwrap()
        .filter_map(|e| e.unwrap().metadata().ok().filter(|m| m.is_file()).map(|m| m.len()))
        .sum();
    let gauge = samples["textorigin_store_disk_bytes"];
    assert!(gauge > 0.0 && (gauge - on_disk as f64).abs() < 0.1 * on_disk as f64, "{gauge} of {on_disk} bytes");
    assert!(samples["textorigin_store_wal_bytes"] > 0.0, "the daemon's documents are in its log");
    let both = run(dir, &["stats", "--prometheus", "--json"]);
    assert!(!both.status.success(), "--prometheus and --json exclude each other");
    daemon.stop();
    // Issue 53: after a restart the status says what the table had applied (it said 0).
    let daemon = Daemon::small(dir, 100, None);
    daemon.status(dir);
    assert_eq!(json(dir, &["stats", "--json"])["daemon"]["last_applied"], 2);
    daemon.stop();
}

/// Regression: two spool files whose names differ only in bytes that
/// are not UTF-8 (one lossy name) and have the same content were taken for one file
/// (their admission key hashed the lossy name): the second was dropped unstored. And a
/// spooled document's `source` named its path in `new/`, gone once admitted.
#[test]
fn non_utf8_names_stay_apart_and_sources_name_the_spool_file() {
    use std::os::unix::ffi::OsStrExt;
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let daemon = Daemon::small(dir, 100, None);
    let text = std::fs::read(examples().join("01-harbour-bridge.txt")).unwrap();
    for name in [&b"report-\xff.txt"[..], &b"report-\xfe.txt"[..]] {
        let name = std::ffi::OsStr::from_bytes(name);
        std::fs::write(dir.join("spool/tmp").join(name), &text).unwrap();
        std::fs::rename(dir.join("spool/tmp").join(name), dir.join("spool/new").join(name)).unwrap();
    }
    std::fs::copy(examples().join("02-commuter-blog.txt"), dir.join("spool/tmp/blog.txt")).unwrap();
    std::fs::rename(dir.join("spool/tmp/blog.txt"), dir.join("spool/new/blog.txt")).unwrap();
    wait_drained(dir, 3);
    daemon.stop();
    assert_eq!(documents(dir), 3, "both files stored");
    let blog = json(dir, &["show", "blog", "--json"]);
    assert_eq!(blog["source"], "spool:blog.txt");
}

/// Regression: a reading command beside a working daemon failed about once in a
/// hundred ("IO error: No such file or directory ... .log"): RocksDB's read-only open
/// lists the write-ahead logs and then reads them, and the daemon deletes an obsolete
/// one in between.
#[test]
fn reading_commands_beside_a_working_daemon_do_not_fail() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let _daemon = Daemon::small(dir, 5, None);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let feeder = {
        let (dir, stop) = (dir.to_path_buf(), stop.clone());
        std::thread::spawn(move || {
            let mut i = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let f = dir.join(format!("spool/tmp/in-{i}.jsonl"));
                std::fs::copy(fixture("mail-sample.jsonl"), &f).unwrap();
                std::fs::rename(&f, dir.join(format!("spool/new/in-{i}.jsonl"))).unwrap();
                i += 1;
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        })
    };
    wait_until("the first documents", 30, || documents(dir) > 0);
    let mut failures = Vec::new();
    for _ in 0..150 {
        let out = run(dir, &["stats", "--json"]);
        if !out.status.success() {
            failures.push(String::from_utf8_lossy(&out.stderr).into_owned());
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    feeder.join().unwrap();
    assert!(failures.is_empty(), "{} of 150 failed, e.g. {}", failures.len(), failures[0]);
}

/// Issue 21, item 8: a partly failed spool file, fixed and given again, stores only
/// the documents that were not stored; its reason names the failed line and says how
/// many were stored.
#[test]
fn a_partly_failed_file_given_again_stores_only_what_was_not_stored() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let inputs = tempfile::tempdir().unwrap();
    let file = inputs.path().join("mixed.jsonl");
    let line = |id: &str, words: &str| format!("{{\"id\":\"{id}\",\"text\":\"{words} with enough words to count\"}}\n");
    std::fs::write(&file, line("m1", "the first document") + "not json\n" + &line("m3", "the third document")).unwrap();
    let daemon = Daemon::start(dir, &["--table-size", "32KiB", "--rescan-secs", "1"], None);
    drop_into_spool(dir, std::slice::from_ref(&file));
    wait_until("the file in failed/", 30, || dir.join("spool/failed/mixed.jsonl.reason").exists());
    let reason = std::fs::read_to_string(dir.join("spool/failed/mixed.jsonl.reason")).unwrap();
    assert!(
        reason.contains("mixed.jsonl:2: malformed JSON") && reason.contains("2 of 3 document(s) were stored"),
        "{reason}"
    );
    assert_eq!(documents(dir), 2);
    std::fs::write(
        &file,
        line("m1", "the first document")
            + &line("m2", "the second document, fixed")
            + &line("m3", "the third document"),
    )
    .unwrap();
    drop_into_spool(dir, std::slice::from_ref(&file));
    wait_drained(dir, 3);
    std::thread::sleep(std::time::Duration::from_millis(300));
    daemon.stop();
    let names: Vec<String> = json(dir, &["list", "--json"])
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["m1", "m3", "m2"], "m1 and m3 not stored twice");
}

/// Issue 21, item 4: removing the spool does not stop the daemon: it stays up,
/// serving HTTP, recreates the spool and takes documents again.
#[test]
fn losing_the_spool_directory_does_not_stop_the_daemon() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let mut daemon = Daemon::start(dir, &["--table-size", "32KiB", "--rescan-secs", "1", "--http", &addr], None);
    drop_into_spool(dir, &[examples().join("01-harbour-bridge.txt")]);
    wait_drained(dir, 1);
    // As `rm -rf` does, at once (the daemon may recreate it while it is being removed).
    std::fs::rename(dir.join("spool"), dir.join("spool.gone")).unwrap();
    std::fs::remove_dir_all(dir.join("spool.gone")).unwrap();
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert!(daemon.is_running(), "the daemon stopped when its spool went away");
    wait_until("the spool recreated", 20, || dir.join("spool/new").is_dir() && dir.join("spool/tmp").is_dir());
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_ok(), "HTTP still served");
    drop_into_spool(dir, &[examples().join("02-commuter-blog.txt")]);
    wait_drained(dir, 2);
    daemon.stop();
}

/// Issue 21, item 13: after kill -9, `stats` does not say the daemon is running.
#[test]
fn stats_after_kill_9_says_the_daemon_is_not_running() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let daemon = Daemon::start(dir, &["--table-size", "32KiB"], None);
    drop_into_spool(dir, &[examples().join("01-harbour-bridge.txt")]);
    wait_drained(dir, 1);
    let pid = daemon.id();
    assert!(ok(dir, &["stats"]).contains(&format!("pid {pid}, running")));
    daemon.kill();
    let out = ok(dir, &["stats"]);
    assert!(out.contains(&format!("pid {pid}, not running: the process ended without stopping")), "{out}");
}

/// Issue 21, items 6 and 16: a file written straight into `new/` (not through `tmp/`)
/// and caught empty gets a second look; invalid UTF-8 in a spooled document is logged;
/// the default log level shows start, checkpoints and stop.
#[test]
fn a_file_caught_empty_gets_a_second_look_and_replaced_bytes_are_logged() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let log = dir.join("serve.log");
    let mut c = serve_command(dir, &["--table-size", "32KiB", "--rescan-secs", "1"]);
    c.arg("--log").arg(&log).env_remove("TEXTORIGIN_LOG").env_remove("RUST_LOG");
    let daemon = Daemon::spawn(c);
    wait_until("the daemon's status", 60, || dir.join("daemon.json").exists());
    let direct = dir.join("spool/new/direct.txt");
    let mut f = std::fs::File::create(&direct).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::io::Write::write_all(&mut f, b"written straight into new, slowly, with invalid \xff bytes inside").unwrap();
    drop(f);
    wait_drained(dir, 1);
    daemon.stop();
    assert_eq!(spool_count(dir, "failed"), 0, "not failed as empty");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("invalid UTF-8 sequence(s) replaced"), "{logged}");
    // Item 16: at the default level the daemon says when it starts, checkpoints and stops.
    for line in ["serving", "checkpoint", "stopping"] {
        assert!(logged.contains(line), "`{line}` in {logged}");
    }
}

/// Issue 25: a spool document whose date is none fails with the reason, its file in
/// failed/; `serve --bad-dates undated` stores it.
#[test]
fn a_spool_document_whose_date_is_none_fails_unless_undated_is_asked() {
    let inputs = tempfile::tempdir().unwrap();
    let f = inputs.path().join("dated.jsonl");
    let lines = [
        serde_json::json!({"id": "good", "text": "a document with a date that reads", "published_at": "2026-11-01"}),
        serde_json::json!({"id": "bad", "text": "a document with a date that does not", "published_at": "soon"}),
    ];
    std::fs::write(&f, lines.iter().map(|l| l.to_string() + "\n").collect::<String>()).unwrap();
    for (args, stored) in [(&[][..], 1), (&["--bad-dates", "undated"][..], 2)] {
        let data = tempfile::tempdir().unwrap();
        let dir = data.path();
        let daemon = Daemon::start(dir, &[&["--table-size", "32KiB"][..], args].concat(), None);
        drop_into_spool(dir, std::slice::from_ref(&f));
        wait_until("the file processed", 60, || spool_count(dir, "new") == 0 && documents(dir) >= stored);
        daemon.stop();
        assert_eq!(documents(dir), stored);
        if stored == 1 {
            let reason = std::fs::read_to_string(dir.join("spool/failed/dated.jsonl.reason")).unwrap();
            assert!(reason.contains("dated.jsonl:2: published_at \"soon\" is not a date"), "{reason}");
        }
    }
}

/// Issue 53, item 9: an idle daemon checkpoints its new documents within a bounded time
/// (it had none 20 s after its last one, with --checkpoint-secs at 30), and `check` and
/// `stats` beside it say that the digest they print is of that checkpoint's state.
#[test]
fn an_idle_daemon_checkpoints_soon_and_readers_say_which_state_they_show() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let args = ["--table-size", "32KiB", "--checkpoint-docs", "1000", "--checkpoint-secs", "1000"];
    let daemon = Daemon::start(dir, &args, None);
    let corpus = tempfile::tempdir().unwrap();
    drop_into_spool(dir, &generated_corpus(corpus.path(), 3));
    wait_drained(dir, 3);
    wait_until("a checkpoint of the three documents", 20, || {
        json(dir, &["stats", "--json"])["daemon"]["last_checkpoint_seq"].as_u64() == Some(3)
    });
    let check = ok(dir, &["check"]);
    assert!(check.contains("at its checkpoint of documents up to #3; newer documents are in its memory"), "{check}");
    let stats = ok(dir, &["stats"]);
    assert!(stats.contains("at its checkpoint of documents up to #3"), "{stats}");
    daemon.stop();
    let check = ok(dir, &["check"]);
    assert!(!check.contains("live writer"), "no writer now: the table file is the table:\n{check}");
}

/// Issue 53, item 14: a service keeps the daemon's own settings in its TOML file (table
/// `[daemon]`), a flag given winning; `ingest` reads the same file's algorithm options
/// and passes the table by; a key the table does not know is an error naming it.
#[test]
fn the_daemons_settings_come_from_the_config_file() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let port = free_port();
    let log = dir.join("serve.log");
    let config = dir.join("textorigin.toml");
    let toml = format!(
        "table_size = \"1MiB\"\n\n[daemon]\nhttp = \"127.0.0.1:{port}\"\nhttp_open = true\nlog = \"{}\"\nrescan_secs = 1\ncheckpoint_docs = 1\n",
        log.display()
    );
    std::fs::write(&config, toml).unwrap();
    let daemon = Daemon::start(dir, &["--config", config.to_str().unwrap()], None);
    wait_until("the HTTP listener of the file", 10, || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
    drop_into_spool(dir, &[examples().join("01-harbour-bridge.txt")]);
    wait_drained(dir, 1);
    wait_until("the first checkpoint (checkpoint_docs = 1)", 10, || {
        json(dir, &["stats", "--json"])["daemon"]["last_checkpoint_seq"].as_u64() == Some(1)
    });
    let (status, _, _) = raw(port, format!("GET /api/documents HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n").as_bytes());
    assert_eq!(status, 200);
    daemon.stop();
    assert!(std::fs::read_to_string(&log).unwrap().contains("serving"), "the log went to the file's `log`");
    assert!(json(dir, &["stats", "--json"])["table"]["bytes"] == 1 << 20, "the algorithm options of the same file");
    let other = tempfile::tempdir().unwrap();
    let out =
        ingest(other.path(), &["--config", config.to_str().unwrap()], &[&examples().join("02-commuter-blog.txt")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::write(&config, "[daemon]\nhttp_wokers = 8\n").unwrap();
    let out = run(dir, &["serve", "--config", config.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("http_wokers"), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Regression: on a full disk a restarted daemon could not write its
/// status file, and `stats` and `/metrics` read the previous daemon's, whose process was
/// gone: "killed or crashed", `daemon_running 0`, for a daemon that ran. A status file
/// left by another process (here one written by hand, as a full disk leaves it) beside
/// a daemon holding the data directory reads as running, its status not written.
#[test]
fn a_daemon_whose_status_could_not_be_written_is_still_called_running() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let daemon = Daemon::small(dir, 100, None);
    daemon.status(dir);
    let mut stale: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("daemon.json")).unwrap()).unwrap();
    stale["pid"] = 4_000_000.into(); // no such process: an earlier daemon's file
    stale["state"] = "stopped".into();
    std::fs::write(dir.join("daemon.json"), serde_json::to_vec(&stale).unwrap()).unwrap();
    let s = json(dir, &["stats", "--json"]);
    assert_eq!(s["daemon"]["pid"], daemon.id());
    assert!(
        s["daemon"]["state"].as_str().unwrap().starts_with("running, but its status file could not be written"),
        "{s}"
    );
    assert!(ok(dir, &["stats", "--prometheus"]).contains("textorigin_daemon_running 1"));
    daemon.stop();
}

/// `query` answers against every stored document, not only those of the newest
/// checkpoint (a document stored since came back "0 old"): a daemon
/// checkpoints after its first document, stores a second and is killed before the
/// second's checkpoint; `query` of the second's text finds it, and writes nothing.
#[test]
fn query_sees_the_documents_stored_since_the_newest_checkpoint() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let args = ["--table-size", "1MiB", "--checkpoint-docs", "1000", "--http", &addr, "--http-open"];
    let daemon = Daemon::start(dir, &args, None);
    drop_into_spool(dir, &[examples().join("01-harbour-bridge.txt")]);
    wait_drained(dir, 1);
    // The idle checkpoint (5 s after the last document) holds the first one.
    wait_until("the checkpoint of the first document", 30, || {
        checkpoint::newest_valid(dir).is_some_and(|(_, m)| m.seq == 1)
    });
    let second = examples().join("02-commuter-blog.txt");
    // The daemon's query view (opened with the first document) answers for the second.
    let (status, _) = crate::http::post(port, "/api/query", "text/plain", b"a first query opens the view");
    assert_eq!(status, 200);
    drop_into_spool(dir, std::slice::from_ref(&second));
    wait_drained(dir, 2);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let (status, q) = crate::http::post(port, "/api/query", "text/plain", &std::fs::read(&second).unwrap());
    assert_eq!(status, 200);
    assert!(q["copied_blocks"].as_array().unwrap().iter().any(|b| b["origin"]["name"] == "02-commuter-blog"), "{q}");
    daemon.kill();
    let (_, slot) = checkpoint::newest_valid(dir).unwrap();
    assert_eq!(slot.seq, 1, "killed before the second document's checkpoint");
    // The table file and the checkpoint slots: what a private copy must never write.
    let hashes = |dir: &std::path::Path| -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_type().unwrap().is_file())
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    xxhash_rust::xxh3::xxh3_64(&std::fs::read(e.path()).unwrap()),
                )
            })
            .collect();
        v.sort();
        v
    };
    let before = hashes(dir);
    assert!(before.len() >= 2, "{before:?}");
    let q = json(dir, &["query", second.to_str().unwrap(), "--json"]);
    let origins: Vec<&str> =
        q["copied_blocks"].as_array().unwrap().iter().map(|b| b["origin"]["name"].as_str().unwrap()).collect();
    assert!(origins.contains(&"02-commuter-blog"), "{q}");
    assert!(q["old_tokens"].as_u64().unwrap() * 10 >= q["tokens"].as_u64().unwrap() * 9, "{q}");
    assert_eq!(hashes(dir), before, "query writes nothing");
}

/// A daemon's table file holds what it flushed at its start (its header's published
/// counters say more), so a query beside it starts from a checkpoint: the daemon writes
/// one at its start when none holds its table (a new directory, or a batch run's), and
/// `query` replays the documents stored since.
#[test]
fn a_daemon_checkpoints_at_its_start_and_query_beside_it_sees_what_it_stored_since() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let (first, second) = (examples().join("01-harbour-bridge.txt"), examples().join("02-commuter-blog.txt"));
    ingest_small(dir, std::slice::from_ref(&first));
    assert!(checkpoint::newest_valid(dir).is_none(), "a batch run writes no checkpoint");
    let daemon = Daemon::start(dir, &["--checkpoint-docs", "1000"], None);
    wait_until("the checkpoint at the start", 60, || checkpoint::newest_valid(dir).is_some_and(|(_, m)| m.seq == 1));
    drop_into_spool(dir, std::slice::from_ref(&second));
    wait_drained(dir, 2);
    daemon.kill();
    assert_eq!(checkpoint::newest_valid(dir).map(|(_, m)| m.seq), Some(1), "killed before the idle checkpoint");
    let q = json(dir, &["query", second.to_str().unwrap(), "--json"]);
    assert!(q["copied_blocks"].as_array().unwrap().iter().any(|b| b["origin"]["name"] == "02-commuter-blog"), "{q}");
}

/// Issue 79, item 5: a daemon waiting on a full disk had let go of its store, and
/// `stats` and `/metrics` called it killed (`daemon_running 0`) while it lived and its
/// own status said degraded. A status whose process is a live `textorigin serve` keeps
/// its state, and degraded is a gauge of its own. (Here the live process is a daemon of
/// another data directory, which holds no lock of this one: what a daemon that let go of
/// its store looks like from outside.)
#[test]
fn a_live_daemon_that_let_go_of_its_store_is_not_called_killed() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let daemon = Daemon::small(a.path(), 100, None);
    let mut status = daemon.status(a.path());
    assert!(ingest(b.path(), &[], &[&examples()]).status.success());
    status["state"] = "degraded: 16 file(s) could not be processed; retrying".into();
    std::fs::write(b.path().join("daemon.json"), serde_json::to_vec(&status).unwrap()).unwrap();
    let s = json(b.path(), &["stats", "--json"]);
    assert!(s["daemon"]["state"].as_str().unwrap().starts_with("degraded: 16 file(s)"), "{s}");
    let metrics = ok(b.path(), &["stats", "--prometheus"]);
    for line in ["textorigin_daemon_running 1", "textorigin_daemon_degraded 1", "textorigin_daemon_files_kept 16"] {
        assert!(metrics.lines().any(|l| l == line), "{line} missing:\n{metrics}");
    }
    daemon.stop();
    // Its process gone, it is gone.
    let s = json(b.path(), &["stats", "--json"]);
    assert!(s["daemon"]["state"].as_str().unwrap().starts_with("not running"), "{s}");
}
