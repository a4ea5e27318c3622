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
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::error::{IoContext, IoError};
use crate::input::InputDoc;
use crate::intake::{self, Policy};
use crate::storage::stage::{Local, TableStage};
use crate::storage::store::{Admit, DocMeta, DocumentWrite, Quotation, Store};
use crate::storage::store::{Found, StoreError};
use crate::storage::table_file::{TableError, TableFile};
use crate::telemetry::{Latency, StageTimes};
pub use templates::site_of;
use textorigin_core::config::{Config, Overrides};
use textorigin_core::engine::{by_arrival, DocResult, Engine};
use textorigin_core::index::{IndexShape, Indexes};
use textorigin_core::neardup::{NearDup, NearDupConfig};
use textorigin_core::quote::QuoteConfig;
use textorigin_core::table::TableParams;

mod analysis;
pub mod backup;
mod error;
mod names;
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

use analysis::{align, analyse, apply_replay, lap, prepare_replay, replay, reproduces, revise, revise_one};
pub use analysis::{sketch_and_sentences, Prepared, Preparer, Searches};
use rebuild::restore_table;
use settle::{refuse_feature_switch, settle_features};

pub use crate::intake::{Budget, DocError, DEFAULT_REVISION_BUDGET, DEFAULT_TAKE_OVER};
pub use error::DataDirError;
pub use partition::{partition_path, ForOthers, Part};
pub use rebuild::{RebuildOptions, Rebuilt};

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
    nd_cfg: NearDupConfig,
    q_cfg: QuoteConfig,
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

/// The file that marks a sharded deployment's aggregator.
const AGGREGATOR_MARK: &str = "cluster";

/// An error when `dir` is a sharded deployment's aggregator, whose table phases must
/// not run on its own (empty) table.
fn refuse_aggregator(dir: &Path) -> Result<()> {
    if dir.join(AGGREGATOR_MARK).exists() {
        return Err(DataDirError::Aggregator(dir.to_path_buf()));
    }
    Ok(())
}

/// What the store of `dir` holds ([`Found::inspect`]); an error when it is gone but
/// the table file is there: a store is created only with its data directory, never
/// inside one that holds a table.
fn store_found(dir: &Path) -> Result<Found> {
    let dbp = db_path(dir);
    let found = Found::inspect(&dbp);
    if found == Found::Absent && table_path(dir).exists() {
        let what = "it holds no data (no CURRENT, table files or logs) but the data directory has a table file".into();
        return Err(StoreError::Damaged { path: dbp, what }.into());
    }
    Ok(found)
}

/// The table file's parameters for `store`'s configuration: one bucket for a sharded
/// deployment's aggregator (its buckets are the workers'), else the configured table.
fn table_params(store: &Store, cfg: &Config) -> Result<TableParams> {
    let params = cfg.table_params();
    Ok(if store.is_aggregator()? { params.with_one_bucket() } else { params })
}

fn table_path(dir: &Path) -> PathBuf {
    dir.join("table")
}

/// The RocksDB store of the data directory `dir`.
pub fn db_path(dir: &Path) -> PathBuf {
    dir.join("db")
}

