//! Appending records in batches, exactly once ([`Appends`]).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use async_nats::jetstream::{self, context::PublishErrorKind};

use super::{nats, Log, LogError, Place, Result, Tail, BACKOFF, RETRY_FOR};
use crate::batch::{Batch, Filling};

/// Records appended to one stream by its one writer, in batches ([`crate::batch`]):
/// each batch is sent when the rules of [`Filling`] say so, by [`Appends::flush`], or
/// when any reader of the process is about to wait ([`Log::flush_all`]), and
/// acknowledged later, in order, so that the writer goes on meanwhile. Each is message
/// `m` exactly once, as with [`Log::append`]; one whose acknowledgement is not the one
/// due (a leader election meanwhile; the ones after it are then refused, or were
/// stored after it, and are checked the same way) is appended again.
pub struct Appends {
    writer: Arc<Mutex<Writer>>,
}

impl Appends {
    pub(super) fn new(log: &Log, stream: &str, subject: &str) -> Appends {
        let writer = Arc::new(Mutex::new(Writer {
            log: log.clone(),
            stream: stream.to_string(),
            subject: subject.to_string(),
            tail: None,
            filling: Filling::default(),
            stored: None,
            sent: VecDeque::new(),
            failed: None,
        }));
        log.inner.writers.lock().unwrap_or_else(|p| p.into_inner()).push(Arc::downgrade(&writer));
        Appends { writer }
    }

    fn writer(&self) -> std::sync::MutexGuard<'_, Writer> {
        self.writer.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends record `seq`: the one after the last pushed, or, for a writer that
    /// restarted, one the stream holds already, which must be `payload`.
    pub fn push(&mut self, seq: u64, payload: Vec<u8>) -> Result<()> {
        self.writer().push(seq, payload)
    }

    /// Sends the open batch and waits until every record pushed is in the stream.
    pub fn flush(&mut self) -> Result<()> {
        self.writer().flush()
    }
}

/// An [`Appends`]' state, which the process's readers flush too.
pub(super) struct Writer {
    log: Log,
    stream: String,
    subject: String,
    /// The stream's last message and last record, read when the first record comes
    /// (then kept: this writer alone appends).
    tail: Option<Tail>,
    filling: Filling,
    /// A stored batch the records made again are compared with.
    stored: Option<Batch>,
    sent: VecDeque<(u64, Vec<u8>, Option<jetstream::context::PublishAckFuture>)>,
    /// What went wrong sending an old batch on the log's own thread
    /// ([`Writer::send_if_late`]), for the writer's next call to return.
    failed: Option<LogError>,
}

/// How many batches [`Appends`] has under way at most.
const UNDER_WAY: usize = 16;

impl Writer {
    fn push(&mut self, seq: u64, payload: Vec<u8>) -> Result<()> {
        self.failed.take().map_or(Ok(()), Err)?;
        let stored = match self.tail {
            Some(t) => t.last,
            None => self.tail.insert(self.log.tail(&self.stream)?).last,
        };
        if seq <= stored {
            return self.compare(seq, &payload);
        }
        let due = self.filling.next(stored);
        if seq != due {
            return Err(LogError::Gap { stream: self.stream.clone(), seq, last: due - 1 });
        }
        // Said here, not retried as an append the server refuses.
        if let Some(largest) = self.log.largest_record().filter(|&l| payload.len() > l) {
            return Err(LogError::TooLarge { stream: self.stream.clone(), seq, bytes: payload.len(), largest });
        }
        if self.filling.full_before(payload.len()) {
            self.send()?;
        }
        if self.filling.add(seq, payload, Instant::now()) {
            self.send()?;
        }
        Ok(())
    }

    /// Record `seq` made again by a writer that restarted: the stored one must be it.
    fn compare(&mut self, seq: u64, payload: &[u8]) -> Result<()> {
        if self.stored.as_ref().is_none_or(|b| b.get(seq).is_none()) {
            self.stored = match self.log.locate(&self.stream, seq)? {
                Place::Held(_, batch) => Some(batch),
                // Trimmed: what the stream held there was read by everyone after it.
                Place::Before(_) => return Ok(()),
                Place::After(_) => None,
            };
        }
        match self.stored.as_ref().and_then(|b| b.get(seq)) {
            Some(there) if there == payload => Ok(()),
            _ => Err(LogError::Conflict { stream: self.stream.clone(), seq }),
        }
    }

