//! Where phases 1 and 3 of the engine (the table's lookups, inserts, evictions,
//! propagation and Lucky scores) run for a data directory: on its own table
//! ([`Local`], every command but the cluster's), or on the shard workers of a sharded
//! deployment, whose answers reach the aggregator through a log (`textorigin-cluster`,
//! `docs/SCALE-OUT.md`). Estimation (phase 2) and everything after it run in the data
//! directory's process either way.

use textorigin_core::engine::{Engine, Feedback, Prepared, Probe, When};
use textorigin_core::index::IndexAnswers;
use textorigin_core::table::{Hit, Table};

use crate::storage::table_file::Mapped;

/// A failure of a stage that is not this process's own (a log unreachable, a shard's
/// answer that does not fit).
pub type StageError = Box<dyn std::error::Error + Send + Sync>;

/// Phases 1 and 3 of the engine for the data directory's documents, in order.
pub trait TableStage: Send + Sync {
    /// The density threshold document `seq`, the next one, selects its shingles at,
    /// and, for a table elsewhere, the asks for a raise its probes made there (the
    /// feedback carries them, [`Feedback::asks`]): the table's threshold in force and
    /// `None` (it counts its own asks) where the table is here. A deployment's shard
    /// workers say both in their answers, read before the probe.
    fn density(&mut self, table: &Table<Mapped>, seq: u64) -> Result<(u8, Option<u64>), StageError> {
        let _ = seq;
        Ok((table.density(), None))
    }

    /// Phase 1 for document `seq`, `doc`: what each of its selected shingles found, in
    /// order; an entry whose origin `when` puts after the document is taken over where
    /// the stage can.
    fn probe(
        &mut self,
        engine: &Engine,
        doc: &Prepared,
        table: &mut Table<Mapped>,
        seq: u64,
        when: When<'_>,
    ) -> Result<Vec<Option<Hit>>, StageError>;

    /// The documents whose entries the last probe took over: ascending,
    /// each once; none where the stage takes nothing over.
    fn taken(&self) -> Vec<u64> {
        Vec::new()
    }

    /// Phase 3 for the same document, given its estimate's feedback; `table`'s counters
    /// of applied documents move on either way.
    fn score(&mut self, engine: &Engine, table: &mut Table<Mapped>, feedback: &Feedback) -> Result<(), StageError>;

    /// What each selected shingle of `doc` (kept at the threshold it was selected at)
    /// finds in the table now, without
    /// changing anything: what re-analysing stored document `seq` for a revision needs
    /// ([`Engine::reanalyse_found`]). On a table elsewhere, only for the documents the
    /// last [`TableStage::score`]'s feedback listed ([`Feedback::revise`]).
    fn lookups(&mut self, doc: &Prepared, table: &Table<Mapped>, seq: u64) -> Result<Vec<Option<Hit>>, StageError> {
        let _ = seq;
        Ok(doc.items().iter().map(|it| table.lookup(it.fp).map(|(_, h)| h)).collect())
    }

    /// Whether the table is elsewhere: the feedback then lists the documents the
    /// take-overs revise, with their shingles ([`Feedback::revise`]), for
    /// [`TableStage::lookups`] to be answered; and the signature and near-duplicate
    /// sections of the derived indexes are there too (the data directory's region
    /// counts the words only: [`TableStage::index_answers`]).
    fn elsewhere(&self) -> bool {
        false
    }

    /// What the holders of the signature and near-duplicate sections answer to the
    /// searches of document `seq`, the next one (a deployment's shard
    /// workers, each for its part, merged), read before its probe; `None` where the
    /// data directory's own region holds them (every stage not [`elsewhere`]).
    ///
    /// [`elsewhere`]: TableStage::elsewhere
    fn index_answers(&mut self, seq: u64) -> Result<Option<IndexAnswers>, StageError> {
        let _ = seq;
        Ok(None)
    }

    /// What the data directory keeps in document `seq`'s batch for the stage's restart
    /// (a deployment's partition: the document's feedback, which it appends again when
    /// the log lacks it; [`Store::stage_record`](crate::storage::store::Store::stage_record)).
    fn record(&mut self, seq: u64) -> Option<Vec<u8>> {
        let _ = seq;
        None
    }

    /// Waits until what [`TableStage::score`] sent is durable where it went (a sharded
    /// deployment's feedback, acknowledged by its log). The data directory calls it
    /// before a checkpoint slot or a clean close puts its documents beyond a replay.
    fn flush(&mut self) -> Result<(), StageError> {
        Ok(())
    }
}

/// The single node: phases 1 and 3 on the data directory's own table.
#[derive(Debug, Default)]
pub struct Local {
    probe: Probe,
}

impl TableStage for Local {
    fn probe(
        &mut self,
        engine: &Engine,
        doc: &Prepared,
        table: &mut Table<Mapped>,
        seq: u64,
        when: When<'_>,
    ) -> Result<Vec<Option<Hit>>, StageError> {
        self.probe = engine.probe(table, doc, seq, when);
        Ok(self.probe.hits.clone())
    }

    fn taken(&self) -> Vec<u64> {
        self.probe.taken.clone()
    }

    fn score(&mut self, engine: &Engine, table: &mut Table<Mapped>, feedback: &Feedback) -> Result<(), StageError> {
        engine.score(table, &self.probe, feedback);
        Ok(())
    }
}
