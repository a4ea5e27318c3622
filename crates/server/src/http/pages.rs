//! The inspector's HTML pages: the index of documents (paged, searched), a document's
//! page (its copied blocks linking their origins' pages at the passage) and the
//! collection report.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::view::model::ViewError;
use crate::view::{compare, html, model, report, ViewOptions};
use textorigin_core::rabin::Rabin;
use textorigin_core::text::tokenize;
use textorigin_store::input::from_json;
use textorigin_store::storage::datadir::DataDir;
use textorigin_store::storage::store::Store;

use super::error::{resolve, ApiError};
use super::wire::{Reply, HTML};

/// The report's summary as last computed (and when it started), and whether a
/// computation is running.
#[derive(Default)]
pub(super) struct ReportCache {
    summary: Option<(Arc<report::Summary>, std::time::Instant)>,
    computing: bool,
}

/// A stale summary is computed again at most this often: it reads every stored result
/// (a core for 2 s on 199,000 documents), and a daemon that keeps ingesting makes it
/// stale at once.
const REPORT_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// `GET /report?page=N`: the collection report, its documents [`report::PAGE_ROWS`] a
/// page (oldest first). Its summary reads every stored result (2.2 s on 199,000
/// documents): it is computed in a thread of its own when missing, or older than the
/// newest document and [`REPORT_EVERY`], and the page shows the last one computed
/// (saying of which document), or that it is being computed.
pub(super) fn report(
    store: &Arc<Store>,
    query: &[(String, String)],
    cache: &Arc<Mutex<ReportCache>>,
) -> Result<Reply, ApiError> {
    let newest = store.next_seq()?.saturating_sub(1);
    let pages = newest.div_ceil(report::PAGE_ROWS).max(1);
    let at = match query.iter().find(|(k, _)| k == "page").map(|(_, v)| v.parse::<u64>()) {
        None => 1,
        Some(Ok(p)) if (1..=pages).contains(&p) => p,
        _ => return Err(ApiError::BadRequest(format!("`page` must be 1-{pages}"))),
    };
    let summary = {
        let mut c = cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let stale =
            |(s, at): &(Arc<report::Summary>, std::time::Instant)| s.as_of < newest && at.elapsed() >= REPORT_EVERY;
        if c.summary.as_ref().is_none_or(stale) && !c.computing {
            c.computing = true;
            let started = std::time::Instant::now();
            let (store, cache) = (Arc::clone(store), Arc::clone(cache));
            std::thread::Builder::new()
                .name("report".into())
                .spawn(move || {
                    let done = report::summary(&store);
                    let mut c = cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    c.computing = false;
                    match done {
                        Ok(s) => c.summary = Some((Arc::new(s), started)),
                        Err(e) => tracing::warn!(error = %e, "the report's summary failed"),
                    }
                })
                .map_err(|e| ApiError::Internal(format!("cannot start the report's thread: {e}")))?;
        }
        c.summary.as_ref().map(|(s, _)| Arc::clone(s))
    };
    let first = (at - 1) * report::PAGE_ROWS + 1;
    let metas = store.docs_from(first).take(report::PAGE_ROWS as usize).map(|m| m.map_err(ViewError::from));
    let rows = report::rows(store, metas)?;
    Ok((200, HTML, report::report_page(summary.as_deref(), &rows, Some((at, pages))).into_bytes()))
}
/// Rows of the HTML list at `/`, newest first.
const INDEX_ROWS: usize = 200;
/// Documents whose metadata a search page reads at most (about 20 ms here).
const INDEX_SCAN: usize = 20_000;
/// The path of a document's page: by id, in the `#ID` form no name can take.
pub(super) fn page_of(id: u64) -> String {
    format!("/documents/%23{id}")
}

/// The address of document `id`'s page at the passage `seg` (a text fragment).
fn passage_link(id: u64, seg: &str) -> String {
    match text_fragment(seg) {
        f if f.is_empty() => page_of(id),
        f => format!("{}#:~:text={f}", page_of(id)),
    }
}

/// `GET /documents/{x}`: the document page, its origins linking to their own pages.
pub(super) fn document(store: &Store, name_or_id: &str) -> Result<Reply, ApiError> {
    let seq = resolve(store, name_or_id)?;
    let (v, text) = model::shown(store, seq, ViewOptions::default())?;
    let page = html::document_page_linked(html::Site::Inspector, &v, &text, passage_link);
    Ok((200, HTML, page.into_bytes()))
}

