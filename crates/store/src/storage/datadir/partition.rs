//! A data directory as one partition of a sharded deployment (
//! `docs/SCALE-OUT.md`, "Partitions"): it stores the documents it owns, under the log's
//! ids, and reads the others' through an [`Elsewhere`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use textorigin_core::engine::{Engine, Feedback, Probe};
use textorigin_core::index::{IndexShape, Indexes};

use super::{analysis, db_path, restore_table, table_params, templates, DataDir, DataDirError, Result};
use crate::storage::recompute::Recomputer;
use crate::storage::stage::StageError;
use crate::storage::store::{BookState, Elsewhere, Revised, Revisions, Store};
use textorigin_core::engine::template;

/// The data directory of partition `partition` in a deployment's `dir` of several.
pub fn partition_path(dir: &Path, partition: u32) -> PathBuf {
    dir.join(format!("p{partition}"))
}

/// The data directories of a deployment's partitions in `dir` (`p0`, `p1`, ...: none
/// for a data directory of its own).
pub fn partitions(dir: &Path) -> Vec<PathBuf> {
    if db_path(dir).exists() {
        return Vec::new();
    }
    (0..).map(|p| partition_path(dir, p)).take_while(|p| db_path(p).exists()).collect()
}

/// The store of `dir` read-only, and the data directory it is in: the partitions' read
/// as one where `dir` holds a deployment's ([`Store::open_partitions`]), with the first
/// partition's data directory.
pub(super) fn open_read_store(dir: &Path) -> Result<(PathBuf, Store)> {
    let parts = partitions(dir);
    if parts.is_empty() {
        return Ok((dir.to_path_buf(), Store::open_read_only(&db_path(dir))?));
    }
    let stores: Vec<PathBuf> = parts.iter().map(|p| db_path(p)).collect();
    Ok((parts[0].clone(), Store::open_partitions(&stores)?))
}

/// What a partition's last document stored gives the others: the revisions
/// it made (of every partition's documents: each owner stores its own). Its words the
/// others count from its text ([`DataDir::count_theirs`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForOthers {
    pub revised: Vec<Revised>,
}

/// What [`DataDir::rebuild_partition`] asks of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// In the checkpoint slot but not in the book: nothing (its place in publication
    /// order is for the caller's book).
    Before,
    /// Another partition's: its text.
    Theirs,
    /// This partition's, with what the stage kept with it ([`Store::stage_record`]):
    /// its feedback.
    Ours(Vec<u8>),
}

impl DataDir {
    /// Makes the table of the partition's data directory `dir` again, as it was after
    /// the last document it stored: how a partition restarts. Its table
    /// file is not trusted (the documents of other partitions after that one are in its
    /// indexes); its newest checkpoint slot, written after one of its own documents, is
    /// the start (else an empty table). First `load` is given the state of the book the
    /// store keeps ([`Store::book_state`]: none before its first write). Then, in order,
    /// for every document up to the last stored after the slot's document or the book's
    /// last known one (the earlier), `each(seq, part)` is called: up to the slot's
    /// document, for its place only; after, it gives the text of another partition's
    /// document, or the feedback of one of this partition's (decoded from the record its
    /// stage kept with it, whose text is read here); each adds its words to the document
    /// frequencies (the shard workers hold the other sections of the derived indexes),
    /// and this partition's move the document counters as when they were applied.
    /// Returns the last document stored.
    pub fn rebuild_partition(
        dir: &Path,
        load: impl FnOnce(Option<BookState>),
        mut each: impl FnMut(u64, Part) -> std::result::Result<(Option<String>, Option<Feedback>), StageError>,
    ) -> Result<u64> {
        let store = crate::storage::migrations::open(&db_path(dir))?;
        let book = store.book_state()?;
        let known = book.map_or(0, |b| b.known);
        load(book);
        let cfg = store.config()?.ok_or_else(|| DataDirError::NoConfig(dir.to_path_buf()))?;
        let last = store.next_seq()? - 1;
        let params = table_params(&store, &cfg)?;
        let (mut table, from) = restore_table(dir, &store, last, &params)?;
        let recompute = Recomputer::of(&store)?;
        let shape = IndexShape::new(cfg.index_bytes, recompute.quote())?;
        let engine = Engine::new(cfg);
        // From the slot's document on (or the book's first unknown, the earlier).
        for seq in known.min(from) + 1..=last {
            if seq <= from {
                each(seq, Part::Before).map_err(DataDirError::Stage)?;
                continue;
            }
            let ours = store.text(seq)?;
            let part = match ours {
                Some(_) => Part::Ours(store.stage_record(seq)?.ok_or(DataDirError::MissingRecord(seq))?),
                None => Part::Theirs,
            };
            let (theirs, feedback) = each(seq, part).map_err(DataDirError::Stage)?;
            let text = ours.or(theirs).ok_or(DataDirError::MissingText(seq))?;
            // Every document's own template lines were counted before the last stored.
            let add = analysis::index_words(&recompute, engine.config(), &text, &store.own_templates(seq)?);
            Indexes::over(table.index_region_mut()?, shape).add(recompute.quote(), seq, &add);
            if let Some(fb) = feedback {
                engine.score(&mut table, &Probe::default(), &fb);
            }
        }
        table.close()?;
        Ok(last)
    }

