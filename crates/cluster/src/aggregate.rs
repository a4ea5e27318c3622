//! The aggregator (`docs/SCALE-OUT.md`, "Per document"): a data directory like any
//! other — the inspector reads it, `export` writes it — whose table phases run on the
//! shard workers. For document `n` it takes the documents stream's message `n`, gathers
//! the S answers for it, runs estimation and sends the feedback (acknowledged later:
//! at the latest before a checkpoint slot or the close, so a stored result whose
//! feedback the log lacks is replayed by a restart), then does what `ingest` does after
//! the table: near-duplicates, quotations, alignment, the derived indexes, the store.
//!
//! Dates: the workers take entries over where they live and name the
//! origins taken in their answers; the aggregator decides what that revises (those
//! documents and their copiers, from its store), lists them with their shingles in the
//! cause's feedback, and re-analyses them from the workers' lookups (their lookups
//! streams), every one before the cause is stored (no revision budget or queue here).
//!
//! Restart: the data directory recovers as `serve`'s does, from its newest checkpoint
//! slot (written now and then, as `serve` writes them) or an empty table, replaying the
//! stored documents after it with their answers read again from the log; feedback
//! already in the log is not appended again.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use textorigin_core::config::Overrides;
use textorigin_core::engine::{Engine, Feedback, Prepared, Probe, When};
use textorigin_core::index::IndexAnswers;
use textorigin_core::shard::merge_hits;
use textorigin_core::table::{Hit, Table};
use textorigin_store::input::InputDoc;
use textorigin_store::intake::Policy;
use textorigin_store::storage::datadir::{site_of, Budget, DataDir, DataDirError, Part, Preparer};
use textorigin_store::storage::stage::{StageError, TableStage};
use textorigin_store::storage::store::{Admit, Via};
use textorigin_store::storage::table_file::Mapped;
use textorigin_store::telemetry::StageTimes;

use crate::book::{Book, BookCounts};
use crate::log::{Appends, Log, LogError, Reader};
use crate::searched::Searched;
use crate::wire::{
    decode, encode, feedback_stream, hits_stream, lookups_stream, partition_name, results_stream, subject, Answer, Doc,
    Lookups, Meta, Outcome, DOCS,
};
use crate::{read_meta, ClusterError, Result};

/// The table's phases on the shard workers, seen from the aggregator.
pub struct Remote {
    log: Log,
    meta: Meta,
    state: Arc<Mutex<State>>,
}

struct State {
    /// One reader per shard's answer stream, all at the same position (made at the
    /// first document asked for, and again when another one is).
    readers: Vec<Reader>,
    /// The last document whose feedback is sent to the log (acknowledged at the latest
    /// when the data directory flushes the stage: before a checkpoint or its close).
    published: u64,
    feedback: Appends,
    /// Of a partition of several, the last feedback sent, kept with its document in the
    /// store ([`TableStage::record`]): its restart appends it again if the log lacks it.
    record: Option<(u64, Vec<u8>)>,
    /// The origins the last document's shards took over (ascending, each once).
    taken: Vec<u64>,
    /// The last document whose answers were read: its shards' probes (taken by its
    /// probe) and their index answers merged (taken by its searches).
    read: u64,
    probes: Vec<Probe>,
    index: Option<IndexAnswers>,
    /// The threshold its shards selected it at, and the asks for a raise their probes
    /// made, summed.
    density: (u8, u64),
    /// The last feedback's revisions (its document, and each revised document with its
    /// count of selected shingles), and, once read, what their shingles found.
    request: Option<(u64, Vec<(u64, usize)>)>,
    found: Option<Vec<Vec<Option<Hit>>>>,
    /// One reader per shard's lookups stream, all at the same position (found by a
    /// search at the first revision after a start, then read in turn).
    lookups: Vec<Reader>,
    /// Seconds waiting for the shards' answers, and appending the feedback.
    answers_secs: f64,
    feedback_secs: f64,
}

/// What the aggregator did.
#[derive(Debug, Clone, Copy, Default)]
pub struct AggregatorSummary {
    /// The last document stored.
    pub last: u64,
    /// Where the time of the documents it stored went (its `table` stage is the two
    /// waits below).
    pub times: StageTimes,
    /// Seconds reading the documents, waiting for the shards' answers, and appending
    /// the feedback (waiting for the log's acknowledgement).
    pub docs_secs: f64,
    pub answers_secs: f64,
    pub feedback_secs: f64,
    /// Of a partition of several, how it came by the other partitions' outcomes.
    pub book: Option<BookCounts>,
}

