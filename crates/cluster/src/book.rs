//! What a partition of the deployment (issue 37, `docs/SCALE-OUT.md`, "Partitions")
//! knows of the documents other partitions own: their places in publication order
//! (from the documents stream, read in full), their texts (the latest kept, the others
//! read from it when an alignment or a revision needs one), and, from every partition's
//! results stream applied in document order, their current results and every
//! document's copier edges. As the outcomes are applied, the other partitions'
//! documents' words go to this partition's document frequencies (the shard workers
//! hold the other sections of the derived indexes), and the revisions another
//! partition's document made of this partition's documents to its store (their owner
//! stores them).

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use textorigin_core::engine::DocResult;
use textorigin_store::storage::datadir::{DataDir, DataDirError};
use textorigin_store::storage::store::{Elsewhere, ElsewhereResult, Revised};

use crate::log::{Appends, Interleaved, Log};
use crate::wire::{decode, results_stream, Doc, Meta, Outcome, DOCS};
use crate::{ClusterError, Result};

/// A partition's book of the other partitions' documents ([`Elsewhere`]).
pub struct Book {
    log: Log,
    meta: Meta,
    partition: u32,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Every document's place in publication order (document `n` at `n − 1`).
    times: Vec<i64>,
    /// The texts of the latest documents read, at most [`TEXT_BYTES`] of them.
    texts: HashMap<u64, Arc<str>>,
    kept: VecDeque<u64>,
    text_bytes: usize,
    /// The other partitions' documents' current results.
    results: HashMap<u64, DocResult>,
    /// Every document that named each origin.
    copiers: HashMap<u64, BTreeSet<u64>>,
    /// Every partition's results stream, read in document order from `applied + 1`.
    outcomes: Option<Interleaved>,
    applied: u64,
}

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

    fn result(&mut self, seq: u64, result: &DocResult, theirs: bool) {
        for o in result.selected_origins.iter().map(|s| s.origin).filter(|&o| o != seq) {
            self.copiers.entry(o).or_default().insert(seq);
        }
        if theirs {
            self.results.insert(seq, result.clone());
        }
    }
}

impl Book {
    /// Partition `partition`'s book of the deployment `meta`, empty.
    pub fn new(log: &Log, meta: &Meta, partition: u32) -> Book {
        Book { log: log.clone(), meta: meta.clone(), partition, state: Mutex::default() }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn theirs(&self, seq: u64) -> bool {
        self.meta.owner(seq).0 != self.partition
    }

    /// Document `seq`, the next one, is `doc`: its place in publication order, and its
    /// text for a while.
    pub fn know(&self, seq: u64, doc: &Doc) -> Result<()> {
        let mut s = self.state();
        if s.times.len() as u64 + 1 != seq {
            return Err(ClusterError::OutOfStep {
                what: "a partition's dates",
                want: s.times.len() as u64 + 1,
                got: seq,
            });
        }
        s.times.push(doc.time());
        if self.theirs(seq) {
            s.keep_text(seq, &doc.text);
        }
        Ok(())
    }

    /// Applies every partition's outcomes up to document `upto`, waiting for those not
    /// there yet (after `appends`, which another partition may be waiting for, are in
    /// the log): the other partitions' results, the copier edges, their documents'
    /// words (to `dd`'s table, [`DataDir::index_added`]), and into `dd`'s store the
    /// revisions of this partition's documents that another partition's document made.
    pub fn catch_up(&self, upto: u64, dd: &mut DataDir, appends: &mut [&mut Appends]) -> Result<()> {
        let mut s = self.state();
        while s.applied < upto {
            if s.outcomes.is_none() {
                s.outcomes = Some(Interleaved::new(&self.log, &self.meta, results_stream, s.applied + 1)?);
            }
            let reader = s.outcomes.as_mut().expect("made above");
            let (m, bytes) = match reader.try_read()? {
                Some(message) => message,
                None => {
                    for a in appends.iter_mut() {
                        a.flush()?;
                    }
                    reader.read()?
                }
            };
            let out: Outcome = decode(&bytes, "partition outcome")?;
            if out.seq != m {
                return Err(ClusterError::OutOfStep { what: "a results stream", want: m, got: out.seq });
            }
            s.result(m, &out.result, self.theirs(m));
            let (mut mine, mut others) = (Vec::new(), Vec::new());
            for (seq, after, before) in out.revised {
                s.result(seq, &after, self.theirs(seq));
                if !self.theirs(seq) && self.theirs(m) {
                    mine.push(Revised { seq, after, before });
                } else {
                    others.push(seq);
                }
            }
            // Each forgets what the caches keep of the documents it names.
            if !mine.is_empty() {
                dd.store().put_revisions(m, &mine).map_err(DataDirError::from)?;
            }
            dd.store().revised_elsewhere(others);
            if self.theirs(m) {
                dd.index_added(m, &out.index)?;
            }
            s.applied = m;
        }
        Ok(())
    }
}

impl Elsewhere for Book {
    fn owns(&self, seq: u64) -> bool {
        !self.theirs(seq)
    }

    fn time(&self, seq: u64) -> ElsewhereResult<Option<i64>> {
        Ok(self.state().times.get(seq as usize - 1).copied())
    }

    fn text(&self, seq: u64) -> ElsewhereResult<Option<String>> {
        if let Some(t) = self.state().texts.get(&seq) {
            return Ok(Some(t.to_string()));
        }
        match self.log.get(DOCS, seq)? {
            Some(bytes) => Ok(Some(Doc::decode(&bytes)?.text)),
            None => Ok(None),
        }
    }

    fn result(&self, seq: u64) -> ElsewhereResult<Option<DocResult>> {
        Ok(self.state().results.get(&seq).cloned())
    }

    fn copiers_of(&self, origin: u64) -> ElsewhereResult<Vec<u64>> {
        Ok(self.state().copiers.get(&origin).map(|c| c.iter().copied().collect()).unwrap_or_default())
    }
}
