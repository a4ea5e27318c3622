//! The daemon's HTTP inspector (`serve --http`): every route against the real daemon,
//! the JSON API equal to the CLI's, bad requests answered with JSON errors, the token.

use std::io::{Read, Write};
use std::net::TcpStream;

use serde_json::Value;

use crate::util::*;

fn get(port: u16, path: &str, token: Option<&str>) -> (u16, String, Vec<u8>) {
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    raw(port, format!("GET {path} HTTP/1.1\r\nHost: localhost:{port}\r\n{auth}\r\n").as_bytes())
}

fn get_json(port: u16, path: &str) -> (u16, Value) {
    let (status, head, body) = get(port, path, None);
    assert!(head.contains("Content-Type: application/json"), "{head}");
    (status, serde_json::from_slice(&body).unwrap())
}

/// A daemon with `args` serving HTTP on a free port, once it answers; submissions
/// without a token (`--http-open`).
fn serving(dir: &std::path::Path, args: &[&str]) -> (Daemon, u16) {
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut all = args.to_vec();
    all.extend(["--http", &addr, "--http-open"]);
    let daemon = Daemon::start(dir, &all, None);
    wait_until("the HTTP listener", 10, || TcpStream::connect(("127.0.0.1", port)).is_ok());
    (daemon, port)
}

/// A daemon serving HTTP on a free port, with the three examples applied (and
/// `--http-open` unless `extra` gives a token).
fn daemon_with_examples(dir: &std::path::Path, extra: &[&str]) -> (Daemon, u16) {
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut args = vec!["--table-size", "1MiB", "--rescan-secs", "1", "--http", &addr];
    args.extend_from_slice(extra);
    if !extra.contains(&"--http-token") {
        args.push("--http-open");
    }
    let daemon = Daemon::start(dir, &args, None);
    let files: Vec<_> = ["01-harbour-bridge.txt", "02-commuter-blog.txt", "03-weekly-roundup.txt"]
        .iter()
        .map(|f| examples().join(f))
        .collect();
    drop_into_spool(dir, &files);
    wait_drained(dir, 3);
    (daemon, port)
}

/// [`daemon_with_examples`] with the token `s3cret` (`--http-token`).
fn daemon_with_examples_and_token(dir: &std::path::Path) -> (Daemon, u16) {
    let token = dir.join("token");
    std::fs::write(&token, "s3cret\n").unwrap();
    daemon_with_examples(dir, &["--http-token", token.to_str().unwrap()])
}

#[test]
fn every_route_answers_and_the_api_equals_the_cli() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let (daemon, port) = daemon_with_examples(dir, &[]);
    // The read view follows the store within its refresh interval.
    wait_until("the three documents over HTTP", 10, || {
        get_json(port, "/api/documents").1["documents"].as_array().is_some_and(|d| d.len() == 3)
    });

    // /api/documents/{x} is exactly `show --json`, by id and by name.
    let cli: Value = json(dir, &["show", "3", "--json"]);
    assert_eq!(get_json(port, "/api/documents/3"), (200, cli.clone()));
    assert_eq!(get_json(port, "/api/documents/03-weekly-roundup").1, cli);

    // Paging and the name filter.
    let (_, page) = get_json(port, "/api/documents?limit=2");
    let ids: Vec<u64> = page["documents"].as_array().unwrap().iter().map(|d| d["id"].as_u64().unwrap()).collect();
    assert_eq!((ids, page["next_after"].as_u64()), (vec![1, 2], Some(2)));
    let (_, rest) = get_json(port, "/api/documents?after=2&limit=2");
    assert_eq!(rest["documents"][0]["id"], 3);
    assert!(rest["next_after"].is_null());
    let (_, named) = get_json(port, "/api/documents?name=02-");
    assert_eq!(named["documents"].as_array().unwrap().len(), 1);
    let list: Value = json(dir, &["list", "--json"]);
    assert_eq!(get_json(port, "/api/documents").1["documents"], list, "the rows of `list --json`");

    // /metrics is `stats --prometheus`'s format.
    let (status, head, body) = get(port, "/metrics", None);
    let metrics = String::from_utf8(body).unwrap();
    assert!(
        status == 200 && head.contains("text/plain; version=0.0.4") && metrics.contains("textorigin_documents 3"),
        "{metrics}"
    );
    for line in [
        "textorigin_document_apply_seconds_count 3",
        "textorigin_document_apply_seconds_bucket{le=\"+Inf\"} 3",
        "textorigin_stage_seconds_total{stage=\"align\"}",
        "textorigin_document_stage_seconds_count{stage=\"quotes\"} 3",
        "textorigin_document_stage_seconds_bucket{stage=\"table\",le=\"+Inf\"} 3",
        "textorigin_daemon_spool_backlog",
        "textorigin_daemon_files_failed_total",
        "textorigin_table_evictions_total",
    ] {
        assert!(metrics.contains(line), "{line} in {metrics}");
    }
    // The documents' text bytes: the files' bytes, less what parsing trims.
    let files: u64 = ["01-harbour-bridge.txt", "02-commuter-blog.txt", "03-weekly-roundup.txt"]
        .iter()
        .map(|f| std::fs::metadata(examples().join(f)).unwrap().len())
        .sum();
    let bytes: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("textorigin_text_bytes_total "))
        .expect("text bytes")
        .parse()
        .unwrap();
    assert!(bytes > files - 10 && bytes <= files, "{bytes} of {files}");

    // HTML: the list links each document; a document page links each copied block to
    // its origin's page; all text escaped; the report.
    let (status, head, body) = get(port, "/", None);
    let index = String::from_utf8(body).unwrap();
    assert!(status == 200 && head.contains("text/html") && index.contains("href=\"/documents/%233\""));
    let (_, _, body) = get(port, "/documents/%233", None);
    let page = String::from_utf8(body).unwrap();
    assert!(
        page.contains("href=\"/documents/%231#:~:text=") && page.contains("href=\"/documents/%232#:~:text="),
        "copied blocks link their origins at the passage"
    );
    assert!(!page.contains("#:~:text=\""), "no empty text fragment");
    assert!(
        page.contains("<ul id=\"quotations\">") && page.contains("#1 01-harbour-bridge</a> (score"),
        "quotations link their sources"
    );
    let (_, _, body) = get(port, "/documents/1", None);
    let original = String::from_utf8(body).unwrap();
    assert!(original.contains("The old harbour bridge reopened"), "the origin's page holds the passage");
    // Issue 35: and lists who copied from it, linking them.
    let copied_by = original.split("<ul id=\"copied-by\">").nth(1).expect("a copied-by list");
    assert!(copied_by.contains("href=\"/documents/%233\">#3 03-weekly-roundup</a>: "), "{copied_by}");
    let (status, _, body) = get(port, "/report", None);
    assert!(status == 200 && String::from_utf8(body).unwrap().contains("01-harbour-bridge"));
    daemon.stop();
}

