//! HTML to text: a page's visible text, or its main content, with a map from
//! every byte of the text back to the bytes of the page it came from.
//!
//! The page is scanned once by `scan` (HTML's tokenizer states for tags, comments,
//! raw text and character references; no tree is built): each run of text is kept with
//! its byte range in the input and what encloses it. Block elements (`p`, `div`,
//! `li`, ...) separate lines; white space collapses to one space; entities are
//! decoded; scripts, styles and comments are dropped. [`HtmlMode::All`] keeps every
//! text (the text html5ever's tokenizer gives, which the tests check it against); [`HtmlMode::Main`] keeps the main content, in the way of boilerplate
//! removers such as jusText (Pomikálek, *Removing Boilerplate and Duplicate Content
//! from Web Corpora*, 2011, ch. 3) and trafilatura:
//! 1. text inside `nav`, `header`, `footer`, `aside`, `menu`, `dialog`, `head`, a `form`
//!    holding at most half the page's text (ASP.NET pages hold all of it in one form),
//!    an element of ARIA role navigation, banner, contentinfo, complementary, search,
//!    menu or menubar, a hidden one (`hidden`, `aria-hidden="true"`, `display:none`),
//!    or one whose class or id names a template part ([`TEMPLATE_CLASSES`]: cookie
//!    banners, share buttons, breadcrumbs, sidebars, footers) and none says it holds
//!    the article (`article`, `body`, `content`, `main`, `text`) is dropped; those of the
//!    class words come back when without them too little is left (less than 500
//!    characters and half of the choice with them: a layout's
//!    `panel-two-col-sidebar-right` holds the article);
//! 2. where the page marks its main content (`<main>`, `role="main"`, else a single
//!    `<article>`), only the text inside it is kept (`html`, `body`, `main` and
//!    `article` are never template by their class: a theme's
//!    `<body class="site-navigation">` took whole pages);
//! 3. among what is left, the article body as Readability scores it (`html/score.rs`):
//!    without the elements whose class or id names what no article holds (comments,
//!    related posts, menus; back when that leaves too little), the element whose lines
//!    score best (a section's or table cell's whole text scoring as one more line),
//!    up to an ancestor that scores more than the element below it, or the parent it
//!    is the only child holding text of, with its siblings that join it (those of its
//!    class more easily) and the parts of a body cut up by advertisements (when they
//!    are most of it), less the elements whose class or id calls them comments, share
//!    or related links or captions (never a link: it is a word of its line), the boxes of
//!    few commas that are more than a fifth links (Readability's conditional
//!    cleaning; lists and tables of data stay);
//! 4. a block whose text is more than [`MAX_LINK_DENSITY`] link text (jusText's link
//!    density; [`MAX_LINK_DENSITY_IN_MAIN`] inside a marked main content, where a table
//!    of contents whose entries say what each page is stays; [`MAX_LINK_DENSITY_IN_LIST`]
//!    for a list's line and a paragraph's sentence; a table of data's links are text)
//!    or holds a copyright sign (jusText's rule too) is dropped;
//! 5. if that leaves no text, step 4 is undone; if still none, step 3; if still none,
//!    the page's whole text is kept (a page that is all navigation is still a
//!    document).
//!
//! `scripts/main-content-eval.py` scores these steps against marked article bodies,
//! beside trafilatura, readability-lxml, jusText, dom_smoothie and rs-trafilatura
//! (`docs/EVALUATION.md`).
//!
//! The kept text is what is stored, and spans (attributes, `show` offsets) refer to it;
//! [`Extracted::html_range`] gives the input bytes of any of its spans.

use std::ops::Range;

use textorigin_core::config::HtmlMode;

mod main_content;
mod score;

/// Elements whose content is not text; the first four are read as raw text (their
/// content is no markup).
const SKIPPED: &[&str] = &["script", "style", "noscript", "iframe", "template", "svg", "math", "object"];
/// Elements whose content is text with character references and no markup.
const RCDATA: &[&str] = &["title", "textarea"];
/// Elements that break lines.
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "br",
    "dd",
    "div",
    "dl",
    "dt",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "td",
    "th",
    "title",
    "tr",
    "ul",
];
/// Elements that have no content (never open).
const VOID: &[&str] =
    &["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"];
