//! Schema 15 → 16 (`migrations/0016-recomputed-from-text.md`): sentences and
//! near-duplicate sketches are computed again from the stored texts when read
//! (`crate::storage::recompute`). The step deletes every stored sketch, and every
//! document's stored sentences, that this build computes alike from the text, and
//! keeps the others, which reads prefer; a re-run after a crash finds fewer to
//! compare.

use rocksdb::{IteratorMode, WriteBatch};
use textorigin_core::quote::QuoteConfig;

use crate::storage::recompute::Recomputer;
use crate::storage::store::codec::be_u64;
use crate::storage::store::{Result, Store, StoreError, CF_ND_SKETCH, CF_Q_SENT, CF_TEXT};

/// Documents per batch of the step.
const BATCH: usize = 4096;

pub(super) fn run(store: &mut Store) -> Result<()> {
    let (sketches, sentences) = drop_recomputable(store)?;
    if sketches + sentences > 0 {
        tracing::warn!(
            sketches,
            documents_sentences = sentences,
            "kept what an older build computed otherwise than this one (reads prefer it)"
        );
    }
    Ok(())
}

/// Deletes every stored sketch and every document's stored sentences that recomputing
/// from the text gives again, keeps the others, and compacts both column families.
/// Returns (sketches, documents' sentences) kept.
pub(crate) fn drop_recomputable(store: &Store) -> Result<(u64, u64)> {
    // The data directory's terms and near-duplicate configuration; splitting reads no
    // quotation setting (which sentences are indexed is decided after).
    let terms = store.config()?.unwrap_or_default().terms;
    let rc = Recomputer::new(terms, store.neardup_config()?, QuoteConfig::default());
    let mut kept = (0, 0);
    let mut batch = WriteBatch::default();
    let mut pending = 0;
    // One pass over the texts (keys and values read together).
    for item in store.scan(CF_TEXT, IteratorMode::Start) {
        let (k, text) = item?;
        let seq = be_u64(&k, 0);
        if let Some(stored) = store.stored_sketch(seq)? {
            if stored == rc.sketch_of(&text) {
                store.delete(&mut batch, CF_ND_SKETCH, &seq);
            } else {
                kept.0 += 1;
            }
        }
        let stored = store.stored_sentences(seq)?;
        if !stored.is_empty() {
            let split = rc.split(&text);
            if stored.iter().all(|(idx, s)| split.get(*idx as usize) == Some(s)) {
                store.delete_range(&mut batch, CF_Q_SENT, &(seq, 0), &(seq + 1, 0));
            } else {
                kept.1 += 1;
            }
        }
        pending += 1;
        if pending == BATCH {
            store.write(std::mem::take(&mut batch), false)?;
            step_failpoint(store)?;
            pending = 0;
        }
    }
    store.write(batch, false)?;
    store.sync()?;
    step_failpoint(store)?;
    // Their files go now, not at some later compaction.
    for cf in [CF_ND_SKETCH.name, CF_Q_SENT.name] {
        store.db.compact_range_cf(store.cf(cf), None::<&[u8]>, None::<&[u8]>);
    }
    store.note_kept();
    Ok(kept)
}

/// A crash or an error between the step's batches, or after its last one (before the
/// stamp), for the crash tests.
fn step_failpoint(store: &Store) -> Result<()> {
    crate::failpoint::hit("upgrade.recomputed").map_err(|source| StoreError::Io { path: store.path.clone(), source })
}
