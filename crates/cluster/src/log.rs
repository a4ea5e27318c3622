//! The log: NATS JetStream streams as an ordered, durable, replicated sequence of
//! messages whose sequence numbers are ours (`docs/SCALE-OUT.md`, "The log").
//!
//! A blocking facade over `async-nats`, because the rest of textorigin is threads and
//! channels. A stream holds numbered records, several to a message ([`crate::batch`]):
//! [`Appends`] puts record `n` into a stream exactly once, [`Reader`] reads a stream's
//! records in order from any record number, waiting for ones that are not there yet;
//! [`Log::get`], [`Log::last_seq`] and [`Log::first_seq`] are about records too. The
//! client's runtime has no thread of its own: it runs on the caller's while the caller
//! is in the log (a message read or acknowledged wakes no other thread), and the server
//! holds what arrives meanwhile. A process handles a few messages a document, and
//! waking a second thread for each cost its aggregator 13% and its workers 25% of their
//! CPU (`docs/SCALE-OUT.md`, "What it costs, measured").
//!
//! Exactly once, by batch: a stream has one writer, which sends its batches as messages
//! `m`, `m + 1`, ... each saying which sequence number it must get
//! (`Nats-Expected-Last-Sequence: m − 1`) and which batch it follows (its bounds, the
//! batches' message ids), so a second append of the same batch — a retry after a lost
//! acknowledgement — is refused by the server, and the records already there are
//! compared with ours: equal is success, different is a [`LogError::Conflict`] (two
//! writers, or a determinism bug). A writer that restarts
//! reads the stream's last batch and sends only the records after it; the records it
//! makes again up to there are compared with the stored ones. Errors of the connection
//! (a server being killed, a leader election) are retried until [`RETRY_FOR`] has passed;
//! what waiting does not mend is said at once as what it is: a stream not there
//! ([`LogError::NoStream`]), the servers' storage full ([`LogError::Full`]), the process's
//! user refused ([`LogError::Refused`], [`LogError::Denied`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, stream};
use async_nats::ServerAddr;
use futures_util::StreamExt;

use crate::auth::Credentials;
use crate::batch::{Batch, LATENCY};

mod append;
mod error;
mod reader;
pub use append::Appends;
pub use error::LogError;
use error::{lasting, nats, refused_tls, Denied};
use reader::After;
pub use reader::{Interleaved, Reader};

/// How long transient failures (no server, no leader, a timeout) are retried before an
/// operation fails.
pub const RETRY_FOR: Duration = Duration::from_secs(120);
const BACKOFF: Duration = Duration::from_millis(200);
/// How long a stream's last message may be missing before that is an error
/// ([`Log::tail`]): longer than a leader election takes.
const LAST_GONE_FOR: Duration = Duration::from_secs(10);

type Result<T> = std::result::Result<T, LogError>;

/// The last refusal the servers sent this connection, until an operation takes it.
type Refusals = Arc<Mutex<Option<String>>>;

/// What a message takes besides its records: the batch's head and each record's length
/// (`batch::Batch::encode`), and the headers of an append (its expected last sequence).
pub const FRAMING: usize = 4096;

/// How a process is known to the log servers, and which of their certificates it
/// trusts ([`Log::connect_as`]).
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// The NATS user and password of the process ([`crate::auth`]); none: the servers
    /// take anyone (a log on loopback for tests).
    pub credentials: Option<Credentials>,
    /// A CA certificate (PEM): the servers are reached over TLS only, and must show a
    /// certificate it signed.
    pub ca: Option<std::path::PathBuf>,
}

/// A connection to the log (cheap to clone).
#[derive(Clone)]
pub struct Log {
    inner: Arc<Inner>,
}

struct Inner {
    rt: tokio::runtime::Runtime,
    js: jetstream::Context,
    /// The readers' context: its requests wait at most [`reader::READ_WAIT`].
    reads: jetstream::Context,
    replicas: usize,
    /// The batches seen, per stream: first record → (message, last record). A message
    /// never changes, so what was seen narrows every later search for a record.
    places: Mutex<HashMap<String, Places>>,
    /// The writers of this process ([`Appends`]), flushed before any wait.
    writers: Mutex<Vec<std::sync::Weak<Mutex<append::Writer>>>>,
    /// [`Log::largest_record`], once a server has said it (read for every record
    /// appended: the client's copy of the server's description is not cheap to read).
    largest: std::sync::OnceLock<usize>,
    /// What the servers refused this process's user ([`retry`] ends on it).
    refusals: Refusals,
}

