//! The store's upgrade steps, in order (the ledger is `migrations/` at the top of the
//! repository; each step has a file there and a module here), run above the store:
//! [`open`] opens a store of any schema and runs them (the data directory opens its
//! store so), [`Store::open`] refuses an older one. Two steps search the stored
//! documents as ingestion does (`crate::storage::search`).
//!
//! A step is idempotent and may write several batches; the new version is stamped
//! after it completes, so a crash during an upgrade re-runs the step. A store newer
//! than this build is refused, never downgraded.

mod v11_terms;
mod v12_clauses;
mod v13_sketches;
mod v14_verify;
pub(crate) mod v16_recomputed;
mod v17_density;
mod v20_html;
mod v21_templates;
mod v22_exact_index;
mod v23_density_lag;
mod v24_guests;
mod v25_submitted_sites;
mod v26_origins;
mod v27_site_field;
mod v28_exact_copies;
mod v2_near_duplicates;
mod v3_quotations;
mod v6_derived_indexes;
mod v7_origin_options;
mod v8_feature_switches;
mod v9_revisions;

use rocksdb::WriteBatch;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::storage::store::codec::decode;
use crate::storage::store::meta::MetaKey;
use crate::storage::store::{Result, Store, StoreError, CF_META, SCHEMA_VERSION};

/// An upgrade step from `from` to `from + 1`.
pub struct Migration {
    /// The version it upgrades from.
    pub from: u32,
    /// What it does, for the log.
    pub what: &'static str,
    /// The step.
    pub run: fn(&mut Store) -> Result<()>,
}

/// The ordered upgrade steps.
pub const MIGRATIONS: &[Migration] = &[
    Migration { from: 1, what: "near-duplicate sketches, indexes and verdicts", run: v2_near_duplicates::run },
    Migration {
        from: 2,
        what: "quotation sentences, signatures, document frequencies and matches",
        run: v3_quotations::run,
    },
    // Schema 4 only adds the column families `admitted` and `failed`, which opening creates.
    Migration {
        from: 3,
        what: "spool admission and failure records (new column families, nothing to fill)",
        run: |_| Ok(()),
    },
    // Schema 5 admission records carry a failed count; 8-byte records still read (as 0
    // failed). The stamp keeps older builds, which cannot read 12-byte records, out.
    Migration {
        from: 4,
        what: "admission records with a failed count (old records read as they are)",
        run: |_| Ok(()),
    },
    Migration {
        from: 5,
        what: "derived indexes move to the table file (index_bytes in the config; nd_index, q_index, q_df dropped)",
        run: v6_derived_indexes::run,
    },
    Migration {
        from: 6,
        what: "origin propagation and alignment in the config (off for an existing data directory)",
        run: v7_origin_options::run,
    },
    Migration {
        from: 7,
        what: "near-duplicate and quotation switches in the config (on for an existing data directory)",
        run: v8_feature_switches::run,
    },
    Migration {
        from: 8,
        what: "who copied from whom (the copiers column family, filled from the stored results) and revisions",
        run: v9_revisions::run,
    },
    // Schema 10 only adds the column families `nd_late` and `q_late`, which opening creates.
    Migration {
        from: 9,
        what: "near-duplicate and quotation pairs oriented by publication (new column families, nothing to fill)",
        run: |_| Ok(()),
    },
    Migration {
        from: 10,
        what: "terms in the config (runs of letters and digits, as before, for an existing data directory)",
        run: v11_terms::run,
    },
    Migration {
        from: 11,
        what: "clauses in the quotation config (off for an existing data directory)",
        run: v12_clauses::run,
    },
    Migration {
        from: 12,
        what: "near-duplicate sketches with 32-bit min-values (half the bytes; verdicts as before)",
        run: v13_sketches::run,
    },
    Migration {
        from: 13,
        what: "exact verification of near-duplicate pairs near the threshold in the config (off for an existing data directory)",
        run: v14_verify::run,
    },
    // Schema 15 only adds the column family `failed_docs`, which opening creates.
    Migration {
        from: 14,
        what: "failed input documents by their source (a new column family, nothing to fill)",
        run: |_| Ok(()),
    },
    Migration {
        from: 15,
        what: "sentences and near-duplicate sketches computed again from the stored texts (those this build computes alike deleted)",
        run: v16_recomputed::run,
    },
    Migration {
        from: 16,
        what: "selection density and dominant origin in the config (the paper's and the table's for an existing data directory)",
        run: v17_density::run,
    },
    // Schema 18 only adds the column family `stage`, which opening creates.
    Migration {
        from: 17,
        what: "what a deployment's partition keeps with each document for a restart (a new column family, nothing to fill)",
        run: |_| Ok(()),
    },
    // Schema 19 only adds the column family `book`, which opening creates.
    Migration {
        from: 18,
        what: "what a deployment's partition keeps of the other partitions' documents (a new column family, nothing to fill)",
        run: |_| Ok(()),
    },
    Migration {
        from: 19,
        what: "what of an HTML page is its text in the config (every visible text, as before, for an existing data directory)",
        run: v20_html::run,
    },
    Migration {
        from: 20,
        what: "whose site templates are labelled in the config (none, as before, for an existing data directory)",
        run: v21_templates::run,
    },
    Migration {
        from: 21,
        what: "the quotation index laid out for exact searches in the quotation config (off for an existing data directory)",
        run: v22_exact_index::run,
    },
    Migration {
        from: 22,
        what: "the adaptive density's lag in the config (raised at once, as before, for an existing data directory)",
        run: v23_density_lag::run,
    },
    Migration {
        from: 23,
        what: "the first document the adaptive density's extra entries are guests for (results stored before kept)",
        run: v24_guests::run,
    },
    Migration {
        from: 24,
        what: "whether submitted documents name their sites in the config (trusted, as before, for an existing data directory)",
        run: v25_submitted_sites::run,
    },
    Migration {
        from: 25,
        what: "origins on or off in the config (on, as before, for an existing data directory)",
        run: v26_origins::run,
    },
    Migration {
        from: 26,
        what: "the metadata field naming a document's site in the config (`site`, as before, for an existing data directory)",
        run: v27_site_field::run,
    },
    Migration {
        from: 27,
        what: "exact copies answered from their earlier document in the config (off, as before, for an existing data directory; the column families `tokens` and `copy_of`, which opening creates)",
        run: v28_exact_copies::run,
    },
];

