//! A document and one of its sources side by side: the HTML page
//! (`/compare?a=&b=`, `show --side-by-side --html`) and the terminal's two columns
//! (`show --side-by-side`), both from [`SideBySide`].
//!
//! The page shows both whole texts in two columns that scroll on their own; each
//! copied passage links its counterpart in the other column (`#a-N` ↔ `#b-N`), and the
//! words edited on either side are marked. The similarity of the document to each of
//! its sources heads it, each linking the comparison with that source.

use super::html::{escape, page_in, Site};
use super::model::{Pair, SideBySide};
use super::text::safe;

const STYLE: &str = "<style>.cols{display:grid;grid-template-columns:1fr 1fr;gap:1em}\
.cols pre{white-space:pre-wrap;font-family:inherit;max-height:75vh;overflow:auto;border:1px solid #ccc;padding:.5em;margin:0}\
.cols a.copied{background:#fde9a9;color:inherit;text-decoration:none}.cols a.copied:target{outline:2px solid #c60}\
mark.edit{background:#f7a8a8;text-decoration:line-through}mark.edit.added{text-decoration:none;background:#a8d8f7}</style>";

/// A copied passage on one side: its bytes, its pair's number, its edits' bytes.
struct Passage {
    start: u32,
    end: u32,
    pair: usize,
    edits: Vec<(u32, u32)>,
}

/// The passages of one side, in order; overlapping ones (a source passage copied
/// twice) are clipped.
fn side(pairs: &[Pair], source: bool) -> Vec<Passage> {
    let mut spans: Vec<Passage> = pairs
        .iter()
        .enumerate()
        .map(|(pair, p)| match source {
            false => Passage { start: p.start_byte, end: p.end_byte, pair, edits: p.edits.clone() },
            true => Passage { start: p.source_start_byte, end: p.source_end_byte, pair, edits: p.source_edits.clone() },
        })
        .collect();
    spans.sort_by_key(|s| (s.start, s.pair));
    let mut end = 0;
    spans.retain_mut(|s| {
        s.start = s.start.max(end);
        let start = s.start;
        s.edits.retain(|e| e.0 >= start);
        end = end.max(s.end);
        s.start < s.end
    });
    spans
}

/// One column: `text` with its passages linking the other column and its edits marked.
fn column(text: &str, spans: &[Passage], me: char, other: char, added: bool) -> String {
    let cut = |a: u32, b: u32| escape(text.get(a as usize..b as usize).unwrap_or(""));
    let mut out = String::new();
    let mut at = 0;
    let class = if added { "edit added" } else { "edit" };
    for Passage { start, end, pair: n, edits } in spans {
        out += &cut(at, *start);
        out += &format!("<a class=\"copied\" id=\"{me}-{n}\" href=\"#{other}-{n}\">");
        let mut inner = *start;
        for &(es, ee) in edits.iter().filter(|e| e.1 <= *end) {
            out += &cut(inner, es);
            out += &format!("<mark class=\"{class}\">{}</mark>", cut(es, ee));
            inner = ee;
        }
        out += &cut(inner, *end);
        out += "</a>";
        at = *end;
    }
    out += &cut(at, text.len() as u32);
    out
}

/// The side-by-side page; in the inspector, `href(a, b)` is the address of the
/// comparison of document `a` with source `b`, `doc(id)` a document's page (a page of
/// its own links nothing).
pub fn compare_page(
    site: Site,
    s: &SideBySide,
    href: impl Fn(u64, u64) -> String,
    doc: impl Fn(u64) -> String,
) -> String {
    let linked = site == Site::Inspector;
    let name = |r: &super::model::DocRef| match r.id {
        Some(id) if linked => format!("<a href=\"{}\">#{id} {}</a>", escape(&doc(id)), escape(&r.name)),
        Some(id) => format!("#{id} {}", escape(&r.name)),
        None => escape(&r.name),
    };
    let mut body = format!(
        "{STYLE}<h1>Side by side</h1><p id=\"similarity\"><strong>{:.1}%</strong> of {} is copied from {} ({} passage(s)).</p>",
        s.percent,
        name(&s.document),
        name(&s.source),
        s.pairs.len()
    );
    if s.similarity.len() > 1 {
        body += "<p>Its sources: ";
        let items: Vec<String> = s
            .similarity
            .iter()
            .filter_map(|x| {
                let (a, b) = (s.document.id?, x.origin.id?);
                let label = format!("#{b} {} {:.1}%", escape(&x.origin.name), x.percent);
                Some(match linked {
                    true => format!("<a href=\"{}\">{label}</a>", escape(&href(a, b))),
                    false => label,
                })
            })
            .collect();
        body += &items.join(" · ");
        body += "</p>";
    }
    body += "<p><small>Copied passages are highlighted and link their counterpart; <mark class=\"edit\">struck</mark> words are the document's own where the source has others, <mark class=\"edit added\">blue</mark> words the source's that the copy changed or left out.</small></p>";
    body += &format!(
        "<div class=\"cols\"><div><h2>{}</h2><pre id=\"document\">{}</pre></div><div><h2>{}</h2><pre id=\"source\">{}</pre></div></div>",
        name(&s.document),
        column(&s.text, &side(&s.pairs, false), 'a', 'b', false),
        name(&s.source),
        column(&s.source_text, &side(&s.pairs, true), 'b', 'a', true),
    );
    page_in(site, &format!("{} ↔ {}", s.document.name, s.source.name), &body)
}

/// The passages of `s` in two columns of `width` characters in all (edited words in
/// brackets): the terminal's side by side.
pub fn side_by_side_text(s: &SideBySide, width: usize) -> String {
    let col = (width.saturating_sub(3) / 2).max(20);
    let r = |d: &super::model::DocRef| match d.id {
        Some(id) => format!("#{id} {}", safe(&d.name)),
        None => safe(&d.name).into_owned(),
    };
    let mut out = format!(
        "{:.1}% of {} is copied from {} ({} passage(s))\n",
        s.percent,
        r(&s.document),
        r(&s.source),
        s.pairs.len()
    );
    let marked = |text: &str, (a, b): (u32, u32), edits: &[(u32, u32)]| {
        let mut t = String::new();
        let mut at = a;
        for &(es, ee) in edits.iter().filter(|e| e.0 >= a && e.1 <= b) {
            t += text.get(at as usize..es as usize).unwrap_or("");
            t += &format!("[{}]", text.get(es as usize..ee as usize).unwrap_or(""));
            at = ee;
        }
        t += text.get(at as usize..b as usize).unwrap_or("");
        safe(&t.split_whitespace().collect::<Vec<_>>().join(" ")).into_owned()
    };
    for (n, p) in s.pairs.iter().enumerate() {
        let left = wrap(&marked(&s.text, (p.start_byte, p.end_byte), &p.edits), col);
        let right = wrap(&marked(&s.source_text, (p.source_start_byte, p.source_end_byte), &p.source_edits), col);
        out += &format!("\n{:-<width$}\n", format!("passage {} ", n + 1));
        for i in 0..left.len().max(right.len()) {
            let l = left.get(i).map_or("", String::as_str);
            let pad = col - l.chars().count().min(col);
            out += &format!("{l}{} | {}\n", " ".repeat(pad), right.get(i).map_or("", String::as_str));
        }
    }
    out
}

/// `text`'s words in lines of at most `width` characters (a longer word alone).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for w in text.split(' ').filter(|w| !w.is_empty()) {
        let line = lines.last_mut().expect("one line at least");
        if !line.is_empty() && line.chars().count() + 1 + w.chars().count() > width {
            lines.push(w.to_string());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(w);
        }
    }
    lines
}