/// The log's own thread: every [`LATENCY`], a writer's batch open that long is sent
/// ([`append::Writer::send_if_late`]) and written out to the server (the client's
/// connection runs only while some thread waits on the log's runtime), so that a record
/// reaches the log within about `2 LATENCY` however long its writer then works without
/// adding or waiting (it sends itself only then). It ends with the log; a writer in
/// use is left to its owner.
fn send_old_batches(inner: &std::sync::Weak<Inner>) {
    while let Some(inner) = {
        std::thread::sleep(LATENCY);
        inner.upgrade()
    } {
        let (log, now) = (Log { inner }, Instant::now());
        let mut sent = false;
        for writer in log.writers() {
            if let Ok(mut w) = writer.try_lock() {
                sent |= w.send_if_late(now);
            }
        }
        if sent {
            if let Err(e) = log.block_on(log.inner.js.client().flush()) {
                tracing::warn!(error = %e, "cannot write the batches out to the log yet");
            }
        }
    }
}

/// A stream's batches seen: first record → (message, last record).
type Places = BTreeMap<u64, (u64, u64)>;

/// How many batches of a stream [`Places`] keeps at most (~40 bytes each).
const PLACES_KEPT: usize = 1 << 14;

impl std::fmt::Debug for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Log").field("replicas", &self.inner.replicas).finish_non_exhaustive()
    }
}

/// Retries `op` while it fails, until [`RETRY_FOR`], saying why every ten seconds (a
/// cluster still electing its leaders, or an error that will not pass, such as more
/// replicas than servers); at once with [`Denied`] when the servers refused the
/// process's user something meanwhile, and with what waiting does not mend ([`lasting`]:
/// a stream deleted, the storage full).
async fn retry<T, F, Fut>(refusals: &Refusals, mut op: F) -> std::result::Result<T, async_nats::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = std::result::Result<T, async_nats::Error>>,
{
    let start = Instant::now();
    let mut told = None::<Instant>;
    loop {
        let result = op().await;
        if let Err(e) = &result {
            if let Some(violation) = refusals.lock().expect("refusals").take() {
                return Err(Box::new(Denied(violation)));
            }
            if lasting(&**e).is_some() {
                return result;
            }
        }
        match result {
            Err(e) if start.elapsed() < RETRY_FOR => {
                if told.is_none_or(|t| t.elapsed() >= Duration::from_secs(10)) {
                    tracing::warn!(error = %e, "the log does not answer yet; retrying for up to {} s", RETRY_FOR.as_secs());
                    told = Some(Instant::now());
                }
                tokio::time::sleep(BACKOFF).await
            }
            r => return r,
        }
    }
}

impl Log {
    /// Connects to the servers in `urls` (comma-separated, e.g.
    /// `nats://127.0.0.1:4222,nats://127.0.0.1:4223`); streams made through this
    /// connection get `replicas` copies (1, or 3 on a 3-server cluster).
    pub fn connect(urls: &str, replicas: usize) -> Result<Log> {
        Log::connect_as(urls, replicas, &Access::default())
    }

