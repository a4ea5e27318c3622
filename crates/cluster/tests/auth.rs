//! The log's users against a real `nats-server` configured with the authorization
//! block `cluster credentials` writes: a client without credentials, or with a wrong
//! password, is refused at connect; each process's user may publish its own subjects
//! and is refused another process's and every stream deletion; the processes connect
//! and work with their own, and what their user may not do is said as refused.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::Path;

use std::time::{Duration, Instant};

use textorigin_cluster::auth::{self, Credentials};
use textorigin_cluster::log::{Access, Log, LogError};

mod common;
use common::Server;

/// A JetStream server on a free port whose users are those of `auth::write(dir, ..)`.
fn server(dir: &Path) -> (Server, u16) {
    common::jetstream(dir, &format!("include \"{}\"", auth::SERVER_FILE))
}

/// What the server answers a client that connects as `who` (none: no credentials) and
/// publishes to each of `subjects`: "+OK" for a publish taken, else the server's error.
fn publish_as(port: u16, who: Option<&Credentials>, subjects: &[&str]) -> Vec<String> {
    let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut out = stream.try_clone().unwrap();
    let mut lines = BufReader::new(stream);
    let mut line = String::new();
    lines.read_line(&mut line).unwrap(); // INFO
    assert!(line.starts_with("INFO"), "{line}");
    let auth = who.map_or(String::new(), |c| format!(",\"user\":\"{}\",\"pass\":\"{}\"", c.user, c.password));
    write!(out, "CONNECT {{\"verbose\":true,\"pedantic\":false{auth}}}\r\nPING\r\n").unwrap();
    let mut answers = Vec::new();
    let mut next = || {
        let mut l = String::new();
        lines.read_line(&mut l).unwrap();
        l.trim().to_string()
    };
    let connected = next();
    if connected != "+OK" {
        return vec![connected];
    }
    assert_eq!(next(), "PONG");
    for s in subjects {
        write!(out, "PUB {s} 1\r\nx\r\n").unwrap();
        answers.push(next());
    }
    answers
}

fn violation(answer: &str) -> bool {
    answer.contains("Permissions Violation")
}

#[test]
fn each_process_publishes_only_its_own_records_and_none_deletes_a_stream() {
    let tmp = tempfile::tempdir().unwrap();
    auth::write(tmp.path(), 2, 2).unwrap();
    let (_server, port) = server(tmp.path());
    let who = |user: &str| Credentials::read(&auth::file_of(tmp.path(), user)).unwrap();

    // No credentials, and a wrong password: refused at connect.
    let refused = publish_as(port, None, &["txo.docs"]);
    assert!(refused[0].contains("Authorization Violation"), "{refused:?}");
    let wrong = Credentials { password: "0".repeat(64), ..who("w0") };
    assert!(publish_as(port, Some(&wrong), &["txo.docs"])[0].contains("Authorization Violation"));

    let deletions = ["$JS.API.STREAM.DELETE.TXO_DOCS", "$JS.API.STREAM.UPDATE.TXO_DOCS"];
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            "submit",
            &["txo.docs", "txo.keys", "txo.items.1"],
            &["txo.hits.0", "txo.results.0", "txo.meta", "$JS.API.STREAM.PURGE.TXO_DOCS"],
        ),
        (
            "w0",
            &["txo.hits.0", "txo.lookups.0", "txo.positions.w0"],
            &[
                "txo.hits.1",
                "txo.results.0",
                "txo.feedback.0",
                "txo.positions.w1",
                "txo.positions.agg0",
                "txo.docs",
                "txo.keys",
            ],
        ),
        (
            "agg1",
            &["txo.feedback.1", "txo.results.1", "txo.positions.agg1"],
            &["txo.results.0", "txo.hits.0", "txo.lookups.1", "txo.positions.agg0", "txo.docs"],
        ),
        ("trim", &["$JS.API.STREAM.PURGE.TXO_DOCS"], &["txo.docs", "txo.positions.w0", "txo.meta"]),
        ("init", &["txo.meta", "$JS.API.STREAM.CREATE.TXO_X"], &["txo.docs", "$JS.API.STREAM.PURGE.TXO_DOCS"]),
    ];
    for (user, allowed, refused) in cases {
        let c = who(user);
        for (subject, answer) in allowed.iter().zip(publish_as(port, Some(&c), allowed)) {
            assert_eq!(answer, "+OK", "{user} publishing to {subject}");
        }
        let denied: Vec<&str> = refused.iter().chain(&deletions).copied().collect();
        for (subject, answer) in denied.iter().zip(publish_as(port, Some(&c), &denied)) {
            assert!(violation(&answer), "{user} publishing to {subject}: {answer}");
        }
    }
}

#[test]
fn processes_connect_as_their_users_and_refusals_are_said_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    auth::write(tmp.path(), 1, 1).unwrap();
    let (_server, port) = server(tmp.path());
    let url = format!("nats://127.0.0.1:{port}");
    let as_user = |user: &str| Access {
        credentials: Some(Credentials::read(&auth::file_of(tmp.path(), user)).unwrap()),
        ca: None,
    };

    // init makes the stream; the worker appends to its own and reads it back.
    let init = Log::connect_as(&url, 1, &as_user("init")).unwrap();
    init.create_stream("TXO_HITS_0", "txo.hits.0").unwrap();
    let w0 = Log::connect_as(&url, 1, &as_user("w0")).unwrap();
    let mut appends = w0.appends("TXO_HITS_0", "txo.hits.0");
    appends.push(1, b"answer 1".to_vec()).unwrap();
    appends.flush().unwrap();
    assert_eq!(w0.last_seq("TXO_HITS_0").unwrap(), 1);
    assert_eq!(w0.reader("TXO_HITS_0", 1).unwrap().read().unwrap(), (1, b"answer 1".to_vec()));

    // Without credentials, or with a wrong password: refused, said at once (not
    // retried as a log that does not answer yet).
    let started = Instant::now();
    let Err(e) = Log::connect(&url, 1) else { panic!("connected without credentials") };
    assert!(matches!(e, LogError::Refused { user: None, .. }), "{e}");
    assert!(e.to_string().contains("--nats-credentials"), "{e}");
    let mut wrong = as_user("w0");
    wrong.credentials.as_mut().unwrap().password = "0".repeat(64);
    let Err(e) = Log::connect_as(&url, 1, &wrong) else { panic!("connected with a wrong password") };
    assert!(e.to_string().contains("user \"w0\""), "{e}");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());

    // A worker may not make a stream: refused, said as such at the request's first
    // timeout, long before the two minutes a log that does not answer is waited for.
    let started = Instant::now();
    let e = w0.create_stream("TXO_X", "txo.x").unwrap_err();
    assert!(matches!(e, LogError::Denied { .. }), "{e}");
    let said = e.to_string().to_lowercase();
    assert!(said.contains("permissions violation") && said.contains("txo_x"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(60), "{:?}", started.elapsed());
}
