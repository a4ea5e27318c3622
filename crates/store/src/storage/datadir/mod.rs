//! A data directory: the table file and the RocksDB store, kept consistent.
//!
//! Layout: `DIR/table` (the fixed-size shingle table) and `DIR/db/` (RocksDB). The
//! store remembers the configuration; the table header carries its canonical text.
//!
//! Invariant: after a clean close, the table's last applied sequence number equals the
//! store's last document, and the table holds exactly the effect of the stored
//! documents applied in sequence order. A writer opens the table "in use"; a table left
//! in use (a crash) or out of step with the store is refused until `rebuild` replays
//! the stored documents into a fresh table.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::input::InputDoc;
use crate::intake::{self, Policy};
use crate::storage::recompute::Recomputer;
use crate::storage::search;
use crate::storage::stage::TableStage;
use crate::storage::store::StoreError;
use crate::storage::store::{Admit, DocMeta, DocumentWrite, Quotation, Store, Via};
use crate::storage::table_file::TableFile;
use crate::telemetry::{Latency, StageTimes};
pub use templates::site_of;
use textorigin_core::config::Config;
use textorigin_core::engine::{by_arrival, DocResult, Engine};
use textorigin_core::index::{IndexShape, Indexes};
use textorigin_core::neardup::{NearDup, NearDupConfig};
use textorigin_core::quote::QuoteConfig;

mod analysis;
pub mod backup;
mod error;
mod names;
mod open;
#[cfg(test)]
mod order_tests;
mod partition;
#[cfg(test)]
mod partition_tests;
mod rebuild;
mod repair;
mod settle;
#[cfg(test)]
mod template_tests;
mod templates;
#[cfg(test)]
mod tests;

use analysis::{align, analyse, lap, replay, reproduces, revise, revise_one};
pub use analysis::{sketch_and_sentences, Prepared, Preparer, Searches};
use open::{refuse_aggregator, table_params};
use rebuild::restore_table;

pub use crate::intake::{Budget, DocError, DEFAULT_REVISION_BUDGET, DEFAULT_TAKE_OVER};
pub use error::DataDirError;
pub use partition::{partition_path, ForOthers, Part};
pub use rebuild::{RebuildOptions, Rebuilt};
pub use repair::REPAIR_LOSSES;

/// Where a document admitted now stands ([`DataDir::place`]).
struct Placed {
    seq: u64,
    /// Its place in publication order.
    time: i64,
    /// It keeps arrival order, its date kept (its way in may not take origins over).
    by_arrival: bool,
    arrival_ms: u64,
}

/// What a recovery did ([`DataDir::recover`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recovery {
    /// The sequence number of the checkpoint it started from (0: an empty table).
    pub from_checkpoint: u64,
    /// Documents replayed after it.
    pub replayed: u64,
    /// Replayed results that differed from the stored ones (a determinism bug).
    pub mismatches: u64,
}

/// What [`DataDir::query`] finds for a document: its result, its earlier
/// near-duplicates and its quotations (None when the feature is off).
#[derive(Debug, Clone)]
pub struct QueryResult {
    /// Whether the data directory finds origins (`Config::origins`).
    pub origins: bool,
    pub result: DocResult,
    pub near: Option<Vec<NearDup>>,
    pub quotes: Option<Vec<Quotation>>,
}

/// An open data directory.
pub struct DataDir {
    dir: PathBuf,
    /// Shared: the daemon hands it to its HTTP readers (RocksDB reads are thread-safe).
    store: Arc<Store>,
    table: TableFile,
    engine: Engine,
    /// The near-duplicate and quotation configurations, with what computes an earlier
    /// document's sketch and sentences again by them.
    recompute: Recomputer,
    /// Where the derived indexes lie in the table file's index region.
    shape: IndexShape,
    preparer: Preparer,
    writable: bool,
    /// A store write (or read) failed after the table had applied the document: the
    /// table is ahead of the store, so nothing more may be applied until it is recovered.
    poisoned: bool,
    /// Where the time of the applied documents went.
    times: StageTimes,
    /// Quotation index entries within the radius the per-probe cap left out.
    quote_capped: u64,
    /// Per-document apply latency of the documents applied since opening.
    latency: Latency,
    /// How documents are taken in (dates, take-overs, the revision budget).
    policy: Policy,
    /// The revision queue may hold documents (false once a drain emptied it; set when
    /// a document queued some, and at open).
    queue_waiting: bool,
    /// The arrival time of the newest stored document: the next one's is not earlier,
    /// so that undated documents, which take their arrival time for their publication
    /// time, stay in arrival order whatever the clock does.
    last_arrival_ms: u64,
    /// Where phases 1 and 3 of the engine run (this table, or a sharded deployment's).
    stage: Box<dyn TableStage>,
    /// What the last document stored gives the other partitions.
    last: ForOthers,
}

