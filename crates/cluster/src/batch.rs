//! Batches: one log message holds the records of a run of consecutive record numbers
//! (`docs/SCALE-OUT.md`, "A batched log protocol"), as a Kafka record batch does.
//!
//! Record `n` of the documents stream is document `n`, record `k` of a partition's
//! feedback stream is the feedback of the `k`-th document it owns. A message is a
//! [`Batch`]: the number of its first record and the records that follow, each in its
//! own format ([`crate::wire`]). The writer alone chooses where a batch ends ([`Filling`])
//! and the message says it, so no reader infers bounds from timing, and a record's
//! content is the same however its stream was cut into batches.
//!
//! The layout is the version byte [`FORMAT`], then unsigned LEB128 varints (postcard's
//! integers): the first record's number, the record count, and each record's length
//! followed by its bytes. A reader finds the records without copying the ones it skips
//! (a partition skips the other partitions' answers).

use std::ops::Range;
use std::time::{Duration, Instant};

use crate::wire::WireError;

/// The message format of a batched log: every message a batch. Streams written before
/// (message formats 7 and 8: a message a record) are refused with the way on
/// ([`WireError::Version`]).
pub const FORMAT: u8 = 9;

/// A batch is sent once it holds this many records ...
pub const RECORDS: usize = 64;
/// ... or once another record would take it over this many bytes (a record larger
/// alone is a batch of one) ...
pub const BYTES: usize = 256 * 1024;
/// ... or when a record is added to a batch whose first record has waited this long:
/// the latency bound while the writer keeps writing. A writer that waits for anything
/// it reads sends its open batch first, whatever it holds (`log::Appends::flush`).
pub const AGE: Duration = Duration::from_millis(2);
/// ... and, whatever the writer does, once its first record has waited this long: the
/// log's own thread sends it (`log::send_old_batches`). Longer than [`AGE`]: sent at
/// 2 ms, the batches of a partition at P = 4 (which adds records for a few ms before
/// it waits) were cut small, and the thread's sends took the log's runtime from the
/// process: +15% CPU and 1.6x the wall time on 20,000 GCC entries.
pub const LATENCY: Duration = Duration::from_millis(20);

/// A decoded batch: the message's bytes and where each record lies in them.
#[derive(Debug, Clone)]
pub struct Batch {
    first: u64,
    bytes: Vec<u8>,
    spans: Vec<Range<usize>>,
}

impl Batch {
    /// The message of the records `first`, `first + 1`, ... (at least one).
    pub fn encode<R: AsRef<[u8]>>(first: u64, records: &[R]) -> Vec<u8> {
        assert!(!records.is_empty(), "a batch holds at least one record");
        let size: usize = records.iter().map(|r| r.as_ref().len() + 5).sum();
        let mut out = Vec::with_capacity(1 + 20 + size);
        out.push(FORMAT);
        varint(&mut out, first);
        varint(&mut out, records.len() as u64);
        for r in records {
            varint(&mut out, r.as_ref().len() as u64);
            out.extend_from_slice(r.as_ref());
        }
        out
    }

    /// Reads a message written by [`Batch::encode`].
    pub fn decode(bytes: Vec<u8>) -> Result<Batch, WireError> {
        const WHAT: &str = "a log message";
        let bad = || WireError::Batch { what: WHAT };
        match bytes.first() {
            None => return Err(WireError::Empty { what: WHAT }),
            Some(&FORMAT) => {}
            Some(&found) => return Err(WireError::Version { what: WHAT, found, reads: FORMAT }),
        }
        let mut at = 1;
        let first = read_varint(&bytes, &mut at).ok_or_else(bad)?;
        let count = read_varint(&bytes, &mut at).ok_or_else(bad)?;
        if count == 0 || first == 0 || count > bytes.len() as u64 {
            return Err(bad());
        }
        let mut spans = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let len = read_varint(&bytes, &mut at).ok_or_else(bad)?;
            let end = usize::try_from(len).ok().and_then(|l| at.checked_add(l)).filter(|&e| e <= bytes.len());
            let end = end.ok_or_else(bad)?;
            spans.push(at..end);
            at = end;
        }
        if at != bytes.len() {
            return Err(bad());
        }
        Ok(Batch { first, bytes, spans })
    }

    /// The number of its first record.
    pub fn first(&self) -> u64 {
        self.first
    }

    /// The number of its last record.
    pub fn last(&self) -> u64 {
        self.first + self.spans.len() as u64 - 1
    }

    /// Record `n`, if the batch holds it.
    pub fn get(&self, n: u64) -> Option<&[u8]> {
        let i = usize::try_from(n.checked_sub(self.first)?).ok()?;
        self.spans.get(i).map(|s| &self.bytes[s.clone()])
    }
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn read_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f).checked_shl(shift)?;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// The writer's open batch: records added in order until one of the rules above says
/// it is to be sent.
#[derive(Debug, Default)]
pub struct Filling {
    first: u64,
    records: Vec<Vec<u8>>,
    bytes: usize,
    since: Option<Instant>,
}