#[test]
fn bad_requests_get_json_errors_and_the_token_is_required() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let (daemon, port) = daemon_with_examples_and_token(dir);
    let t = Some("s3cret");
    let status = |r: (u16, String, Vec<u8>)| {
        let v: Value =
            serde_json::from_slice(&r.2).unwrap_or_else(|_| panic!("a JSON error: {}", String::from_utf8_lossy(&r.2)));
        assert!(v["error"].is_string(), "{v}");
        r.0
    };
    assert_eq!(status(get(port, "/api/documents", None)), 401);
    assert_eq!(status(get(port, "/api/documents", Some("wrong"))), 401);
    assert_eq!(get(port, "/api/documents/1", t).0, 200);
    assert_eq!(status(get(port, "/api/documents/no-such-document", t)), 404);
    assert_eq!(status(get(port, "/no/such/route", t)), 404);
    assert_eq!(status(get(port, "/api/documents?limit=0", t)), 400);
    assert_eq!(status(get(port, "/api/documents?after=x", t)), 400);
    assert_eq!(status(raw(port, b"BROKEN\r\n\r\n")), 400);
    let host = format!("Host: 127.0.0.1:{port}\r\n");
    let request = |head: &str| format!("{head}\r\n{host}Authorization: Bearer s3cret\r\n");
    assert_eq!(status(raw(port, format!("{}\r\n", request("DELETE /api/documents/1 HTTP/1.1")).as_bytes())), 405);
    assert_eq!(
        status(raw(port, format!("{}Content-Length: 5\r\n\r\nhello", request("GET / HTTP/1.1")).as_bytes())),
        413
    );
    let huge = format!("GET / HTTP/1.1\r\nX-Pad: {}\r\n\r\n", "a".repeat(20_000));
    assert_eq!(status(raw(port, huge.as_bytes())), 431);
    // A client that sends half a request and stalls holds one worker, not the daemon:
    // documents keep arriving and other requests are answered.
    let mut stalled = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stalled.write_all(b"GET / HTTP/1.1\r\n").unwrap();
    drop_into_spool(dir, &[fixture("gcc-sample.jsonl")]);
    wait_drained(dir, 100);
    let last = documents(dir).to_string();
    wait_until("the newest document over HTTP", 10, || get(port, &format!("/api/documents/{last}"), t).0 == 200);
    drop(stalled);
    daemon.stop();
}

