//! textorigin from Python: the native module `textorigin._textorigin`, which
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
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use serde::Serialize;
use textorigin_core::neardup::Mode;
use textorigin_core::settings::Settings;
use textorigin_server::view::dedup;
use textorigin_server::view::{model, DocParts, ViewOptions};
use textorigin_store::error::chain;
use textorigin_store::ingest::{ingest_inputs, Event, IngestError, Input, StopAt};
use textorigin_store::input::from_json;
use textorigin_store::intake::Policy;
use textorigin_store::storage::datadir::DataDir;
use textorigin_store::storage::store::{DocMeta, Store, Via};

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

/// Locks one of a collection's parts; a lock poisoned by a panic in another thread
/// is the collection's failure.
fn lock<T>(m: &Mutex<T>) -> PyResult<MutexGuard<'_, T>> {
    m.lock().map_err(|_| error("the data directory failed in another thread"))
}

/// An open data directory (the writer: its lock is held until `close`).
#[pyclass(module = "textorigin._textorigin")]
pub struct Native {
    dd: Arc<Mutex<Option<DataDir>>>,
    /// The feed of the running ingestion, closed by `close` (which waits for the writer).
    feed: Mutex<Option<Arc<Feed>>>,
    /// The data directory's store, shared: views are read from it while the writer
    /// ingests the next batch (RocksDB reads are thread-safe). Dropped at `close`.
    store: Mutex<Option<Arc<Store>>>,
    path: PathBuf,
    /// Opened read-only ([`DataDir::open_read_for_query`]): beside a running daemon or
    /// another writer, nothing written, brought up to the stored documents by
    /// [`Native::catch_up`].
    read_only: bool,
}

impl Native {
    fn store(&self) -> PyResult<Arc<Store>> {
        let guard = lock(&self.store)?;
        guard.clone().ok_or_else(|| error(format!("{}: the collection is closed", self.path.display())))
    }

    /// A read-only collection is brought up to every document stored by the writer so
    /// far (its store opened again, the documents since applied to its private table);
    /// a writer's is up to date already.
    fn catch_up(&self) -> PyResult<()> {
        if !self.read_only {
            return Ok(());
        }
        let mut guard = self.open()?;
        let dd = guard.as_mut().expect("checked open");
        dd.catch_up_for_query().map_err(|e| error(chain(&e)))?;
        *lock(&self.store)? = Some(dd.shared_store());
        Ok(())
    }

    /// The store a page of an iteration reads: a read-only collection caught up at the
    /// first page (`after` 0), so that an iteration sees every document stored when it
    /// began.
    fn store_from(&self, py: Python<'_>, after: u64) -> PyResult<Arc<Store>> {
        if after == 0 {
            py.detach(|| self.catch_up())?;
        }
        self.store()
    }

    /// Refuses what writes in a read-only collection.
    fn writable(&self) -> PyResult<()> {
        match self.read_only {
            true => Err(error(format!(
                "{}: the collection is opened read-only (Collection(path, read_only=True)); open it without \
                 read_only, with no daemon or other writer on it, to store documents",
                self.path.display()
            ))),
            false => Ok(()),
        }
    }

    fn open(&self) -> PyResult<MutexGuard<'_, Option<DataDir>>> {
        let guard = lock(&self.dd)?;
        match guard.is_some() {
            true => Ok(guard),
            false => Err(error(format!("{}: the collection is closed", self.path.display()))),
        }
    }
}

/// What the results of stored documents are (`views`).
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
        Results::Summary => json(&dedup::summary(store, &v).map_err(|e| error(chain(&e)))?),
        _ => json(&v),
    }
}

#[pymethods]
impl Native {
    /// Opens (or creates) the data directory at `path` with `settings`, a JSON object
    /// of the command line's settings (`table_size`, `quotations`, ...); with
    /// `read_only`, opens an existing one without its lock, beside a daemon or another
    /// writer, as `textorigin query` does.
    #[new]
    #[pyo3(signature = (path, settings = None, read_only = false))]
    fn new(py: Python<'_>, path: PathBuf, settings: Option<String>, read_only: bool) -> PyResult<Self> {
        if read_only {
            if settings.is_some() {
                return Err(error("a collection opened read-only takes no settings: it has the directory's"));
            }
            let dd = py.detach(|| DataDir::open_read_for_query(&path)).map_err(|e| error(chain(&e)))?;
            let store = Mutex::new(Some(dd.shared_store()));
            return Ok(Native { dd: Arc::new(Mutex::new(Some(dd))), feed: Mutex::new(None), store, path, read_only });
        }
        let settings: Settings = match settings {
            Some(s) => serde_json::from_str(&s).map_err(|e| error(format!("settings: {e}")))?,
            None => Settings::default(),
        };
        let overrides = settings.typed().map_err(error)?;
        let dd =
            py.detach(|| DataDir::open_write(&path, &overrides, Policy::default())).map_err(|e| error(chain(&e)))?;
        let store = Mutex::new(Some(dd.shared_store()));
        Ok(Native { dd: Arc::new(Mutex::new(Some(dd))), feed: Mutex::new(None), store, path, read_only })
    }