/// Elements that are a page's template, not its content ([`HtmlMode::Main`]).
const TEMPLATE_ELEMENTS: &[&str] = &["nav", "header", "footer", "aside", "menu", "dialog", "head"];
/// ARIA roles of the same landmarks.
const TEMPLATE_ROLES: &[&str] =
    &["navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar", "dialog", "alertdialog"];
/// Words of a class or id (split at `-`, `_` and white space, compared without case)
/// that name a template part: cookie and consent banners, share and social buttons,
/// breadcrumbs, navigation bars, sidebars, footers, skip links. A word, not a
/// substring: `shared-memory`, a section's id, is no share button. Unless another word
/// says the element holds the article.
pub const TEMPLATE_CLASSES: &[&str] = &[
    "breadcrumb",
    "breadcrumbs",
    "consent",
    "cookie",
    "cookies",
    "footer",
    "gdpr",
    "masthead",
    "navbar",
    "navigation",
    "share",
    "sharing",
    "sidebar",
    "skiplink",
    "social",
    "sphinxsidebar",
    "related",
];
/// Names (`name`, `property` or `itemprop`, compared without case) of the `<meta>`
/// elements whose `content` is a page's publication date (Open Graph's article
/// properties, Dublin Core, schema.org, common names).
pub const DATE_META: &[&str] = &[
    "article:published_time",
    "og:published_time",
    "datepublished",
    "dc.date",
    "dc.date.issued",
    "dcterms.date",
    "dcterms.issued",
    "date",
    "pubdate",
    "publishdate",
    "publish-date",
];
/// A block with more than this share of its characters in links is a link list
/// (jusText's `max_link_density`, 0.2), where the page marks no main content.
pub const MAX_LINK_DENSITY: f64 = 0.2;
/// The same inside a main content the page marks: only a line mostly of links goes.
pub const MAX_LINK_DENSITY_IN_MAIN: f64 = 0.5;
/// The same for a line of a list (`li`) and a paragraph's sentence: only one nearly
/// all links goes, a menu's entry; a changelog's "bigiri has a patch to move ..."
/// around a bug's link stays, and an essay's sentence linking half its words to its
/// sources. Measured in `docs/EVALUATION.md` against 0.2 to 1.0.
pub const MAX_LINK_DENSITY_IN_LIST: f64 = 0.9;

/// A page's text and where each of its bytes came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extracted {
    pub text: String,
    /// The publication date the page states in a `<meta>` element ([`DATE_META`]), as
    /// written (not checked).
    pub published: Option<String>,
    /// In text order: from `text` on, the text's bytes come from `html` on (byte for
    /// byte when `verbatim`; else the whole of `html` is one character reference, or
    /// white space collapsed to one space, or the tag that broke a line).
    map: Vec<Piece>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Piece {
    text: usize,
    html: Range<usize>,
    verbatim: bool,
}

impl Extracted {
    /// The bytes of the input that the text's bytes `range` came from (an empty range
    /// gives an empty one).
    pub fn html_range(&self, range: Range<usize>) -> Range<usize> {
        let piece = |at: usize| {
            let i = self.map.partition_point(|p| p.text <= at).saturating_sub(1);
            self.map.get(i)
        };
        let Some(first) = piece(range.start) else { return 0..0 };
        let start = if first.verbatim { first.html.start + (range.start - first.text) } else { first.html.start };
        if range.is_empty() {
            return start..start;
        }
        let last = piece(range.end - 1).unwrap_or(first);
        let end = if last.verbatim { last.html.start + (range.end - last.text) } else { last.html.end };
        start..end.max(start)
    }
}

/// The text of a page as `mode` reads it.
pub fn html_to_text(html: &str, mode: HtmlMode) -> String {
    extract(html, mode).text
}