    /// [`Log::connect`] with `access`'s credentials and certificates. Servers that do
    /// not answer are tried again for [`RETRY_FOR`]; credentials refused, or a TLS
    /// handshake that fails, end it at once.
    pub fn connect_as(urls: &str, replicas: usize, access: &Access) -> Result<Log> {
        let addrs = urls
            .split(',')
            .map(|u| u.trim().parse::<ServerAddr>().map_err(|source| LogError::Address { url: u.to_string(), source }))
            .collect::<Result<Vec<_>>>()?;
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(LogError::Runtime)?;
        let refusals = Refusals::default();
        let options = || {
            let told = refusals.clone();
            let mut o = async_nats::ConnectOptions::new().event_callback(move |event| {
                if let async_nats::Event::ServerError(async_nats::ServerError::Other(e)) = &event {
                    if e.to_ascii_lowercase().contains("permissions violation") {
                        *told.lock().expect("refusals") = Some(e.clone());
                    }
                }
                async {}
            });
            if let Some(c) = &access.credentials {
                o = o.user_and_password(c.user.clone(), c.password.clone());
            }
            if let Some(ca) = &access.ca {
                o = o.add_root_certificates(ca.clone()).require_tls(true);
            }
            o
        };
        let started = Instant::now();
        let client = loop {
            use async_nats::ConnectErrorKind as Kind;
            match rt.block_on(options().connect(addrs.clone())) {
                Ok(client) => break client,
                Err(e) if matches!(e.kind(), Kind::AuthorizationViolation | Kind::Authentication) => {
                    let user = access.credentials.as_ref().map(|c| c.user.clone());
                    return Err(LogError::Refused { urls: urls.to_string(), user });
                }
                Err(e) if e.kind() == Kind::Tls || refused_tls(&e) || started.elapsed() >= RETRY_FOR => {
                    return Err(nats(format!("cannot connect to {urls}"))(e.into()));
                }
                Err(e) => {
                    tracing::debug!(error = %e, "the log does not answer yet");
                    std::thread::sleep(BACKOFF);
                }
            }
        };
        let (js, reads) = {
            let _in_runtime = rt.enter(); // a context spawns its acknowledgement task
            let reads = jetstream::ContextBuilder::new().timeout(reader::READ_WAIT).build(client.clone());
            (jetstream::new(client), reads)
        };
        let log = Log {
            inner: Arc::new(Inner {
                rt,
                js,
                reads,
                replicas: replicas.max(1),
                places: Mutex::default(),
                writers: Mutex::default(),
                largest: std::sync::OnceLock::new(),
                refusals,
            }),
        };
        let inner = Arc::downgrade(&log.inner);
        std::thread::Builder::new()
            .name("log-batches".into())
            .spawn(move || send_old_batches(&inner))
            .map_err(LogError::Runtime)?;
        Ok(log)
    }

    fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.inner.rt.block_on(f)
    }

    /// Whether stream `name` exists (a user that may not make streams asks this rather
    /// than [`Log::create_stream`]).
    pub fn has_stream(&self, name: &str) -> Result<bool> {
        use jetstream::context::GetStreamErrorKind;
        let js = &self.inner.js;
        let found = self.block_on(retry(&self.inner.refusals, || async move {
            match js.get_stream(name).await {
                Ok(_) => Ok(true),
                Err(e) => match e.kind() {
                    GetStreamErrorKind::JetStream(j) if j.error_code() == jetstream::ErrorCode::STREAM_NOT_FOUND => {
                        Ok(false)
                    }
                    _ => Err(async_nats::Error::from(e)),
                },
            }
        }));
        found.map_err(nats(format!("cannot look for stream {name}")))
    }

    /// Makes stream `name` holding `subject` (file storage, the connection's replicas),
    /// or checks that it exists.
    pub fn create_stream(&self, name: &str, subject: &str) -> Result<()> {
        self.make_stream(stream::Config {
            name: name.to_string(),
            subjects: vec![subject.to_string()],
            ..Default::default()
        })
    }

    /// Makes stream `name` keeping only the latest message of each subject under
    /// `prefix` (`prefix.*`: a small table of named values), or checks that it exists.
    pub fn create_latest_stream(&self, name: &str, prefix: &str) -> Result<()> {
        let subjects = vec![format!("{prefix}.*")];
        self.make_stream(stream::Config {
            name: name.to_string(),
            subjects,
            max_messages_per_subject: 1,
            ..Default::default()
        })
    }

    /// Makes the stream of `config` with file storage and the connection's replicas.
    fn make_stream(&self, config: stream::Config) -> Result<()> {
        let config = stream::Config { storage: stream::StorageType::File, num_replicas: self.inner.replicas, ..config };
        let (js, name) = (&self.inner.js, config.name.clone());
        self.block_on(retry(&self.inner.refusals, || async {
            js.get_or_create_stream(config.clone()).await.map_err(async_nats::Error::from)
        }))
        .map(drop)
        .map_err(nats(format!("cannot create stream {name}")))
    }

    /// Makes `payload` the latest message of `subject` (a stream made by
    /// [`Log::create_latest_stream`]), acknowledged.
    pub fn put_latest(&self, subject: &str, payload: &[u8]) -> Result<()> {
        let js = &self.inner.js;
        let sent = self.block_on(retry(&self.inner.refusals, || async move {
            js.publish(subject.to_string(), payload.to_vec().into()).await?.await.map_err(async_nats::Error::from)
        }));
        sent.map(drop).map_err(nats(format!("cannot put {subject}")))
    }

    /// The latest message of `subject` in `stream`, None without one.
    pub fn latest(&self, stream: &str, subject: &str) -> Result<Option<Vec<u8>>> {
        let js = &self.inner.js;
        let got = self.block_on(retry(&self.inner.refusals, || async move {
            let s = js.get_stream(stream).await.map_err(async_nats::Error::from)?;
            payload_if_found(s.get_last_raw_message_by_subject(subject).await)
        }));
        got.map_err(nats(format!("cannot read the latest {subject} of stream {stream}")))
    }

    /// Drops the batches of `stream` that end before record `seq` (a batch holding it
    /// stays whole, and so does the last batch, which tells the last record's number).
    /// Returns how many records were dropped.
    ///
    /// A replicated stream on servers older than 2.10 is trimmed message by message:
    /// those servers, restarted, replay a purge of the stream's head as a purge of all
    /// it held then (nats-server#4196; seen here as documents a checkpoint still needed
    /// gone after a log server restarted), while a replayed deletion deletes one message.
    pub fn purge_before(&self, stream: &str, seq: u64) -> Result<u64> {
        let message = match self.locate(stream, seq)? {
            Place::Held(m, _) => m,
            Place::After(m) => m - 1,
            Place::Before(_) => return Ok(0),
        };
        if message <= 1 {
            return Ok(0);
        }
        let first = self.first_seq(stream)?;
        let (js, refusals) = (&self.inner.js, &self.inner.refusals);
        let version = js.client().server_info().version;
        let purged = self.block_on(async move {
            let s = retry(refusals, || async { js.get_stream(stream).await.map_err(async_nats::Error::from) }).await?;
            let info = s.cached_info();
            if info.config.num_replicas > 1 && replays_purges_wrongly(&version) {
                return delete_each(js, refusals, stream, info.state.first_sequence.max(1), message).await;
            }
            let purge =
                || async { s.purge().sequence(message).await.map(|p| p.purged).map_err(async_nats::Error::from) };
            retry(refusals, purge).await
        });
        purged.map_err(nats(format!("cannot trim stream {stream} before record #{seq}")))?;
        Ok(self.first_seq(stream)?.saturating_sub(first))
    }

    /// The largest record the log server takes, alone in a batch (its `max_payload`
    /// less [`FRAMING`]; None before the client has heard from a server).
    pub fn largest_record(&self) -> Option<usize> {
        if let Some(&largest) = self.inner.largest.get() {
            return Some(largest);
        }
        let max = self.inner.js.client().server_info().max_payload;
        (max > FRAMING).then(|| *self.inner.largest.get_or_init(|| max - FRAMING))
    }

    /// The number of the last record of `stream` (0: empty).
    pub fn last_seq(&self, stream: &str) -> Result<u64> {
        Ok(self.tail(stream)?.last)
    }

    /// The number of the first record `stream` still holds (after a trim; one past its
    /// last when it holds none).
    pub fn first_seq(&self, stream: &str) -> Result<u64> {
        let state = self.state(stream)?;
        if state.last_sequence == 0 {
            return Ok(1); // never written (a second look could see a first record)
        }
        if state.first_sequence > state.last_sequence {
            return Ok(self.last_seq(stream)? + 1);
        }
        match self.message(stream, state.first_sequence)? {
            Some(batch) => Ok(batch.first()),
            None => Ok(self.last_seq(stream)? + 1),
        }
    }

    /// The last message of `stream` and its records' bounds. The last message is never
    /// dropped (a trim keeps the last batch), so one the stream's state names and the
    /// server then does not give is asked for again, for [`LAST_GONE_FOR`]: a leader
    /// elected meanwhile may not have applied it yet. Taken for an empty stream, it
    /// made `cluster trim` see a process's answers as none and refuse its position.
    fn tail(&self, stream: &str) -> Result<Tail> {
        let start = Instant::now();
        loop {
            let message = self.state(stream)?.last_sequence;
            if message == 0 {
                return Ok(Tail::default());
            }
            if let Some(batch) = self.message(stream, message)? {
                return Ok(Tail { message, first: batch.first(), last: batch.last() });
            }
            if start.elapsed() >= LAST_GONE_FOR {
                return Err(LogError::LastGone { stream: stream.to_string(), message });
            }
            std::thread::sleep(BACKOFF);
        }
    }

    fn state(&self, stream: &str) -> Result<stream::State> {
        let js = &self.inner.js;
        let info = self.block_on(retry(&self.inner.refusals, || async move {
            let s = js.get_stream(stream).await.map_err(async_nats::Error::from)?;
            s.get_info().await.map_err(async_nats::Error::from)
        }));
        Ok(info.map_err(nats(format!("cannot read the state of stream {stream}")))?.state)
    }

    /// Message `m` of `stream` and its headers, or None when the stream does not hold
    /// it (not yet, or no longer: trimmed).
    fn raw(&self, stream: &str, m: u64) -> Result<Option<(Vec<u8>, async_nats::HeaderMap)>> {
        let js = &self.inner.js;
        let got = self.block_on(retry(&self.inner.refusals, || async move {
            let s = js.get_stream_no_info(stream).await.map_err(async_nats::Error::from)?;
            message_if_found(s.get_raw_message(m).await)
        }));
        got.map_err(nats(format!("cannot read message #{m} of stream {stream}")))
    }

    /// Message `m` of `stream` as a batch, remembered for later searches.
    fn message(&self, stream: &str, m: u64) -> Result<Option<Batch>> {
        let Some((bytes, headers)) = self.raw(stream, m)? else { return Ok(None) };
        let batch = self.decode(stream, m, bytes, Some(&headers))?;
        Ok(Some(batch))
    }

    /// Decodes message `m` of `stream` and remembers where its records are. A message
    /// without the headers its writer sends ([`Log::send`]: the expected last sequence
    /// `m − 1`, the batch's bounds as its id), or that does not decode, is refused: it
    /// was published some other way (by hand, or by a client that skipped the
    /// one-writer rule), and nothing of it is acted on.
    fn decode(&self, stream: &str, m: u64, bytes: Vec<u8>, headers: Option<&async_nats::HeaderMap>) -> Result<Batch> {
        let batch = Batch::decode(bytes).map_err(|source| LogError::Message {
            stream: stream.to_string(),
            message: m,
            source,
        })?;
        let header = |name: &str| headers.and_then(|h| h.get(name)).map(|v| v.as_str().to_string());
        let expected = [
            ("Nats-Expected-Last-Sequence", (m - 1).to_string()),
            ("Nats-Msg-Id", format!("{}-{}", batch.first(), batch.last())),
        ];
        if let Some((name, want, got)) = expected
            .into_iter()
            .map(|(name, want)| (name, want, header(name)))
            .find(|(_, want, got)| got.as_ref() != Some(want))
        {
            let reason = match got {
                Some(got) => format!("its {name} is {got:?}, where its writer sends {want:?}"),
                None => format!("no {name} header, which its writer sends"),
            };
            return Err(LogError::Unwritten { stream: stream.to_string(), message: m, reason });
        }
        let mut places = self.inner.places.lock().unwrap_or_else(|p| p.into_inner());
        let seen = places.entry(stream.to_string()).or_default();
        if seen.len() >= PLACES_KEPT {
            seen.clear(); // a long run's memory stays bounded; searches start over
        }
        seen.insert(batch.first(), (m, batch.last()));
        Ok(batch)
    }

    /// Where record `n` of `stream` is: a binary search over the stream's messages
    /// (their records' numbers grow with their sequence numbers), narrowed by the
    /// batches seen before.
    fn locate(&self, stream: &str, n: u64) -> Result<Place> {
        let state = self.state(stream)?;
        let (mut lo, mut hi) = (state.first_sequence.max(1), state.last_sequence);
        if hi == 0 || lo > hi {
            return Ok(Place::After(hi + 1));
        }
        if let Some(seen) = self.inner.places.lock().unwrap_or_else(|p| p.into_inner()).get(stream) {
            if let Some((_, &(m, last))) = seen.range(..=n).next_back() {
                if last >= n && (lo..=hi).contains(&m) {
                    (lo, hi) = (m, m);
                } else if m >= lo && last < n {
                    lo = lo.max(m + 1);
                }
            }
            if let Some((_, &(m, _))) = seen.range(n + 1..).next().filter(|(_, &(m, _))| m >= lo) {
                hi = hi.min(m);
            }
        }
        // The first message in lo..=hi whose last record is n or later.
        let mut found = None;
        while lo <= hi {
            let mid = lo + (hi - lo) / 2;
            let Some(batch) = self.message(stream, mid)? else {
                lo = mid + 1; // trimmed meanwhile
                continue;
            };
            if batch.last() >= n {
                hi = mid - 1;
                found = Some((mid, batch));
            } else {
                lo = mid + 1;
            }
        }
        Ok(match found {
            None => Place::After(state.last_sequence + 1),
            Some((_, batch)) if batch.first() > n => Place::Before(batch.first()),
            Some((m, batch)) => Place::Held(m, batch),
        })
    }

    /// Record `seq` of `stream`, or None when the stream has no such record (not yet,
    /// or no longer: trimmed).
    pub fn get(&self, stream: &str, seq: u64) -> Result<Option<Vec<u8>>> {
        Ok(match self.locate(stream, seq)? {
            Place::Held(_, batch) => batch.get(seq).map(<[u8]>::to_vec),
            _ => None,
        })
    }

    /// Appends `payload` to `stream` (through `subject`) as record `seq`, exactly once
    /// (a batch of one, acknowledged before it returns): when the stream already holds
    /// record `seq`, it must be `payload`.
    pub fn append(&self, stream: &str, subject: &str, seq: u64, payload: &[u8]) -> Result<()> {
        let mut appends = self.appends(stream, subject);
        appends.push(seq, payload.to_vec())?;
        appends.flush()
    }

    /// Sends the batch `payload` of records `first..=last` through `subject` to follow
    /// `after`, the stream's last message as the writer knows it: refused by the server
    /// unless the stream's last message is `after.message` and holds the records
    /// `after` says (each batch's message id is its bounds). The sequence number alone
    /// would let a batch sent after a refused one land where a predecessor's batch
    /// happens to leave the stream, overlapping it. The acknowledgement is to be
    /// awaited.
    async fn send(
        &self,
        subject: &str,
        after: Tail,
        (first, last): (u64, u64),
        payload: Vec<u8>,
    ) -> std::result::Result<jetstream::context::PublishAckFuture, jetstream::context::PublishError> {
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Nats-Expected-Last-Sequence", after.message.to_string().as_str());
        headers.insert("Nats-Msg-Id", format!("{first}-{last}").as_str());
        if after.message > 0 {
            headers.insert("Nats-Expected-Last-Msg-Id", format!("{}-{}", after.first, after.last).as_str());
        }
        self.inner.js.publish_with_headers(subject.to_string(), headers, payload.into()).await
    }

    /// The records appended to `stream` (through `subject`), in batches, acknowledged
    /// later ([`Appends`]).
    pub fn appends(&self, stream: &str, subject: &str) -> Appends {
        Appends::new(self, stream, subject)
    }

    /// Sends every open batch of this process's writers and waits until all they sent
    /// is in the log (before a clean close).
    pub fn flush_all(&self) -> Result<()> {
        self.writers().iter().try_for_each(|w| w.lock().unwrap_or_else(|p| p.into_inner()).flush())
    }

    /// Sends every open batch of this process's writers, not waiting for their
    /// acknowledgements: what a process does before it waits for anything it reads
    /// (another process may be waiting for those records first). A batch the log lost
    /// is appended again when its acknowledgement is awaited: a reader that waits long
    /// does [`Log::flush_all`] too.
    pub fn send_all(&self) -> Result<()> {
        self.writers().iter().try_for_each(|w| w.lock().unwrap_or_else(|p| p.into_inner()).send())
    }

    /// This process's writers still in use.
    fn writers(&self) -> Vec<Arc<Mutex<append::Writer>>> {
        let mut writers = self.inner.writers.lock().unwrap_or_else(|p| p.into_inner());
        writers.retain(|w| w.strong_count() > 0);
        writers.iter().filter_map(std::sync::Weak::upgrade).collect()
    }

    /// A reader of `stream` from record `start` on.
    pub fn reader(&self, stream: &str, start: u64) -> Result<Reader> {
        self.reader_of(stream, None, start)
    }

    /// A reader of some of the records of `stream`: `start` is the first one, and
    /// `after(n)` the one after record `n`; the others are skipped without being copied
    /// (a partition reads its own documents' answers from a shard's stream of all).
    pub fn sparse_reader(
        &self,
        stream: &str,
        after: impl Fn(u64) -> u64 + Send + 'static,
        start: u64,
    ) -> Result<Reader> {
        self.reader_of(stream, Some(Box::new(after)), start)
    }

    fn reader_of(&self, stream: &str, after: Option<After>, start: u64) -> Result<Reader> {
        let mut r = Reader {
            log: self.clone(),
            stream: stream.to_string(),
            after,
            next: start.max(1),
            batch: None,
            message: 0,
            messages: None,
            redelivered: 0,
        };
        r.open()?;
        Ok(r)
    }
}

