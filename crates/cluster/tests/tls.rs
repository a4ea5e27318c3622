//! The log over TLS against a real `nats-server` whose certificate a CA of the test's
//! own signed (made with the `openssl` command, as an operator makes one): a process
//! given that CA (`--nats-ca`) appends and reads; one given another CA, or none, is
//! refused at connect, at once, rather than retried as a log that does not answer (the
//! client reports a certificate it does not trust as an I/O error, which is otherwise
//! what a server not up yet gives).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use textorigin_cluster::log::{Access, Log, LogError};

mod common;
use common::Server;

fn openssl(dir: &Path, args: &[&str]) {
    let out =
        Command::new("openssl").args(args).current_dir(dir).output().expect("openssl (scripts/test.sh installs it)");
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A CA named `name` in `dir`: `name.pem` and `name.key`.
fn ca(dir: &Path, name: &str) {
    let (key, pem, subject) = (format!("{name}.key"), format!("{name}.pem"), format!("/CN=textorigin test {name}"));
    openssl(
        dir,
        &[
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-keyout", &key, "-out", &pem, "-subj",
            &subject,
        ],
    );
}

/// A server certificate for 127.0.0.1 signed by CA `ca`: `server.pem`, `server.key`.
fn server_certificate(dir: &Path, ca: &str) {
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ],
    );
    std::fs::write(dir.join("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n").unwrap();
    let (ca_pem, ca_key) = (format!("{ca}.pem"), format!("{ca}.key"));
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            &ca_pem,
            "-CAkey",
            &ca_key,
            "-CAcreateserial",
            "-days",
            "2",
            "-out",
            "server.pem",
            "-extfile",
            "san.ext",
        ],
    );
}

/// A JetStream server on a free port that speaks TLS only, with `server.pem`.
fn server(dir: &Path) -> (Server, u16) {
    let (cert, key) = (dir.join("server.pem"), dir.join("server.key"));
    common::jetstream(dir, &format!("tls {{ cert_file: {cert:?}, key_file: {key:?} }}"))
}

#[test]
fn a_process_trusting_the_servers_ca_works_over_tls_and_others_are_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    ca(dir, "ca");
    ca(dir, "other-ca");
    server_certificate(dir, "ca");
    let (_server, port) = server(dir);
    let url = format!("tls://127.0.0.1:{port}");

    let trusting = Access { credentials: None, ca: Some(dir.join("ca.pem")) };
    let log = Log::connect_as(&url, 1, &trusting).unwrap();
    log.create_stream("T", "t").unwrap();
    log.append("T", "t", 1, b"over tls").unwrap();
    assert_eq!(log.get("T", 1).unwrap(), Some(b"over tls".to_vec()));
    // The same URL written nats://: the server requires TLS, the client goes along.
    let log = Log::connect_as(&format!("nats://127.0.0.1:{port}"), 1, &trusting).unwrap();
    assert_eq!(log.get("T", 1).unwrap(), Some(b"over tls".to_vec()));

    // Another CA, or none (the system's roots), does not trust the server: refused at
    // connect, at once. Not a speed figure: the bound (60 s) is half of the two minutes
    // a log that does not answer is retried.
    for (what, access) in
        [("another CA", Access { credentials: None, ca: Some(dir.join("other-ca.pem")) }), ("no CA", Access::default())]
    {
        let started = Instant::now();
        let refused = Log::connect_as(&url, 1, &access).map(|_| ()).unwrap_err();
        assert!(matches!(refused, LogError::Nats { .. }), "{what}: {refused}");
        assert!(
            refused.to_string().contains("cannot connect") && refused.to_string().contains("certificate"),
            "{what}: {refused}"
        );
        assert!(started.elapsed() < Duration::from_secs(60), "{what}: refused after {:?}", started.elapsed());
    }
}
