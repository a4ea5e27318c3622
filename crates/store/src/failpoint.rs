//! Fault injection for the crash and I/O-error tests (an equivalent of the `fail`
//! crate, driven from outside the process).
//!
//! When `TEXTORIGIN_FAILPOINTS` names a file, every [`hit`] reads that file: a line
//! `NAME=abort` makes the process abort at point NAME (like `kill -9` at that instant),
//! `NAME=panic` panics there (a dying thread), `NAME=error` makes the point return an
//! I/O error ("no space left on device"), `NAME=sleep` waits 200 ms there (a slow step),
//! `NAME=sleep:MS` MS milliseconds, `NAME=stall` 30 s (a step that takes far too long).
//! The
//! file can be changed while the process runs. Without the variable a hit costs one
//! check of a cached `Option`.
//!
//! Points: `admit.before-commit` and `admit.after-commit` (around a document's batch),
//! `spool.after-sync` (after the group-commit fsync, before files leave `new/`),
//! `spool.after-unlink` (before the directory fsync), `checkpoint.between-writes`
//! (between two chunk writes into a slot), `checkpoint.after-copy` (slot copied, meta
//! not yet written), `checkpoint.after-meta`, `table.flush.between-writes` (between two
//! chunk writes of the table file's flush), and `store.write` (the
//! document batch itself; use `error` to simulate a full disk), `store.sync` (the group
//! commit's fsync; `error` simulates a failed fsync), `parse` (a parser
//! thread, before it reads a file; use `panic`), `read:NAME` (reading the spool file
//! NAME; `error` makes it unreadable), `read:NAME:N` (the daemon's reader taking
//! document N, 1-based, of spool file NAME; `abort` is a parser that crashes on it), `table.close.after-flush` (a table's buckets
//! flushed, its clean flag not yet written), `recover.replay` (before each document
//! recovery replays), `analyse.after-table` (a document applied to the table, the
//! reads of its origins' texts for alignment to come; `error` simulates a failed read),
//! `upgrade.recomputed` (schema 16's step: after each of its batches, the last one
//! before the version stamp), and in a deployment's partition `partition.after-store`
//! (a document stored, its outcome not appended) and `feedback.lost` (`error`: the
//! document's feedback is not sent, as if the log lost it unacknowledged).
//!
//! Compiled in only with the `failpoints` feature (the test suite's builds); without
//! it [`hit`] is an empty inline function and the variable is ignored.

#[cfg(feature = "failpoints")]
use std::path::PathBuf;
#[cfg(feature = "failpoints")]
use std::sync::OnceLock;

#[cfg(feature = "failpoints")]
fn control() -> Option<&'static PathBuf> {
    static PATH: OnceLock<Option<PathBuf>> = OnceLock::new();
    PATH.get_or_init(|| std::env::var_os("TEXTORIGIN_FAILPOINTS").map(PathBuf::from)).as_ref()
}

/// Whether points are being controlled (the variable is set), so that a caller can
/// skip naming a point it would hit very often.
#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub fn active() -> bool {
    false
}

/// Whether points are being controlled (the variable is set).
#[cfg(feature = "failpoints")]
pub fn active() -> bool {
    control().is_some()
}

/// Passes point `name` (a build without the `failpoints` feature: nothing happens).
#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub fn hit(_name: &str) -> std::io::Result<()> {
    Ok(())
}

/// Passes point `name`: aborts, or returns an error, if the control file says so.
#[cfg(feature = "failpoints")]
pub fn hit(name: &str) -> std::io::Result<()> {
    let Some(path) = control() else { return Ok(()) };
    let Ok(text) = std::fs::read_to_string(path) else { return Ok(()) };
    for line in text.lines() {
        match line.trim().split_once('=') {
            Some((n, "abort")) if n == name => {
                eprintln!("failpoint {name}: abort");
                std::process::abort();
            }
            Some((n, "panic")) if n == name => panic!("failpoint {name}: panic"),
            Some((n, "sleep")) if n == name => std::thread::sleep(std::time::Duration::from_millis(200)),
            Some((n, "stall")) if n == name => std::thread::sleep(std::time::Duration::from_secs(30)),
            Some((n, ms)) if n == name && ms.starts_with("sleep:") => {
                let ms = ms["sleep:".len()..].parse().unwrap_or(0);
                std::thread::sleep(std::time::Duration::from_millis(ms));
            }
            Some((n, "error")) if n == name => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::StorageFull,
                    format!("failpoint {name}: no space left on device"),
                ));
            }
            _ => {}
        }
    }
    Ok(())
}