/// A message asked for directly, None when the stream has none such.
fn message_if_found(
    got: std::result::Result<jetstream::message::StreamMessage, stream::LastRawMessageError>,
) -> std::result::Result<Option<(Vec<u8>, async_nats::HeaderMap)>, async_nats::Error> {
    match got {
        Ok(m) => Ok(Some((m.payload.to_vec(), m.headers))),
        Err(e) if e.kind() == stream::LastRawMessageErrorKind::NoMessageFound => Ok(None),
        Err(e) => Err(async_nats::Error::from(e)),
    }
}

/// The payload of a message asked for directly, None when the stream has none such.
fn payload_if_found(
    got: std::result::Result<jetstream::message::StreamMessage, stream::LastRawMessageError>,
) -> std::result::Result<Option<Vec<u8>>, async_nats::Error> {
    Ok(message_if_found(got)?.map(|(payload, _)| payload))
}

/// A stream's last message and the bounds of its records (all 0: an empty stream).
#[derive(Debug, Clone, Copy, Default)]
struct Tail {
    message: u64,
    first: u64,
    last: u64,
}

/// Where a record is in its stream.
enum Place {
    /// In message `m`, this batch.
    Held(u64, Batch),
    /// Not yet there: it will be in message `m` or later.
    After(u64),
    /// No longer there: the stream starts at this record.
    Before(u64),
}

