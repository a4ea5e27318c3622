//! Schema 23 → 24 (`migrations/0024-guests.md`): with the adaptive density the table's
//! extra entries are guests from now on (issue 79, item 3: the policy's entries are the
//! paper's table's, and the first raise goes to the floor), so replaying a document
//! stored before gives another result than the one stored. The step records the first
//! document of the new rule; recovery and `rebuild` compare the results of the
//! documents after it only (`rebuild --reanalyse` makes every result the new rule's).

use textorigin_core::config::Density;

use crate::storage::store::meta::MetaKey;
use crate::storage::store::{Result, Store};

pub(super) fn run(store: &mut Store) -> Result<()> {
    if super::v25_submitted_sites::config_v24(store)?.is_none_or(|c| c.density != Density::Adaptive) {
        return Ok(());
    }
    let mut b = rocksdb::WriteBatch::default();
    store.put_meta_u64(&mut b, MetaKey::GuestsFrom, store.next_seq()?);
    store.write(b, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::store::codec::encode;
    use crate::storage::store::CF_META;
    use textorigin_core::config::Config;

    fn store_with(density: Density, next: u64) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut b = rocksdb::WriteBatch::default();
        // As schema 23 wrote it: without the last byte, schema 25's.
        let config = encode(&Config { density, ..Config::default() });
        b.put_cf(store.cf(CF_META.name), MetaKey::Config.bytes(), &config[..config.len() - 1]);
        store.put_meta_u64(&mut b, MetaKey::NextSeq, next);
        store.write(b, true).unwrap();
        (dir, store)
    }

    #[test]
    fn an_adaptive_directory_replays_the_documents_it_adds_from_now_on() {
        let (_dir, mut store) = store_with(Density::Adaptive, 42);
        assert_eq!(store.guests_from().unwrap(), 1);
        run(&mut store).unwrap();
        assert_eq!(store.guests_from().unwrap(), 42);
        run(&mut store).unwrap();
        assert_eq!(store.guests_from().unwrap(), 42, "the step is idempotent");
    }

    #[test]
    fn the_papers_density_and_an_empty_store_change_nothing() {
        let (_dir, mut store) = store_with(Density::Paper, 42);
        run(&mut store).unwrap();
        assert_eq!(store.guests_from().unwrap(), 1);
        let dir = tempfile::tempdir().unwrap();
        let mut empty = Store::open(dir.path()).unwrap();
        run(&mut empty).unwrap();
        assert_eq!(empty.guests_from().unwrap(), 1);
    }
}
