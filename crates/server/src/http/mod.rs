//! The daemon's HTTP inspector (`serve --http ADDR`): the inspector's views over HTTP
//! from the same data directory, text queries, and submissions through the spool.
//!
//! **Why a small threaded server of our own**: the daemon's hot path is one apply
//! thread; an async runtime (axum on tokio) would add a scheduler, dozens of crates and
//! a second way of stopping, for a handful of routes. Heads are parsed by `httparse`
//! (hyper's parser), query strings by `form_urlencoded`. Every bound is explicit and
//! every phase of a connection has a deadline in all, not per read (`wire`: a slow
//! client costs a thread for seconds, never a handler and never the apply thread): the
//! request head (16 KiB, 64 headers, 10 s), the body (`--max-doc-bytes`, with a
//! Content-Length; none on GET), the requests handled at once (`--http-workers`), the
//! open connections (256, the oldest slow one cut past that), one request per
//! connection (`Connection: close`).
//!
//! **Reads**: handlers read the daemon's own open store, which it shares with them
//! ([`StoreShare`]; RocksDB reads are thread-safe), so a page shows every document
//! stored; while the daemon opens or recovers its data directory they answer 503.
//! `/metrics` reads a read-only view of the data directory (for the table's counters),
//! opened again at most every [`REFRESH`]; queries the newest checkpoint.
//!
//! **Access**: the listener takes a loopback address unless a token is configured
//! (`--http-token FILE`); with a token every request needs `Authorization: Bearer
//! TOKEN` (the scheme in any case; compared in constant time) or a browser's session
//! cookie, got by signing in with the token at `/login` (`session`); a page asked
//! for without either is sent there, anything else gets 401 with `WWW-Authenticate`,
//! before any byte of the body is read. Submissions (writes) need the
//! token also on loopback, where any local process, or a browser's page, could send
//! them: without one they are refused (403) unless the server runs with `--http-open`.
//! The server answers only requests sent to its own names (`Host`: the address it
//! listens on, `localhost` on loopback, and those given with `--http-host`; 421
//! otherwise) and from no other site's pages (`Origin`; 403), so that a page whose
//! name was rebound to 127.0.0.1 (DNS rebinding) cannot use a daemon on a laptop.
//!
//! Routes: `GET /api/documents?after=ID&limit=N&name=PREFIX` (the `list --json` rows,
//! paged in sequence order), `GET /api/documents/{name_or_id}` (exactly `show --json`),
//! `GET /metrics` (`stats --prometheus`), `GET /` (the newest documents, a page at a time,
//! with a search by name, title and URL), `GET /documents/{name_or_id}` (the document page: copied blocks coloured
//! by origin, each linking to its origin's page at the passage, by a text fragment),
//! `GET /report` (the collection
//! report), `POST /query` (the index page's form: a text's page), `GET|POST /login`,
//! `POST /logout`, `POST /api/query` (what `query --json` prints, against every stored
//! document), `POST /api/documents?name=NAME[&wait=true]` (a spool file, durable
//! before the 202) and `GET /api/admissions/{key}`. Errors are JSON `{"error": ...}`
//! with their status code.
//!
//! **Submissions never touch a producer's files**: the body is written to a file of
//! this request's own, created with `O_EXCL` in the server's directory
//! `SPOOL/tmp/.textorigin-http/` (producers own the rest of `tmp/`), synced, and
//! hard-linked into `new/` under `NAME.EXT` (409 when a file of that name is waiting
//! there), so that a 202 means that this body is durable in the spool.

use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::layout;
use crate::share::StoreShare;
use crate::view::{model, prometheus, ViewOptions};
use textorigin_store::storage::datadir::DataDir;
use textorigin_store::storage::store::{admission_key, FileAdmission, Store};

mod error;
mod pages;
mod session;
mod wire;

use error::{resolve, ApiError};

use wire::{json_error, Answer, Auth, Reply, Request, HTML, JSON};

/// How old a read view may get before a request opens a new one.
pub const REFRESH: Duration = Duration::from_millis(250);

/// How often the query view is opened again from the newest checkpoint.
pub const REOPEN: Duration = Duration::from_secs(60);

