//! Batch ingestion: files and directories in the order given, read by a reader thread,
//! their documents prepared on parser threads and applied and stored in order on the
//! calling thread ([`crate::pipeline`]). The result equals applying them one by one.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::input::{expand_paths, read_docs_counting, InputDoc, InputError, Limits};
use crate::intake::file::{Admitted, FileAdmitting, Records};
use crate::pipeline::{ordered_map, WorkerDied};
use crate::storage::datadir::{Budget, DataDir, DataDirError, Prepared, Preparer};
use crate::storage::store::{key_name, Via};
use crate::telemetry::StageTimes;

/// What happened to one input, in input order.
#[derive(Debug)]
pub enum Event {
    /// A file was read (or could not be); its documents follow.
    File,
    /// A document was stored, with this sequence number; `times` are the data
    /// directory's seconds per stage since it was opened, this document's included.
    Stored { seq: u64, times: StageTimes },
    /// A document was stored before (its admission key, `--force` to store it again),
    /// with the sequence number it was stored under.
    Skipped(u64),
    /// A document's warning (e.g. invalid UTF-8 replaced).
    Warning(String),
    /// A file or document failed and was skipped.
    Failed(String),
}

/// Why a run stopped.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The data directory failed (a store write: the table is then ahead of the store).
    #[error(transparent)]
    DataDir(#[from] DataDirError),
    /// A preparation thread panicked (a bug): the documents after it were not stored.
    #[error(transparent)]
    Worker(#[from] WorkerDied),
}

/// Counts of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    pub stored: u64,
    pub failed: u64,
    /// Documents stored before, not stored again.
    pub skipped: u64,
    /// Bytes of text of the stored documents.
    pub text_bytes: u64,
    /// Stopped by the interrupt flag before the inputs' end (revisions left queued for
    /// the next run).
    pub interrupted: bool,
}

/// An input: a file boundary (its path, or why it cannot be read), or a document (or
/// why it is not one).
pub enum Input {
    File(Result<PathBuf, InputError>),
    Doc(Result<InputDoc, InputError>),
}

/// A prepared input: the document with its preparation and the seconds it took.
enum Ready {
    File(Result<PathBuf, InputError>),
    Doc(Result<Box<(InputDoc, Prepared, f64)>, InputError>),
}

/// The inputs' files and documents in order, read as they are taken (a JSONL file a
/// line at a time: the memory bound holds for a file of any size).
pub fn inputs(paths: &[PathBuf], limits: impl Into<Limits>) -> impl Iterator<Item = Input> + Send {
    inputs_of(expand_paths(paths), limits, None)
}

/// [`inputs`] of files already found ([`expand_paths`]), adding the bytes read from
/// them to `read` as they are read.
pub fn inputs_of(
    files: Vec<Result<PathBuf, InputError>>,
    limits: impl Into<Limits>,
    read: Option<Arc<AtomicU64>>,
) -> impl Iterator<Item = Input> + Send {
    let limits = limits.into();
    files.into_iter().flat_map(move |f| -> Box<dyn Iterator<Item = Input> + Send> {
        match f.and_then(|path| Ok((read_docs_counting(&path, limits, read.clone())?, path))) {
            Ok((docs, path)) => Box::new(std::iter::once(Input::File(Ok(path))).chain(docs.map(Input::Doc))),
            Err(e) => Box::new(std::iter::once(Input::File(Err(e)))),
        }
    })
}

fn prepare(preparer: &mut Preparer, item: Input) -> Ready {
    match item {
        Input::File(f) => Ready::File(f),
        Input::Doc(d) => Ready::Doc(d.map(|doc| {
            let t = std::time::Instant::now();
            let p = preparer.prepare(&doc.text);
            Box::new((doc, p, t.elapsed().as_secs_f64()))
        })),
    }
}

/// Ingests `paths` into `dd` with `threads` preparation threads, telling `event` about
/// every file and document in order. A document stored before (by its admission key,
/// [`crate::storage::store::document_key`]: the same file name and content) is skipped unless `force`. Stops
/// at the first store failure that leaves the table ahead of the store (the data
/// directory is then poisoned: the error says so); other failures are reported and
/// skipped. A file that holds no document is a warning. HTML is read as `dd`'s
/// configuration says, whatever `limits` says.
pub fn ingest(
    dd: &mut DataDir,
    paths: &[PathBuf],
    limits: impl Into<Limits>,
    threads: usize,
    force: bool,
    event: impl FnMut(Event),
) -> Result<Summary, IngestError> {
    // HTML is read as the data directory says.
    let limits = Limits { html: dd.config().html, ..limits.into() };
    ingest_inputs(dd, inputs(paths, limits), Via::Ingest, threads, force, StopAt::default(), event)
}