impl Remote {
    /// The stage of partition `partition` of the deployment `meta`.
    pub fn new(log: &Log, meta: &Meta, partition: u32) -> Result<Remote> {
        let stream = feedback_stream(partition);
        let published = meta.owned(partition, log.last_seq(&stream)?);
        let feedback = log.appends(&stream, &subject(&stream));
        let state = State {
            readers: Vec::new(),
            published,
            feedback,
            record: None,
            taken: Vec::new(),
            read: 0,
            probes: Vec::new(),
            index: None,
            density: (0, 0),
            request: None,
            found: None,
            lookups: Vec::new(),
            answers_secs: 0.0,
            feedback_secs: 0.0,
        };
        Ok(Remote { log: log.clone(), meta: meta.clone(), state: Arc::new(Mutex::new(state)) })
    }

    /// What the shards' table parts found for document `seq`'s `n` selected shingles.
    fn answers(&self, seq: u64, n: usize) -> Result<Vec<Option<Hit>>> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        self.read(&mut state, seq)?;
        Ok(merge_hits(n, &std::mem::take(&mut state.probes))?)
    }

    /// What the shards' index parts answer to document `seq`'s searches, merged.
    fn index_answers(&self, seq: u64) -> Result<IndexAnswers> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        self.read(&mut state, seq)?;
        state.index.take().ok_or(ClusterError::OutOfStep {
            what: "a document's index answers, taken twice",
            want: seq,
            got: seq,
        })
    }

    /// Reads the shards' answers for document `seq`, unless they are read already.
    fn read(&self, state: &mut State, seq: u64) -> Result<()> {
        if state.read == seq {
            return Ok(());
        }
        let started = Instant::now();
        if state.readers.first().is_none_or(|r| r.position() > seq) {
            let (p, _) = self.meta.owner(seq);
            state.readers = (0..self.meta.shards)
                .map(|s| {
                    let meta = self.meta.clone();
                    let after = move |n| meta.owned(p, meta.owner(n).1 + 1);
                    self.log.sparse_reader(&hits_stream(s), after, seq)
                })
                .collect::<std::result::Result<_, _>>()?;
        }
        let mut probes = Vec::with_capacity(state.readers.len());
        let mut index = Vec::with_capacity(state.readers.len());
        let State { readers, taken, density, .. } = &mut *state;
        taken.clear();
        for (shard, r) in readers.iter_mut().enumerate() {
            // Of this partition's documents only, in turn.
            let (n, bytes) = r.read()?;
            if n != seq {
                return Err(ClusterError::OutOfStep { what: "a shard's answers", want: seq, got: n });
            }
            let a: Answer = decode(&bytes, "shard answer")?;
            if shard == 0 {
                *density = (a.density, 0);
            } else if a.density != density.0 {
                let (shard, want, got) = (shard as u32, density.0, a.density);
                return Err(ClusterError::DensityDiffers { seq, shard, want, got });
            }
            density.1 += a.asks;
            taken.extend(&a.taken);
            probes.push(Probe { items: a.items, hits: a.hits, ..Probe::default() });
            index.push(a.index);
        }
        taken.sort_unstable();
        taken.dedup();
        state.read = seq;
        state.probes = probes;
        state.index = Some(IndexAnswers::merge(index));
        state.answers_secs += started.elapsed().as_secs_f64();
        Ok(())
    }

    fn publish(&self, fb: &Feedback) -> Result<()> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.request =
            (!fb.revise.is_empty()).then(|| (fb.seq, fb.revise.iter().map(|(s, f)| (*s, f.len())).collect()));
        state.found = None;
        let bytes = encode(fb);
        if self.meta.partitions > 1 {
            state.record = Some((fb.seq, bytes.clone()));
        }
        // A fault test's log that loses the append (as a server killed before it
        // acknowledged it would): the document is stored all the same.
        let lost = textorigin_store::failpoint::hit("feedback.lost").is_err();
        if fb.seq > state.published && !lost {
            let started = Instant::now();
            state.feedback.push(self.meta.owner(fb.seq).1, bytes)?;
            state.published = fb.seq;
            state.feedback_secs += started.elapsed().as_secs_f64();
        }
        Ok(())
    }

    /// Appends again the feedback of this partition's stored document `seq` (the next
    /// one of its feedback stream), `record` as its store kept it: a restart's, for one
    /// the log lost before acknowledging it.
    fn resend(&self, seq: u64, record: Vec<u8>) -> Result<()> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.feedback.push(self.meta.owner(seq).1, record)?;
        state.published = seq;
        Ok(())
    }

    /// What the shingles of document `seq`, revised by the last feedback's document,
    /// find in the workers' tables: read from every shard's lookups stream the first
    /// time one is asked for.
    fn revision_lookups(&self, seq: u64) -> Result<Vec<Option<Hit>>> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let Some((cause, docs)) = state.request.clone() else {
            return Err(ClusterError::OutOfStep { what: "a revision without a cause", want: 0, got: seq });
        };
        if state.found.is_none() {
            let started = Instant::now();
            // The workers look up after reading the feedback: it must be in the log.
            state.feedback.flush()?;
            let State { lookups, .. } = &mut *state;
            // The readers are where this partition's last revision left them: the
            // other partitions' revisions after it may be gone (a trim), or come first.
            let mut per_shard = match read_lookups(lookups) {
                Err(ClusterError::Log(LogError::Trimmed { .. })) => Vec::new(),
                read => read?,
            };
            if per_shard.first().is_none_or(|l| l.cause != cause) {
                // The first revision after a start, or one after others': find its message.
                let k = crate::deploy::lookups_position(&self.log, cause)?;
                *lookups = (0..self.meta.shards)
                    .map(|s| self.log.reader(&lookups_stream(s), k))
                    .collect::<std::result::Result<_, _>>()?;
                per_shard = read_lookups(lookups)?;
            }
            if per_shard.iter().any(|l| l.cause != cause || l.found.len() != docs.len()) {
                let got = per_shard.iter().map(|l| l.cause).find(|&c| c != cause).unwrap_or(cause);
                return Err(ClusterError::OutOfStep { what: "a shard's lookups", want: cause, got });
            }
            let per_shard: Vec<Vec<Answer>> = per_shard.into_iter().map(|l| l.found).collect();
            let mut found = Vec::with_capacity(docs.len());
            for (i, &(_, n)) in docs.iter().enumerate() {
                let probes: Vec<Probe> = per_shard
                    .iter()
                    .map(|f| Probe { items: f[i].items.clone(), hits: f[i].hits.clone(), ..Probe::default() })
                    .collect();
                found.push(merge_hits(n, &probes)?);
            }
            state.found = Some(found);
            state.answers_secs += started.elapsed().as_secs_f64();
        }
        let i = docs.iter().position(|&(s, _)| s == seq);
        let found = state.found.as_ref().expect("read above");
        i.map(|i| found[i].clone()).ok_or(ClusterError::OutOfStep {
            what: "a revision the feedback does not list",
            want: cause,
            got: seq,
        })
    }
}

