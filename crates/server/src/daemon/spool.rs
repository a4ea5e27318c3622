//! The spool side of the daemon: listing `new/`, reading and parsing a file (on a
//! parser thread), and admitting its documents exactly once (on the apply thread).

use std::path::{Path, PathBuf};

use super::{now_ms, Result};
use textorigin_store::error::IoContext;
use textorigin_store::input::{parse_bytes, InputDoc, InputError};
use textorigin_store::storage::datadir::{DataDir, DataDirError, Prepared, Preparer};
use textorigin_store::storage::store::{admission_key, Admission, Admit, DocumentKeys, Failure};

/// Entries of `dir` in name order (dot files skipped). Whatever they are (regular
/// files, links, FIFOs, directories), [`parse_file`] decides: nothing stays unseen.
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
/// `JSONL_CAP`), and reads it through that descriptor.
fn read_entry(path: &Path, cap: u64, jsonl: bool) -> std::result::Result<Vec<u8>, Unreadable> {
    use std::io::Read;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let file =
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
    let limit = if jsonl { JSONL_CAP } else { cap };
    if meta.len() > limit {
        return Err(Unreadable::Never(format!("{} bytes is over the limit of {limit} bytes", meta.len())));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit + 1).read_to_end(&mut bytes).map_err(Unreadable::Later)?;
    if bytes.len() as u64 > limit {
        return Err(Unreadable::Never(format!("over the limit of {limit} bytes (it grew while read)")));
    }
    Ok(bytes)
}

/// Whether a spool entry was modified within the last second.
fn just_written(path: &Path) -> bool {
    std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t.elapsed().is_ok_and(|e| e < std::time::Duration::from_secs(1)))
}

/// The largest `.jsonl` spool file read (its documents are each held to the document cap).
const JSONL_CAP: u64 = 1 << 30;

/// What became of a spool file.
pub(super) enum Outcome {
    /// Every document stored (or stored before).
    Done,
    /// Some or all of it failed: reasons for the `.reason` file.
    Failed(Vec<String>),
    /// Not processed now (an I/O error): stays in the spool.
    Keep,
}

/// A spool file as a parser thread leaves it for the apply thread.
pub(super) struct Parsed {
    pub(super) path: PathBuf,
    name: String,
    /// The file name's bytes (two names that differ only in bytes that are not UTF-8
    /// have one lossy `name`).
    raw_name: Vec<u8>,
    source: String,
    key: u128,
    content: Content,
}

pub(super) enum Content {
    /// Gone, or unreadable now: stays in the spool (if it is still there).
    Keep,
    /// The whole file fails: the reason.
    Fails(String),
    /// Its documents, prepared (or per-document errors).
    Docs(Vec<std::result::Result<(InputDoc, Prepared), InputError>>),
}

/// Reads and parses one spool file (on a parser thread: no store access).
pub(super) fn parse_file(path: &Path, max: u64, preparer: &mut Preparer) -> Parsed {
    let _ = textorigin_store::failpoint::hit("parse");
    let source = path.display().to_string();
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // The key takes the name's bytes: two names that differ only in bytes that are not
    // UTF-8 map to one lossy string, and must not be taken for one file.
    let raw_name = path.file_name().map(|n| std::os::unix::ffi::OsStrExt::as_bytes(n).to_vec()).unwrap_or_default();
    let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let done = |key: u128, content: Content| Parsed {
        path: path.to_path_buf(),
        name: name.clone(),
        raw_name: raw_name.clone(),
        source: source.clone(),
        key,
        content,
    };
    let read = textorigin_store::failpoint::hit(&format!("read:{name}"))
        .map_err(Unreadable::Later)
        .and_then(|()| read_entry(path, max, ext == "jsonl"));
    let bytes = match read {
        Ok(b) => b,
        Err(Unreadable::Later(e)) => {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::error!(file = %source, error = %e, "cannot read; left in the spool");
            }
            return done(0, Content::Keep);
        }
        Err(Unreadable::Never(why)) => {
            let key = admission_key(&raw_name, why.as_bytes());
            return done(key, Content::Fails(format!("{source}: {why}")));
        }
    };
    if bytes.is_empty() && just_written(path) {
        // Written straight into `new/` (not through `tmp/`, as the contract asks) and
        // caught before its first bytes: one more look after the retry pause.
        tracing::debug!(file = %source, "empty and just written: looking again shortly");
        return done(0, Content::Keep);
    }
    let key = admission_key(&raw_name, &bytes);
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| name.clone());
    // A stored document names its spool file, not the path it had in `new/`, which is
    // gone once the file is admitted.
    match parse_bytes(bytes, &ext, &stem, &format!("spool:{name}"), max) {
        Ok(docs) if docs.is_empty() => done(key, Content::Fails(format!("{source}: no documents"))),
        Ok(docs) => done(
            key,
            Content::Docs(
                docs.into_iter()
                    .map(|d| {
                        d.map(|doc| {
                            let p = preparer.prepare(&doc.text);
                            (doc, p)
                        })
                    })
                    .collect(),
            ),
        ),
        Err(e) => done(key, Content::Fails(e.to_string())),
    }
}

