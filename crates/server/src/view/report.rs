//! The collection report (`report --html`, the inspector's `/report`): totals, the
//! most-copied sources with boilerplate apart, the copy graph, and the documents.
//!
//! The summary reads every stored result ([`summary`]); the inspector computes it off
//! the request path and pages the documents ([`rows`] of a range), so that a page
//! answers in bounded time however large the collection (23 MB and 2.2 s for
//! 199,000 documents as one page).

use std::collections::{BTreeMap, HashMap};

use textorigin_store::storage::store::{DocMeta, Store};

use super::html::{escape, page};
use super::model::{title_of_meta, ViewError};

/// A source is copied boilerplate when at least this many documents copy it...
pub const BOILERPLATE_COPIERS: u64 = 10;
/// ... and they take fewer tokens each than this on average: a share bar, a byline, a
/// cookie notice, not a story (its copies take whole paragraphs).
pub const BOILERPLATE_TOKENS: u64 = 20;
/// Documents a page of the inspector's report lists.
pub const PAGE_ROWS: u64 = 500;

/// One document of the report.
#[derive(Debug, Clone)]
pub struct ReportDoc {
    pub id: u64,
    pub name: String,
    pub tokens: u64,
    pub old_tokens: u64,
    pub dominant: Option<(u64, String)>,
}

/// A source and how much the collection copied from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub id: u64,
    /// Its title when it has one, else its name.
    pub shown: String,
    pub documents: u64,
    pub tokens: u64,
}

/// What the report says of the whole collection.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The newest document it covers.
    pub as_of: u64,
    pub documents: u64,
    pub tokens: u64,
    pub old_tokens: u64,
    /// The most-copied sources, most tokens first: stories, and boilerplate apart.
    pub sources: Vec<Source>,
    pub boilerplate: Vec<Source>,
    /// The copy graph: its nodes (the most involved) with their shown names, and the
    /// edges between them (copier, source, tokens).
    pub nodes: Vec<(u64, String)>,
    pub edges: Vec<(u64, u64, u64)>,
}

/// How a document is shown: its title (from its metadata) when it has one.
fn shown(store: &Store, id: u64) -> Result<String, ViewError> {
    let meta = store.doc(id)?;
    Ok(meta.as_ref().and_then(title_of_meta).or(meta.map(|m| m.name)).unwrap_or_default())
}

/// The report's rows of `metas` (documents in order).
pub fn rows(
    store: &Store,
    metas: impl Iterator<Item = Result<DocMeta, ViewError>>,
) -> Result<Vec<ReportDoc>, ViewError> {
    let mut docs = Vec::new();
    for meta in metas {
        let meta = meta?;
        let r = store.labelled_result(meta.seq)?.ok_or(ViewError::Missing { seq: meta.seq, what: "result" })?;
        docs.push(ReportDoc {
            id: meta.seq,
            name: title_of_meta(&meta).unwrap_or(meta.name),
            // Old% is of the tokens counted old or fresh (site templates aside).
            tokens: u64::from(r.counted_tokens()),
            old_tokens: u64::from(r.old_tokens),
            dominant: r.dominant_origin.map(|o| Ok::<_, ViewError>((o, shown(store, o)?))).transpose()?,
        });
    }
    Ok(docs)
}

/// The summary of every stored document (reads each one's result once).
pub fn summary(store: &Store) -> Result<Summary, ViewError> {
    let (mut documents, mut tokens, mut old_tokens, mut as_of) = (0, 0, 0, 0);
    // Source → (documents copying, tokens copied); the copy graph's edges.
    let mut sources: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    let mut edges: Vec<(u64, u64, u64)> = Vec::new();
    for meta in store.docs() {
        let meta = meta?;
        let r = store.labelled_result(meta.seq)?.ok_or(ViewError::Missing { seq: meta.seq, what: "result" })?;
        (documents, tokens, old_tokens, as_of) =
            (documents + 1, tokens + u64::from(r.counted_tokens()), old_tokens + u64::from(r.old_tokens), meta.seq);
        let mut from: BTreeMap<u64, u64> = BTreeMap::new();
        for b in &r.copied_blocks {
            *from.entry(b.origin).or_default() += u64::from(b.span.end_token - b.span.start_token);
        }
        for (o, n) in from {
            let e = sources.entry(o).or_default();
            (e.0, e.1) = (e.0 + 1, e.1 + n);
            edges.push((meta.seq, o, n));
        }
    }
    let mut ranked: Vec<(u64, u64, u64)> = sources.into_iter().map(|(id, (d, t))| (id, d, t)).collect();
    ranked.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    let (mut stories, mut boilerplate) = (Vec::new(), Vec::new());
    for (id, d, t) in ranked {
        let list = if d >= BOILERPLATE_COPIERS && t < BOILERPLATE_TOKENS * d { &mut boilerplate } else { &mut stories };
        if list.len() < 50 {
            list.push(Source { id, shown: shown(store, id)?, documents: d, tokens: t });
        }
    }
    // The graph: the 60 documents most involved, and the edges between them.
    let mut degree: HashMap<u64, u64> = HashMap::new();
    for &(a, b, n) in &edges {
        *degree.entry(a).or_default() += n;
        *degree.entry(b).or_default() += n;
    }
    let mut ids: Vec<u64> = degree.keys().copied().collect();
    ids.sort_by(|a, b| degree[b].cmp(&degree[a]).then(a.cmp(b)));
    ids.truncate(60);
    ids.sort_unstable();
    edges.retain(|(a, b, _)| ids.binary_search(a).is_ok() && ids.binary_search(b).is_ok());
    let nodes = ids.into_iter().map(|id| Ok((id, shown(store, id)?))).collect::<Result<_, ViewError>>()?;
    Ok(Summary { as_of, documents, tokens, old_tokens, sources: stories, boilerplate, nodes, edges })
}