/// When an ingestion stops before its inputs' end (by default: at neither).
#[derive(Debug, Clone, Copy, Default)]
pub struct StopAt<'a> {
    /// At the first document that fails: nothing after it is stored.
    pub failure: bool,
    /// Once this is set (a signal): nothing more is stored; the documents before stay,
    /// [`Summary::interrupted`] says so, and running the same command again stores the
    /// rest (those stored are skipped by their keys).
    pub interrupt: Option<&'a AtomicBool>,
}

/// [`ingest`] of `inputs` as they come: files' boundaries and their documents, or
/// documents alone (the Python package's), which then have no admission key and are
/// always stored. `stop` says when to stop early. `via` is the way they come in (`--take-over`).
pub fn ingest_inputs(
    dd: &mut DataDir,
    inputs: impl Iterator<Item = Input> + Send,
    via: Via,
    threads: usize,
    force: bool,
    stop: StopAt<'_>,
    mut event: impl FnMut(Event),
) -> Result<Summary, IngestError> {
    let mut summary = Summary::default();
    let mut fatal = None;
    let preparer = dd.preparer();
    let start = |name: Option<&[u8]>| FileAdmitting::start(name, via, Records::Batch { force });
    // The file being read (its path), or the documents that came without one.
    let mut file: (Option<PathBuf>, FileAdmitting) = (None, start(None));
    let empty_warning = |file: &(Option<PathBuf>, FileAdmitting), event: &mut dyn FnMut(Event)| {
        if let (Some(path), 0) = (&file.0, file.1.seen()) {
            event(Event::Warning(format!("{}: no documents", path.display())));
        }
    };
    let run = ordered_map(threads, &preparer, inputs, prepare, |ready| {
        if stop.interrupt.is_some_and(|i| i.load(Ordering::Relaxed)) {
            summary.interrupted = true;
            return false;
        }
        let (doc, prepared, seconds) = match ready {
            Ready::File(f) => {
                empty_warning(&file, &mut event);
                event(Event::File);
                file = match f {
                    Ok(path) => {
                        let admitting = start(Some(key_name(&path)));
                        (Some(path), admitting)
                    }
                    Err(e) => {
                        summary.failed += 1;
                        event(Event::Failed(e.to_string()));
                        (None, start(None))
                    }
                };
                return true;
            }
            Ready::Doc(Err(e)) => (Err(e), None, 0.0),
            Ready::Doc(Ok(ready)) => {
                let (doc, prepared, seconds) = *ready;
                (Ok(doc), Some(prepared), seconds)
            }
        };
        let warnings = |event: &mut dyn FnMut(Event)| {
            for w in doc.iter().flat_map(|d| &d.warnings) {
                event(Event::Warning(w.clone()));
            }
        };
        match file.1.doc(dd, doc.as_ref(), prepared, seconds) {
            Ok(Admitted::Stored(meta)) => {
                warnings(&mut event);
                summary.stored += 1;
                summary.text_bytes += meta.text_bytes;
                event(Event::Stored { seq: meta.seq, times: dd.stage_times() });
                true
            }
            Ok(Admitted::Before(seq)) => {
                summary.skipped += 1;
                event(Event::Skipped(seq));
                true
            }
            Ok(Admitted::Failed(reason)) => {
                warnings(&mut event);
                summary.failed += 1;
                event(Event::Failed(reason));
                !stop.failure
            }
            Ok(Admitted::Earlier) => true,
            Err(e) => {
                fatal = Some(e.into_inner());
                false
            }
        }
    });
    if fatal.is_none() && run.is_ok() && !summary.interrupted {
        empty_warning(&file, &mut event);
        // The revisions left in the queue by take-overs beyond their budget, done now:
        // a run ends with every result revised.
        if let Err(e) = dd.drain_revisions(Budget::UNLIMITED) {
            fatal = Some(e);
        }
    }
    match fatal {
        Some(e) => Err(e.into()),
        None => Ok(run.map(|()| summary)?),
    }
}