    /// Ingests files and directories as the command line's `ingest` does, in every
    /// format it reads (text, HTML, JSON lines, WARC, Parquet, gzip and zstd),
    /// HTML as the collection reads it: the counts and the failures, as JSON. A file's
    /// documents stored before are not stored again unless `force`.
    #[pyo3(signature = (paths, threads, force = false))]
    fn ingest_files(&self, py: Python<'_>, paths: Vec<PathBuf>, threads: usize, force: bool) -> PyResult<String> {
        self.writable()?;
        if lock(&self.feed)?.as_ref().is_some_and(|f| f.is_open()) {
            return Err(error("another ingestion is running on this collection: finish it first"));
        }
        py.detach(|| {
            let mut guard = self.open()?;
            let dd = guard.as_mut().expect("checked open");
            let mut errors = Vec::new();
            let limits = textorigin_store::input::Limits::from(64 << 20);
            let s = textorigin_store::ingest::ingest(dd, &paths, limits, threads.max(1), force, |e| {
                if let textorigin_store::ingest::Event::Failed(m) = e {
                    errors.push(m);
                }
            })
            .map_err(|e| error(chain(&e)))?;
            json(&serde_json::json!({
                "stored": s.stored,
                "stored_before": s.skipped,
                "failed": s.failed,
                "errors": errors,
            }))
        })
    }