/// The text of a page as `mode` reads it, with its map to the input (the module docs).
pub fn extract(html: &str, mode: HtmlMode) -> Extracted {
    let (runs, nodes, published) = scan(html);
    let keep: Vec<bool> = match mode {
        HtmlMode::All => vec![true; runs.len()],
        HtmlMode::Main => main_content::keep(html, &runs, &nodes),
    };
    Extracted { published, ..write(html, &runs, &keep) }
}

/// A run of text, or a line break.
#[derive(Debug, Clone)]
enum Run {
    /// Text: its bytes in the input, what encloses it, and its innermost element
    /// ([`score::NONE`] at the top level).
    Text { html: Range<usize>, at: Context, node: u32 },
    /// A block element's tag, which breaks the line and starts a new block.
    Break(Range<usize>),
}

/// What encloses a run of text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Context {
    /// Inside a template element ([`TEMPLATE_ELEMENTS`] and the rest of step 1).
    template: bool,
    /// Inside an element only its class or id calls template ([`TEMPLATE_CLASSES`]).
    named: bool,
    /// Inside the element that marks the main content.
    main: bool,
    /// Inside a link.
    link: bool,
    /// Inside an `<article>`.
    article: bool,
    /// The outermost `<form>` around it.
    form: Option<u32>,
}

/// An open element.
struct Open {
    /// Its place in the page's elements ([`score::Node`]).
    id: u32,
    name: String,
    template: bool,
    named: bool,
    main: bool,
    skipped: bool,
}

/// Deepest nesting kept: a start tag deeper than this is read as if it opened nothing
/// (browsers cap their trees too: Blink at 512).
const MAX_DEPTH: usize = 512;

/// The open elements, with counts of what encloses the text, so that a run of text and
/// an end tag cost the same whatever the depth (a scan of the stack for each would be
/// quadratic in the nesting).
#[derive(Default)]
struct Stack {
    open: Vec<Open>,
    /// Open elements of each name.
    names: std::collections::HashMap<String, usize>,
    template: usize,
    named: usize,
    main: usize,
    skipped: usize,
    /// The open forms, outermost first.
    forms: Vec<u32>,
}

impl Stack {
    /// Opens `o`, unless the stack is [`MAX_DEPTH`] deep already (false).
    fn push(&mut self, o: Open) -> bool {
        if self.open.len() >= MAX_DEPTH {
            return false;
        }
        match self.names.get_mut(&o.name) {
            Some(n) => *n += 1,
            None => drop(self.names.insert(o.name.clone(), 1)),
        }
        self.template += usize::from(o.template);
        self.named += usize::from(o.named);
        self.main += usize::from(o.main);
        self.skipped += usize::from(o.skipped);
        if o.name == "form" {
            self.forms.push(o.id);
        }
        self.open.push(o);
        true
    }

    fn pop(&mut self) {
        let Some(o) = self.open.pop() else { return };
        if let Some(n) = self.names.get_mut(&o.name) {
            *n -= 1;
        }
        self.template -= usize::from(o.template);
        self.named -= usize::from(o.named);
        self.main -= usize::from(o.main);
        self.skipped -= usize::from(o.skipped);
        if o.name == "form" {
            self.forms.pop();
        }
    }

    fn count(&self, name: &str) -> usize {
        self.names.get(name).copied().unwrap_or(0)
    }

    /// Closes the innermost open `name` and everything opened inside it; an end tag
    /// that closes nothing open is ignored.
    fn close(&mut self, name: &str) {
        if self.count(name) == 0 {
            return;
        }
        while self.open.last().is_some_and(|o| o.name != name) {
            self.pop();
        }
        self.pop();
    }
}

