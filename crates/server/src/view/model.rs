//! The view model: `Serialize` structs that are the JSON interface of `show`, `query`,
//! `list`, `stats`, `export`, `neardups` and `quotes` (field names are part of the
//! interface: `docs/ARCHITECTURE.md` lists them), built from the store. Text
//! ([`super::text`]) and HTML ([`super::html`]) render from the same structs.
//!
//! JSON is printed with sorted keys (through `serde_json::Value`), as it always was.

use std::collections::HashMap;
use std::path::Path;
use textorigin_core::index::{IndexStats, Indexes};

use serde::Serialize;
use textorigin_core::config::Config;
use textorigin_core::engine::{DocResult, Span};
use textorigin_core::estimate::How;
use textorigin_core::neardup::{Mode, NearDup};

use crate::status::DaemonStatus;
use textorigin_store::input::InputDoc;
use textorigin_store::storage::datadir::QueryResult;
use textorigin_store::storage::recompute::Recomputer;
use textorigin_store::storage::store::{DocMeta, Quotation, Store, StoreError};
use textorigin_store::storage::table_file::TableFile;

mod sources;
mod stats;
pub use stats::{stats, IndexesView, StatsView, TableView};

type Result<T> = std::result::Result<T, ViewError>;

/// Why a view could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("document #{seq} has no {what} (the store is damaged: run `textorigin check`)")]
    Missing { seq: u64, what: &'static str },
    #[error("{feature} are off in this data directory: `textorigin rebuild --data DIR --reanalyse --{flag} on` turns them on")]
    Off { feature: &'static str, flag: &'static str },
    #[error("#{0} has no copied blocks: there is no source to put beside it")]
    NoSource(u64),
}

/// What the data directory of a store finds: its switches ([`features`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Features {
    pub near_duplicates: bool,
    pub quotations: bool,
    /// Origins: copied blocks, old and fresh tokens, the dominant origin.
    pub origins: bool,
}

/// Whether the data directory of `store` finds origins, detects near-duplicates and
/// searches quotations (its stored configuration; all on for a store with none).
pub fn features(store: &Store) -> Result<Features> {
    let c = store.config()?.unwrap_or_default();
    Ok(Features { near_duplicates: c.near_duplicates, quotations: c.quotations, origins: c.origins })
}

/// `{id, name}` of a document, and its `title` when its metadata has one; `id` is null
/// for a query's own text. Its URL and date are for the pages and the text views (a
/// reference in JSON names the document; `show` gives the rest).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DocRef {
    pub id: Option<u64>,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip)]
    pub url: Option<String>,
    #[serde(skip)]
    pub published_at: Option<String>,
}

impl DocRef {
    /// The stored document `seq` (`#seq` when the store does not have it).
    pub fn stored(store: &Store, seq: u64) -> Result<DocRef> {
        Ok(match store.doc(seq)? {
            Some(m) => DocRef {
                id: Some(seq),
                title: title_of(m.meta.as_deref()),
                url: m.url,
                published_at: m.published_at,
                name: m.name,
            },
            None => DocRef::named(Some(seq), format!("#{seq}")),
        })
    }

    /// A reference by id and name alone.
    pub fn named(id: Option<u64>, name: String) -> DocRef {
        DocRef { id, name, title: None, url: None, published_at: None }
    }
}

/// A document's metadata as JSON (None when it has none).
pub fn meta_json(meta: Option<&str>) -> Option<serde_json::Value> {
    meta.and_then(|m| serde_json::from_str(m).ok())
}

/// The `title` field of a document's metadata, when it is a string.
fn title_of(meta: Option<&str>) -> Option<String> {
    // Most references are to documents without one: no parse for those.
    meta_json(meta.filter(|m| m.contains("\"title\"")))?.get("title")?.as_str().map(str::to_string)
}

/// A stored document's title: the `title` of its metadata, when it is a string.
pub fn title_of_meta(meta: &DocMeta) -> Option<String> {
    title_of(meta.meta.as_deref())
}

