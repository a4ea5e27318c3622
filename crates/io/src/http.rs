//! The daemon's HTTP inspector (`serve --http ADDR`): the inspector's views over HTTP
//! from the same data directory, text queries, and submissions through the spool.
//!
//! **Why a small threaded server of our own** (no new dependency): the daemon's hot
//! path is one apply thread; an async runtime (axum on tokio) would add a scheduler,
//! dozens of crates and a second way of stopping, for a handful of read-only routes.
//! A listener thread hands each connection to a fixed pool of worker threads through a
//! bounded channel; a connection that finds the queue full gets 503 at once. Every
//! bound is explicit: the request head (16 KiB), the number of headers (64), the
//! body (`--max-doc-bytes`, with a Content-Length; none on GET), the read and write
//! timeouts (5 s: a slow client holds one worker, never the apply thread), one
//! request per connection (`Connection: close`).
//!
//! **Reads**: handlers read the daemon's own open store, which it shares with them
//! ([`StoreShare`]; RocksDB reads are thread-safe), so a page shows every document
//! stored; while the daemon opens or recovers its data directory they answer 503.
//! `/metrics` reads a read-only view of the data directory (for the table's counters),
//! opened again at most every [`REFRESH`]; queries the newest checkpoint.
//!
//! **Access**: the listener takes a loopback address unless a token is configured
//! (`--http-token FILE`); with a token every request needs `Authorization: Bearer
//! TOKEN` (401 otherwise, compared in constant time).
//!
//! Routes: `GET /api/documents?after=ID&limit=N&name=PREFIX` (the `list --json` rows,
//! paged in sequence order), `GET /api/documents/{name_or_id}` (exactly `show --json`),
//! `GET /metrics` (`stats --prometheus`), `GET /` (the newest documents, with a search
//! by name), `GET /documents/{name_or_id}` (the document page: copied blocks coloured
//! by origin, each linking to its origin's page at the passage, by a text fragment),
//! `GET /report` (the collection
//! report), `POST /api/query` (what `query --json` prints, against the newest
//! checkpoint), `POST /api/documents?name=NAME[&wait=true]` (a spool file, durable
//! before the 202) and `GET /api/admissions/{key}`. Errors are JSON `{"error": ...}`
//! with their status code.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::daemon::StoreShare;
use crate::storage::datadir::DataDir;
use crate::storage::store::{admission_key, Store};
use crate::view::{html, model, prometheus, ViewOptions};

/// How old a read view may get before a request opens a new one.
pub const REFRESH: Duration = Duration::from_millis(250);
/// Largest request head (request line and headers).
const MAX_HEAD: usize = 16 << 10;
/// Most headers in a request.
const MAX_HEADERS: usize = 64;
/// Read and write timeout of a connection.
const TIMEOUT: Duration = Duration::from_secs(5);
/// How long, and how many bytes, a reply waits for the client's unread input.
const LINGER: Duration = Duration::from_millis(500);
const MAX_DRAIN: u64 = 1 << 20;
/// Connections waiting for a worker before new ones get 503.
const QUEUE: usize = 64;
/// Submissions remembered for `/api/admissions/{key}`'s ids (then it starts again).
const SUBMITTED: usize = 1 << 16;
/// How long `POST /api/documents?wait=true` waits for the daemon.
const WAIT: Duration = Duration::from_secs(30);
/// Rows of the HTML list at `/`, newest first.
const INDEX_ROWS: usize = 200;
/// Most rows of one `/api/documents` page.
const MAX_LIMIT: usize = 1000;

/// How to serve.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub addr: SocketAddr,
    /// Required of every request when set (`Authorization: Bearer TOKEN`).
    pub token: Option<String>,
    /// Worker threads.
    pub workers: usize,
    /// The daemon's spool (submitted documents go into `new/` through `tmp/`).
    pub spool: PathBuf,
    /// Largest request body (the daemon's `--max-doc-bytes`).
    pub max_body: u64,
    /// The daemon's open store, which the readers share.
    pub share: StoreShare,
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
    threads: Vec<JoinHandle<()>>,
}

