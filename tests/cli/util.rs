//! What every integration test needs: the binary, a data directory, JSON views, one
//! corpus generator, a daemon guard that stops the process whatever happens, and
//! waiting with a deadline instead of bare sleeps.

use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::Value;

/// The `textorigin` binary, with no data directory from the environment.
pub fn bin() -> Command {
    let mut c = Command::cargo_bin("textorigin").unwrap();
    c.env_remove("TEXTORIGIN_DATA");
    c
}

/// The checkout the tests run in: cargo's `CARGO_MANIFEST_DIR` when it runs them, not
/// the one compiled in, which names the checkout that built the binary (a second clone
/// sharing the target directory reuses the build and would read the first's files).
pub fn root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
}

/// The three example documents.
pub fn examples() -> PathBuf {
    root().join("examples/docs")
}

/// A committed fixture.
pub fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures").join(name)
}

/// Copies a directory tree (a fixture data directory into a temporary one).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let target = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &target);
        } else {
            std::fs::copy(&p, &target).unwrap();
        }
    }
}

/// Runs a command on the data directory `dir`.
pub fn run(dir: &Path, args: &[&str]) -> Output {
    bin().args(args).arg("--data").arg(dir).output().unwrap()
}

/// Runs a command that must succeed; its standard output.
pub fn ok(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Runs a command that must succeed and print JSON.
pub fn json(dir: &Path, args: &[&str]) -> Value {
    serde_json::from_str(&ok(dir, args)).unwrap()
}

/// `ingest` with a 4 MiB table unless `extra` names a size.
pub fn ingest(dir: &Path, extra: &[&str], paths: &[&Path]) -> Output {
    let mut c = bin();
    c.arg("ingest").arg("--data").arg(dir).args(extra);
    if !extra.contains(&"--table-size") {
        c.args(["--table-size", "4MiB"]);
    }
    c.args(paths).output().unwrap()
}

/// `ingest` of `files` with the daemon tests' 32 KiB table, which must succeed.
pub fn ingest_small(dir: &Path, files: &[PathBuf]) {
    let out = bin().arg("ingest").arg("--data").arg(dir).args(["--table-size", "32KiB"]).args(files).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The name of the origin of the copied block containing `needle`.
pub fn origin_of(doc: &Value, text: &str, needle: &str) -> Option<String> {
    let at = text.find(needle).expect("needle in text");
    let end = at + needle.len();
    doc["copied_blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["start_byte"].as_u64().unwrap() as usize <= at && end <= b["end_byte"].as_u64().unwrap() as usize)
        .map(|b| b["origin"]["name"].as_str().unwrap().to_string())
}

/// Waits until `done()` holds; panics with `what` after `secs` seconds.
pub fn wait_until(what: &str, secs: u64, mut done: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !done() {
        assert!(t0.elapsed() < Duration::from_secs(secs), "timed out after {secs} s waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `n` documents with known copying: each takes runs of words from earlier ones
/// (the one corpus generator of the integration tests).
pub fn generated_corpus(dir: &Path, n: usize) -> Vec<PathBuf> {
    let mut g = textorigin_core::testdata::XorShift::new(0x2545_f491_4f6c_dd1d);
    let mut next = move |m: u64| g.below(m);
    let mut docs: Vec<Vec<String>> = Vec::new();
    let mut paths = Vec::new();
    for i in 0..n {
        let mut w = Vec::new();
        for _ in 0..(2 + next(3)) {
            if !docs.is_empty() && next(3) > 0 {
                let src = &docs[next(docs.len() as u64) as usize];
                let a = next(src.len() as u64) as usize;
                w.extend_from_slice(&src[a..(a + 12 + next(30) as usize).min(src.len())]);
            } else {
                w.extend((0..20 + next(40)).map(|_| format!("w{}", next(4000))));
            }
        }
        let text = w.chunks(12).map(|c| c.join(" ") + ".").collect::<Vec<_>>().join(" ");
        let p = dir.join(format!("{i:04}.txt"));
        std::fs::write(&p, &text).unwrap();
        paths.push(p);
        docs.push(w);
    }
    paths
}

/// [`generated_corpus`]'s documents as JSON files with publication dates
/// that do not follow their order: a seeded shuffle, so that many a document arrives
/// after the ones it was published before and takes their entries over.
pub fn generated_corpus_dated(dir: &Path, n: usize) -> Vec<PathBuf> {
    let texts = generated_corpus(dir, n);
    let mut rank: Vec<u64> = (0..n as u64).collect();
    textorigin_core::testdata::XorShift::new(0x000d_a7e5).shuffle(&mut rank);
    texts
        .iter()
        .zip(rank)
        .map(|(p, r)| {
            let doc = serde_json::json!({
                "id": p.file_stem().unwrap().to_str().unwrap(),
                "text": std::fs::read_to_string(p).unwrap(),
                "published_at": 1_600_000_000 + 3600 * r,
            });
            let json = p.with_extension("json");
            std::fs::write(&json, doc.to_string()).unwrap();
            std::fs::remove_file(p).unwrap();
            json
        })
        .collect()
}

/// `n` generated documents and the uncrashed run the crash tests compare with: their
/// batch ingest with the daemon tests' 32 KiB table. The documents are dated out of
/// order ([`generated_corpus_dated`]), so that a crash can also fall among take-overs
/// and revisions. (corpus directory, files, reference data directory.)
pub fn with_reference(n: usize) -> (tempfile::TempDir, Vec<PathBuf>, tempfile::TempDir) {
    let corpus = tempfile::tempdir().unwrap();
    let files = generated_corpus_dated(corpus.path(), n);
    let reference = tempfile::tempdir().unwrap();
    ingest_small(reference.path(), &files);
    (corpus, files, reference)
}

/// The export without where each document came from: its `source` and the way in of
/// what revised it (batch and spool read different paths, different ways).
pub fn export_without_sources(dir: &Path) -> Vec<Value> {
    without_sources(&ok(dir, &["export"]))
}

/// Export lines as JSON values without `source` and the revisions' `caused_via`.
pub fn without_sources(export: &str) -> Vec<Value> {
    export
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("source");
            for r in v.get_mut("revisions").and_then(Value::as_array_mut).into_iter().flatten() {
                r.as_object_mut().unwrap().remove("caused_via");
            }
            v
        })
        .collect()
}

/// Documents stored in `dir` (0 when it cannot be read yet).
pub fn documents(dir: &Path) -> u64 {
    let out = run(dir, &["stats", "--json"]);
    if !out.status.success() {
        return 0;
    }
    serde_json::from_slice::<Value>(&out.stdout).map_or(0, |v| v["documents"].as_u64().unwrap_or(0))
}

/// The table and derived-index digests `stats` reports.
pub fn digest(dir: &Path) -> Value {
    let s = json(dir, &["stats", "--json"]);
    serde_json::json!([s["table_digest"], s["index_digest"]])
}

/// Files in a spool subdirectory.
pub fn spool_count(dir: &Path, sub: &str) -> usize {
    std::fs::read_dir(dir.join("spool").join(sub)).unwrap().count()
}

/// Copies `files` into the spool the way a producer must: into tmp/, then a rename.
pub fn drop_into_spool(dir: &Path, files: &[PathBuf]) {
    for f in files {
        let name = f.file_name().unwrap();
        let tmp = dir.join("spool/tmp").join(name);
        std::fs::copy(f, &tmp).unwrap();
        std::fs::rename(&tmp, dir.join("spool/new").join(name)).unwrap();
    }
}

/// Sends `request` as it is to the HTTP server on loopback `port` and returns (status,
/// headers, body).
pub fn raw(port: u16, request: &[u8]) -> (u16, String, Vec<u8>) {
    try_raw(port, request).expect("an HTTP response")
}

/// [`raw`], None when no HTTP answer comes: what waiting for a server to listen asks
/// (a port probed while another test's [`free_port`] held it for a moment answered
/// the connection and refused the request).
pub fn try_raw(port: u16, request: &[u8]) -> Option<(u16, String, Vec<u8>)> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.write_all(request).ok()?;
    let mut out = Vec::new();
    s.read_to_end(&mut out).ok()?;
    let split = out.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8(out[..split].to_vec()).ok()?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, head, out[split + 4..].to_vec()))
}

/// A free loopback port (bound, then released for the daemon).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Waits until `n` documents are stored and the spool's new/ is empty.
pub fn wait_drained(dir: &Path, n: u64) {
    wait_until(&format!("{n} documents and an empty spool"), 120, || {
        documents(dir) >= n && spool_count(dir, "new") == 0
    });
}

/// `textorigin serve ARGS --data DIR` with its spool's `tmp/` and `new/` made, no data
/// directory from the environment and the log to null: a test adds what it needs
/// (more flags, environment, a log it reads) and starts it with [`Daemon::spawn`].
pub fn serve_command(dir: &Path, args: &[&str]) -> std::process::Command {
    std::fs::create_dir_all(dir.join("spool/tmp")).unwrap();
    std::fs::create_dir_all(dir.join("spool/new")).unwrap();
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("textorigin"));
    c.arg("serve").args(args).arg("--data").arg(dir).env_remove("TEXTORIGIN_DATA").stderr(Stdio::null());
    c
}

