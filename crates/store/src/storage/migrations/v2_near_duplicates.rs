//! Schema 1 → 2 (`migrations/0002-near-duplicates.md`): computes the near-duplicate
//! sketch and verdicts of every stored document, in sequence order, exactly as
//! ingestion does (candidates from a scratch index in memory; since schema 6 the index
//! itself lives in the table file and is rebuilt with it).

use rocksdb::WriteBatch;
use textorigin_core::index::IndexAdd;
use textorigin_core::neardup;
use textorigin_core::rabin::Rabin;
use textorigin_core::text::{tokenize, Terms};

use crate::storage::recompute::Recomputer;
use crate::storage::search;
use crate::storage::store::{DocMeta, Result, Store};

pub(super) fn run(store: &mut Store) -> Result<()> {
    let cfg = store.neardup_config()?;
    let q = store.quote_config()?;
    // The earlier documents' sketches this step reads are computed from their texts
    // (schema 16), split by words as schemas before 11 did.
    let rc = Recomputer::new(Terms::Words, cfg.clone(), q.clone());
    let mut indexes = super::scratch_indexes(&q);
    store.put_neardup_config(&cfg)?;
    let rabin = Rabin::new(cfg.k as usize);
    let mut tokens = Vec::new();
    let metas: Vec<DocMeta> = store.docs().collect::<Result<_>>()?;
    for meta in metas {
        let text = store.text(meta.seq)?.unwrap_or_default();
        tokenize(&text, &rabin, &mut tokens);
        let nd =
            search::near_dups(store, &rc, meta.seq, neardup::sketch(&cfg, &tokens, &rabin), &indexes, |_| false, None)?;
        indexes.add(&q, meta.seq, &IndexAdd { nd_keys: nd.keys.clone(), ..IndexAdd::default() });
        let mut b = WriteBatch::default();
        store.add_near_dups(&mut b, meta.seq, &nd);
        store.write(b, false)?;
    }
    store.sync()
}
