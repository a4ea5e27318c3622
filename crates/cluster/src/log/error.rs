//! The log's errors, and which of the servers' answers waiting does not mend.

use async_nats::jetstream;

use crate::wire::WireError;

/// Errors of the log.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("bad NATS server address {url:?}: {source}")]
    Address { url: String, source: std::io::Error },
    #[error("log: cannot start the client runtime: {0}")]
    Runtime(std::io::Error),
    #[error("log: {what}: {source}")]
    Nats { what: String, source: async_nats::Error },
    #[error(
        "log: the servers at {urls} refused {}: give the process its credentials file (--nats-credentials, \
         written by `textorigin cluster credentials`), and the servers the authorization block written beside it",
        user.as_ref().map_or("a client without credentials".to_string(), |u| format!("the credentials of user {u:?}"))
    )]
    Refused { urls: String, user: Option<String> },
    #[error(
        "log: {what}: the servers refused it ({violation}): this process's NATS user may not do that \
         (docs/SCALE-OUT.md, \"Who may write what\"); is it running with another process's credentials?"
    )]
    Denied { what: String, violation: String },
    #[error(
        "log: {what}: the stream is not there ({detail}): deleted, or never made. A deployment whose log was \
         deleted has lost what it held: restore the log servers' store directories from a backup, or \
         `cluster init` a new deployment"
    )]
    NoStream { what: String, detail: String },
    #[error(
        "log: {what}: the log's storage is full ({detail}): free space under the log servers' store directory, \
         or raise their `jetstream {{ max_file_store }}`, `cluster trim` what every process has done, and start \
         this process again"
    )]
    Full { what: String, detail: String },
    #[error("log: stream {stream} already holds a different record #{seq}: another writer, or a determinism bug")]
    Conflict { stream: String, seq: u64 },
    #[error("log: stream {stream} cannot take record #{seq}: its last record is #{last}")]
    Gap { stream: String, seq: u64, last: u64 },
    #[error("log: stream {stream} no longer holds record #{want} (trimmed: it starts at #{first}); this process needs a checkpoint at #{} or later", first - 1)]
    Trimmed { stream: String, want: u64, first: u64 },
    #[error(
        "log: stream {stream} says its last message is #{message}, and does not give it: deleted by hand? (a trim \
         keeps the last message)"
    )]
    LastGone { stream: String, message: u64 },
    #[error("log: stream {stream} gave #{got} where #{want} was due")]
    Order { stream: String, want: u64, got: u64 },
    #[error("log: stream {stream}, message #{message}: {source}")]
    Message { stream: String, message: u64, source: WireError },
    #[error(
        "log: message #{message} of stream {stream} was not appended by its writer ({reason}): refused, nothing \
         of it read. Another client published to the stream: are the log's users shared (docs/SCALE-OUT.md, \
         \"Who may write what\")?"
    )]
    Unwritten { stream: String, message: u64, reason: String },
    #[error(
        "log: record #{seq} of stream {stream} is {bytes} bytes, more than the log server takes in a message \
         ({largest} bytes for a record within nats-server's max_payload): raise max_payload in its configuration \
         (64MB at most) and run again"
    )]
    TooLarge { stream: String, seq: u64, bytes: usize, largest: usize },
}

pub(super) fn nats(what: impl Into<String>) -> impl FnOnce(async_nats::Error) -> LogError {
    let what = what.into();
    move |source| match source.downcast::<Denied>() {
        Ok(denied) => LogError::Denied { what, violation: denied.0 },
        Err(source) => match lasting(&*source) {
            Some((Lasting::NoStream, detail)) => LogError::NoStream { what, detail },
            Some((Lasting::Full, detail)) => LogError::Full { what, detail },
            None => LogError::Nats { what, source },
        },
    }
}

/// What the servers said that waiting does not mend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lasting {
    /// The stream is not there (JetStream's error 10059).
    NoStream,
    /// The servers' storage for the log is exhausted (10047, 10023).
    Full,
}

/// Whether `e`, or an error it came from, is the servers' answer that waiting does not
/// mend, with that answer. Only the servers' JetStream error codes count: a publish that
/// no stream answered ("no responders") is also what a stream between leaders gives.
pub(super) fn lasting(e: &(dyn std::error::Error + 'static)) -> Option<(Lasting, String)> {
    causes(e).find_map(|e| {
        let text = e.to_string();
        let said = |code: jetstream::ErrorCode| {
            e.downcast_ref::<jetstream::Error>().is_some_and(|j| j.error_code() == code)
                || text.contains(&format!("error code {})", code.0))
        };
        [
            (jetstream::ErrorCode::STREAM_NOT_FOUND, Lasting::NoStream),
            (jetstream::ErrorCode::STORAGE_RESOURCES_EXCEEDED, Lasting::Full),
            (jetstream::ErrorCode::INSUFFICIENT_RESOURCES, Lasting::Full),
        ]
        .into_iter()
        .find(|&(code, _)| said(code))
        .map(|(_, what)| (what, text.clone()))
    })
}

/// Whether connecting failed in the TLS handshake (the server's certificate not signed
/// by a CA the process trusts, say): waiting does not mend it. The client reports a
/// handshake's failure as an I/O error holding the TLS library's.
pub(super) fn refused_tls(e: &async_nats::ConnectError) -> bool {
    causes(e).any(|e| {
        let inner = e.downcast_ref::<std::io::Error>().and_then(|io| io.get_ref());
        e.is::<async_nats::rustls::Error>() || inner.is_some_and(|i| i.is::<async_nats::rustls::Error>())
    })
}

/// `e` and the errors it came from, outermost first.
fn causes<'a>(e: &'a (dyn std::error::Error + 'static)) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(e), |e| e.source())
}

/// A server's refusal of what this process's user may not do, as the client's events
/// tell it (a request so refused is never answered: it would time out and be retried).
#[derive(Debug)]
pub(super) struct Denied(pub(super) String);

impl std::fmt::Display for Denied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Denied {}
