//! The log: NATS JetStream streams as an ordered, durable, replicated sequence of
//! messages whose sequence numbers are ours (`docs/SCALE-OUT.md`, "The log").
//!
//! A blocking facade over `async-nats`, because the rest of textorigin is threads and
//! channels: [`Log::append`] puts message `seq` into a stream exactly once, [`Reader`]
//! reads a stream in order from any sequence number, waiting for messages that are not
//! there yet. The client's runtime has no thread of its own: it runs on the caller's
//! while the caller is in the log (a message read or acknowledged wakes no other
//! thread), and the server holds what arrives meanwhile. A process handles a few
//! messages a document, and waking a second thread for each cost its aggregator 13% and
//! its workers 25% of their CPU (`docs/SCALE-OUT.md`, "What it costs, measured").
//!
//! Exactly once: every append says which sequence number it must get
//! (`Nats-Expected-Last-Sequence: seq − 1`), so a second append of the same message —
//! a retry after a lost acknowledgement, or a process that restarted and replays — is
//! refused by the server, and the message already there is compared with ours: equal is
//! success, different is a [`LogError::Conflict`] (two writers, or a determinism bug).
//! Each stream has a single writer by design. Errors of the connection (a server being
//! killed, a leader election) are retried until [`RETRY_FOR`] has passed.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, consumer, context::PublishErrorKind, stream};
use async_nats::ServerAddr;
use futures_util::StreamExt;

use crate::wire::Meta;

/// How long transient failures (no server, no leader, a timeout) are retried before an
/// operation fails.
pub const RETRY_FOR: Duration = Duration::from_secs(120);
const BACKOFF: Duration = Duration::from_millis(200);

/// Errors of the log.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("bad NATS server address {url:?}: {source}")]
    Address { url: String, source: std::io::Error },
    #[error("log: cannot start the client runtime: {0}")]
    Runtime(std::io::Error),
    #[error("log: {what}: {source}")]
    Nats { what: String, source: async_nats::Error },
    #[error("log: stream {stream} already holds a different message #{seq}: another writer, or a determinism bug")]
    Conflict { stream: String, seq: u64 },
    #[error("log: stream {stream} cannot take message #{seq}: its last message is #{last}")]
    Gap { stream: String, seq: u64, last: u64 },
    #[error("log: stream {stream} no longer holds message #{want} (trimmed: it starts at #{first}); this process needs a checkpoint at #{} or later", first - 1)]
    Trimmed { stream: String, want: u64, first: u64 },
    #[error("log: stream {stream} gave message #{got} where #{want} was due")]
    Order { stream: String, want: u64, got: u64 },
}

type Result<T> = std::result::Result<T, LogError>;

fn nats(what: impl Into<String>) -> impl FnOnce(async_nats::Error) -> LogError {
    let what = what.into();
    move |source| LogError::Nats { what, source }
}

/// A connection to the log (cheap to clone).
#[derive(Clone)]
pub struct Log {
    inner: Arc<Inner>,
}

struct Inner {
    rt: tokio::runtime::Runtime,
    js: jetstream::Context,
    replicas: usize,
}

impl std::fmt::Debug for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Log").field("replicas", &self.inner.replicas).finish_non_exhaustive()
    }
}

