//! Reading a stream's records ([`Reader`]) and the partitions' streams as one
//! ([`Interleaved`]).

use std::time::{Duration, Instant};

use async_nats::jetstream::consumer;
use futures_util::StreamExt;

use super::{nats, retry, Log, LogError, Place, Result, BACKOFF, RETRY_FOR};
use crate::batch::{Batch, AGE};
use crate::wire::Meta;

/// A reader that has waited this many times [`AGE`] settles its process's appends.
const SETTLE_EVERY: u32 = 25;

/// The longest a reader's consumer waits for the log: its pull requests expire after
/// it (the server's heartbeat is half of it, and the client makes a consumer again
/// after two missed heartbeats: its server killed, say), and so do the requests that
/// make it, and make it again (in the client's remaking, a request to delete the old
/// consumer, which a killed server never answers). With the client's defaults (30 s
/// pulls, 10 s requests) a reader whose consumer a killed server took along waited 14
/// to 70 s, longer than the chaos gate's time between kills.
pub(super) const READ_WAIT: Duration = Duration::from_secs(2);

/// A reader waiting this long for a message the stream holds makes its consumer again.
const STALL: Duration = Duration::from_secs(5);

/// A reader waiting this long for a record says what it waits for, and again each
/// [`SAY_AGAIN`] (at info: a deployment with nothing to do waits too).
const SAY_AFTER: Duration = Duration::from_secs(10);
const SAY_AGAIN: Duration = Duration::from_secs(60);

pub(super) type After = Box<dyn Fn(u64) -> u64 + Send>;

/// Reads one stream's records in order, waiting for ones not yet appended. A message
/// it has read already, handed out again (a consumer after a leader change can), is
/// skipped and counted ([`Reader::redelivered`]): a stream position's content never
/// changes, so nothing is lost or read twice.
pub struct Reader {
    pub(super) log: Log,
    pub(super) stream: String,
    /// Of a sparse reader: the record after a record.
    pub(super) after: Option<After>,
    /// The record [`Reader::read`] returns.
    pub(super) next: u64,
    /// The batch being read.
    pub(super) batch: Option<Batch>,
    /// The message the consumer is to hand out next.
    pub(super) message: u64,
    pub(super) messages: Option<consumer::pull::Ordered>,
    pub(super) redelivered: u64,
}

impl Reader {
    /// (Re)creates the ordered consumer at the message holding the next record.
    pub(super) fn open(&mut self) -> Result<()> {
        let start = match self.log.locate(&self.stream, self.next)? {
            Place::Held(m, batch) => {
                self.batch = Some(batch);
                m + 1
            }
            Place::After(m) => m,
            Place::Before(first) => {
                return Err(LogError::Trimmed { stream: self.stream.clone(), want: self.next, first })
            }
        };
        self.open_at(start)
    }

    /// (Re)creates the ordered consumer at message `start`: at the next message, or,
    /// for a test, before it, so that the consumer hands out again what was read.
    fn open_at(&mut self, start: u64) -> Result<()> {
        let (js, stream) = (&self.log.inner.reads, self.stream.as_str());
        let messages = self.log.block_on(retry(&self.log.inner.refusals, || async {
            let s = js.get_stream_no_info(stream).await.map_err(async_nats::Error::from)?;
            let c = s
                .create_consumer(consumer::pull::OrderedConfig {
                    deliver_policy: consumer::DeliverPolicy::ByStartSequence { start_sequence: start },
                    max_expires: READ_WAIT,
                    ..Default::default()
                })
                .await
                .map_err(async_nats::Error::from)?;
            c.messages().await.map_err(async_nats::Error::from)
        }));
        self.messages = Some(messages.map_err(nats(format!("cannot read stream {stream} from message #{start}")))?);
        self.message = start;
        Ok(())
    }