/// The data directory queries analyse against, and when it was last brought up to the
/// stored documents.
struct QueryView {
    view: DataDir,
    caught_up_at: Instant,
}
/// Submissions remembered for `/api/admissions/{key}`'s ids (then it starts again).
const SUBMITTED: usize = 1 << 16;
/// Document keys remembered for those submissions (16 bytes each).
const SUBMITTED_KEYS: usize = 1 << 20;
/// How long `POST /api/documents?wait=true` waits for the daemon.
const WAIT: Duration = Duration::from_secs(30);
/// Most rows of one `/api/documents` page.
const MAX_LIMIT: usize = 1000;

/// How to serve.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub addr: SocketAddr,
    /// Required of every request when set (`Authorization: Bearer TOKEN`).
    pub token: Option<String>,
    /// Requests handled at once.
    pub workers: usize,
    /// Largest body of `POST /api/query` (and what a compressed one may decode to).
    pub max_query_bytes: u64,
    /// The daemon's memory budget, which a query takes its body's bytes of.
    pub budget: Arc<crate::budget::MemoryBudget>,
    /// The daemon's spool (submitted documents go into `new/` through `tmp/`).
    pub spool: PathBuf,
    /// The daemon's input limits: the largest request body (`--max-doc-bytes`), and
    /// what a compressed body may decode to.
    pub limits: textorigin_store::input::Limits,
    /// The daemon's open store, which the readers share.
    pub share: StoreShare,
    /// Further names (`Host` values, with or without a port) the server answers to.
    pub hosts: Vec<String>,
    /// Submissions without a token (`--http-open`): on a machine whose every local
    /// user and page is trusted.
    pub open: bool,
    /// The daemon's `--bad-dates undated`: submissions are checked as it stores them.
    pub undated_bad_dates: bool,
}

/// Why the server cannot start.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("--http {0}: a non-loopback address needs --http-token FILE (anyone who can reach it could read every document)")]
    NeedsToken(SocketAddr),
    #[error("--http {addr}: cannot listen: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
}

/// A running server: stops with the daemon's stop flag.
pub struct HttpServer {
    addr: SocketAddr,
    listener: wire::Listener,
    /// The sessions of a server with a token (its token can be replaced).
    sessions: Option<Arc<session::Sessions>>,
}

impl HttpServer {
    /// The address it listens on (the port chosen when 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Replaces the token (a server started without one has none to replace): whether
    /// it changed. The browsers signed in with the old token are signed out; with the
    /// same token nothing changes.
    pub fn set_token(&self, token: String) -> bool {
        self.sessions.as_ref().is_some_and(|s| s.set_token(token))
    }

    /// Waits for the listener (after `stop` was set) and for the open connections,
    /// which are answered (each within its deadlines).
    pub fn join(self) {
        self.listener.join();
    }
}

/// Starts serving `dir` until `stop` is set.
pub fn start(dir: &Path, opts: &HttpOptions, stop: Arc<AtomicBool>) -> Result<HttpServer, HttpError> {
    if !opts.addr.ip().is_loopback() && opts.token.is_none() {
        return Err(HttpError::NeedsToken(opts.addr));
    }
    let listener = TcpListener::bind(opts.addr).map_err(|source| HttpError::Bind { addr: opts.addr, source })?;
    let addr = listener.local_addr().map_err(|source| HttpError::Bind { addr: opts.addr, source })?;
    listener.set_nonblocking(true).map_err(|source| HttpError::Bind { addr, source })?;
    remove_stale_submissions(&layout::submissions(&opts.spool));
    let sessions = opts.token.clone().map(|t| Arc::new(session::Sessions::new(t)));
    let app = Arc::new(App {
        dir: dir.to_path_buf(),
        spool: opts.spool.clone(),
        limits: opts.limits,
        query_limits: textorigin_store::input::Limits {
            doc_bytes: opts.max_query_bytes.min(opts.limits.doc_bytes),
            decoded_bytes: opts.max_query_bytes.min(opts.limits.doc_bytes),
            ..opts.limits
        },
        budget: Arc::clone(&opts.budget),
        share: opts.share.clone(),
        view: Mutex::new(None),
        query_view: Mutex::new(None),
        submitted: Arc::default(),
        report: Arc::default(),
        next_file: AtomicU64::new(0),
        open: opts.open || opts.token.is_some(),
        undated_bad_dates: opts.undated_bad_dates,
        sessions: sessions.clone(),
    });
    let kept = sessions.clone();
    let limits = wire::Limits {
        gate: sessions.map(|s| s as Arc<dyn wire::Gate>),
        hosts: wire::host_names(addr, &opts.hosts),
        max_body: opts.limits.doc_bytes,
        max_query_body: opts.max_query_bytes.min(opts.limits.doc_bytes),
        max_in_flight: max_in_flight(opts.limits.doc_bytes),
        workers: opts.workers,
    };
    let listener = wire::listen(listener, limits, Arc::new(move |r: &Request| app.handle(r)), stop)
        .map_err(|source| HttpError::Bind { addr, source })?;
    tracing::info!(%addr, "http inspector listening");
    Ok(HttpServer { addr, listener, sessions: kept })
}

