//! Attacks on the daemon's surfaces, each at test size: compression bombs in
//! the spool and over HTTP, a stop in the middle of a long file, submissions checked
//! before they are spooled, the HTTP server's names and its token for writes, waiting
//! requests that hold no handler.

use std::net::TcpStream;

use serde_json::Value;

use crate::util::*;

/// `lines` JSON lines of `words` words each, all alike, compressed with zstd: a few KB
/// that decode to megabytes.
fn bomb(dir: &std::path::Path, name: &str, lines: usize, words: usize) -> std::path::PathBuf {
    let text = ["alpha beta gamma delta epsilon zeta eta theta iota kappa"].repeat(words.div_ceil(10)).join(" ");
    let line = format!("{{\"text\":\"{text}\"}}\n");
    let packed =
        ruzstd::encoding::compress_to_vec(line.repeat(lines).as_bytes(), ruzstd::encoding::CompressionLevel::Fastest);
    let path = dir.join(name);
    std::fs::write(&path, packed).unwrap();
    path
}

/// The most memory the process has held (VmHWM), in MB.
fn peak_mb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb >> 10
}

/// Regression: the spool read a file's documents whole and prepared
/// them all before storing any: an 11 KB zstd file took the daemon to 3.9 GB. Here a
/// 5,000-line bomb of 11 KB documents (57 MB decoded) with the ratio limit off: the
/// daemon stays within its table and about 100 MB (ingest's bound), and a SIGTERM in
/// the middle of the file stops it after the document being applied (it used to finish
/// the file first); the restart continues after the stored documents, as it does after
/// a SIGKILL, and the end equals a batch run.
#[test]
fn a_bomb_in_the_spool_is_applied_as_it_is_read_and_a_stop_cuts_it_short() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let inputs = tempfile::tempdir().unwrap();
    let file = bomb(inputs.path(), "bomb.jsonl.zst", 5_000, 2_000);
    assert!(std::fs::metadata(&file).unwrap().len() < 570_000, "a hundredth of the 57 MB it decodes to");
    let args = ["--table-size", "1MiB", "--rescan-secs", "1", "--max-ratio", "0", "--checkpoint-docs", "1000"];
    let control = inputs.path().join("failpoints");
    std::fs::write(&control, "").unwrap();
    let daemon = Daemon::start(dir, &args, Some(&control));
    drop_into_spool(dir, std::slice::from_ref(&file));
    wait_until("the first 500 documents", 60, || documents(dir) >= 500);
    // From here each document's write takes 200 ms more, so that the stop comes before
    // the file's end however fast this machine applies the rest.
    std::fs::write(&control, "store.write=sleep\n").unwrap();
    // Issue 35: the status counts the documents of the file being applied.
    wait_until("the status at the 500th document", 10, || {
        json(dir, &["stats", "--json"])["daemon"]["last_applied"].as_u64().unwrap_or(0) >= 500
    });
    let peak = peak_mb(daemon.id());
    daemon.signal("TERM");
    let exit = daemon.wait_exit(10);
    assert!(exit.success(), "{exit:?}");
    let stopped_at = documents(dir);
    assert!(stopped_at < 5_000, "a stop cut the file short: {stopped_at} stored");
    assert_eq!(spool_count(dir, "new"), 1, "the file waits for the next start");
    // Killed (SIGKILL) further on in the same file, the next start continues again.
    let daemon = Daemon::start(dir, &args, None);
    wait_until("500 more documents", 60, || documents(dir) >= stopped_at + 500);
    let peak = peak.max(peak_mb(daemon.id()));
    daemon.kill();
    let daemon = Daemon::start(dir, &args, None);
    wait_drained(dir, 5_000);
    let peak = peak.max(peak_mb(daemon.id()));
    daemon.stop();
    assert_eq!(documents(dir), 5_000, "every document once");
    assert_eq!(spool_count(dir, "failed"), 0);
    assert!(peak < 200, "the daemon held {peak} MB for a file it could stream");
    // The same results as one uninterrupted batch run over the file.
    let batch = tempfile::tempdir().unwrap();
    assert!(ingest(batch.path(), &["--table-size", "1MiB", "--max-ratio", "0"], &[&file]).status.success());
    assert_eq!(export_without_sources(dir), export_without_sources(batch.path()));
}

