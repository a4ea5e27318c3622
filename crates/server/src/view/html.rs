//! Pages for people: a document with its copied blocks highlighted (`show --html`) and
//! an overview of a collection (`report --html`).
//!
//! Pages are self-contained (inline CSS, inline SVG, no scripts, no external fonts) and
//! every piece of document text is escaped, so a document containing markup or a
//! `<script>` renders as text. A copied block is an `<a class="copied">` with
//! `data-origin-id`, `data-origin-name` and a link to the origin's entry in the legend;
//! novel text is not marked.

use super::model::{DocRef, DocumentView, Dominant, ListRow, NearDupView, QuotationView};

/// Escapes text for HTML and SVG.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const PALETTE: [&str; 10] =
    ["#fdd49e", "#c6dbef", "#c7e9c0", "#dadaeb", "#fcbba1", "#d9d9d9", "#f2e2a0", "#bfd3e6", "#fde0dd", "#ccece6"];

const STYLE: &str = "body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.5;color:#222}\
pre.doc{white-space:pre-wrap;font-family:inherit;font-size:1em}\
a.copied{color:inherit;text-decoration:none;border-bottom:2px solid #888}\
.template{color:#999}\
.bar{display:flex;height:1.4em;border:1px solid #999;margin:.5em 0}\
.bar span{display:block;height:100%}\
table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:.2em .6em;text-align:left}\
.legend li{margin:.2em 0}.swatch{display:inline-block;width:1em;height:1em;vertical-align:middle;margin-right:.4em;border:1px solid #999}";

/// Where a form that changes or runs something holds its CSRF field: the HTTP inspector
/// fills it with a signed-in browser's token, or empties it (`http::session`).
pub const CSRF_SLOT: &str = "<!--csrf-->";

/// A self-contained page: `body` under the shared style.
pub fn page(title: &str, body: &str) -> String {
    page_in(Site::Alone, title, body)
}

/// Where a page is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Site {
    /// A file of its own (`show --html`, `report --html`).
    Alone,
    /// The HTTP inspector: a link back to the list of documents at the top.
    Inspector,
}

/// [`page`] for `site`.
pub fn page_in(site: Site, title: &str, body: &str) -> String {
    let nav = match site {
        Site::Alone => "",
        Site::Inspector => "<p><a href=\"/\">← documents</a></p>",
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head>\n<body>{nav}\n{body}</body></html>\n",
        escape(title)
    )
}

/// A page of the inspector's list of documents.
pub struct IndexPage<'a> {
    /// The search asked for (name, title or URL).
    pub search: &'a str,
    /// The documents, newest first.
    pub rows: &'a [ListRow],
    /// Titles by document id, of the rows and their dominant origins (those with one).
    pub titles: &'a std::collections::HashMap<u64, String>,
    pub revision_queue: u64,
    /// The address of the next page (older documents), when there is one.
    pub older: Option<String>,
    /// The passage a text search asked for, and what it found, in words.
    pub text: &'a str,
    pub note: Option<String>,
}