/// An origin with its count of selected shingles.
#[derive(Debug, Clone, Serialize)]
pub struct OriginCount {
    #[serde(flatten)]
    pub origin: DocRef,
    pub shingles: u32,
}

/// A copied block.
#[derive(Debug, Clone, Serialize)]
pub struct BlockView {
    pub start_token: u32,
    pub end_token: u32,
    pub start_byte: u32,
    pub end_byte: u32,
    pub shingles: u32,
    pub origin: DocRef,
    pub text: String,
    /// Earlier documents that also hold part of the block (a stock phrase inside a
    /// passage: `attribution = passage`), with the block's tokens they hold.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also_earlier: Vec<AlsoEarlierView>,
    /// The block's tokens that differ from its origin's text (light edits).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub edits: Vec<u32>,
    /// Its passage in its origin (`show` and the pages only: [`add_sources`]); absent
    /// elsewhere and when it cannot be placed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceSpanView>,
}

/// An earlier document that also holds part of a copied block.
#[derive(Debug, Clone, Serialize)]
pub struct AlsoEarlierView {
    pub origin: DocRef,
    pub start_token: u32,
    pub end_token: u32,
}

/// A novel segment.
#[derive(Debug, Clone, Serialize)]
pub struct SegmentView {
    pub start_token: u32,
    pub end_token: u32,
    pub start_byte: u32,
    pub end_byte: u32,
    pub text: String,
}

/// A site template line: text its site repeats on `pages` pages, neither
/// old nor fresh.
#[derive(Debug, Clone, Serialize)]
pub struct TemplateView {
    pub start_token: u32,
    pub end_token: u32,
    pub start_byte: u32,
    pub end_byte: u32,
    /// The pages of the document's site holding the line now.
    pub pages: u32,
    pub text: String,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A selected shingle and how its origin was found.
#[derive(Debug, Clone, Serialize)]
pub struct ShingleView {
    pub start_token: u32,
    pub end_token: u32,
    pub origin: u64,
    pub how: &'static str,
}

/// An earlier (or later) near-duplicate.
#[derive(Debug, Clone, Serialize)]
pub struct NearDupView {
    pub id: u64,
    pub name: String,
    pub exact: bool,
    pub b_similarity: u32,
    pub c_similarity: u32,
    /// Rounded to 4 decimals.
    pub resemblance: f64,
    /// The verdicts that hold: default, B, C, combined.
    pub verdicts: Vec<&'static str>,
    /// Published before the document but arrived after it: found by its late
    /// arrival.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub arrived_after: bool,
}

/// An earlier sentence a quoting sentence reuses.
#[derive(Debug, Clone, Serialize)]
pub struct QuoteSourceView {
    pub id: u64,
    pub name: String,
    pub sentence: String,
    pub distance: u32,
    /// Rounded to 4 decimals.
    pub score: f64,
    /// Published before the quoting document but arrived after it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub arrived_after: bool,
}

/// A quoting sentence with its sources, best first.
#[derive(Debug, Clone, Serialize)]
pub struct QuotationView {
    pub start_byte: u32,
    pub end_byte: u32,
    pub text: String,
    pub sources: Vec<QuoteSourceView>,
}

/// What a document's dominant origin is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dominant<'a> {
    /// A document without tokens.
    None,
    /// The document itself: mostly new text.
    Itself,
    /// Another document.
    Other(&'a DocRef),
}

fn dominant_of<'a>(id: Option<u64>, dominant: Option<&'a DocRef>) -> Dominant<'a> {
    match dominant {
        None => Dominant::None,
        Some(d) if d.id == id => Dominant::Itself,
        Some(d) => Dominant::Other(d),
    }
}

