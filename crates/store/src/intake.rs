//! How a document comes in: what a data directory refuses of one before analysing it,
//! checked in one place for the data directory itself and for those who ask ahead of
//! it (the daemon's HTTP submission, a deployment's submission), so that a document
//! accepted ahead is not refused later for another reason, nor the other way round.

use crate::input::date::parse_published;
use crate::input::InputDoc;
use crate::storage::datadir::DocError;

/// The publication time `doc` is ordered by (None: undated), or why a data directory
/// refuses it, in the order it checks: a text over 4 GiB, no term (`has_terms`: what
/// tokenizing it under the data directory's rule finds,
/// [`textorigin_core::text::has_terms`]), a `published_at` that is not a date unless
/// `undated_bad_dates` (then it is stored undated).
pub fn admissible(doc: &InputDoc, has_terms: bool, undated_bad_dates: bool) -> Result<Option<i64>, DocError> {
    if u32::try_from(doc.text.len()).is_err() {
        return Err(DocError::TooLong(doc.source.clone()));
    }
    if !has_terms {
        return Err(DocError::NoTokens(doc.source.clone()));
    }
    match doc.published_at.as_deref().map(parse_published).transpose() {
        Ok(p) => Ok(p),
        Err(_) if undated_bad_dates => Ok(None),
        Err(e) => Err(DocError::BadDate(doc.source.clone(), e)),
    }
}