impl HttpServer {
    /// The address it listens on (the port chosen when 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Waits for the listener and the workers (after `stop` was set): requests being
    /// answered are finished, queued connections are answered.
    pub fn join(self) {
        for t in self.threads {
            let _ = t.join();
        }
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
    let (tx, rx) = crossbeam_channel::bounded::<TcpStream>(QUEUE);
    let app = Arc::new(App {
        dir: dir.to_path_buf(),
        token: opts.token.clone(),
        spool: opts.spool.clone(),
        max_body: opts.max_body,
        share: opts.share.clone(),
        view: Mutex::new(None),
        query_view: Mutex::new(None),
        submitted: Mutex::new(std::collections::HashMap::new()),
    });
    let mut threads = Vec::new();
    for i in 0..opts.workers.max(1) {
        let (rx, app) = (rx.clone(), Arc::clone(&app));
        threads.push(
            std::thread::Builder::new()
                .name(format!("http-{i}"))
                .spawn(move || {
                    for stream in rx {
                        app.serve(stream);
                    }
                })
                .expect("spawn an HTTP worker"),
        );
    }
    threads.push(
        std::thread::Builder::new()
            .name("http-listen".into())
            .spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            if let Err(crossbeam_channel::TrySendError::Full(mut s)) = tx.try_send(stream) {
                                let _ = s.set_write_timeout(Some(TIMEOUT));
                                let _ = s.write_all(&response(503, "application/json", &error_body("too many requests queued; try again")));
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(10)),
                        Err(e) => {
                            tracing::warn!(error = %e, "http: accept failed");
                            std::thread::sleep(Duration::from_millis(50));
                        }
                    }
                }
                // Dropping the sender lets the workers finish the queue and end.
            })
            .expect("spawn the HTTP listener"),
    );
    tracing::info!(%addr, "http inspector listening");
    Ok(HttpServer { addr, threads })
}

