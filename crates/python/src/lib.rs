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
use std::sync::{Mutex, MutexGuard};

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
    path: PathBuf,
}

impl Native {
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
fn result(dd: &DataDir, seq: u64, what: Results) -> PyResult<String> {
    if what == Results::Id {
        return Ok(format!("{{\"id\":{seq}}}"));
    }
    let v = model::stored_document(dd.store(), seq, ViewOptions::default()).map_err(|e| error(chain(&e)))?;
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
        Ok(Native { dd: Mutex::new(Some(dd)), path })
    }

    /// Ingests documents given as JSON objects' text, in order, on `threads`
    /// preparation threads; the `n`th is named `python:<first + n>` when it has no
    /// `id`. Returns, per document, (true, its result: `results` is "view", "summary"
    /// or "id") or (false, why it failed); with `stop`, nothing after the first failure
    /// (the list ends there).
    #[pyo3(signature = (lines, first, threads, results = "view", stop = false))]
    fn ingest_lines(
        &self,
        py: Python<'_>,
        lines: Vec<String>,
        first: u64,
        threads: usize,
        results: &str,
        stop: bool,
    ) -> PyResult<Vec<(bool, String)>> {
        let what = Results::parse(results)?;
        py.detach(|| {
            let mut guard = self.open()?;
            let dd = guard.as_mut().expect("checked open");
            let inputs = lines.into_iter().zip(first..).map(|(line, n)| {
                let name = format!("python:{n}");
                Input::Doc(from_json(&line, &name, &name))
            });
            // Stored documents are viewed after the batch: (place in `out`, sequence number).
            let (mut out, mut stored) = (Vec::new(), Vec::new());
            let run = ingest_inputs(dd, inputs, threads.max(1), false, stop, |e| match e {
                Event::Stored(seq) => {
                    stored.push((out.len(), seq));
                    out.push((true, String::new()));
                }
                Event::Failed(why) => out.push((false, why)),
                Event::File | Event::Skipped | Event::Warning(_) => {}
            });
            match run {
                Ok(_) => {}
                Err(IngestError::DataDir(e)) => {
                    return Err(error(format!(
                        "{}; stopping: the table is ahead of the store, the next open recovers it",
                        chain(&e)
                    )))
                }
                Err(e) => return Err(error(e)),
            }
            // The views, on as many threads as prepared the documents (they only read).
            let dd = &*dd;
            let per = stored.len().div_ceil(threads.max(1)).max(1);
            let views: Vec<PyResult<Vec<(usize, String)>>> = std::thread::scope(|scope| {
                let parts: Vec<_> = stored
                    .chunks(per)
                    .map(|part| {
                        scope.spawn(move || part.iter().map(|&(at, seq)| Ok((at, result(dd, seq, what)?))).collect())
                    })
                    .collect();
                parts.into_iter().map(|p| p.join().unwrap_or_else(|_| Err(error("a view thread died")))).collect()
            });
            for part in views {
                for (at, view) in part? {
                    out[at].1 = view;
                }
            }
            Ok(out)
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
        py.detach(|| {
            let guard = self.open()?;
            let dd = guard.as_ref().expect("checked open");
            let seq = dd.store().resolve(&name_or_id).map_err(|e| error(chain(&e)))?;
            result(dd, seq, Results::View)
        })
    }

    /// The views of up to `n` stored documents after sequence number `after`, in order.
    fn export_after(&self, py: Python<'_>, after: u64, n: usize) -> PyResult<Vec<(u64, String)>> {
        py.detach(|| {
            let guard = self.open()?;
            let dd = guard.as_ref().expect("checked open");
            let mut out = Vec::with_capacity(n);
            for meta in dd.store().docs_from(after + 1).take(n) {
                let seq = meta.map_err(|e| error(chain(&e)))?.seq;
                out.push((seq, result(dd, seq, Results::View)?));
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
            let mut guard = self.dd.lock().map_err(|_| error("the data directory failed in another thread"))?;
            match guard.take() {
                Some(dd) => dd.close().map_err(|e| error(chain(&e))),
                None => Ok(()),
            }
        })
    }
}

#[pymodule]
fn _textorigin(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Native>()?;
    m.add("Error", m.py().get_type::<Error>())?;
    Ok(())
}