    /// Starts an ingestion: documents fed to it ([`Ingestion::feed`], JSON objects'
    /// text) are stored in order on `threads` preparation threads, the `n`th named
    /// `python:<first + n>` when it has no `id`; with `stop`, nothing after the first
    /// failure; a document stored before (by its admission key) is not stored again,
    /// its stored id given as its outcome, unless `force`. One at a time: it holds the
    /// writer until its feed is closed and what was fed is stored.
    #[pyo3(signature = (first, threads, stop = false, force = false))]
    fn ingestion(&self, py: Python<'_>, first: u64, threads: usize, stop: bool, force: bool) -> PyResult<Ingestion> {
        self.writable()?;
        let mut current = lock(&self.feed)?;
        if current.as_ref().is_some_and(|f| f.is_open()) {
            return Err(error("another ingestion is running on this collection: finish it first"));
        }
        // An ingestion closed a moment ago may still hold the writer: waited for
        // without the GIL, which its feeder may need to end.
        py.detach(|| self.open().map(drop))?;
        let (feed, batches) = Feed::new();
        let feed = Arc::new(feed);
        *current = Some(Arc::clone(&feed));
        Ok(Ingestion::start(Arc::clone(&self.dd), feed, batches, first, threads.max(1), stop, force))
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
            self.catch_up()?;
            let mut guard = self.open()?;
            let dd = guard.as_mut().expect("checked open");
            let doc = from_json(&line, "query", "query", dd.config().html).map_err(error)?;
            let q = dd.query(&doc).map_err(|e| error(chain(&e)))?;
            let v = model::document(dd.store(), DocParts::query(&doc, &q), ViewOptions::default())
                .map_err(|e| error(chain(&e)))?;
            json(&v)
        })
    }

    /// The view of a stored document as `show --json` prints it (its blocks' passages
    /// in their sources, its similarity to each): `#ID`, a name, or a number that is
    /// no name.
    fn show(&self, py: Python<'_>, name_or_id: String) -> PyResult<String> {
        py.detach(|| self.catch_up())?;
        let store = self.store()?;
        py.detach(|| {
            let seq = store.resolve(&name_or_id).map_err(|e| error(chain(&e)))?;
            json(&model::shown(&store, seq, ViewOptions::default()).map_err(|e| error(chain(&e)))?.0)
        })
    }

    /// A stored document's text (what its byte spans are of).
    fn text(&self, py: Python<'_>, name_or_id: String) -> PyResult<String> {
        py.detach(|| self.catch_up())?;
        let store = self.store()?;
        py.detach(|| {
            let seq = store.resolve(&name_or_id).map_err(|e| error(chain(&e)))?;
            store.text(seq).map_err(|e| error(chain(&e)))?.ok_or_else(|| error(format!("#{seq} has no stored text")))
        })
    }

    /// `show --side-by-side --json` with both texts (`text`, `source_text`): document
    /// `name_or_id` beside `source` (default: the source it copied the most words from).
    #[pyo3(signature = (name_or_id, source = None))]
    fn side_by_side(&self, py: Python<'_>, name_or_id: String, source: Option<String>) -> PyResult<String> {
        py.detach(|| self.catch_up())?;
        let store = self.store()?;
        py.detach(|| {
            let err = |e: &dyn std::error::Error| error(chain(e));
            let seq = store.resolve(&name_or_id).map_err(|e| err(&e))?;
            let origin = source.map(|s| store.resolve(&s)).transpose().map_err(|e| err(&e))?;
            let s = model::side_by_side(&store, seq, origin).map_err(|e| err(&e))?;
            let mut out = serde_json::to_value(&s).map_err(error)?;
            out["text"] = s.text.into();
            out["source_text"] = s.source_text.into();
            json(&out)
        })
    }

    /// The views of up to `n` stored documents after sequence number `after`, in order.
    fn export_after(&self, py: Python<'_>, after: u64, n: usize) -> PyResult<Vec<(u64, String)>> {
        let store = self.store_from(py, after)?;
        py.detach(|| page(&store, after, n, |meta| result(&store, meta.seq, Results::View)))
    }

    /// The decisions (`export --format decisions`) of up to `n` stored documents after
    /// sequence number `after`, in order, at thresholds `near` and `old`; with
    /// `attribute`, their Dolma attributes lines (`export --format attributes`) instead,
    /// the copied spans under that name.
    #[pyo3(signature = (after, n, near, old, attribute = None))]
    fn decisions_after(
        &self,
        py: Python<'_>,
        after: u64,
        n: usize,
        near: Option<f64>,
        old: f64,
        attribute: Option<String>,
    ) -> PyResult<Vec<(u64, String)>> {
        let store = self.store_from(py, after)?;
        let nd = store.neardup_config().map_err(|e| error(chain(&e)))?;
        let thresholds = dedup::Thresholds::of(&nd, near, Some(old)).map_err(error)?;
        py.detach(|| {
            // A decider per call: its memo only saves reads, its answers are the same.
            let mut decider = dedup::Decider::new(&store, thresholds);
            page(&store, after, n, |meta| {
                let opt = ViewOptions::default();
                let Some(name) = &attribute else {
                    let v = model::stored_document(&store, meta.seq, opt).map_err(|e| error(chain(&e)))?;
                    return json(&decider.decide(&v).map_err(|e| error(chain(&e)))?);
                };
                let (v, text) = model::stored_document_and_text(&store, meta.seq, opt).map_err(|e| error(chain(&e)))?;
                let d = decider.decide(&v).map_err(|e| error(chain(&e)))?;
                json(&dedup::attributes_line(&v, &text, name, &d))
            })
        })
    }

    /// The earlier near-duplicates (`neardups --json`, default verdict) of up to `n`
    /// stored documents after `after`, in order.
    fn near_duplicates_after(&self, py: Python<'_>, after: u64, n: usize) -> PyResult<Vec<(u64, String)>> {
        let store = self.store_from(py, after)?;
        py.detach(|| {
            page(&store, after, n, |meta| {
                json(&model::neardups(&store, meta.seq, Mode::Default, false).map_err(|e| error(chain(&e)))?)
            })
        })
    }

    /// The summary rows (`export --format csv`'s columns) of up to `n` stored documents
    /// after `after`, in order.
    fn summaries_after(&self, py: Python<'_>, after: u64, n: usize) -> PyResult<Vec<(u64, String)>> {
        let store = self.store_from(py, after)?;
        py.detach(|| {
            page(&store, after, n, |meta| {
                let v =
                    model::stored_document(&store, meta.seq, ViewOptions::default()).map_err(|e| error(chain(&e)))?;
                json(&dedup::summary(&store, &v).map_err(|e| error(chain(&e)))?)
            })
        })
    }

    /// The rows of `list --json` of up to `n` stored documents after `after`, in order.
    fn documents_after(&self, py: Python<'_>, after: u64, n: usize) -> PyResult<Vec<(u64, String)>> {
        let store = self.store_from(py, after)?;
        py.detach(|| {
            let origins = model::features(&store).map_err(|e| error(chain(&e)))?.origins;
            page(&store, after, n, |meta| json(&model::list_row(&store, meta, origins).map_err(|e| error(chain(&e)))?))
        })
    }

    /// `stats --json`.
    fn stats(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| {
            self.catch_up()?;
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
            // A running ingestion stores what it was fed and lets the writer go.
            if let Some(feed) = lock(&self.feed)?.take() {
                feed.close();
            }
            // The shared store goes first: the last holder of it closes RocksDB.
            lock(&self.store)?.take();
            let mut guard = lock(&self.dd)?;
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
        if let Some(feed) = self.feed.get_mut().ok().and_then(Option::take) {
            feed.close();
        }
        if let Ok(store) = self.store.get_mut() {
            store.take();
        }
        // A closed ingestion still stores what it was fed: the lock waits for it.
        let dd = self.dd.lock().ok().and_then(|mut dd| dd.take());
        if let Some(dd) = dd {
            if let Err(e) = dd.close() {
                eprintln!("textorigin: closing {} failed: {}", self.path.display(), chain(&e));
            }
        }
    }
}

