//! Each copied block's passage in its source, and a document's similarity to each
//! source (side by side). What Turnitin's, Copyleaks' and JPlag's readers
//! look at first: how much of the document each source accounts for, and the two texts
//! side by side with the copied passages paired and the edits marked.
//!
//! The passages are found again from the two texts (`textorigin_core::locate`: anchors
//! of three tokens chained in order through edits), one pass over each source for all
//! of the document's blocks from it. Only the views a person reads (`show`, the API's
//! document, the pages) carry them: `export` stays as it was, and reads no source.

use std::collections::BTreeMap;

use serde::Serialize;
use textorigin_core::locate::{locate_all, Located};
use textorigin_core::rabin::Rabin;
use textorigin_core::text::{tokenize, Token};
use textorigin_store::storage::store::Store;

use super::{DocRef, DocumentView, Result, ViewError};

/// Where a copied block stands in its source (token and byte spans of the source's
/// stored text).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SourceSpanView {
    pub start_token: u32,
    pub end_token: u32,
    pub start_byte: u32,
    pub end_byte: u32,
}

/// How much of a document one source accounts for: the tokens of its copied blocks
/// from it, and their share of the document's tokens (template lines apart), in %.
#[derive(Debug, Clone, Serialize)]
pub struct SimilarityView {
    pub origin: DocRef,
    pub tokens: u32,
    pub percent: f64,
}

/// One copied passage paired with its source's: byte spans of both texts, and the
/// edited words of each (byte spans).
#[derive(Debug, Clone, Serialize)]
pub struct Pair {
    pub start_byte: u32,
    pub end_byte: u32,
    pub source_start_byte: u32,
    pub source_end_byte: u32,
    pub edits: Vec<(u32, u32)>,
    pub source_edits: Vec<(u32, u32)>,
}

/// A document and one of its sources side by side.
#[derive(Debug, Clone, Serialize)]
pub struct SideBySide {
    pub document: DocRef,
    pub source: DocRef,
    /// The source's share of the document, in % (as in [`SimilarityView`]).
    pub percent: f64,
    /// The document's similarity to each of its sources (to choose another).
    pub similarity: Vec<SimilarityView>,
    pub pairs: Vec<Pair>,
    #[serde(skip)]
    pub text: String,
    #[serde(skip)]
    pub source_text: String,
}

/// The tokens of a stored text, cut as the store's configuration cuts terms.
fn tokens(store: &Store, text: &str) -> Result<Vec<Token>> {
    let terms = store.config()?.unwrap_or_default().terms;
    let mut out = Vec::new();
    tokenize(text, &Rabin::new(1).with_terms(terms), &mut out);
    Ok(out)
}

/// A source's text and tokens, and the places in it of a view's blocks from it.
struct Placed {
    source_text: String,
    source: Vec<Token>,
    /// (block index, its place).
    blocks: Vec<(usize, Located)>,
}

/// The places in source `origin` of the view's blocks from it.
fn locate_in(store: &Store, v: &DocumentView, doc: &[Token], origin: u64) -> Result<Placed> {
    let source_text = store.text(origin)?.ok_or(ViewError::Missing { seq: origin, what: "text" })?;
    let source = tokens(store, &source_text)?;
    let fps = |t: &[Token]| t.iter().map(|t| t.fp).collect::<Vec<u64>>();
    let mine: Vec<usize> =
        (0..v.copied_blocks.len()).filter(|&b| v.copied_blocks[b].origin.id == Some(origin)).collect();
    let runs: Vec<Vec<u64>> = mine
        .iter()
        .map(|&b| {
            let block = &v.copied_blocks[b];
            fps(doc.get(block.start_token as usize..block.end_token as usize).unwrap_or(&[]))
        })
        .collect();
    let runs: Vec<&[u64]> = runs.iter().map(Vec::as_slice).collect();
    let found = locate_all(&runs, &fps(&source));
    let blocks = mine.into_iter().zip(found).filter_map(|(b, l)| l.map(|l| (b, l))).collect();
    Ok(Placed { source_text, source, blocks })
}