/// Retries `op` while it fails, until [`RETRY_FOR`], saying why every ten seconds (a
/// cluster still electing its leaders, or an error that will not pass, such as more
/// replicas than servers).
async fn retry<T, E, F, Fut>(mut op: F) -> std::result::Result<T, E>
where
    E: std::fmt::Display,
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = std::result::Result<T, E>>,
{
    let start = Instant::now();
    let mut told = None::<Instant>;
    loop {
        match op().await {
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
        let addrs = urls
            .split(',')
            .map(|u| u.trim().parse::<ServerAddr>().map_err(|source| LogError::Address { url: u.to_string(), source }))
            .collect::<Result<Vec<_>>>()?;
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(LogError::Runtime)?;
        let client = rt
            .block_on(async_nats::ConnectOptions::new().retry_on_initial_connect().connect(addrs))
            .map_err(|e| nats(format!("cannot connect to {urls}"))(e.into()))?;
        let js = {
            let _in_runtime = rt.enter(); // the context spawns its acknowledgement task
            jetstream::new(client)
        };
        Ok(Log { inner: Arc::new(Inner { rt, js, replicas: replicas.max(1) }) })
    }

    fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.inner.rt.block_on(f)
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
        self.block_on(retry(|| js.get_or_create_stream(config.clone())))
            .map(drop)
            .map_err(|e| nats(format!("cannot create stream {name}"))(e.into()))
    }

    /// Makes `payload` the latest message of `subject` (a stream made by
    /// [`Log::create_latest_stream`]), acknowledged.
    pub fn put_latest(&self, subject: &str, payload: &[u8]) -> Result<()> {
        let js = &self.inner.js;
        let sent = self.block_on(retry(|| async move {
            js.publish(subject.to_string(), payload.to_vec().into()).await?.await.map_err(async_nats::Error::from)
        }));
        sent.map(drop).map_err(nats(format!("cannot put {subject}")))
    }

    /// The latest message of `subject` in `stream`, None without one.
    pub fn latest(&self, stream: &str, subject: &str) -> Result<Option<Vec<u8>>> {
        use async_nats::jetstream::stream::LastRawMessageErrorKind;
        let js = &self.inner.js;
        let got = self.block_on(retry(|| async move {
            let s = js.get_stream(stream).await.map_err(async_nats::Error::from)?;
            match s.get_last_raw_message_by_subject(subject).await {
                Ok(m) => Ok(Some(m.payload.to_vec())),
                Err(e) if e.kind() == LastRawMessageErrorKind::NoMessageFound => Ok(None),
                Err(e) => Err(async_nats::Error::from(e)),
            }
        }));
        got.map_err(nats(format!("cannot read the latest {subject} of stream {stream}")))
    }

    /// Drops the messages of `stream` before message `seq`; the stream's sequence
    /// numbers, its last one included, stay. Returns how many were dropped.
    ///
    /// A replicated stream on servers older than 2.10 is trimmed message by message:
    /// those servers, restarted, replay a purge of the stream's head as a purge of all
    /// it held then (nats-server#4196; seen here as documents a checkpoint still needed
    /// gone after a log server restarted), while a replayed deletion deletes one message.
    pub fn purge_before(&self, stream: &str, seq: u64) -> Result<u64> {
        let js = &self.inner.js;
        let version = js.client().server_info().version;
        let purged = self.block_on(async move {
            let s = retry(|| async { js.get_stream(stream).await.map_err(async_nats::Error::from) }).await?;
            let info = s.cached_info();
            if info.config.num_replicas > 1 && replays_purges_wrongly(&version) {
                return delete_each(js, stream, info.state.first_sequence.max(1), seq).await;
            }
            retry(|| async { s.purge().sequence(seq).await.map(|p| p.purged).map_err(async_nats::Error::from) }).await
        });
        purged.map_err(nats(format!("cannot trim stream {stream} before #{seq}")))
    }

    /// The sequence number of the last message of `stream` (0: empty).
    pub fn last_seq(&self, stream: &str) -> Result<u64> {
        Ok(self.state(stream)?.last_sequence)
    }

    /// The sequence number of the first message `stream` still holds (after a trim).
    pub fn first_seq(&self, stream: &str) -> Result<u64> {
        Ok(self.state(stream)?.first_sequence)
    }

    fn state(&self, stream: &str) -> Result<stream::State> {
        let js = &self.inner.js;
        let info = self.block_on(retry(|| async move {
            let s = js.get_stream(stream).await.map_err(async_nats::Error::from)?;
            s.get_info().await.map_err(async_nats::Error::from)
        }));
        Ok(info.map_err(nats(format!("cannot read the state of stream {stream}")))?.state)
    }

    /// Message `seq` of `stream`, or None when the stream has no such message (not yet,
    /// or no longer: trimmed).
    pub fn get(&self, stream: &str, seq: u64) -> Result<Option<Vec<u8>>> {
        let state = self.state(stream)?;
        if !(state.first_sequence..=state.last_sequence).contains(&seq) {
            return Ok(None);
        }
        let js = &self.inner.js;
        let msg = self.block_on(retry(|| async move {
            let s = js.get_stream(stream).await.map_err(async_nats::Error::from)?;
            s.get_raw_message(seq).await.map_err(async_nats::Error::from)
        }));
        Ok(Some(msg.map_err(nats(format!("cannot read message #{seq} of stream {stream}")))?.payload.to_vec()))
    }

    /// Appends `payload` to `stream` (through `subject`) as message `seq`, exactly once:
    /// when the stream already holds message `seq`, it must be `payload`.
    pub fn append(&self, stream: &str, subject: &str, seq: u64, payload: &[u8]) -> Result<()> {
        let start = Instant::now();
        loop {
            let sent = self.block_on(async { self.send(subject, seq, payload.to_vec()).await?.await });
            match sent {
                Ok(ack) if ack.sequence == seq => return Ok(()),
                Ok(ack) => return Err(LogError::Order { stream: stream.to_string(), want: seq, got: ack.sequence }),
                Err(e) if e.kind() == PublishErrorKind::WrongLastSequence => {
                    return match self.get(stream, seq)? {
                        Some(there) if there == payload => Ok(()),
                        Some(_) => Err(LogError::Conflict { stream: stream.to_string(), seq }),
                        None => Err(LogError::Gap { stream: stream.to_string(), seq, last: self.last_seq(stream)? }),
                    };
                }
                Err(e) if start.elapsed() < RETRY_FOR => {
                    tracing::warn!(stream, seq, error = %e, "append failed, retrying");
                    std::thread::sleep(BACKOFF);
                }
                Err(e) => return Err(nats(format!("cannot append message #{seq} to stream {stream}"))(e.into())),
            }
        }
    }

    /// Sends `payload` through `subject` to be message `seq` of its stream, refused by
    /// the server unless the stream's last message is `seq − 1`; the acknowledgement
    /// is to be awaited.
    async fn send(
        &self,
        subject: &str,
        seq: u64,
        payload: Vec<u8>,
    ) -> std::result::Result<jetstream::context::PublishAckFuture, jetstream::context::PublishError> {
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Nats-Expected-Last-Sequence", (seq - 1).to_string().as_str());
        self.inner.js.publish_with_headers(subject.to_string(), headers, payload.into()).await
    }

    /// [`Log::append`]s to `stream` (through `subject`) whose acknowledgements are
    /// waited for later ([`Appends`]).
    pub fn appends(&self, stream: &str, subject: &str) -> Appends {
        let subject = subject.to_string();
        self.appends_by(stream, move |_| subject.clone())
    }

    /// [`Log::appends`] with message `seq` sent through `subject(seq)`.
    pub fn appends_by(&self, stream: &str, subject: impl Fn(u64) -> String + Send + 'static) -> Appends {
        Appends { log: self.clone(), stream: stream.to_string(), subject: Box::new(subject), sent: VecDeque::new() }
    }

    /// A reader of `stream` from message `start` on.
    pub fn reader(&self, stream: &str, start: u64) -> Result<Reader> {
        self.reader_of(stream, None, start)
    }

    /// A reader of the messages of `stream` sent through `subject` (of a stream of
    /// several): `start` is the first one, and `after(n)` the one after message `n`.
    pub fn filtered_reader(
        &self,
        stream: &str,
        subject: &str,
        after: impl Fn(u64) -> u64 + Send + 'static,
        start: u64,
    ) -> Result<Reader> {
        self.reader_of(stream, Some((subject.to_string(), Box::new(after))), start)
    }

    fn reader_of(&self, stream: &str, filter: Option<Filter>, start: u64) -> Result<Reader> {
        let mut r = Reader {
            log: self.clone(),
            stream: stream.to_string(),
            filter,
            next: start.max(1),
            messages: None,
            redelivered: 0,
        };
        r.open()?;
        Ok(r)
    }
}

