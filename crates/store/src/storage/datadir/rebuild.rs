//! `rebuild`: the table and its derived indexes made again by replaying the stored
//! documents, optionally with new sizes or re-analysing them.

use std::path::Path;

use textorigin_core::config::{Config, Overrides};
use textorigin_core::engine::Engine;
use textorigin_core::index::IndexShape;
use textorigin_core::quote::QuoteConfig;

use super::templates::site_of;
use super::{
    analyse, db_path, replay, reproduces, revise, table_path, Budget, DataDir, DataDirError, Preparer, Result,
    StageTimes,
};
use crate::error::IoContext;
use crate::storage::recompute::Recomputer;
use crate::storage::stage::{Local, TableStage};
use crate::storage::store::Store;
use crate::storage::table_file::{TableError, TableFile};

impl DataDir {
    /// Replays every stored document, in sequence order, into a fresh table (with its
    /// derived indexes), and checks each recomputed result against the stored one.
    /// With new sizes in `opts` the new table has them (and the stored configuration
    /// says so); with `reanalyse` the stored results are replaced by the recomputed
    /// ones, near-duplicates and quotations included.
    pub fn rebuild(dir: &Path, opts: RebuildOptions, mut progress: impl FnMut(u64, u64)) -> Result<Rebuilt> {
        super::refuse_aggregator(dir)?;
        let store = crate::storage::migrations::open(&db_path(dir))?;
        let stored = store.config()?.ok_or_else(|| DataDirError::NoConfig(dir.to_path_buf()))?;
        let cfg = Overrides {
            table_bytes: opts.table_bytes,
            index_bytes: opts.index_bytes,
            propagate: opts.propagate,
            align: opts.align,
            near_duplicates: opts.near_duplicates,
            quotations: opts.quotations,
            origins: opts.origins,
            terms: opts.terms,
            density: opts.density,
            density_lag: opts.density_lag,
            dominant: opts.dominant,
            attribution: opts.attribution,
            templates: opts.templates,
            template_pages: opts.template_pages,
            submitted_sites: opts.submitted_sites,
            site_field: opts.site_field.clone(),
            exact_copies: opts.exact_copies,
            ..Overrides::default()
        }
        .apply(&stored)?;
        let stored_q = store.quote_config()?;
        let q_cfg = QuoteConfig {
            clauses: opts.quote_clauses.unwrap_or(stored_q.clauses),
            exact_index: opts.quote_exact_index.unwrap_or(stored_q.exact_index),
            ..stored_q.clone()
        };
        let results_differ = (cfg.origins, cfg.propagate, cfg.align, cfg.near_duplicates, cfg.quotations, cfg.terms)
            != (
                stored.origins,
                stored.propagate,
                stored.align,
                stored.near_duplicates,
                stored.quotations,
                stored.terms,
            )
            || (cfg.density, cfg.density_lag, cfg.dominant, cfg.attribution)
                != (stored.density, stored.density_lag, stored.dominant, stored.attribution)
            || (cfg.templates, cfg.template_pages, cfg.submitted_sites, &cfg.site_field)
                != (stored.templates, stored.template_pages, stored.submitted_sites, &stored.site_field)
            || cfg.exact_copies != stored.exact_copies
            || q_cfg != stored_q;
        if !opts.reanalyse && results_differ {
            return Err(DataDirError::NeedsReanalysis);
        }
        let (documents, differing) = Self::rebuild_into(dir, &store, (&cfg, &q_cfg), opts.reanalyse, &mut progress)?;
        Ok(Rebuilt { documents, differing, resized: cfg != stored, config: cfg.canonical() })
    }

    /// [`DataDir::rebuild`] with the store open and the stored configuration.
    pub(super) fn rebuild_with(dir: &Path, store: &Store, progress: &mut dyn FnMut(u64, u64)) -> Result<(u64, u64)> {
        let cfg = store.config()?.ok_or_else(|| DataDirError::NoConfig(dir.to_path_buf()))?;
        Self::rebuild_into(dir, store, (&cfg, &store.quote_config()?), false, progress)
    }