/// `GET /compare?a=NAME_OR_ID&b=NAME_OR_ID`: document `a` beside its source `b` (by
/// default the source it copied the most words from), side by side.
pub(super) fn compare(store: &Store, query: &[(String, String)]) -> Result<Reply, ApiError> {
    let param = |k: &str| query.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str()).filter(|v| !v.is_empty());
    let a = param("a").ok_or_else(|| ApiError::BadRequest("`a` must name the document (its name or #ID)".into()))?;
    let seq = resolve(store, a)?;
    let origin = param("b").map(|b| resolve(store, b)).transpose()?;
    let s = model::side_by_side(store, seq, origin)?;
    let href = |a: u64, b: u64| format!("/compare?a=%23{a}&b=%23{b}");
    let page = compare::compare_page(html::Site::Inspector, &s, href, page_of);
    Ok((200, HTML, page.into_bytes()))
}

/// `POST /query`: the page of a text checked against the collection (the inspector's
/// form), its copied blocks linking their origins' pages at the passage; nothing is
/// stored.
pub(super) fn query(dd: &mut DataDir, text: &str) -> Result<Reply, ApiError> {
    if text.trim().is_empty() {
        return Err(ApiError::BadRequest("the form's `text` is empty".into()));
    }
    let doc = from_json(&serde_json::json!({ "text": text }).to_string(), "query", "query", Default::default())
        .map_err(|e| ApiError::BadRequest(format!("the text: {e}")))?;
    let q = dd.query(&doc)?;
    let v = model::document(dd.store(), model::DocParts::query(&doc, &q), ViewOptions::default())?;
    let page = html::document_page_linked(html::Site::Inspector, &v, &doc.text, passage_link);
    Ok((200, HTML, page.into_bytes()))
}

/// `GET /`: the newest documents, [`INDEX_ROWS`] a page (`before=ID`: those before
/// it), or those whose name, title or URL contains `q` (ignoring case; `name=`: whose
/// name starts with it), newest first. A search reads at most [`INDEX_SCAN`] documents'
/// metadata a page, so that a page answers in bounded time however large the
/// collection: the page then links the next stretch.
pub(super) fn index(store: &Store, query: &[(String, String)]) -> Result<Reply, ApiError> {
    let param = |k: &str| query.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str()).filter(|v| !v.is_empty());
    let before = match param("before").map(str::parse::<u64>) {
        None => u64::MAX,
        Some(Ok(n)) => n,
        Some(Err(_)) => return Err(ApiError::BadRequest("`before` must be a document id".into())),
    };
    let search = param("q").map(str::to_lowercase);
    let prefix = param("name");
    let matches = |meta: &textorigin_store::storage::store::DocMeta| {
        let title = model::title_of_meta(meta);
        prefix.is_none_or(|p| meta.name.starts_with(p))
            && search.as_deref().is_none_or(|q| {
                [Some(meta.name.as_str()), title.as_deref(), meta.url.as_deref()]
                    .iter()
                    .flatten()
                    .any(|f| f.to_lowercase().contains(q))
            })
    };
    let mut rows = Vec::new();
    let mut titles = HashMap::new();
    let origins = model::features(store)?.origins;
    let (mut scanned, mut next) = (0, None);
    for meta in store.docs_down_from(before.saturating_sub(1)) {
        let meta = meta?;
        if rows.len() == INDEX_ROWS || scanned == INDEX_SCAN {
            next = Some(meta.seq + 1);
            break;
        }
        scanned += 1;
        if matches(&meta) {
            titles.extend(model::title_of_meta(&meta).map(|t| (meta.seq, t)));
            rows.push(model::list_row(store, &meta, origins)?);
        }
    }
    origin_titles(store, &rows, &mut titles)?;
    let page = html::IndexPage {
        search: param("q").or(prefix).unwrap_or(""),
        rows: &rows,
        titles: &titles,
        revision_queue: store.queue_len()?,
        text: "",
        note: None,
        older: next.map(|n| {
            let mut q = format!("/?before={n}");
            for (k, v) in query.iter().filter(|(k, _)| k == "q" || k == "name") {
                q += &format!("&{k}={}", html::escape_query(v));
            }
            q
        }),
    };
    Ok((200, HTML, html::index_page(&page, page_of).into_bytes()))
}

/// Adds to `titles` (those of `rows`, by id) the titles of the rows' dominant origins,
/// for a page of the list.
fn origin_titles(store: &Store, rows: &[model::ListRow], titles: &mut HashMap<u64, String>) -> Result<(), ApiError> {
    for o in rows.iter().filter_map(|r| r.dominant_origin.as_ref().and_then(|d| d.id)) {
        if let std::collections::hash_map::Entry::Vacant(e) = titles.entry(o) {
            e.insert(store.doc(o)?.as_ref().and_then(model::title_of_meta).unwrap_or_default());
        }
    }
    titles.retain(|_, t| !t.is_empty());
    Ok(())
}

/// Documents a text search reads at most (the earliest sources of the passage and those
/// that copied from them).
const TEXT_CANDIDATES: usize = 2_000;