/// The report: the summary (None: still being computed), the documents `docs` and, in
/// the inspector, (this page, pages) for the links between pages.
pub fn report_page(summary: Option<&Summary>, docs: &[ReportDoc], pager: Option<(u64, u64)>) -> String {
    let mut s = String::from("<h1>Collection report</h1>\n");
    match summary {
        None => s += "<p id=\"computing\">The collection's summary is being computed: reload in a moment.</p>\n",
        Some(sum) => {
            s += &format!(
                "<p>{} documents, {} tokens, {:.1}% of them copied from earlier documents (as of #{}).</p>\n",
                sum.documents,
                sum.tokens,
                100.0 * sum.old_tokens as f64 / sum.tokens.max(1) as f64,
                sum.as_of
            );
            s += "<h2>Most-copied sources</h2>\n";
            s += &sources_table("sources", &sum.sources);
            s += &format!(
                "<h2>Copied boilerplate</h2>\n<p>Sources that {BOILERPLATE_COPIERS} or more documents copy, fewer than {BOILERPLATE_TOKENS} tokens each on average: share bars, bylines, notices.</p>\n"
            );
            s += &sources_table("boilerplate", &sum.boilerplate);
            s += "<h2>Copy graph</h2>\n";
            s += &graph_svg(&sum.nodes, &sum.edges);
        }
    }
    s += "<h2>Documents</h2>\n";
    let links = pager.map(|(at, pages)| {
        let link = |p: u64, what: &str| format!("<a href=\"/report?page={p}\">{what}</a>");
        let mut l = format!("<p class=\"pager\">page {at} of {pages}");
        if at > 1 {
            l += &format!(" · {}", link(at - 1, "newer"));
        }
        if at < pages {
            l += &format!(" · {}", link(at + 1, "next"));
        }
        l + "</p>\n"
    });
    s += links.as_deref().unwrap_or_default();
    s += "<table id=\"documents\"><tr><th>id</th><th>name</th><th>tokens</th><th>old</th><th>dominant origin</th></tr>\n";
    for d in docs {
        let dom = match &d.dominant {
            None => "-".to_string(),
            Some((o, _)) if *o == d.id => "itself".to_string(),
            Some((o, n)) => format!("<a href=\"#doc-{o}\">#{o} {}</a>", escape(n)),
        };
        s += &format!(
            "<tr id=\"doc-{}\"><td>{}</td><td>{}</td><td>{}</td><td>{:.1}%</td><td>{dom}</td></tr>\n",
            d.id,
            d.id,
            escape(&d.name),
            d.tokens,
            100.0 * d.old_tokens as f64 / d.tokens.max(1) as f64
        );
    }
    s += "</table>\n";
    s += links.as_deref().unwrap_or_default();
    page("Collection report", &s)
}

/// A table of sources, most tokens copied first.
fn sources_table(id: &str, sources: &[Source]) -> String {
    let mut s =
        format!("<table id=\"{id}\"><tr><th>source</th><th>documents copying</th><th>tokens copied</th></tr>\n");
    for src in sources {
        s += &format!(
            "<tr><td><a href=\"#doc-{0}\">#{0} {1}</a></td><td>{2}</td><td>{3}</td></tr>\n",
            src.id,
            escape(&src.shown),
            src.documents,
            src.tokens
        );
    }
    s + "</table>\n"
}

/// Documents on a circle, an arrow from each copier to its source.
fn graph_svg(nodes: &[(u64, String)], edges: &[(u64, u64, u64)]) -> String {
    let (w, h, r) = (640.0, 640.0, 250.0);
    let pos = |i: usize| {
        let a = std::f64::consts::TAU * i as f64 / nodes.len().max(1) as f64;
        (w / 2.0 + r * a.cos(), h / 2.0 + r * a.sin())
    };
    let at = |id: u64| nodes.iter().position(|n| n.0 == id);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"graph\" width=\"{w}\" height=\"{h}\" font-size=\"10\" font-family=\"sans-serif\">\n<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"#555\"/></marker></defs>\n"
    );
    let max = edges.iter().map(|e| e.2).max().unwrap_or(1).max(1) as f64;
    for &(a, b, n) in edges {
        let (Some(ia), Some(ib)) = (at(a), at(b)) else { continue };
        let ((x1, y1), (x2, y2)) = (pos(ia), pos(ib));
        s += &format!(
            "<line class=\"edge\" x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" stroke=\"#555\" stroke-opacity=\"0.6\" stroke-width=\"{:.1}\" marker-end=\"url(#arrow)\"><title>#{a} copied {n} tokens from #{b}</title></line>\n",
            0.5 + 3.0 * n as f64 / max
        );
    }
    for (i, (id, name)) in nodes.iter().enumerate() {
        let (x, y) = pos(i);
        s += &format!(
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"5\" fill=\"#1f77b4\"><title>#{id} {}</title></circle><text x=\"{:.1}\" y=\"{:.1}\">#{id}</text>\n",
            escape(name),
            x + 7.0,
            y + 3.0
        );
    }
    s + "</svg>\n"
}