/// The document view of `show`, `query` and each line of `export`.
#[derive(Debug, Clone, Serialize)]
pub struct DocumentView {
    /// None for a query (not stored).
    pub id: Option<u64>,
    pub name: String,
    /// The name was a JSON number `id` in the input (the outputs a pipeline pairs with
    /// its input write it back as one).
    #[serde(skip)]
    pub id_number: bool,
    /// The date came as the input's `date` field (the corpus output keeps that name).
    #[serde(skip)]
    pub date_field: bool,
    pub source: Option<String>,
    pub url: Option<String>,
    pub published_at: Option<String>,
    /// The input's further JSON fields; absent when it had none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<serde_json::Value>,
    pub content_hash: Option<String>,
    /// Origins are off in its data directory: no token is old or fresh, and it has no
    /// copied block and no dominant origin. Absent when they are on.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub origins_off: bool,
    /// The earlier document it is an exact copy of (the same terms): answered from that
    /// document, not analysed again. Absent for every other document.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exact_copy_of: Option<DocRef>,
    pub tokens: u32,
    pub shingles: u32,
    pub selected: u32,
    /// The selection density the document was applied at: `1`, `1/2`, ...
    /// `1/128` of the shingles the selection leaves out selected too; absent for the
    /// selection alone (so that the exports of data directories made before are as
    /// they were).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub density: Option<String>,
    pub hits: u32,
    pub fresh_tokens: u32,
    pub old_tokens: u32,
    /// Tokens in its site's template lines: neither old nor fresh, and out
    /// of old%. Absent when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub template_tokens: u32,
    /// Of those, the tokens the engine found copied: a copied share that template
    /// lines (later pages of its site, often) took out of old%. Absent when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub furniture_copied: u32,
    /// Its site's template lines, each with the pages holding it. Absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub templates: Vec<TemplateView>,
    /// The argmax of the origin counts (a tie: the document itself); with `dominant =
    /// blocks`, each selected shingle inside a copied block counted for its origin.
    pub dominant_origin: Option<DocRef>,
    /// The paper's 10% rule over the same counts: null when no origin leads by 10%.
    pub dominant_origin_rule: Option<DocRef>,
    pub most_copied_origin: Option<DocRef>,
    pub origins: Vec<OriginCount>,
    pub copied_blocks: Vec<BlockView>,
    pub novel_segments: Vec<SegmentView>,
    /// Null when near-duplicate detection is off (never an empty list: that means
    /// none found).
    pub near_duplicates: Option<Vec<NearDupView>>,
    /// Null when quotation search is off.
    pub quotations: Option<Vec<QuotationView>>,
    /// With `--shingles`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selected_shingles: Option<Vec<ShingleView>>,
    /// With `--times`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ingested_at_ms: Option<u64>,
    /// The revisions of its result, oldest first: a document that arrived
    /// later but was published before an origin of this one changed it. Absent when
    /// none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub revisions: Vec<RevisionView>,
    /// The later documents that copied from this one and how much each took (`show`
    /// only, from the copiers index: [`copied_by`]); absent elsewhere and when none did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copied_by: Option<CopiedBy>,
    /// How much of it each source accounts for, most first (`show` and the pages only:
    /// [`add_sources`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<Vec<SimilarityView>>,
}

pub use super::copied_by::{copied_by, CopiedBy, CopierView, COPIERS_SHOWN};
pub use sources::{add_sources, shown, side_by_side, Pair, SideBySide, SimilarityView, SourceSpanView};

/// A revision of a stored result: what caused it, and what the result said before.
#[derive(Debug, Clone, Serialize)]
pub struct RevisionView {
    pub caused_by: DocRef,
    /// The way the causing document came in (`spool`, `http`, `ingest`, `python`,
    /// `cluster`; absent for documents stored before this was recorded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caused_via: Option<&'static str>,
    pub old_tokens_before: u32,
    pub dominant_origin_before: Option<DocRef>,
    /// The copied blocks before: token spans and their origins.
    pub copied_blocks_before: Vec<SpanOrigin>,
}

/// A copied block as a revision remembers it.
#[derive(Debug, Clone, Serialize)]
pub struct SpanOrigin {
    pub start_token: u32,
    pub end_token: u32,
    pub origin: DocRef,
}

