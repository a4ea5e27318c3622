//! How a document comes in: the writer's [`Policy`] (bad dates, the ways whose dates
//! take origins over, the revision [`Budget`]), and what a data directory refuses of a
//! document before analysing it ([`admissible`], [`DocError`]), checked in one place
//! for the data directory itself and for those who ask ahead of it (the daemon's HTTP
//! submission, a deployment's submission), so that a document accepted ahead is not
//! refused later for another reason, nor the other way round. The data directory
//! imports this module, never the other way; [`mod@file`], above the data directory, admits
//! an input file document by document for batch ingestion and the daemon's spool.

pub mod file;

use crate::input::date::parse_published;
use crate::input::InputDoc;
use crate::storage::store::Via;

/// Why a document was not applied (the document's fault, not the data directory's).
#[derive(Debug, thiserror::Error)]
pub enum DocError {
    #[error("{0}: no words (no letters or digits)")]
    NoTokens(String),
    #[error("{0}: over 4 GiB of text")]
    TooLong(String),
    #[error("{0}: {1} (or store it undated: ingest or serve with --bad-dates undated)")]
    BadDate(String, crate::input::date::BadDate),
}

/// How much re-analysis a take-over may do before the document that caused it is
/// stored (`--revision-budget`): documents and bytes of their text. What lies beyond
/// waits in the revision queue, drained within the same budget after each document
/// and while the daemon is idle ([`DataDir::drain_revisions`](crate::storage::datadir::DataDir::drain_revisions)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub docs: u64,
    pub bytes: u64,
}

impl Budget {
    /// No bound (`rebuild --reanalyse`, the end of a batch run).
    pub const UNLIMITED: Budget = Budget { docs: u64::MAX, bytes: u64::MAX };

    /// Takes one document of `bytes` from the budget, if there is room for it (the
    /// first document of a drain always has room: the queue moves).
    pub(crate) fn take(&mut self, bytes: u64, first: bool) -> bool {
        if !first && (self.docs == 0 || self.bytes < bytes) {
            return false;
        }
        self.docs = self.docs.saturating_sub(1);
        self.bytes = self.bytes.saturating_sub(bytes);
        true
    }
}

/// The ways in whose dates take origins over unless told otherwise: those that need
/// the data directory's machine (its spool, its command line, its Python package) or
/// the cluster's log; not HTTP, where a token may be handed to many producers, and a
/// back-dated submission would make any stored document "revised by" its copy.
pub const DEFAULT_TAKE_OVER: [Via; 4] = [Via::Spool, Via::Ingest, Via::Python, Via::Cluster];

/// The default revision budget of a document: 64 documents re-analysed, 8 MiB of their
/// text (a back-dated document sharing a boilerplate sentence with 30,000 stored ones
/// stalled the apply thread for 12.8 s before there was one).
pub const DEFAULT_REVISION_BUDGET: Budget = Budget { docs: 64, bytes: 8 << 20 };

/// How a writer takes documents in, given once to a data directory open for writing
/// ([`DataDir::open_write`](crate::storage::datadir::DataDir::open_write)): by `ingest`
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