/// `GET /?text=PASSAGE`: the documents that hold a passage (its terms in order, whatever
/// the case, spacing and punctuation), oldest first. The passage is analysed
/// as a query against the newest checkpoint: its copied blocks name the earliest
/// documents holding its parts; those and the documents that copied from them (the
/// copiers index) are read, at most [`TEXT_CANDIDATES`], and each is kept when its text
/// holds the passage. A passage shorter than the table's shingles (k terms) is not
/// found through the table, one shorter than 2k terms may hold no selected shingle (the
/// page says so).
pub(super) fn text_search(store: &Store, dd: &mut DataDir, passage: &str) -> Result<Reply, ApiError> {
    let doc = from_json(&serde_json::json!({ "text": passage }).to_string(), "search", "search", Default::default())
        .map_err(|e| ApiError::BadRequest(format!("the passage: {e}")))?;
    let q = dd.query(&doc)?;
    let rabin = Rabin::new(1).with_terms(dd.config().terms);
    let terms = |text: &str| {
        let mut tokens = Vec::new();
        tokenize(text, &rabin, &mut tokens);
        tokens.iter().map(|t| t.fp).collect::<Vec<u64>>()
    };
    let want = terms(passage);
    let mut candidates = std::collections::BTreeSet::new();
    for o in q.result.copied_blocks.iter().map(|b| b.origin) {
        candidates.insert(o);
        for c in store.copiers_of(o)? {
            if candidates.len() >= TEXT_CANDIDATES {
                break;
            }
            candidates.insert(c);
        }
    }
    let mut rows = Vec::new();
    let mut titles = HashMap::new();
    let origins = model::features(store)?.origins;
    for &c in &candidates {
        let (Some(meta), Some(text)) = (store.doc(c)?, store.text(c)?) else { continue };
        if !want.is_empty() && terms(&text).windows(want.len()).any(|w| w == want) {
            titles.extend(model::title_of_meta(&meta).map(|t| (c, t)));
            rows.push(model::list_row(store, &meta, origins)?);
            if rows.len() == INDEX_ROWS {
                break;
            }
        }
    }
    origin_titles(store, &rows, &mut titles)?;
    let k = dd.config().k as usize;
    let note = match (rows.len(), want.len()) {
        (_, n) if n < k => format!(
            "A passage of {n} terms is shorter than the shingles the table holds ({k} terms): give at least {k}."
        ),
        (0, n) if n < 2 * k => format!(
            "No stored document was found holding this passage; one of fewer than {} terms may be missed (the table keeps some of its shingles, not all): give a longer one.",
            2 * k
        ),
        (0, _) => "No stored document holds this passage.".to_string(),
        (n, _) if n == INDEX_ROWS => format!("The first {n} documents that hold this passage, oldest first."),
        (n, _) => format!("{n} document(s) hold this passage, oldest first."),
    };
    let page = html::IndexPage {
        search: "",
        rows: &rows,
        titles: &titles,
        revision_queue: store.queue_len()?,
        older: None,
        text: passage,
        note: Some(note),
    };
    Ok((200, HTML, html::index_page(&page, page_of).into_bytes()))
}

/// A text fragment (`#:~:text=...`, the scroll-to-text URL fragment) for a passage:
/// its first eight words, percent-encoded, so that a browser opens the origin's page at
/// the passage.
fn text_fragment(passage: &str) -> String {
    // Chinese and Japanese have no spaces: their first sixteen characters (a browser's
    // segmenter makes each ideograph a word boundary) instead of a whole paragraph.
    let (mut words, mut cjk, mut start) = (0, 0, String::new());
    'words: for w in passage.split_whitespace() {
        if words == 8 {
            break;
        }
        if !start.is_empty() {
            start.push(' ');
        }
        for c in w.chars() {
            if textorigin_core::text::stands_alone(c) || textorigin_core::text::run_class(c) != 0 {
                if cjk == 16 {
                    break 'words;
                }
                cjk += 1;
            }
            start.push(c);
        }
        words += 1;
    }
    let mut out = String::new();
    for b in start.trim_end().bytes() {
        if b.is_ascii_alphanumeric() || b"._~".contains(&b) {
            out.push(b as char);
        } else {
            out += &format!("%{b:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_fragments_take_the_first_words_encoded() {
        assert_eq!(
            text_fragment("The old harbour-bridge, reopened\n on Monday at 7 a.m. today"),
            "The%20old%20harbour%2Dbridge%2C%20reopened%20on%20Monday%20at%207"
        );
        // Issue 33: a Chinese paragraph is one "word" between spaces: its first sixteen
        // characters, not the whole of it.
        let fragment = text_fragment("工程师们更换了全部十一根钢缆，重建了南侧引桥，并安装了新的排水系统。");
        let decoded = percent_encoding::percent_decode_str(&fragment).decode_utf8().unwrap();
        assert_eq!(decoded, "工程师们更换了全部十一根钢缆，重建");
    }
}