/// Appends to one stream sent at once and acknowledged later, in order, so that the
/// writer goes on meanwhile: each is message `seq` exactly once, as with
/// [`Log::append`], which does again any whose acknowledgement is not the one due (a
/// leader election meanwhile; the ones after it are then refused, or were stored after
/// it, and are checked the same way).
pub struct Appends {
    log: Log,
    stream: String,
    subject: Box<dyn Fn(u64) -> String + Send>,
    sent: VecDeque<(u64, Vec<u8>, Option<jetstream::context::PublishAckFuture>)>,
}

/// How many appends [`Appends`] has under way at most.
const UNDER_WAY: usize = 256;

impl Appends {
    /// Sends message `seq` (the one after the last pushed).
    pub fn push(&mut self, seq: u64, payload: Vec<u8>) -> Result<()> {
        let sent = self.log.block_on(self.log.send(&(self.subject)(seq), seq, payload.clone()));
        let failed = sent.is_err();
        self.sent.push_back((seq, payload, sent.ok()));
        if failed {
            return self.flush();
        }
        while self.sent.len() > UNDER_WAY {
            self.settle_oldest()?;
        }
        Ok(())
    }

    /// Waits until every message pushed is in the stream.
    pub fn flush(&mut self) -> Result<()> {
        while !self.sent.is_empty() {
            self.settle_oldest()?;
        }
        Ok(())
    }