    /// Sends the open batch when its first record is [`crate::batch::LATENCY`] old
    /// (then true): the latency bound of a writer busy elsewhere, which the log's own
    /// thread keeps ([`Log::connect`]). What goes wrong is kept for the writer's next call.
    pub(super) fn send_if_late(&mut self, now: Instant) -> bool {
        if self.failed.is_some() || !self.filling.late(now) {
            return false;
        }
        self.failed = self.send().err();
        true
    }

    /// Sends the open batch, if any, as the stream's next message.
    pub(super) fn send(&mut self) -> Result<()> {
        self.failed.take().map_or(Ok(()), Err)?;
        let Some((message, first, last)) = self.filling.take() else { return Ok(()) };
        let tail = self.tail.as_mut().expect("read before the first record");
        let after = *tail;
        *tail = Tail { message: after.message + 1, first, last };
        let m = tail.message;
        let sent = self.log.block_on(self.log.send(&self.subject, after, (first, last), message.clone()));
        let failed = sent.is_err();
        self.sent.push_back((m, message, sent.ok()));
        if failed {
            return self.settle();
        }
        while self.sent.len() > UNDER_WAY {
            self.settle_oldest()?;
        }
        Ok(())
    }

    /// Sends the open batch and waits until every record pushed is in the stream.
    pub(super) fn flush(&mut self) -> Result<()> {
        self.send()?;
        self.settle()
    }

    fn settle(&mut self) -> Result<()> {
        while !self.sent.is_empty() {
            self.settle_oldest()?;
        }
        Ok(())
    }

    fn settle_oldest(&mut self) -> Result<()> {
        let Some((m, message, ack)) = self.sent.pop_front() else { return Ok(()) };
        let acked = ack.map(|ack| self.log.block_on(std::future::IntoFuture::into_future(ack)));
        if matches!(acked, Some(Ok(ref a)) if a.sequence == m) {
            return Ok(());
        }
        // Not stored as message m, or not known to be (a leader election meanwhile, a
        // server lost, a predecessor's last batch stored after this writer read the
        // stream's tail): every batch not known stored, the open one too, is appended
        // again, one at a time, after whatever the stream holds by then.
        let mut again: Vec<Vec<u8>> = std::iter::once(message).chain(self.sent.drain(..).map(|(_, b, _)| b)).collect();
        again.extend(self.filling.take().map(|(b, _, _)| b));
        again.into_iter().try_for_each(|message| self.append_again(message))
    }

    /// Appends our batch `message` as the stream's next message, acknowledged: the
    /// records of it the stream holds already (a lost acknowledgement, a predecessor's
    /// batch) must be ours, and the others go in a batch of their own.
    fn append_again(&mut self, message: Vec<u8>) -> Result<()> {
        let start = Instant::now();
        let mut message = message;
        loop {
            let batch = Batch::decode(message.clone()).expect("a batch this writer encoded");
            let tail = self.log.tail(&self.stream)?;
            let (m, stored) = (tail.message, tail.last);
            self.tail = Some(tail);
            for n in batch.first()..=batch.last().min(stored) {
                self.compare(n, batch.get(n).expect("in the batch"))?;
            }
            if batch.last() <= stored {
                return Ok(());
            }
            if batch.first() <= stored {
                let rest: Vec<&[u8]> =
                    (stored + 1..=batch.last()).map(|n| batch.get(n).expect("in the batch")).collect();
                message = Batch::encode(stored + 1, &rest);
            } else if batch.first() > stored + 1 {
                return Err(LogError::Gap { stream: self.stream.clone(), seq: batch.first(), last: stored });
            }
            let bounds = (batch.first().max(stored + 1), batch.last());
            let sent =
                self.log.block_on(async { self.log.send(&self.subject, tail, bounds, message.clone()).await?.await });
            match sent {
                Ok(ack) if ack.sequence == m + 1 => {
                    self.tail = Some(Tail { message: m + 1, first: bounds.0, last: bounds.1 });
                    return Ok(());
                }
                Ok(ack) => return Err(LogError::Order { stream: self.stream.clone(), want: m + 1, got: ack.sequence }),
                Err(e)
                    if matches!(
                        e.kind(),
                        PublishErrorKind::WrongLastSequence | PublishErrorKind::WrongLastMessageId
                    ) => {}
                Err(e) if start.elapsed() < RETRY_FOR && super::lasting(&e).is_none() => {
                    tracing::warn!(stream = %self.stream, message = m + 1, error = %e, "append failed, retrying");
                    std::thread::sleep(BACKOFF);
                }
                Err(e) => {
                    return Err(nats(format!("cannot append message #{} to stream {}", m + 1, self.stream))(e.into()))
                }
            }
        }
    }
}
