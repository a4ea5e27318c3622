//! systemd's readiness protocol (`sd_notify(3)`), spoken directly: a datagram to the
//! socket named by `$NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace).
//! `READY=1` once recovery is done and the spool is watched, `WATCHDOG=1` at least every
//! half `$WATCHDOG_USEC` while the loop runs, `STOPPING=1` when a stop begins, `STATUS=`
//! lines for `systemctl status`. Without the variable (not under systemd) nothing is
//! sent. Best effort: a failed send is logged once, never fatal.

use std::os::unix::net::UnixDatagram;
use std::time::{Duration, Instant};

/// The notification socket, if the service manager gave one.
#[derive(Debug)]
pub struct Notifier {
    target: Option<(UnixDatagram, std::os::unix::net::SocketAddr)>,
    watchdog: Option<Duration>,
    last_ping: Instant,
    warned: bool,
}

impl Notifier {
    /// From `$NOTIFY_SOCKET` and `$WATCHDOG_USEC` (honoured only when `$WATCHDOG_PID` is
    /// unset or this process).
    pub fn from_env() -> Notifier {
        let target = std::env::var_os("NOTIFY_SOCKET").and_then(|name| {
            let name = name.to_string_lossy().into_owned();
            let addr = if let Some(abstract_name) = name.strip_prefix('@') {
                use std::os::linux::net::SocketAddrExt;
                std::os::unix::net::SocketAddr::from_abstract_name(abstract_name.as_bytes()).ok()?
            } else {
                std::os::unix::net::SocketAddr::from_pathname(&name).ok()?
            };
            Some((UnixDatagram::unbound().ok()?, addr))
        });
        let ours = std::env::var("WATCHDOG_PID").map_or(true, |p| p.trim() == std::process::id().to_string());
        let watchdog = std::env::var("WATCHDOG_USEC")
            .ok()
            .and_then(|u| u.trim().parse::<u64>().ok())
            .filter(|&u| u > 0 && ours)
            .map(|u| Duration::from_micros(u) / 2);
        Notifier { target, watchdog, last_ping: Instant::now(), warned: false }
    }

    fn send(&mut self, msg: &str) {
        if let Some((sock, addr)) = &self.target {
            if let Err(e) = sock.send_to_addr(msg.as_bytes(), addr) {
                if !self.warned {
                    tracing::warn!(error = %e, "cannot notify the service manager");
                    self.warned = true;
                }
            }
        }
    }

    /// Recovery is done and the spool is watched.
    pub fn ready(&mut self, status: &str) {
        self.send(&format!("READY=1\nSTATUS={status}\n"));
        self.last_ping = Instant::now();
    }

    /// Called each round of the loop: a watchdog ping when half the interval passed.
    pub fn tick(&mut self) {
        if self.watchdog.is_some_and(|half| self.last_ping.elapsed() >= half) {
            self.send("WATCHDOG=1\n");
            self.last_ping = Instant::now();
        }
    }

    /// A stop began (the final checkpoint follows).
    pub fn stopping(&mut self) {
        self.send("STOPPING=1\nSTATUS=stopping: final checkpoint\n");
    }

    /// The longest the loop may wait between ticks.
    pub fn max_wait(&self) -> Option<Duration> {
        self.watchdog
    }
}