/// A response: status, content type, body.
type Reply = (u16, &'static str, Vec<u8>);

struct App {
    dir: PathBuf,
    token: Option<String>,
    spool: PathBuf,
    max_body: u64,
    share: StoreShare,
    /// The read view of `/metrics` (the table's counters) and when it was opened.
    view: Mutex<Option<(Instant, Arc<DataDir>)>>,
    /// The view `POST /api/query` analyses against (the newest checkpoint, as `query`
    /// reads it), one query at a time.
    query_view: Mutex<Option<(Instant, DataDir)>>,
    /// Admission key → (name, spool file) of the files submitted to this process.
    submitted: Mutex<std::collections::HashMap<String, (String, String)>>,
}

impl App {
    fn serve(&self, mut stream: TcpStream) {
        let _ = stream.set_read_timeout(Some(TIMEOUT));
        let _ = stream.set_write_timeout(Some(TIMEOUT));
        let reply = match read_head(&stream) {
            Ok(head) => match read_body(&stream, &head, self.max_body) {
                Ok(body) => self.handle(&head, &body),
                Err(reply) => reply,
            },
            Err(reply) => reply,
        };
        let _ = stream.write_all(&response(reply.0, reply.1, &reply.2));
        // Closing with unread input would reset the connection and could lose the
        // reply (a refused body, an oversized head): say we are done, then read and
        // drop what the client still sends, briefly and within a bound.
        let _ = stream.shutdown(std::net::Shutdown::Write);
        let _ = stream.set_read_timeout(Some(LINGER));
        let _ = std::io::copy(&mut (&stream).take(MAX_DRAIN), &mut std::io::sink());
    }

    fn handle(&self, head: &Head, body: &[u8]) -> Reply {
        if let Some(token) = &self.token {
            let given = head.header("authorization").and_then(|v| v.strip_prefix("Bearer ")).unwrap_or("");
            if !constant_time_eq(given.as_bytes(), token.as_bytes()) {
                return json_error(401, "this server needs `Authorization: Bearer TOKEN`");
            }
        }
        let segments: Vec<&str> = head.path.trim_start_matches('/').split('/').collect();
        match (head.method.as_str(), segments.as_slice()) {
            ("POST", ["api", "query"]) => return self.query(head, body).unwrap_or_else(|e| json_error(500, &e)),
            ("POST", ["api", "documents"]) => return self.submit(head, body).unwrap_or_else(|e| json_error(500, &e)),
            ("GET", _) if !body.is_empty() => return json_error(413, "GET takes no request body"),
            ("GET", _) => {}
            (m, _) => return json_error(405, &format!("{m} {} is not served here", head.path)),
        }
        if segments == ["metrics"] {
            return match self.view() {
                Ok(view) => metrics(&view, &self.dir, &self.share).unwrap_or_else(|e| json_error(500, &e)),
                Err(e) => json_error(503, &format!("the data directory cannot be read now: {e}")),
            };
        }
        let Some(store) = self.share.get() else {
            return json_error(503, "the daemon is opening or recovering its data directory; try again");
        };
        let result = match segments.as_slice() {
            ["api", "documents"] => documents(&store, &head.query),
            ["api", "documents", x] => document_json(&store, &percent_decode(x)),
            [""] => index_page(&store, &head.query),
            ["documents", x] => document_page(&store, &percent_decode(x)),
            ["report"] => html::report_docs(&store).map(|d| (200, HTML, html::report_page(&d).into_bytes())).map_err(|e| e.to_string()),
            ["api", "admissions", key] => match self.admission(&store, key) {
                Ok(v) => json(&v),
                Err(e) if e.contains("hex") => return json_error(400, &e),
                Err(e) => Err(e),
            },
            _ => return json_error(404, &format!("no route {}", head.path)),
        };
        result.unwrap_or_else(|e| if e.contains("not found") { json_error(404, &e) } else { json_error(500, &e) })
    }

    /// `POST /api/query`: the body (any input format, by its content type; JSON
    /// `{"text": ...}` too) analysed as `query --json` does; nothing is stored.
    fn query(&self, head: &Head, body: &[u8]) -> Result<Reply, String> {
        let doc = match parse_body(head, body, "query", self.max_body) {
            Ok(doc) => doc,
            Err(reply) => return Ok(reply),
        };
        let mut slot = self.query_view.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.as_ref().is_none_or(|(at, _)| at.elapsed() >= REFRESH) {
            match DataDir::open_read_for_query(&self.dir) {
                Ok(dd) => *slot = Some((Instant::now(), dd)),
                Err(e) => return Ok(json_error(503, &format!("the data directory cannot be read now: {e}"))),
            }
        }
        let (_, dd) = slot.as_mut().expect("opened above");
        let (r, near, quotes) = dd.query(&doc).map_err(|e| e.to_string())?;
        let parts = model::DocParts { meta: None, name: &doc.name, text: &doc.text, result: &r, near: &near, quotes: &quotes };
        json(&model::document(&dd.store, parts, ViewOptions::default()).map_err(|e| e.to_string())?)
    }

    /// `POST /api/documents?name=NAME[&wait=true]`: the body becomes spool file
    /// `NAME.EXT` (the extension from the content type), written into `tmp/`, synced,
    /// linked into `new/` (never over a pending file of that name: 409) and the
    /// directory synced: 202 with the admission key once it is durable in the spool;
    /// with `wait=true`, 201 with the stored documents' ids (`documents`) once the
    /// daemon has applied it.
    fn submit(&self, head: &Head, body: &[u8]) -> Result<Reply, String> {
        let Some(name) = head.param("name").filter(|n| valid_name(n)) else {
            return Ok(json_error(400, "`name` must be 1-200 bytes without `/`, NUL or a leading `.`"));
        };
        if body.is_empty() {
            return Ok(json_error(400, "the request body (the document) is empty"));
        }
        let file = format!("{name}.{}", extension(head));
        let (tmp, new) = (self.spool.join("tmp").join(&file), self.spool.join("new").join(&file));
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(body)?;
            f.sync_all()
        };
        write().map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
        let linked = std::fs::hard_link(&tmp, &new);
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Ok(json_error(409, &format!("a file `{file}` is waiting in the spool; try again when it is applied")))
            }
            Err(e) => return Err(format!("cannot link into {}: {e}", new.display())),
            Ok(()) => {}
        }
        std::fs::File::open(self.spool.join("new")).and_then(|d| d.sync_all()).map_err(|e| format!("cannot sync the spool: {e}"))?;
        // The key the daemon admits the file under.
        let key = format!("{:032x}", admission_key(file.as_bytes(), body));
        {
            let mut submitted = self.submitted.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if submitted.len() >= SUBMITTED {
                submitted.clear();
            }
            submitted.insert(key.clone(), (name.to_string(), file.clone()));
        }
        if head.param("wait") == Some("true") {
            let until = Instant::now() + WAIT;
            while Instant::now() < until {
                if let Some(store) = self.share.get() {
                    let v = self.admission(&store, &key)?;
                    if v["state"] != "pending" {
                        return Ok((201, JSON, serde_json::to_vec(&v).map_err(|e| e.to_string())?));
                    }
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            return Ok(json_error(503, &format!("admission {key} is durable in the spool but was not applied within {} s", WAIT.as_secs())));
        }
        let v = serde_json::json!({ "admission": key, "file": file, "state": "pending" });
        Ok((202, JSON, serde_json::to_vec(&v).map_err(|e| e.to_string())?))
    }

    /// How far a submitted file was admitted; for a file submitted to this process, with
    /// the file's name and the ids of its stored documents once applied.
    fn admission(&self, store: &Store, key: &str) -> Result<serde_json::Value, String> {
        let k = u128::from_str_radix(key, 16).map_err(|_| "an admission key is 32 hex digits".to_string())?;
        let Some(a) = store.admitted(k).map_err(|e| e.to_string())? else {
            return Ok(serde_json::json!({ "admission": key, "state": "pending" }));
        };
        let state = if a.total == 0 || (a.done >= a.total && a.failed > 0) { "failed" } else if a.done >= a.total { "stored" } else { "pending" };
        let mut v = serde_json::json!({ "admission": key, "state": state, "documents_done": a.done, "documents_total": a.total, "failed": a.failed });
        let known = self.submitted.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(key).cloned();
        if let (Some((name, file)), "stored" | "failed") = (known, state) {
            // The stored documents of this file: the newest of its name and spool
            // source, as many as it stored.
            let source = format!("spool:{file}");
            let mut ids = Vec::new();
            for seq in store.seqs_named(&name).map_err(|e| e.to_string())? {
                if store.doc(seq).map_err(|e| e.to_string())?.is_some_and(|m| m.source == source) {
                    ids.push(seq);
                }
            }
            let n = a.done.saturating_sub(a.failed) as usize;
            v["documents"] = serde_json::json!(ids[ids.len().saturating_sub(n)..]);
            v["file"] = serde_json::json!(file);
        }
        Ok(v)
    }

    /// The read view of `/metrics`, opened again when older than [`REFRESH`].
    fn view(&self) -> Result<Arc<DataDir>, String> {
        let mut v = self.view.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((at, dd)) = v.as_ref() {
            if at.elapsed() < REFRESH {
                return Ok(Arc::clone(dd));
            }
        }
        let dd = Arc::new(DataDir::open_read(&self.dir).map_err(|e| e.to_string())?);
        *v = Some((Instant::now(), Arc::clone(&dd)));
        Ok(dd)
    }
}