impl Filling {
    /// The number the next record must have, given the last one stored (`stored`) when
    /// nothing is open.
    pub fn next(&self, stored: u64) -> u64 {
        if self.records.is_empty() {
            stored + 1
        } else {
            self.first + self.records.len() as u64
        }
    }

    /// Whether adding a record of `len` bytes must send the open batch first (it would
    /// go over [`BYTES`]).
    pub fn full_before(&self, len: usize) -> bool {
        !self.records.is_empty() && self.bytes + len > BYTES
    }

    /// Adds record `n` (the one [`Filling::next`] says); returns whether the batch is
    /// now to be sent ([`RECORDS`] records, or its first record [`AGE`] old).
    pub fn add(&mut self, n: u64, record: Vec<u8>, now: Instant) -> bool {
        if self.records.is_empty() {
            self.first = n;
            self.since = Some(now);
        }
        self.bytes += record.len();
        self.records.push(record);
        self.records.len() >= RECORDS || self.since.is_some_and(|s| now.duration_since(s) >= AGE)
    }

    /// Whether a batch is open and its first record is [`LATENCY`] old at `now`.
    pub fn late(&self, now: Instant) -> bool {
        self.since.is_some_and(|s| now.duration_since(s) >= LATENCY)
    }

    /// The open batch's message and its first and last records, leaving nothing open.
    pub fn take(&mut self) -> Option<(Vec<u8>, u64, u64)> {
        if self.records.is_empty() {
            return None;
        }
        let message = Batch::encode(self.first, &self.records);
        let last = self.first + self.records.len() as u64 - 1;
        self.records.clear();
        self.bytes = 0;
        self.since = None;
        Some((message, self.first, last))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Any records at any first number read back as written, each by its number.
        #[test]
        fn a_batch_reads_back_its_records(first in 1u64..u64::MAX / 2, records in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 1..80)) {
            let batch = Batch::decode(Batch::encode(first, &records)).unwrap();
            prop_assert_eq!((batch.first(), batch.last()), (first, first + records.len() as u64 - 1));
            for (i, r) in records.iter().enumerate() {
                prop_assert_eq!(batch.get(first + i as u64), Some(&r[..]));
            }
            prop_assert_eq!(batch.get(first - 1), None);
            prop_assert_eq!(batch.get(first + records.len() as u64), None);
        }

        /// A cut message is refused, never read as other records.
        #[test]
        fn a_cut_batch_is_refused(records in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..50), 1..10), cut in 0usize..1000) {
            let bytes = Batch::encode(7, &records);
            let cut = cut % bytes.len();
            prop_assert!(Batch::decode(bytes[..cut].to_vec()).is_err());
        }
    }

    #[test]
    fn a_message_of_the_format_before_batches_is_refused_with_the_way_on() {
        let err = Batch::decode(vec![8, 1, 2, 3]).unwrap_err();
        assert!(matches!(err, WireError::Version { found: 8, reads: FORMAT, .. }), "{err}");
        assert!(err.to_string().contains("finish it with that build"), "{err}");
    }

    #[test]
    fn a_batch_is_sent_when_full_by_count_bytes_or_age() {
        let t = Instant::now();
        let mut f = Filling::default();
        assert_eq!(f.next(10), 11);
        for n in 11..11 + RECORDS as u64 - 1 {
            assert!(!f.add(n, vec![0; 10], t), "record {n}");
        }
        assert_eq!(f.next(10), 10 + RECORDS as u64);
        assert!(f.add(10 + RECORDS as u64, vec![0; 10], t), "the 64th record fills it");
        let (message, first, last) = f.take().unwrap();
        assert_eq!((first, last), (11, 10 + RECORDS as u64));
        assert_eq!(Batch::decode(message).unwrap().first(), 11);
        assert!(f.take().is_none());

        assert!(!f.full_before(BYTES + 1), "a record larger than a batch goes alone");
        assert!(!f.add(1, vec![0; BYTES - 10], t));
        assert!(f.full_before(11) && !f.full_before(10));
        assert!(f.add(2, vec![], t + AGE), "the first record waited long enough");
    }
}
