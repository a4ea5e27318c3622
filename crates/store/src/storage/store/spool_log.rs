//! The spool's log: admission records (`admitted`: how many documents of a spool file
//! are stored, written in each document's batch) and failure records (`failed`).

use rocksdb::{IteratorMode, WriteBatch};
use serde::{Deserialize, Serialize};

use super::meta::MetaKey;
use super::{Result, Store, CF_ADMITTED, CF_FAILED, CF_FAILED_DOCS};

/// The admission key of a spool file: xxh3-128 of its name's bytes, NUL, its bytes
/// (streamed: the same value as over their concatenation, without a copy).
pub fn admission_key(name: &[u8], bytes: &[u8]) -> u128 {
    let mut key = AdmissionKey::new(name);
    key.update(bytes);
    key.finish()
}

/// [`admission_key`] of a file read piece by piece (the daemon never holds a spool
/// file whole).
pub struct AdmissionKey(xxhash_rust::xxh3::Xxh3);

impl AdmissionKey {
    /// For the file named `name` (its name's bytes).
    pub fn new(name: &[u8]) -> AdmissionKey {
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        hasher.update(name);
        hasher.update(&[0]);
        AdmissionKey(hasher)
    }

    /// The file's next bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    pub fn finish(&self) -> u128 {
        self.0.digest128()
    }
}

/// The admission key of one document: xxh3-128 of `doc`,
/// the name of the file it came from (without directories), its name, text, URL and
/// date, and how many documents of that file with the same content came before it.
/// Stored with the document, it lets a file given again (fixed after some of its
/// documents failed, or ingested twice) store only what was not stored.
pub fn document_key(
    file: &[u8],
    name: &str,
    text: &str,
    url: Option<&str>,
    published_at: Option<&str>,
    occurrence: u32,
) -> u128 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for part in [
        &b"doc"[..],
        file,
        name.as_bytes(),
        text.as_bytes(),
        url.unwrap_or("").as_bytes(),
        published_at.unwrap_or("").as_bytes(),
    ] {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    hasher.update(&[u8::from(url.is_some()), u8::from(published_at.is_some())]);
    hasher.update(&occurrence.to_le_bytes());
    hasher.digest128()
}

/// The name of the file at `path` in its documents' keys: the same wherever the file is.
pub fn key_name(path: &std::path::Path) -> &[u8] {
    use std::os::unix::ffi::OsStrExt;
    path.file_name().unwrap_or(path.as_os_str()).as_bytes()
}

/// The [`document_key`]s of one file's documents in order: counts the occurrences of
/// each content.
#[derive(Debug)]
pub struct DocumentKeys {
    file: Vec<u8>,
    seen: std::collections::HashMap<u128, u32>,
}

impl DocumentKeys {
    /// For the file named `file` (its name without directories).
    pub fn new(file: &[u8]) -> DocumentKeys {
        DocumentKeys { file: file.to_vec(), seen: std::collections::HashMap::new() }
    }

    /// The key of the file's next document.
    pub fn next(&mut self, doc: &crate::input::InputDoc) -> u128 {
        let name = doc.key_name.as_deref().unwrap_or(&doc.name);
        let key = |n| document_key(&self.file, name, &doc.text, doc.url.as_deref(), doc.published_at.as_deref(), n);
        let first = key(0);
        let n = self.seen.entry(first).or_insert(0);
        let k = if *n == 0 { first } else { key(*n) };
        *n += 1;
        k
    }
}

/// What a stored document records, in its own batch, about where it came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Admit {
    /// How far its spool file is admitted (the daemon).
    pub file: Option<Admission>,
    /// Its [`document_key`].
    pub doc: Option<u128>,
    /// The way it came in ([`DocMeta::via`](super::DocMeta::via)).
    pub via: Option<super::Via>,
    /// When it arrived, in milliseconds since the epoch, if it was admitted elsewhere
    /// (a sharded deployment's submission, whose workers order by it): else now.
    pub arrival_ms: Option<u64>,
    /// Its id, when a partition of a deployment stores it (the log's): else
    /// the store's next.
    pub seq: Option<u64>,
}

/// A spool file's admission record, written in the batch of each of its documents:
/// the key is [`admission_key`] of the file's name and bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admission {
    pub key: u128,
    pub state: FileAdmission,
}

/// How far a spool file is admitted, once the batch that holds its record commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileAdmission {
    /// Its documents are being admitted: the first `done` are (stored or failed),
    /// `failed` of them failed; how many it holds is known only at its end.
    Reading { done: u32, failed: u32 },
    /// Its end was reached: it held `total` documents (at least one), all admitted,
    /// `failed` of which failed.
    Ended { total: u32, failed: u32 },
    /// The whole file failed (not readable, not documents, or none): one failure.
    Failed,
}