const HTML: &str = "text/html; charset=utf-8";
const JSON: &str = "application/json";

fn json(v: &impl serde::Serialize) -> Result<Reply, String> {
    serde_json::to_vec(v).map(|b| (200, JSON, b)).map_err(|e| e.to_string())
}

/// `GET /api/documents`: rows after `after`, at most `limit` (default 100), names
/// starting with `name`.
fn documents(store: &Store, query: &[(String, String)]) -> Result<Reply, String> {
    let param = |k: &str| query.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let after: u64 = match param("after").map(str::parse) {
        None => 0,
        Some(Ok(n)) => n,
        Some(Err(_)) => return Ok(json_error(400, "`after` must be a document id")),
    };
    let limit: usize = match param("limit").map(str::parse) {
        None => 100,
        Some(Ok(n)) if (1..=MAX_LIMIT).contains(&n) => n,
        _ => return Ok(json_error(400, &format!("`limit` must be 1-{MAX_LIMIT}"))),
    };
    let prefix = param("name").unwrap_or("");
    let mut rows = Vec::new();
    for meta in store.docs_from(after.saturating_add(1)) {
        let meta = meta.map_err(|e| e.to_string())?;
        if !meta.name.starts_with(prefix) {
            continue;
        }
        rows.push(model::list_row(store, &meta).map_err(|e| e.to_string())?);
        if rows.len() == limit {
            break;
        }
    }
    let next_after = (rows.len() == limit).then(|| rows.last().map(|r| r.id)).flatten();
    json(&serde_json::json!({ "documents": rows, "next_after": next_after }))
}