/// Whether no process holds the store lock of the data directory `dir` (its writer is
/// gone, killed or never started); false when that cannot be told ([`lock_holder`]).
pub fn writer_gone(dir: &Path) -> bool {
    matches!(lock_holder(&db_path(dir).join("LOCK")), Some(None))
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

impl DataDir {
    /// The data directory's path.
    pub fn dir(&self) -> &Path {
        &self.dir
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
        &self.nd_cfg
    }

    /// The quotation parameters this data directory was made with.
    pub fn quote_config(&self) -> &QuoteConfig {
        &self.q_cfg
    }

    /// Opens (or creates) `dir` for writing with the stored configuration plus
    /// `overrides`; an override that differs from a stored value is an error.
    pub fn open_write(dir: &Path, overrides: &Overrides) -> Result<DataDir> {
        refuse_aggregator(dir)?;
        Self::open_write_any(dir, overrides, false)
    }

    /// [`DataDir::open_write`] of a sharded deployment's aggregator (marked by
    /// [`DataDir::mark_aggregator`]), or of a directory about to become one.
    pub fn open_write_aggregator(dir: &Path, overrides: &Overrides) -> Result<DataDir> {
        Self::open_write_any(dir, overrides, true)
    }

    /// Marks `dir` as a sharded deployment's aggregator, described by `deployment`:
    /// its table phases run elsewhere, so the commands that would run them here
    /// (`ingest`, `serve`, `rebuild`) refuse it.
    pub fn mark_aggregator(dir: &Path, deployment: &str) -> Result<()> {
        let path = dir.join(AGGREGATOR_MARK);
        std::fs::write(&path, format!("{deployment}\n")).io(|| format!("cannot write {}", path.display()))?;
        std::fs::File::open(dir).and_then(|d| d.sync_all()).io(|| format!("cannot sync {}", dir.display()))?;
        Ok(())
    }

    fn open_write_any(dir: &Path, overrides: &Overrides, aggregator: bool) -> Result<DataDir> {
        std::fs::create_dir_all(dir).io(|| format!("cannot create data directory {}", dir.display()))?;
        store_found(dir)?;
        let store = Store::open(&db_path(dir))?;
        // The store's flag is written before `cluster init` writes the file `cluster`:
        // a directory whose init was cut off between the two is still an aggregator's.
        match (aggregator, store.is_aggregator()?) {
            (false, true) => return Err(DataDirError::Aggregator(dir.to_path_buf())),
            (true, false) => {
                if store.next_seq()? > 1 {
                    return Err(DataDirError::NotEmpty(dir.to_path_buf()));
                }
                store.put_aggregator()?;
                let _ = std::fs::remove_file(table_path(dir)); // a table of the configured size, with no document
            }
            _ => {}
        }
        let stored = store.config()?;
        let base = stored.clone().unwrap_or_default();
        let cfg = overrides.apply(&base)?;
        if let Some(stored) = &stored {
            refuse_feature_switch(dir, stored, &cfg)?;
            if *stored != cfg {
                return Err(DataDirError::ConfigDiffers {
                    dir: dir.to_path_buf(),
                    stored: stored.canonical(),
                    requested: cfg.canonical(),
                });
            }
        }
        if stored.is_none() {
            store.put_config(&cfg)?;
        }
        let (nd_cfg, q_cfg) = settle_features(dir, &store, overrides)?;
        let shape = IndexShape::new(cfg.index_bytes, &q_cfg)?;
        let tpath = table_path(dir);
        let next = store.next_seq()?;
        let params = table_params(&store, &cfg)?;
        let table = if tpath.exists() {
            match TableFile::open(&tpath, &params, true) {
                Err(TableError::OlderFormat { found, .. }) => {
                    tracing::warn!(
                        format = found,
                        "the table file is of an older format: rebuilding it from the stored documents"
                    );
                    Self::rebuild_with(dir, &store, &mut |_, _| {})?;
                    TableFile::open(&tpath, &params, true)?
                }
                t => t?,
            }
        } else {
            if next > 1 {
                return Err(DataDirError::TableMissing(tpath));
            }
            TableFile::create(&tpath, &params)?
        };
        if table.stats().last_seq != next - 1 {
            return Err(DataDirError::OutOfStep {
                table: tpath,
                table_last: table.stats().last_seq,
                store_last: next - 1,
                dir: dir.to_path_buf(),
            });
        }
        Ok(Self::assemble(dir, store, table, cfg, (nd_cfg, q_cfg, shape), true))
    }

    /// A data directory of its parts, nothing applied yet since opening.
    fn assemble(
        dir: &Path,
        store: Store,
        table: TableFile,
        cfg: Config,
        (nd_cfg, q_cfg, shape): (NearDupConfig, QuoteConfig, IndexShape),
        writable: bool,
    ) -> DataDir {
        let engine = Engine::new(cfg);
        let preparer = Preparer::new(engine.clone(), nd_cfg.clone());
        DataDir {
            dir: dir.to_path_buf(),
            store: Arc::new(store),
            table,
            engine,
            nd_cfg,
            q_cfg,
            shape,
            preparer,
            writable,
            poisoned: false,
            times: StageTimes::default(),
            quote_capped: 0,
            latency: Latency::default(),
            policy: Policy::default(),
            queue_waiting: true,
            last_arrival_ms: 0,
            stage: Box::new(Local::default()),
            last: ForOthers::default(),
        }
    }

    /// Opens `dir` read-only (works while a writer runs).
    pub fn open_read(dir: &Path) -> Result<DataDir> {
        let (dir, store) = partition::open_read_store(dir)?;
        let cfg = store.config()?.ok_or_else(|| DataDirError::NoConfig(dir.clone()))?;
        let table = TableFile::open(&table_path(&dir), &table_params(&store, &cfg)?, false)?;
        let nd_cfg = store.neardup_config()?;
        let q_cfg = store.quote_config()?;
        let shape = IndexShape::new(cfg.index_bytes, &q_cfg)?;
        Ok(Self::assemble(&dir, store, table, cfg, (nd_cfg, q_cfg, shape), false))
    }

    /// [`DataDir::open_read`] for `query`, against every document stored (also those
    /// stored since the newest checkpoint): the table is a private
    /// copy of the newest valid checkpoint (a consistent state the running daemon never
    /// writes), else of the table file, with the documents stored after the state it
    /// holds applied to it in memory, as recovery applies them. Nothing is written.
    pub fn open_read_for_query(dir: &Path) -> Result<DataDir> {
        let mut dd = Self::open_read(dir)?;
        let store = dd.store.id()?;
        let params = table_params(&dd.store, dd.config())?;
        let slot = crate::storage::checkpoint::newest_valid(dir).filter(|(_, m)| m.store == store);
        let slot = slot.map(|(slot, _)| crate::storage::checkpoint::slot_paths(dir, slot).0);
        // A sharded deployment's partitions hold their shards' buckets only: their
        // table as the checkpoint left it.
        if !partition::partitions(dir).is_empty() {
            if let Some(path) = slot {
                dd.table = TableFile::open(&path, &params, false)?;
            }
            return Ok(dd);
        }
        dd.table = match slot {
            Some(path) => TableFile::open_private(&path, &params)?,
            None => {
                let t = TableFile::open_private(&table_path(dir), &params)?;
                // A table file in use holds what its writer last flushed (at its
                // start), not what its header's published counters say: replayed
                // from an empty table, as recovery would.
                match t.in_use() {
                    true => TableFile::empty_private(&params)?,
                    false => t,
                }
            }
        };
        dd.replay_stored()?;
        Ok(dd)
    }

    /// Brings a data directory opened by [`DataDir::open_read_for_query`] up to the
    /// documents stored since (the store opened read-only again, the new documents
    /// applied to its private table): what a daemon's query view does between two
    /// openings, instead of replaying from the checkpoint each time. Nothing when the
    /// store's files show no write since it was opened ([`Store::unchanged`]).
    pub fn catch_up_for_query(&mut self) -> Result<()> {
        if !self.table.is_private() || self.store.unchanged() {
            return Ok(());
        }
        self.store = Arc::new(partition::open_read_store(&self.dir)?.1);
        self.replay_stored()
    }

    /// Applies the stored documents after the table's last one to the table.
    fn replay_stored(&mut self) -> Result<()> {
        let last = self.store.next_seq()? - 1;
        let cfgs = (&self.nd_cfg, &self.q_cfg, self.shape);
        for seq in self.table.stats().last_seq + 1..=last {
            replay(&self.store, &mut self.engine, &mut self.table, cfgs, seq)?;
        }
        Ok(())
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
    /// aggregator; [`Local`] by default).
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

    /// A [`Preparer`] for this data directory's configuration (for another thread).
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
        let Placed { seq, time, by_arrival, arrival_ms } = self.place(doc, !prepared.is_empty(), &admit)?;
        let (start, before) = (Instant::now(), self.times);
        let cfgs = (&self.nd_cfg, &self.q_cfg, self.shape);
        let site = site_of(self.engine.config(), doc.url.as_deref(), doc.meta.as_deref(), &doc.source, admit.via);
        let analysed = analyse(
            &self.store,
            &mut self.engine,
            &mut self.table,
            &mut *self.stage,
            cfgs,
            (seq, time, site),
            prepared,
            &mut self.times,
        );
        // Any failure may come after the table applied the document, which the store
        // then does not hold: the table is recovered before it takes another.
        let (result, nd, q, templates) = analysed.inspect_err(|_| self.poisoned = true)?;
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
        let meta = DocMeta {
            seq,
            name: names::stored_name(&self.store, doc).inspect_err(|_| self.poisoned = true)?,
            source: doc.source.clone(),
            url: doc.url.clone(),
            published_at: doc.published_at.clone(),
            text_bytes: doc.text.len() as u64,
            tokens: result.tokens,
            content_hash: format!("{text_hash:032x}"),
            ingested_at_ms: arrival_ms,
            meta: doc.meta.clone(),
            via: admit.via,
            by_arrival,
            id_number: doc.id_number,
            date_field: doc.date_field,
        };
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
        };
        let written = crate::failpoint::hit("store.write")
            .map_err(|e| StoreError::Io { path: self.store.path().to_path_buf(), source: e })
            .and_then(|()| self.store.put_admitted_document(&write, admit));
        self.times.store += lap(&mut t);
        if let Err(source) = written {
            self.poisoned = true;
            return Err(DataDirError::StoreWrite { doc: doc.source.clone(), seq, source });
        }
        self.last_arrival_ms = arrival_ms;
        self.latency.add(start.elapsed().as_secs_f64(), &before, &self.times, meta.text_bytes);
        // What is left of the budget goes to the queue (the document is stored: a failure
        // here leaves the queue as it was, for the next drain).
        self.queue_waiting |= !revised.queued.is_empty();
        if self.queue_waiting && budget.docs > 0 && budget.bytes > 0 {
            if let Err(e) = self.drain(budget, false) {
                tracing::warn!(error = %crate::error::chain(&e), "revision queue not drained; trying again later");
            }
        }
        Ok((meta, result))
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

    /// How documents are taken in from now on ([`Policy::default`] unless told).
    pub fn set_policy(&mut self, policy: Policy) {
        self.policy = policy;
    }

    /// Per-document apply latency (and text bytes) since opening.
    pub fn latency(&self) -> Latency {
        self.latency
    }

    /// Analyses a document without changing anything: its origins, its earlier
    /// near-duplicates (every verdict) and its quotations.
    pub fn query(&mut self, doc: &InputDoc) -> Result<QueryResult> {
        let seq = self.store.next_seq()?;
        let (tokens, items, sketch, sentences) = self.preparer.prepare(&doc.text).into_parts();
        let indexes = Indexes::over(self.table.index_region(), self.shape);
        // A query is a document arriving now: pairs in arrival order.
        let verify = Some((&self.engine, &tokens[..]));
        let nd =
            sketch.map(|s| self.store.near_dup_write(&self.nd_cfg, seq, s, &indexes, |_| false, verify)).transpose()?;
        let q = sentences.map(|s| self.store.quote_write(&self.q_cfg, seq, s, &indexes, |_| false)).transpose()?;
        self.engine.load_prepared(tokens, items);
        let mut result = self.engine.query_prepared(&*self.table, seq);
        align(&self.store, &self.engine, &mut result, &by_arrival)?;
        Ok(QueryResult { result, near: nd.map(|nd| nd.found), quotes: q.map(|q| q.found) })
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

    /// Brings the table in step with the store after a crash, if it is not: restores the
    /// newest valid checkpoint slot (or starts from an empty table) and replays the stored
    /// documents after it, comparing each recomputed result with the stored one. Returns
    /// what it did ([`Recovery`]), or None when the table was in step.
    /// `progress` may stop the replay (a SIGTERM during start-up): the table is then
    /// left marked in use, and the next start recovers it again.
    pub fn recover(dir: &Path, progress: impl FnMut(u64, u64) -> ControlFlow<()>) -> Result<Option<Recovery>> {
        refuse_aggregator(dir)?;
        Self::recover_with(dir, &mut Local::default(), progress)
    }

    /// [`DataDir::recover`] with the table's phases run by `stage` (a sharded
    /// deployment's aggregator).
    pub fn recover_with(
        dir: &Path,
        stage: &mut dyn TableStage,
        mut progress: impl FnMut(u64, u64) -> ControlFlow<()>,
    ) -> Result<Option<Recovery>> {
        let dbp = db_path(dir);
        if store_found(dir)? == Found::Absent {
            return Ok(None);
        }
        let store = Store::open(&dbp)?;
        let Some(cfg) = store.config()? else { return Ok(None) };
        let last = store.next_seq()? - 1;
        let tpath = table_path(dir);
        if matches!(TableFile::open_any(&tpath, false), Err(TableError::OlderFormat { .. })) {
            tracing::warn!("the table file is of an older format: rebuilding it from the stored documents");
            let (n, mismatches) = Self::rebuild_with(dir, &store, &mut |i, n| {
                let _ = progress(i, n);
            })?;
            return Ok(Some(Recovery { from_checkpoint: 0, replayed: n, mismatches }));
        }
        let params = table_params(&store, &cfg)?;
        let in_step = tpath.exists()
            && TableFile::open(&tpath, &params, false).is_ok_and(|t| !t.in_use() && t.stats().last_seq == last);
        if in_step {
            return Ok(None);
        }
        let (mut table, from) = restore_table(dir, &store, last, &params)?;
        let (nd_cfg, q_cfg) = (store.neardup_config()?, store.quote_config()?);
        let shape = IndexShape::new(cfg.index_bytes, &q_cfg)?;
        let mut engine = Engine::new(cfg);
        let cfgs = (&nd_cfg, &q_cfg, shape);
        let mut mismatches = 0;
        // Texts are read and prepared on worker threads, applied here in order.
        let work = |engine: &mut Engine, seq: u64| {
            let prepared = prepare_replay(&store, engine, cfgs, seq);
            // What the document got when it was applied (a revision changed it since).
            (seq, prepared, store.first_result(seq))
        };
        let mut outcome = Ok(());
        crate::pipeline::ordered_map(
            crate::pipeline::worker_threads(),
            &engine.clone(),
            from + 1..=last,
            work,
            |(seq, prepared, stored)| {
                outcome = (|| {
                    crate::failpoint::hit("recover.replay").io(|| "recovery")?;
                    let result = apply_replay(&store, &mut engine, &mut table, stage, cfgs, seq, prepared?)?;
                    if !reproduces(&store, &result, stored?.as_ref())? {
                        mismatches += 1;
                        tracing::error!(doc = seq, "replayed result differs from the stored one: a determinism bug");
                    }
                    if progress(seq - from, last - from).is_break() {
                        return Err(DataDirError::Interrupted);
                    }
                    Ok(())
                })();
                outcome.is_ok()
            },
        )
        .map_err(|e| IoError { what: "recovery".into(), source: std::io::Error::other(e) })?;
        outcome?;
        stage.flush().map_err(DataDirError::Stage)?;
        table.close()?;
        Ok(Some(Recovery { from_checkpoint: from, replayed: last - from, mismatches }))
    }
}