/// The body bytes all connections may hold at once: four of the largest bodies, and at
/// least 64 MiB, so that silent clients announcing large bodies cannot add up.
fn max_in_flight(max_body: u64) -> u64 {
    max_body.saturating_mul(4).max(64 << 20)
}

/// Removes the submissions a crashed server left half written (files of processes that
/// are gone; their clients never got a 202).
fn remove_stale_submissions(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let pid = name.split('-').next().and_then(|p| p.parse::<u32>().ok());
        if pid.is_none_or(|p| !Path::new(&format!("/proc/{p}")).exists()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

struct App {
    dir: PathBuf,
    spool: PathBuf,
    limits: textorigin_store::input::Limits,
    /// The limits of a query's body (`--http-max-query-bytes`).
    query_limits: textorigin_store::input::Limits,
    /// The bytes of text under analysis, shared with the daemon's intake.
    budget: Arc<crate::budget::MemoryBudget>,
    share: StoreShare,
    /// The read view of `/metrics` (the table's counters) and when it was opened.
    view: Mutex<Option<(Instant, Arc<DataDir>)>>,
    /// The view `POST /api/query` analyses against (the newest checkpoint, as `query`
    /// reads it), one query at a time.
    query_view: Mutex<Option<(Instant, QueryView)>>,
    /// Admission key → the file submitted to this process under that key.
    submitted: Arc<Mutex<Submissions>>,
    /// The collection report's summary, computed off the request path.
    report: Arc<Mutex<pages::ReportCache>>,
    /// Numbers this process's files in [`layout::SUBMIT_DIR`].
    next_file: AtomicU64,
    /// Submissions are served (a token is required of every request, or `--http-open`).
    open: bool,
    /// A date that is none is stored undated (the daemon's `--bad-dates undated`).
    undated_bad_dates: bool,
    /// The browsers' sessions (with a token: [`session`]).
    sessions: Option<Arc<session::Sessions>>,
}

type Submissions = std::collections::HashMap<String, Submitted>;

/// A file submitted to this process.
#[derive(Debug, Clone)]
struct Submitted {
    /// Its name in the spool (`NAME.EXT`).
    file: String,
    /// When it was submitted (ms since the Unix epoch): failures recorded since are its.
    at_ms: u64,
    /// Its documents' admission keys ([`textorigin_store::storage::store::document_key`]), which
    /// name their ids once stored (another file of the same name may be stored
    /// meanwhile: its name and source tell nothing).
    keys: Vec<u128>,
}

impl App {
    /// Answers a request; the forms of an HTML page get a session's CSRF token
    /// ([`session::fill_forms`]).
    fn handle(&self, request: &Request) -> Answer {
        match self.route(request) {
            Answer::Reply((status, HTML, page)) => {
                let csrf = match &request.auth {
                    Auth::Session(csrf) => Some(csrf.as_str()),
                    _ => None,
                };
                Answer::Reply((status, HTML, session::fill_forms(page, csrf)))
            }
            other => other,
        }
    }

    fn route(&self, request: &Request) -> Answer {
        let segments: Vec<String> = request
            .path
            .trim_start_matches('/')
            .split('/')
            .map(|s| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned())
            .collect();
        let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
        match (request.method.as_str(), segments.as_slice()) {
            ("POST", ["api", "documents"]) => return self.submit(request).unwrap_or_else(|e| Answer::Reply(e.reply())),
            (_, ["login"]) | ("POST", ["logout"]) => return self.sign_in(request),
            ("POST", ["query"]) => return Answer::Reply(self.query_page(request).unwrap_or_else(ApiError::reply)),
            _ => {}
        }
        Answer::Reply(self.read(request, &segments))
    }

    /// Every request but a submission: the reads, and queries.
    fn read(&self, request: &Request, segments: &[&str]) -> Reply {
        match (request.method.as_str(), segments) {
            ("POST", ["api", "query"]) => return self.query(request).unwrap_or_else(ApiError::reply),
            ("GET", _) => {}
            (m, _) => return json_error(405, &format!("{m} {} is not served here", request.path)),
        }
        if segments == ["metrics"] {
            return match self.view() {
                Ok(view) => metrics(&view, &self.dir, &self.share).unwrap_or_else(ApiError::reply),
                Err(e) => json_error(503, &format!("the data directory cannot be read now: {e}")),
            };
        }
        let Some(store) = self.share.get() else {
            return json_error(503, "the daemon is opening or recovering its data directory; try again");
        };
        let result = match segments {
            ["api", "documents"] => documents(&store, &request.query),
            ["api", "documents", x] => document_json(&store, x),
            [""] => match request.param("text").filter(|t| !t.trim().is_empty()) {
                Some(text) => self.with_query_view(|dd| pages::text_search(&store, dd, text)),
                None => pages::index(&store, &request.query),
            },
            ["documents", x] => pages::document(&store, x),
            ["compare"] => pages::compare(&store, &request.query),
            ["report"] => pages::report(&store, &request.query, &self.report),
            ["api", "admissions", key] => admission(&self.submitted, &store, key).and_then(|v| match v {
                Some(v) => json(&v),
                None => Err(ApiError::NotFound(format!(
                    "admission {key} is not known here: not submitted to this server since it started, and not applied"
                ))),
            }),
            _ => Err(ApiError::NotFound(format!("no route {}", request.path))),
        };
        result.unwrap_or_else(ApiError::reply)
    }

    /// `GET /login`, `POST /login`, `POST /logout` ([`session`]).
    fn sign_in(&self, request: &Request) -> Answer {
        let Some(sessions) = &self.sessions else {
            return json_error(404, "this server has no token (--http-token FILE): there is nothing to sign in to")
                .into();
        };
        match (request.method.as_str(), request.path.trim_end_matches('/')) {
            ("GET", "/login") => session::login_page(request).into(),
            ("POST", "/login") => session::login(sessions, request),
            ("POST", "/logout") => session::logout(sessions, request),
            (m, p) => json_error(405, &format!("{m} {p} is not served here")).into(),
        }
    }

    /// What a query may analyse: with a token or `--http-open`, `bytes` of the budget
    /// shared with the intake (or 503 at once).
    fn analysis_grant(&self, bytes: usize) -> Result<crate::budget::Grant, ApiError> {
        // A query runs the analysis, as a submission's document does.
        if !self.open {
            return Err(ApiError::Forbidden(
                "queries need a token: serve with --http-token FILE (or --http-open where every local user and web page is trusted)".into(),
            ));
        }
        self.budget.try_take(bytes as u64).ok_or_else(|| {
            ApiError::Unavailable(format!(
                "the daemon is analysing {} of its {} bytes of text at once (--memory-budget); try again",
                self.budget.taken(),
                self.budget.total()
            ))
        })
    }

    /// `POST /query` (the inspector's form: the field `text`): the text's page, its
    /// copied blocks linking their origins, as `POST /api/query` analyses it.
    fn query_page(&self, request: &Request) -> Result<Reply, ApiError> {
        let fields = session::form(request);
        let text = fields.iter().find(|(k, _)| k == "text").map_or("", |(_, v)| v.as_str());
        let _grant = self.analysis_grant(text.len())?;
        self.with_query_view(|dd| pages::query(dd, text))
    }

    /// `POST /api/query`: the body (any input format, by its content type; JSON
    /// `{"text": ...}` too) analysed as `query --json` does; nothing is stored.
    fn query(&self, request: &Request) -> Result<Reply, ApiError> {
        let _grant = self.analysis_grant(request.body.len())?;
        self.with_query_view(|dd| {
            let limits = textorigin_store::input::Limits { html: dd.config().html, ..self.query_limits };
            let doc = parse_body(request, "query", limits)?;
            let q = dd.query(&doc)?;
            json(&model::document(dd.store(), model::DocParts::query(&doc, &q), ViewOptions::default())?)
        })
    }

    /// `f` with the view queries analyse against (the newest checkpoint, reopened when
    /// older than [`REFRESH`]), one query at a time: another one meanwhile is answered
    /// 503 at once instead of holding a handler while it waits (five
    /// concurrent queries held every handler, and `/metrics` waited 6.9 s).
    fn with_query_view<T>(&self, f: impl FnOnce(&mut DataDir) -> Result<T, ApiError>) -> Result<T, ApiError> {
        let mut slot = match self.query_view.try_lock() {
            Ok(slot) => slot,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => {
                return Err(ApiError::Unavailable("another query is being analysed (one at a time); try again".into()))
            }
        };
        // Reopened from the newest checkpoint at most every REOPEN (which bounds the
        // pages its private table copies), brought up to the stored documents at most
        // every REFRESH in between, so that it answers as of the stored documents.
        let unavailable = |e| ApiError::Unavailable(format!("the data directory cannot be read now: {e}"));
        match slot.as_mut() {
            Some((opened, dd)) if opened.elapsed() < REOPEN => {
                if dd.caught_up_at.elapsed() >= REFRESH {
                    dd.view.catch_up_for_query().map_err(unavailable)?;
                    dd.caught_up_at = Instant::now();
                }
            }
            _ => {
                let view = DataDir::open_read_for_query(&self.dir).map_err(unavailable)?;
                *slot = Some((Instant::now(), QueryView { view, caught_up_at: Instant::now() }));
            }
        }
        f(&mut slot.as_mut().expect("opened above").1.view)
    }

    /// `POST /api/documents?name=NAME[&wait=true][&partial=true]`: the body becomes
    /// spool file `NAME.EXT` (the extension from the content type; see the module docs
    /// for how it gets there): 202 with the admission key once it is durable in the
    /// spool; with `wait=true`, 201 with the stored documents' ids (`documents`) once
    /// the daemon has applied it, or 422 with the reasons when its documents failed
    /// (waiting holds no handler). Its documents are checked first as far as they can
    /// be without the table (JSON, field types, dates, empty or word-less texts, the
    /// limits): a body with documents that would fail is refused with 422 and the
    /// reasons, and nothing of it is spooled, unless `partial=true` (the others are
    /// then stored, the failures recorded).
    fn submit(&self, request: &Request) -> Result<Answer, ApiError> {
        if !self.open {
            return Err(ApiError::Forbidden(
                "submissions need a token: serve with --http-token FILE (or --http-open where every local user and web page is trusted)".into(),
            ));
        }
        let Some(name) = request.param("name").filter(|n| valid_name(n)) else {
            return Err(ApiError::BadRequest(
                "`name` must be 1-200 bytes without `/`, NUL, control characters or a leading `.`".into(),
            ));
        };
        if request.body.is_empty() {
            return Err(ApiError::BadRequest("the request body (the document) is empty".into()));
        }
        let ext = extension(request);
        let file = format!("{name}.{ext}");
        // Terms as the open store's data directory makes them (a new one's before it is open).
        let terms = self.share.get().and_then(|s| s.config().ok().flatten()).unwrap_or_default().terms;
        let checked = check_body(&request.body, ext, name, &file, self.limits, (terms, self.undated_bad_dates))?;
        if checked.failed > 0 && request.param("partial") != Some("true") {
            let v = serde_json::json!({
                "error": format!(
                    "{} of {} document(s) cannot be stored; nothing was spooled (partial=true stores the others)",
                    checked.failed, checked.documents
                ),
                "failed": checked.failed,
                "documents": checked.documents,
                "reasons": checked.reasons,
            });
            return Ok(Answer::Reply((422, JSON, serde_json::to_vec(&v)?)));
        }
        // The key the daemon admits the file under, marked as come over HTTP before the
        // file is in the spool (`--take-over` tells what its dates may do).
        let key = format!("{:032x}", admission_key(file.as_bytes(), &request.body));
        self.mark_submission(&key)?;
        let new = self.spool.join(layout::NEW).join(&file);
        let tmp = self.write_submission(&request.body)?;
        let linked = std::fs::hard_link(&tmp, &new);
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(ApiError::Conflict(format!(
                    "a file `{file}` is waiting in the spool; try again when it is applied"
                )))
            }
            Err(e) => {
                return Err(ApiError::Unavailable(format!(
                    "the spool cannot take the file now ({}: {e}); try again",
                    new.display()
                )))
            }
            Ok(()) => {}
        }
        std::fs::File::open(self.spool.join(layout::NEW))
            .and_then(|d| d.sync_all())
            .map_err(|e| ApiError::Internal(format!("cannot sync the spool: {e}")))?;
        let at_ms = textorigin_store::clock::now_ms();
        {
            let mut submitted = self.submitted.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let held: usize = submitted.values().map(|s| s.keys.len()).sum();
            if submitted.len() >= SUBMITTED || held + checked.keys.len() > SUBMITTED_KEYS {
                submitted.clear();
            }
            submitted.insert(key.clone(), Submitted { file: file.clone(), at_ms, keys: checked.keys });
        }
        let pending = serde_json::json!({ "admission": key, "file": file, "state": "pending" });
        let pending = (202, JSON, serde_json::to_vec(&pending)?);
        if request.param("wait") != Some("true") {
            return Ok(Answer::Reply(pending));
        }
        let (share, submitted) = (self.share.clone(), Arc::clone(&self.submitted));
        let late = ApiError::Unavailable(format!(
            "admission {key} is durable in the spool but was not applied within {} s",
            WAIT.as_secs()
        ));
        let poll = move || {
            let store = share.get()?;
            let v = match admission(&submitted, &store, &key) {
                Ok(v) => v.expect("submitted above"),
                Err(e) => return Some(e.reply()),
            };
            let status = match v["state"].as_str() {
                Some("pending") => return None,
                Some("stored") => 201,
                _ => 422,
            };
            Some(json(&v).unwrap_or_else(ApiError::reply)).map(|r| (status, r.1, r.2))
        };
        Ok(Answer::Wait(Box::new(wire::Waiting {
            poll: Box::new(poll),
            until: Instant::now() + WAIT,
            late: late.reply(),
            busy: pending,
        })))
    }

    /// Marks the spool file of admission key `key` as submitted over HTTP: an empty
    /// file named by the key in [`layout::MARKS_DIR`], synced, which the daemon reads (its
    /// documents come in `Via::Http`, also after a restart) and removes once the file
    /// has left the spool. A producer can make one too, and so only lower its trust.
    fn mark_submission(&self, key: &str) -> Result<(), ApiError> {
        let dir = layout::marks(&self.spool);
        let internal =
            |e: std::io::Error| ApiError::Internal(format!("cannot mark the submission in {}: {e}", dir.display()));
        std::fs::create_dir_all(&dir).map_err(internal)?;
        std::fs::File::create(dir.join(key)).and_then(|f| f.sync_all()).map_err(internal)?;
        std::fs::File::open(&dir).and_then(|d| d.sync_all()).map_err(internal)
    }

    /// Writes a submitted body to a new file of its own in [`layout::SUBMIT_DIR`] (created with
    /// `O_EXCL`, so no other request or producer can share it) and syncs it: its path.
    fn write_submission(&self, body: &[u8]) -> Result<PathBuf, ApiError> {
        use std::os::unix::fs::OpenOptionsExt;
        let dir = layout::submissions(&self.spool);
        std::fs::create_dir_all(&dir)
            .map_err(|e| ApiError::Internal(format!("cannot create {}: {e}", dir.display())))?;
        loop {
            let n = self.next_file.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!("{}-{n}", std::process::id()));
            let created = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o644).open(&path);
            let mut f = match created {
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                other => other.map_err(|e| ApiError::Internal(format!("cannot create {}: {e}", path.display())))?,
            };
            let written = f.write_all(body).and_then(|()| f.sync_all());
            if let Err(e) = written {
                let _ = std::fs::remove_file(&path);
                return Err(ApiError::Internal(format!("cannot write {}: {e}", path.display())));
            }
            return Ok(path);
        }
    }

    /// The read view of `/metrics`, opened again when older than [`REFRESH`].
    fn view(&self) -> Result<Arc<DataDir>, ApiError> {
        let mut v = self.view.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((at, dd)) = v.as_ref() {
            if at.elapsed() < REFRESH {
                return Ok(Arc::clone(dd));
            }
        }
        let dd = Arc::new(DataDir::open_read(&self.dir)?);
        *v = Some((Instant::now(), Arc::clone(&dd)));
        Ok(dd)
    }
}