type Result<T> = std::result::Result<T, DataDirError>;

fn table_path(dir: &Path) -> PathBuf {
    dir.join("table")
}

/// The RocksDB store of the data directory `dir`.
pub fn db_path(dir: &Path) -> PathBuf {
    dir.join("db")
}

/// Whether no process holds the store lock of the data directory `dir` (its writer is
/// gone, killed or never started; true where the lock file is missing, as in a copy
/// that left it out: RocksDB makes it at the next open); false when that cannot be told
/// ([`lock_holder`]).
pub fn writer_gone(dir: &Path) -> bool {
    let lock = db_path(dir).join("LOCK");
    !lock.exists() || matches!(lock_holder(&lock), Some(None))
}

/// The process holding a POSIX lock on `path` (RocksDB locks its `LOCK` file with
/// `fcntl`), as the kernel lists it in `/proc/locks`: None inside when nobody does,
/// None outside when that cannot be told (no `/proc`). The file itself is never
/// opened: closing any descriptor of a file drops the POSIX locks this process holds
/// on it.
pub fn lock_holder(path: &Path) -> Option<Option<u32>> {
    use std::os::unix::fs::MetadataExt;
    let ino = std::fs::metadata(path).ok()?.ino();
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    // "1: POSIX  ADVISORY  WRITE 8626 fe:01:1234567 0 EOF" (a waiter has "->" after "1:").
    Some(locks.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().filter(|f| *f != "->").collect();
        let on_file = f.get(5)?.rsplit(':').next()?.parse::<u64>().ok()? == ino;
        (on_file && f.get(1) == Some(&"POSIX")).then(|| f.get(4)?.parse().ok()).flatten()
    }))
}

/// About what a checkpoint slot of the table file `table` needs free: what the file
/// holds (its blocks, holes aside).
pub fn checkpoint_needs(table: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(table).map_or(0, |m| m.blocks() * 512)
}

impl DataDir {
    /// The data directory's path.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// When the data directory's file system has less room than a checkpoint slot
    /// takes (about what the table file holds: its blocks, holes aside): the bytes free
    /// and those needed.
    pub fn short_of_checkpoint_space(&self) -> Option<(u64, u64)> {
        let needs = checkpoint_needs(&table_path(&self.dir));
        let free = crate::sys::free_bytes(&self.dir).ok()?;
        (free < needs).then_some((free, needs))
    }

    /// The store (documents, texts, results).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The store, to share with readers in other threads (the daemon's HTTP inspector).
    pub fn shared_store(&self) -> Arc<Store> {
        Arc::clone(&self.store)
    }

    /// The table file.
    pub fn table(&self) -> &TableFile {
        &self.table
    }

    /// Writes the table's counters into its header, for live readers (`stats`).
    pub fn publish_counters(&mut self) -> Result<()> {
        Ok(self.table.publish_counters()?)
    }

    /// The near-duplicate parameters this data directory was made with.
    pub fn neardup_config(&self) -> &NearDupConfig {
        self.recompute.neardup()
    }

    /// The quotation parameters this data directory was made with.
    pub fn quote_config(&self) -> &QuoteConfig {
        self.recompute.quote()
    }

    /// What computes a stored document's sentences and sketch again, with this data
    /// directory's terms and parameters.
    pub fn recomputer(&self) -> &Recomputer {
        &self.recompute
    }

    /// The derived indexes in the table file.
    pub fn indexes(&self) -> Indexes<&[u8]> {
        Indexes::over(self.table.index_region(), self.shape)
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        self.engine.config()
    }

