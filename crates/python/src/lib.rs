//! textorigin from Python (issue 24): the native module `textorigin._textorigin`, which
//! the Python package `textorigin` (`python/textorigin/`) wraps into its `Collection`.
//!
//! No second implementation: a data directory is opened, documents are parsed
//! (`input::from_json`, the JSON lines parser of `ingest`), prepared on the preparation
//! threads and applied in order (`ingest::ingest_inputs`, what `ingest` runs), and every
//! result is the view `show --json` prints (`view::model`), as JSON text that the
//! Python side decodes. The GIL is released while documents are read, analysed and
//! viewed, so other Python threads run meanwhile. Errors are `textorigin.Error` with
//! the message the command line prints.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use serde::Serialize;
use textorigin_core::settings::Settings;
use textorigin_server::view::dedup;
use textorigin_server::view::{model, DocParts, ViewOptions};
use textorigin_store::error::chain;
use textorigin_store::ingest::{ingest_inputs, Event, IngestError, Input};
use textorigin_store::input::from_json;
use textorigin_store::storage::datadir::DataDir;
use textorigin_store::storage::store::Store;

pyo3::create_exception!(
    _textorigin,
    Error,
    PyException,
    "A textorigin error, with the message the command line prints."
);

fn error(message: impl std::fmt::Display) -> PyErr {
    Error::new_err(message.to_string())
}

/// JSON text of a view (the fields of `export`; Python's dicts do not keep an order
/// that matters, so they are written as declared, without `export`'s sorting).
fn json<T: Serialize>(v: &T) -> PyResult<String> {
    serde_json::to_string(v).map_err(error)
}

/// An open data directory (the writer: its lock is held until `close`).
#[pyclass(module = "textorigin._textorigin")]
pub struct Native {
    dd: Mutex<Option<DataDir>>,
    /// The data directory's store, shared: views are read from it while the writer
    /// ingests the next batch (RocksDB reads are thread-safe). Dropped at `close`.
    store: Mutex<Option<Arc<Store>>>,
    path: PathBuf,
}

impl Native {
    fn store(&self) -> PyResult<Arc<Store>> {
        let guard = self.store.lock().map_err(|_| error("the data directory failed in another thread"))?;
        guard.clone().ok_or_else(|| error(format!("{}: the collection is closed", self.path.display())))
    }

    fn open(&self) -> PyResult<MutexGuard<'_, Option<DataDir>>> {
        let guard = self.dd.lock().map_err(|_| error("the data directory failed in another thread"))?;
        match guard.is_some() {
            true => Ok(guard),
            false => Err(error(format!("{}: the collection is closed", self.path.display()))),
        }
    }
}

/// What `ingest_lines` returns of a stored document.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Results {
    /// Its view (`show --json`).
    View,
    /// The row of `export --format csv`.
    Summary,
    /// `{"id": ID}` alone: nothing read back.
    Id,
}

impl Results {
    fn parse(s: &str) -> PyResult<Results> {
        match s {
            "view" => Ok(Results::View),
            "summary" => Ok(Results::Summary),
            "id" => Ok(Results::Id),
            _ => Err(pyo3::exceptions::PyValueError::new_err(format!(
                "results must be 'view', 'summary' or 'id', not {s:?}"
            ))),
        }
    }
}

/// A stored document's result.
fn result(store: &Store, seq: u64, what: Results) -> PyResult<String> {
    if what == Results::Id {
        return Ok(format!("{{\"id\":{seq}}}"));
    }
    let v = model::stored_document(store, seq, ViewOptions::default()).map_err(|e| error(chain(&e)))?;
    match what {
        Results::Summary => json(&dedup::summary(&v)),
        _ => json(&v),
    }
}

#[pymethods]
impl Native {
    /// Opens (or creates) the data directory at `path` with `settings`, a JSON object
    /// of the command line's settings (`table_size`, `quotations`, ...).
    #[new]
    #[pyo3(signature = (path, settings = None))]
    fn new(py: Python<'_>, path: PathBuf, settings: Option<String>) -> PyResult<Self> {
        let settings: Settings = match settings {
            Some(s) => serde_json::from_str(&s).map_err(|e| error(format!("settings: {e}")))?,
            None => Settings::default(),
        };
        let overrides = settings.typed().map_err(error)?;
        let dd = py.detach(|| DataDir::open_write(&path, &overrides)).map_err(|e| error(chain(&e)))?;
        let store = Mutex::new(Some(dd.shared_store()));
        Ok(Native { dd: Mutex::new(Some(dd)), store, path })
    }

