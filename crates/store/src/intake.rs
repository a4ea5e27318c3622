//! How a document comes in: what a data directory refuses of one before analysing it,
//! checked in one place for the data directory itself and for those who ask ahead of
//! it (the daemon's HTTP submission, a deployment's submission), so that a document
//! accepted ahead is not refused later for another reason, nor the other way round.

use crate::input::date::parse_published;
use crate::input::InputDoc;
use crate::storage::datadir::{Budget, DocError, DEFAULT_REVISION_BUDGET, DEFAULT_TAKE_OVER};
use crate::storage::store::Via;

/// How a writer takes documents in, given once to a data directory open for writing
/// ([`DataDir::set_policy`](crate::storage::datadir::DataDir::set_policy)): by `ingest`
/// and `serve` from their flags, by a deployment's aggregator as the log decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// A `published_at` that is not a date is stored undated (`--bad-dates undated`)
    /// instead of failing the document.
    pub undated_bad_dates: bool,
    /// The ways in whose dates may take origins over (`--take-over`): a document from
    /// another way, dated before what it copies, stands in arrival order with its date
    /// kept.
    pub take_over: Vec<Via>,
    /// The re-analysis a take-over may do before its document is stored
    /// (`--revision-budget`); the rest waits in the revision queue.
    pub revision_budget: Budget,
}

impl Default for Policy {
    /// Bad dates fail, every way but HTTP takes over ([`DEFAULT_TAKE_OVER`]),
    /// [`DEFAULT_REVISION_BUDGET`].
    fn default() -> Self {
        Policy {
            undated_bad_dates: false,
            take_over: DEFAULT_TAKE_OVER.to_vec(),
            revision_budget: DEFAULT_REVISION_BUDGET,
        }
    }
}

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