/// Whether a server of `version` replays a purge of part of a replicated stream as a
/// purge of the whole (nats-server#4196, fixed before 2.10.0); an unreadable version
/// counts as one that does.
fn replays_purges_wrongly(version: &str) -> bool {
    let parts: Vec<u64> =
        version.trim_start_matches('v').split(['.', '-']).take(2).map_while(|p| p.parse().ok()).collect();
    parts.len() < 2 || (parts[0], parts[1]) < (2, 10)
}

/// Whether a deletion failed because the message is not there (deleted before: an
/// earlier trim, or this one's request whose reply a killed server lost). A replicated
/// stream on nats-server 2.9 says so as "message delete failed" (10057) with "no
/// message found".
fn gone(error: &jetstream::Error) -> bool {
    error.error_code() == jetstream::ErrorCode::NO_MESSAGE_FOUND
        || (error.error_code() == jetstream::ErrorCode::STREAM_MESSAGE_DELETE_FAILED
            && error.to_string().starts_with("no message found"))
}

/// Deletes messages `from..to` of `stream` one by one (many under way at once), the
/// ones already gone (an earlier trim cut off) counting as done. Returns how many it
/// deleted.
async fn delete_each(
    js: &jetstream::Context,
    refusals: &Refusals,
    stream: &str,
    from: u64,
    to: u64,
) -> std::result::Result<u64, async_nats::Error> {
    use futures_util::TryStreamExt;
    #[derive(serde::Serialize)]
    struct Delete {
        seq: u64,
        no_erase: bool,
    }
    #[derive(serde::Deserialize)]
    struct Deleted {
        success: bool,
    }
    let subject = format!("STREAM.MSG.DELETE.{stream}");
    let one = |seq: u64| {
        let subject = subject.clone();
        retry(refusals, move || {
            let subject = subject.clone();
            async move {
                match js.request(subject, &Delete { seq, no_erase: true }).await? {
                    jetstream::response::Response::Ok(Deleted { success }) => Ok(u64::from(success)),
                    jetstream::response::Response::Err { error } if gone(&error) => Ok(0),
                    jetstream::response::Response::Err { error } => Err(async_nats::Error::from(error)),
                }
            }
        })
    };
    futures_util::stream::iter(from..to)
        .map(one)
        .buffer_unordered(64)
        .try_fold(0, |n, d| async move { Ok(n + d) })
        .await
}

#[cfg(test)]
mod tests {
    #[test]
    fn servers_before_2_10_replay_purges_wrongly() {
        for (version, wrong) in [
            ("2.9.10", true),
            ("2.9.25", true),
            ("v2.9.10", true),
            ("2.10.0", false),
            ("2.10.22-RC.1", false),
            ("2.11.3", false),
            ("3.0.0", false),
            ("", true),
            ("x", true),
        ] {
            assert_eq!(super::replays_purges_wrongly(version), wrong, "{version}");
        }
    }
}
