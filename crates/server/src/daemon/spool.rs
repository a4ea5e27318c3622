//! The spool side of the daemon: listing `new/`, opening a file and reading its
//! documents as they are taken (on the reader thread), and admitting them exactly once
//! (on the apply thread), one at a time.
//!
//! A file is never held whole, nor are its documents: the reader decodes and parses it
//! a document at a time, the parser threads prepare a few documents ahead, and the
//! apply thread stores each in turn ([`textorigin_store::pipeline`]'s bounded queues),
//! so a JSONL file of millions of lines (or a small compressed one that decodes to
//! them) costs the memory of a few documents. Each stored document's batch records how
//! far its file is admitted, so a file cut short (a stop, a crash) continues after its
//! stored documents, which are not prepared again.

use std::io::{Read, Seek};
use std::path::{Path, PathBuf};

use super::reading::{Step, Watch, DEATHS};
use super::Result;
use crate::budget::{Grant, MemoryBudget};
use textorigin_store::error::IoContext;
use textorigin_store::input::{file_docs, InputDoc, InputError, Limits};
use textorigin_store::intake::file::{fail_whole, AdmitError, Admitted, FileAdmitting, Records, MAX_FAILURE_RECORDS};
use textorigin_store::storage::datadir::{DataDir, Prepared, Preparer};
use textorigin_store::storage::store::{AdmissionKey, FileAdmission, Store, Via};

/// Entries of `dir` in name order (dot files skipped). Whatever they are (regular
/// files, links, FIFOs, directories), [`open`] decides: nothing stays unseen.
pub(super) fn list(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .io(|| format!("cannot read spool directory {}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .collect();
    out.sort();
    Ok(out)
}

/// Why a spool entry cannot be read as a document.
enum Unreadable {
    /// Not there any more, or a passing I/O error: leave it and look again later.
    Later(std::io::Error),
    /// Never will be: a link, a FIFO, a device, a directory, or over the size cap.
    Never(String),
}

/// Opens a spool entry once, without following a symbolic link and without blocking
/// (a FIFO), checks through the descriptor that it is a regular file of at most `cap`
/// bytes (`.jsonl` files may be larger: their documents are checked one by one, up to
/// `JSONL_CAP`), and reads it through that descriptor to its admission key (xxh3-128
/// of its name and bytes, [`textorigin_store::storage::store::admission_key`]); the
/// file is then at its start again, and its length.
fn open(
    path: &Path,
    raw_name: &[u8],
    cap: u64,
    many: bool,
) -> std::result::Result<(std::fs::File, u64, u128), Unreadable> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let mut file =
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path).map_err(
            |e| match e.raw_os_error() {
                Some(libc::ELOOP) => Unreadable::Never("not a regular file (a symbolic link)".into()),
                _ => Unreadable::Later(e),
            },
        )?;
    let meta = file.metadata().map_err(Unreadable::Later)?;
    let t = meta.file_type();
    if !t.is_file() {
        let what = if t.is_dir() {
            "a directory"
        } else if t.is_fifo() {
            "a FIFO"
        } else if t.is_socket() {
            "a socket"
        } else {
            "a device"
        };
        return Err(Unreadable::Never(format!("not a regular file ({what})")));
    }
    let limit = if many { JSONL_CAP } else { cap };
    if meta.len() > limit {
        return Err(Unreadable::Never(format!("{} bytes is over the limit of {limit} bytes", meta.len())));
    }
    let mut hasher = AdmissionKey::new(raw_name);
    let mut buf = vec![0u8; 1 << 16];
    let mut len = 0u64;
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Unreadable::Later(e)),
        };
        hasher.update(&buf[..n]);
        len += n as u64;
        if len > limit {
            return Err(Unreadable::Never(format!("over the limit of {limit} bytes (it grew while read)")));
        }
    }
    file.rewind().map_err(Unreadable::Later)?;
    Ok((file, len, hasher.finish()))
}

/// Whether a spool entry was modified within the last second.
fn just_written(path: &Path) -> bool {
    std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t.elapsed().is_ok_and(|e| e < std::time::Duration::from_secs(1)))
}

/// The largest spool file of many documents read (`.jsonl`, `.warc`, `.parquet` and
/// the like, compressed or not: its documents are each held to the document cap).
const JSONL_CAP: u64 = 1 << 30;