    /// Makes this data directory one partition of a deployment: the
    /// documents `elsewhere` does not say are its own are read through it (once: false
    /// when it was set before).
    pub fn set_elsewhere(&self, elsewhere: Arc<dyn Elsewhere>) -> bool {
        self.store.set_elsewhere(elsewhere)
    }

    /// Counts another partition's document `seq`, named `name` and read from `source`,
    /// of `text` on `site` (where templates are labelled: [`super::site_of`]), in its
    /// turn (after every document before it, before every one after), as its owner
    /// counts it: the name it is stored under where its file names it (this
    /// partition's later pages of the same file name are named after it); its lines in its
    /// site's counts, which may make lines template on this partition's pages too (as
    /// on one node: every partition counts every document), and its words outside its
    /// own template lines in the document frequencies. Each once: the lines not when
    /// the store counted the document before a restart, the words not when the indexes
    /// hold a document from `seq` on already (a restart's table, made again up to the
    /// partition's last stored document). The shard workers hold the other sections of
    /// the derived indexes; a search that reads its sketch or sentences computes them
    /// again from its text, as an evicted stored document's are.
    pub fn count_theirs(
        &mut self,
        seq: u64,
        (name, source): (&str, &str),
        text: &str,
        site: Option<u64>,
    ) -> Result<()> {
        super::names::note_theirs(&self.store, seq, name, source)?;
        let (cfg, rc) = (self.engine.config(), &self.recompute);
        let count_words = Indexes::over(self.table.index_region(), self.shape).stats().last_seq < seq;
        let add = match site {
            // Its lines and its words from one split into tokens.
            Some(site) if self.store.templates_counted_through()? < seq => {
                let (write, add) = rc.with_tokens(text, |tokens| {
                    let lines = template::lines(text, tokens);
                    let decided = templates::decide(&self.store, cfg, (seq, site), (&lines, tokens, text.len() as u32));
                    decided.map(|(runs, write)| {
                        (write, count_words.then(|| analysis::index_words_of(rc, cfg, (text, tokens), &runs)))
                    })
                })?;
                self.store.put_templates_of_theirs(seq, &write)?;
                add
            }
            Some(_) if count_words => Some(analysis::index_words(rc, cfg, text, &self.store.own_templates(seq)?)),
            None if count_words => Some(analysis::index_words(rc, cfg, text, &[])),
            _ => None,
        };
        if let Some(add) = add {
            Indexes::over(self.table.index_region_mut()?, self.shape).add(self.recompute.quote(), seq, &add);
        }
        Ok(())
    }

    /// In a partition, keeps what the last document gives the others (its revisions),
    /// and moves the revisions of the others' documents (their owners store them) from
    /// `revised.done` to `revised.elsewhere`.
    pub(super) fn keep_for_others(&mut self, revised: &mut Revisions) {
        if !self.store.partitioned() {
            return;
        }
        self.last = ForOthers { revised: revised.done.clone() };
        let store = &self.store;
        (revised.done, revised.elsewhere) =
            std::mem::take(&mut revised.done).into_iter().partition(|r| store.holds(r.seq));
        self.store.revised_elsewhere(revised.elsewhere.iter().map(|r| r.seq));
    }

    /// What the last document stored gives the other partitions (the revisions of
    /// their documents are for their owners to store,
    /// [`Store::put_revisions`](crate::storage::store::Store::put_revisions)).
    pub fn take_for_others(&mut self) -> ForOthers {
        std::mem::take(&mut self.last)
    }
}
