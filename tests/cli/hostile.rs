//! Issue 79's attacks on the real binary, each at test size: request bodies announced
//! and never sent, guessed tokens, redirects after sign-in, the query form's limit, and
//! spool files that crash the reader or pass a format's own decoders.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::util::*;

/// A daemon serving HTTP on a free port with the token `s3cret`, once it answers.
fn with_token(dir: &std::path::Path) -> (Daemon, u16) {
    let token = dir.join("token");
    std::fs::write(&token, "s3cret\n").unwrap();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let args = ["--table-size", "1MiB", "--rescan-secs", "1", "--http", &addr, "--http-token", token.to_str().unwrap()];
    let daemon = Daemon::start(dir, &args, None);
    let r = format!("GET /api/documents HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer s3cret\r\n\r\n");
    wait_until("the HTTP API", 30, || try_raw(port, r.as_bytes()).is_some_and(|(status, ..)| status == 200));
    (daemon, port)
}

/// The process's resident memory now (VmRSS), in MB.
fn rss_mb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb >> 10
}

fn status_of(answer: &[u8]) -> u16 {
    String::from_utf8_lossy(answer).split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// Issue 79, item 10: a request's buffer was sized to its announced `Content-Length`
/// before any byte arrived, and waited ~17 minutes for it: 48 silent 64 MiB sign-ins
/// took the daemon to 2.5 GiB. Now 24 silent submissions announcing 60 MiB each take
/// no memory, are cut within seconds (408), a sign-in form over a few KiB is refused
/// at once (413), and so is a GET with a body.
#[test]
fn bodies_announced_and_never_sent_take_no_memory_and_are_cut_in_seconds() {
    let data = tempfile::tempdir().unwrap();
    let (daemon, port) = with_token(data.path());
    let before = rss_mb(daemon.id());
    let started = Instant::now();
    let silent: Vec<TcpStream> = (0..24)
        .map(|_| {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            let head = format!(
                "POST /api/documents?name=x HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer s3cret\r\nContent-Length: {}\r\n\r\nfirst bytes",
                60 << 20
            );
            s.write_all(head.as_bytes()).unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_secs(2));
    let during = rss_mb(daemon.id());
    assert!(during < before + 64, "24 silent bodies took the daemon from {before} to {during} MB");
    for mut s in silent {
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut answer = Vec::new();
        let _ = s.read_to_end(&mut answer);
        assert_eq!(status_of(&answer), 408, "{}", String::from_utf8_lossy(&answer));
    }
    assert!(started.elapsed() < Duration::from_secs(25), "cut after {:?}", started.elapsed());
    let big_form = format!("POST /login HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\n\r\n", 1 << 20);
    assert_eq!(raw(port, big_form.as_bytes()).0, 413);
    let get_body = format!(
        "GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer s3cret\r\nContent-Length: 100000\r\n\r\n"
    );
    assert_eq!(raw(port, get_body.as_bytes()).0, 413);
    daemon.stop();
}

/// Issue 79, items 14 and 15: wrong bearer tokens were never limited (1,000 at 72/s),
/// and after sign-in `next=/%09/evil.example/phish` was sent back as a `Location` that
/// browsers read as another host; a line feed in `next` reached the header.
#[test]
fn wrong_bearer_tokens_are_limited_and_sign_in_goes_back_only_to_local_paths() {
    let data = tempfile::tempdir().unwrap();
    let (daemon, port) = with_token(data.path());
    let get = |token: &str| {
        let r =
            format!("GET /api/documents HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\r\n");
        raw(port, r.as_bytes()).0
    };
    assert_eq!(get("s3cret"), 200);
    for _ in 0..10 {
        assert_eq!(get("guess"), 401);
    }
    assert_eq!(get("s3cret"), 429, "this client's tokens are refused for a while");
    daemon.stop();
    let (daemon, port) = with_token(data.path());
    for next in ["/%09/evil.example/phish", "/x%0ASet-Cookie:%20injected=1", "//evil.example/"] {
        let form = format!("token=s3cret&next={next}");
        let r = format!(
            "POST /login HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{form}",
            form.len()
        );
        let (status, head, _) = raw(port, r.as_bytes());
        assert_eq!(status, 303, "{head}");
        assert!(head.contains("\r\nLocation: /\r\n") && !head.contains("injected"), "{next}: {head}");
    }
    daemon.stop();
}

/// Issue 79, item 16: the index page's "Check a text" form took up to `--max-doc-bytes`
/// where `POST /api/query` is held to `--http-max-query-bytes`: one limit for both.
#[test]
fn the_query_form_is_held_to_the_query_limit() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let args = ["--table-size", "1MiB", "--http", &addr, "--http-open", "--http-max-query-bytes", "1000"];
    let daemon = Daemon::start(dir, &args, None);
    wait_until("the HTTP listener", 30, || TcpStream::connect(("127.0.0.1", port)).is_ok());
    for path in ["/query", "/api/query"] {
        let form = format!("text={}", "word ".repeat(400));
        let r = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{form}",
            form.len()
        );
        let (status, _, body) = raw(port, r.as_bytes());
        assert_eq!(status, 413, "{path}: {}", String::from_utf8_lossy(&body));
        assert!(String::from_utf8_lossy(&body).contains("--http-max-query-bytes"));
    }
    daemon.stop();
}