/// Scans the page into runs of text and line breaks (scripts, styles and comments left
/// out). `main` marks text inside `<main>`, `role="main"`, or else the page's one
/// `<article>`. Also returns the page's publication date from its `<meta>` elements.
fn scan(html: &str) -> (Vec<Run>, Vec<score::Node>, Option<String>) {
    let mut published = None;
    let mut nodes = Vec::new();
    let b = html.as_bytes();
    let mut runs = Vec::new();
    let mut stack = Stack::default();
    let mut articles = 0;
    let mut any_main = false;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'<' {
            let end = memchr(b'<', b, i);
            push_text(&mut runs, &stack, i..end);
            i = end;
            continue;
        }
        let Some(tag) = Tag::read(b, i) else {
            // A `<` that opens nothing is text.
            let end = memchr(b'<', b, i + 1);
            push_text(&mut runs, &stack, i..end);
            i = end;
            continue;
        };
        let range = i..tag.end;
        i = tag.end;
        match tag.kind {
            TagKind::Other => {}
            TagKind::End => {
                stack.close(&tag.name);
                if BLOCKS.contains(&tag.name.as_str()) {
                    runs.push(Run::Break(range));
                }
            }
            TagKind::Start => {
                let name = tag.name.as_str();
                if name == "meta" && published.is_none() && tag.date_meta {
                    published = tag.content.clone();
                }
                if BLOCKS.contains(&name) {
                    runs.push(Run::Break(range.clone()));
                }
                if VOID.contains(&name) || tag.self_closing {
                    continue;
                }
                let main = name == "main" || tag.role.as_deref().is_some_and(|r| r.eq_ignore_ascii_case("main"));
                any_main |= main;
                articles += usize::from(name == "article");
                let raw = SKIPPED[..4].contains(&name);
                if raw || RCDATA.contains(&name) {
                    // Raw text to the matching end tag, which closes the element.
                    let end = raw_end(b, i, name);
                    if !raw {
                        let pushed = open(&mut stack, &mut nodes, &tag, main, false);
                        push_text(&mut runs, &stack, i..end);
                        if pushed {
                            stack.pop();
                        }
                    }
                    let close = Tag::read(b, end).map_or(b.len(), |t| t.end);
                    if name == "title" {
                        runs.push(Run::Break(end..close));
                    }
                    i = close;
                    continue;
                }
                let _ = open(&mut stack, &mut nodes, &tag, main, SKIPPED.contains(&name));
            }
        }
    }
    if !any_main && articles == 1 {
        for run in &mut runs {
            if let Run::Text { at, .. } = run {
                at.main = at.article;
            }
        }
    }
    forms_as_template(html, &mut runs);
    (runs, nodes, published)
}

/// A form is a template part (a search box, a login) unless it holds more than half the
/// page's text: then it is the page's frame, as ASP.NET writes every page inside one.
fn forms_as_template(html: &str, runs: &mut [Run]) {
    let mut all = 0;
    let mut in_form = std::collections::HashMap::<u32, usize>::new();
    for run in runs.iter() {
        if let Run::Text { html: h, at, .. } = run {
            let n = html[h.clone()].chars().filter(|c| !c.is_whitespace()).count();
            all += n;
            if let Some(form) = at.form {
                *in_form.entry(form).or_default() += n;
            }
        }
    }
    for run in runs.iter_mut() {
        if let Run::Text { at, .. } = run {
            if at.form.is_some_and(|form| 2 * in_form[&form] <= all) {
                at.template = true;
            }
        }
    }
}

/// Opens `tag`'s element: numbered among the page's elements and pushed on the stack
/// (false: the stack is [`MAX_DEPTH`] deep already).
fn open(stack: &mut Stack, nodes: &mut Vec<score::Node>, tag: &Tag, main: bool, skipped: bool) -> bool {
    let id = score::open(nodes, stack, tag);
    // The page's frame elements are never template by their class: a theme's
    // `<body class="site-navigation">` would take the whole page.
    let named = !["html", "body", "main", "article"].contains(&tag.name.as_str()) && tag.class.template();
    stack.push(Open { id, name: tag.name.clone(), template: tag.template, named, main, skipped })
}

fn push_text(runs: &mut Vec<Run>, stack: &Stack, html: Range<usize>) {
    if stack.skipped > 0 || html.is_empty() {
        return;
    }
    let at = Context {
        template: stack.template > 0,
        named: stack.named > 0,
        main: stack.main > 0,
        link: stack.count("a") > 0,
        article: stack.count("article") > 0,
        form: stack.forms.first().copied(),
    };
    runs.push(Run::Text { html, at, node: stack.open.last().map_or(score::NONE, |o| o.id) });
}