impl FileAdmission {
    /// Its documents admitted (stored or failed).
    pub fn done(self) -> u32 {
        match self {
            FileAdmission::Reading { done, .. } => done,
            FileAdmission::Ended { total, .. } => total,
            FileAdmission::Failed => 0,
        }
    }

    /// Its documents that failed (a whole file that failed: one).
    pub fn failed(self) -> u32 {
        match self {
            FileAdmission::Reading { failed, .. } | FileAdmission::Ended { failed, .. } => failed,
            FileAdmission::Failed => 1,
        }
    }

    /// How many documents it holds, once known (a whole file that failed: none).
    pub fn total(self) -> Option<u32> {
        match self {
            FileAdmission::Reading { .. } => None,
            FileAdmission::Ended { total, .. } => Some(total),
            FileAdmission::Failed => Some(0),
        }
    }

    /// The record's three numbers: documents done, in the file (`u32::MAX` while not
    /// known, 0 for a file that failed whole), failed.
    fn encode(self) -> [u32; 3] {
        match self {
            FileAdmission::Reading { done, failed } => [done, u32::MAX, failed],
            FileAdmission::Ended { total, failed } => [total, total, failed],
            FileAdmission::Failed => [0, 0, 1],
        }
    }

    /// The state a record's numbers say ([`FileAdmission::encode`]'s; a record whose
    /// total is known and not reached, never written, reads as still being read).
    fn decode([done, total, failed]: [u32; 3]) -> FileAdmission {
        match total {
            0 => FileAdmission::Failed,
            u32::MAX => FileAdmission::Reading { done, failed },
            _ if done >= total => FileAdmission::Ended { total, failed },
            _ => FileAdmission::Reading { done, failed },
        }
    }
}

/// An input document that failed to be stored (`ingest`, Python; schema 15), under its
/// source: what lets the outputs that pair with the input files give it a line
/// (Dolma's mixer reads documents and attributes line by line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocFailure {
    /// Its `id` as JSON text (a string's quotes kept), when it was read.
    pub id: Option<String>,
    pub reason: String,
}

/// A spool file (or line) that could not be processed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub file: String,
    pub reason: String,
    /// Wall-clock time, ms since the Unix epoch.
    pub at_ms: u64,
}

/// A document admission's key in `admitted`: `d` and 16 bytes (a file's key is 16
/// bytes alone).
fn document_admission_key(key: u128) -> [u8; 17] {
    let mut k = [b'd'; 17];
    k[1..].copy_from_slice(&key.to_be_bytes());
    k
}

impl Store {
    /// Adds an admission record to a batch: u32 LE documents done (stored or failed),
    /// u32 LE in the file, u32 LE failed (schema 5; [`FileAdmission::encode`]).
    pub(super) fn add_admission(&self, b: &mut WriteBatch, a: Admission) {
        let v: Vec<u8> = a.state.encode().iter().flat_map(|n| n.to_le_bytes()).collect();
        self.put(b, CF_ADMITTED, &a.key.to_be_bytes(), &v);
    }

    /// How far a spool file was admitted: its record, if any (a schema-4 record of 8
    /// bytes has no failed count: 0).
    pub fn admitted(&self, key: u128) -> Result<Option<Admission>> {
        let u = |v: &[u8], at: usize| u32::from_le_bytes(v[at..at + 4].try_into().expect("4 bytes"));
        Ok(self.read(CF_ADMITTED, &key.to_be_bytes())?.and_then(|v| {
            let numbers = match v.len() {
                8 => [u(&v, 0), u(&v, 4), 0],
                12 => [u(&v, 0), u(&v, 4), u(&v, 8)],
                _ => return None,
            };
            Some(Admission { key, state: FileAdmission::decode(numbers) })
        }))
    }

    /// Adds a document's admission record (`d` + its [`document_key`] → its id, u64 BE).
    pub(super) fn add_document_admission(&self, b: &mut WriteBatch, key: u128, seq: u64) {
        self.put(b, CF_ADMITTED, &document_admission_key(key), &seq.to_be_bytes());
    }

    /// The id of the document stored under `key` ([`document_key`]), if any.
    pub fn admitted_document(&self, key: u128) -> Result<Option<u64>> {
        Ok(self
            .read(CF_ADMITTED, &document_admission_key(key))?
            .and_then(|v| <[u8; 8]>::try_from(v.as_slice()).ok())
            .map(u64::from_be_bytes))
    }