/// The next message of every shard's lookups reader (none before the readers are made).
fn read_lookups(readers: &mut [Reader]) -> Result<Vec<Lookups>> {
    readers.iter_mut().map(|r| Ok(decode(&r.read()?.1, "shard lookups")?)).collect()
}

impl TableStage for Remote {
    fn density(&mut self, _table: &Table<Mapped>, seq: u64) -> std::result::Result<(u8, Option<u64>), StageError> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        self.read(&mut state, seq)?;
        Ok((state.density.0, Some(state.density.1)))
    }

    fn probe(
        &mut self,
        _engine: &Engine,
        doc: &Prepared,
        _table: &mut Table<Mapped>,
        seq: u64,
        // The shard workers have no dates: a sharded deployment takes nothing over
        // (docs/SCALE-OUT.md); estimation and alignment still order by date.
        _when: When<'_>,
    ) -> std::result::Result<Vec<Option<Hit>>, StageError> {
        Ok(self.answers(seq, doc.selected())?)
    }

    fn taken(&self) -> Vec<u64> {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).taken.clone()
    }

    fn elsewhere(&self) -> bool {
        true
    }

    fn index_answers(&mut self, seq: u64) -> std::result::Result<Option<IndexAnswers>, StageError> {
        Ok(Some(Remote::index_answers(self, seq)?))
    }

    fn lookups(
        &mut self,
        doc: &Prepared,
        _table: &Table<Mapped>,
        seq: u64,
    ) -> std::result::Result<Vec<Option<Hit>>, StageError> {
        let found = self.revision_lookups(seq)?;
        if found.len() != doc.selected() {
            return Err(ClusterError::OutOfStep { what: "a revision's lookups", want: seq, got: 0 }.into());
        }
        Ok(found)
    }

    fn score(
        &mut self,
        engine: &Engine,
        table: &mut Table<Mapped>,
        feedback: &Feedback,
    ) -> std::result::Result<(), StageError> {
        self.publish(feedback)?;
        // The aggregator's own table holds no buckets: only its document counters move.
        engine.score(table, &Probe::default(), feedback);
        Ok(())
    }

    fn record(&mut self, seq: u64) -> Option<Vec<u8>> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.record.take().filter(|(s, _)| *s == seq).map(|(_, bytes)| bytes)
    }

    fn flush(&mut self) -> std::result::Result<(), StageError> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let started = Instant::now();
        state.feedback.flush()?;
        state.feedback_secs += started.elapsed().as_secs_f64();
        Ok(())
    }
}