/// Whether a spool file's name says it holds many documents ([`JSONL_CAP`]).
fn many_documents(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    let name = name.strip_suffix(".gz").or_else(|| name.strip_suffix(".zst")).unwrap_or(&name);
    [".jsonl", ".ndjson", ".warc", ".wet", ".parquet"].iter().any(|e| name.ends_with(e))
}

/// What became of a spool file.
pub(super) enum Outcome {
    /// Every document stored (or stored before).
    Done,
    /// Some or all of it failed: reasons for the `.reason` file.
    Failed(Vec<String>),
    /// Not processed now (an I/O error, a stop): stays in the spool.
    Keep,
}

/// A spool file as the reader opened it, before its documents.
pub(super) struct File {
    pub(super) path: PathBuf,
    name: String,
    /// The file name's bytes (two names that differ only in bytes that are not UTF-8
    /// have one lossy `name`).
    raw_name: Vec<u8>,
    source: String,
    key: u128,
    state: State,
    /// Its HTTP server's mark (`layout::MARKS_DIR`), when it was submitted over HTTP:
    /// removed once the file has left the spool.
    pub(super) mark: Option<PathBuf>,
}

enum State {
    /// Gone, or unreadable now: stays in the spool (if it is still there).
    Keep,
    /// The whole file fails: the reason.
    Fails(String),
    /// Admitted before: every document (before the last crash, say; only moving it was
    /// missing), or as a failure.
    Before(FileAdmission),
    /// Its documents follow; the first `done` of them were admitted before.
    Docs(Option<FileAdmission>),
}

/// What the reader yields for a batch of files: each file, its documents, its end.
pub(super) enum Item {
    File(File),
    /// A document (or why it is none), whether it is to be prepared (not when it
    /// was admitted before), and its bytes of the memory budget.
    Doc(std::result::Result<InputDoc, InputError>, bool, Option<Grant>),
    End,
}

/// An [`Item`] as the parser threads leave it for the apply thread.
pub(super) enum Ready {
    File(File),
    Doc(std::result::Result<Box<(InputDoc, Option<Prepared>)>, InputError>, Option<Grant>),
    End,
}

/// The items of `files`, read as they are taken (the reader thread): each file opened
/// and keyed, its admission so far looked up in `store` (a file's record is written
/// only by the apply thread's work on that same file, which comes later) and its HTTP
/// mark in `marks`, and its documents streamed, each taking its text's bytes of
/// `budget` (waiting for them) until it is applied. Every step of reading a file is
/// recorded in `watch`; a step where the process died [`DEATHS`] times in a row is not
/// taken again ([`super::reading`]).
pub(super) fn items(
    files: Vec<PathBuf>,
    limits: Limits,
    store: std::sync::Arc<Store>,
    marks: PathBuf,
    budget: std::sync::Arc<MemoryBudget>,
    watch: std::sync::Arc<Watch>,
) -> impl Iterator<Item = Item> + Send {
    files.into_iter().flat_map(move |path| -> Box<dyn Iterator<Item = Item> + Send> {
        let (file, docs) = open_file(&path, limits, &store, &marks, &watch);
        let Some(mut docs) = docs else {
            return Box::new([Item::File(file), Item::End].into_iter());
        };
        let done = match &file.state {
            State::Docs(Some(a)) => a.done(),
            _ => 0,
        };
        let (budget, watch) = (std::sync::Arc::clone(&budget), std::sync::Arc::clone(&watch));
        let (key, source, name) = (file.key, file.source.clone(), file.name.clone());
        let (mut i, mut over) = (0u64, false);
        let docs = std::iter::from_fn(move || {
            if over {
                return None;
            }
            let step = Step::Doc(i);
            let next = if watch.enter(key, step) >= DEATHS {
                over = true;
                Some(Err(InputError::Unreadable { file: source.clone(), reason: died_reading(step) }))
            } else {
                if textorigin_store::failpoint::active() {
                    let _ = textorigin_store::failpoint::hit(&format!("read:{name}:{}", i + 1));
                }
                docs.next()
            };
            watch.leave();
            let d = next?;
            let grant = d.as_ref().ok().map(|doc| budget.take(doc.text.len() as u64));
            i += 1;
            Some(Item::Doc(d, i > u64::from(done), grant))
        });
        Box::new(std::iter::once(Item::File(file)).chain(docs).chain(std::iter::once(Item::End)))
    })
}

