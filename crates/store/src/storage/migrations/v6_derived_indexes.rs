//! Schema 5 → 6 (`migrations/0006-derived-indexes.md`): the derived indexes leave
//! RocksDB. The configuration gains `index_bytes` (the default for its table size; in
//! schema 6's encoding, which schema 7 extends), the
//! column families `nd_index`, `q_index` and `q_df` and the counter `q_docs` are
//! dropped. The table file, format 1 without the index region, is rebuilt by replay
//! when the data directory is next opened for writing (`DataDir`), which fills the
//! region from the stored documents.

use rocksdb::WriteBatch;
use serde::Deserialize;
use textorigin_core::config::default_index_bytes;
use textorigin_core::estimate::Estimation;
use textorigin_core::select::Selection;
use textorigin_core::table::Eviction;

use super::rewrite_meta;
use super::v7_origin_options::ConfigV6;
use crate::storage::store::meta::MetaKey;
use crate::storage::store::{Result, Store, CF_META, LEGACY_CFS};

/// The configuration as schemas 1-5 stored it (postcard: field order matters).
#[derive(Deserialize)]
struct ConfigV5 {
    k: u32,
    selection: Selection,
    eviction: Eviction,
    estimation: Estimation,
    bridge_limit: u32,
    table_bytes: u64,
    bucket_entries: u32,
    seed: u64,
    lucky_y: u32,
    lucky_limit: u8,
}

pub(super) fn run(store: &mut Store) -> Result<()> {
    rewrite_meta(store, MetaKey::Config, "config", |old: ConfigV5| ConfigV6 {
        k: old.k,
        selection: old.selection,
        eviction: old.eviction,
        estimation: old.estimation,
        bridge_limit: old.bridge_limit,
        table_bytes: old.table_bytes,
        bucket_entries: old.bucket_entries,
        seed: old.seed,
        lucky_y: old.lucky_y,
        lucky_limit: old.lucky_limit,
        index_bytes: default_index_bytes(old.table_bytes),
    })?;
    let mut b = WriteBatch::default();
    b.delete_cf(store.cf(CF_META.name), MetaKey::QuoteDocs.bytes());
    store.write(b, true)?;
    for name in LEGACY_CFS {
        if store.db.cf_handle(name).is_some() {
            store.db.drop_cf(name).map_err(store.db_err())?;
        }
    }
    Ok(())
}