/// Where the raw text of `name` starting at `from` ends: at `</name` followed by white
/// space, `/` or `>` (any case), or the end of the input.
fn raw_end(b: &[u8], from: usize, name: &str) -> usize {
    let n = name.len();
    let mut i = from;
    while let Some(at) = b[i..].windows(2).position(|w| w == b"</").map(|p| p + i) {
        let after = at + 2 + n;
        if after <= b.len()
            && b[at + 2..after].eq_ignore_ascii_case(name.as_bytes())
            && b.get(after).is_none_or(|c| c.is_ascii_whitespace() || *c == b'/' || *c == b'>')
        {
            return at;
        }
        i = at + 2;
    }
    b.len()
}

fn memchr(needle: u8, b: &[u8], from: usize) -> usize {
    b[from..].iter().position(|&c| c == needle).map_or(b.len(), |p| p + from)
}

#[derive(Debug, PartialEq, Eq)]
enum TagKind {
    Start,
    End,
    /// A comment, a doctype, a processing instruction or a bogus comment.
    Other,
}

/// A tag as HTML's tokenizer reads it from a `<`.
struct Tag {
    kind: TagKind,
    /// Lower-cased.
    name: String,
    self_closing: bool,
    role: Option<String>,
    /// Its attributes make it a template part ([`HtmlMode::Main`]'s step 1).
    template: bool,
    /// What its class and id say of its content ([`score::Class`]).
    class: score::Class,
    /// A `<meta>` naming a publication date ([`DATE_META`]), and its `content`.
    date_meta: bool,
    content: Option<String>,
    /// Just past its `>` (or the end of the input).
    end: usize,
}

impl Tag {
    /// The tag at `b[at] == b'<'`, or None when that `<` is text. A tag cut off by the end
    /// of the input is dropped, as HTML drops it: an `Other` that ends there.
    fn read(b: &[u8], at: usize) -> Option<Tag> {
        let other = |end: usize| Tag {
            kind: TagKind::Other,
            name: String::new(),
            self_closing: false,
            role: None,
            template: false,
            class: score::Class::default(),
            date_meta: false,
            content: None,
            end,
        };
        // A bogus comment: to the next `>`.
        let bogus = || other(memchr(b'>', b, at).saturating_add(1).min(b.len()));
        let next = b.get(at + 1).copied()?;
        if b[at + 1..].starts_with(b"!--") {
            let body = at + 4;
            // `<!-->` and `<!--->` are empty comments.
            for short in [&b">"[..], b"->"] {
                if b[body..].starts_with(short) {
                    return Some(other(body + short.len()));
                }
            }
            let mut i = body;
            loop {
                match b[i..].windows(2).position(|w| w == b"--").map(|p| p + i) {
                    None => return Some(other(b.len())),
                    Some(dash) if b[dash + 2..].starts_with(b">") => return Some(other(dash + 3)),
                    Some(dash) if b[dash + 2..].starts_with(b"!>") => return Some(other(dash + 4)),
                    Some(dash) => i = dash + 1,
                }
            }
        }
        if next == b'!' || next == b'?' {
            return Some(bogus());
        }
        let (kind, name_at) = match next {
            b'/' => match b.get(at + 2) {
                Some(c) if c.is_ascii_alphabetic() => (TagKind::End, at + 2),
                Some(b'>') => return Some(other(at + 3)),
                Some(_) => return Some(bogus()),
                None => return None,
            },
            c if c.is_ascii_alphabetic() => (TagKind::Start, at + 1),
            _ => return None,
        };
        let stop = |c: u8| c.is_ascii_whitespace() || c == b'/' || c == b'>';
        let mut i = name_at;
        while i < b.len() && !stop(b[i]) {
            i += 1;
        }
        let name = String::from_utf8_lossy(&b[name_at..i]).to_ascii_lowercase();
        let mut tag = Tag {
            kind,
            name,
            self_closing: false,
            role: None,
            template: false,
            class: score::Class::default(),
            date_meta: false,
            content: None,
            end: b.len(),
        };
        tag.template = TEMPLATE_ELEMENTS.contains(&tag.name.as_str());
        // Attributes, to the `>` that is not inside a quoted value.
        loop {
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            match b.get(i) {
                None => return Some(Tag { end: b.len(), kind: TagKind::Other, ..tag }),
                Some(b'>') => {
                    tag.end = i + 1;
                    return Some(tag);
                }
                Some(b'/') => {
                    tag.self_closing = b.get(i + 1) == Some(&b'>');
                    i += 1;
                    continue;
                }
                Some(_) => {}
            }
            let key_at = i;
            i += 1; // the first character may be `=`
            while i < b.len() && !stop(b[i]) && b[i] != b'=' {
                i += 1;
            }
            let key = &b[key_at..i];
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            let mut value = &b[i..i];
            if b.get(i) == Some(&b'=') {
                i += 1;
                while i < b.len() && b[i].is_ascii_whitespace() {
                    i += 1;
                }
                match b.get(i) {
                    Some(&q @ (b'"' | b'\'')) => {
                        let end = memchr(q, b, i + 1);
                        value = &b[(i + 1).min(b.len())..end];
                        i = (end + 1).min(b.len());
                        if end == b.len() {
                            return Some(Tag { end: b.len(), kind: TagKind::Other, ..tag });
                        }
                    }
                    _ => {
                        let start = i;
                        while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'>' {
                            i += 1;
                        }
                        value = &b[start..i];
                    }
                }
            }
            tag.attribute(key, value);
        }
    }

