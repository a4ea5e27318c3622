//! systemd's readiness protocol (`sd_notify(3)`), spoken directly: a datagram to the
//! socket named by `$NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace).
//! `READY=1` once recovery is done and the spool is watched, `WATCHDOG=1` every half
//! `$WATCHDOG_USEC` while the daemon is alive, `STOPPING=1` when a stop begins, `STATUS=`
//! lines for `systemctl status`. Without the variable (not under systemd) nothing is
//! sent. Best effort: a failed send is logged once, never fatal.
//!
//! **Alive** means the apply loop beat since the last ping, or is waiting for the
//! reader and the parser threads ([`Pulse`]). The pings come from a thread of their own
//! ([`Notifier::watch`]), so a page that takes long to parse (parsing is linear in its
//! size, on the pipeline's threads) never holds them back and systemd does not restart
//! the daemon onto the same page; a loop stuck in its own work (a lock never released,
//! a step that never ends) stops them, and systemd restarts it.

use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The notification socket, if the service manager gave one.
#[derive(Debug)]
pub struct Notifier {
    target: Option<(UnixDatagram, std::os::unix::net::SocketAddr)>,
    /// Half `$WATCHDOG_USEC`: how often the watchdog is pinged.
    watchdog: Option<Duration>,
    warned: AtomicBool,
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
        Notifier { target, watchdog, warned: AtomicBool::new(false) }
    }

    fn send(&self, msg: &str) {
        if let Some((sock, addr)) = &self.target {
            if let Err(e) = sock.send_to_addr(msg.as_bytes(), addr) {
                if !self.warned.swap(true, Ordering::Relaxed) {
                    tracing::warn!(error = %e, "cannot notify the service manager");
                }
            }
        }
    }

    /// Recovery is done and the spool is watched.
    pub fn ready(&self, status: &str) {
        self.send(&format!("READY=1\nSTATUS={status}\n"));
    }

    /// A stop began (the final checkpoint follows).
    pub fn stopping(&self) {
        self.send("STOPPING=1\nSTATUS=stopping: final checkpoint\n");
    }

    /// The longest the apply loop may wait between beats of its [`Pulse`].
    pub fn max_wait(&self) -> Option<Duration> {
        self.watchdog
    }

    /// Pings the watchdog every half interval while `pulse` says the daemon is alive,
    /// on a thread of its own, until `done` is set. Nothing to do without a watchdog.
    pub fn watch(self: &Arc<Self>, pulse: Arc<Pulse>, done: Arc<AtomicBool>) {
        let Some(half) = self.watchdog else { return };
        let notifier = Arc::clone(self);
        std::thread::Builder::new()
            .name("watchdog".into())
            .spawn(move || {
                let mut seen = pulse.beats.load(Ordering::SeqCst);
                let mut stuck = false;
                loop {
                    // Short sleeps, so that the thread ends soon after `done`.
                    let step = half.min(Duration::from_millis(100));
                    let mut slept = Duration::ZERO;
                    while slept < half && !done.load(Ordering::SeqCst) {
                        std::thread::sleep(step);
                        slept += step;
                    }
                    if done.load(Ordering::SeqCst) {
                        break;
                    }
                    let beats = pulse.beats.load(Ordering::SeqCst);
                    if beats != seen || pulse.waiting.load(Ordering::SeqCst) {
                        notifier.send("WATCHDOG=1\n");
                        stuck = false;
                    } else if !stuck {
                        tracing::warn!("the apply loop has not moved for half the watchdog interval: no watchdog ping");
                        stuck = true;
                    }
                    seen = beats;
                }
            })
            .expect("spawn the watchdog thread");
    }
}

/// What the watchdog thread reads of the apply loop: a beat at each of its steps, and
/// whether it waits for the pipeline's reader and parser threads (a document being
/// read or parsed), which is work under way, not a hang.
#[derive(Debug, Default)]
pub struct Pulse {
    beats: AtomicU64,
    waiting: AtomicBool,
}

impl Pulse {
    /// The loop made a step.
    pub fn beat(&self) {
        self.beats.fetch_add(1, Ordering::SeqCst);
    }

    /// The loop waits for the pipeline (true) or works itself (false).
    pub fn waiting(&self, waiting: bool) {
        self.beat();
        self.waiting.store(waiting, Ordering::SeqCst);
    }
}

/// Ends the watchdog thread when the loop ends, by an error too.
#[derive(Default)]
pub(super) struct WatchdogDone(pub(super) Arc<AtomicBool>);

impl Drop for WatchdogDone {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}
