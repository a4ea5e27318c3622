//! Schema 8 → 9 (`migrations/0009-revisions.md`): the column families `copiers` (who
//! copied from whom) and `revisions` (results a late original changed) of issue 25.
//! Opening creates both; this step fills `copiers` from every stored result, in batches,
//! so that a document published before what it finds revises the copies stored before
//! this build too. Idempotent: a re-run writes the same keys.

use rocksdb::WriteBatch;

use crate::storage::store::{Result, Store};

pub(super) fn run(store: &mut Store) -> Result<()> {
    let mut b = WriteBatch::default();
    for meta in store.docs() {
        let seq = meta?.seq;
        if let Some(result) = store.result(seq)? {
            store.add_copiers(&mut b, seq, &result);
        }
        if b.len() >= 10_000 {
            store.write(std::mem::take(&mut b), false)?;
        }
    }
    store.write(b, true)
}
