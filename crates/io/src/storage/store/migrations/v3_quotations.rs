//! Schema 2 → 3 (`migrations/0003-quotations.md`): indexes every stored document's
//! sentences and finds its quotations, in sequence order, exactly as ingestion does.

use rocksdb::WriteBatch;
use textorigin_core::quote;
use textorigin_core::rabin::Rabin;
use textorigin_core::text::tokenize;

use crate::storage::store::meta::MetaKey;
use crate::storage::store::{DocMeta, Result, Store, CF_Q_DF, CF_Q_INDEX};

pub(super) fn run(store: &Store) -> Result<()> {
    let cfg = store.quote_config()?;
    store.put_quote_config(&cfg)?;
    // Idempotent: start from empty counts (a re-run overwrites what a crash left).
    let mut b = WriteBatch::default();
    b.delete_range_cf(store.cf(CF_Q_DF), &[0u8; 8][..], &[0xffu8; 9][..]);
    b.delete_range_cf(store.cf(CF_Q_INDEX), &[0u8; 1][..], &[0xffu8; 1][..]);
    store.put_meta_u64(&mut b, MetaKey::QuoteDocs, 0);
    store.write(b, false)?;
    store.caches.df.clear();
    let rabin = Rabin::new(1);
    let mut tokens = Vec::new();
    let metas: Vec<DocMeta> = store.docs().collect::<Result<_>>()?;
    for meta in metas {
        let text = store.text(meta.seq)?.unwrap_or_default();
        tokenize(&text, &rabin, &mut tokens);
        let q = store.quote_write(&cfg, meta.seq, quote::sentences(&text, &tokens))?;
        let mut b = WriteBatch::default();
        store.add_quotes(&mut b, &cfg, meta.seq, &q);
        store.write(b, false)?;
        store.caches.put_df(&q.df);
    }
    store.sync()
}
