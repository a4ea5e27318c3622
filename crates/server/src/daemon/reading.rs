//! No input can halt intake, whatever a parser does: a spool file that killed the
//! process while it was being read is left out at a later start, with its reason in
//! `failed/`.
//!
//! A parser that aborts the process (a stack overflow in a third-party decoder is an
//! abort, not a panic that a thread could catch) would otherwise kill the daemon again
//! at every start, since the file stays in `new/` and is read first: the files behind it
//! are never stored, whatever the service manager restarts. So the
//! reader thread writes, in [`layout::READING`], which file (its admission key) and which
//! step of it (opening it, or taking its document N) it is in, and marks the record idle
//! when the step is over: one 64-byte `pwrite` each, into the page cache (it outlives
//! the process, which is what it is for). A start that finds a record not idle knows the
//! last process died inside that step; when the same step of the same file is where it
//! died [`DEATHS`] times in a row, the reader does not take it again: the file (or the
//! rest of it, after the documents before that step) fails with the reason.
//!
//! Why not at the first death: a `kill -9`, a power cut or an OOM kill can land while
//! an innocent file is being read; twice in a row inside the same document's parsing
//! (microseconds, against the time the reader waits for the queue) is a parser's doing.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::layout;

/// Deaths inside one step of one file after which it is left out.
pub(super) const DEATHS: u32 = 2;

/// The step of a file the reader is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// Opening it and reading what says what it holds (a Parquet footer, say).
    Open,
    /// Taking its document N (0-based, counting every document from the file's start).
    Doc(u64),
}

impl Step {
    fn number(self) -> u64 {
        match self {
            Step::Open => 0,
            Step::Doc(n) => n + 1,
        }
    }

    /// What the step is, for the reason.
    pub(super) fn describe(self) -> String {
        match self {
            Step::Open => "opening it".into(),
            Step::Doc(n) => format!("reading its document {}", n + 1),
        }
    }
}

/// The reader's record (see the module docs).
pub(super) struct Watch {
    /// None where the record cannot be written (then nothing is watched).
    file: Option<File>,
    /// Where the last process died: file key, step number, deaths there in a row.
    died: Option<(u128, u64, u32)>,
}

/// A record: `KEY STEP DEATHS` in fixed widths (hex, decimal, decimal), or `-` first
/// when idle.
const RECORD: usize = 64;

impl Watch {
    /// Opens the record of the spool at `spool`, reading where the last process died.
    pub(super) fn open(spool: &Path) -> Watch {
        let path = spool.join(layout::READING);
        let file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path);
        let file = match file {
            Ok(f) => f,
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot keep the reader's record: a file that crashes the reader would be read again at every start");
                return Watch { file: None, died: None };
            }
        };
        let mut buf = [0u8; RECORD];
        let n = file.read_at(&mut buf, 0).unwrap_or(0);
        let died = parse(&buf[..n]);
        if let Some((key, step, deaths)) = died {
            tracing::warn!(file_key = %format!("{key:032x}"), step, deaths, "the last process died while reading a spool file");
        }
        Watch { file: Some(file), died }
    }

    /// The reader enters `step` of the file `key`: how many times in a row the process
    /// died there before (the record then says this one is under way).
    pub(super) fn enter(&self, key: u128, step: Step) -> u32 {
        let n = step.number();
        let deaths = match self.died {
            Some((k, s, d)) if k == key && s == n => d,
            _ => 0,
        };
        self.write(format!("{key:032x} {n:20} {deaths:9}"));
        deaths
    }

    /// The step is over.
    pub(super) fn leave(&self) {
        self.write("-".into());
    }

    fn write(&self, record: String) {
        let Some(file) = &self.file else { return };
        let mut buf = [b' '; RECORD];
        buf[..record.len()].copy_from_slice(record.as_bytes());
        buf[RECORD - 1] = b'\n';
        if let Err(e) = file.write_all_at(&buf, 0) {
            tracing::debug!(error = %e, "cannot write the reader's record");
        }
    }
}

/// Where the process died by a record: `(key, step, deaths there)` with this death.
fn parse(record: &[u8]) -> Option<(u128, u64, u32)> {
    let text = std::str::from_utf8(record).ok()?;
    let mut parts = text.split_whitespace();
    let key = u128::from_str_radix(parts.next()?, 16).ok()?;
    let step = parts.next()?.parse().ok()?;
    let deaths: u32 = parts.next()?.parse().ok()?;
    Some((key, step, deaths + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deaths_in_one_step_count_across_starts_and_another_step_starts_again() {
        let spool = tempfile::tempdir().unwrap();
        let w = Watch::open(spool.path());
        assert_eq!(w.enter(7, Step::Doc(3)), 0);
        // Died there: the next start counts one death at that step.
        let w = Watch::open(spool.path());
        assert_eq!(w.enter(7, Step::Open), 0, "another step");
        assert_eq!(w.enter(8, Step::Doc(3)), 0, "another file");
        assert_eq!(w.enter(7, Step::Doc(3)), 1);
        let w = Watch::open(spool.path());
        assert_eq!(w.enter(7, Step::Doc(3)), DEATHS);
        w.leave();
        // Left idle: the next start finds no death.
        let w = Watch::open(spool.path());
        assert_eq!(w.enter(7, Step::Doc(3)), 0);
        w.leave();
        assert_eq!(std::fs::read(spool.path().join(layout::READING)).unwrap().len(), RECORD);
    }
}