fn resolve(store: &Store, name_or_id: &str) -> Result<u64, String> {
    store.resolve(name_or_id).map_err(|_| format!("document `{name_or_id}` not found"))
}

/// `GET /api/documents/{x}`: what `show --json` prints.
fn document_json(store: &Store, name_or_id: &str) -> Result<Reply, String> {
    let seq = resolve(store, name_or_id)?;
    json(&model::stored_document(store, seq, ViewOptions::default()).map_err(|e| e.to_string())?)
}

/// `GET /documents/{x}`: the document page, its origins linking to their own pages.
fn document_page(store: &Store, name_or_id: &str) -> Result<Reply, String> {
    let seq = resolve(store, name_or_id)?;
    let v = model::stored_document(store, seq, ViewOptions::default()).map_err(|e| e.to_string())?;
    let text = store.text(seq).map_err(|e| e.to_string())?.unwrap_or_default();
    let page = html::document_page_linked(&v, &text, |id, seg| format!("/documents/{id}#:~:text={}", text_fragment(seg)));
    Ok((200, HTML, nav(page).into_bytes()))
}

/// `GET /metrics`: `stats --prometheus`, then the daemon's stage seconds, apply
/// latency histogram, text bytes and checkpoint age.
fn metrics(dd: &DataDir, dir: &Path, share: &StoreShare) -> Result<Reply, String> {
    let v = model::stats(&dd.store, &dd.table, &dd.indexes(), dd.config(), dir).map_err(|e| e.to_string())?;
    let (times, latency) = share.telemetry();
    let age = (0..2)
        .filter_map(|slot| std::fs::metadata(crate::storage::checkpoint::slot_paths(dir, slot).1).and_then(|m| m.modified()).ok())
        .max()
        .and_then(|t| t.elapsed().ok())
        .map(|d| d.as_secs_f64());
    let body = prometheus::stats(&v) + &prometheus::telemetry(&times, &latency, age);
    Ok((200, "text/plain; version=0.0.4", body.into_bytes()))
}