/// Runs partition `partition` of the deployment in the log (the aggregator, when it is
/// the only one) into its data directory in `dir` (made by `cluster init`: `dir`
/// itself, or `dir/p<partition>` of several) until document `until` is handled
/// (forever without one), writing a checkpoint slot (as `serve` does) after the first
/// of its documents `every` after the last.
pub fn run(
    log: &Log,
    dir: &Path,
    partition: u32,
    until: Option<u64>,
    every: Duration,
    mut progress: impl FnMut(u64),
) -> Result<AggregatorSummary> {
    let mut p = Partition::open(log, dir, partition)?;
    let mut last = p.dd.store().next_seq().map_err(DataDirError::from)? - 1;
    let mut docs = log.reader(DOCS, last + 1)?;
    let mut checkpointed = Instant::now();
    let mut docs_secs = 0.0;
    while until.is_none_or(|u| last < u) {
        let started = Instant::now();
        let (seq, bytes) = docs.read()?;
        docs_secs += started.elapsed().as_secs_f64();
        let stored = p.apply(seq, Doc::decode(&bytes)?)?;
        last = seq;
        if !stored {
            continue;
        }
        progress(seq);
        // A partition's slots are written right after one of its documents: a restart
        // begins there (`rebuild`).
        if checkpointed.elapsed() >= every {
            checkpointed = Instant::now();
            p.checkpoint(seq)?;
        }
    }
    p.close(last, docs_secs)
}

/// One partition at work (the aggregator, when it is the only one): its data directory
/// with the shard workers as its table stage, and, of several, its book of the other
/// partitions' documents and the outcomes it appends for them.
struct Partition<'a> {
    log: &'a Log,
    meta: Meta,
    partition: u32,
    /// Its data directory.
    dir: PathBuf,
    dd: DataDir,
    preparer: Preparer,
    book: Option<Arc<Book>>,
    /// The stage's state, for what it waited.
    waits: Arc<Mutex<State>>,
    outcomes: Arc<Mutex<Appends>>,
}