    /// Records how far a spool file is admitted without storing a document (its next
    /// document was stored before, under its [`document_key`]); synced with the batch.
    pub fn put_admission(&self, a: Admission) -> Result<()> {
        let mut b = WriteBatch::default();
        self.add_admission(&mut b, a);
        if matches!(a.state, FileAdmission::Ended { failed: 1.., .. }) {
            self.count_file_failed(&mut b)?;
        }
        self.write(b, false)
    }

    /// Adds one to the spool files that failed ([`MetaKey::FilesFailed`]) in a batch.
    fn count_file_failed(&self, b: &mut WriteBatch) -> Result<()> {
        let n = self.meta_u64(MetaKey::FilesFailed)?.unwrap_or(0);
        self.put_meta_u64(b, MetaKey::FilesFailed, n + 1);
        Ok(())
    }

    /// Spool files whose documents failed, whole or in part ([`MetaKey::FilesFailed`]):
    /// what the daemon's `files_failed_total` counts, across its restarts.
    pub fn files_failed(&self) -> Result<u64> {
        Ok(self.meta_u64(MetaKey::FilesFailed)?.unwrap_or(0))
    }

    /// Records an admission that stored no document (a file that failed whole), synced
    /// with the failure record.
    pub fn put_failure(&self, admission: Option<Admission>, failure: &Failure) -> Result<()> {
        let mut b = WriteBatch::default();
        if let Some(a) = admission {
            self.add_admission(&mut b, a);
            // A whole file failed (a document's failure is counted at its file's end).
            if a.state == FileAdmission::Failed {
                self.count_file_failed(&mut b)?;
            }
        }
        let n = self.meta_u64(MetaKey::FailedNext)?.unwrap_or(0);
        self.put(&mut b, CF_FAILED, &n, failure);
        self.put_meta_u64(&mut b, MetaKey::FailedNext, n + 1);
        self.write(b, true)
    }

    /// Records that the input document at `source` failed (a failure recorded before
    /// under the same source is replaced: a re-run fails it again). Not synced, as a
    /// stored document's batch is not: the run's sync at its end makes both durable, and
    /// the run that resumes after a crash fails the document again (it has no admission
    /// record) and writes the record again.
    pub fn put_doc_failure(&self, source: &str, failure: &DocFailure) -> Result<()> {
        let mut b = WriteBatch::default();
        self.put(&mut b, CF_FAILED_DOCS, source.as_bytes(), failure);
        self.write(b, false)
    }

    /// Every failed input document by its source, in byte order of the sources.
    pub fn doc_failures(&self) -> Result<Vec<(String, DocFailure)>> {
        let mut out = Vec::new();
        for item in self.scan(CF_FAILED_DOCS, IteratorMode::Start) {
            let (k, failure) = item?;
            out.push((String::from_utf8_lossy(&k).into_owned(), failure));
        }
        Ok(out)
    }

    /// Every recorded failure, oldest first.
    pub fn failures(&self) -> Result<Vec<Failure>> {
        self.scan(CF_FAILED, IteratorMode::Start).map(|item| item.map(|(_, failure)| failure)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_admission_reads_back_as_written_and_keeps_its_numbers() {
        let states = [
            FileAdmission::Reading { done: 0, failed: 0 },
            FileAdmission::Reading { done: 7, failed: 2 },
            FileAdmission::Ended { total: 1, failed: 0 },
            FileAdmission::Ended { total: 9, failed: 9 },
            FileAdmission::Failed,
        ];
        for s in states {
            assert_eq!(FileAdmission::decode(s.encode()), s);
        }
        // The numbers written before the states were typed.
        assert_eq!(FileAdmission::Reading { done: 3, failed: 1 }.encode(), [3, u32::MAX, 1]);
        assert_eq!(FileAdmission::Ended { total: 5, failed: 1 }.encode(), [5, 5, 1]);
        assert_eq!(FileAdmission::Failed.encode(), [0, 0, 1]);
        // A schema-4 record of a file that failed whole (no failed count) is one failure.
        assert_eq!(FileAdmission::decode([0, 0, 0]), FileAdmission::Failed);
        let s = FileAdmission::Reading { done: 4, failed: 1 };
        assert_eq!((s.done(), s.failed(), s.total()), (4, 1, None));
        let e = FileAdmission::Ended { total: 6, failed: 0 };
        assert_eq!((e.done(), e.failed(), e.total()), (6, 0, Some(6)));
    }
}