    fn settle_oldest(&mut self) -> Result<()> {
        let Some((seq, payload, ack)) = self.sent.pop_front() else { return Ok(()) };
        let acked = ack.map(|ack| self.log.block_on(std::future::IntoFuture::into_future(ack)));
        if matches!(acked, Some(Ok(ref a)) if a.sequence == seq) {
            return Ok(());
        }
        // The ones after it were refused or will time out one by one (a server lost):
        // all are appended again without waiting for their acknowledgements.
        self.sent.iter_mut().for_each(|(_, _, ack)| *ack = None);
        self.log.append(&self.stream, &(self.subject)(seq), seq, &payload)
    }
}

/// Whether a server of `version` replays a purge of part of a replicated stream as a
/// purge of the whole (nats-server#4196, fixed before 2.10.0); an unreadable version
/// counts as one that does.
fn replays_purges_wrongly(version: &str) -> bool {
    let parts: Vec<u64> =
        version.trim_start_matches('v').split(['.', '-']).take(2).map_while(|p| p.parse().ok()).collect();
    parts.len() < 2 || (parts[0], parts[1]) < (2, 10)
}

/// Deletes messages `from..to` of `stream` one by one (many under way at once), the
/// ones already gone (an earlier trim cut off) counting as done. Returns how many it
/// deleted.
async fn delete_each(
    js: &jetstream::Context,
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
        retry(move || {
            let subject = subject.clone();
            async move {
                match js.request(subject, &Delete { seq, no_erase: true }).await? {
                    jetstream::response::Response::Ok(Deleted { success }) => Ok(u64::from(success)),
                    jetstream::response::Response::Err { error }
                        if error.error_code() == jetstream::ErrorCode::NO_MESSAGE_FOUND =>
                    {
                        Ok(0)
                    }
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

type Filter = (String, Box<dyn Fn(u64) -> u64 + Send>);

/// Reads one stream in order, waiting for messages not yet appended. A message it
/// has read already, handed out again (a consumer after a leader change can), is
/// skipped and counted ([`Reader::redelivered`]): a stream position's content never
/// changes, so nothing is lost or read twice.
pub struct Reader {
    log: Log,
    stream: String,
    /// Of a filtered reader: the subject read, and the message after a message.
    filter: Option<Filter>,
    next: u64,
    messages: Option<consumer::pull::Ordered>,
    redelivered: u64,
}

impl Reader {
    /// (Re)creates the ordered consumer at the next message.
    fn open(&mut self) -> Result<()> {
        self.open_at(self.next)
    }

    /// (Re)creates the ordered consumer at message `start`: at the next message, or,
    /// for a test, before it, so that the consumer hands out again what was read.
    fn open_at(&mut self, start: u64) -> Result<()> {
        let (js, stream) = (&self.log.inner.js, self.stream.as_str());
        let filter_subject = self.filter.as_ref().map(|(s, _)| s.clone()).unwrap_or_default();
        let messages = self.log.block_on(retry(|| async {
            let s = js.get_stream(stream).await.map_err(async_nats::Error::from)?;
            let c = s
                .create_consumer(consumer::pull::OrderedConfig {
                    deliver_policy: consumer::DeliverPolicy::ByStartSequence { start_sequence: start },
                    filter_subject: filter_subject.clone(),
                    ..Default::default()
                })
                .await
                .map_err(async_nats::Error::from)?;
            c.messages().await.map_err(async_nats::Error::from)
        }));
        self.messages = Some(messages.map_err(nats(format!("cannot read stream {stream} from #{start}")))?);
        Ok(())
    }

    /// The sequence number of the message [`Reader::read`] returns.
    pub fn position(&self) -> u64 {
        self.next
    }

    /// Messages handed out again after they were read, skipped.
    pub fn redelivered(&self) -> u64 {
        self.redelivered
    }

    /// Makes the consumer hand out again the `back` messages before the next one, as a
    /// consumer can after a leader change (for the test that the reader skips them).
    #[doc(hidden)]
    pub fn redeliver(&mut self, back: u64) -> Result<()> {
        self.open_at(self.next.saturating_sub(back).max(1))
    }

    /// The next message: (its sequence number, its payload). Waits for it; a broken
    /// consumer (a server gone), or one that skipped messages the stream holds, is made
    /// again at the same position.
    pub fn read(&mut self) -> Result<(u64, Vec<u8>)> {
        Ok(self.read_or_not(true)?.expect("waited for"))
    }

    /// [`Reader::read`], making sure first, when the message is not here yet, that
    /// `appends` are all in the log: another process may be waiting for them before
    /// it sends the message (a worker's answer before the feedback, the feedback before
    /// the next answer).
    pub fn read_after(&mut self, appends: &mut Appends) -> Result<(u64, Vec<u8>)> {
        if let Some(message) = self.try_read()? {
            return Ok(message);
        }
        appends.flush()?;
        self.read()
    }

    /// [`Reader::read`] when the next message is already here, else None at once.
    pub fn try_read(&mut self) -> Result<Option<(u64, Vec<u8>)>> {
        self.read_or_not(false)
    }

    fn read_or_not(&mut self, wait: bool) -> Result<Option<(u64, Vec<u8>)>> {
        let start = Instant::now();
        loop {
            let messages = self.messages.as_mut().expect("opened");
            let got = match wait {
                true => self.log.block_on(messages.next()),
                false => match self.log.block_on(async { futures_util::FutureExt::now_or_never(messages.next()) }) {
                    Some(got) => got,
                    None => return Ok(None),
                },
            };
            let error = match got {
                Some(Ok(m)) => {
                    let seq = m
                        .info()
                        .map_err(nats(format!("a message of stream {} without its position", self.stream)))?
                        .stream_sequence;
                    if seq == self.next {
                        self.next = self.filter.as_ref().map_or(seq + 1, |(_, after)| after(seq));
                        return Ok(Some((seq, m.payload.to_vec())));
                    }
                    if seq < self.next {
                        // Read before: the position's content is the same, so skip it.
                        self.redelivered += 1;
                        tracing::debug!(stream = %self.stream, seq, due = self.next, "message handed out again: skipped");
                        continue;
                    }
                    let first = self.log.first_seq(&self.stream)?;
                    if first > self.next {
                        return Err(LogError::Trimmed { stream: self.stream.clone(), want: self.next, first });
                    }
                    if start.elapsed() > RETRY_FOR {
                        return Err(LogError::Order { stream: self.stream.clone(), want: self.next, got: seq });
                    }
                    // The stream holds the message due, but the consumer (on a server
                    // that lost it, as `purge_before` explains) handed out a later one:
                    // made again, as a broken one is.
                    format!("the consumer skipped to #{seq}")
                }
                failed => {
                    let error = failed
                        .and_then(|r| r.err())
                        .map_or_else(|| "the consumer ended".to_string(), |e| e.to_string());
                    if start.elapsed() > RETRY_FOR {
                        return Err(LogError::Nats {
                            what: format!("reading stream {} at #{}", self.stream, self.next),
                            source: error.into(),
                        });
                    }
                    error
                }
            };
            tracing::warn!(stream = %self.stream, at = self.next, %error, "reader failed, reopening");
            std::thread::sleep(BACKOFF);
            self.open()?;
        }
    }
}

/// Reads the streams of a deployment's partitions as one stream about every document,
/// in document order: document `n` is the message of its owner's stream
/// ([`Meta::owner`]).
pub struct Interleaved {
    meta: Meta,
    readers: Vec<Reader>,
    next: u64,
}

impl Interleaved {
    /// Reads partition `p`'s stream `stream(p)` of every partition from document `start` on.
    pub fn new(log: &Log, meta: &Meta, stream: fn(u32) -> String, start: u64) -> Result<Interleaved> {
        let readers = (0..meta.partitions)
            .map(|p| log.reader(&stream(p), meta.first_owned_from(p, start)))
            .collect::<Result<_>>()?;
        Ok(Interleaved { meta: meta.clone(), readers, next: start })
    }

    /// The next document's message: (the document, the payload), as
    /// [`Reader::read_after`].
    pub fn read_after(&mut self, appends: &mut Appends) -> Result<(u64, Vec<u8>)> {
        Ok(self.step(|r| r.read_after(appends).map(Some))?.expect("waited for"))
    }

    /// The next document's message, waiting for it.
    pub fn read(&mut self) -> Result<(u64, Vec<u8>)> {
        Ok(self.step(|r| r.read().map(Some))?.expect("waited for"))
    }

    /// [`Interleaved::read_after`] when the message is already here, else None at once.
    pub fn try_read(&mut self) -> Result<Option<(u64, Vec<u8>)>> {
        self.step(Reader::try_read)
    }

    /// The next document's message as `read` reads it from its owner's stream.
    fn step(
        &mut self,
        read: impl FnOnce(&mut Reader) -> Result<Option<(u64, Vec<u8>)>>,
    ) -> Result<Option<(u64, Vec<u8>)>> {
        let (p, _) = self.meta.owner(self.next);
        let Some((_, bytes)) = read(&mut self.readers[p as usize])? else { return Ok(None) };
        self.next += 1;
        Ok(Some((self.next - 1, bytes)))
    }
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