impl<'a> Partition<'a> {
    /// Opens partition `partition` of the deployment in `log`, whose results are in
    /// `root`: a partition of several rebuilds its book and table first ([`rebuild`]),
    /// the data directory recovers from the log and is opened, checked against the
    /// deployment's configuration and searches, and given the deployment's intake policy.
    fn open(log: &'a Log, root: &Path, partition: u32) -> Result<Partition<'a>> {
        let meta = read_meta(log)?;
        if partition >= meta.partitions {
            return Err(ClusterError::NoPartition { partition, partitions: meta.partitions });
        }
        let dir = meta.partition_dir(root, partition);
        let mut stage = Remote::new(log, &meta, partition)?;
        let waits = stage.state.clone();
        let results = results_stream(partition);
        let outcomes = Arc::new(Mutex::new(log.appends(&results, &subject(&results))));
        // Of several partitions, each knows the others' documents through its book.
        let book = (meta.partitions > 1).then(|| Arc::new(Book::new(log, &meta, (partition, root.to_path_buf()))));
        if let Some(b) = &book {
            let mut outcomes = outcomes.lock().unwrap_or_else(|p| p.into_inner());
            rebuild(log, &meta, (partition, &dir), (&stage, b), &mut outcomes)?;
        }
        if let Some(r) = DataDir::recover_with(&dir, &mut stage, |_, _| std::ops::ControlFlow::Continue(()))? {
            tracing::info!(
                from = r.from_checkpoint,
                replayed = r.replayed,
                mismatches = r.mismatches,
                "recovered the data directory from the log"
            );
        }
        let policy = Policy {
            // The log holds what submission admitted: a document is never refused here
            // (its id is taken), whatever a later build thinks of its date.
            undated_bad_dates: true,
            // Its dates take entries over (as the workers decide), and every revision is
            // made before its cause is stored: the workers look them up at that point only.
            take_over: vec![Via::Cluster],
            revision_budget: Budget::UNLIMITED,
        };
        let mut dd = DataDir::open_write_aggregator(&dir, &Overrides::default(), policy)?;
        if *dd.config() != meta.config {
            return Err(ClusterError::MetaDiffers {
                stored: meta.config.canonical(),
                requested: dd.config().canonical(),
            });
        }
        if !Searched::new(&meta.config).searches_with(dd.neardup_config(), dd.quote_config()) {
            return Err(ClusterError::MetaDiffers {
                stored: "the default near-duplicate and quotation parameters (the shard workers search with them)"
                    .into(),
                requested: format!("{:?} {:?}", dd.neardup_config(), dd.quote_config()),
            });
        }
        dd.set_stage(Box::new(stage));
        if let Some(b) = &book {
            dd.set_elsewhere(b.clone());
        }
        let preparer = dd.preparer();
        Ok(Partition { log, meta, partition, dir, dd, preparer, book, waits, outcomes })
    }

    /// Takes document `seq` of the log: stores it when it is this partition's (then
    /// true), and, of several, tells the book about it (another partition's: its words
    /// counted) and appends its outcome for the others.
    fn apply(&mut self, seq: u64, doc: Doc) -> Result<bool> {
        let dd = &mut self.dd;
        if let Some(b) = &self.book {
            b.know(seq, &doc)?;
            if self.meta.owner(seq).0 != self.partition {
                let site =
                    site_of(dd.config(), doc.url.as_deref(), doc.meta.as_deref(), &doc.source, Some(Via::Cluster));
                dd.count_theirs(seq, (&doc.name, &doc.source), &doc.text, site)?;
                return Ok(false);
            }
            // What the documents before it came to in the other partitions, as far as
            // its analysis needs them now.
            b.before(seq, dd)?;
        }
        let arrived_ms = doc.arrived_ms;
        let input = InputDoc {
            name: doc.name,
            source: doc.source,
            text: doc.text,
            url: doc.url,
            published_at: doc.published_at,
            warnings: Vec::new(),
            message_id: None,
            in_reply_to: Vec::new(),
            meta: doc.meta,
            id_number: doc.id_number,
            date_field: doc.date_field,
            key_name: None, // the key was made at submission
        };
        let started = Instant::now();
        let prepared = self.preparer.prepare(&input.text);
        dd.add_prepare_time(started.elapsed().as_secs_f64());
        let admit =
            Admit { via: Some(Via::Cluster), arrival_ms: Some(arrived_ms), seq: Some(seq), ..Default::default() };
        let (stored, result) = dd.ingest_prepared(&input, prepared, admit)?;
        if stored.seq != seq {
            return Err(ClusterError::OutOfStep { what: "the aggregator's store", want: seq, got: stored.seq });
        }
        if self.book.is_some() {
            textorigin_store::failpoint::hit("partition.after-store")
                .map_err(|source| ClusterError::Io { what: "a partition's document stored", source })?;
            let made = dd.take_for_others();
            let outcome = encode(&Outcome::new(seq, result, made.revised));
            self.outcomes.lock().unwrap_or_else(|p| p.into_inner()).push(self.meta.owner(seq).1, outcome)?;
        }
        Ok(true)
    }

    /// Writes a checkpoint slot right after its document `seq` (the book first, as far
    /// as that document: a restart reads no place or outcome before it from the log
    /// again) and says the position in the log.
    fn checkpoint(&mut self, seq: u64) -> Result<()> {
        if let Some(b) = &self.book {
            b.settle(seq, &mut self.dd)?;
        }
        match self.dd.checkpoint() {
            // A slot that cannot be written (a full disk) costs recovery time only.
            Err(DataDirError::Checkpoint(e)) => {
                tracing::warn!(error = %e, seq, "checkpoint failed; the previous one stays valid")
            }
            r => drop(r?),
        }
        let name = partition_name(&self.meta, self.partition);
        let id = self.dd.store().id().map_err(DataDirError::from)?;
        let (bound, whole_log) = match &self.book {
            Some(b) => (b.bound(), !b.reads_stores()?),
            None => (u64::MAX, false),
        };
        crate::deploy::publish_position(self.log, &name, &self.dir, id, bound, whole_log)
    }

    /// Ends the run: what others may wait for sent, the book kept in the store, the
    /// data directory closed; what it did, `last` the last document handled.
    fn close(self, last: u64, docs_secs: f64) -> Result<AggregatorSummary> {
        self.log.flush_all()?;
        if let Some(b) = &self.book {
            b.write_to(self.dd.store())?;
        }
        let times = self.dd.stage_times();
        self.dd.close()?;
        let waits = self.waits.lock().unwrap_or_else(|p| p.into_inner());
        Ok(AggregatorSummary {
            last,
            times,
            docs_secs,
            answers_secs: waits.answers_secs,
            feedback_secs: waits.feedback_secs,
            book: self.book.map(|b| b.counts()),
        })
    }
}

/// How a partition of several restarts: `book` goes on from what its store kept of it,
/// and when it has stored documents, its table (derived indexes, document counters) is
/// made again as it was after the last of them, from its newest checkpoint slot and the
/// documents after it (the others' texts read from the log, its own feedback from the
/// records its store kept with them; the places the book did not know told to it); the
/// feedback and the outcomes of its stored documents that the log lacks (killed before
/// the log acknowledged them, or between storing and appending) are appended from the
/// store, in order. The book applies the outcomes from the first it had not applied.
fn rebuild(
    log: &Log,
    meta: &Meta,
    (partition, dir): (u32, &Path),
    (stage, book): (&Remote, &Book),
    outcomes: &mut Appends,
) -> Result<()> {
    if !textorigin_store::storage::datadir::db_path(dir).join("CURRENT").exists() {
        return Ok(());
    }
    let mut docs: Option<Reader> = None;
    let last = DataDir::rebuild_partition(
        dir,
        |kept| book.load(kept),
        |seq, part| {
            let reader = match &mut docs {
                Some(r) => r,
                None => docs.insert(log.reader(DOCS, seq)?),
            };
            let (n, bytes) = reader.read()?;
            if n != seq {
                return Err(ClusterError::OutOfStep { what: "a partition's restart", want: seq, got: n }.into());
            }
            let doc = Doc::decode(&bytes)?;
            book.know(seq, &doc)?;
            Ok(match part {
                Part::Before => (None, None),
                Part::Ours(record) => (None, Some(decode(&record, "feedback")?)),
                Part::Theirs => (Some(doc.text), None),
            })
        },
    )?;
    if last == 0 {
        return Ok(());
    }
    let dd = DataDir::open_read(dir)?;
    let store = dd.store();
    for k in log.last_seq(&feedback_stream(partition))? + 1..=meta.owner(last).1 {
        let seq = meta.owned(partition, k);
        stage.resend(
            seq,
            store.stage_record(seq).map_err(DataDirError::from)?.ok_or(DataDirError::MissingRecord(seq))?,
        )?;
    }
    let have = log.last_seq(&results_stream(partition))?;
    for k in have + 1..=meta.owner(last).1 {
        let seq = meta.owned(partition, k);
        let result = store.first_result(seq).map_err(DataDirError::from)?.ok_or(DataDirError::MissingText(seq))?;
        let made = store.revisions_made_by(seq).map_err(DataDirError::from)?;
        outcomes.push(k, encode(&Outcome::new(seq, result, made)))?;
    }
    Ok(outcomes.flush()?)
}
