//! Schema 12 → 13 (`migrations/0013-compact-sketches.md`): a near-duplicate sketch's
//! min-values are the top 32 bits of the hashes they were (issue 34, decision 3), so a
//! stored sketch takes about half the bytes. The step rewrites every stored sketch whose
//! min-values are 64-bit; a re-run after a crash finds the rewritten ones 32-bit (all
//! below 2^32, which 84 random 64-bit values never all are) and leaves them. The
//! derived indexes' near-duplicate keys are hashes of the min-values: the table file of
//! the same release (format 3) is rebuilt by replay, which makes them from the rewritten
//! sketches, as a new document's are made.

use rocksdb::{IteratorMode, WriteBatch};
use textorigin_core::neardup::Sketch;

use crate::storage::store::codec::{decode, encode};
use crate::storage::store::{Result, Store, StoreError, CF_ND_SKETCH};

/// Documents rewritten per batch.
const BATCH: usize = 4096;

/// The sketch with 32-bit min-values, `None` when it has them already.
fn compact(s: &Sketch) -> Option<Sketch> {
    let wide = |v: &[u64]| v.iter().any(|&m| m >> 32 != 0);
    (wide(&s.mins) || wide(&s.coarse)).then(|| Sketch {
        mins: s.mins.iter().map(|&m| m >> 32).collect(),
        coarse: s.coarse.iter().map(|&m| m >> 32).collect(),
        ..s.clone()
    })
}

pub(super) fn run(store: &mut Store) -> Result<()> {
    let mut batch = WriteBatch::default();
    let mut pending = 0;
    for item in store.db.iterator_cf(store.cf(CF_ND_SKETCH.name), IteratorMode::Start) {
        let (key, bytes) = item.map_err(store.db_err())?;
        let sketch: Sketch = decode(&bytes).map_err(|reason| StoreError::Corrupt {
            path: store.path.clone(),
            what: "near-duplicate sketch".into(),
            reason,
        })?;
        if let Some(new) = compact(&sketch) {
            batch.put_cf(store.cf(CF_ND_SKETCH.name), &key, encode(&new));
            pending += 1;
        }
        if pending == BATCH {
            store.write(std::mem::take(&mut batch), false)?;
            pending = 0;
        }
    }
    store.write(batch, false)?;
    store.sync()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sketch_is_compacted_once() {
        let s = Sketch { exact: 1, mins: vec![u64::MAX, 5 << 32], simhash: vec![7], rate: 1, coarse: vec![3 << 40] };
        let c = compact(&s).unwrap();
        assert_eq!(
            (c.mins.clone(), c.coarse.clone(), c.simhash.clone()),
            (vec![u32::MAX as u64, 5], vec![3 << 8], vec![7])
        );
        assert_eq!(compact(&c), None, "a re-run leaves it");
        let empty = Sketch { mins: vec![], coarse: vec![], ..s };
        assert_eq!(compact(&empty), None);
    }
}