    /// Replays into `table.rebuild` made with `cfg` (and the quotation configuration
    /// `q_cfg`), then (a new configuration stored first, old checkpoint slots removed,
    /// as they copy the table being replaced) renames it over the table. A crash before the rename leaves the old table, in
    /// step with the store unless the configuration was already stored, in which case
    /// opening names the difference and `rebuild` runs again.
    fn rebuild_into(
        dir: &Path,
        store: &Store,
        (cfg, q_cfg): (&Config, &QuoteConfig),
        reanalyse: bool,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<(u64, u64)> {
        // The new configuration's (stored once the table is made).
        let recompute = Recomputer::new(cfg.terms, store.neardup_config()?, q_cfg.clone());
        let shape = IndexShape::new(cfg.index_bytes, q_cfg)?;
        let tpath = table_path(dir);
        let tmp = dir.join("table.rebuild");
        let _ = std::fs::remove_file(&tmp);
        let mut table = TableFile::create(&tmp, &cfg.table_params())?;
        let mut engine = Engine::new(cfg.clone());
        let mut preparer = Preparer::new(engine.clone(), recompute.clone());
        if reanalyse {
            store.clear_pairs_found_later()?;
            store.clear_revisions()?;
            store.clear_templates()?;
            store.clear_exact()?;
        }
        let mut stage = Local::default();
        let total = store.next_seq()? - 1;
        let same_config = store.config()?.as_ref() == Some(cfg);
        let mut differing = 0;
        let mut applied = 0;
        // Reanalysed, a result may be revised again by a later document: what differs is
        // told by the stored results before and after the whole run.
        let before: Vec<Option<u64>> = match reanalyse {
            true => (1..=total).map(|seq| store.result_digest(seq)).collect::<std::result::Result<_, _>>()?,
            false => Vec::new(),
        };
        for meta in store.docs() {
            let meta = meta?;
            let cfgs = (&recompute, shape);
            let time = meta.time();
            let analysed = if reanalyse {
                let text = store.text(meta.seq)?.ok_or(DataDirError::MissingText(meta.seq))?;
                let prepared = preparer.prepare(&text);
                let site = site_of(cfg, meta.url.as_deref(), meta.meta.as_deref(), &meta.source, meta.via);
                let (result, nd, q, templates, exact) = analyse(
                    store,
                    &mut engine,
                    &mut table,
                    &mut stage,
                    cfgs,
                    (meta.seq, time, site, &text),
                    prepared,
                    &mut StageTimes::default(),
                )?;
                // Revised again, as when the documents arrived.
                let this = (meta.seq, time, text.as_str(), &result);
                let mut unlimited = Budget::UNLIMITED;
                let taken = stage.taken();
                let revised = revise(store, &mut engine, (&table, &mut stage), this, &taken, &mut unlimited)?;
                Some((result, nd, q, revised, templates, exact))
            } else {
                None
            };
            let result = match &analysed {
                Some((result, ..)) => result.clone(),
                None => replay(store, &mut engine, &mut table, cfgs, meta.seq)?,
            };
            // Against what the document got when it was applied (revisions came later).
            if !reanalyse && !reproduces(store, &result, store.first_result(meta.seq)?.as_ref())? {
                differing += 1;
                if same_config {
                    tracing::error!(doc = meta.seq, name = %meta.name, "recomputed result differs from the stored one");
                }
            }
            if let Some((result, nd, q, revised, templates, exact)) = &analysed {
                store.put_reanalysis(meta.seq, result, nd.as_ref(), q.as_ref(), revised, (Some(templates), *exact))?;
            }
            applied += 1;
            progress(applied, total);
        }
        if reanalyse {
            for (seq, was) in (1..).zip(&before) {
                differing += u64::from(store.result_digest(seq)? != *was);
            }
        }
        table.close()?;
        store.sync()?;
        if store.quote_config()? != *q_cfg {
            store.put_quote_config(q_cfg)?;
        }
        if !same_config {
            store.put_config(cfg)?;
        }
        crate::storage::checkpoint::remove_slots(dir)?;
        std::fs::rename(&tmp, &tpath).io(|| format!("cannot replace {}", tpath.display()))?;
        std::fs::File::open(dir).and_then(|d| d.sync_all()).io(|| format!("cannot sync {}", dir.display()))?;
        Ok((applied, differing))
    }
}

/// What `rebuild` changes besides replaying.
#[derive(Debug, Clone, Default)]
pub struct RebuildOptions {
    /// A new table size (the index size follows unless given).
    pub table_bytes: Option<u64>,
    /// A new index size.
    pub index_bytes: Option<u64>,
    /// Replace the stored results by the recomputed ones.
    pub reanalyse: bool,
    /// Turn origin propagation on or off (only with `reanalyse`).
    pub propagate: Option<bool>,
    /// Turn alignment on or off (only with `reanalyse`).
    pub align: Option<bool>,
    /// Turn near-duplicate detection on or off (only with `reanalyse`).
    pub near_duplicates: Option<bool>,
    /// Turn quotation search on or off (only with `reanalyse`).
    pub quotations: Option<bool>,
    /// Turn origins on or off (only with `reanalyse`).
    pub origins: Option<bool>,
    /// Another rule of what makes a term (only with `reanalyse`: every document is
    /// tokenized again).
    pub terms: Option<textorigin_core::text::Terms>,
    /// Quotation search by clauses on or off (only with `reanalyse`: every sentence is
    /// indexed and searched again).
    pub quote_clauses: Option<bool>,
    /// The quotation index laid out for exact searches, on or off (only with
    /// `reanalyse`: every sentence is indexed and searched again).
    pub quote_exact_index: Option<bool>,
    /// Another selection density (only with `reanalyse`).
    pub density: Option<textorigin_core::config::Density>,
    /// Another lag of the adaptive density (only with `reanalyse`).
    pub density_lag: Option<u8>,
    /// Another way of counting the dominant origin (only with `reanalyse`).
    pub dominant: Option<textorigin_core::config::Dominant>,
    /// Another attribution (needs `reanalyse`).
    pub attribution: Option<textorigin_core::config::Attribution>,
    /// Another site template labelling, and pages a line must stand on (
    /// need `reanalyse`).
    pub templates: Option<textorigin_core::config::Templates>,
    pub template_pages: Option<u32>,
    /// Whether submitted documents name their sites, and the metadata field naming a
    /// site (need `reanalyse`).
    pub submitted_sites: Option<textorigin_core::config::SubmittedSites>,
    pub site_field: Option<String>,
    /// Answer exact copies from their earlier documents, or analyse them in full
    /// (needs `reanalyse`).
    pub exact_copies: Option<bool>,
}

/// What `rebuild` did.
#[derive(Debug, Clone)]
pub struct Rebuilt {
    pub documents: u64,
    /// Recomputed origin results that differ from the stored ones.
    pub differing: u64,
    /// Whether the table or index size changed.
    pub resized: bool,
    /// The configuration now stored.
    pub config: String,
}

/// The table of `dir` as its newest checkpoint slot usable with `store` (whose last
/// document is `last`) holds it, else empty, opened for writing: with the document it
/// reflects (recovery, and a partition's restart).
pub(super) fn restore_table(
    dir: &Path,
    store: &Store,
    last: u64,
    params: &textorigin_core::table::TableParams,
) -> Result<(TableFile, u64)> {
    let tpath = table_path(dir);
    let empty = || -> Result<u64> {
        let _ = std::fs::remove_file(&tpath);
        TableFile::create(&tpath, params)?.close()?;
        Ok(0)
    };
    let from = match crate::storage::checkpoint::newest_usable(dir, last, store.id()?) {
        Some((slot, m)) => {
            crate::storage::checkpoint::restore(dir, slot, &tpath)?;
            match TableFile::mark_closed(&tpath) {
                Ok(()) => m.seq,
                // A slot an older build wrote (its table format): no start, every
                // document is replayed.
                Err(TableError::OlderFormat { .. }) => empty()?,
                Err(e) => return Err(e.into()),
            }
        }
        None => empty()?,
    };
    let table = TableFile::open(&tpath, params, true)?;
    if table.stats().last_seq != from {
        return Err(DataDirError::CheckpointSeq { found: table.stats().last_seq, meta: from });
    }
    Ok((table, from))
}
