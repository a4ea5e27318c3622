//! One input file admitted document by document: the state machine that batch
//! ingestion ([`crate::ingest`]: `ingest` and the Python package) and the daemon's spool
//! drive on the thread that applies, so that what is skipped, stored and recorded as
//! failed is decided in one place. [`FileAdmitting::start`], then
//! [`FileAdmitting::doc`] for each of the file's documents in order, then
//! [`FileAdmitting::end`]; a file cut short (a stop, a crash) is simply dropped: what
//! is stored stays, and the spool's records continue after it.
//!
//! The two ways differ in what they record ([`Records`]): a spool file's admission
//! ([`FileAdmission`]) goes into the batch of each of its documents, so that the daemon
//! admits every document exactly once across crashes and restarts; a batch run records
//! each failed document under its source, so that the outputs that pair with the input
//! files ([`crate::storage::store::DocFailure`]) can give it its line.

use crate::error::{chain, IoContext};
use crate::input::{InputDoc, InputError};
use crate::storage::datadir::{DataDir, DataDirError, Prepared};
use crate::storage::store::{Admission, Admit, DocFailure, DocMeta, DocumentKeys, Failure, FileAdmission, Via};

/// Failure records kept for one spool file (the daemon also lists their reasons in its
/// `.reason` file): a file of 50,000 failing lines gets this many and a count of the
/// rest.
pub const MAX_FAILURE_RECORDS: u32 = 100;

/// How a file's admission is recorded.
#[derive(Debug, Clone)]
pub enum Records {
    /// A spool file (the daemon): how far it is admitted, under its admission `key`
    /// ([`crate::storage::store::admission_key`]), in the batch of each document; the
    /// first `before.done()` documents were admitted before this run (they are only
    /// counted); its documents' failures are recorded under its `name`, the first
    /// [`MAX_FAILURE_RECORDS`].
    Spool { key: u128, name: String, before: Option<FileAdmission> },
    /// An input of a batch run (`ingest`, Python): a failed document is recorded under
    /// its source; one stored before (by its document key) is skipped unless `force`.
    Batch { force: bool },
}

/// What became of one document.
#[derive(Debug)]
pub enum Admitted {
    /// Stored.
    Stored(DocMeta),
    /// Stored before from a file of this name (the same document key): its id.
    Before(u64),
    /// Admitted before this run (a spool file continued after its stored documents).
    Earlier,
    /// Not stored, for this reason, recorded.
    Failed(String),
}

/// Why a file's admission stopped.
#[derive(Debug, thiserror::Error)]
pub enum AdmitError {
    /// A spool document's store write failed (nothing of it stored): the file stays in
    /// the spool and continues after what is stored.
    #[error(transparent)]
    Write(DataDirError),
    /// A record could not be written, the data directory is poisoned, or a fault was
    /// injected: stop.
    #[error(transparent)]
    Fatal(DataDirError),
}

impl AdmitError {
    pub fn into_inner(self) -> DataDirError {
        match self {
            AdmitError::Write(e) | AdmitError::Fatal(e) => e,
        }
    }
}

/// A file being admitted (see the module).
#[derive(Debug)]
pub struct FileAdmitting {
    records: Records,
    /// Its documents' keys; none for documents that come without a file (always
    /// stored).
    keys: Option<DocumentKeys>,
    via: Via,
    /// Its documents so far, and those of them that failed (before this run too).
    seen: u32,
    failed: u32,
}

impl FileAdmitting {
    /// Starts admitting a file named `name` (the bytes of its name without directories;
    /// none for documents that come without a file) coming in `via`.
    pub fn start(name: Option<&[u8]>, via: Via, records: Records) -> FileAdmitting {
        let failed = match &records {
            Records::Spool { before: Some(b), .. } => b.failed(),
            _ => 0,
        };
        FileAdmitting { records, keys: name.map(DocumentKeys::new), via, seen: 0, failed }
    }

    /// Its documents so far.
    pub fn seen(&self) -> u32 {
        self.seen
    }

    /// Its documents that failed so far.
    pub fn failed(&self) -> u32 {
        self.failed
    }