/// The byte span of tokens `start..end` of `tokens`.
fn bytes(tokens: &[Token], start: usize, end: usize) -> (u32, u32) {
    (tokens[start].start, tokens[end - 1].end)
}

/// The document's similarity to each source of its copied blocks, most first.
pub fn similarity(v: &DocumentView) -> Vec<SimilarityView> {
    let counted = v.tokens.saturating_sub(v.template_tokens).max(1);
    let mut by: BTreeMap<u64, (DocRef, u32)> = BTreeMap::new();
    for b in &v.copied_blocks {
        if let Some(id) = b.origin.id {
            by.entry(id).or_insert_with(|| (b.origin.clone(), 0)).1 += b.end_token - b.start_token;
        }
    }
    let mut out: Vec<SimilarityView> = by
        .into_values()
        .map(|(origin, tokens)| SimilarityView {
            origin,
            tokens,
            percent: (1000.0 * f64::from(tokens) / f64::from(counted)).round() / 10.0,
        })
        .collect();
    out.sort_by(|a, b| b.tokens.cmp(&a.tokens).then(a.origin.id.cmp(&b.origin.id)));
    out
}

/// A stored document's view as a person reads it (`show`, the API's document, its
/// page), with its stored text: its copiers ([`super::copied_by`]), each block's
/// passage in its source and its similarity to each source.
pub fn shown(store: &Store, seq: u64, opt: super::ViewOptions) -> Result<(DocumentView, String)> {
    let (mut v, text) = super::stored_document_and_text(store, seq, opt)?;
    v.copied_by = Some(super::copied_by(store, seq)?).filter(|c| c.count > 0);
    add_sources(store, &mut v, &text)?;
    Ok((v, text))
}

/// Fills each copied block's `source` (its passage in its origin) and the view's
/// `similarity`, for a stored document's view and its stored `text`.
pub fn add_sources(store: &Store, v: &mut DocumentView, text: &str) -> Result<()> {
    let doc = tokens(store, text)?;
    let origins: std::collections::BTreeSet<u64> = v.copied_blocks.iter().filter_map(|b| b.origin.id).collect();
    for origin in origins {
        let Placed { source, blocks, .. } = locate_in(store, v, &doc, origin)?;
        for (b, l) in blocks {
            let (start_byte, end_byte) = bytes(&source, l.start, l.end);
            v.copied_blocks[b].source =
                Some(SourceSpanView { start_token: l.start as u32, end_token: l.end as u32, start_byte, end_byte });
        }
    }
    v.similarity = Some(similarity(v));
    Ok(())
}

/// Stored document `seq` beside its source `origin` (by default the one it copied the
/// most words from; [`ViewError::NoSource`] when it copied none): the passages of its
/// blocks from it paired, with their edits.
pub fn side_by_side(store: &Store, seq: u64, origin: Option<u64>) -> Result<SideBySide> {
    let (v, text) = super::stored_document_and_text(store, seq, super::ViewOptions::default())?;
    let similarity = similarity(&v);
    let origin = match origin {
        Some(o) => o,
        None => similarity.first().and_then(|s| s.origin.id).ok_or(ViewError::NoSource(seq))?,
    };
    let doc = tokens(store, &text)?;
    let Placed { source_text, source, blocks } = locate_in(store, &v, &doc, origin)?;
    let mut pairs = Vec::new();
    for (b, l) in blocks {
        let block = &v.copied_blocks[b];
        let first = block.start_token as usize;
        let (source_start_byte, source_end_byte) = bytes(&source, l.start, l.end);
        pairs.push(Pair {
            start_byte: block.start_byte,
            end_byte: block.end_byte,
            source_start_byte,
            source_end_byte,
            edits: l.block_edits().map(|i| bytes(&doc, first + i, first + i + 1)).collect(),
            source_edits: l.source_edits().map(|j| bytes(&source, j, j + 1)).collect(),
        });
    }
    let percent = similarity.iter().find(|s| s.origin.id == Some(origin)).map_or(0.0, |s| s.percent);
    Ok(SideBySide {
        document: DocRef::named(v.id, v.name),
        source: DocRef::stored(store, origin)?,
        percent,
        similarity,
        pairs,
        text,
        source_text,
    })
}