/// The configuration a store holding `old` (an older schema's encoding, which does not
/// read as today's) holds after the step `run`, run twice as after a crash following its
/// rewrite: the second run leaves it as the first wrote it.
#[cfg(test)]
fn config_after(old: &[u8], run: fn(&mut Store) -> Result<()>) -> textorigin_core::config::Config {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path()).unwrap();
    let mut b = rocksdb::WriteBatch::default();
    b.put_cf(store.cf(CF_META.name), MetaKey::Config.bytes(), old);
    store.write(b, true).unwrap();
    assert!(store.config().is_err(), "the older config does not read as this one");
    run(&mut store).unwrap();
    let cfg = store.config().unwrap().unwrap();
    run(&mut store).unwrap();
    assert_eq!(store.config().unwrap().unwrap(), cfg, "a second run left it as it was");
    cfg
}

/// Rewrites the meta value under `key` from an older encoding `Old` to `New` with
/// `convert` (a synced write). An absent value, and one that already reads as `New`
/// (a re-run after a crash), are left as they are; one that reads as neither is corrupt.
fn rewrite_meta<Old: DeserializeOwned, New: Serialize + DeserializeOwned>(
    store: &Store,
    key: MetaKey,
    what: &str,
    convert: impl FnOnce(Old) -> New,
) -> Result<()> {
    let Some(bytes) = store.read(CF_META, key.bytes())? else { return Ok(()) };
    if decode::<New>(&bytes).is_ok() {
        return Ok(());
    }
    let old: Old =
        decode(&bytes).map_err(|reason| StoreError::Corrupt { path: store.path.clone(), what: what.into(), reason })?;
    store.put_meta_value(key, &convert(old))
}

/// A scratch index in memory for the steps that recompute results in sequence order
/// (schemas 2 and 3): large enough that the stores these steps meet evict nothing.
fn scratch_indexes(q: &textorigin_core::quote::QuoteConfig) -> textorigin_core::index::Indexes<Vec<u8>> {
    textorigin_core::index::Indexes::in_memory(textorigin_core::config::default_index_bytes(256 << 20), q)
        .expect("the default index size is valid")
}

/// Opens the store at `path` for writing and brings it to [`SCHEMA_VERSION`]: stamps a
/// new store, runs the steps of an older one, refuses a newer one (what
/// [`Store::open`] does but for the steps, which read the store through the searches
/// and recomputations above it).
pub fn open(path: &std::path::Path) -> Result<Store> {
    let mut store = Store::open_any_schema(path)?;
    let mut v = store.schema_behind()?.unwrap_or(SCHEMA_VERSION);
    while v < SCHEMA_VERSION {
        let step = MIGRATIONS
            .iter()
            .find(|m| m.from == v)
            .ok_or(StoreError::NoMigration { path: store.path().to_path_buf(), found: v })?;
        tracing::warn!(from = v, to = v + 1, step = step.what, "upgrading the store");
        (step.run)(&mut store)?;
        let mut b = WriteBatch::default();
        store.put_schema_version(&mut b, v + 1);
        store.write(b, true)?;
        v += 1;
    }
    store.settle()?;
    Ok(store)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store one schema behind: [`Store::open`] refuses it with nothing written and
    /// says how to upgrade; [`open`] runs the step and stamps this build's schema.
    #[test]
    fn only_the_upgrading_open_takes_an_older_store() {
        let dir = tempfile::tempdir().unwrap();
        {
            let s = Store::open(dir.path()).unwrap();
            let mut b = WriteBatch::default();
            s.put_schema_version(&mut b, SCHEMA_VERSION - 1);
            s.write(b, true).unwrap();
        }
        let err = Store::open(dir.path()).err().unwrap().to_string();
        assert!(err.contains("needs an upgrade") && err.contains("upgrade --data"), "{err}");
        assert_eq!(Store::open_any_schema(dir.path()).unwrap().schema_version().unwrap(), SCHEMA_VERSION - 1);
        assert_eq!(open(dir.path()).unwrap().schema_version().unwrap(), SCHEMA_VERSION);
        assert_eq!(Store::open(dir.path()).unwrap().schema_version().unwrap(), SCHEMA_VERSION);
    }
}
