//! What a partition of the deployment (`docs/SCALE-OUT.md`, "Partitions")
//! knows of the documents other partitions own: their places in publication order
//! (from the documents stream, read in full), their texts (the latest kept, the others
//! read from it when an alignment or a revision needs one, or from their owner's store
//! once `cluster trim` dropped them: `Book::stored_text`), and, from every partition's
//! results stream applied in document order, their current results and every
//! document's copier edges. What it learnt is written to the partition's store now and
//! then (every 256 documents, before a checkpoint slot, at the close: `Store::write_book`),
//! where the store reads it: the book's memory holds only what came since (and the
//! latest places), and a restart goes on from where it was written.
//!
//! A partition waits only for the outcomes its document reads: a result of another
//! partition's document not applied yet is read when a search or an alignment asks for
//! it (with every outcome before it). Only a document published before one that
//! arrived earlier can take entries over and so revise results, its own partition's
//! included, and read copier edges; before analysing one of its documents, a
//! partition applies every outcome before it when any document from the first
//! outcome not applied on is such a one (revisions another partition's document made
//! of this partition's documents go to its store then: their owner stores them).

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use textorigin_core::engine::DocResult;
use textorigin_store::storage::datadir::{db_path, DataDir, DataDirError};
use textorigin_store::storage::store::partitions::PartitionStores;
use textorigin_store::storage::store::{BookState, BookWrite, Elsewhere, ElsewhereResult, Revised, Store};

use crate::log::{Interleaved, Log};
use crate::wire::{decode, partition_name, results_stream, Doc, Meta, Outcome, Revision, DOCS};
use crate::{ClusterError, Result};

/// A partition's book of the other partitions' documents ([`Elsewhere`]).
pub struct Book {
    log: Log,
    meta: Meta,
    partition: u32,
    state: Mutex<State>,
    /// The deployment's data directory, and its partitions' stores, where a text
    /// trimmed from the documents stream is read.
    root: PathBuf,
    stores: PartitionStores,
    /// The first document the documents stream held when the book last found one
    /// trimmed: those before it are read from their owners' stores at once.
    trimmed_below: std::sync::atomic::AtomicU64,
}

/// How a partition came by the outcomes it read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BookCounts {
    /// Its documents analysed after every outcome before them (a take-over possible).
    pub in_full: u64,
    /// Outcomes read when a document's analysis asked for another's result.
    pub on_demand: u64,
    /// The first document whose place it read from the log (1, unless it went on from
    /// the book its store kept).
    pub places_from: u64,
    /// Texts read from their owners' stores (trimmed from the documents stream).
    pub texts_from_stores: u64,
}

#[derive(Default)]
struct State {
    /// The places of documents `base + 1`, `base + 2`, ... (at most [`TIMES_KEPT`]; the
    /// earlier ones are in the store's book), of which those up to `written` are
    /// written there too.
    base: u64,
    times: VecDeque<i64>,
    written: u64,
    /// The latest place known, and the last document published before one that
    /// arrived before it (the last that can have taken entries over).
    latest: i64,
    back_dated: u64,
    /// The texts of the latest documents read, at most [`TEXT_BYTES`] of them.
    texts: HashMap<u64, Arc<str>>,
    kept: VecDeque<u64>,
    text_bytes: usize,
    /// The other partitions' documents' current results, and every document's copier
    /// edges (origin, copier), applied since the book was last written.
    results: HashMap<u64, DocResult>,
    copiers: Vec<(u64, u64)>,
    /// Every partition's results stream, read in document order from `applied + 1`.
    outcomes: Option<Interleaved>,
    applied: u64,
    /// The partition's document being analysed (0: none), which reads outcomes before it.
    analysing: u64,
    counts: BookCounts,
}

/// The places a book keeps in memory (8 bytes each), and how many documents it learns
/// of before it writes to the store (at one of its partition's documents).
const TIMES_KEPT: usize = 1 << 20;
const WRITE_EVERY: u64 = 256;

/// The bytes of text a book keeps (the latest documents: origins are mostly recent).
const TEXT_BYTES: usize = 64 << 20;

impl State {
    fn keep_text(&mut self, seq: u64, text: &str) {
        self.text_bytes += text.len();
        self.texts.insert(seq, Arc::from(text));
        self.kept.push_back(seq);
        while self.text_bytes > TEXT_BYTES {
            let Some(old) = self.kept.pop_front() else { break };
            self.text_bytes -= self.texts.remove(&old).map_or(0, |t| t.len());
        }
    }

    fn known(&self) -> u64 {
        self.base + self.times.len() as u64
    }

    /// Document `seq`'s current `result`: its copier edges, and the result kept when it
    /// is `theirs`, else handed back.
    fn result(&mut self, seq: u64, result: DocResult, theirs: bool) -> Option<DocResult> {
        for o in result.selected_origins.iter().map(|s| s.origin).filter(|&o| o != seq) {
            self.copiers.push((o, seq));
        }
        if !theirs {
            return Some(result);
        }
        self.results.insert(seq, result);
        None
    }
}