/// `s` escaped for a URL's query (RFC 3986 unreserved characters kept).
pub fn escape_query(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The inspector's list of documents (newest first), a page of them, with a search by
/// name, title and URL; a document is shown by its title when it has one (its name
/// beside); `href` is the address of a document's page.
pub fn index_page(p: &IndexPage<'_>, href: impl Fn(u64) -> String) -> String {
    let (rows, revision_queue) = (p.rows, p.revision_queue);
    let shown = |id: u64, name: &str| match p.titles.get(&id) {
        Some(t) => format!("{} <small>({})</small>", escape(t), escape(name)),
        None => escape(name),
    };
    let mut s = String::from(
        "<h1>Documents</h1><form action=\"/\"><input name=\"q\" placeholder=\"name, title or URL\" value=\"",
    );
    s += &escape(p.search);
    s += "\"> <button>Search</button></form><form action=\"/\"><input name=\"text\" size=\"60\" placeholder=\"a passage: the documents that hold it\" value=\"";
    s += &escape(p.text);
    s += "\"> <button>Find</button></form>";
    s += &format!(
        "<details><summary>Check a text against the collection</summary><form method=\"post\" action=\"/query\" id=\"check\">{CSRF_SLOT}<p><textarea name=\"text\" rows=\"6\" cols=\"80\" required placeholder=\"a text to analyse: what it copies and from where (nothing is stored)\"></textarea></p><p><button>Check</button></p></form></details>"
    );
    s += "<p><a href=\"/report\">Collection report</a> · <a href=\"/metrics\">metrics</a></p>";
    if let Some(note) = &p.note {
        s += &format!("<p id=\"found\">{}</p>", escape(note));
    }
    if revision_queue > 0 {
        s += &format!(
            "<p id=\"revision-queue\">{revision_queue} document(s) wait to be revised (by documents published before what they copied; done while the daemon is idle).</p>"
        );
    }
    s += "\
          <table id=\"documents\"><tr><th>id</th><th>name</th><th>tokens</th><th>old</th><th>dominant origin</th></tr>";
    for r in rows {
        let dom = match r.dominant() {
            Dominant::Other(d) => {
                let id = d.id.unwrap_or(0);
                format!("<a href=\"{}\">#{id} {}</a>", escape(&href(id)), shown(id, &d.name))
            }
            Dominant::Itself => r.itself_text().into(),
            Dominant::None => "-".into(),
        };
        let counted = r.tokens - r.template_tokens;
        let old = if counted == 0 { 0.0 } else { 100.0 * f64::from(r.old_tokens) / f64::from(counted) };
        let dom = match &r.exact_copy_of {
            Some(of) => {
                let id = of.id.unwrap_or(0);
                format!("an exact copy of <a href=\"{}\">#{id} {}</a>", escape(&href(id)), shown(id, &of.name))
            }
            None => dom,
        };
        let (old, dom) = match r.origins_off {
            true if r.exact_copy_of.is_none() => ("-".to_string(), "origins off".to_string()),
            true => ("-".to_string(), dom),
            false => (format!("{old:.1}%"), dom),
        };
        s += &format!(
            "<tr><td>{}</td><td><a href=\"{}\">{}</a></td><td>{}</td><td>{old}</td><td>{dom}</td></tr>",
            r.id,
            escape(&href(r.id)),
            shown(r.id, &r.name),
            r.tokens
        );
    }
    s += "</table>\n";
    if rows.is_empty() {
        s += "<p>No document here.</p>\n";
    }
    if let Some(older) = &p.older {
        s += &format!("<p><a id=\"older\" href=\"{}\">Older documents</a></p>\n", escape(older));
    }
    page("textorigin", &s)
}

/// The document page of a stored document's view (with `text`, its whole stored text):
/// the text with each copied block coloured by origin and linking to the legend entry
/// of its origin, then its near-duplicates and quotations.
pub fn document_page(view: &DocumentView, text: &str) -> String {
    document_page_linked(Site::Alone, view, text, |id, _| format!("#origin-{id}"))
}

/// [`document_page`] with each link to an earlier document made by `href(its id, the
/// passage)`: copied blocks (their text), near-duplicates (no passage) and quotation
/// sources (the quoted sentence). The HTTP inspector links the earlier document's page
/// at the passage.
pub fn document_page_linked(site: Site, view: &DocumentView, text: &str, href: impl Fn(u64, &str) -> String) -> String {
    // Origins in order of first appearance, each with a colour.
    let mut origins: Vec<Copied> = Vec::new(); // amounts in bytes
    let mut refs: Vec<&DocRef> = Vec::new(); // the same origins, as referred to
    let mut spans: Vec<(usize, usize, usize, String)> = Vec::new(); // (start, end, origin index, also earlier)
    for b in &view.copied_blocks {
        let id = b.origin.id.unwrap_or(0);
        let name = b.origin.name.clone();
        let idx = match origins.iter().position(|o| o.origin == id) {
            Some(i) => i,
            None => {
                origins.push(Copied { origin: id, name, amount: 0 });
                refs.push(&b.origin);
                origins.len() - 1
            }
        };
        let (s, e) = (b.start_byte as usize, b.end_byte as usize);
        // Earlier documents that also hold part of it, in its tooltip.
        let also: String = b
            .also_earlier
            .iter()
            .map(|x| format!("; also earlier in #{} {}", x.origin.id.unwrap_or(0), x.origin.name))
            .collect();
        if s < e && e <= text.len() {
            spans.push((s, e, idx, also));
        }
    }
    spans.sort();
    // Site template lines: greyed, with the pages holding them.
    let templates: Vec<(usize, usize, u32)> = view
        .templates
        .iter()
        .map(|t| (t.start_byte as usize, t.end_byte as usize, t.pages))
        .filter(|&(s, e, _)| s < e && e <= text.len())
        .collect();
    // Cut the text into segments, each marked with the first block that covers it.
    let mut cuts: Vec<usize> = vec![0, text.len()];
    for (s, e) in spans.iter().map(|x| (x.0, x.1)).chain(templates.iter().map(|x| (x.0, x.1))) {
        cuts.push(s);
        cuts.push(e);
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut body_text = String::new();
    for w in cuts.windows(2) {
        let (s, e) = (w[0], w[1]);
        let Some(seg) = text.get(s..e) else { continue };
        match spans.iter().find(|&&(bs, be, _, _)| bs <= s && e <= be) {
            Some((_, _, i, also)) => {
                let i = *i;
                origins[i].amount += (e - s) as u64;
                let Copied { origin: id, name, .. } = &origins[i];
                body_text += &format!(
                    "<a class=\"copied\" href=\"{}\" data-origin-id=\"{id}\" data-origin-name=\"{}\" title=\"from #{id} {}{}\" style=\"background:{}\">{}</a>",
                    escape(&href(*id, seg)),
                    escape(name),
                    escape(name),
                    escape(also),
                    PALETTE[i % PALETTE.len()],
                    escape(seg)
                );
            }
            None => match templates.iter().find(|&&(ts, te, _)| ts <= s && e <= te) {
                Some((_, _, pages)) => {
                    body_text += &format!(
                        "<span class=\"template\" title=\"site template: on {pages} pages of this site, neither old nor fresh\">{}</span>",
                        escape(seg)
                    )
                }
                None => body_text += &escape(seg),
            },
        }
    }
    let total = text.len().max(1) as f64;
    let copied: u64 = origins.iter().map(|o| o.amount).sum();
    let mut bar = String::new();
    let mut legend = String::new();
    for (i, Copied { origin: id, name, amount: bytes }) in origins.iter().enumerate() {
        let pct = 100.0 * *bytes as f64 / total;
        let c = PALETTE[i % PALETTE.len()];
        bar += &format!(
            "<span title=\"#{id} {}: {pct:.1}%\" style=\"width:{pct:.3}%;background:{c}\"></span>",
            escape(name)
        );
        // Its similarity in words, and (in the inspector) the two texts side by side.
        let similar = view.similarity.iter().flatten().find(|s| s.origin.id == Some(*id));
        let mut compare = similar.map_or(String::new(), |s| format!(" ({:.1}% of the words)", s.percent));
        if let (Site::Inspector, Some(me)) = (site, view.id) {
            compare += &format!(" · <a class=\"compare\" href=\"/compare?a=%23{me}&amp;b=%23{id}\">side by side</a>");
        }
        legend += &format!(
            "<li id=\"origin-{id}\"><span class=\"swatch\" style=\"background:{c}\"></span>#{id} {}{} — {pct:.1}% of the text{compare}</li>\n",
            escape(name),
            details(refs[i])
        );
    }
    let novel = 100.0 - 100.0 * copied as f64 / total;
    bar += &format!("<span title=\"new text: {novel:.1}%\" style=\"width:{novel:.3}%;background:#fff\"></span>");
    let name = &view.name;
    let dominant = match view.dominant() {
        Dominant::None => "none (no tokens)".to_string(),
        Dominant::Itself => view.itself_text(),
        Dominant::Other(r) => format!("#{} {}", r.id.unwrap_or(0), escape(&r.name)),
    };
    // Its title (from its metadata) when it has one, its name beside.
    let title = view.meta.as_ref().and_then(|m| m.get("title")?.as_str());
    let heading = match title {
        Some(t) => format!("{} <small>({})</small>", escape(t), escape(name)),
        None => escape(name),
    };
    let template = match view.template_tokens {
        0 => String::new(),
        n => {
            let copied = match view.furniture_copied {
                0 => String::new(),
                c => format!("; {c} copied tokens now labelled furniture"),
            };
            format!(
                ", {n} <span class=\"template\">site template</span> (neither, on {} lines{copied})",
                view.templates.len()
            )
        }
    };
    let about = |view: &DocumentView| match &view.exact_copy_of {
        Some(of) => {
            let id = of.id.unwrap_or(0);
            about(view) + &format!(
                "<p id=\"exact-copy\">An exact copy of <a href=\"{}\">#{id} {}</a> (its terms): answered from it, not analysed again.</p>\n",
                escape(&href(id, "")),
                escape(&of.name)
            )
        }
        None => about(view),
    };
    let mut body = match view.origins_off {
        true => format!(
            "<h1>{heading}</h1>\n{}<p id=\"summary\">Origins: off in this data directory (near-duplicates and quotations alone). {} tokens.</p>\n<pre class=\"doc\" id=\"text\">{}</pre>\n",
            about(view),
            view.tokens,
            escape(text)
        ),
        false => format!(
            "<h1>{heading}</h1>\n{}<p>Dominant origin: {dominant}. {} tokens, {} old, {} fresh{template}.</p>\n<div class=\"bar\" id=\"summary\">{bar}</div>\n<ul class=\"legend\">{legend}<li><span class=\"swatch\" style=\"background:#fff\"></span>new text — {novel:.1}%</li></ul>\n<pre class=\"doc\" id=\"text\">{body_text}</pre>\n",
            about(view),
            view.tokens,
            view.old_tokens,
            view.fresh_tokens
        ),
    };
    match &view.near_duplicates {
        None => body += "<h2>Near-duplicates of earlier documents</h2>\n<p id=\"near-duplicates\">Off in this data directory.</p>\n",
        Some(near) if !near.is_empty() => {
            body += "<h2>Near-duplicates of earlier documents</h2>\n<ul id=\"near-duplicates\">\n";
            body += &near_duplicate_items(near, &href);
            body += "</ul>\n";
        }
        Some(_) => {}
    }
    match &view.quotations {
        None => body += "<h2>Quotations</h2>\n<p id=\"quotations\">Off in this data directory.</p>\n",
        Some(quotes) if !quotes.is_empty() => {
            body += "<h2>Quotations</h2>\n<ul id=\"quotations\">\n";
            body += &quotation_items(quotes, &href);
            body += "</ul>\n";
        }
        Some(_) => {}
    }
    // Issue 35: the later documents that copied from it (when the caller looked them up).
    if let Some(c) = view.copied_by.as_ref().filter(|c| c.count > 0) {
        body += &format!("<h2>Copied by</h2>\n<p>{} later document(s) copied from it", c.count);
        if c.count > c.documents.len() {
            body += &format!(" (the first {} shown)", c.documents.len());
        }
        body += ":</p>\n<ul id=\"copied-by\">\n";
        for d in &c.documents {
            let id = d.document.id.unwrap_or(0);
            body += &format!(
                "<li><a href=\"{}\">#{id} {}</a>{}: {} tokens</li>\n",
                escape(&href(id, "")),
                escape(&d.document.name),
                details(&d.document),
                d.tokens
            );
        }
        body += "</ul>\n";
    }
    page_in(site, name, &body)
}

/// What a document's page says of it beyond its name: its URL, date and metadata.
fn about(view: &DocumentView) -> String {
    let mut parts = Vec::new();
    if let Some(u) = &view.url {
        parts.push(link(u));
    }
    if let Some(d) = &view.published_at {
        parts.push(format!("published {}", escape(d)));
    }
    let mut out = match parts.is_empty() {
        true => String::new(),
        false => format!("<p id=\"about\">{}</p>\n", parts.join(" · ")),
    };
    if !view.revisions.is_empty() {
        let by: Vec<String> = view
            .revisions
            .iter()
            .map(|r| format!("#{} {}", r.caused_by.id.unwrap_or(0), escape(&r.caused_by.name)))
            .collect();
        out += &format!(
            "<p id=\"revisions\">Revised by {}: published before an origin of this document, it arrived after it (<code>show --history</code>).</p>\n",
            by.join(", then ")
        );
    }
    if let Some(serde_json::Value::Object(m)) = &view.meta {
        out += "<dl id=\"meta\">";
        for (k, v) in m {
            let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
            out += &format!("<dt>{}</dt><dd>{}</dd>", escape(k), escape(&v));
        }
        out += "</dl>\n";
    }
    out
}

/// An origin's title, URL and date, where it had them (` “Title” — url, date`).
fn details(r: &DocRef) -> String {
    let mut out = r.title.as_ref().map_or_else(String::new, |t| format!(" “{}”", escape(t)));
    let parts: Vec<String> =
        [r.url.as_deref().map(link), r.published_at.as_deref().map(escape)].into_iter().flatten().collect();
    if !parts.is_empty() {
        out += &format!(" ({})", parts.join(", "));
    }
    out
}

/// A URL as a link when it is a web address, else as text.
fn link(url: &str) -> String {
    let lower = url.to_ascii_lowercase();
    match lower.starts_with("http://") || lower.starts_with("https://") {
        true => format!("<a href=\"{}\" rel=\"noreferrer\">{}</a>", escape(url), escape(url)),
        false => escape(url),
    }
}

/// The list items of a document page's near-duplicates.
fn near_duplicate_items(near: &[NearDupView], href: impl Fn(u64, &str) -> String) -> String {
    let mut body = String::new();
    for d in near {
        let what = if d.exact { "exact copy".to_string() } else { format!("resemblance {:.2}", d.resemblance) };
        body += &format!(
            "<li><a href=\"{}\">#{} {}</a>{} — {what}</li>\n",
            escape(&href(d.id, "")),
            d.id,
            escape(&d.name),
            super::text::late(d.arrived_after)
        );
    }
    body
}

/// The list items of a document page's quotations.
fn quotation_items(quotes: &[QuotationView], href: impl Fn(u64, &str) -> String) -> String {
    let mut body = String::new();
    for q in quotes {
        let sources: Vec<String> = q
            .sources
            .iter()
            .map(|s| {
                format!(
                    "<a href=\"{}\">#{} {}</a>{} (score {:.2})",
                    escape(&href(s.id, &s.sentence)),
                    s.id,
                    escape(&s.name),
                    super::text::late(s.arrived_after),
                    s.score
                )
            })
            .collect();
        body += &format!("<li>“{}” — from {}</li>\n", escape(&q.text), sources.join(", "));
    }
    body
}

/// An origin and how much was copied from it (tokens in the report, bytes on a
/// document page).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copied {
    pub origin: u64,
    pub name: String,
    pub amount: u64,
}
