//! Recovery inside the daemon: at start after a crash, and after a store write that
//! failed (a full disk) poisoned the table; and the one back-off of the daemon.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use textorigin_core::config::Overrides;
use textorigin_store::intake::Policy;
use textorigin_store::storage::datadir::{DataDir, Recovery};

use super::sd_notify::Pulse;
use super::{DaemonError, Result};

/// A pause that doubles from 1 s up to [`MAX_BACKOFF`] while something keeps failing,
/// and starts again from 1 s once it works: the one back-off of the daemon (a spool
/// that cannot be read, a poisoned table, files that could not be processed).
#[derive(Debug, Default)]
pub(super) struct Backoff(Duration);

impl Backoff {
    /// The next pause: 1 s, then twice the last, at most [`MAX_BACKOFF`].
    pub(super) fn next(&mut self) -> Duration {
        self.0 = (self.0 * 2).clamp(Duration::from_secs(1), MAX_BACKOFF);
        self.0
    }

    /// It worked: the next pause is 1 s again.
    pub(super) fn reset(&mut self) {
        self.0 = Duration::ZERO;
    }
}

/// Longest pause before files that could not be processed are tried again.
pub(super) const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// Recovers the table if a crash left it out of step with the store; refuses to go on
/// when a replayed result differs from the stored one.
pub(super) fn recover(dir: &Path, stop: &AtomicBool, pulse: &Pulse) -> Result<Option<Recovery>> {
    let recovery = DataDir::recover(dir, |i, n| {
        pulse.beat();
        if i == n || i % 1000 == 0 {
            tracing::warn!(replayed = i, of = n, "replaying documents after the last checkpoint");
        }
        if stop.load(Ordering::SeqCst) {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    })?;
    if let Some(r) = recovery {
        tracing::warn!(
            from_checkpoint = r.from_checkpoint,
            replayed = r.replayed,
            mismatches = r.mismatches,
            "recovered the table after an unclean stop"
        );
        if r.mismatches > 0 {
            return Err(DaemonError::ReplayMismatch(r.mismatches));
        }
    }
    Ok(recovery)
}

/// Sleeps for `d`, or less when a stop is asked for.
pub(super) fn pause(d: Duration, stop: &AtomicBool) {
    let until = Instant::now() + d;
    while !stop.load(Ordering::SeqCst) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Recovers a poisoned table and reopens the data directory. A full disk can make this
/// fail too (RocksDB reopening its log, say): it is tried again after a pause that
/// doubles up to [`MAX_BACKOFF`], until it works or a stop is asked for. A replay
/// mismatch (a determinism bug) stops the daemon at once.
pub(super) fn recover_poisoned(
    dir: &Path,
    overrides: &Overrides,
    policy: &Policy,
    stop: &AtomicBool,
    pulse: &Pulse,
) -> Result<DataDir> {
    let mut backoff = Backoff::default();
    loop {
        let attempt = recover(dir, stop, pulse).and_then(|r| {
            tracing::warn!(?r, "recovered the table after a failed store write");
            Ok(DataDir::open_write(dir, overrides, policy.clone())?)
        });
        match attempt {
            Ok(dd) => return Ok(dd),
            Err(e @ DaemonError::ReplayMismatch(_)) => return Err(e),
            Err(e) if stop.load(Ordering::SeqCst) => return Err(e),
            Err(e) => {
                let wait = backoff.next();
                tracing::warn!(error = %textorigin_store::error::chain(&e), retry_in_s = wait.as_secs(), "cannot recover the table yet (a full disk?)");
                pause(wait, stop);
            }
        }
    }
}