/// Issue 79, item 11: a spool file that killed the process while it was read (an 80 KB
/// Parquet footer overflowed the parser's stack) was read first again at every start,
/// and the files behind it were never stored. Here a parser that aborts on the third
/// document of a JSONL file: the daemon dies twice there, and the next start moves the
/// file to failed/ with the reason, its first two documents stored, and stores the file
/// behind it. A file killed once while being read (any `kill -9`) is read on.
#[test]
fn a_file_that_kills_the_reader_twice_is_left_out_with_the_reason() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let inputs = tempfile::tempdir().unwrap();
    let poison = inputs.path().join("a-poison.jsonl");
    let lines: Vec<String> = (0..5)
        .map(|i| format!("{{\"id\":\"p{i}\",\"text\":\"poison document number {i} of the crashing file\"}}"))
        .collect();
    std::fs::write(&poison, lines.join("\n") + "\n").unwrap();
    let fine = inputs.path().join("b-fine.txt");
    std::fs::write(&fine, "a fine document behind the crashing one, with words of its own").unwrap();
    let control = inputs.path().join("failpoints");
    std::fs::write(&control, "read:a-poison.jsonl:3=abort\n").unwrap();
    let args = ["--table-size", "1MiB", "--rescan-secs", "1"];
    for sub in ["spool/tmp", "spool/new"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    drop_into_spool(dir, &[poison, fine]);
    for start in 1..=2 {
        let exit = Daemon::start(dir, &args, Some(&control)).wait_exit(60);
        assert!(!exit.success(), "start {start}: the parser aborts the process: {exit:?}");
    }
    let daemon = Daemon::start(dir, &args, Some(&control));
    wait_until("the poison in failed/", 60, || dir.join("spool/failed/a-poison.jsonl.reason").exists());
    wait_drained(dir, 3);
    daemon.stop();
    let reason = std::fs::read_to_string(dir.join("spool/failed/a-poison.jsonl.reason")).unwrap();
    assert!(reason.contains("died 2 times in a row while reading its document 3"), "{reason}");
    let names: Vec<String> = json(dir, &["list", "--json"])
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["p0", "p1", "b-fine"]);
}

/// Issue 79, item 6: after the token file changed and SIGHUP, the old token still worked
/// and the new one was refused until a restart (which ended every browser session).
/// SIGHUP rereads it: the old token and its sessions end, the new one works; read again
/// unchanged, a session is kept.
#[test]
fn sighup_reloads_the_token() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let (daemon, port) = with_token(dir);
    let get = |auth: &str| {
        let r = format!("GET /api/documents HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}\r\n");
        raw(port, r.as_bytes()).0
    };
    let form = "token=s3cret&next=/";
    let login = format!(
        "POST /login HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{form}",
        form.len()
    );
    let (status, head, _) = raw(port, login.as_bytes());
    assert_eq!(status, 303, "{head}");
    let cookie = head.lines().find_map(|l| l.strip_prefix("Set-Cookie: ")).unwrap().split(';').next().unwrap();
    let session = format!("Cookie: {cookie}\r\n");
    assert_eq!(get(&session), 200);
    daemon.signal("HUP");
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(get(&session), 200, "the same token: the session is kept");
    std::fs::write(dir.join("token"), "n3w-token\n").unwrap();
    daemon.signal("HUP");
    // Asked with the old token until it is refused (a wrong token asked again and again
    // would close this client's sign-in).
    wait_until("the old token refused", 15, || get("Authorization: Bearer s3cret\r\n") == 401);
    assert_eq!(get("Authorization: Bearer n3w-token\r\n"), 200, "the new token works");
    assert_eq!(get(&session), 401, "the old token's session ended");
    daemon.stop();
}

/// Issue 79, item 7: `textorigin_daemon_files_failed_total` started again at 0 at every
/// restart; it is counted in the store.
#[test]
fn failed_files_are_counted_across_restarts() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let inputs = tempfile::tempdir().unwrap();
    let bad = inputs.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"text\": 5}\n").unwrap();
    let args = ["--table-size", "1MiB", "--rescan-secs", "1"];
    let failed_total = || {
        let metrics = ok(dir, &["stats", "--prometheus"]);
        metrics.lines().find_map(|l| l.strip_prefix("textorigin_daemon_files_failed_total ")).map(str::to_string)
    };
    let daemon = Daemon::start(dir, &args, None);
    drop_into_spool(dir, std::slice::from_ref(&bad));
    wait_until("the file in failed/", 30, || dir.join("spool/failed/bad.jsonl.reason").exists());
    daemon.stop();
    assert_eq!(failed_total().as_deref(), Some("1"));
    let daemon = Daemon::start(dir, &args, None);
    daemon.status(dir);
    assert_eq!(failed_total().as_deref(), Some("1"), "still 1 after a restart");
    daemon.stop();
}
