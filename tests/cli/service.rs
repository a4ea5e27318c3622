//! The daemon as a service: systemd's readiness and watchdog protocol, and SIGHUP's
//! reload of its settings.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::util::*;

/// Under systemd (`Type=notify`): READY once serving, watchdog pings at half
/// `WATCHDOG_USEC`, STOPPING on SIGTERM, through the socket `NOTIFY_SOCKET` names.
#[test]
fn the_daemon_speaks_the_sd_notify_protocol() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let sock_path = dir.join("notify.sock");
    let sock = std::os::unix::net::UnixDatagram::bind(&sock_path).unwrap();
    sock.set_read_timeout(Some(std::time::Duration::from_secs(20))).unwrap();
    let mut c = serve_command(dir, &["--table-size", "32KiB"]);
    c.env("NOTIFY_SOCKET", &sock_path).env("WATCHDOG_USEC", "200000");
    let daemon = Daemon::spawn(c);
    let mut buf = [0u8; 512];
    let mut next = || {
        let n = sock.recv(&mut buf).expect("a notification within 20 s");
        String::from_utf8_lossy(&buf[..n]).into_owned()
    };
    let first = next();
    assert!(first.starts_with("READY=1\n") && first.contains("STATUS=serving"), "{first}");
    // Idle, it still pings the watchdog (every 100 ms here).
    for _ in 0..3 {
        assert_eq!(next(), "WATCHDOG=1\n");
    }
    daemon.signal("TERM");
    let stopping = std::iter::repeat_with(&mut next).find(|m| m != "WATCHDOG=1\n").unwrap();
    assert!(stopping.starts_with("STOPPING=1\n"), "{stopping}");
    daemon.stop(); // a second SIGTERM while stopping changes nothing
}

/// The notifications a daemon sends to a socket of the test's, each with when it came.
struct Notifications {
    got: Arc<Mutex<Vec<(Instant, String)>>>,
}

impl Notifications {
    /// Binds `path` and records what arrives there, on a thread of its own.
    fn listen(path: &std::path::Path) -> Notifications {
        let sock = std::os::unix::net::UnixDatagram::bind(path).unwrap();
        let got = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&got);
        std::thread::spawn(move || {
            let mut buf = [0u8; 512];
            while let Ok(n) = sock.recv(&mut buf) {
                record.lock().unwrap().push((Instant::now(), String::from_utf8_lossy(&buf[..n]).into_owned()));
            }
        });
        Notifications { got }
    }

    /// The longest time between two watchdog pings (or `from` and the first, or the last
    /// and `to`) within `from`..`to`.
    fn longest_silence(&self, from: Instant, to: Instant) -> Duration {
        let got = self.got.lock().unwrap();
        let mut times: Vec<Instant> =
            got.iter().filter(|(t, m)| m == "WATCHDOG=1\n" && *t >= from && *t <= to).map(|(t, _)| *t).collect();
        times.insert(0, from);
        times.push(to);
        times.windows(2).map(|w| w[1] - w[0]).max().unwrap()
    }

    fn ready(&self) -> bool {
        self.got.lock().unwrap().iter().any(|(_, m)| m.starts_with("READY=1\n"))
    }
}