/// Issue 32, item 1: with the default ratio limit, the bomb (50,000 short
/// lines in a few hundred bytes) stops decoding at the limit: its file goes to failed/
/// with the reason, the documents before that point stored.
#[test]
fn a_bomb_stops_at_the_ratio_with_the_reason() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let inputs = tempfile::tempdir().unwrap();
    let file = bomb(inputs.path(), "bomb.zst", 50_000, 10);
    let daemon = Daemon::start(dir, &["--table-size", "1MiB", "--rescan-secs", "1"], None);
    drop_into_spool(dir, std::slice::from_ref(&file));
    wait_until("the bomb in failed/", 120, || dir.join("spool/failed/bomb.zst.reason").exists());
    daemon.stop();
    let reason = std::fs::read_to_string(dir.join("spool/failed/bomb.zst.reason")).unwrap();
    assert!(reason.contains("a compression bomb?") && reason.contains("--max-ratio"), "{reason}");
    let stored = documents(dir);
    assert!(stored > 0 && stored < 50_000, "{stored}");
}

/// A daemon with `args` serving HTTP on a free port, once it answers.
fn serving(dir: &std::path::Path, args: &[&str]) -> (Daemon, u16) {
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut all = vec!["--table-size", "1MiB", "--rescan-secs", "1", "--http", &addr];
    all.extend_from_slice(args);
    let daemon = Daemon::start(dir, &all, None);
    let probe = format!("GET /api/documents HTTP/1.1\r\n{}\r\nContent-Length: 0\r\n\r\n", host(port));
    wait_until("the HTTP API", 30, || try_raw(port, probe.as_bytes()).is_some_and(|(status, ..)| status == 200));
    (daemon, port)
}

/// Sends a request with `head` lines (after the request line) and returns (status, body).
fn send(port: u16, request_line: &str, head: &[String], body: &[u8]) -> (u16, Value) {
    let mut req = format!("{request_line}\r\n");
    for h in head {
        req.push_str(h);
        req.push_str("\r\n");
    }
    req.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut req = req.into_bytes();
    req.extend_from_slice(body);
    let (status, _, body) = raw(port, &req);
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

fn host(port: u16) -> String {
    format!("Host: 127.0.0.1:{port}")
}

/// Issue 32, item 4: a page whose name was rebound to 127.0.0.1 gets nothing (its
/// requests carry its own `Host`, and a browser adds its `Origin`); submissions need
/// the token also on loopback unless `--http-open`; `--http-host` adds a name.
#[test]
fn rebinding_hosts_and_other_origins_are_refused_and_writes_need_the_token() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let (daemon, port) = serving(dir, &["--http-host", "textorigin.internal"]);
    let get = |head: &[String]| send(port, "GET /api/documents HTTP/1.1", head, b"").0;
    assert_eq!(get(&[host(port)]), 200);
    assert_eq!(get(&[format!("Host: localhost:{port}")]), 200);
    assert_eq!(get(&[format!("Host: textorigin.internal:{port}")]), 200);
    assert_eq!(get(&["Host: textorigin.internal".into()]), 421, "another port");
    assert_eq!(get(&[format!("Host: attacker.example:{port}")]), 421, "a rebound name");
    assert_eq!(get(&[]), 421, "no Host");
    assert_eq!(get(&[host(port), format!("Origin: http://attacker.example:{port}")]), 403);
    assert_eq!(get(&[host(port), format!("Origin: http://127.0.0.1:{port}")]), 200, "its own pages");
    let post = |head: &[String]| send(port, "POST /api/documents?name=x HTTP/1.1", head, b"a few words to store").0;
    assert_eq!(post(&[host(port)]), 403, "no token, no --http-open");
    assert_eq!(spool_count(dir, "new"), 0);
    daemon.stop();
    let (daemon, port) = serving(dir, &["--http-open"]);
    let (status, v) = send(port, "POST /api/documents?name=x HTTP/1.1", &[host(port)], b"a few words to store");
    assert_eq!(status, 202, "{v}");
    daemon.stop();
}