/// `GET /`: the newest documents (or those whose name starts with `name`), newest first.
fn index_page(store: &Store, query: &[(String, String)]) -> Result<Reply, String> {
    let prefix = query.iter().find(|(n, _)| n == "name").map_or("", |(_, v)| v.as_str());
    let mut rows = Vec::new();
    for meta in store.docs_newest_first() {
        let meta = meta.map_err(|e| e.to_string())?;
        if meta.name.starts_with(prefix) {
            rows.push(model::list_row(store, &meta).map_err(|e| e.to_string())?);
            if rows.len() == INDEX_ROWS {
                break;
            }
        }
    }
    let mut s = String::from("<h1>Documents</h1><form action=\"/\"><input name=\"name\" placeholder=\"name starts with\" value=\"");
    s += &html::escape(prefix);
    s += "\"> <button>Search</button></form><p><a href=\"/report\">Collection report</a> · <a href=\"/metrics\">metrics</a></p>\
          <table id=\"documents\"><tr><th>id</th><th>name</th><th>tokens</th><th>old</th><th>dominant origin</th></tr>";
    for r in &rows {
        let dom = match r.dominant() {
            model::Dominant::Other(d) => format!("<a href=\"/documents/{}\">#{} {}</a>", d.id.unwrap_or(0), d.id.unwrap_or(0), html::escape(&d.name)),
            model::Dominant::Itself => "itself".into(),
            model::Dominant::None => "-".into(),
        };
        let old = if r.tokens == 0 { 0.0 } else { 100.0 * f64::from(r.old_tokens) / f64::from(r.tokens) };
        s += &format!(
            "<tr><td>{}</td><td><a href=\"/documents/{}\">{}</a></td><td>{}</td><td>{old:.1}%</td><td>{dom}</td></tr>",
            r.id,
            r.id,
            html::escape(&r.name),
            r.tokens
        );
    }
    s += "</table>\n";
    Ok((200, HTML, html::page("textorigin", &s).into_bytes()))
}

/// A submitted document's name: a spool file name's stem.
fn valid_name(n: &str) -> bool {
    (1..=200).contains(&n.len()) && !n.starts_with('.') && !n.contains(['/', '\0'])
}

/// The input format of a body, as a file extension, from its content type.
fn extension(head: &Head) -> &'static str {
    let ct = head.header("content-type").unwrap_or("").to_ascii_lowercase();
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
fn parse_body(head: &Head, body: &[u8], name: &str, max: u64) -> Result<crate::input::InputDoc, Reply> {
    if body.is_empty() {
        return Err(json_error(400, "the request body (the document) is empty"));
    }
    let docs = crate::input::parse_bytes(body.to_vec(), extension(head), name, "http", max).map_err(|e| json_error(400, &e.to_string()))?;
    match docs.into_iter().next() {
        Some(Ok(doc)) => Ok(doc),
        Some(Err(e)) => Err(json_error(400, &e.to_string())),
        None => Err(json_error(400, "the body holds no document")),
    }
}

/// A text fragment (`#:~:text=...`, the scroll-to-text URL fragment) for a passage:
/// its first eight words, percent-encoded, so that a browser opens the origin's page at
/// the passage.
fn text_fragment(passage: &str) -> String {
    let words: Vec<&str> = passage.split_whitespace().take(8).collect();
    let mut out = String::new();
    for b in words.join(" ").bytes() {
        if b.is_ascii_alphanumeric() || b"._~".contains(&b) {
            out.push(b as char);
        } else {
            out += &format!("%{b:02X}");
        }
    }
    out
}

/// A link back to the list at the top of a page.
fn nav(page: String) -> String {
    page.replacen("<body>", "<body><p><a href=\"/\">← documents</a></p>", 1)
}

/// A parsed request head.
struct Head {
    method: String,
    path: String,
    query: Vec<(String, String)>,
    headers: Vec<(String, String)>,
    content_length: u64,
    /// Bytes after the head that the head's reader had already taken.
    ahead: Vec<u8>,
}

