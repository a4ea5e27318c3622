//! The aggregator (`docs/SCALE-OUT.md`, "Per document"): a data directory like any
//! other — the inspector reads it, `export` writes it — whose table phases run on the
//! shard workers. For document `n` it takes the documents stream's message `n`, gathers
//! the S answers for it, runs estimation and appends the feedback (before it stores the
//! result: a result in the store always has its feedback in the log), then does what
//! `ingest` does after the table: near-duplicates, quotations, alignment, the derived
//! indexes, the store.
//!
//! Restart: the data directory recovers as `serve`'s does, from its newest checkpoint
//! slot (written now and then, as `serve` writes them) or an empty table, replaying the
//! stored documents after it with their answers read again from the log; feedback
//! already in the log is not appended again.

use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use textorigin_core::config::Overrides;
use textorigin_core::engine::{Engine, Feedback, Probe};
use textorigin_core::shard::merge_hits;
use textorigin_core::table::{Hit, Table};
use textorigin_io::input::InputDoc;
use textorigin_io::storage::datadir::{DataDir, DataDirError};
use textorigin_io::storage::stage::{StageError, TableStage};
use textorigin_io::storage::table_file::Mapped;

use crate::log::{Log, Reader};
use crate::wire::{decode, encode, hits_stream, subject, Answer, Doc, DOCS, FEEDBACK};
use crate::{read_meta, ClusterError, Result};

/// The table's phases on the shard workers, seen from the aggregator.
pub struct Remote {
    log: Log,
    shards: u32,
    state: Mutex<State>,
}

struct State {
    /// One reader per shard's answer stream, all at the same position (made at the
    /// first document asked for, and again when another one is).
    readers: Vec<Reader>,
    /// Documents whose feedback is in the log.
    published: u64,
}

impl Remote {
    /// The stage of a deployment of `shards` shards.
    pub fn new(log: &Log, shards: u32) -> Result<Remote> {
        let published = log.last_seq(FEEDBACK)?;
        Ok(Remote { log: log.clone(), shards, state: Mutex::new(State { readers: Vec::new(), published }) })
    }

    fn answers(&self, seq: u64, n: usize) -> Result<Vec<Option<Hit>>> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.readers.first().is_none_or(|r| r.position() != seq) {
            state.readers = (0..self.shards).map(|s| self.log.reader(&hits_stream(s), seq)).collect::<std::result::Result<_, _>>()?;
        }
        let mut probes = Vec::with_capacity(state.readers.len());
        for r in &mut state.readers {
            let (_, bytes) = r.read()?;
            let a: Answer = decode(&bytes, "shard answer")?;
            probes.push(Probe { items: a.items, hits: a.hits, ..Probe::default() });
        }
        Ok(merge_hits(n, &probes)?)
    }

    fn publish(&self, fb: &Feedback) -> Result<()> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if fb.seq > state.published {
            self.log.append(FEEDBACK, &subject(FEEDBACK), fb.seq, &encode(fb))?;
            state.published = fb.seq;
        }
        Ok(())
    }
}

impl TableStage for Remote {
    fn probe(&mut self, engine: &Engine, _table: &mut Table<Mapped>, seq: u64) -> std::result::Result<Vec<Option<Hit>>, StageError> {
        Ok(self.answers(seq, engine.selected())?)
    }

    fn score(&mut self, engine: &Engine, table: &mut Table<Mapped>, feedback: &Feedback) -> std::result::Result<(), StageError> {
        self.publish(feedback)?;
        // The aggregator's own table holds no buckets: only its document counters move.
        engine.score(table, &Probe::default(), feedback);
        Ok(())
    }
}

/// Runs the aggregator of the deployment in the log into the data directory `dir`
/// (made by `cluster init`) until document `until` is stored (forever without one),
/// writing a checkpoint slot (as `serve` does) at the first document boundary `every`
/// after the last. Returns the last document stored.
pub fn run(log: &Log, dir: &Path, until: Option<u64>, every: Duration, mut progress: impl FnMut(u64)) -> Result<u64> {
    let meta = read_meta(log)?;
    let mut stage = Remote::new(log, meta.shards)?;
    if let Some((from, replayed, mismatches)) = DataDir::recover_with(dir, &mut stage, |_, _| std::ops::ControlFlow::Continue(()))? {
        tracing::info!(from, replayed, mismatches, "recovered the data directory from the log");
    }
    let mut dd = DataDir::open_write_aggregator(dir, &Overrides::default())?;
    if *dd.config() != meta.config {
        return Err(ClusterError::MetaDiffers { stored: meta.config.canonical(), requested: dd.config().canonical() });
    }
    dd.set_stage(Box::new(stage));
    let mut preparer = dd.preparer();
    let mut last = dd.store.next_seq().map_err(DataDirError::from)? - 1;
    let mut docs = log.reader(DOCS, last + 1)?;
    let mut checkpointed = Instant::now();
    while until.is_none_or(|u| last < u) {
        let (seq, bytes) = docs.read()?;
        let doc: Doc = decode(&bytes, "document")?;
        let input = InputDoc {
            name: doc.name,
            source: doc.source,
            text: doc.text,
            url: doc.url,
            published_at: doc.published_at,
            warnings: Vec::new(),
            message_id: None,
            in_reply_to: Vec::new(),
        };
        let prepared = preparer.prepare(&input.text);
        let (stored, _) = dd.ingest_prepared(&input, prepared, None)?;
        if stored.seq != seq {
            return Err(ClusterError::OutOfStep { what: "the aggregator's store", want: seq, got: stored.seq });
        }
        last = seq;
        progress(seq);
        if checkpointed.elapsed() >= every {
            checkpointed = Instant::now();
            match dd.checkpoint() {
                // A slot that cannot be written (a full disk) costs recovery time only.
                Err(DataDirError::Checkpoint(e)) => tracing::warn!(error = %e, seq, "checkpoint failed; the previous one stays valid"),
                r => drop(r?),
            }
        }
    }
    dd.close()?;
    Ok(last)
}
