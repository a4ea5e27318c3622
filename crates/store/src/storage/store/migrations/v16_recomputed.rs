//! Schema 15 → 16 (`migrations/0016-recomputed-from-text.md`): sentences and
//! near-duplicate sketches are computed again from the stored texts when read (issue
//! 34, decision 3; [`super::super::recompute`]). The step deletes every stored sketch,
//! and every document's stored sentences, that this build computes alike from the
//! text, and keeps the others, which reads prefer; a re-run after a crash finds fewer
//! to compare.

use super::super::{Result, Store};

pub(super) fn run(store: &mut Store) -> Result<()> {
    let (sketches, sentences) = store.drop_recomputable()?;
    if sketches + sentences > 0 {
        tracing::warn!(
            sketches,
            documents_sentences = sentences,
            "kept what an older build computed otherwise than this one (reads prefer it)"
        );
    }
    Ok(())
}