fn json(v: &impl serde::Serialize) -> Result<Reply, ApiError> {
    Ok((200, JSON, serde_json::to_vec(v)?))
}

/// `GET /api/documents`: rows after `after`, at most `limit` (default 100), names
/// starting with `name`.
fn documents(store: &Store, query: &[(String, String)]) -> Result<Reply, ApiError> {
    let param = |k: &str| query.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let after: u64 = match param("after").map(str::parse) {
        None => 0,
        Some(Ok(n)) => n,
        Some(Err(_)) => return Err(ApiError::BadRequest("`after` must be a document id".into())),
    };
    let limit: usize = match param("limit").map(str::parse) {
        None => 100,
        Some(Ok(n)) if (1..=MAX_LIMIT).contains(&n) => n,
        _ => return Err(ApiError::BadRequest(format!("`limit` must be 1-{MAX_LIMIT}"))),
    };
    let prefix = param("name").unwrap_or("");
    let mut rows = Vec::new();
    let origins = model::features(store)?.origins;
    for meta in store.docs_from(after.saturating_add(1)) {
        let meta = meta?;
        if !meta.name.starts_with(prefix) {
            continue;
        }
        rows.push(model::list_row(store, &meta, origins)?);
        if rows.len() == limit {
            break;
        }
    }
    let next_after = (rows.len() == limit).then(|| rows.last().map(|r| r.id)).flatten();
    json(&serde_json::json!({ "documents": rows, "next_after": next_after }))
}

