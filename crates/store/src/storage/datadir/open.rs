//! Opening a data directory, one sequence a reader can follow top to bottom.
//!
//! **A writer** (`ingest`, `serve`, `rebuild`, a deployment's partition) first brings the
//! table in step with the store if a crash left it behind ([`DataDir::recover`]: the
//! store opened and its configuration read; an older table format rebuilt from the
//! stored documents; else the newest valid checkpoint slot restored, or an empty table,
//! and the documents after it replayed), then opens ([`DataDir::open_write`]): the
//! directory made, its store found ([`store_found`]: a store is never created beside a
//! table) and opened, its role claimed ([`claim_role`]: a deployment's aggregator or
//! not), the configuration settled ([`settle_config`]: the stored one plus the
//! overrides) and the features ([`settle_features`]), the table opened in step with the
//! store ([`open_table`]), the parts assembled.
//!
//! **A reader** ([`DataDir::open_read`]) opens the store (a deployment's partitions as
//! one), reads the configuration and opens the table read-only; `query`'s
//! ([`DataDir::open_read_for_query`]) takes a private copy of the newest checkpoint
//! with the documents stored since replayed into it in memory.

use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

use textorigin_core::config::{Config, Overrides};
use textorigin_core::engine::Engine;
use textorigin_core::index::IndexShape;
use textorigin_core::table::TableParams;

use super::analysis::{apply_replay, prepare_replay, replay, reproduces};
use super::rebuild::restore_table;
use super::settle::{refuse_feature_switch, settle_features};
use super::{db_path, partition, table_path, DataDir, DataDirError, ForOthers, Preparer, Recovery, Result};
use crate::error::{IoContext, IoError};
use crate::intake::Policy;
use crate::storage::recompute::Recomputer;
use crate::storage::stage::{Local, TableStage};
use crate::storage::store::{Found, Store, StoreError};
use crate::storage::table_file::{TableError, TableFile};
use crate::telemetry::{Latency, StageTimes};

/// The file that marks a sharded deployment's aggregator.
const AGGREGATOR_MARK: &str = "cluster";