    /// Applies and stores one document; returns its result. A token-less document
    /// changes nothing.
    pub fn ingest(&mut self, doc: &InputDoc) -> Result<(DocMeta, DocResult)> {
        self.ingest_admitted(doc, Admit::default())
    }

    /// [`DataDir::ingest`] recording, in the document's batch, how far its spool file is
    /// admitted and the document's admission key.
    pub fn ingest_admitted(&mut self, doc: &InputDoc, admit: Admit) -> Result<(DocMeta, DocResult)> {
        let t = Instant::now();
        let prepared = self.preparer.prepare(&doc.text);
        self.times.prepare += t.elapsed().as_secs_f64();
        self.ingest_prepared(doc, prepared, admit)
    }

    /// Runs the table's phases with `stage` from now on (a sharded deployment's
    /// aggregator; [`Local`](crate::storage::stage::Local) by default).
    pub fn set_stage(&mut self, stage: Box<dyn TableStage>) {
        self.stage = stage;
    }

    /// Writes a checkpoint slot of the table at its last applied document, the store's
    /// log fsynced first (`docs/table-format.md`, "Checkpoints"). A failed fsync is a
    /// [`DataDirError::Store`]; a slot that cannot be written, a
    /// [`DataDirError::Checkpoint`] (the previous slot stays valid).
    pub fn checkpoint(&mut self) -> Result<crate::storage::checkpoint::SlotMeta> {
        self.stage.flush().map_err(DataDirError::Stage)?;
        self.store.sync()?;
        let seq = self.table.stats().last_seq;
        let store = self.store.id()?;
        Ok(crate::storage::checkpoint::write(&self.dir, self.table.image()?, seq, store)?)
    }

    /// Whether the newest valid checkpoint slot holds this table as it is (this store's,
    /// at the table's last document).
    pub fn checkpointed(&self) -> bool {
        let last = self.table.stats().last_seq;
        let id = self.store.id().ok();
        crate::storage::checkpoint::newest_valid(&self.dir).is_some_and(|(_, m)| Some(m.store) == id && m.seq == last)
    }

    /// A [`Preparer`] for this data directory's configuration (for another thread),
    /// which leaves a likely exact copy's sketch and sentences to its analysis.
    pub fn preparer(&self) -> Preparer {
        self.preparer.clone()
    }

    /// [`DataDir::ingest_admitted`] for a document prepared by a [`Preparer`] of this
    /// data directory.
    pub fn ingest_prepared(
        &mut self,
        doc: &InputDoc,
        prepared: Prepared,
        admit: Admit,
    ) -> Result<(DocMeta, DocResult)> {
        debug_assert!(self.writable);
        if self.poisoned {
            return Err(DataDirError::Poisoned);
        }
        let text_hash = prepared.text_hash();
        // Later documents align against this one's tokens, most of them soon.
        let tokens = self.engine.config().align.then(|| prepared.token_fps());
        let placed = self.place(doc, !prepared.is_empty(), &admit)?;
        let (seq, time) = (placed.seq, placed.time);
        let (start, before) = (Instant::now(), self.times);
        let cfgs = (&self.recompute, self.shape);
        let site = site_of(self.engine.config(), doc.url.as_deref(), doc.meta.as_deref(), &doc.source, admit.via);
        let analysed = analyse(
            &self.store,
            &mut self.engine,
            &mut self.table,
            &mut *self.stage,
            cfgs,
            (seq, time, site, &doc.text),
            prepared,
            &mut self.times,
        );
        // Any failure may come after the table applied the document, which the store
        // then does not hold: the table is recovered before it takes another.
        let (result, nd, q, templates, exact) = analysed.inspect_err(|_| self.poisoned = true)?;
        // A late original revises the earlier documents whose passages it now owns.
        // Within the revision budget; the rest waits in the revision queue.
        let taken = self.stage.taken();
        let mut budget = self.policy.revision_budget;
        let this = (seq, time, doc.text.as_str(), &result);
        let mut revised =
            revise(&self.store, &mut self.engine, (&self.table, &mut *self.stage), this, &taken, &mut budget)
                .inspect_err(|_| self.poisoned = true)?;
        self.keep_for_others(&mut revised);
        self.quote_capped += q.as_ref().map_or(0, |q| q.capped);
        let mut t = Instant::now();
        let meta = self.doc_meta(doc, &placed, text_hash, result.tokens, admit.via);
        let meta = meta.inspect_err(|_| self.poisoned = true)?;
        let record = self.stage.record(seq);
        let write = DocumentWrite {
            meta: &meta,
            text: &doc.text,
            result: &result,
            nd: nd.as_ref(),
            q: q.as_ref(),
            revised: &revised,
            stage: record.as_deref(),
            templates: Some(&templates),
            exact,
        };
        let written = crate::failpoint::hit("store.write")
            .map_err(|e| StoreError::Io { path: self.store.path().to_path_buf(), source: e })
            .and_then(|()| self.store.put_admitted_document(&write, admit));
        self.times.store += lap(&mut t);
        if let Err(source) = written {
            self.poisoned = true;
            return Err(DataDirError::StoreWrite { doc: doc.source.clone(), seq, source });
        }
        if let Some(tokens) = tokens {
            self.store.note_tokens(seq, tokens);
        }
        self.last_arrival_ms = placed.arrival_ms;
        self.latency.add(start.elapsed().as_secs_f64(), &before, &self.times, meta.text_bytes);
        self.queue_waiting |= !revised.queued.is_empty();
        self.drain_left(budget);
        Ok((meta, result))
    }