/// `GET /api/documents/{x}`: what `show --json` prints.
fn document_json(store: &Store, name_or_id: &str) -> Result<Reply, ApiError> {
    let seq = resolve(store, name_or_id)?;
    json(&model::shown(store, seq, ViewOptions::default())?.0)
}

/// `GET /metrics`: `stats --prometheus`, then the daemon's stage seconds, apply
/// latency histogram, text bytes and checkpoint age.
fn metrics(dd: &DataDir, dir: &Path, share: &StoreShare) -> Result<Reply, ApiError> {
    let v = model::stats(dd.store(), dd.table(), &dd.indexes(), dd.config(), dir)?;
    let (times, latency) = share.telemetry();
    let age = (0..2)
        .filter_map(|slot| {
            std::fs::metadata(textorigin_store::storage::checkpoint::slot_paths(dir, slot).1)
                .and_then(|m| m.modified())
                .ok()
        })
        .max()
        .and_then(|t| t.elapsed().ok())
        .map(|d| d.as_secs_f64());
    let body = prometheus::stats(&v) + &prometheus::telemetry(&times, &latency, age);
    Ok((200, "text/plain; version=0.0.4", body.into_bytes()))
}

/// How far a submitted file was admitted (None: neither submitted to this process
/// nor applied); for a file submitted to this process, with the file's name, the ids
/// of its stored documents once applied and the reasons of its failures.
fn admission(submitted: &Mutex<Submissions>, store: &Store, key: &str) -> Result<Option<serde_json::Value>, ApiError> {
    let k =
        u128::from_str_radix(key, 16).map_err(|_| ApiError::BadRequest("an admission key is 32 hex digits".into()))?;
    let known = submitted.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(key).cloned();
    let Some(a) = store.admitted(k)? else {
        return Ok(known.map(|_| serde_json::json!({ "admission": key, "state": "pending" })));
    };
    let a = a.state;
    let state = match a {
        FileAdmission::Reading { .. } => "pending",
        FileAdmission::Ended { failed: 0, .. } => "stored",
        FileAdmission::Ended { .. } | FileAdmission::Failed => "failed",
    };
    // The file's documents are counted as they are read: no total until its end.
    let mut v = serde_json::json!({ "admission": key, "state": state, "documents_done": a.done(), "documents_total": a.total(), "failed": a.failed() });
    if let (Some(sub), "stored" | "failed") = (known, state) {
        let mut ids = Vec::with_capacity(sub.keys.len());
        for &k in &sub.keys {
            ids.extend(store.admitted_document(k)?);
        }
        v["documents"] = serde_json::json!(ids);
        v["file"] = serde_json::json!(sub.file);
        if a.failed() > 0 {
            let reasons: Vec<String> = store
                .failures()?
                .into_iter()
                .filter(|f| f.file == sub.file && f.at_ms >= sub.at_ms)
                .map(|f| f.reason)
                .collect();
            v["reasons"] = serde_json::json!(reasons);
        }
    }
    Ok(Some(v))
}