/// Opens one spool file: what it is, and its documents when they are to be read.
fn open_file(
    path: &Path,
    limits: Limits,
    store: &Store,
    marks: &Path,
    watch: &Watch,
) -> (File, Option<textorigin_store::input::Docs>) {
    let source = path.display().to_string();
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // The key takes the name's bytes: two names that differ only in bytes that are not
    // UTF-8 map to one lossy string, and must not be taken for one file.
    let raw_name = path.file_name().map(|n| std::os::unix::ffi::OsStrExt::as_bytes(n).to_vec()).unwrap_or_default();
    let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let file = |key: u128, state: State| File {
        path: path.to_path_buf(),
        name: name.clone(),
        raw_name: raw_name.clone(),
        source: source.clone(),
        key,
        state,
        mark: Some(marks.join(format!("{key:032x}"))).filter(|m| key != 0 && m.exists()),
    };
    let opened = textorigin_store::failpoint::hit(&format!("read:{name}"))
        .map_err(Unreadable::Later)
        .and_then(|()| open(path, &raw_name, limits.doc_bytes, many_documents(&name)));
    let (reader, len, key) = match opened {
        Ok(o) => o,
        Err(Unreadable::Later(e)) => {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::error!(file = %source, error = %e, "cannot read; left in the spool");
            }
            return (file(0, State::Keep), None);
        }
        Err(Unreadable::Never(why)) => {
            let key = textorigin_store::storage::store::admission_key(&raw_name, why.as_bytes());
            return (file(key, State::Fails(format!("{source}: {why}"))), None);
        }
    };
    if len == 0 && just_written(path) {
        // Written straight into `new/` (not through `tmp/`, as the contract asks) and
        // caught before its first bytes: one more look after the retry pause.
        tracing::debug!(file = %source, "empty and just written: looking again shortly");
        return (file(0, State::Keep), None);
    }
    let before = match store.admitted(key) {
        Ok(b) => b,
        Err(e) => {
            tracing::error!(file = %source, error = %textorigin_store::error::chain(&e), "cannot read the admission records; left in the spool");
            return (file(0, State::Keep), None);
        }
    };
    let before = before.map(|b| b.state);
    if let Some(b) = before.filter(|b| !matches!(b, FileAdmission::Reading { .. })) {
        return (file(key, State::Before(b)), None);
    }
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| name.clone());
    // A stored document names its spool file, not the path it had in `new/`, which is
    // gone once the file is admitted.
    if watch.enter(key, Step::Open) >= DEATHS {
        watch.leave();
        return (file(key, State::Fails(format!("{source}: cannot read: {}", died_reading(Step::Open)))), None);
    }
    let docs = file_docs(reader, &ext, &stem, &format!("spool:{name}"), limits, None);
    watch.leave();
    match docs {
        Ok(docs) => (file(key, State::Docs(before)), Some(docs)),
        Err(e) => (file(key, State::Fails(e.to_string())), None),
    }
}

/// Why a step of a file where the process died [`DEATHS`] times is not taken again.
fn died_reading(step: Step) -> String {
    format!(
        "the daemon died {DEATHS} times in a row while {} (a parser that crashes on it?); the rest of the file is left out",
        step.describe()
    )
}

/// Prepares an item's document (on a parser thread: no store access).
pub(super) fn prepare(preparer: &mut Preparer, item: Item) -> Ready {
    match item {
        Item::File(f) => {
            let _ = textorigin_store::failpoint::hit("parse");
            Ready::File(f)
        }
        Item::Doc(d, fresh, grant) => Ready::Doc(
            d.map(|doc| {
                let p = fresh.then(|| preparer.prepare(&doc.text));
                Box::new((doc, p))
            }),
            grant,
        ),
        Item::End => Ready::End,
    }
}

/// A spool file being admitted on the apply thread ([`FileAdmitting`] with the spool's
/// records), with the reasons for its `.reason` file.
pub(super) struct Admitting {
    file: File,
    admitting: FileAdmitting,
    reasons: Vec<String>,
    /// A store write failed: the rest of the file waits in the spool.
    kept: bool,
}