impl Book {
    /// Partition `partition`'s book of the deployment `meta` in the data directory
    /// `root`, empty.
    pub fn new(log: &Log, meta: &Meta, (partition, root): (u32, PathBuf)) -> Book {
        let state = State { counts: BookCounts { places_from: 1, ..BookCounts::default() }, ..State::default() };
        let stores =
            PartitionStores::new((0..meta.partitions).map(|q| db_path(&meta.partition_dir(&root, q))).collect());
        let trimmed_below = Default::default();
        Book { log: log.clone(), meta: meta.clone(), partition, state: Mutex::new(state), root, stores, trimmed_below }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn theirs(&self, seq: u64) -> bool {
        self.meta.owner(seq).0 != self.partition
    }

    /// Starts from the book the partition's store kept (none: from the first
    /// document), before any document is known.
    pub fn load(&self, kept: Option<BookState>) {
        let mut s = self.state();
        let Some(b) = kept else { return };
        (s.base, s.written, s.applied, s.latest, s.back_dated) = (b.known, b.known, b.applied, b.latest, b.back_dated);
        s.counts.places_from = b.known + 1;
    }

    /// Document `seq`, the next one, is `doc`: its place in publication order, and its
    /// text for a while. One the book knew when it was written is known.
    pub fn know(&self, seq: u64, doc: &Doc) -> Result<()> {
        let mut s = self.state();
        if seq <= s.known() {
            return Ok(());
        }
        if s.known() + 1 != seq {
            return Err(ClusterError::OutOfStep { what: "a partition's dates", want: s.known() + 1, got: seq });
        }
        let time = doc.time();
        if seq > 1 && time < s.latest {
            s.back_dated = seq;
        }
        s.latest = if seq == 1 { time } else { s.latest.max(time) };
        s.times.push_back(time);
        if self.theirs(seq) {
            s.keep_text(seq, &doc.text);
        }
        Ok(())
    }

    /// Before this partition's document `seq` (known) is analysed: when it or a
    /// document before it whose outcome is not applied yet was published before an
    /// earlier arrival (it may take entries over, and so revise results and read copier
    /// edges), applies every outcome up to the one before `seq`, waiting for those not
    /// there yet: the other partitions' results, the copier edges, and into `dd`'s store
    /// the revisions of this partition's documents that another partition's document
    /// made. Else its analysis reads the outcomes it needs when it asks for them.
    pub fn before(&self, seq: u64, dd: &mut DataDir) -> Result<()> {
        let mut s = self.state();
        s.analysing = seq;
        if s.back_dated > s.applied {
            self.read_to(&mut s, seq - 1, Some(dd))?;
            s.counts.in_full += 1;
        }
        if s.known() >= s.written + WRITE_EVERY {
            Self::write(&mut s, dd.store())?;
        }
        Ok(())
    }

    /// Writes what the book learnt since it was last written to the partition's store,
    /// with its state (every 256 documents at one of the partition's, and
    /// before a checkpoint slot and the close: a restart reads the log again from where
    /// it was written).
    pub fn write_to(&self, store: &Store) -> Result<()> {
        Self::write(&mut self.state(), store)
    }

    /// Before a checkpoint slot written after this partition's document `seq`: applies
    /// every outcome up to it (waiting for those not there yet) and writes the book, so
    /// that a restart reads no place or outcome before it from the log again: the
    /// position the partition says for `cluster trim` ([`Book::bound`]).
    pub fn settle(&self, seq: u64, dd: &mut DataDir) -> Result<()> {
        let mut s = self.state();
        self.read_to(&mut s, seq, Some(dd))?;
        Self::write(&mut s, dd.store())
    }

    /// The last document whose place and outcome the book wrote to the store: a
    /// restart reads the log after it.
    pub fn bound(&self) -> u64 {
        let s = self.state();
        s.written.min(s.applied)
    }

    /// Whether every other partition's store can be read here: its data directory is
    /// beside this one's and holds checkpoint slots of the store that partition said its
    /// checkpoints are of (not a store `cluster init` made on this machine for a
    /// partition that runs on another). Then a text trimmed from the documents stream
    /// is read from its owner's store (`Book::stored_text`, which opens it when one
    /// is needed), else `cluster trim` must keep the whole stream. False while another
    /// partition has said no position yet.
    pub fn reads_stores(&self) -> Result<bool> {
        for q in (0..self.meta.partitions).filter(|&q| q != self.partition) {
            let Some(said) = crate::deploy::checkpoint_position(&self.log, &partition_name(&self.meta, q))? else {
                return Ok(false);
            };
            let dir = self.meta.partition_dir(&self.root, q);
            let mut slots = (0..2).filter_map(|slot| textorigin_store::storage::checkpoint::read_meta(&dir, slot));
            if !(db_path(&dir).exists() && slots.any(|m| m.store == said.identity)) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The text of another partition's document `seq` that `cluster trim` dropped from
    /// the documents stream, from its owner's store: stored there before the owner said
    /// the position the trim went by, so a store opened since holds it
    /// ([`PartitionStores::text`] opens the one kept open again when it does not).
    fn stored_text(&self, seq: u64) -> Result<String> {
        let Some(text) = self.stores.text(seq).map_err(DataDirError::from)? else {
            let partition = self.meta.owner(seq).0;
            return Err(ClusterError::TextGone { seq, partition, path: self.stores.path(partition).to_path_buf() });
        };
        self.state().counts.texts_from_stores += 1;
        Ok(text)
    }

    fn write(s: &mut State, store: &Store) -> Result<()> {
        let state = BookState { known: s.known(), applied: s.applied, latest: s.latest, back_dated: s.back_dated };
        let w = BookWrite {
            from: s.written + 1,
            times: s.times.iter().skip((s.written - s.base) as usize).copied().collect(),
            results: s.results.drain().collect(),
            copiers: std::mem::take(&mut s.copiers),
            state,
        };
        store.write_book(&w).map_err(DataDirError::from)?;
        s.written = state.known;
        while s.times.len() > TIMES_KEPT {
            s.times.pop_front();
            s.base += 1;
        }
        Ok(())
    }

    /// What this partition's reads of outcomes came to so far.
    pub fn counts(&self) -> BookCounts {
        self.state().counts
    }

    /// Reads and applies the outcomes up to document `upto`. Without `dd` (read while
    /// a document's analysis asks), an outcome that revised results is out of step:
    /// [`Book::before`] applies those.
    fn read_to(&self, s: &mut State, upto: u64, mut dd: Option<&mut DataDir>) -> Result<()> {
        while s.applied < upto {
            if s.outcomes.is_none() {
                s.outcomes = Some(Interleaved::new(&self.log, &self.meta, results_stream, s.applied + 1)?);
            }
            let reader = s.outcomes.as_mut().expect("made above");
            let (m, bytes) = reader.read()?;
            let out: Outcome = decode(&bytes, "partition outcome")?;
            if out.seq != m {
                return Err(ClusterError::OutOfStep { what: "a results stream", want: m, got: out.seq });
            }
            s.result(m, out.result, self.theirs(m));
            let Some(dd) = dd.as_deref_mut() else {
                if !out.revised.is_empty() {
                    return Err(ClusterError::RevisedOnDemand { seq: m, analysing: s.analysing });
                }
                s.counts.on_demand += 1;
                s.applied = m;
                continue;
            };
            let (mut mine, mut others) = (Vec::new(), Vec::new());
            for Revision { seq, after, before } in out.revised {
                match s.result(seq, after, self.theirs(seq)) {
                    Some(after) if self.theirs(m) => mine.push(Revised { seq, after, before }),
                    _ => others.push(seq),
                }
            }
            // Each forgets what the caches keep of the documents it names.
            if !mine.is_empty() {
                dd.store().put_revisions(m, &mine).map_err(DataDirError::from)?;
            }
            dd.store().revised_elsewhere(others);
            s.applied = m;
        }
        Ok(())
    }

    /// Applies the outcomes up to `seq` (at most the one before the document being
    /// analysed) for a read of what they say.
    fn read_for(&self, seq: u64) -> ElsewhereResult<std::sync::MutexGuard<'_, State>> {
        let mut s = self.state();
        let upto = seq.min(s.analysing.saturating_sub(1));
        self.read_to(&mut s, upto, None)?;
        Ok(s)
    }
}

impl Elsewhere for Book {
    fn owns(&self, seq: u64) -> bool {
        !self.theirs(seq)
    }

    fn time(&self, seq: u64) -> ElsewhereResult<Option<i64>> {
        let s = self.state();
        Ok(seq.checked_sub(s.base + 1).and_then(|i| s.times.get(i as usize)).copied())
    }

    fn text(&self, seq: u64) -> ElsewhereResult<Option<String>> {
        if let Some(t) = self.state().texts.get(&seq) {
            return Ok(Some(t.to_string()));
        }
        use std::sync::atomic::Ordering::Relaxed;
        if seq < self.trimmed_below.load(Relaxed) {
            return Ok(Some(self.stored_text(seq)?));
        }
        if let Some(bytes) = self.log.get(DOCS, seq)? {
            return Ok(Some(Doc::decode(&bytes)?.text));
        }
        // Trimmed from the stream (a message not there yet is never asked for).
        let first = self.log.first_seq(DOCS)?;
        self.trimmed_below.fetch_max(first, Relaxed);
        Ok(if seq < first { Some(self.stored_text(seq)?) } else { None })
    }

    fn result(&self, seq: u64) -> ElsewhereResult<Option<DocResult>> {
        Ok(self.read_for(seq)?.results.get(&seq).cloned())
    }

    fn copiers_of(&self, origin: u64) -> ElsewhereResult<Vec<u64>> {
        let s = self.read_for(u64::MAX)?;
        Ok(s.copiers.iter().filter(|c| c.0 == origin).map(|c| c.1).collect())
    }
}