/// A submitted document's name: a spool file name's stem, with no control characters
/// (they would reach logs and terminals).
fn valid_name(n: &str) -> bool {
    (1..=200).contains(&n.len()) && !n.starts_with('.') && !n.contains('/') && !n.chars().any(char::is_control)
}

/// A submitted body as checked before it is spooled.
struct Checked {
    /// The admission keys of its documents that can be stored, as the daemon will find
    /// them ([`textorigin_store::storage::store::document_key`]).
    keys: Vec<u128>,
    documents: usize,
    failed: usize,
    /// The first [`MAX_REASONS`] reasons of failing documents.
    reasons: Vec<String>,
}

/// Reasons a refused submission lists (and the count of the rest).
const MAX_REASONS: usize = 100;
/// Documents one submission may hold (their keys are held until it is applied).
const MAX_SUBMITTED_DOCS: usize = 100_000;

/// Checks a submitted body's documents as the spool will read file `file`, one at a
/// time (a compressed body is decoded as it is read, within `limits`): what fails
/// without the table (malformed JSON, fields of the wrong type, what the data
/// directory refuses of a document: [`textorigin_store::intake::admissible`] with
/// terms made as `terms` makes them, the limits). The whole body
/// failing (no documents, not text, too many documents) is an error.
fn check_body(
    body: &[u8],
    ext: &str,
    name: &str,
    file: &str,
    limits: textorigin_store::input::Limits,
    (terms, undated_bad_dates): (textorigin_core::text::Terms, bool),
) -> Result<Checked, ApiError> {
    let refuse = |reason: String| ApiError::Unprocessable(reason);
    let source = format!("spool:{file}");
    let docs = textorigin_store::input::stream_docs(
        std::io::Cursor::new(body.to_vec()),
        Some(ext),
        name,
        &source,
        limits,
        Some(body.len() as u64),
    )
    .map_err(|e| refuse(e.to_string()))?;
    let mut keys = textorigin_store::storage::store::DocumentKeys::new(file.as_bytes());
    let mut checked = Checked { keys: Vec::new(), documents: 0, failed: 0, reasons: Vec::new() };
    for d in docs {
        checked.documents += 1;
        if checked.documents > MAX_SUBMITTED_DOCS {
            return Err(ApiError::TooLarge(format!(
                "the body holds more than {MAX_SUBMITTED_DOCS} documents: split it, or drop the file into the spool"
            )));
        }
        let failure = match d {
            Err(e) => Some(e.to_string()),
            Ok(doc) => {
                let has_terms = textorigin_core::text::has_terms(&doc.text, terms);
                let failure = textorigin_store::intake::admissible(&doc, has_terms, undated_bad_dates)
                    .err()
                    .map(|e| e.to_string());
                // Counted for every document that parses, as the daemon counts them.
                let key = keys.next(&doc);
                if failure.is_none() {
                    checked.keys.push(key);
                }
                failure
            }
        };
        if let Some(reason) = failure {
            checked.failed += 1;
            if checked.reasons.len() < MAX_REASONS {
                checked.reasons.push(reason);
            }
        }
    }
    if checked.documents == 0 {
        return Err(refuse("the body holds no document".into()));
    }
    if checked.failed > MAX_REASONS {
        checked.reasons.push(format!("… and {} more", checked.failed - MAX_REASONS));
    }
    Ok(checked)
}

/// The input format of a body, as a file extension, from its content type.
fn extension(request: &Request) -> &'static str {
    let ct = request.header("content-type").unwrap_or("").to_ascii_lowercase();
    if ct.starts_with("text/html") {
        "html"
    } else if ct.starts_with("application/json") {
        "json"
    } else if ct.starts_with("application/x-ndjson") || ct.starts_with("application/jsonl") {
        "jsonl"
    } else {
        "txt"
    }
}

/// The first document of a request body in its format.
fn parse_body(
    request: &Request,
    name: &str,
    max: textorigin_store::input::Limits,
) -> Result<textorigin_store::input::InputDoc, ApiError> {
    if request.body.is_empty() {
        return Err(ApiError::BadRequest("the request body (the document) is empty".into()));
    }
    let docs = textorigin_store::input::parse_bytes(request.body.clone(), extension(request), name, "http", max)
        .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    match docs.into_iter().next() {
        Some(Ok(doc)) => Ok(doc),
        Some(Err(e)) => Err(ApiError::BadRequest(e.to_string())),
        None => Err(ApiError::BadRequest("the body holds no document".into())),
    }
}
