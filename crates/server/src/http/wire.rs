//! The inspector's connections: accepted by one listener thread, each read and answered
//! on a thread of its own within deadlines, handled by at most `workers` at once.
//!
//! **Slow clients cost a thread, never a handler, and never for long** (were a
//! handler held while a request is read, 68 connections sending a byte every 2 s would
//! hold 4 workers and fill the queue, and other clients would time out or get 503). A
//! request goes through:
//! 1. its head, parsed by `httparse`, within [`HEAD_DEADLINE`] in all (not per read);
//! 2. the `Host` it is sent to, one of the names the server answers to (421 otherwise),
//!    and the `Origin` of a browser's request, one of those too (403 otherwise): a page
//!    of another site, its name rebound to 127.0.0.1 (DNS rebinding), gets nothing;
//!    then the token, when the server has one: 401 before any byte of the body is read
//!    (and before the body's size is checked, so that the limit is not told to strangers);
//! 3. the body's size against its route's limit ([`body_limit`]: none on GET, a few KiB
//!    for the sign-in forms, `--http-max-query-bytes` for both query routes,
//!    `--max-doc-bytes` for the rest; 413 past it), `100 Continue` when asked for, and
//!    the body as it arrives: the buffer grows with the bytes received, never ahead of
//!    them to the announced length, every body byte held counts against one cap for
//!    all connections ([`Limits::max_in_flight`]; 503 past it), and the bytes must keep
//!    coming: [`BODY_DEADLINE`] from the head plus one second per [`MIN_BODY_RATE`]
//!    bytes *received* (a silent client is cut after seconds, whatever it announced);
//! 4. a handler: one of `workers` permits, waited for at most [`HANDLER_WAIT`] (503);
//!    a handler that must wait for the daemon ([`Waiting`]) gives its permit back
//!    and waits on the connection's own thread, one of at most [`MAX_WAITING`];
//! 5. the reply, written within [`WRITE_DEADLINE`], then the client's unread input
//!    drained for at most [`LINGER`] in all (closing with unread input would reset the
//!    connection and could lose the reply).
//!
//! **Load shedding**: at most [`MAX_CONNECTIONS`] connections are open; a new one past
//! that cuts the oldest connection that is not being handled (a slow sender or reader
//! is the oldest: a normal request is done in milliseconds), so that the slow ones
//! never fill the server. Only when every open connection is being handled does a new
//! one get 503 at once.

use std::collections::BTreeMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Largest request head (request line and headers).
pub(super) const MAX_HEAD: usize = 16 << 10;
/// Most headers in a request.
pub(super) const MAX_HEADERS: usize = 64;
/// The whole head must arrive within this.
pub(super) const HEAD_DEADLINE: Duration = Duration::from_secs(10);
/// The body must arrive within this, plus a second per [`MIN_BODY_RATE`] bytes.
pub(super) const BODY_DEADLINE: Duration = Duration::from_secs(10);
pub(super) const MIN_BODY_RATE: u64 = 64 << 10;
/// Largest body of the sign-in forms (`/login`, `/logout`): a token, a path and a CSRF
/// token.
pub(super) const MAX_FORM_BODY: u64 = 8 << 10;
/// The step a body's buffer grows by at least (then by what it holds: at most twice
/// the bytes received).
const BODY_STEP: usize = 64 << 10;
/// How long a complete request waits for a handler before it gets 503.
pub(super) const HANDLER_WAIT: Duration = Duration::from_secs(10);
/// The whole reply must be taken by the client within this.
pub(super) const WRITE_DEADLINE: Duration = Duration::from_secs(10);
/// How long, and how many bytes, a reply waits for the client's unread input, in all.
pub(super) const LINGER: Duration = Duration::from_millis(500);
const MAX_DRAIN: u64 = 1 << 20;
/// Open connections at most (each has a thread while it is open).
pub(super) const MAX_CONNECTIONS: usize = 256;

/// Requests that wait for the daemon at once ([`Waiting`]); more are answered at
/// once with their fallback.
pub(super) const MAX_WAITING: usize = 64;

