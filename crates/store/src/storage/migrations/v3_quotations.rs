//! Schema 2 → 3 (`migrations/0003-quotations.md`): finds every stored document's
//! quotations and stores its indexed sentences, in sequence order, exactly as ingestion
//! does (signatures and frequencies in a scratch index in memory; since schema 6 they
//! live in the table file and are rebuilt with it).

use rocksdb::WriteBatch;
use textorigin_core::index::IndexAdd;
use textorigin_core::neardup::NearDupConfig;
use textorigin_core::quote;
use textorigin_core::rabin::Rabin;
use textorigin_core::text::{tokenize, Terms};

use crate::storage::recompute::Recomputer;
use crate::storage::search;
use crate::storage::store::{DocMeta, Result, Store};

pub(super) fn run(store: &mut Store) -> Result<()> {
    let cfg = store.quote_config()?;
    store.put_quote_config(&cfg)?;
    // The earlier documents' sentences this step reads are split again from their
    // texts (schema 16), by words as schemas before 11 did (it reads no sketch: the
    // near-duplicate configuration is not used).
    let rc = Recomputer::new(Terms::Words, NearDupConfig::default(), cfg.clone());
    let mut indexes = super::scratch_indexes(&cfg);
    let rabin = Rabin::new(1);
    let mut tokens = Vec::new();
    let metas: Vec<DocMeta> = store.docs().collect::<Result<_>>()?;
    for meta in metas {
        let text = store.text(meta.seq)?.unwrap_or_default();
        tokenize(&text, &rabin, &mut tokens);
        let q =
            search::quotations(store, &rc, meta.seq, quote::sentences(&text, &tokens, Terms::Words), &indexes, |_| {
                false
            })?;
        indexes.add(&cfg, meta.seq, &IndexAdd::found(Some(&q), Vec::new()));
        let mut b = WriteBatch::default();
        store.add_quotes(&mut b, meta.seq, &q);
        store.write(b, false)?;
    }
    store.sync()
}
