//! The parameters a data directory opened for writing settles on: the stored ones,
//! or for a new one the requested ones; a requested difference is an error.

use std::path::Path;

use super::{DataDirError, Result};
use crate::storage::store::{Store, StoreError};
use textorigin_core::config::{Config, Overrides};
use textorigin_core::neardup::NearDupConfig;
use textorigin_core::quote::QuoteConfig;

/// The parameters a data directory uses: the stored ones (an explicitly requested
/// difference is an error), or, for a directory that has none yet, the requested ones
/// (else the defaults), validated and stored.
fn settle<T: Clone + PartialEq + std::fmt::Debug + Default>(
    dir: &Path,
    what: &'static str,
    stored: Option<T>,
    wanted: Option<&T>,
    validate: impl Fn(&T) -> std::result::Result<(), String>,
    put: impl FnOnce(&T) -> std::result::Result<(), StoreError>,
) -> Result<T> {
    match (stored, wanted) {
        (Some(stored), Some(wanted)) if stored != *wanted => Err(DataDirError::ParamsDiffer {
            dir: dir.to_path_buf(),
            what,
            stored: format!("{stored:?}"),
            requested: format!("{wanted:?}"),
        }),
        (Some(stored), _) => Ok(stored),
        (None, wanted) => {
            let c = wanted.cloned().unwrap_or_default();
            validate(&c).map_err(DataDirError::InvalidParams)?;
            put(&c)?;
            Ok(c)
        }
    }
}

/// The near-duplicate and quotation parameters of a data directory opened for writing
/// ([`settle`]).
pub(super) fn settle_features(
    dir: &Path,
    store: &Store,
    overrides: &Overrides,
) -> Result<(NearDupConfig, QuoteConfig)> {
    let nd_cfg = settle(
        dir,
        "near-duplicate",
        store.stored_neardup_config()?,
        overrides.neardup.as_ref(),
        NearDupConfig::validate,
        |c| store.put_neardup_config(c),
    )?;
    let q_cfg = settle(
        dir,
        "quotation",
        store.stored_quote_config()?,
        overrides.quotes.as_ref(),
        QuoteConfig::validate,
        |c| store.put_quote_config(c),
    )?;
    Ok((nd_cfg, q_cfg))
}

/// An error naming the `rebuild` that switches a feature when `wanted` switches one
/// that `stored` has otherwise.
pub(super) fn refuse_feature_switch(dir: &Path, stored: &Config, wanted: &Config) -> Result<()> {
    let switch = |feature, flag, on| DataDirError::FeatureSwitch { dir: dir.to_path_buf(), feature, flag, on };
    if stored.near_duplicates != wanted.near_duplicates {
        return Err(switch("near-duplicates", "neardup", wanted.near_duplicates));
    }
    if stored.quotations != wanted.quotations {
        return Err(switch("quotations", "quotes", wanted.quotations));
    }
    if stored.origins != wanted.origins {
        return Err(switch("origins", "origins", wanted.origins));
    }
    if stored.exact_copies != wanted.exact_copies {
        return Err(switch("exact copies answered from their earlier documents", "exact-copies", wanted.exact_copies));
    }
    Ok(())
}
