//! Batch ingestion: files and directories in the order given, read by a reader thread,
//! their documents prepared on parser threads and applied and stored in order on the
//! calling thread ([`crate::pipeline`]). The result equals applying them one by one.

use std::path::PathBuf;

use crate::input::{expand_paths, read_docs, InputDoc, InputError};
use crate::pipeline::{ordered_map, WorkerDied};
use crate::storage::datadir::{DataDir, DataDirError, Prepared, Preparer};

/// What happened to one input, in input order.
#[derive(Debug)]
pub enum Event {
    /// A file was read (or could not be); its documents follow.
    File,
    /// A document was stored.
    Stored,
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
    /// Bytes of text of the stored documents.
    pub text_bytes: u64,
}

/// An input: a file boundary, or a document (or why it is not one).
pub enum Input {
    File(Option<InputError>),
    Doc(Result<InputDoc, InputError>),
}

/// A prepared input: the document with its preparation and the seconds it took.
enum Ready {
    File(Option<InputError>),
    Doc(Result<Box<(InputDoc, Prepared, f64)>, InputError>),
}

/// The inputs' files and documents in order, read as they are taken (a JSONL file a
/// line at a time: the memory bound holds for a file of any size).
pub fn inputs(paths: &[PathBuf], max: u64) -> impl Iterator<Item = Input> + Send + '_ {
    expand_paths(paths).into_iter().flat_map(move |f| -> Box<dyn Iterator<Item = Input> + Send> {
        match f.and_then(|path| read_docs(&path, max)) {
            Ok(docs) => Box::new(std::iter::once(Input::File(None)).chain(docs.map(Input::Doc))),
            Err(e) => Box::new(std::iter::once(Input::File(Some(e)))),
        }
    })
}

fn prepare(preparer: &mut Preparer, item: Input) -> Ready {
    match item {
        Input::File(e) => Ready::File(e),
        Input::Doc(d) => Ready::Doc(d.map(|doc| {
            let t = std::time::Instant::now();
            let p = preparer.prepare(&doc.text);
            Box::new((doc, p, t.elapsed().as_secs_f64()))
        })),
    }
}

/// Ingests `paths` into `dd` with `threads` preparation threads, telling `event` about
/// every file and document in order. Stops at the first store failure that leaves the
/// table ahead of the store (the data directory is then poisoned: the error says so);
/// other failures are reported and skipped.
pub fn ingest(
    dd: &mut DataDir,
    paths: &[PathBuf],
    max_doc_bytes: u64,
    threads: usize,
    mut event: impl FnMut(Event),
) -> Result<Summary, IngestError> {
    let mut summary = Summary::default();
    let mut fatal = None;
    let preparer = dd.preparer();
    let run = ordered_map(threads, &preparer, inputs(paths, max_doc_bytes), prepare, |ready| {
        match ready {
            Ready::File(None) => event(Event::File),
            Ready::File(Some(e)) => {
                summary.failed += 1;
                event(Event::File);
                event(Event::Failed(e.to_string()));
            }
            Ready::Doc(Err(e)) => {
                summary.failed += 1;
                event(Event::Failed(e.to_string()));
            }
            Ready::Doc(Ok(ready)) => {
                let (doc, prepared, seconds) = *ready;
                for w in &doc.warnings {
                    event(Event::Warning(w.clone()));
                }
                dd.add_prepare_time(seconds);
                match dd.ingest_prepared(&doc, prepared, None) {
                    Ok(_) => {
                        summary.stored += 1;
                        summary.text_bytes += doc.text.len() as u64;
                        event(Event::Stored);
                    }
                    Err(e) if dd.poisoned() => {
                        fatal = Some(e);
                        return false;
                    }
                    Err(e) => {
                        summary.failed += 1;
                        event(Event::Failed(crate::error::chain(&e)));
                    }
                }
            }
        }
        true
    });
    match fatal {
        Some(e) => Err(e.into()),
        None => Ok(run.map(|()| summary)?),
    }
}