impl Head {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    fn param(&self, name: &str) -> Option<&str> {
        self.query.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// Reads the body the head declares, within `max` bytes.
fn read_body(stream: &TcpStream, head: &Head, max: u64) -> Result<Vec<u8>, Reply> {
    if head.content_length > max {
        return Err(json_error(413, &format!("the body is larger than {max} bytes (--max-doc-bytes)")));
    }
    let mut body = vec![0u8; head.content_length as usize];
    // The head was read through a buffer: what it read ahead is the body's start.
    let ahead = head.ahead.len().min(body.len());
    body[..ahead].copy_from_slice(&head.ahead[..ahead]);
    (&*stream).read_exact(&mut body[ahead..]).map_err(|_| json_error(400, "the body ended before its Content-Length"))?;
    Ok(body)
}

/// Reads and parses the request head, within the bounds; an error is the reply.
fn read_head(stream: &TcpStream) -> Result<Head, Reply> {
    let mut reader = BufReader::new(stream.take(MAX_HEAD as u64 + 1));
    let mut lines = Vec::new();
    let mut total = 0;
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) => return Err(json_error(400, "the request ended before its head did")),
            Ok(n) => total += n,
            Err(_) => return Err(json_error(400, "the request head could not be read (timeout or not UTF-8)")),
        }
        if total > MAX_HEAD {
            return Err(json_error(431, &format!("the request head is larger than {MAX_HEAD} bytes")));
        }
        let line = line.trim_end_matches(['\r', '\n']).to_string();
        if line.is_empty() {
            break;
        }
        lines.push(line);
        if lines.len() > MAX_HEADERS + 1 {
            return Err(json_error(431, &format!("more than {MAX_HEADERS} headers")));
        }
    }
    let mut parts = lines.first().map(|l| l.split(' ')).ok_or_else(|| json_error(400, "empty request"))?;
    let (Some(method), Some(target), Some(version), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return Err(json_error(400, "the request line is not `METHOD TARGET HTTP/1.x`"));
    };
    if !version.starts_with("HTTP/1.") || !target.starts_with('/') {
        return Err(json_error(400, "the request line is not `METHOD /TARGET HTTP/1.x`"));
    }
    let mut headers = Vec::new();
    for l in &lines[1..] {
        let (n, v) = l.split_once(':').ok_or_else(|| json_error(400, "a header line without `:`"))?;
        headers.push((n.trim().to_string(), v.trim().to_string()));
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let query = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect();
    let ahead = reader.buffer().to_vec();
    let head = Head { method: method.to_string(), path: path.to_string(), query, headers, content_length: 0, ahead };
    let content_length = match head.header("content-length").map(str::parse::<u64>) {
        None => 0,
        Some(Ok(n)) => n,
        Some(Err(_)) => return Err(json_error(400, "Content-Length is not a number")),
    };
    if head.header("transfer-encoding").is_some() {
        return Err(json_error(411, "send the body with a Content-Length"));
    }
    Ok(Head { content_length, ..head })
}

/// Decodes `%XX` escapes and `+` (as a space, in query strings and paths alike).
fn percent_decode(s: &str) -> String {
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match (b[i], b.get(i + 1).copied().and_then(hex), b.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(h), Some(l)) => {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
            (b'+', _, _) => out.push(b' '),
            (c, _, _) => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn error_body(message: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({ "error": message })).expect("a JSON string")
}

fn json_error(status: u16, message: &str) -> Reply {
    (status, JSON, error_body(message))
}

/// A whole HTTP/1.1 response.
fn response(status: u16, content_type: &str, body: &[u8]) -> Vec<u8> {
    let reason = match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        _ => "Service Unavailable",
    };
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%20b+c%2Fd"), "a b c/d");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(percent_decode("%E2%82%AC"), "€");
    }

    #[test]
    fn text_fragments_take_the_first_words_encoded() {
        assert_eq!(text_fragment("The old harbour-bridge, reopened\n on Monday at 7 a.m. today"), "The%20old%20harbour%2Dbridge%2C%20reopened%20on%20Monday%20at%207");
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
    }
}