impl Admitting {
    /// Starts admitting `file`: its outcome at once when it has no documents to read.
    pub(super) fn start(dd: &DataDir, file: File) -> Result<std::result::Result<Admitting, (PathBuf, Outcome)>> {
        let outcome = match &file.state {
            State::Keep => Outcome::Keep,
            State::Fails(reason) => fail_file(dd, &file, reason.clone())?,
            State::Before(FileAdmission::Failed) => {
                Outcome::Failed(vec![format!("{}: failed before (see `textorigin failed`)", file.source)])
            }
            State::Before(FileAdmission::Ended { failed: 0, .. }) => Outcome::Done,
            State::Before(b) => Outcome::Failed(vec![format!(
                "{}: {} document(s) failed (recorded before, see `textorigin failed`)",
                file.source,
                b.failed()
            )]),
            &State::Docs(before) => {
                // The way its documents came in: HTTP for a file the HTTP server marked.
                let via = if file.mark.is_some() { Via::Http } else { Via::Spool };
                let records = Records::Spool { key: file.key, name: file.name.clone(), before };
                let admitting = FileAdmitting::start(Some(&file.raw_name), via, records);
                return Ok(Ok(Admitting { file, admitting, reasons: Vec::new(), kept: false }));
            }
        };
        Ok(Err((file.path, outcome)))
    }

    /// Admits the file's next document (stores it, or records why it failed). Returns
    /// whether a document was stored.
    pub(super) fn doc(
        &mut self,
        dd: &mut DataDir,
        d: std::result::Result<Box<(InputDoc, Option<Prepared>)>, InputError>,
    ) -> Result<bool> {
        if self.kept {
            return Ok(false);
        }
        let (doc, prepared) = match d {
            Ok(ready) => {
                let (doc, prepared) = *ready;
                (Ok(doc), prepared)
            }
            Err(e) => (Err(e), None),
        };
        let source = &self.file.source;
        let admitted = self.admitting.doc(dd, doc.as_ref(), prepared, 0.0);
        if !matches!(admitted, Ok(Admitted::Earlier)) {
            for w in doc.iter().flat_map(|d| &d.warnings) {
                tracing::warn!(file = %source, warning = %w, "document stored with a warning");
            }
        }
        match admitted {
            Ok(Admitted::Stored(_)) => return Ok(true),
            Ok(Admitted::Before(seq)) => {
                let name = doc.as_ref().map(|d| d.name.as_str()).unwrap_or_default();
                tracing::info!(file = %source, document = %name, id = seq, "stored before from a file of this name: skipped");
            }
            Ok(Admitted::Failed(reason)) if self.admitting.failed() <= MAX_FAILURE_RECORDS => {
                tracing::warn!(file = %source, %reason, "document failed");
                self.reasons.push(reason);
            }
            Ok(Admitted::Failed(_) | Admitted::Earlier) => {}
            Err(AdmitError::Write(e)) => {
                // A write error: leave the file; the next scan continues after what is stored.
                tracing::error!(file = %source, error = %textorigin_store::error::chain(&e), "store write failed; file left in the spool");
                self.kept = true;
            }
            Err(AdmitError::Fatal(e)) => return Err(e.into()),
        }
        Ok(false)
    }

    /// The file's documents ended: its last admission record (how many documents it
    /// held) and its outcome.
    pub(super) fn end(self, dd: &DataDir) -> Result<(PathBuf, Outcome)> {
        let Admitting { file, admitting, mut reasons, kept } = self;
        if kept {
            return Ok((file.path, Outcome::Keep));
        }
        if admitting.seen() == 0 {
            let reason = format!("{}: no documents", file.source);
            let outcome = fail_file(dd, &file, reason)?;
            return Ok((file.path, outcome));
        }
        let (total, failed) = admitting.end(dd)?;
        let source = &file.source;
        if failed > MAX_FAILURE_RECORDS {
            reasons.push(format!(
                "{source}: {} more document(s) failed (the first {MAX_FAILURE_RECORDS} are recorded)",
                failed - MAX_FAILURE_RECORDS
            ));
        }
        if !reasons.is_empty() && failed < total {
            reasons.push(format!(
                "{source}: {} of {total} document(s) were stored; given again (fixed), the file stores only the others",
                total - failed
            ));
        }
        Ok((file.path, if failed == 0 { Outcome::Done } else { Outcome::Failed(reasons) }))
    }

    /// A stop or a dead parser cut the file short: what is stored stays, the file stays
    /// in the spool and continues after it.
    pub(super) fn cut(self) -> (PathBuf, Outcome) {
        (self.file.path, Outcome::Keep)
    }
}

/// Records that a whole file failed (once: a file seen again after a crash finds its
/// record).
fn fail_file(dd: &DataDir, file: &File, reason: String) -> Result<Outcome> {
    if !fail_whole(dd, file.key, &file.name, &reason)? {
        return Ok(Outcome::Failed(vec![format!("{reason} (recorded before)")]));
    }
    tracing::warn!(file = %file.source, %reason, "failed");
    Ok(Outcome::Failed(vec![reason]))
}