/// An error when `dir` is a sharded deployment's aggregator, whose table phases must
/// not run on its own (empty) table.
pub(super) fn refuse_aggregator(dir: &Path) -> Result<()> {
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
pub(super) fn table_params(store: &Store, cfg: &Config) -> Result<TableParams> {
    let params = cfg.table_params();
    Ok(if store.is_aggregator()? { params.with_one_bucket() } else { params })
}

/// Claims `dir`'s role for a writer: a deployment's aggregator (`aggregator`) or not.
/// The store's flag is written before `cluster init` writes the file `cluster`: a
/// directory whose init was cut off between the two is still an aggregator's. A
/// directory becomes an aggregator's only while it holds no document.
fn claim_role(dir: &Path, store: &Store, aggregator: bool) -> Result<()> {
    match (aggregator, store.is_aggregator()?) {
        (false, true) => Err(DataDirError::Aggregator(dir.to_path_buf())),
        (true, false) => {
            if store.next_seq()? > 1 {
                return Err(DataDirError::NotEmpty(dir.to_path_buf()));
            }
            store.put_aggregator()?;
            let _ = std::fs::remove_file(table_path(dir)); // a table of the configured size, with no document
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The configuration a writer works with: the stored one with `overrides` applied
/// (a new store's: the defaults with them, stored now); an override that differs from
/// a stored value is refused.
fn settle_config(dir: &Path, store: &Store, overrides: &Overrides) -> Result<Config> {
    let stored = store.config()?;
    let cfg = overrides.apply(&stored.clone().unwrap_or_default())?;
    match &stored {
        Some(stored) => {
            refuse_feature_switch(dir, stored, &cfg)?;
            if *stored != cfg {
                return Err(DataDirError::ConfigDiffers {
                    dir: dir.to_path_buf(),
                    stored: stored.canonical(),
                    requested: cfg.canonical(),
                });
            }
        }
        None => store.put_config(&cfg)?,
    }
    Ok(cfg)
}

/// A writer's table file, in step with the store: an older format rebuilt from the
/// stored documents, a missing one made while no document is stored (refused after),
/// and one whose last document is not the store's refused.
fn open_table(dir: &Path, store: &Store, cfg: &Config) -> Result<TableFile> {
    let tpath = table_path(dir);
    let next = store.next_seq()?;
    let params = table_params(store, cfg)?;
    let table = if tpath.exists() {
        match TableFile::open(&tpath, &params, true) {
            Err(TableError::OlderFormat { found, .. }) => {
                tracing::warn!(
                    format = found,
                    "the table file is of an older format: rebuilding it from the stored documents"
                );
                DataDir::rebuild_with(dir, store, &mut |_, _| {})?;
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
    Ok(table)
}

impl DataDir {
    /// Opens (or creates) `dir` for writing with the stored configuration plus
    /// `overrides` (an override that differs from a stored value is an error), taking
    /// documents in as `policy` says.
    pub fn open_write(dir: &Path, overrides: &Overrides, policy: Policy) -> Result<DataDir> {
        refuse_aggregator(dir)?;
        Self::open_write_any(dir, overrides, policy, false)
    }

    /// [`DataDir::open_write`] of a sharded deployment's aggregator (marked by
    /// [`DataDir::mark_aggregator`]), or of a directory about to become one.
    pub fn open_write_aggregator(dir: &Path, overrides: &Overrides, policy: Policy) -> Result<DataDir> {
        Self::open_write_any(dir, overrides, policy, true)
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

    /// Opening for writing, step by step: the directory made, its store found and
    /// opened, its role claimed (a deployment's aggregator or not), the configuration
    /// settled (the stored one plus `overrides`), the features settled, the table
    /// opened in step with the store, the parts assembled with the intake `policy`.
    fn open_write_any(dir: &Path, overrides: &Overrides, policy: Policy, aggregator: bool) -> Result<DataDir> {
        std::fs::create_dir_all(dir).io(|| format!("cannot create data directory {}", dir.display()))?;
        store_found(dir)?;
        let store = crate::storage::migrations::open(&db_path(dir))?;
        claim_role(dir, &store, aggregator)?;
        let cfg = settle_config(dir, &store, overrides)?;
        let (nd_cfg, q_cfg) = settle_features(dir, &store, overrides)?;
        let shape = IndexShape::new(cfg.index_bytes, &q_cfg)?;
        let recompute = Recomputer::new(cfg.terms, nd_cfg, q_cfg);
        let table = open_table(dir, &store, &cfg)?;
        Ok(DataDir { policy, ..Self::assemble(dir, store, table, cfg, (recompute, shape), true) })
    }

    /// A data directory of its parts, nothing applied yet since opening.
    fn assemble(
        dir: &Path,
        store: Store,
        table: TableFile,
        cfg: Config,
        (recompute, shape): (Recomputer, IndexShape),
        writable: bool,
    ) -> DataDir {
        let engine = Engine::new(cfg);
        let store = Arc::new(store);
        let preparer = Preparer::new(engine.clone(), recompute.clone()).finding_copies_in(&store);
        DataDir {
            dir: dir.to_path_buf(),
            store,
            table,
            engine,
            recompute,
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
        let recompute = Recomputer::of(&store)?;
        let shape = IndexShape::new(cfg.index_bytes, recompute.quote())?;
        Ok(Self::assemble(&dir, store, table, cfg, (recompute, shape), false))
    }

    /// The table of the newest valid checkpoint of this data directory's store (a
    /// consistent state, which a live writer never writes into), read privately; None
    /// without one.
    pub fn checkpoint_table(&self) -> Result<Option<TableFile>> {
        let store = self.store.id()?;
        let Some((slot, _)) = crate::storage::checkpoint::newest_valid(&self.dir).filter(|(_, m)| m.store == store)
        else {
            return Ok(None);
        };
        let params = table_params(&self.store, self.config())?;
        let path = crate::storage::checkpoint::slot_paths(&self.dir, slot).0;
        Ok(Some(TableFile::open_private(&path, &params)?))
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
        let cfgs = (&self.recompute, self.shape);
        for seq in self.table.stats().last_seq + 1..=last {
            replay(&self.store, &mut self.engine, &mut self.table, cfgs, seq)?;
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
        let store = crate::storage::migrations::open(&dbp)?;
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
        let recompute = Recomputer::new(cfg.terms, store.neardup_config()?, store.quote_config()?);
        let shape = IndexShape::new(cfg.index_bytes, recompute.quote())?;
        let mut engine = Engine::new(cfg);
        let cfgs = (&recompute, shape);
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