    /// Admits the file's next document (or records why it is none), `prepared` unless
    /// it was admitted before this run, with the seconds its preparation took.
    pub fn doc(
        &mut self,
        dd: &mut DataDir,
        doc: Result<&InputDoc, &InputError>,
        prepared: Option<Prepared>,
        prepare_secs: f64,
    ) -> Result<Admitted, AdmitError> {
        let i = self.seen;
        self.seen += 1;
        // Every document's key is counted, those admitted before included, so that a
        // repeated document gets the same occurrence number every time.
        let key = match (&mut self.keys, doc) {
            (Some(keys), Ok(d)) => Some(keys.next(d)),
            _ => None,
        };
        let file = match &self.records {
            Records::Spool { before, .. } if i < before.map_or(0, FileAdmission::done) => {
                return Ok(Admitted::Earlier);
            }
            Records::Spool { key, .. } => Some(*key),
            Records::Batch { .. } => None,
        };
        let reading = |failed| file.map(|key| Admission { key, state: FileAdmission::Reading { done: i + 1, failed } });
        failpoint("admit.before-commit")?;
        let admitted = match doc {
            Err(e) => {
                let failure = DocFailure { id: e.id().map(str::to_string), reason: e.inner().to_string() };
                Err((e.to_string(), e.source(), failure))
            }
            Ok(doc) => match self.put(dd, doc, key, reading(self.failed), prepared, prepare_secs)? {
                Ok(admitted) => Ok(admitted),
                Err(reason) => Err((reason.clone(), doc.source.as_str(), DocFailure { id: Some(doc_id(doc)), reason })),
            },
        };
        failpoint("admit.after-commit")?;
        match admitted {
            Ok(admitted) => Ok(admitted),
            Err((reason, source, failure)) => {
                self.failed += 1;
                self.record_failure(dd, &reason, source, &failure, reading(self.failed))?;
                Ok(Admitted::Failed(reason))
            }
        }
    }

    /// Stores one document (`admission`: its spool file's record), or says it was
    /// stored before, or why it was not stored.
    fn put(
        &self,
        dd: &mut DataDir,
        doc: &InputDoc,
        key: Option<u128>,
        admission: Option<Admission>,
        prepared: Option<Prepared>,
        prepare_secs: f64,
    ) -> Result<Result<Admitted, String>, AdmitError> {
        let before = key.map(|k| dd.store().admitted_document(k)).transpose().map_err(fatal)?.flatten();
        if let Some(seq) = before.filter(|_| !matches!(self.records, Records::Batch { force: true })) {
            if let Some(a) = admission {
                dd.store().put_admission(a).map_err(fatal)?;
            }
            return Ok(Ok(Admitted::Before(seq)));
        }
        let prepared = prepared.expect("documents not admitted before are prepared");
        dd.add_prepare_time(prepare_secs);
        let admit = Admit { file: admission, doc: key, via: Some(self.via), ..Admit::default() };
        let batch = matches!(self.records, Records::Batch { .. });
        match dd.ingest_prepared(doc, prepared, admit) {
            Ok((meta, _)) => Ok(Ok(Admitted::Stored(meta))),
            Err(DataDirError::Doc(e)) => Ok(Err(e.to_string())),
            // A batch run records a failure that did not poison the data directory as
            // the document's; a spool file waits for the store to work again.
            Err(e) if batch && !dd.poisoned() => Ok(Err(chain(&e))),
            Err(e) if batch => Err(AdmitError::Fatal(e)),
            Err(e) => Err(AdmitError::Write(e)),
        }
    }

    /// Records the failure of the file's current document from `source`: a spool
    /// file's under its name with its `admission` (the first [`MAX_FAILURE_RECORDS`];
    /// then the admission alone), a batch run's `failure` under `source`.
    fn record_failure(
        &self,
        dd: &DataDir,
        reason: &str,
        source: &str,
        failure: &DocFailure,
        admission: Option<Admission>,
    ) -> Result<(), AdmitError> {
        let store = dd.store();
        match (&self.records, admission) {
            (Records::Spool { name, .. }, Some(a)) if self.failed <= MAX_FAILURE_RECORDS => {
                let record = Failure { file: name.clone(), reason: reason.to_string(), at_ms: crate::clock::now_ms() };
                store.put_failure(Some(a), &record)
            }
            (Records::Spool { .. }, Some(a)) => store.put_admission(a),
            _ => store.put_doc_failure(source, failure),
        }
        .map_err(fatal)
    }

    /// The file's documents ended: a spool file's last admission record (how many
    /// documents it held; a file of none is the caller's to fail whole). Returns its
    /// documents and those of them that failed.
    pub fn end(self, dd: &DataDir) -> Result<(u32, u32), DataDirError> {
        if let (Records::Spool { key, .. }, 1..) = (&self.records, self.seen) {
            let state = FileAdmission::Ended { total: self.seen, failed: self.failed };
            dd.store().put_admission(Admission { key: *key, state })?;
        }
        Ok((self.seen, self.failed))
    }
}

/// Records that a whole spool file failed (it cannot be read, holds no document, or is
/// not one), under its admission `key` and `name`: false when it was recorded before
/// (a file seen again after a crash).
pub fn fail_whole(dd: &DataDir, key: u128, name: &str, reason: &str) -> Result<bool, DataDirError> {
    if dd.store().admitted(key)?.is_some() {
        return Ok(false);
    }
    dd.store().put_failure(
        Some(Admission { key, state: FileAdmission::Failed }),
        &Failure { file: name.to_string(), reason: reason.to_string(), at_ms: crate::clock::now_ms() },
    )?;
    Ok(true)
}