impl DocumentView {
    /// What the dominant origin is.
    pub fn dominant(&self) -> Dominant<'_> {
        dominant_of(self.id, self.dominant_origin.as_ref())
    }

    /// What the paper's 10% rule says.
    pub fn dominant_by_rule(&self) -> Dominant<'_> {
        dominant_of(self.id, self.dominant_origin_rule.as_ref())
    }

    /// The words for a document that is its own dominant origin: mostly new text, or
    /// copied for the most part but from several origins none of which holds more of
    /// it than its own new words ("itself (mostly new text)" was
    /// shown for documents 58-68% copied from three origins).
    pub fn itself_text(&self) -> String {
        if mostly_new(self.old_tokens, self.old_tokens + self.fresh_tokens) {
            return "itself (mostly new text)".into();
        }
        let mut origins: Vec<Option<u64>> = self.copied_blocks.iter().map(|b| b.origin.id).collect();
        origins.sort_unstable();
        origins.dedup();
        let pct = 100.0 * f64::from(self.old_tokens) / f64::from((self.old_tokens + self.fresh_tokens).max(1));
        let from = match origins.len() {
            1 => "1 origin".to_string(),
            n => format!("{n} origins"),
        };
        format!("none ({pct:.0}% copied from {from}, none more than its own new text)")
    }
}

/// Whether at most half of a document's tokens are old (its fresh tokens are the rest):
/// the one rule behind "itself" in the document view and the list.
fn mostly_new(old_tokens: u32, tokens: u32) -> bool {
    2 * u64::from(old_tokens) <= u64::from(tokens)
}

/// Options of the document view.
#[derive(Debug, Clone, Copy, Default)]
pub struct ViewOptions {
    /// Include every selected shingle's origin.
    pub shingles: bool,
    /// Include the wall-clock ingestion time.
    pub times: bool,
}

/// Everything the document view is built from.
#[derive(Debug, Clone, Copy)]
pub struct DocParts<'a> {
    /// None for a query (not stored).
    pub meta: Option<&'a DocMeta>,
    pub name: &'a str,
    pub text: &'a str,
    pub result: &'a DocResult,
    /// None when near-duplicate detection is off.
    pub near: Option<&'a [NearDup]>,
    /// None when quotation search is off.
    pub quotes: Option<&'a [Quotation]>,
    /// Whether its data directory finds origins.
    pub origins: bool,
}

impl<'a> DocParts<'a> {
    /// The parts of a query's view: its text, analysed but not stored.
    pub fn query(doc: &'a InputDoc, q: &'a QueryResult) -> DocParts<'a> {
        DocParts {
            meta: None,
            name: &doc.name,
            text: &doc.text,
            result: &q.result,
            near: q.near.as_deref(),
            quotes: q.quotes.as_deref(),
            origins: q.origins,
        }
    }
}

fn slice(text: &str, s: &Span) -> String {
    text.get(s.start_byte as usize..s.end_byte as usize).unwrap_or("").to_string()
}

/// Rounded to 4 decimals, as the views give shares and scores.
pub(super) fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

/// The views of the near-duplicates `found` that `mode` accepts; those that arrived
/// after document `of` marked.
pub fn near_dups(store: &Store, found: &[NearDup], mode: Mode, of: Option<u64>) -> Result<Vec<NearDupView>> {
    found
        .iter()
        .filter(|d| d.says(mode))
        .map(|d| {
            let verdicts = [("default", d.default), ("B", d.b), ("C", d.c), ("combined", d.combined)]
                .iter()
                .filter(|x| x.1)
                .map(|x| x.0)
                .collect();
            Ok(NearDupView {
                id: d.seq,
                name: store.name_of(d.seq)?,
                exact: d.exact,
                b_similarity: d.b_similarity,
                c_similarity: d.c_similarity,
                resemblance: round4(d.resemblance),
                verdicts,
                arrived_after: of.is_some_and(|of| d.seq > of),
            })
        })
        .collect()
}