/// A response: status, content type, body.
pub(super) type Reply = (u16, &'static str, Vec<u8>);

/// What a handler answers: a reply, or a wait for one that holds no handler permit.
pub(super) enum Answer {
    Reply(Reply),
    /// A reply with more headers (`Location`, `Set-Cookie`).
    Headed(Reply, Vec<(&'static str, String)>),
    Wait(Box<Waiting>),
}

/// A reply waited for: `poll` is called every [`POLL`] until it gives the reply or
/// `until` passes (then `late`); with [`MAX_WAITING`] requests waiting already, `busy`
/// at once.
pub(super) struct Waiting {
    pub(super) poll: Box<dyn FnMut() -> Option<Reply> + Send>,
    pub(super) until: Instant,
    pub(super) late: Reply,
    pub(super) busy: Reply,
}

impl From<Reply> for Answer {
    fn from(reply: Reply) -> Answer {
        Answer::Reply(reply)
    }
}

/// How a request was let in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Auth {
    /// The server has no token.
    Open,
    /// `Authorization: Bearer TOKEN`.
    Bearer,
    /// A browser's session cookie ([`super::session`]), with the session's CSRF token.
    Session(String),
    /// Neither, on the sign-in page's own routes.
    SigningIn,
}

/// Who may come in: asked once a request's head is read (before its body, so that a
/// stranger's body is never read) and again once its body is.
pub(super) trait Gate: Send + Sync {
    /// How the request is let in, or the answer that turns it away.
    fn admit(&self, request: &Request) -> Result<Auth, Answer>;
    /// The answer that refuses the request now that its body is read, if any.
    fn refuse_body(&self, request: &Request) -> Option<Answer>;
}

/// How often a waiting request looks again.
const POLL: Duration = Duration::from_millis(50);

/// A request handler.
pub(super) type Handler = dyn Fn(&Request) -> Answer + Send + Sync;

/// A request as the handlers see it: the head parsed and the body read.
pub(super) struct Request {
    pub(super) method: String,
    /// The path as sent (percent-encoded): the router splits it at `/` and decodes each
    /// segment, so that an encoded `/` stays inside its segment.
    pub(super) path: String,
    pub(super) query: Vec<(String, String)>,
    headers: Vec<(String, String)>,
    pub(super) body: Vec<u8>,
    pub(super) auth: Auth,
    /// Who sent it: failed tokens are counted per client ([`super::session`]).
    pub(super) peer: std::net::IpAddr,
    /// The body's bytes counted against [`Limits::max_in_flight`] while the request lives.
    _held: Option<Held>,
}

impl Request {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub(super) fn param(&self, name: &str) -> Option<&str> {
        self.query.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// What every connection is held to.
pub(super) struct Limits {
    /// With a token: who is let in ([`Gate`]; every request needs the token or a
    /// session). Without one every request is [`Auth::Open`].
    pub(super) gate: Option<Arc<dyn Gate>>,
    /// The `Host` values answered to (lower case, each with and without the port when
    /// the port is the default one); a browser's `Origin` must be `http://` one of them.
    pub(super) hosts: Vec<String>,
    /// Largest request body.
    pub(super) max_body: u64,
    /// Largest body of `POST /api/query` and `POST /query` (`--http-max-query-bytes`).
    pub(super) max_query_body: u64,
    /// Body bytes held at once by all connections (being read or handled).
    pub(super) max_in_flight: u64,
    /// Requests handled at once.
    pub(super) workers: usize,
}

/// Where a connection is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Reading the request, waiting for a handler, or writing the reply: may be cut.
    Io,
    /// Being handled: holds a permit, finishes by itself.
    Handling,
}

/// The open connections, oldest first (ids grow), each with a handle that can cut it.
#[derive(Default)]
struct Conns {
    next: u64,
    open: BTreeMap<u64, (Phase, TcpStream)>,
}

/// The open connections and the handler permits.
struct Shared {
    limits: Limits,
    conns: Mutex<Conns>,
    /// Signalled when a connection closes or a permit is given back.
    changed: Condvar,
    permits: Mutex<usize>,
    /// Requests waiting for the daemon ([`Waiting`]).
    waiting: std::sync::atomic::AtomicUsize,
    /// Body bytes held now ([`Limits::max_in_flight`]).
    in_flight: Arc<AtomicU64>,
}

/// Body bytes counted in [`Shared::in_flight`], given back when dropped.
struct Held {
    count: Arc<AtomicU64>,
    bytes: u64,
}

impl Held {
    /// Counts `more` bytes too, unless that passes `cap`.
    fn grow(&mut self, more: u64, cap: u64) -> bool {
        let before = self.count.fetch_add(more, Ordering::SeqCst);
        if before + more > cap {
            self.count.fetch_sub(more, Ordering::SeqCst);
            return false;
        }
        self.bytes += more;
        true
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.count.fetch_sub(self.bytes, Ordering::SeqCst);
    }
}

impl Shared {
    fn lock_conns(&self) -> std::sync::MutexGuard<'_, Conns> {
        self.conns.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a new connection, cutting the oldest one not being handled when the
    /// server is full; None: every open connection is being handled.
    fn admit(&self, stream: &TcpStream) -> Option<u64> {
        let mut c = self.lock_conns();
        if c.open.len() >= MAX_CONNECTIONS {
            let oldest = c.open.iter().find(|(_, (phase, _))| *phase == Phase::Io).map(|(&id, _)| id)?;
            if let Some((_, s)) = c.open.remove(&oldest) {
                tracing::debug!(connection = oldest, "http: too many connections; cutting the oldest slow one");
                let _ = s.shutdown(Shutdown::Both);
            }
        }
        let id = c.next;
        c.next += 1;
        let clone = stream.try_clone().ok()?;
        c.open.insert(id, (Phase::Io, clone));
        Some(id)
    }

    fn set_phase(&self, id: u64, phase: Phase) {
        if let Some(e) = self.lock_conns().open.get_mut(&id) {
            e.0 = phase;
        }
    }

    fn close(&self, id: u64) {
        self.lock_conns().open.remove(&id);
        self.changed.notify_all();
    }

    /// Takes a handler permit, waiting at most [`HANDLER_WAIT`].
    fn permit(&self) -> Option<Permit<'_>> {
        let until = Instant::now() + HANDLER_WAIT;
        let mut free = self.permits.lock().unwrap_or_else(PoisonError::into_inner);
        while *free == 0 {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            free = self.changed.wait_timeout(free, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        *free -= 1;
        Some(Permit(self))
    }
}

struct Permit<'a>(&'a Shared);

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        *self.0.permits.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        self.0.changed.notify_all();
    }
}

/// The listener's thread and what `join` waits for.
pub(super) struct Listener {
    thread: std::thread::JoinHandle<()>,
    shared: Arc<Shared>,
}

impl Listener {
    /// Waits for the listener (after the stop flag was set) and then for every open
    /// connection, each of which ends within its deadlines.
    pub(super) fn join(self) {
        let _ = self.thread.join();
        let mut c = self.shared.lock_conns();
        while !c.open.is_empty() {
            c = self.shared.changed.wait(c).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// Accepts connections on `listener` (non-blocking) until `stop` is set, each served on
/// a thread of its own by `handle`.
pub(super) fn listen(
    listener: TcpListener,
    limits: Limits,
    handle: Arc<Handler>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<Listener> {
    let permits = Mutex::new(limits.workers.max(1));
    let shared = Arc::new(Shared {
        limits,
        conns: Mutex::new(Conns::default()),
        changed: Condvar::new(),
        permits,
        waiting: Default::default(),
        in_flight: Arc::default(),
    });
    let s = Arc::clone(&shared);
    let thread = std::thread::Builder::new().name("http-listen".into()).spawn(move || {
        while !stop.load(Ordering::SeqCst) {
            match listener.accept() {
                Ok((stream, peer)) => accepted(&s, &handle, stream, peer.ip()),
                Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(10)),
                Err(e) => {
                    tracing::warn!(error = %e, "http: accept failed");
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        }
    })?;
    Ok(Listener { thread, shared })
}

fn accepted(shared: &Arc<Shared>, handle: &Arc<Handler>, stream: TcpStream, peer: std::net::IpAddr) {
    let _ = stream.set_nonblocking(false);
    let Some(id) = shared.admit(&stream) else {
        let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
        let _ = (&stream).write_all(&response(503, JSON, &error_body("the server is busy; try again"), &[]));
        return;
    };
    let (s, h) = (Arc::clone(shared), Arc::clone(handle));
    let spawned = std::thread::Builder::new().name(format!("http-{id}")).spawn(move || {
        serve(&s, id, &stream, peer, &*h);
        s.close(id);
    });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "http: cannot start a connection thread");
        shared.close(id);
    }
}

/// One connection: one request, one reply (`Connection: close`).
fn serve(shared: &Shared, id: u64, stream: &TcpStream, peer: std::net::IpAddr, handle: &Handler) {
    let answer = match read_request(shared, stream, peer) {
        Ok(request) => match shared.permit() {
            Some(_permit) => {
                shared.set_phase(id, Phase::Handling);
                let answer = handle(&request);
                shared.set_phase(id, Phase::Io);
                answer
            }
            None => Answer::Reply(json_error(503, "the server is busy; try again")),
        },
        Err(answer) => answer,
    };
    let (reply, headers) = match answer {
        Answer::Reply(reply) => (reply, Vec::new()),
        Answer::Headed(reply, headers) => (reply, headers),
        Answer::Wait(w) => (shared.wait(*w), Vec::new()),
    };
    let bytes = response(reply.0, reply.1, &reply.2, &headers);
    let written = write_until(stream, &bytes, Instant::now() + WRITE_DEADLINE);
    if written.is_ok() {
        let _ = stream.shutdown(Shutdown::Write);
        drain(stream, Instant::now() + LINGER);
    }
}

impl Shared {
    /// Waits for `poll`'s reply (see [`Waiting`]) without a handler permit.
    fn wait(&self, w: Waiting) -> Reply {
        let Waiting { mut poll, until, late, busy } = w;
        if self.waiting.fetch_add(1, Ordering::SeqCst) >= MAX_WAITING {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            return busy;
        }
        let reply = loop {
            if let Some(reply) = poll() {
                break reply;
            }
            if Instant::now() >= until {
                break late;
            }
            std::thread::sleep(POLL);
        };
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        reply
    }
}

/// Reads a request in the order the module docs give; an error is the answer.
fn read_request(shared: &Shared, stream: &TcpStream, peer: std::net::IpAddr) -> Result<Request, Answer> {
    let (mut request, content_length, ahead) = read_head(stream, Instant::now() + HEAD_DEADLINE)?;
    request.peer = peer;
    let hosts = &shared.limits.hosts;
    let host = request.header("host").map(|h| h.trim().to_ascii_lowercase());
    if !host.as_ref().is_some_and(|h| hosts.contains(h)) {
        return Err(json_error(
            421,
            &format!("this server answers to the host names {} only (--http-host adds one)", hosts.join(", ")),
        )
        .into());
    }
    if let Some(origin) = request.header("origin").map(|o| o.trim().to_ascii_lowercase()) {
        // `https://`: the page came through a TLS proxy in front (README, "Teams"); an
        // origin without a port has its scheme's (`--http-host NAME:443`).
        let host = match origin.split_once("://") {
            Some(("http", h)) => Some((h, "80")),
            Some(("https", h)) => Some((h, "443")),
            _ => None,
        };
        let known = |(h, default): (&str, &str)| {
            let with_port = if h.ends_with(']') || !h.contains(':') { format!("{h}:{default}") } else { h.to_string() };
            hosts.iter().any(|x| *x == h || *x == with_port)
        };
        if !host.is_some_and(known) {
            return Err(json_error(403, "requests from pages of another origin are refused").into());
        }
    }
    request.auth = match &shared.limits.gate {
        Some(gate) => gate.admit(&request)?,
        None => Auth::Open,
    };
    let (limit, what) = body_limit(&shared.limits, &request);
    if content_length > limit {
        return Err(json_error(413, &format!("{what} is larger than {limit} bytes")).into());
    }
    let continue_asked = request.header("expect").is_some_and(|e| e.eq_ignore_ascii_case("100-continue"));
    if continue_asked && content_length as usize > ahead.len() {
        write_until(stream, b"HTTP/1.1 100 Continue\r\n\r\n", Instant::now() + WRITE_DEADLINE)
            .map_err(|_| json_error(400, "the connection failed"))?;
    }
    let mut held = Held { count: Arc::clone(&shared.in_flight), bytes: 0 };
    request.body = read_body(stream, content_length, ahead, &mut held, shared.limits.max_in_flight)?;
    request._held = Some(held);
    if let Some(refused) = shared.limits.gate.as_ref().and_then(|g| g.refuse_body(&request)) {
        return Err(refused);
    }
    Ok(request)
}

/// The largest body a request may have, and what the limit is called in the 413.
fn body_limit(limits: &Limits, request: &Request) -> (u64, &'static str) {
    let path = request.path.trim_end_matches('/');
    match (request.method.as_str(), path) {
        ("GET" | "HEAD", _) => (0, "a GET request's body"),
        ("POST", "/login" | "/logout") => (MAX_FORM_BODY, "a sign-in form"),
        ("POST", "/api/query" | "/query") => (limits.max_query_body, "a query (--http-max-query-bytes)"),
        _ => (limits.max_body, "the body (--max-doc-bytes)"),
    }
}

/// The `Host` values a server on `addr` answers to: its address, `localhost` when it
/// is loopback, and `extra`; each with its port, and also without when the port is 80.
pub(super) fn host_names(addr: SocketAddr, extra: &[String]) -> Vec<String> {
    let port = addr.port();
    let mut names = vec![match addr.ip() {
        std::net::IpAddr::V4(ip) => ip.to_string(),
        std::net::IpAddr::V6(ip) => format!("[{ip}]"),
    }];
    if addr.ip().is_loopback() {
        names.extend(["localhost".to_string(), "127.0.0.1".to_string(), "[::1]".to_string()]);
    }
    let mut out = Vec::new();
    for name in names.iter().chain(extra).map(|n| n.trim().to_ascii_lowercase()) {
        // `name:port`, `[v6]:port`; not a bare IPv6 address.
        let has_port = name
            .rsplit_once(':')
            .is_some_and(|(h, p)| p.parse::<u16>().is_ok() && (h.ends_with(']') || !h.contains(':')));
        let forms = match has_port {
            true => vec![name],
            false if port == 80 => vec![format!("{name}:{port}"), name],
            false => vec![format!("{name}:{port}")],
        };
        for f in forms {
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    out
}

/// Reads into `buf` before `until`: a timeout is an error of kind `TimedOut`.
fn read_until(stream: &TcpStream, buf: &mut [u8], until: Instant) -> std::io::Result<usize> {
    let left = until.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(ErrorKind::TimedOut.into());
    }
    stream.set_read_timeout(Some(left))?;
    (&*stream).read(buf).map_err(|e| if e.kind() == ErrorKind::WouldBlock { ErrorKind::TimedOut.into() } else { e })
}

fn write_until(stream: &TcpStream, mut bytes: &[u8], until: Instant) -> std::io::Result<()> {
    while !bytes.is_empty() {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ErrorKind::TimedOut.into());
        }
        stream.set_write_timeout(Some(left))?;
        match (&*stream).write(bytes) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Reads and drops what the client still sends, until it stops, `until`, or
/// [`MAX_DRAIN`] bytes.
fn drain(stream: &TcpStream, until: Instant) {
    let mut buf = [0u8; 4096];
    let mut total = 0u64;
    while total < MAX_DRAIN {
        match read_until(stream, &mut buf, until) {
            Ok(0) | Err(_) => return,
            Ok(n) => total += n as u64,
        }
    }
}

/// Reads the request head before `until`: the request (without its body), the body's
/// length, and the bytes read past the head (the body's start).
fn read_head(stream: &TcpStream, until: Instant) -> Result<(Request, u64, Vec<u8>), Reply> {
    let mut buf: Vec<u8> = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let n = match read_until(stream, &mut chunk, until) {
            Ok(0) => return Err(json_error(400, "the request ended before its head did")),
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::TimedOut => {
                return Err(json_error(
                    408,
                    &format!("the request head did not arrive within {} s", HEAD_DEADLINE.as_secs()),
                ))
            }
            Err(_) => return Err(json_error(400, "the request head could not be read")),
        };
        // Parse only once a blank line may have arrived (not at every byte).
        let from = buf.len().saturating_sub(3);
        buf.extend_from_slice(&chunk[..n]);
        if buf[from..].windows(2).any(|w| w == b"\n\n") || buf[from..].windows(3).any(|w| w == b"\n\r\n") {
            if let Some(parsed) = parse_head(&buf)? {
                return Ok(parsed);
            }
        }
        if buf.len() > MAX_HEAD {
            return Err(json_error(431, &format!("the request head is larger than {MAX_HEAD} bytes")));
        }
    }
}

/// Parses a head with `httparse`: None while it is incomplete.
fn parse_head(buf: &[u8]) -> Result<Option<(Request, u64, Vec<u8>)>, Reply> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let end = match req.parse(buf) {
        Ok(httparse::Status::Complete(end)) => end,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(json_error(431, &format!("more than {MAX_HEADERS} headers")))
        }
        Err(httparse::Error::Version) => return Err(json_error(505, "only HTTP/1.0 and HTTP/1.1 are served")),
        Err(e) => return Err(json_error(400, &format!("the request head is malformed: {e}"))),
    };
    if end > MAX_HEAD {
        return Err(json_error(431, &format!("the request head is larger than {MAX_HEAD} bytes")));
    }
    let (Some(method), Some(target)) = (req.method, req.path) else {
        return Err(json_error(400, "the request line is not `METHOD TARGET HTTP/1.x`"));
    };
    if !target.starts_with('/') {
        return Err(json_error(400, "the request target must be a path (`/...`)"));
    }
    let mut fields = Vec::with_capacity(req.headers.len());
    for h in req.headers.iter() {
        let value =
            std::str::from_utf8(h.value).map_err(|_| json_error(400, &format!("header `{}` is not UTF-8", h.name)))?;
        fields.push((h.name.to_string(), value.trim().to_string()));
    }
    let content_length = content_length(&fields)?;
    if fields.iter().any(|(n, _)| n.eq_ignore_ascii_case("transfer-encoding")) {
        return Err(json_error(411, "send the body with a Content-Length"));
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let query = form_urlencoded::parse(query.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    let request = Request {
        method: method.to_string(),
        path: path.to_string(),
        query,
        headers: fields,
        body: Vec::new(),
        auth: Auth::Open,
        peer: std::net::IpAddr::from([0, 0, 0, 0]),
        _held: None,
    };
    Ok(Some((request, content_length, buf[end..].to_vec())))
}

/// The body's length: every `Content-Length` header must be digits only and all of
/// them the same number (RFC 9112, 6.3: otherwise the message framing is unknown).
fn content_length(fields: &[(String, String)]) -> Result<u64, Reply> {
    let mut length = None;
    for (_, v) in fields.iter().filter(|(n, _)| n.eq_ignore_ascii_case("content-length")) {
        let n = (!v.is_empty() && v.len() <= 19 && v.bytes().all(|b| b.is_ascii_digit()))
            .then(|| v.parse::<u64>().ok())
            .flatten()
            .ok_or_else(|| json_error(400, "Content-Length is not a number"))?;
        if length.is_some_and(|l| l != n) {
            return Err(json_error(400, "Content-Length headers disagree"));
        }
        length = Some(n);
    }
    Ok(length.unwrap_or(0))
}

/// Reads a body of `len` bytes, `ahead` of which came with the head, as the module docs
/// say: its buffer held in `held` (at most `cap` bytes for all connections), grown with
/// the bytes received, which must keep up with [`MIN_BODY_RATE`] after [`BODY_DEADLINE`].
fn read_body(stream: &TcpStream, len: u64, ahead: Vec<u8>, held: &mut Held, cap: u64) -> Result<Vec<u8>, Reply> {
    let started = Instant::now();
    let len = len as usize;
    let mut body = ahead;
    body.truncate(len);
    let mut done = body.len();
    let busy = || json_error(503, "the server is reading too many request bodies at once; try again");
    if !held.grow(done as u64, cap) {
        return Err(busy());
    }
    while done < len {
        if done == body.len() {
            let end = len.min(done + done.max(BODY_STEP));
            if !held.grow((end - done) as u64, cap) {
                return Err(busy());
            }
            body.resize(end, 0);
        }
        let until = started + BODY_DEADLINE + Duration::from_secs(done as u64 / MIN_BODY_RATE);
        match read_until(stream, &mut body[done..], until) {
            Ok(0) => return Err(json_error(400, "the body ended before its Content-Length")),
            Ok(n) => done += n,
            Err(e) if e.kind() == ErrorKind::TimedOut => {
                return Err(json_error(
                    408,
                    &format!(
                        "the body did not arrive in time ({} s, then {} KiB a second)",
                        BODY_DEADLINE.as_secs(),
                        MIN_BODY_RATE >> 10
                    ),
                ))
            }
            Err(_) => return Err(json_error(400, "the body could not be read")),
        }
    }
    Ok(body)
}

pub(super) const JSON: &str = "application/json";
pub(super) const HTML: &str = "text/html; charset=utf-8";

pub(super) fn error_body(message: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({ "error": message })).expect("a JSON string")
}

pub(super) fn json_error(status: u16, message: &str) -> Reply {
    (status, JSON, error_body(message))
}

/// A whole HTTP/1.1 response, with `headers` besides the usual ones.
pub(super) fn response(status: u16, content_type: &str, body: &[u8], headers: &[(&str, String)]) -> Vec<u8> {
    let reason = match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        303 => "See Other",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        421 => "Misdirected Request",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        505 => "HTTP Version Not Supported",
        _ => "Service Unavailable",
    };
    // A header value is printable: a control character (a line feed above all) would end
    // the header and let a value write headers of its own.
    if headers.iter().any(|(k, v)| k.bytes().chain(v.bytes()).any(|b| b < 0x20 || b == 0x7f)) {
        tracing::warn!(status, "http: a reply's header held a control character; answered 500 instead");
        return response(500, JSON, &error_body("the reply could not be made"), &[]);
    }
    let challenge = if status == 401 { "WWW-Authenticate: Bearer realm=\"textorigin\"\r\n" } else { "" };
    let extra: String = headers.iter().map(|(k, v)| format!("{k}: {v}\r\n")).collect();
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{challenge}{extra}Connection: close\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(head: &str) -> Result<Option<(Request, u64, Vec<u8>)>, u16> {
        parse_head(head.as_bytes()).map_err(|r| r.0)
    }

    #[test]
    fn heads_parse_strictly() {
        let (r, len, ahead) =
            parsed("POST /api/documents?name=a%20b+c&wait=true HTTP/1.1\r\nContent-Length: 5\r\n\r\nhel")
                .unwrap()
                .unwrap();
        assert_eq!(
            (r.method.as_str(), r.path.as_str(), len, ahead.as_slice()),
            ("POST", "/api/documents", 5, &b"hel"[..])
        );
        assert_eq!((r.param("name"), r.param("wait")), (Some("a b c"), Some("true")));
        assert!(parsed("GET / HTTP/1.1\r\nHost: x\r\n").unwrap().is_none(), "incomplete");
        assert_eq!(parsed("GET / HTTP/1.9\r\n\r\n").err(), Some(505));
        assert_eq!(parsed("GET / HTTP/1.1\r\nContent-Length: +5\r\n\r\n").err(), Some(400));
        assert_eq!(parsed("GET / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n").err(), Some(400));
        assert_eq!(parsed("GET / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n").unwrap().unwrap().1, 5);
        assert_eq!(parsed("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").err(), Some(411));
        assert_eq!(parsed("GET http://x/ HTTP/1.1\r\n\r\n").err(), Some(400));
        assert_eq!(parsed("BROKEN\r\n\r\n").err(), Some(400));
    }

    #[test]
    fn no_header_carries_a_control_character() {
        for bad in ["/x\nSet-Cookie: injected=1", "/x\r\nA: b", "/\t/evil.example", "/x\u{7f}"] {
            let r = String::from_utf8(response(303, HTML, b"", &[("Location", bad.to_string())])).unwrap();
            assert!(r.starts_with("HTTP/1.1 500 ") && !r.contains("Location") && !r.contains("injected"), "{r}");
        }
        let r = String::from_utf8(response(303, HTML, b"", &[("Location", "/documents/a?b=c".into())])).unwrap();
        assert!(r.starts_with("HTTP/1.1 303 ") && r.contains("\r\nLocation: /documents/a?b=c\r\n"), "{r}");
    }

    #[test]
    fn a_401_carries_its_challenge() {
        let r = String::from_utf8(response(401, JSON, b"{}", &[])).unwrap();
        assert!(r.contains("\r\nWWW-Authenticate: Bearer realm=\"textorigin\"\r\n"), "{r}");
        assert!(!String::from_utf8(response(404, JSON, b"{}", &[])).unwrap().contains("WWW-Authenticate"));
    }
}
