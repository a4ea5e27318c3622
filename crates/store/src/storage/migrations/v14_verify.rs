//! Schema 13 → 14 (`migrations/0014-near-duplicate-verification.md`): the near-duplicate
//! configuration gains `verify` (issue 35), written `false` for an existing data
//! directory, whose stored verdicts were decided by the estimate alone: a re-analysis
//! decides as they were decided. The stamp keeps older builds, which cannot read the
//! longer configuration, out.

use serde::Deserialize;
use textorigin_core::neardup::NearDupConfig;

use super::rewrite_meta;
use crate::storage::store::meta::MetaKey;
use crate::storage::store::{Result, Store};

/// The near-duplicate configuration as schemas 2 to 13 stored it.
#[derive(Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
struct NearDupConfigV13 {
    k: u32,
    minhashes: u32,
    supershingles: u32,
    b_min_agree: u32,
    simhash_bits: u32,
    c_threshold: u32,
    combined_threshold: u32,
    threshold: f64,
    margin: f64,
    bands: u32,
    rows: u32,
    sampling: Vec<(u32, u32)>,
    seed: u64,
    max_per_key: u32,
}

pub(super) fn run(store: &mut Store) -> Result<()> {
    rewrite_meta(store, MetaKey::NeardupConfig, "near-duplicate config", |o: NearDupConfigV13| NearDupConfig {
        k: o.k,
        minhashes: o.minhashes,
        supershingles: o.supershingles,
        b_min_agree: o.b_min_agree,
        simhash_bits: o.simhash_bits,
        c_threshold: o.c_threshold,
        combined_threshold: o.combined_threshold,
        threshold: o.threshold,
        margin: o.margin,
        bands: o.bands,
        rows: o.rows,
        sampling: o.sampling,
        seed: o.seed,
        max_per_key: o.max_per_key,
        verify: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What schema 13 wrote: the papers' setting of the defaults before issue 35.
    fn old() -> NearDupConfigV13 {
        let c = NearDupConfig::default().tuned(8, 0.9);
        NearDupConfigV13 {
            k: c.k,
            minhashes: c.minhashes,
            supershingles: c.supershingles,
            b_min_agree: c.b_min_agree,
            simhash_bits: c.simhash_bits,
            c_threshold: c.c_threshold,
            combined_threshold: c.combined_threshold,
            threshold: c.threshold,
            margin: c.margin,
            bands: c.bands,
            rows: c.rows,
            sampling: c.sampling,
            seed: c.seed,
            max_per_key: c.max_per_key,
        }
    }

    #[test]
    fn an_existing_configuration_keeps_deciding_by_the_estimate() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path()).unwrap();
        store.put_meta_value(MetaKey::NeardupConfig, &old()).unwrap();
        assert!(store.stored_neardup_config().is_err(), "schema 13's configuration does not read as schema 14's");
        for _ in 0..2 {
            // A re-run after a crash leaves the rewritten configuration.
            run(&mut store).unwrap();
            let c = store.neardup_config().unwrap();
            assert_eq!(c, NearDupConfig { verify: false, ..NearDupConfig::default().tuned(8, 0.9) });
        }
    }
}