/// Issue 32, item 6: `wait=true` held one of the handlers for up to 30 s, so a few
/// waiting submissions on a busy daemon made every other request answer 503. With one
/// handler, three submissions wait behind a long spool file while reads are answered.
#[test]
fn waiting_submissions_hold_no_handler() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let inputs = tempfile::tempdir().unwrap();
    let (daemon, port) = serving(dir, &["--http-open", "--http-workers", "1", "--max-ratio", "0"]);
    drop_into_spool(dir, &[bomb(inputs.path(), "busy.jsonl.zst", 5_000, 2_000)]);
    wait_until("the daemon busy with the file", 30, || documents(dir) > 0);
    let waiting: Vec<_> = (0..3)
        .map(|i| {
            std::thread::spawn(move || {
                let line = format!("POST /api/documents?name=w{i}&wait=true HTTP/1.1");
                send(port, &line, &[host(port)], format!("waiting submission number {i} with words").as_bytes())
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(500));
    for _ in 0..5 {
        let started = std::time::Instant::now();
        let (status, v) = send(port, "GET /api/documents?limit=1 HTTP/1.1", &[host(port)], b"");
        assert_eq!(status, 200, "{v}");
        assert!(started.elapsed().as_secs() < 3, "a read waited {:?}", started.elapsed());
    }
    for w in waiting {
        let (status, v) = w.join().unwrap();
        assert!(status == 201 || status == 503, "{status} {v}");
    }
    daemon.stop();
}

/// Issue 32, items 7 and 1: a submission whose documents would fail is refused with
/// the reasons (bounded) and nothing of it is spooled, unless `partial=true`, which
/// stores the others and keeps at most 100 failure records; a compressed bomb is
/// refused at the ratio.
#[test]
fn submissions_are_checked_before_they_are_spooled() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let (daemon, port) = serving(dir, &["--http-open"]);
    let mut body = String::from("{\"id\":\"good\",\"text\":\"a good document among bad ones\"}\n");
    for i in 0..5_000 {
        body.push_str(&format!("{{\"id\":\"b{i}\",\"text\":\"a document dated x\",\"published_at\":\"x\"}}\n"));
    }
    let submit = |query: &str, body: &[u8]| {
        let line = format!("POST /api/documents?{query} HTTP/1.1");
        send(port, &line, &[host(port), "Content-Type: application/x-ndjson".into()], body)
    };
    let (status, v) = submit("name=dated", body.as_bytes());
    assert_eq!((status, &v["failed"], &v["documents"]), (422, &5_000.into(), &5_001.into()), "{v}");
    let reasons = v["reasons"].as_array().unwrap();
    assert_eq!(reasons.len(), 101, "100 reasons and a count of the rest");
    assert!(reasons[0].as_str().unwrap().contains("published_at \"x\" is not a date"), "{v}");
    assert_eq!(spool_count(dir, "new"), 0, "nothing spooled");
    let (status, v) = submit("name=empty", b"{\"text\": \"  \"}\n{\"text\": \"...\"}\n");
    assert_eq!((status, &v["failed"]), (422, &2.into()), "{v}");
    // Refused for what the daemon would refuse it for, first: no words before a bad
    // date; and a lone Thai vowel sign is no term under the data directory's rule
    // (the check once let it through for the daemon to fail).
    let (status, v) =
        submit("name=both", "{\"text\": \"...\", \"published_at\": \"x\"}\n{\"text\": \"\u{0e31}\"}\n".as_bytes());
    assert_eq!((status, &v["failed"]), (422, &2.into()), "{v}");
    for reason in v["reasons"].as_array().unwrap() {
        assert!(reason.as_str().unwrap().ends_with("no words (no letters or digits)"), "{v}");
    }
    // partial=true: the good document is stored, 100 failure records kept.
    let (status, v) = submit("name=dated&partial=true&wait=true", body.as_bytes());
    assert_eq!((status, &v["state"]), (422, &"failed".into()), "{v}");
    assert_eq!(v["documents"], serde_json::json!([1]), "{v}");
    let failed = json(dir, &["failed", "--json"]);
    assert_eq!(failed.as_array().unwrap().len(), 100, "failure records bounded per file");
    let reason = std::fs::read_to_string(dir.join("spool/failed/dated.jsonl.reason")).unwrap();
    assert!(reason.contains("4900 more document(s) failed"), "{reason}");
    // A bomb over HTTP: refused at the ratio, nothing spooled.
    let inputs = tempfile::tempdir().unwrap();
    let packed = std::fs::read(bomb(inputs.path(), "b.zst", 50_000, 10)).unwrap();
    let (status, v) = submit("name=bomb", &packed);
    assert_eq!(status, 422, "{v}");
    assert!(v.to_string().contains("a compression bomb?"), "{v}");
    assert_eq!(documents(dir), 1);
    daemon.stop();
}

/// Regression: a CSV cell a spreadsheet would run was written as it
/// was; a name with ESC reached the terminal raw in error messages, and U+202E (which
/// reorders what a terminal shows) passed the escaper of `list` and `show`.
#[test]
fn csv_cells_are_defused_and_terminals_get_no_controls() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let inputs = tempfile::tempdir().unwrap();
    let file = inputs.path().join("names.jsonl");
    let lines = [
        serde_json::json!({"id": "=HYPERLINK(\"http://x\")", "text": "the first document of a few words"}),
        serde_json::json!({"id": "evil\u{1b}[31mred\u{202e}txt.exe", "text": "the second document of other words"}),
        serde_json::json!({"id": "-5", "text": "a third document named by a negative number"}),
    ];
    std::fs::write(&file, lines.iter().map(|l| l.to_string() + "\n").collect::<String>()).unwrap();
    assert!(ingest(dir, &[], &[&file]).status.success());
    let csv = ok(dir, &["export", "--format", "csv"]);
    assert!(csv.contains("\"'=HYPERLINK(\"\"http://x\"\")\""), "{csv}");
    assert!(!csv.lines().any(|l| l.starts_with('=') || l.contains(",=")), "{csv}");
    assert!(csv.contains("\n-5,3,"), "a number stays a number: {csv}");
    for out in [ok(dir, &["list"]), ok(dir, &["show", "#2"])] {
        assert!(!out.contains('\u{1b}') && !out.contains('\u{202e}'), "{out:?}");
        assert!(out.contains("\\u{1b}") && out.contains("\\u{202e}"), "{out}");
    }
    let out = run(dir, &["show", "no\u{1b}]0;title\u{7}such\u{202e}"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && !err.contains('\u{1b}') && !err.contains('\u{202e}'), "{err:?}");
}

/// Regression: `check` said "ok" (exit 0) of a table marked in use
/// by a writer that had died; it passes while the writer lives.
#[test]
fn check_fails_on_a_table_left_in_use_by_a_dead_writer() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let daemon = Daemon::start(dir, &["--table-size", "32KiB", "--rescan-secs", "1"], None);
    drop_into_spool(dir, &[examples().join("01-harbour-bridge.txt")]);
    wait_drained(dir, 1);
    let out = run(dir, &["check"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && said.contains("in use by a live writer"), "{said}");
    daemon.kill();
    let out = run(dir, &["check"]);
    let (said, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success(), "{said}");
    assert!(err.contains("its writer died") && said.contains("a writer that died"), "{said}{err}");
    let report: Value = serde_json::from_slice(&run(dir, &["check", "--json"]).stdout).unwrap();
    assert_eq!((&report["table_in_use"], &report["writer_alive"]), (&true.into(), &false.into()));
    // The restart recovers, and then it passes.
    let daemon = Daemon::start(dir, &["--table-size", "32KiB", "--rescan-secs", "1"], None);
    daemon.status(dir);
    daemon.stop();
    assert!(run(dir, &["check"]).status.success());
}

/// Issue 32, item 4: a stored document's text POSTed with an earlier date took its
/// origins over (the original "revised by" the copy, and dropped by decisions as a
/// duplicate of it). HTTP's dates take nothing over by default: the copy stands in
/// arrival order, its date kept; `--take-over` with http lets them, and the history
/// says which way the take-over came.
#[test]
fn a_back_dated_post_takes_nothing_over_unless_http_is_trusted() {
    let inputs = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(examples().join("01-harbour-bridge.txt")).unwrap();
    let original = inputs.path().join("original.json");
    std::fs::write(
        &original,
        serde_json::json!({"id": "original", "text": text, "published_at": "2026-11-01"}).to_string(),
    )
    .unwrap();
    let copy = serde_json::json!({"id": "copy", "text": text, "published_at": "1999-12-31"}).to_string();
    for trusted in [false, true] {
        let data = tempfile::tempdir().unwrap();
        let dir = data.path();
        let mut args = vec!["--http-open"];
        if trusted {
            args.extend(["--take-over", "spool,http"]);
        }
        let (daemon, port) = serving(dir, &args);
        drop_into_spool(dir, std::slice::from_ref(&original));
        wait_drained(dir, 1);
        let line = "POST /api/documents?name=copy&wait=true HTTP/1.1";
        let (status, v) = send(port, line, &[host(port), "Content-Type: application/json".into()], copy.as_bytes());
        assert_eq!(status, 201, "{v}");
        daemon.stop();
        let marks = dir.join("spool/tmp/.textorigin-http/via-http");
        assert_eq!(std::fs::read_dir(marks).unwrap().count(), 0, "the mark goes with the file");
        let shown = json(dir, &["show", "--json", "copy"]);
        assert_eq!(shown["published_at"], "1999-12-31", "the date is kept");
        let history = ok(dir, &["show", "--history", "original"]);
        let decisions = ok(dir, &["export", "--format", "decisions"]);
        if trusted {
            assert!(history.contains("revised by #2 copy (came in by http)"), "{history}");
        } else {
            assert!(history.contains("never revised"), "{history}");
            assert!(shown["copied_blocks"].as_array().is_some_and(|b| !b.is_empty()), "{shown}");
            let copy: Vec<Value> = decisions
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .filter(|d: &Value| d["id"] == "copy")
                .collect();
            assert_eq!((&copy[0]["decision"], &copy[0]["of"]), (&"drop".into(), &"original".into()), "{decisions}");
        }
        // Replayed from the store, the table is the same (the way in is stored).
        let before = digest(dir);
        assert!(run(dir, &["rebuild"]).status.success());
        assert_eq!(digest(dir), before);
    }
}

/// Issue 32, item 3: one back-dated document sharing a sentence with every stored one
/// re-analysed them all before it was stored (30,000 documents: the apply thread
/// stalled 12.8 s, and a normal document sent meanwhile waited as long). Now it
/// revises within `--revision-budget` and queues the rest, which the daemon revises a
/// budget at a time while idle (here slowed by a failpoint, so that the queue can be
/// seen): the normal document behind it is stored while the queue still waits, and the
/// end equals a batch run with the same budget.
#[test]
#[cfg(feature = "failpoints")]
fn a_back_dating_storm_is_revised_within_the_budget_and_the_rest_while_idle() {
    let inputs = tempfile::tempdir().unwrap();
    let boilerplate = "Send this story to a friend by mail or share it on every social network you use today";
    let line = |id: &str, text: String, date: &str| {
        serde_json::json!({"id": id, "text": text, "published_at": date}).to_string() + "\n"
    };
    let stored: String = (0..200)
        .map(|i| {
            let own = |k: usize| (0..12).map(|j| format!("w{i}x{j}x{k}")).collect::<Vec<_>>().join(" ");
            line(&format!("d{i}"), format!("{}. {boilerplate}. {}.", own(0), own(1)), "2026-01-01")
        })
        .collect();
    let stored_file = inputs.path().join("a-stored.jsonl");
    std::fs::write(&stored_file, stored).unwrap();
    let storm = line("old", format!("{boilerplate}. An old pamphlet said so first."), "1900-01-01")
        + &line("normal", "a normal document of words nobody else has written down yet".into(), "2026-02-01");
    let storm_file = inputs.path().join("b-storm.jsonl");
    std::fs::write(&storm_file, storm).unwrap();
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let control = dir.join("failpoints");
    std::fs::write(&control, "revise.drain=sleep\n").unwrap();
    let budget = ["--table-size", "1MiB", "--revision-budget", "8"];
    let daemon = Daemon::start(dir, &[&budget[..], &["--rescan-secs", "1"]].concat(), Some(&control));
    drop_into_spool(dir, std::slice::from_ref(&stored_file));
    wait_drained(dir, 200);
    drop_into_spool(dir, std::slice::from_ref(&storm_file));
    wait_drained(dir, 202);
    let queue = |dir: &std::path::Path| json(dir, &["stats", "--json"])["revision_queue"].as_u64().unwrap();
    let waiting = queue(dir);
    assert!(waiting > 100, "the normal document was stored with {waiting} revisions still waiting");
    wait_until("the revision queue drained", 120, || queue(dir) == 0);
    daemon.stop();
    let history = ok(dir, &["show", "--history", "d150"]);
    assert!(history.contains("revised by #201 old"), "{history}");
    let batch = tempfile::tempdir().unwrap();
    let out = ingest(batch.path(), &budget, &[&stored_file, &storm_file]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(queue(batch.path()), 0, "a batch run ends with the queue revised");
    assert_eq!(export_without_sources(dir), export_without_sources(batch.path()));
}

/// Issue 53, item 5: queries and the spool's documents share one budget of text bytes
/// under analysis (`--memory-budget`): while a 60 KB document of a 64 KiB budget is
/// being applied (held 30 s in its analysis by a failpoint), a 10 KB query is answered
/// 503 at once and a 2 KB one is analysed.
#[test]
#[cfg(feature = "failpoints")]
fn queries_share_the_memory_budget_with_the_documents_being_applied() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let control = dir.join("failpoints");
    std::fs::write(&control, "").unwrap();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let args =
        ["--table-size", "1MiB", "--rescan-secs", "1", "--memory-budget", "64KiB", "--http", &addr, "--http-open"];
    let daemon = Daemon::start(dir, &args, Some(&control));
    wait_until("the HTTP listener", 10, || TcpStream::connect(("127.0.0.1", port)).is_ok());
    let words = |n: usize, p: &str| (0..n).map(|i| format!("{p}{}", i % 991)).collect::<Vec<_>>().join(" ");
    let inputs = tempfile::tempdir().unwrap();
    let big = inputs.path().join("big.txt");
    let text = words(12_000, "w");
    assert!((56_000..64_000).contains(&text.len()), "{}", text.len());
    std::fs::write(&big, &text).unwrap();
    std::fs::write(&control, "analyse.after-table=stall\n").unwrap();
    drop_into_spool(dir, &[big]);
    std::thread::sleep(std::time::Duration::from_millis(2000));
    let (status, v) = crate::http::post(port, "/api/query", "text/plain", words(2_000, "q").as_bytes());
    assert_eq!(status, 503, "{v}");
    assert!(v["error"].as_str().unwrap().contains("--memory-budget"), "{v}");
    let (status, v) = crate::http::post(port, "/api/query", "text/plain", words(300, "q").as_bytes());
    assert_eq!(status, 200, "{v}");
    daemon.signal("TERM");
    assert!(daemon.wait_exit(15).success());
}