    fn attribute(&mut self, key: &[u8], value: &[u8]) {
        let value = String::from_utf8_lossy(value);
        let lower = value.to_ascii_lowercase();
        if key.eq_ignore_ascii_case(b"role") {
            self.template |= lower.split_ascii_whitespace().any(|r| TEMPLATE_ROLES.contains(&r));
            self.role = Some(lower);
        } else if key.eq_ignore_ascii_case(b"class") || key.eq_ignore_ascii_case(b"id") {
            self.class.add(&lower);
            if key.eq_ignore_ascii_case(b"class") {
                self.class.name(&value);
            }
        } else if key.eq_ignore_ascii_case(b"hidden") {
            self.template = true;
        } else if key.eq_ignore_ascii_case(b"aria-hidden") {
            self.template |= lower.trim() == "true";
        } else if [&b"name"[..], b"property", b"itemprop"].iter().any(|k| key.eq_ignore_ascii_case(k)) {
            self.date_meta |= DATE_META.contains(&lower.trim());
        } else if key.eq_ignore_ascii_case(b"content") {
            self.content = Some(value.trim().to_string());
        } else if key.eq_ignore_ascii_case(b"style") {
            self.template |= lower.split_ascii_whitespace().collect::<String>().contains("display:none");
        }
    }
}

/// The kept runs' text: white space collapsed, a line break at each block's edge, the
/// whole trimmed; and its map.
fn write(html: &str, runs: &[Run], keep: &[bool]) -> Extracted {
    let mut w = Writer { out: Extracted { text: String::new(), published: None, map: Vec::new() } };
    for (run, _) in runs.iter().zip(keep).filter(|(_, &k)| k) {
        match run {
            Run::Break(tag) => w.newline(tag.clone()),
            Run::Text { html: h, .. } => decode_into(&mut w, html, h.clone()),
        }
    }
    w.pop_while(char::is_whitespace);
    w.out
}

struct Writer {
    out: Extracted,
}

impl Writer {
    fn push(&mut self, s: &str, html: Range<usize>, verbatim: bool) {
        let text = self.out.text.len();
        self.out.text.push_str(s);
        if let Some(last) = self.out.map.last_mut() {
            if verbatim && last.verbatim && last.html.end == html.start && last.text + last.html.len() == text {
                last.html.end = html.end;
                return;
            }
        }
        self.out.map.push(Piece { text, html, verbatim });
    }

    /// White space: one space after text.
    fn space(&mut self, html: Range<usize>, source: &str) {
        let t = &self.out.text;
        if !t.is_empty() && !t.ends_with(' ') && !t.ends_with('\n') {
            self.push(" ", html, source == " ");
        }
    }

