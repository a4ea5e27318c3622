//! What the tests against a real `nats-server` share: a server started from a
//! configuration of the test's, stopped when dropped. Each test file uses what it
//! needs of it.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `nats-server`, killed when dropped.
pub struct Server(pub Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A free port on loopback.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A JetStream server on a free port, storing under `dir/js`, with the configuration
/// lines `extra` besides (its authorization, its TLS), written to `dir/server.conf`.
pub fn jetstream(dir: &Path, extra: &str) -> (Server, u16) {
    let port = free_port();
    let conf = dir.join("server.conf");
    let js = dir.join("js");
    std::fs::write(&conf, format!("listen: 127.0.0.1:{port}\njetstream {{ store_dir: {js:?} }}\n{extra}\n")).unwrap();
    (start(&conf, port), port)
}

/// `nats-server -c conf`, once it takes connections on `port` (its `listen`).
pub fn start(conf: &Path, port: u16) -> Server {
    let child = Command::new("nats-server")
        .arg("-c")
        .arg(conf)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("nats-server (scripts/test.sh installs it)");
    let server = Server(child);
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(20), "nats-server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}