/// The input of an ingestion: batches of documents (JSON text), two at most waiting.
/// Closed (its sender dropped) by [`Ingestion::close`] or the collection's `close`;
/// the ingestion thread holds the only receiver, so that feeding an ingestion that
/// stopped fails instead of waiting.
struct Feed {
    tx: Mutex<Option<Sender<Vec<String>>>>,
}

impl Feed {
    fn new() -> (Feed, Receiver<Vec<String>>) {
        let (tx, rx) = crossbeam_channel::bounded(2);
        (Feed { tx: Mutex::new(Some(tx)) }, rx)
    }

    fn sender(&self) -> Option<Sender<Vec<String>>> {
        self.tx.lock().ok()?.clone()
    }

    fn is_open(&self) -> bool {
        self.tx.lock().is_ok_and(|tx| tx.is_some())
    }

    fn close(&self) {
        if let Ok(mut tx) = self.tx.lock() {
            tx.take();
        }
    }
}

/// What an ingestion says of a document: its id, or why it failed.
type Outcome = (Option<u64>, String);

/// Up to `n` stored documents after sequence number `after`, in order, each with what
/// `f` makes of it (the pages `export`, `decisions` and `documents` read).
fn page(
    store: &Store,
    after: u64,
    n: usize,
    mut f: impl FnMut(&DocMeta) -> PyResult<String>,
) -> PyResult<Vec<(u64, String)>> {
    let mut out = Vec::with_capacity(n);
    for meta in store.docs_from(after + 1).take(n) {
        let meta = meta.map_err(|e| error(chain(&e)))?;
        out.push((meta.seq, f(&meta)?));
    }
    Ok(out)
}

/// The input name of the rows Python gives (their admission keys', as a file's name is
/// on the command line).
const PYTHON_INPUT: &str = "python";

/// Where row `name` (`python:N`) came from, as errors name it: with the row's own `id`
/// when it has one (a string's value or a number's text), so that a failure points at
/// the dataset's row.
fn row_source(name: &str, line: &str) -> String {
    #[derive(serde::Deserialize)]
    struct Id<'a> {
        #[serde(borrow, default)]
        id: Option<&'a serde_json::value::RawValue>,
    }
    let id = serde_json::from_str::<Id<'_>>(line)
        .ok()
        .and_then(|r| r.id)
        .map(|raw| serde_json::from_str::<String>(raw.get()).unwrap_or_else(|_| raw.get().to_string()));
    match id {
        Some(id) if id != "null" => format!("{name} (id {id})"),
        _ => name.to_string(),
    }
}

/// A running ingestion (`Native.ingestion`): one `ingest_inputs` on a thread of its
/// own over every batch fed to it, so the preparation threads never wait at a batch's
/// end for the next one; each document's outcome is taken as soon as it is stored.
#[pyclass(module = "textorigin._textorigin")]
pub struct Ingestion {
    feed: Arc<Feed>,
    outcomes: Receiver<Outcome>,
    /// The thread; its result is why the ingestion stopped (`None`: it did not).
    thread: Mutex<Option<JoinHandle<Option<String>>>>,
}