/// A running `textorigin serve`: killed (SIGKILL) when dropped, so a failing assertion
/// never leaves a daemon behind.
pub struct Daemon {
    child: Option<Child>,
}

impl Daemon {
    /// Starts `serve --data dir` with `args`, a failpoint control file if given, and the
    /// log to `stderr` (null unless a test reads it).
    pub fn start(dir: &Path, args: &[&str], failpoints: Option<&Path>) -> Daemon {
        let mut c = serve_command(dir, args);
        if let Some(control) = failpoints {
            c.env("TEXTORIGIN_FAILPOINTS", control);
        }
        Daemon { child: Some(c.spawn().unwrap()) }
    }

    /// The daemon of the crash tests: a 32 KiB table, checkpoints every `every` documents.
    pub fn small(dir: &Path, every: u64, failpoints: Option<&Path>) -> Daemon {
        let every = every.to_string();
        Daemon::start(dir, &["--table-size", "32KiB", "--checkpoint-docs", &every, "--rescan-secs", "1"], failpoints)
    }

    /// Starts a daemon from a prepared command (for extra environment or log options).
    pub fn spawn(mut c: std::process::Command) -> Daemon {
        Daemon { child: Some(c.spawn().unwrap()) }
    }

    /// Guards a daemon process started by the test itself.
    pub fn adopt(child: Child) -> Daemon {
        Daemon { child: Some(child) }
    }