    /// Ingests documents given as JSON objects' text, in order, on `threads`
    /// preparation threads; the `n`th is named `python:<first + n>` when it has no
    /// `id`. Returns, per document, (its id, "") or (None, why it failed); with `stop`,
    /// nothing after the first failure (the list ends there). The results are read
    /// with [`Native::views`], which may run while the next batch is ingested.
    #[pyo3(signature = (lines, first, threads, stop = false))]
    fn ingest_lines(
        &self,
        py: Python<'_>,
        lines: Vec<String>,
        first: u64,
        threads: usize,
        stop: bool,
    ) -> PyResult<Vec<(Option<u64>, String)>> {
        py.detach(|| {
            let mut guard = self.open()?;
            let dd = guard.as_mut().expect("checked open");
            let inputs = lines.into_iter().zip(first..).map(|(line, n)| {
                let name = format!("python:{n}");
                Input::Doc(from_json(&line, &name, &name))
            });
            let mut out = Vec::new();
            let run = ingest_inputs(dd, inputs, threads.max(1), false, stop, |e| match e {
                Event::Stored(seq) => out.push((Some(seq), String::new())),
                Event::Failed(why) => out.push((None, why)),
                Event::File | Event::Skipped | Event::Warning(_) => {}
            });
            match run {
                Ok(_) => Ok(out),
                Err(IngestError::DataDir(e)) => Err(error(format!(
                    "{}; stopping: the table is ahead of the store, the next open recovers it",
                    chain(&e)
                ))),
                Err(e) => Err(error(e)),
            }
        })
    }

    /// The results of stored documents (`results`: "view", "summary" or "id"), as JSON
    /// text, built on `threads` threads; reads only, beside an ingestion.
    #[pyo3(signature = (seqs, results, threads))]
    fn views(&self, py: Python<'_>, seqs: Vec<u64>, results: &str, threads: usize) -> PyResult<Vec<String>> {
        let what = Results::parse(results)?;
        let store = self.store()?;
        py.detach(|| {
            let store = &*store;
            let per = seqs.len().div_ceil(threads.max(1)).max(1);
            std::thread::scope(|scope| {
                let parts: Vec<_> = seqs
                    .chunks(per)
                    .map(|part| scope.spawn(move || part.iter().map(|&seq| result(store, seq, what)).collect()))
                    .collect();
                let mut out = Vec::with_capacity(seqs.len());
                for p in parts {
                    let part: PyResult<Vec<String>> = p.join().unwrap_or_else(|_| Err(error("a view thread died")));
                    out.extend(part?);
                }
                Ok(out)
            })
        })
    }

    /// Analyses a document (a JSON object's text) without storing it: its view.
    fn query(&self, py: Python<'_>, line: String) -> PyResult<String> {
        py.detach(|| {
            let mut guard = self.open()?;
            let dd = guard.as_mut().expect("checked open");
            let doc = from_json(&line, "query", "query").map_err(error)?;
            let q = dd.query(&doc).map_err(|e| error(chain(&e)))?;
            let v = model::document(dd.store(), DocParts::query(&doc, &q), ViewOptions::default())
                .map_err(|e| error(chain(&e)))?;
            json(&v)
        })
    }

    /// The view of a stored document: `#ID`, a name, or a number that is no name.
    fn show(&self, py: Python<'_>, name_or_id: String) -> PyResult<String> {
        let store = self.store()?;
        py.detach(|| {
            let seq = store.resolve(&name_or_id).map_err(|e| error(chain(&e)))?;
            result(&store, seq, Results::View)
        })
    }

    /// The views of up to `n` stored documents after sequence number `after`, in order.
    fn export_after(&self, py: Python<'_>, after: u64, n: usize) -> PyResult<Vec<(u64, String)>> {
        let store = self.store()?;
        py.detach(|| {
            let mut out = Vec::with_capacity(n);
            for meta in store.docs_from(after + 1).take(n) {
                let seq = meta.map_err(|e| error(chain(&e)))?.seq;
                out.push((seq, result(&store, seq, Results::View)?));
            }
            Ok(out)
        })
    }

    /// `stats --json`.
    fn stats(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| {
            let guard = self.open()?;
            let dd = guard.as_ref().expect("checked open");
            let v = model::stats(dd.store(), dd.table(), &dd.indexes(), dd.config(), Path::new(&self.path))
                .map_err(|e| error(chain(&e)))?;
            json(&v)
        })
    }

    /// Closes the data directory (flushes the table, releases the lock); again: nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| {
            // The shared store goes first: the last holder of it closes RocksDB.
            self.store.lock().map_err(|_| error("the data directory failed in another thread"))?.take();
            let mut guard = self.dd.lock().map_err(|_| error("the data directory failed in another thread"))?;
            match guard.take() {
                Some(dd) => dd.close().map_err(|e| error(chain(&e))),
                None => Ok(()),
            }
        })
    }
}

/// A collection dropped without `close` (garbage collected, or the interpreter ending)
/// is closed here, so that its table is not left marked in use (which would ask for a
/// `rebuild` at the next open). An error can only be reported to the log.
impl Drop for Native {
    fn drop(&mut self) {
        if let Ok(store) = self.store.get_mut() {
            store.take();
        }
        if let Some(dd) = self.dd.get_mut().ok().and_then(Option::take) {
            if let Err(e) = dd.close() {
                eprintln!("textorigin: closing {} failed: {}", self.path.display(), chain(&e));
            }
        }
    }
}

#[pymodule]
fn _textorigin(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Native>()?;
    m.add("Error", m.py().get_type::<Error>())?;
    Ok(())
}
