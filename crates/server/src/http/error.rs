//! Why a request failed, typed: each kind maps to its status code in one `match`
//! ([`ApiError::status`]), so that rewording a message never changes a status.

use textorigin_store::storage::datadir::DataDirError;
use textorigin_store::storage::store::{Store, StoreError};

use super::wire::{json_error, Reply};
use crate::view::ViewError;

/// A request's failure.
#[derive(Debug, thiserror::Error)]
pub(super) enum ApiError {
    /// The request is malformed or names something that cannot be (400).
    #[error("{0}")]
    BadRequest(String),
    /// The request is not allowed (a submission without a token: 403).
    #[error("{0}")]
    Forbidden(String),
    /// Its content cannot be stored (422).
    #[error("{0}")]
    Unprocessable(String),
    /// Too large to take (413).
    #[error("{0}")]
    TooLarge(String),
    /// What the request names is not there (404).
    #[error("{0}")]
    NotFound(String),
    /// It conflicts with what is there (a file of that name waits in the spool: 409).
    #[error("{0}")]
    Conflict(String),
    /// The data directory or the spool cannot serve it now; the client may retry (503).
    #[error("{0}")]
    Unavailable(String),
    /// A file of the server's own could not be written (500).
    #[error("{0}")]
    Internal(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    DataDir(#[from] DataDirError),
    #[error(transparent)]
    View(#[from] ViewError),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

impl ApiError {
    /// The status code of this failure.
    pub(super) fn status(&self) -> u16 {
        match self {
            ApiError::BadRequest(_) | ApiError::Store(StoreError::Ambiguous { .. }) => 400,
            ApiError::Forbidden(_) => 403,
            ApiError::NotFound(_)
            | ApiError::Store(StoreError::NotFound(_))
            | ApiError::View(ViewError::NoSource(_)) => 404,
            ApiError::TooLarge(_) => 413,
            ApiError::Unprocessable(_) => 422,
            // A feature switched off in the data directory: what is asked cannot be had here.
            ApiError::Conflict(_) | ApiError::View(ViewError::Off { .. }) => 409,
            ApiError::Unavailable(_) => 503,
            ApiError::Internal(_)
            | ApiError::Store(_)
            | ApiError::DataDir(_)
            | ApiError::View(_)
            | ApiError::Json(_) => 500,
        }
    }

    /// The JSON error reply.
    pub(super) fn reply(self) -> Reply {
        json_error(self.status(), &self.to_string())
    }
}

/// A document by `#ID` (always an id), name, or bare id: the error reply when there is
/// none (404) or the argument names two documents (400, saying how to pick one).
pub(super) fn resolve(store: &Store, name_or_id: &str) -> Result<u64, ApiError> {
    store.resolve(name_or_id).map_err(|e| match e {
        StoreError::NotFound(_) => ApiError::NotFound(format!("document `{name_or_id}` not found")),
        e => ApiError::from(e),
    })
}