    /// The process id.
    pub fn id(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// Whether the process still runs (not exited).
    pub fn is_running(&mut self) -> bool {
        self.child.as_mut().expect("started").try_wait().unwrap().is_none()
    }

    /// Sends a signal through kill(1).
    pub fn signal(&self, sig: &str) {
        assert!(std::process::Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(self.id().to_string())
            .status()
            .unwrap()
            .success());
    }

    /// SIGTERM, and the daemon must exit with status 0.
    pub fn stop(mut self) {
        self.signal("TERM");
        let exit = self.child.take().unwrap().wait().unwrap();
        assert!(exit.success(), "SIGTERM must end the daemon with status 0: {exit:?}");
    }

    /// SIGKILL, waited for.
    pub fn kill(mut self) {
        let mut child = self.child.take().unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
    }

    /// Waits (up to `secs` seconds) for the daemon to exit by itself.
    pub fn wait_exit(mut self, secs: u64) -> ExitStatus {
        let child = self.child.as_mut().unwrap();
        let mut status = None;
        wait_until("the daemon to exit", secs, || {
            status = child.try_wait().unwrap();
            status.is_some()
        });
        self.child = None;
        status.unwrap()
    }

    /// Its status file, once this process wrote it.
    pub fn status(&self, dir: &Path) -> Value {
        let mut status = Value::Null;
        wait_until("the daemon's status", 60, || {
            status = std::fs::read(dir.join("daemon.json"))
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or(Value::Null);
            status["pid"] == self.id()
        });
        status
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