/// The quotations of a document with `text`: each quoting sentence's span and text, and
/// its sources with their sentences' text; the sources that arrived after document
/// `of` marked.
pub fn quotations(store: &Store, text: &str, quotes: &[Quotation], of: Option<u64>) -> Result<Vec<QuotationView>> {
    let mut texts: HashMap<u64, String> = HashMap::new();
    let mut out = Vec::with_capacity(quotes.len());
    // A source's sentence is split again from its text, as its search read it.
    let recompute = Recomputer::of(store)?;
    for q in quotes {
        let mut sources = Vec::with_capacity(q.sources.len());
        for s in &q.sources {
            let source = match texts.entry(s.seq) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(store.text(s.seq)?.ok_or(ViewError::Missing { seq: s.seq, what: "text" })?)
                }
            };
            let sentence = recompute
                .sentence(store, s.seq, s.sentence)?
                .and_then(|x| source.get(x.start() as usize..x.end() as usize).map(str::to_string))
                .unwrap_or_default();
            sources.push(QuoteSourceView {
                id: s.seq,
                name: store.name_of(s.seq)?,
                sentence,
                distance: s.distance,
                score: round4(s.score),
                arrived_after: of.is_some_and(|of| s.seq > of),
            });
        }
        let quoting = text.get(q.start_byte as usize..q.end_byte as usize).unwrap_or("").to_string();
        out.push(QuotationView { start_byte: q.start_byte, end_byte: q.end_byte, text: quoting, sources });
    }
    Ok(out)
}

/// The earlier document a stored document (`meta`; none for a query) is an exact
/// copy of.
fn exact_copy_of(store: &Store, meta: Option<&DocMeta>) -> Result<Option<DocRef>> {
    let Some(m) = meta else { return Ok(None) };
    store.copy_of(m.seq)?.map(|of| DocRef::stored(store, of)).transpose()
}

/// The document view of `parts`.
pub fn document(store: &Store, parts: DocParts<'_>, opt: ViewOptions) -> Result<DocumentView> {
    let DocParts { meta, name, text, result: r, near, quotes, origins } = parts;
    let origin = |seq: u64| -> Result<DocRef> {
        if meta.is_none() && seq == r.seq {
            Ok(DocRef::named(None, name.to_string()))
        } else {
            DocRef::stored(store, seq)
        }
    };
    let span = |s: &Span| (s.start_token, s.end_token, s.start_byte, s.end_byte);
    Ok(DocumentView {
        id: meta.map(|m| m.seq),
        name: name.to_string(),
        id_number: meta.is_some_and(|m| m.id_number),
        date_field: meta.is_some_and(|m| m.date_field),
        source: meta.map(|m| m.source.clone()),
        url: meta.and_then(|m| m.url.clone()),
        published_at: meta.and_then(|m| m.published_at.clone()),
        meta: meta_json(meta.and_then(|m| m.meta.as_deref())),
        content_hash: meta.map(|m| m.content_hash.clone()),
        origins_off: !origins,
        exact_copy_of: exact_copy_of(store, meta)?,
        tokens: r.tokens,
        shingles: r.shingles,
        selected: r.selected,
        density: r.density.map(textorigin_core::select::density_label),
        hits: r.hits,
        fresh_tokens: r.fresh_tokens,
        old_tokens: r.old_tokens,
        template_tokens: r.template_tokens,
        furniture_copied: 0,
        templates: r
            .templates
            .iter()
            .map(|t| {
                let (start_token, end_token, start_byte, end_byte) = span(&t.span);
                TemplateView {
                    start_token,
                    end_token,
                    start_byte,
                    end_byte,
                    pages: t.pages,
                    text: slice(text, &t.span),
                }
            })
            .collect(),
        dominant_origin: r.dominant_origin.map(origin).transpose()?,
        dominant_origin_rule: r.dominant_by_rule().map(origin).transpose()?,
        most_copied_origin: r.most_copied_origin.map(origin).transpose()?,
        origins: r
            .origin_counts
            .iter()
            .map(|&(o, n)| Ok(OriginCount { origin: origin(o)?, shingles: n }))
            .collect::<Result<_>>()?,
        copied_blocks: r
            .joined_blocks()
            .iter()
            .map(|b| {
                let (start_token, end_token, start_byte, end_byte) = span(&b.span);
                let text = slice(text, &b.span);
                let inside = |t: u32| (start_token..end_token).contains(&t);
                Ok(BlockView {
                    start_token,
                    end_token,
                    start_byte,
                    end_byte,
                    shingles: b.shingles,
                    origin: origin(b.origin)?,
                    text,
                    also_earlier: r
                        .passages
                        .also_earlier
                        .iter()
                        .filter(|x| inside(x.start_token))
                        .map(|x| {
                            Ok(AlsoEarlierView {
                                origin: origin(x.origin)?,
                                start_token: x.start_token,
                                end_token: x.end_token,
                            })
                        })
                        .collect::<Result<_>>()?,
                    edits: r.passages.edits.iter().copied().filter(|&t| inside(t)).collect(),
                    source: None,
                })
            })
            .collect::<Result<_>>()?,
        novel_segments: r
            .novel_segments
            .iter()
            .map(|s| {
                let (start_token, end_token, start_byte, end_byte) = span(s);
                SegmentView { start_token, end_token, start_byte, end_byte, text: slice(text, s) }
            })
            .collect(),
        near_duplicates: near.map(|near| near_dups(store, near, Mode::Default, meta.map(|m| m.seq))).transpose()?,
        quotations: quotes.map(|quotes| quotations(store, text, quotes, meta.map(|m| m.seq))).transpose()?,
        selected_shingles: opt.shingles.then(|| {
            r.selected_origins
                .iter()
                .map(|s| ShingleView {
                    start_token: s.start_token,
                    end_token: s.end_token,
                    origin: s.origin,
                    how: match s.how {
                        How::Own => "own",
                        How::Found => "found",
                        How::Bridged => "bridged",
                        How::Expanded => "expanded",
                    },
                })
                .collect()
        }),
        ingested_at_ms: if opt.times { meta.map(|m| m.ingested_at_ms) } else { None },
        revisions: Vec::new(),
        copied_by: None,
        similarity: None,
    })
}