fn fatal(e: impl Into<DataDirError>) -> AdmitError {
    AdmitError::Fatal(e.into())
}

/// A fault injected at `point` ([`crate::failpoint`]).
fn failpoint(point: &str) -> Result<(), AdmitError> {
    crate::failpoint::hit(point).io(|| "admission").map_err(fatal)
}

/// A document's id as JSON text (its name: a number's literal when the input gave a
/// number), for its failure record.
fn doc_id(doc: &InputDoc) -> String {
    if doc.id_number {
        doc.name.clone()
    } else {
        serde_json::Value::String(doc.name.clone()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intake::Policy;
    use textorigin_core::config::Overrides;

    fn doc(name: &str, text: &str) -> InputDoc {
        InputDoc { name: name.into(), source: format!("f.jsonl:{name}"), text: text.into(), ..InputDoc::default() }
    }

    /// Admits `docs` through `a`, preparing those `prepare` says.
    fn admit(dd: &mut DataDir, a: &mut FileAdmitting, docs: &[InputDoc], prepare: bool) -> Vec<String> {
        let mut preparer = dd.preparer();
        docs.iter()
            .map(|d| {
                let prepared = prepare.then(|| preparer.prepare(&d.text));
                match a.doc(dd, Ok(d), prepared, 0.0).unwrap() {
                    Admitted::Stored(m) => format!("stored #{}", m.seq),
                    Admitted::Before(seq) => format!("before #{seq}"),
                    Admitted::Earlier => "earlier".into(),
                    Admitted::Failed(r) => format!("failed: {r}"),
                }
            })
            .collect()
    }

    #[test]
    fn a_spool_file_continues_after_its_admitted_documents_and_a_batch_run_skips_what_it_stored() {
        let tmp = tempfile::tempdir().unwrap();
        let small = Overrides { table_bytes: Some(64 << 10), index_bytes: Some(8 << 20), ..Overrides::default() };
        let mut dd = DataDir::open_write(tmp.path(), &small, Policy::default()).unwrap();
        let a = doc("a", "The council approved the new bridge over the river on Monday.");
        let docs = [a.clone(), doc("b", "  "), doc("c", "Engineers expect the work to take two years."), a];
        let spool = |before| Records::Spool { key: 7, name: "f.jsonl".into(), before };
        // Cut short after two documents (a stop, a crash): how far it went is recorded.
        let mut first = FileAdmitting::start(Some(b"f.jsonl"), Via::Spool, spool(None));
        assert_eq!(
            admit(&mut dd, &mut first, &docs[..2], true),
            ["stored #1", "failed: f.jsonl:b: no words (no letters or digits)"]
        );
        drop(first);
        let before = dd.store().admitted(7).unwrap().map(|a| a.state);
        assert_eq!(before, Some(FileAdmission::Reading { done: 2, failed: 1 }));
        // Seen again: the first two only counted, the repeated text a document of its own.
        let mut again = FileAdmitting::start(Some(b"f.jsonl"), Via::Spool, spool(before));
        assert_eq!(admit(&mut dd, &mut again, &docs[..2], false), ["earlier", "earlier"]);
        assert_eq!(admit(&mut dd, &mut again, &docs[2..], true), ["stored #2", "stored #3"]);
        assert_eq!(again.end(&dd).unwrap(), (4, 1));
        let ended = dd.store().admitted(7).unwrap().map(|a| a.state);
        assert_eq!(ended, Some(FileAdmission::Ended { total: 4, failed: 1 }));
        let failures = dd.store().failures().unwrap();
        assert_eq!(failures.iter().map(|f| f.file.as_str()).collect::<Vec<_>>(), ["f.jsonl"]);
        // A batch run of a file of the same name finds each stored document by its key,
        // and records its own failure under the document's source.
        let mut batch = FileAdmitting::start(Some(b"f.jsonl"), Via::Ingest, Records::Batch { force: false });
        let got = admit(&mut dd, &mut batch, &docs, true);
        assert_eq!(got, ["before #1", "failed: f.jsonl:b: no words (no letters or digits)", "before #2", "before #3"]);
        assert_eq!(dd.store().doc_failures().unwrap()[0].0, "f.jsonl:b");
        let mut forced = FileAdmitting::start(Some(b"f.jsonl"), Via::Ingest, Records::Batch { force: true });
        assert_eq!(admit(&mut dd, &mut forced, &docs[..1], true), ["stored #4"]);
        // Documents without a file have no key: always stored.
        let mut loose = FileAdmitting::start(None, Via::Python, Records::Batch { force: false });
        assert_eq!(admit(&mut dd, &mut loose, &docs[..1], true), ["stored #5"]);
    }
}
