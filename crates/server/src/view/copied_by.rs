//! Who copied from a document (`show`'s `copied_by`), from the copiers index.

use serde::Serialize;
use textorigin_store::storage::store::Store;

use super::model::DocRef;
use super::ViewError;

type Result<T> = std::result::Result<T, ViewError>;

/// Who copied from a document: the first [`COPIERS_SHOWN`] copiers in
/// sequence order with the tokens each took from it, and how many there are.
#[derive(Debug, Clone, Serialize)]
pub struct CopiedBy {
    pub count: usize,
    pub documents: Vec<CopierView>,
}

/// A document that copied from the one shown.
#[derive(Debug, Clone, Serialize)]
pub struct CopierView {
    #[serde(flatten)]
    pub document: DocRef,
    /// Its tokens in copied blocks whose origin is the document shown.
    pub tokens: u32,
}

/// Copiers listed by [`copied_by`] (the count says how many there are).
pub const COPIERS_SHOWN: usize = 100;

/// The documents whose results name `seq` as a copied block's origin, with the tokens
/// each took (from the copiers index; a copier whose current result no longer names
/// it, after a revision, is left out).
pub fn copied_by(store: &Store, seq: u64) -> Result<CopiedBy> {
    let copiers = store.copiers_of(seq)?;
    let mut documents = Vec::new();
    for &c in &copiers {
        if documents.len() == COPIERS_SHOWN {
            break;
        }
        let Some(r) = store.labelled_result(c)? else { continue };
        let tokens: u32 =
            r.joined_blocks().iter().filter(|b| b.origin == seq).map(|b| b.span.end_token - b.span.start_token).sum();
        if tokens > 0 {
            documents.push(CopierView { document: DocRef::stored(store, c)?, tokens });
        }
    }
    Ok(CopiedBy { count: copiers.len(), documents })
}