/// A stored document's view.
pub fn stored_document(store: &Store, seq: u64, opt: ViewOptions) -> Result<DocumentView> {
    Ok(stored_document_and_text(store, seq, opt)?.0)
}

/// A stored document's view and its stored text (which the pages and the dedup
/// outputs cut up), read once.
pub fn stored_document_and_text(store: &Store, seq: u64, opt: ViewOptions) -> Result<(DocumentView, String)> {
    let missing = |what| ViewError::Missing { seq, what };
    let meta = store.doc(seq)?.ok_or(missing("metadata"))?;
    let text = store.text(seq)?.ok_or(missing("text"))?;
    let result = store.labelled_result(seq)?.ok_or(missing("result"))?;
    let on = features(store)?;
    let near = on.near_duplicates.then(|| store.near_dups(seq)).transpose()?;
    let quotes = on.quotations.then(|| store.quotations(seq)).transpose()?;
    let parts = DocParts {
        meta: Some(&meta),
        name: &meta.name,
        text: &text,
        result: &result,
        near: near.as_deref(),
        quotes: quotes.as_deref(),
        origins: on.origins,
    };
    let mut view = document(store, parts, opt)?;
    if result.template_tokens > 0 {
        // The engine's own result counts the template lines' copied tokens as old.
        let unlabelled = store.result(seq)?.ok_or(missing("result"))?;
        view.furniture_copied = unlabelled.old_tokens.saturating_sub(result.old_tokens);
    }
    for r in store.revisions(seq)? {
        let before = &r.before;
        view.revisions.push(RevisionView {
            caused_by: DocRef::stored(store, r.cause)?,
            caused_via: store.doc(r.cause)?.and_then(|d| d.via).map(|v| v.name()),
            old_tokens_before: before.old_tokens,
            dominant_origin_before: before.dominant_origin.map(|o| DocRef::stored(store, o)).transpose()?,
            copied_blocks_before: before
                .joined_blocks()
                .iter()
                .map(|b| {
                    Ok(SpanOrigin {
                        start_token: b.span.start_token,
                        end_token: b.span.end_token,
                        origin: DocRef::stored(store, b.origin)?,
                    })
                })
                .collect::<Result<_>>()?,
        });
    }
    Ok((view, text))
}