    /// A block's edge: one line break after text.
    fn newline(&mut self, tag: Range<usize>) {
        self.pop_while(|c| c == ' ');
        if !self.out.text.is_empty() && !self.out.text.ends_with('\n') {
            self.push("\n", tag, false);
        }
    }

    fn pop_while(&mut self, drop: impl Fn(char) -> bool) {
        let t = &mut self.out.text;
        while t.ends_with(&drop) {
            t.pop();
        }
        let len = t.len();
        // Only trailing pieces can start past the end: popping them keeps writing a
        // page linear in its lines.
        while self.out.map.last().is_some_and(|p| p.text >= len) {
            self.out.map.pop();
        }
    }
}

/// Decodes the text of `html[range]` (character references; white space collapsed)
/// into `w`.
fn decode_into(w: &mut Writer, html: &str, range: Range<usize>) {
    let flush = |w: &mut Writer, from: usize, to: usize| {
        if from < to {
            w.push(&html[from..to], from..to, true);
        }
    };
    let mut plain = range.start;
    let mut chars = html[range.clone()].char_indices().map(|(i, c)| (i + range.start, c)).peekable();
    while let Some((i, c)) = chars.next() {
        if c.is_whitespace() {
            flush(w, plain, i);
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek().filter(|(_, d)| d.is_whitespace()) {
                end = j + d.len_utf8();
                chars.next();
            }
            w.space(i..end, &html[i..end]);
            plain = end;
        } else if c == '&' {
            let Some((decoded, len)) = reference(&html[i..range.end]) else { continue };
            flush(w, plain, i);
            if decoded.chars().all(char::is_whitespace) {
                w.space(i..i + len, "");
            } else {
                w.push(&decoded, i..i + len, false);
            }
            while chars.peek().is_some_and(|&(j, _)| j < i + len) {
                chars.next();
            }
            plain = i + len;
        }
    }
    flush(w, plain, range.end);
}

/// The character reference at the start of `s` (which starts with `&`): its text and
/// its length, as HTML's tokenizer reads one in text (a named one without its `;` among
/// the legacy names; a numeric one out of range or a surrogate as U+FFFD, C1 controls
/// as Windows-1252 reads them).
fn reference(s: &str) -> Option<(String, usize)> {
    let b = s.as_bytes();
    if b.get(1) == Some(&b'#') {
        let hex = matches!(b.get(2), Some(b'x' | b'X'));
        let start = if hex { 3 } else { 2 };
        let digits = b[start.min(b.len())..]
            .iter()
            .take_while(|c| if hex { c.is_ascii_hexdigit() } else { c.is_ascii_digit() })
            .count();
        if digits == 0 {
            return None;
        }
        let mut len = start + digits;
        let value = u32::from_str_radix(&s[start..len], if hex { 16 } else { 10 }).unwrap_or(u32::MAX);
        if b.get(len) == Some(&b';') {
            len += 1;
        }
        let c = match value {
            0x80..=0x9f => html5ever::data::C1_REPLACEMENTS[(value - 0x80) as usize].unwrap_or(char::from_u32(value)?),
            0 => '\u{FFFD}',
            v => char::from_u32(v).unwrap_or('\u{FFFD}'),
        };
        return Some((c.to_string(), len));
    }
    let name_len = b[1..].iter().take(40).take_while(|c| c.is_ascii_alphanumeric()).count();
    if name_len == 0 {
        return None;
    }
    let chars = |&(a, b): &(u32, u32)| {
        let mut t = String::new();
        t.extend(char::from_u32(a));
        if b != 0 {
            t.extend(char::from_u32(b));
        }
        t
    };
    // The table also holds every prefix of a name, as (0, 0).
    let named = |name: &str| html5ever::data::NAMED_ENTITIES.get(name).filter(|cp| cp.0 != 0);
    if b.get(1 + name_len) == Some(&b';') {
        if let Some(cp) = named(&s[1..name_len + 2]) {
            return Some((chars(cp), name_len + 2));
        }
    }
    (1..=name_len).rev().find_map(|n| named(&s[1..1 + n]).map(|cp| (chars(cp), 1 + n)))
}

#[cfg(test)]
mod tests;
