//! Schema 21 → 22 (`migrations/0022-exact-index.md`): the quotation configuration gains
//! `exact_index`, written `false` for an existing data directory: its index holds each
//! signature under every piece, in chains, where the new layout holds it once, in a
//! bucket a hash of all its bits picks, and a search through one layout finds nothing of
//! the other. The stamp keeps older builds, which cannot read the longer configuration,
//! out.

use serde::Deserialize;
use textorigin_core::quote::QuoteConfig;

use super::rewrite_meta;
use super::v12_clauses::{quote_config_of_v11, QuoteConfigV11};
use crate::storage::store::meta::MetaKey;
use crate::storage::store::{Result, Store};

/// The quotation configuration as schemas 12 to 21 stored it: schema 11's fields, then
/// `clauses`.
#[derive(Deserialize)]
struct QuoteConfigV21 {
    v11: QuoteConfigV11,
    clauses: bool,
}

pub(super) fn run(store: &mut Store) -> Result<()> {
    rewrite_meta(store, MetaKey::QuoteConfig, "quote config", |o: QuoteConfigV21| QuoteConfig {
        clauses: o.clauses,
        ..quote_config_of_v11(o.v11)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::store::codec::encode;
    use crate::storage::store::CF_META;

    #[test]
    fn a_schema_21_quote_config_keeps_the_index_in_pieces_and_every_other_setting() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path()).unwrap();
        let made = QuoteConfig { max_sources: 7, clauses: true, exact_index: false, ..QuoteConfig::default() };
        // Schema 21 wrote the fields up to `clauses`: the new one is one byte.
        let full = encode(&made);
        let v21 = &full[..full.len() - 1];
        let mut b = rocksdb::WriteBatch::default();
        b.put_cf(store.cf(CF_META.name), MetaKey::QuoteConfig.bytes(), v21);
        store.write(b, true).unwrap();
        assert!(store.stored_quote_config().is_err(), "a schema 21 quote config does not read as this one");
        run(&mut store).unwrap();
        assert_eq!(store.stored_quote_config().unwrap().unwrap(), made);
        // Run again (a crash after the rewrite): left as it is.
        run(&mut store).unwrap();
        assert_eq!(store.stored_quote_config().unwrap().unwrap(), made);
    }
}