    /// The number of the record [`Reader::read`] returns.
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
        let message = self.message;
        self.open_at(message.saturating_sub(back).max(1))?;
        self.message = message;
        Ok(())
    }

    /// The next record: (its number, its payload). Waits for it; a broken consumer (a
    /// server gone), or one that skipped messages the stream holds, is made again at
    /// the same position.
    pub fn read(&mut self) -> Result<(u64, Vec<u8>)> {
        Ok(self.read_or_not(true)?.expect("waited for"))
    }

    /// [`Reader::read`] when the next record is already here, else None at once.
    pub fn try_read(&mut self) -> Result<Option<(u64, Vec<u8>)>> {
        self.read_or_not(false)
    }

    fn read_or_not(&mut self, wait: bool) -> Result<Option<(u64, Vec<u8>)>> {
        loop {
            if let Some(record) = self.batch.as_ref().and_then(|b| b.get(self.next)) {
                let (n, record) = (self.next, record.to_vec());
                self.next = self.after.as_ref().map_or(n + 1, |after| after(n));
                return Ok(Some((n, record)));
            }
            if !self.next_batch(wait)? {
                return Ok(None);
            }
        }
    }

    /// Reads the next message as the batch being read; false when `wait` is not set
    /// and it has not arrived.
    fn next_batch(&mut self, wait: bool) -> Result<bool> {
        let start = Instant::now();
        loop {
            let messages = self.messages.as_mut().expect("opened");
            let mut got = self.log.block_on(async { futures_util::FutureExt::now_or_never(messages.next()) });
            if !wait && got.is_none() {
                return Ok(false);
            }
            // Before it waits, and again every little while it does, the process
            // sends what it has written: another process may be waiting for it
            // (the order of "Why no deadlock can occur" in docs/SCALE-OUT.md); a
            // wait that lasts also settles what was sent (a batch the log lost).
            let (mut waits, mut since) = (0u32, Instant::now());
            let (waiting, mut say) = (Instant::now(), SAY_AFTER);
            while got.is_none() {
                if waiting.elapsed() >= say {
                    tracing::info!(
                        stream = %self.stream,
                        record = self.next,
                        "waiting {} s for record #{} of stream {}: {}",
                        waiting.elapsed().as_secs(),
                        self.next,
                        self.stream,
                        crate::wire::writer_of(&self.stream, self.next)
                    );
                    say += SAY_AGAIN;
                }
                match waits % SETTLE_EVERY {
                    0 if waits > 0 => self.log.flush_all()?,
                    _ => self.log.send_all()?,
                }
                waits += 1;
                // A consumer its server took along is made again by the client, but
                // not always: one that hands out nothing while the stream holds the
                // message due is made again here.
                if since.elapsed() >= STALL {
                    if self.log.state(&self.stream)?.last_sequence >= self.message {
                        break;
                    }
                    since = Instant::now();
                }
                got = self.log.block_on(async { tokio::time::timeout(AGE, messages.next()).await.ok() });
            }
            let error = match got {
                None => {
                    format!("the consumer handed out nothing for {} s, the stream holding the message", STALL.as_secs())
                }
                Some(Some(Ok(m))) => {
                    let seq = m
                        .info()
                        .map_err(nats(format!("a message of stream {} without its position", self.stream)))?
                        .stream_sequence;
                    if seq == self.message {
                        self.message += 1;
                        let batch = self.log.decode(&self.stream, seq, m.payload.to_vec(), m.headers.as_ref())?;
                        // A batch follows the one before it: records overlapping or
                        // missing would be a writer's fault (two writers, or a lost check).
                        if let Some(due) = self.batch.as_ref().map(|b| b.last() + 1).filter(|&d| d != batch.first()) {
                            return Err(LogError::Order { stream: self.stream.clone(), want: due, got: batch.first() });
                        }
                        if batch.first() > self.next {
                            let first = self.log.first_seq(&self.stream)?;
                            if first > self.next {
                                return Err(LogError::Trimmed { stream: self.stream.clone(), want: self.next, first });
                            }
                            return Err(LogError::Order {
                                stream: self.stream.clone(),
                                want: self.next,
                                got: batch.first(),
                            });
                        }
                        self.batch = Some(batch);
                        return Ok(true);
                    }
                    if seq < self.message {
                        // Read before: the position's content is the same, so skip it.
                        self.redelivered += 1;
                        tracing::debug!(stream = %self.stream, seq, due = self.message, "message handed out again: skipped");
                        continue;
                    }
                    let first = self.log.first_seq(&self.stream)?;
                    if first > self.next {
                        return Err(LogError::Trimmed { stream: self.stream.clone(), want: self.next, first });
                    }
                    if start.elapsed() > RETRY_FOR {
                        return Err(LogError::Order { stream: self.stream.clone(), want: self.message, got: seq });
                    }
                    // The stream holds the message due, but the consumer (on a server
                    // that lost it, as `purge_before` explains) handed out a later one:
                    // made again, as a broken one is.
                    format!("the consumer skipped to message #{seq}")
                }
                Some(failed) => {
                    let error = failed
                        .and_then(|r| r.err())
                        .map_or_else(|| "the consumer ended".to_string(), |e| e.to_string());
                    if start.elapsed() > RETRY_FOR {
                        return Err(LogError::Nats {
                            what: format!("reading stream {} at message #{}", self.stream, self.message),
                            source: error.into(),
                        });
                    }
                    error
                }
            };
            tracing::warn!(stream = %self.stream, at = self.message, %error, "reader failed, reopening");
            std::thread::sleep(BACKOFF);
            let message = self.message;
            self.open_at(message)?;
        }
    }
}

/// Reads the streams of a deployment's partitions as one stream about every document,
/// in document order: document `n` is the record of its owner's stream
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

    /// The next document's record: (the document, the payload), waiting for it as
    /// [`Reader::read`] does.
    pub fn read(&mut self) -> Result<(u64, Vec<u8>)> {
        Ok(self.step(|r| r.read().map(Some))?.expect("waited for"))
    }

    /// [`Interleaved::read`] when the record is already here, else None at once.
    pub fn try_read(&mut self) -> Result<Option<(u64, Vec<u8>)>> {
        self.step(Reader::try_read)
    }

    /// The next document's record as `read` reads it from its owner's stream.
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