    /// A document's metadata as it is stored: where it stands (`placed`), its stored
    /// name, its text's hash and `tokens`, the way it came in.
    fn doc_meta(
        &self,
        doc: &InputDoc,
        placed: &Placed,
        text_hash: u128,
        tokens: u32,
        via: Option<Via>,
    ) -> Result<DocMeta> {
        Ok(DocMeta {
            seq: placed.seq,
            name: names::stored_name(&self.store, doc)?,
            source: doc.source.clone(),
            url: doc.url.clone(),
            published_at: doc.published_at.clone(),
            text_bytes: doc.text.len() as u64,
            tokens,
            content_hash: format!("{text_hash:032x}"),
            ingested_at_ms: placed.arrival_ms,
            meta: doc.meta.clone(),
            via,
            by_arrival: placed.by_arrival,
            id_number: doc.id_number,
            date_field: doc.date_field,
        })
    }

    /// What is left of a document's revision budget goes to the revision queue (the
    /// document is stored: a failure here leaves the queue as it was, for the next
    /// drain).
    fn drain_left(&mut self, budget: Budget) {
        if self.queue_waiting && budget.docs > 0 && budget.bytes > 0 {
            if let Err(e) = self.drain(budget, false) {
                tracing::warn!(error = %crate::error::chain(&e), "revision queue not drained; trying again later");
            }
        }
    }

    /// Where a document admitted now stands (`has_terms`: its text holds a term): its
    /// id, and its place in publication order, its date unless its way in may not take
    /// origins over (it then stands in arrival order, its date kept), else its arrival
    /// (never before the previous document's). Refused as [`intake::admissible`] says.
    fn place(&mut self, doc: &InputDoc, has_terms: bool, admit: &Admit) -> Result<Placed> {
        let published = intake::admissible(doc, has_terms, self.policy.undated_bad_dates)?;
        let by_arrival = published.is_some() && admit.via.is_some_and(|v| !self.policy.take_over.contains(&v));
        let published = published.filter(|_| !by_arrival);
        let seq = admit.seq.map_or_else(|| self.store.next_seq(), Ok)?;
        if self.last_arrival_ms == 0 {
            self.last_arrival_ms = self.store.docs_newest_first().next().transpose()?.map_or(0, |m| m.ingested_at_ms);
        }
        let arrival_ms = admit.arrival_ms.unwrap_or(crate::clock::now_ms().max(self.last_arrival_ms));
        let time = published.unwrap_or(crate::storage::store::documents::arrival_time(arrival_ms));
        Ok(Placed { seq, time, by_arrival, arrival_ms })
    }