/// Admits one parsed spool file on the apply thread: stores its documents not stored
/// yet, records failures.
pub(super) fn apply_file(dd: &mut DataDir, p: Parsed) -> Result<Outcome> {
    let Parsed { name, raw_name, source, key, content, .. } = p;
    let docs = match content {
        Content::Keep => return Ok(Outcome::Keep),
        Content::Fails(reason) => {
            if dd.store().admitted(key).map_err(DataDirError::from)?.is_some() {
                return Ok(Outcome::Failed(vec![format!("{reason} (recorded before)")]));
            }
            tracing::warn!(file = %source, %reason, "failed");
            dd.store()
                .put_failure(
                    Some(Admission { key, done: 0, total: 0, failed: 1 }),
                    &Failure { file: name, reason: reason.clone(), at_ms: now_ms() },
                )
                .map_err(DataDirError::from)?;
            return Ok(Outcome::Failed(vec![reason]));
        }
        Content::Docs(docs) => docs,
    };
    let before = dd.store().admitted(key).map_err(DataDirError::from)?.unwrap_or(Admission {
        key,
        done: 0,
        total: u32::MAX,
        failed: 0,
    });
    let (done, mut failed) = (before.done, before.failed);
    if before.total == 0 {
        return Ok(Outcome::Failed(vec![format!("{source}: failed before (see `textorigin failed`)")]));
    }
    if before.total != u32::MAX && done >= before.total {
        // Admitted before the last crash; only moving the file was missing.
        return Ok(if failed == 0 {
            Outcome::Done
        } else {
            Outcome::Failed(vec![format!(
                "{source}: {failed} document(s) failed (recorded before, see `textorigin failed`)"
            )])
        });
    }
    let total = docs.len() as u32;
    let mut reasons = Vec::new();
    let mut keys = DocumentKeys::new(&raw_name);
    for (i, d) in docs.into_iter().enumerate() {
        let i = i as u32;
        // Every document's key is counted, those admitted before included, so that a
        // repeated document gets the same occurrence number every time.
        let doc_key = d.as_ref().ok().map(|(doc, _)| keys.next(doc));
        if i < done {
            continue;
        }
        let admission = Admission { key, done: i + 1, total, failed };
        textorigin_store::failpoint::hit("admit.before-commit").io(|| "admission")?;
        let failure = match d {
            Ok((doc, prepared)) => {
                for w in &doc.warnings {
                    tracing::warn!(file = %source, warning = %w, "document stored with a warning");
                }
                let doc_key = doc_key.expect("a key for every document");
                let before = dd.store().admitted_document(doc_key).map_err(DataDirError::from)?;
                let stored = match before {
                    Some(seq) => {
                        tracing::info!(file = %source, document = %doc.name, id = seq, "stored before from a file of this name: skipped");
                        dd.store().put_admission(admission).map_err(DataDirError::from)
                    }
                    None => dd
                        .ingest_prepared(&doc, prepared, Admit { file: Some(admission), doc: Some(doc_key) })
                        .map(|_| ()),
                };
                match stored {
                    Ok(()) => None,
                    Err(DataDirError::Doc(e)) => Some(e.to_string()),
                    Err(e) => {
                        // A write error: leave the file; the next scan continues after what is stored.
                        tracing::error!(file = %source, error = %textorigin_store::error::chain(&e), "store write failed; file left in the spool");
                        return Ok(Outcome::Keep);
                    }
                }
            }
            Err(e) => Some(e.to_string()),
        };
        textorigin_store::failpoint::hit("admit.after-commit").io(|| "admission")?;
        if let Some(reason) = failure {
            tracing::warn!(file = %source, %reason, "document failed");
            failed += 1;
            dd.store()
                .put_failure(
                    Some(Admission { failed, ..admission }),
                    &Failure { file: name.clone(), reason: reason.clone(), at_ms: now_ms() },
                )
                .map_err(DataDirError::from)?;
            reasons.push(reason);
        }
    }
    if !reasons.is_empty() && failed < total {
        reasons.push(format!(
            "{source}: {} of {total} document(s) were stored; given again (fixed), the file stores only the others",
            total - failed
        ));
    }
    Ok(if reasons.is_empty() { Outcome::Done } else { Outcome::Failed(reasons) })
}
