//! The parser threads (`parse-N`): bounded queues in and out, so a slow apply thread
//! holds back reading; a parser that dies stops the daemon with an error, never a hang
//! (each thread holds a "bomb" whose drop during a panic marks it dead).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::spool::{parse_file, Parsed};
use super::{DaemonError, Result};
use crate::error::IoContext;
use crate::storage::datadir::Preparer;

/// The parser threads: bounded queues in and out, so a slow apply thread holds back
/// reading; a parser that dies sets `dead`, and the apply thread stops with an error.
pub(super) struct Parsers {
    jobs: crossbeam_channel::Sender<(usize, PathBuf)>,
    results: crossbeam_channel::Receiver<(usize, Parsed)>,
    dead: Arc<AtomicBool>,
}

/// Sets `dead` if its thread unwinds.
struct Bomb(Arc<AtomicBool>);

impl Drop for Bomb {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::SeqCst);
        }
    }
}

impl Parsers {
    pub(super) fn start(threads: usize, capacity: usize, max: u64, preparer: &Preparer) -> Result<Parsers> {
        let (jobs, job_rx) = crossbeam_channel::bounded::<(usize, PathBuf)>(capacity);
        let (result_tx, results) = crossbeam_channel::bounded::<(usize, Parsed)>(capacity);
        let dead = Arc::new(AtomicBool::new(false));
        for t in 0..threads {
            let (job_rx, result_tx, bomb) = (job_rx.clone(), result_tx.clone(), Bomb(Arc::clone(&dead)));
            let mut preparer = preparer.clone();
            std::thread::Builder::new().name(format!("parse-{t}")).spawn(move || {
                let _bomb = bomb;
                for (i, path) in job_rx {
                    if result_tx.send((i, parse_file(&path, max, &mut preparer))).is_err() {
                        break;
                    }
                }
            })
            .io(|| "cannot start a parser thread")?;
        }
        Ok(Parsers { jobs, results, dead })
    }

    /// Parses `files` on the parser threads; returns them in the given order.
    pub(super) fn parse(&self, files: Vec<PathBuf>) -> Result<Vec<Parsed>> {
        let n = files.len();
        let mut out: Vec<Option<Parsed>> = (0..n).map(|_| None).collect();
        let mut sent = 0;
        let mut received = 0;
        let mut pending = files.into_iter().enumerate();
        let mut next = pending.next();
        while received < n {
            if let Some((i, path)) = next.take() {
                match self.jobs.try_send((i, path)) {
                    Ok(()) => {
                        sent += 1;
                        next = pending.next();
                        continue;
                    }
                    Err(crossbeam_channel::TrySendError::Full(job)) => next = Some(job),
                    Err(crossbeam_channel::TrySendError::Disconnected(_)) => return Err(DaemonError::ParsersGone),
                }
            }
            match self.results.recv_timeout(Duration::from_millis(100)) {
                Ok((i, p)) => {
                    out[i] = Some(p);
                    received += 1;
                }
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                    if self.dead.load(Ordering::SeqCst) {
                        return Err(DaemonError::ParserDied);
                    }
                }
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return Err(DaemonError::ParsersGone),
            }
        }
        debug_assert_eq!(sent, n);
        Ok(out.into_iter().map(|p| p.expect("every file parsed")).collect())
    }
}