#[test]
fn a_public_address_needs_a_token() {
    let data = tempfile::tempdir().unwrap();
    let out = bin().args(["serve", "--http", "0.0.0.0:0", "--data"]).arg(data.path()).output().unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("needs --http-token"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub(crate) fn post(port: u16, path: &str, content_type: &str, body: &[u8]) -> (u16, Value) {
    let mut req = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost:{port}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(body);
    let (status, _, body) = raw(port, &req);
    (status, serde_json::from_slice(&body).unwrap_or_else(|_| panic!("JSON: {}", String::from_utf8_lossy(&body))))
}

/// Documents submitted over HTTP go through the spool (exactly once, durable before
/// the 202: a SIGKILL right after it loses nothing), `wait=true` answers with their
/// ids, and `POST /api/query` answers what `query --json` prints, storing nothing.
#[test]
fn submissions_go_through_the_spool_and_queries_store_nothing() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let args = [
        "--table-size",
        "1MiB",
        "--rescan-secs",
        "1",
        "--checkpoint-docs",
        "1",
        "--max-doc-bytes",
        "4KiB",
        "--http",
        &addr,
        "--http-open",
    ];
    let daemon = Daemon::start(dir, &args, None);
    wait_until("the HTTP listener", 10, || TcpStream::connect(("127.0.0.1", port)).is_ok());
    let text = |f: &str| std::fs::read(examples().join(f)).unwrap();
    let (status, v) =
        post(port, "/api/documents?name=01-harbour-bridge&wait=true", "text/plain", &text("01-harbour-bridge.txt"));
    assert_eq!((status, &v["state"], &v["documents"]), (201, &"stored".into(), &serde_json::json!([1])), "{v}");
    let html = format!("<html><body><p>{}</p></body></html>", String::from_utf8(text("02-commuter-blog.txt")).unwrap());
    let (status, v) = post(port, "/api/documents?name=02-commuter-blog&wait=true", "text/html", html.as_bytes());
    assert_eq!((status, &v["documents"]), (201, &serde_json::json!([2])), "{v}");
    assert_eq!(json(dir, &["show", "2", "--json"])["source"], "spool:02-commuter-blog.html");

    // The query equals the CLI's and stores nothing.
    wait_until("the checkpoint the query reads", 20, || {
        textorigin_store::storage::checkpoint::newest_valid(dir).is_some_and(|(_, m)| m.seq == 2)
    });
    let (status, q) = post(port, "/api/query", "text/plain", &text("03-weekly-roundup.txt"));
    let cli = json(dir, &["query", examples().join("03-weekly-roundup.txt").to_str().unwrap(), "--json"]);
    assert_eq!(status, 200);
    assert_eq!(q["copied_blocks"], cli["copied_blocks"]);
    assert_eq!(documents(dir), 2);
    let (status, v) =
        post(port, "/api/query", "application/json", br#"{"text": "just a few new words of no origin at all here"}"#);
    assert!(status == 200 && v["copied_blocks"].as_array().unwrap().is_empty(), "{v}");

    // Bad submissions.
    assert_eq!(post(port, "/api/documents?name=../x", "text/plain", b"abc").0, 400);
    assert_eq!(post(port, "/api/documents", "text/plain", b"abc").0, 400);
    assert_eq!(post(port, "/api/documents?name=big", "text/plain", &vec![b'a'; 5000]).0, 413);
    assert_eq!(post(port, "/api/query", "text/plain", b"").0, 400);

    // A 202 means durable: SIGKILL right after it, and the restart applies the file.
    let (status, v) = post(port, "/api/documents?name=03-weekly-roundup", "text/plain", &text("03-weekly-roundup.txt"));
    assert_eq!((status, &v["state"]), (202, &"pending".into()), "{v}");
    drop(daemon); // SIGKILL
    let daemon = Daemon::start(dir, &args, None);
    wait_drained(dir, 3);
    let key = v["admission"].as_str().unwrap().to_string();
    wait_until("the admission over HTTP", 10, || {
        get_json(port, &format!("/api/admissions/{key}")).1["state"] == "stored"
    });
    // Submitted to the daemon before the kill: the state, not the ids. Submitted to this
    // one: the ids too.
    assert!(get_json(port, &format!("/api/admissions/{key}")).1["documents"].is_null());
    let (_, v) = post(
        port,
        "/api/documents?name=again",
        "text/plain",
        b"a short note submitted once more to see its id come back",
    );
    let key = v["admission"].as_str().unwrap().to_string();
    wait_until("the second admission's ids", 10, || {
        get_json(port, &format!("/api/admissions/{key}")).1["documents"] == serde_json::json!([4])
    });
    assert_eq!(get_json(port, "/api/admissions/xyz").0, 400);
    assert_eq!(json(dir, &["show", "3", "--json"])["name"], "03-weekly-roundup");
    daemon.stop();
}

/// In headless Chromium: open `/`, follow a document's link, follow one of its copied
/// blocks' links to the origin's page, and find the copied passage there.
#[test]
fn a_browser_follows_a_copied_block_to_its_origin() {
    let data = tempfile::tempdir().unwrap();
    let (daemon, port) = daemon_with_examples(data.path(), &[]);
    let base = format!("http://127.0.0.1:{port}");
    // The link whose text is the document's name.
    let index = crate::html::chromium_dom_of(&format!("{base}/"));
    let at = index.find("\">03-weekly-roundup</a>").unwrap_or_else(|| panic!("a link to the roundup in {index}"));
    let doc = &index[index[..at].rfind("href=\"").unwrap() + 6..at];
    assert_eq!(doc, "/documents/%233");
    let page = crate::html::chromium_dom_of(&format!("{base}{doc}"));
    assert!(page.contains("class=\"copied\""), "{page}");
    let at = page
        .find("<a class=\"copied\" href=\"/documents/%231#:~:text=The%20old%20harbour%20bridge")
        .expect("a copied block linking its origin's page at the passage");
    let block = &page[at..];
    let passage = &block[block.find('>').unwrap() + 1..block.find("</a>").unwrap()];
    let href = &block[block.find("href=\"").unwrap() + 6..];
    let href = &href[..href.find('"').unwrap()].replace("&amp;", "&");
    assert!(href.starts_with("/documents/%231#:~:text="), "{href}");
    let origin = crate::html::chromium_dom_of(&format!("{base}{href}"));
    assert!(origin.contains(passage.trim()), "the origin's page holds the passage `{passage}`");
    daemon.stop();
}

/// Issue 21, item 1: slow clients lock nobody out. Connections that send their head a
/// byte at a time, or stall, or trickle bytes after their reply, cost the others
/// nothing; a head that is not complete within the deadline (10 s) is cut with 408; a
/// client without the token is refused before its body is read. Loopback only,
/// bounded in time.
#[test]
fn slow_clients_lock_nobody_out() {
    use std::time::{Duration, Instant};
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let (daemon, port) = daemon_with_examples_and_token(dir);
    let t = Some("s3cret");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // 80 connections sending their head a byte every 2 s, 20 of them without a token.
    let mut tricklers = Vec::new();
    for i in 0..80 {
        let stop = std::sync::Arc::clone(&stop);
        tricklers.push(std::thread::spawn(move || {
            let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else { return };
            let head = if i < 20 {
                "GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_string()
            } else {
                "GET / HTTP/1.1\r\nAuthorization: Bearer s3cret\r\n\r\n".to_string()
            };
            for b in head.bytes() {
                if stop.load(std::sync::atomic::Ordering::SeqCst) || s.write_all(&[b]).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_secs(2));
            }
        }));
    }
    // Four connections that trickle bytes after their reply (the drain).
    let mut drainers = Vec::new();
    for _ in 0..4 {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.write_all(
            format!("GET /api/documents HTTP/1.1\r\nHost: localhost:{port}\r\nAuthorization: Bearer s3cret\r\n\r\n")
                .as_bytes(),
        )
        .unwrap();
        drainers.push(s);
    }
    std::thread::sleep(Duration::from_millis(500));
    for s in &mut drainers {
        let _ = s.write_all(b"x");
    }
    // Normal clients, with the token, are answered at once, again and again.
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(6) {
        let asked = Instant::now();
        assert_eq!(get(port, "/api/documents/1", t).0, 200);
        assert!(asked.elapsed() < Duration::from_secs(2), "a normal request took {:?}", asked.elapsed());
        for s in &mut drainers {
            let _ = s.write_all(b"x");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    // The slow head is cut at its deadline.
    let mut slow = TcpStream::connect(("127.0.0.1", port)).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let opened = Instant::now();
    slow.write_all(b"GET / HT").unwrap();
    let mut reply = Vec::new();
    let _ = slow.read_to_end(&mut reply);
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
    assert!(opened.elapsed() < Duration::from_secs(13), "cut after {:?}", opened.elapsed());
    // More stalled connections than the server keeps open: the oldest are cut, and a
    // normal client still gets in.
    let stalled: Vec<TcpStream> = (0..300)
        .filter_map(|_| {
            let s = TcpStream::connect(("127.0.0.1", port)).ok()?;
            (&s).write_all(b"GET / HTTP/1.1\r\n").ok()?;
            Some(s)
        })
        .collect();
    assert!(stalled.len() > 256, "{} connections", stalled.len());
    let asked = Instant::now();
    assert_eq!(get(port, "/api/documents/1", t).0, 200);
    assert!(asked.elapsed() < Duration::from_secs(2), "{:?}", asked.elapsed());
    // Without the token, a body is refused before it is read, and its size not told.
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(
        format!("POST /api/documents?name=x HTTP/1.1\r\nHost: localhost:{port}\r\nContent-Length: 999999999\r\n\r\n")
            .as_bytes(),
    )
    .unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    assert!(
        reply.starts_with("HTTP/1.1 401")
            && reply.contains("WWW-Authenticate: Bearer")
            && !reply.contains("max-doc-bytes"),
        "{reply}"
    );
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    drop(stalled);
    drop(drainers);
    for t in tricklers {
        t.join().unwrap();
    }
    daemon.stop();
}

/// Issue 21, items 2 and 3: concurrent POSTs with the same name never lose an
/// acknowledged document (each body gets a file of its own), and a producer's
/// unfinished `tmp/NAME` is never touched.
#[test]
fn same_name_posts_keep_every_acknowledged_body_and_producers_files_alone() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let (daemon, port) = serving(dir, &["--table-size", "1MiB", "--rescan-secs", "1", "--max-doc-bytes", "4MiB"]);
    std::fs::create_dir_all(dir.join("spool/tmp")).unwrap();
    std::fs::write(dir.join("spool/tmp/same.txt"), "a producer's unfinished file").unwrap();
    for round in 0..4 {
        let bodies: Vec<String> = (0..2).map(|c| (0..30_000).map(|i| format!("r{round}c{c}w{i} ")).collect()).collect();
        let answers: Vec<(u16, Value, String)> = std::thread::scope(|s| {
            let handles: Vec<_> = bodies
                .iter()
                .map(|b| {
                    s.spawn(move || {
                        let (status, v) = post(port, "/api/documents?name=same&wait=true", "text/plain", b.as_bytes());
                        (status, v, b.clone())
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut stored = 0;
        for (status, v, body) in answers {
            match status {
                201 => {
                    stored += 1;
                    let id = v["documents"][0].as_u64().unwrap_or_else(|| panic!("{v}"));
                    let doc = json(dir, &["show", &format!("#{id}"), "--json"]);
                    let hash = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(body.as_bytes()));
                    assert_eq!(
                        doc["content_hash"],
                        hash.as_str(),
                        "round {round}: the acknowledged body is the stored one"
                    );
                }
                409 => {}
                other => panic!("round {round}: {other} {v}"),
            }
        }
        assert!(stored >= 1, "round {round}");
    }
    assert_eq!(std::fs::read_to_string(dir.join("spool/tmp/same.txt")).unwrap(), "a producer's unfinished file");
    daemon.stop();
}

/// Issue 21, items 5 and 6: `wait=true` with JSON lines answers the ids; a malformed
/// body is refused with its reason; `Expect: 100-continue`; control characters in
/// names; unknown admissions; conflicting lengths; HTTP/1.9 (the bearer scheme in any
/// case: `wire`'s unit tests).
#[test]
fn json_submissions_answer_their_ids_and_bad_ones_their_reasons() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let (daemon, port) = serving(dir, &["--table-size", "1MiB", "--rescan-secs", "1"]);
    let jsonl = b"{\"id\":\"j1\",\"text\":\"the first of two documents sent as json lines\"}\n{\"id\":\"j2\",\"text\":\"the second of two documents sent as json lines\"}\n";
    let (status, v) = post(port, "/api/documents?name=batch&wait=true", "application/x-ndjson", jsonl);
    assert_eq!((status, &v["state"], &v["documents"]), (201, &"stored".into(), &serde_json::json!([1, 2])), "{v}");
    let (status, v) = post(
        port,
        "/api/documents?name=one&wait=true",
        "application/json",
        br#"{"id":"j3","text":"a single json document with its words","title":"Three","tags":["a"]}"#,
    );
    assert_eq!((status, &v["documents"]), (201, &serde_json::json!([3])), "{v}");
    // Issue 24: a JSON document's further fields are its metadata, in the API too.
    assert_eq!(get_json(port, "/api/documents/j3").1["meta"], serde_json::json!({"tags": ["a"], "title": "Three"}));
    let (status, v) = post(port, "/api/documents?name=bad&wait=true", "application/json", br#"{"id":"j4","text": "#);
    assert!(status == 422 && v["reasons"][0].as_str().unwrap().contains("malformed JSON"), "{status} {v}");
    assert_eq!(
        post(port, "/api/documents?name=a%1Bb", "text/plain", b"some words here").0,
        400,
        "control characters in a name"
    );
    assert_eq!(get_json(port, &format!("/api/admissions/{}", "0".repeat(32))).0, 404, "never submitted");
    assert_eq!(raw(port, b"GET / HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 3\r\n\r\nabc").0, 400);
    assert_eq!(raw(port, b"GET / HTTP/1.9\r\n\r\n").0, 505);
    // Expect: 100-continue: the server says so before the body is sent.
    let body = b"a body sent only after the server asked for it";
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(format!("POST /api/query HTTP/1.1\r\nHost: localhost:{port}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nExpect: 100-continue\r\n\r\n", body.len()).as_bytes()).unwrap();
    let mut first = [0u8; 25];
    s.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 100 Continue\r\n\r\n");
    s.write_all(body).unwrap();
    let mut rest = String::new();
    s.read_to_string(&mut rest).unwrap();
    assert!(rest.starts_with("HTTP/1.1 200"), "{rest}");
    daemon.stop();
}

/// Issue 21, item 7: numeric names are not confused with ids. Links go by `#ID`; a
/// bare argument that is a name and another document's id is an error that says so.
#[test]
fn numeric_names_are_never_taken_for_ids() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let inputs = tempfile::tempdir().unwrap();
    let file = inputs.path().join("news.jsonl");
    let words = "the harbour bridge reopened to traffic on monday morning after months of repairs";
    std::fs::write(&file, format!("{{\"id\":\"3\",\"text\":\"{words}\"}}\n{{\"id\":\"1\",\"text\":\"an unrelated story about the tides\"}}\n{{\"id\":\"77\",\"text\":\"as reported, {words}\"}}\n")).unwrap();
    assert!(ingest(dir, &[], &[&file]).status.success());
    // #1 is named "3", #2 is named "1", #3 is named "77".
    let out = run(dir, &["show", "1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("ambiguous") && err.contains("#1") && err.contains("#2"), "{err}");
    assert!(ok(dir, &["show", "#1"]).starts_with("#1 3\n"));
    assert!(ok(dir, &["show", "77"]).starts_with("#3 77\n"), "a name that is no id");
    let (daemon, port) = serving(dir, &["--table-size", "4MiB"]);
    wait_until("the open store", 20, || get(port, "/api/documents", None).0 == 200);
    let (_, _, body) = get(port, "/documents/77", None);
    let page = String::from_utf8(body).unwrap();
    assert!(page.contains("href=\"/documents/%231#:~:text="), "the origin #1 (named \"3\") linked by id: {page}");
    let (_, _, body) = get(port, "/documents/%231", None);
    assert!(String::from_utf8(body).unwrap().contains("<h1>3</h1>"));
    assert_eq!(get_json(port, "/api/documents/1").0, 400, "ambiguous over HTTP too");
    daemon.stop();
}

#[test]
fn switched_off_features_are_off_in_the_api_the_pages_and_the_metrics() {
    let data = tempfile::tempdir().unwrap();
    let (daemon, port) = daemon_with_examples(data.path(), &["--neardup", "off", "--quotes", "off"]);
    let (status, v) = get_json(port, "/api/documents/3");
    assert_eq!(status, 200);
    assert!(v["near_duplicates"].is_null() && v["quotations"].is_null(), "{v}");
    let (status, _, page) = get(port, "/documents/%233", None);
    let page = String::from_utf8(page).unwrap();
    assert_eq!(status, 200);
    assert!(page.contains("<p id=\"near-duplicates\">Off in this data directory.</p>"), "{page}");
    assert!(page.contains("<p id=\"quotations\">Off in this data directory.</p>"), "{page}");
    let (_, _, metrics) = get(port, "/metrics", None);
    let metrics = String::from_utf8(metrics).unwrap();
    for line in [
        "textorigin_feature_enabled{feature=\"near_duplicates\"} 0",
        "textorigin_feature_enabled{feature=\"quotations\"} 0",
        "textorigin_feature_documents_total{feature=\"near_duplicates\"} 0",
        "textorigin_feature_documents_total{feature=\"quotations\"} 0",
    ] {
        assert!(metrics.contains(line), "{line} in {metrics}");
    }
    daemon.stop();
}

/// Issue 25: a spool fed the dated examples newest first ends with the batch's export,
/// and the API gives a revised document's history and its quotations oriented by date.
#[test]
fn a_spool_fed_out_of_order_ends_as_the_batch_and_the_api_gives_the_history() {
    let inputs = tempfile::tempdir().unwrap();
    let files: Vec<std::path::PathBuf> = [
        ("roundup", "03-weekly-roundup.txt", "2026-11-07"),
        ("blog", "02-commuter-blog.txt", "2026-11-02"),
        ("report", "01-harbour-bridge.txt", "2026-11-01"),
    ]
    .iter()
    .enumerate()
    .map(|(i, (name, file, date))| {
        let text = std::fs::read_to_string(examples().join(file)).unwrap();
        let path = inputs.path().join(format!("{i}-{name}.json"));
        std::fs::write(&path, serde_json::json!({"id": name, "text": text, "published_at": date}).to_string()).unwrap();
        path
    })
    .collect();
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let (daemon, port) = serving(dir, &["--table-size", "4MiB", "--rescan-secs", "1"]);
    for (n, f) in files.iter().enumerate() {
        drop_into_spool(dir, std::slice::from_ref(f));
        wait_drained(dir, n as u64 + 1);
    }
    wait_until("the revised roundup over HTTP", 10, || {
        get_json(port, "/api/documents/roundup").1["revisions"].as_array().is_some_and(|r| r.len() == 2)
    });
    let (_, roundup) = get_json(port, "/api/documents/roundup");
    assert_eq!(roundup["revisions"][0]["caused_by"]["name"], "blog", "{roundup}");
    assert_eq!(roundup["revisions"][1]["caused_by"]["name"], "report");
    assert_eq!(roundup["revisions"][0]["old_tokens_before"], 0);
    let (_, report) = get_json(port, "/api/documents/report");
    assert_eq!(report["old_tokens"], 0, "the original copies nothing: {report}");
    assert_eq!(report["quotations"], serde_json::json!([]), "and quotes nothing");
    daemon.stop();
    let batch = tempfile::tempdir().unwrap();
    let paths: Vec<&std::path::Path> = files.iter().map(|p| p.as_path()).collect();
    assert!(ingest(batch.path(), &[], &paths).status.success());
    assert_eq!(export_without_sources(dir), export_without_sources(batch.path()));
}

/// A daemon serving HTTP on `docs` (JSON lines) ingested with `flags` into a fresh data
/// directory, once its pages answer.
fn serving_ingested(docs: &str, flags: &[&str]) -> (tempfile::TempDir, Daemon, u16) {
    let data = tempfile::tempdir().unwrap();
    let inputs = tempfile::tempdir().unwrap();
    let corpus = inputs.path().join("c.jsonl");
    std::fs::write(&corpus, docs).unwrap();
    assert!(ingest(data.path(), flags, &[&corpus]).status.success());
    let (daemon, port) = serving(data.path(), &[]);
    wait_until("the data directory open", 20, || get(port, "/", None).0 == 200);
    (data, daemon, port)
}

/// The HTML page at `path` (answered with 200).
fn html_page(port: u16, path: &str) -> String {
    let (status, _, body) = get(port, path, None);
    assert_eq!(status, 200, "{path}");
    String::from_utf8(body).unwrap()
}

/// The report's first page once its summary (computed in the background) is on it.
fn report_with_summary(port: u16) -> String {
    let mut report = String::new();
    wait_until("the report's summary", 30, || {
        report = html_page(port, "/report");
        report.contains("id=\"sources\"") && report.contains("id=\"boilerplate\"")
    });
    report
}

/// Issue 35: the index is paged and searched by name, title and URL, and shows titles.
#[test]
fn the_index_is_paged_searched_and_titled() {
    let lines: String = (1..=230)
        .map(|i| {
            let text: String = (0..40).map(|w| format!("d{i}w{w} ")).collect();
            // A share bar every page ends with: boilerplate, not a story.
            let text = text + ". Share this on Facebook, Twitter and by email, or print it.";
            serde_json::json!({"id": format!("doc-{i}"), "title": format!("Story {i}"), "url": format!("https://example.org/p-{i}"), "text": text}).to_string() + "\n"
        })
        .collect();
    let (_data, daemon, port) = serving_ingested(&lines, &["--table-size", "1MiB"]);
    let page = |path: &str| html_page(port, path);
    let rows = |html: &str| html.matches("<tr><td>").count();
    let first = page("/");
    assert_eq!(rows(&first), 200, "a page of 200");
    assert!(
        first.contains("Story 230 <small>(doc-230)</small>") && !first.contains("(doc-30)"),
        "titles, newest first"
    );
    assert!(first.contains("href=\"/?before=31\""), "the next page");
    let second = page("/?before=31");
    assert_eq!(rows(&second), 30);
    assert!(second.contains("(doc-30)") && second.contains("(doc-1)") && !second.contains("id=\"older\""));
    let by_title = page("/?q=story+17");
    assert!(by_title.contains("(doc-17)") && by_title.contains("(doc-170)") && !by_title.contains("(doc-7)"));
    assert_eq!(rows(&by_title), 11, "17 and 170-179");
    assert_eq!(rows(&page("/?q=EXAMPLE.org%2Fp-42")), 1, "by URL, ignoring case");
    assert_eq!(rows(&page("/?name=doc-22")), 11, "by name prefix, as before: 22 and 220-229");
    // The report: its documents paged, its summary computed off the request path, the
    // share bar every document copies from the first shown as boilerplate.
    let report = page("/report");
    assert!(report.contains("page 1 of 1") && report.matches("<tr id=\"doc-").count() == 230, "the documents");
    let report = report_with_summary(port);
    let (sources, boilerplate) = report.split_once("id=\"boilerplate\"").unwrap();
    assert!(boilerplate.split("</table>").next().unwrap().contains("#1 Story 1<"), "{report}");
    assert!(!sources.contains("#1 Story 1<"), "{sources}");
    assert_eq!(get(port, "/report?page=2", None).0, 400);
    // Search by text: the documents that hold a passage, through the table.
    let words: Vec<String> = (2..26).map(|w| format!("d5w{w}")).collect();
    let own = page(&format!("/?text=D5W1,+{}", words.join("+")));
    assert!(own.contains("1 document(s) hold this passage") && rows(&own) == 1 && own.contains("(doc-5)"), "{own}");
    let bar = page("/?text=Share+this+on+Facebook%2C+Twitter+and+by+email%2C+or+print+it.");
    assert!(bar.contains("The first 200 documents that hold this passage") && bar.contains("(doc-1)"), "{bar}");
    assert!(page("/?text=d5w2+d5w3").contains("shorter than the shingles"));
    assert!(page("/?text=nothing+like+this+was+ever+written+in+any+stored+story").contains("No stored document"));
    drop(daemon);
}

/// Issue 35: the pages stay small on a larger collection: 1,500 documents, the index
/// and each page of the report under 200 KB, the report 500 documents a page.
#[test]
fn the_pages_stay_bounded_on_a_larger_collection() {
    let lines: String = (1..=1500)
        .map(|i| {
            // Every tenth copies half of the one before: a copy graph and sources.
            let own: String = (0..30).map(|w| format!("d{i}w{w} ")).collect();
            let copied: String =
                if i % 10 == 0 { (0..20).map(|w| format!("d{}w{w} ", i - 1)).collect() } else { String::new() };
            serde_json::json!({"id": format!("doc-{i}"), "title": format!("Story {i}"), "text": own + &copied})
                .to_string()
                + "\n"
        })
        .collect();
    let (_data, daemon, port) = serving_ingested(&lines, &["--table-size", "4MiB", "--quotes", "off"]);
    let page = |path: &str| html_page(port, path);
    assert!(page("/").len() < 200_000);
    let report = report_with_summary(port);
    for (at, rows) in [(1, 500), (2, 500), (3, 500)] {
        let p = if at == 1 { report.clone() } else { page(&format!("/report?page={at}")) };
        assert!(p.len() < 200_000, "page {at}: {} bytes", p.len());
        assert!(p.contains(&format!("page {at} of 3")), "page {at}");
        assert_eq!(p.matches("<tr id=\"doc-").count(), rows, "page {at}");
    }
    assert!(report.contains("1500 documents") && report.contains("#9 Story 9<"), "the sources, by title");
    let doc = page("/documents/%231500");
    assert!(doc.contains("<h1>Story 1500 <small>(doc-1500)</small></h1>"), "the document page's title");
    assert!(doc.contains("#1499 doc-1499 “Story 1499”"), "its origin by title in the legend");
    let copied = page("/documents/%231499");
    assert!(copied.contains("#1500 doc-1500</a> “Story 1500”: 20 tokens"), "who copied it, by title");
    drop(daemon);
}

/// Regression: one 64 MB query took the daemon to 4.2 GB, and five
/// at once held every handler (`/metrics` waited 6.9 s). Queries need the token (or
/// --http-open) as submissions do, their bodies are bounded by
/// --http-max-query-bytes, and a query that finds another running is answered 503 at
/// once instead of waiting in a handler.
#[test]
fn queries_need_the_token_are_bounded_and_never_hold_every_handler() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let daemon = Daemon::start(dir, &["--table-size", "1MiB", "--http", &addr], None);
    wait_until("the HTTP listener", 10, || TcpStream::connect(("127.0.0.1", port)).is_ok());
    let (status, v) = post(port, "/api/query", "text/plain", b"some words to analyse here");
    assert_eq!(status, 403, "{v}");
    assert!(v["error"].as_str().unwrap().contains("queries need a token"), "{v}");
    daemon.stop();

    let (daemon, port) =
        serving(dir, &["--table-size", "1MiB", "--http-max-query-bytes", "64KiB", "--http-workers", "2"]);
    let words = |n: usize| (0..n).map(|i| format!("w{}", i % 997)).collect::<Vec<_>>().join(" ");
    let (status, v) = post(port, "/api/query", "text/plain", words(20_000).as_bytes());
    assert_eq!(status, 413, "{v}");
    assert!(v["error"].as_str().unwrap().contains("--http-max-query-bytes"), "{v}");
    let body = words(9_000);
    assert!(body.len() < 64 << 10);
    // Six queries at once on two handlers: each is answered, 200 or 503, and /metrics
    // is served meanwhile.
    let queries: Vec<_> = (0..6)
        .map(|_| {
            let body = body.clone();
            std::thread::spawn(move || post(port, "/api/query", "text/plain", body.as_bytes()).0)
        })
        .collect();
    let (status, _, _) = get(port, "/metrics", None);
    assert_eq!(status, 200);
    for q in queries {
        let status = q.join().unwrap();
        assert!(status == 200 || status == 503, "{status}");
    }
    daemon.stop();
}