impl Ingestion {
    fn start(
        dd: Arc<Mutex<Option<DataDir>>>,
        feed: Arc<Feed>,
        batches: Receiver<Vec<String>>,
        first: u64,
        threads: usize,
        stop: bool,
        force: bool,
    ) -> Ingestion {
        let (tx, outcomes) = crossbeam_channel::unbounded();
        let thread = std::thread::Builder::new().name("ingest".into()).spawn(move || {
            let mut guard = match dd.lock() {
                Ok(guard) => guard,
                Err(_) => return Some("the data directory failed in another thread".to_string()),
            };
            let Some(dd) = guard.as_mut() else { return Some("the collection is closed".to_string()) };
            // The rows are the documents of one input named `python`: each gets the
            // command line's admission key (that name, its own name, text, URL and
            // date), so a row stored before is not stored again.
            let html = dd.config().html;
            let rows = batches.into_iter().flatten().zip(first..).map(move |(line, n)| {
                let name = format!("python:{n}");
                Input::Doc(from_json(&line, &name, &row_source(&name, &line), html))
            });
            let inputs = std::iter::once(Input::File(Ok(PYTHON_INPUT.into()))).chain(rows);
            let stop = StopAt { failure: stop, interrupt: None };
            let run = ingest_inputs(dd, inputs, Via::Python, threads, force, stop, |e| {
                let _ = match e {
                    Event::Stored { seq, .. } | Event::Skipped(seq) => tx.send((Some(seq), String::new())),
                    Event::Failed(why) => tx.send((None, why)),
                    Event::File | Event::Warning(_) => Ok(()),
                };
            });
            match run {
                Ok(_) => None,
                Err(IngestError::DataDir(e)) => {
                    Some(format!("{}; stopping: the table is ahead of the store, the next open recovers it", chain(&e)))
                }
                Err(e) => Some(e.to_string()),
            }
        });
        let thread = Mutex::new(Some(thread.expect("spawn the ingestion thread")));
        Ingestion { feed, outcomes, thread }
    }
}

#[pymethods]
impl Ingestion {
    /// Hands a batch of documents to the ingestion, waiting while two wait already;
    /// false when it takes no more (closed, or stopped at a failure).
    fn feed(&self, py: Python<'_>, lines: Vec<String>) -> bool {
        let Some(tx) = self.feed.sender() else { return false };
        py.detach(move || tx.send(lines).is_ok())
    }

    /// No more documents: what was fed is still stored.
    fn close(&self) {
        self.feed.close();
    }

    /// The outcomes of the next documents stored, in order, (id, "") or (None, why it
    /// failed): `most` of them, or fewer when the ingestion ended or `wait` seconds
    /// passed after the first (reading results a few at a time costs more than it
    /// saves). `None` once the ingestion ended and every outcome was taken; an `Error`
    /// if it stopped on a failure of the data directory.
    #[pyo3(signature = (most = 512, wait = 0.05))]
    fn take(&self, py: Python<'_>, most: usize, wait: f64) -> PyResult<Option<Vec<Outcome>>> {
        let mut out = Vec::new();
        let mut until = None;
        while out.len() < most.max(1) {
            let tick = Instant::now() + Duration::from_millis(100);
            let deadline = until.map_or(tick, |u: Instant| u.min(tick));
            match py.detach(|| self.outcomes.recv_deadline(deadline)) {
                Ok(o) => {
                    out.push(o);
                    until.get_or_insert_with(|| Instant::now() + Duration::from_secs_f64(wait.max(0.0)));
                }
                Err(RecvTimeoutError::Timeout) if until.is_some_and(|u| Instant::now() >= u) => break,
                Err(RecvTimeoutError::Timeout) => py.check_signals()?,
                Err(RecvTimeoutError::Disconnected) if out.is_empty() => return self.finish(py).map(|()| None),
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        Ok(Some(out))
    }

    /// Closes the feed and waits for the ingestion to end; an `Error` if it stopped on
    /// a failure of the data directory. Outcomes not taken are dropped.
    fn finish(&self, py: Python<'_>) -> PyResult<()> {
        self.feed.close();
        let thread = self.thread.lock().map_err(|_| error("the ingestion failed in another thread"))?.take();
        match thread.map(|t| py.detach(|| t.join())) {
            None | Some(Ok(None)) => Ok(()),
            Some(Ok(Some(why))) => Err(error(why)),
            Some(Err(_)) => Err(error("the ingestion thread died")),
        }
    }
}

/// An ingestion dropped unfinished stores what it was fed, then lets the writer go.
impl Drop for Ingestion {
    fn drop(&mut self) {
        self.feed.close();
        if let Some(t) = self.thread.get_mut().ok().and_then(Option::take) {
            let _ = t.join();
        }
    }
}

#[pymodule]
fn _textorigin(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Native>()?;
    m.add_class::<Ingestion>()?;
    m.add("Error", m.py().get_type::<Error>())?;
    Ok(())
}