/// One row of `list`.
#[derive(Debug, Clone, Serialize)]
pub struct ListRow {
    pub id: u64,
    pub name: String,
    pub source: String,
    /// Origins are off in its data directory ([`DocumentView::origins_off`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub origins_off: bool,
    /// The earlier document it is an exact copy of ([`DocumentView::exact_copy_of`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exact_copy_of: Option<DocRef>,
    pub tokens: u32,
    pub old_tokens: u32,
    /// Tokens in its site's template lines. Absent when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub template_tokens: u32,
    pub copied_blocks: usize,
    pub dominant_origin: Option<DocRef>,
}

impl ListRow {
    /// What the dominant origin is.
    pub fn dominant(&self) -> Dominant<'_> {
        dominant_of(Some(self.id), self.dominant_origin.as_ref())
    }

    /// The short words for a document that is its own dominant origin: `itself` when
    /// most of it is new, else `none (mixed)` (mostly copied, from several origins; the
    /// document view says more: [`DocumentView::itself_text`]).
    pub fn itself_text(&self) -> &'static str {
        if mostly_new(self.old_tokens, self.tokens - self.template_tokens) {
            "itself"
        } else {
            "none (mixed)"
        }
    }
}

/// The row of a stored document, in a data directory that finds `origins` or not.
pub fn list_row(store: &Store, meta: &DocMeta, origins: bool) -> Result<ListRow> {
    let r = store.labelled_result(meta.seq)?.ok_or(ViewError::Missing { seq: meta.seq, what: "result" })?;
    Ok(ListRow {
        id: meta.seq,
        name: meta.name.clone(),
        source: meta.source.clone(),
        origins_off: !origins,
        exact_copy_of: exact_copy_of(store, Some(meta))?,
        tokens: r.tokens,
        old_tokens: r.old_tokens,
        template_tokens: r.template_tokens,
        copied_blocks: r.joined_blocks().len(),
        dominant_origin: r.dominant_origin.map(|o| DocRef::stored(store, o)).transpose()?,
    })
}

/// Every stored document's row, in sequence order.
pub fn list(store: &Store) -> Result<Vec<ListRow>> {
    let origins = features(store)?.origins;
    store.docs().map(|m| list_row(store, &m?, origins)).collect()
}

/// `neardups`: a document's near-duplicates under a mode, and the later ones if asked.
#[derive(Debug, Clone, Serialize)]
pub struct NearDupsView {
    pub id: u64,
    pub name: String,
    pub near_duplicates: Vec<NearDupView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub later: Option<Vec<NearDupView>>,
}

/// The `neardups` view of document `seq`.
pub fn neardups(store: &Store, seq: u64, mode: Mode, later: bool) -> Result<NearDupsView> {
    if !features(store)?.near_duplicates {
        return Err(ViewError::Off { feature: "near-duplicates", flag: "neardup" });
    }
    Ok(NearDupsView {
        id: seq,
        name: store.name_of(seq)?,
        near_duplicates: near_dups(store, &store.near_dups(seq)?, mode, Some(seq))?,
        later: if later { Some(near_dups(store, &store.near_dups_later(seq)?, mode, None)?) } else { None },
    })
}

/// `quotes`: a document's quoting sentences.
#[derive(Debug, Clone, Serialize)]
pub struct QuotesView {
    pub id: u64,
    pub name: String,
    pub quotations: Vec<QuotationView>,
}

/// The `quotes` view of document `seq`.
pub fn quotes(store: &Store, seq: u64) -> Result<QuotesView> {
    if !features(store)?.quotations {
        return Err(ViewError::Off { feature: "quotations", flag: "quotes" });
    }
    let missing = |what| ViewError::Missing { seq, what };
    let meta = store.doc(seq)?.ok_or(missing("metadata"))?;
    let text = store.text(seq)?.ok_or(missing("text"))?;
    let quotations = quotations(store, &text, &store.quotations(seq)?, Some(seq))?;
    Ok(QuotesView { id: seq, name: meta.name, quotations })
}