    /// Revises documents of the revision queue (the take-overs' re-analyses
    /// beyond their budget) within `budget`, in publication order, against the table as
    /// it is now; each leaves the queue in the batch of its revision. Returns how many
    /// documents left the queue (0: it is empty). The daemon calls it while idle;
    /// ingestion after each document with what its own revisions left of the budget,
    /// and a batch run ([`crate::ingest`]) with [`Budget::UNLIMITED`] at its end.
    pub fn drain_revisions(&mut self, budget: Budget) -> Result<u64> {
        self.drain(budget, true)
    }

    fn drain(&mut self, mut budget: Budget, first_has_room: bool) -> Result<u64> {
        debug_assert!(self.writable);
        if self.poisoned {
            return Err(DataDirError::Poisoned);
        }
        let mut keyed = Vec::new();
        for (s, cause) in self.store.queued()? {
            keyed.push((self.store.published_time(s)?.ok_or(DataDirError::MissingText(s))?, s, cause));
        }
        keyed.sort_unstable();
        if keyed.is_empty() {
            self.queue_waiting = false;
            return Ok(0);
        }
        crate::failpoint::hit("revise.drain")
            .map_err(|e| StoreError::Io { path: self.store.path().to_path_buf(), source: e })?;
        let (mut fresh, mut revised, mut drained) = (HashMap::new(), Vec::new(), Vec::new());
        for (s_time, s, cause) in keyed.iter().copied() {
            let text = self.store.text(s)?.ok_or(DataDirError::MissingText(s))?;
            if !budget.take(text.len() as u64, first_has_room && drained.is_empty()) {
                break;
            }
            let stage: &mut dyn TableStage = &mut *self.stage;
            let one =
                revise_one(&self.store, &mut self.engine, (&self.table, stage), (s, s_time, &text), None, &mut fresh)?;
            revised.extend(one.map(|r| (cause, r)));
            drained.push(s);
        }
        self.store.put_drained(&revised, &drained)?;
        self.queue_waiting = drained.len() < keyed.len();
        Ok(drained.len() as u64)
    }

    /// Per-document apply latency (and text bytes) since opening.
    pub fn latency(&self) -> Latency {
        self.latency
    }

    /// Analyses a document without changing anything: its origins, its earlier
    /// near-duplicates (every verdict) and its quotations.
    pub fn query(&mut self, doc: &InputDoc) -> Result<QueryResult> {
        let seq = self.store.next_seq()?;
        let (prepared, sketch, sentences) = self.preparer.prepare_in_full(&doc.text).into_parts();
        let indexes = Indexes::over(self.table.index_region(), self.shape);
        // A query is a document arriving now: pairs in arrival order.
        let verify = Some((&self.engine, prepared.tokens()));
        let nd = sketch
            .map(|s| search::near_dups(&self.store, &self.recompute, seq, s, &indexes, |_| false, verify))
            .transpose()?;
        let q = sentences
            .map(|s| search::quotations(&self.store, &self.recompute, seq, s, &indexes, |_| false))
            .transpose()?;
        let mut result = self.engine.query_prepared(&*self.table, &prepared, seq);
        align(&self.store, &self.engine, &prepared, &mut result, &by_arrival)?;
        let origins = self.engine.config().origins;
        Ok(QueryResult { origins, result, near: nd.map(|nd| nd.found), quotes: q.map(|q| q.found) })
    }

    /// Quotation index entries within the radius that the per-probe cap left out, over
    /// the documents applied since opening.
    pub fn quote_capped(&self) -> u64 {
        self.quote_capped
    }

    /// Where the time of the documents applied so far went.
    pub fn stage_times(&self) -> StageTimes {
        self.times
    }

    /// Adds preparation time spent elsewhere (on parser threads).
    pub fn add_prepare_time(&mut self, seconds: f64) {
        self.times.prepare += seconds;
    }

    /// Whether a failed store write left the table ahead of the store.
    pub fn poisoned(&self) -> bool {
        self.poisoned
    }

    /// Makes everything durable and marks the table cleanly closed.
    pub fn close(self) -> Result<()> {
        if self.poisoned {
            return Err(DataDirError::PoisonedClose);
        }
        if self.writable {
            let (mut stage, mut table) = (self.stage, self.table);
            stage.flush().map_err(DataDirError::Stage)?;
            table.flush()?;
            self.store.sync()?;
            self.store.flush_memtables()?;
            table.close()?;
        }
        Ok(())
    }
}