/// A page that takes long to read or parse held back the watchdog's pings (the first
/// came 139.7 s after READY, and systemd's `WatchdogSec=60` would have restarted the
/// daemon onto the same page): they come from a thread of their own, and keep coming
/// while the loop waits for the parsers. A loop stuck in its own work stops them, so
/// that systemd still restarts a daemon that hangs.
#[test]
fn the_watchdog_is_pinged_while_a_page_is_parsed_and_not_while_the_loop_is_stuck() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let control = dir.join("failpoints");
    std::fs::write(&control, "parse=sleep:4000\n").unwrap();
    let notes = Notifications::listen(&dir.join("notify.sock"));
    let mut c = serve_command(dir, &["--table-size", "32KiB", "--rescan-secs", "1"]);
    c.env("NOTIFY_SOCKET", dir.join("notify.sock"))
        .env("WATCHDOG_USEC", "1000000")
        .env("TEXTORIGIN_FAILPOINTS", &control);
    let daemon = Daemon::spawn(c);
    wait_until("READY", 30, || notes.ready());
    // A parser thread takes 4 s over the file: pings every 0.5 s all the same.
    let from = Instant::now();
    drop_into_spool(dir, &[examples().join("01-harbour-bridge.txt")]);
    wait_drained(dir, 1);
    let parsed = notes.longest_silence(from, Instant::now());
    assert!(from.elapsed() >= Duration::from_secs(4), "the parse was not slowed: the check proves nothing");
    assert!(parsed < Duration::from_millis(2500), "no ping for {parsed:?} while a page was parsed");
    // The loop itself stuck 4 s in a document's commit: no ping for most of it.
    std::fs::write(&control, "admit.before-commit=sleep:4000\n").unwrap();
    let from = Instant::now();
    drop_into_spool(dir, &[examples().join("02-commuter-blog.txt")]);
    wait_drained(dir, 2);
    let stuck = notes.longest_silence(from, Instant::now());
    assert!(
        stuck >= Duration::from_millis(2500),
        "pings went on ({stuck:?} at most between two) while the loop was stuck"
    );
    daemon.stop();
}

/// SIGHUP read only the token file again: a changed `[daemon]` setting waited for a
/// restart. The settings that can change live are followed at once and logged (`keep`
/// here: the next file goes to `done/`), the others logged as waiting for a restart, and
/// a config file that no longer reads keeps the settings in force.
#[test]
fn sighup_follows_the_daemon_settings_that_can_change_live() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let (config, log) = (dir.join("textorigin.toml"), dir.join("serve.log"));
    std::fs::write(&config, "[daemon]\nkeep = false\ncheckpoint_docs = 1000\n").unwrap();
    let mut c = serve_command(dir, &["--table-size", "32KiB", "--rescan-secs", "1"]);
    c.arg("--config").arg(&config).arg("--log").arg(&log).env("TEXTORIGIN_LOG", "info");
    let daemon = Daemon::spawn(c);
    let done = |name: &str| dir.join("spool/done").join(name).exists();
    drop_into_spool(dir, &[examples().join("01-harbour-bridge.txt")]);
    wait_drained(dir, 1);
    assert!(!done("01-harbour-bridge.txt"), "keep = false: the file is removed");
    std::fs::write(&config, "[daemon]\nkeep = true\ncheckpoint_docs = 1\nmemory_budget = \"128MiB\"\n").unwrap();
    daemon.signal("HUP");
    let logged = |what: &str| std::fs::read_to_string(&log).unwrap_or_default().contains(what);
    wait_until("the settings read again", 20, || logged("setting changed"));
    drop_into_spool(dir, &[examples().join("02-commuter-blog.txt")]);
    wait_drained(dir, 2);
    wait_until("the second file moved to done/", 20, || done("02-commuter-blog.txt"));
    let text = std::fs::read_to_string(&log).unwrap();
    let line = |setting: &str| {
        text.lines().find(|l| l.contains("setting changed") && l.contains(setting)).unwrap_or_default().to_string()
    };
    assert!(line("\"keep\"").contains("true") && !line("\"keep\"").contains("next start"), "{text}");
    assert!(line("checkpoint_docs").contains("1000"), "{text}");
    assert!(line("memory_budget").contains("at the next start"), "{text}");
    // A config file that no longer reads: the settings in force stay (keep = true).
    std::fs::write(&config, "[daemon]\nkeep = tru\n").unwrap();
    daemon.signal("HUP");
    wait_until("the bad config file logged", 20, || logged("settings not read again"));
    drop_into_spool(dir, &[examples().join("03-weekly-roundup.txt")]);
    wait_drained(dir, 3);
    wait_until("the third file moved to done/", 20, || done("03-weekly-roundup.txt"));
    daemon.stop();
}
