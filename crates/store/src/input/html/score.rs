//! The article body of a page, as Readability scores one (Mozilla's Readability.js,
//! `_grabArticle`; Arc90's algorithm before it): each line of text of 25 characters or
//! more is worth 1, one more a comma and one more each 100 characters (3 at most), and
//! adds its worth to the element holding it (its parent in full, its grandparent half,
//! further ancestors a third of their level, five levels up). An element starts from
//! what its tag says (a `div` +5, a list or a heading less) and its class and id
//! ([`Class`]). Elements whose class or id names what no article holds (Readability's
//! unlikely candidates) are left out first, and taken back when that leaves too
//! little ([`too_little`]). The element with the best score times its share of text
//! outside links is the body, or an ancestor that scores more than the element below
//! it, or the parent it is the only child holding text of; a `section` or `td` holding
//! paragraphs scores its whole text as one more (Readability scores those tags so).
//! Its siblings join it when they score a fifth of it (a sibling of its class gets a
//! fifth of it more), or are paragraphs of text rather than links; inside it, elements
//! whose class says no content go, and so do boxes (a `div`, `form`, table) of fewer
//! than ten commas whose text is more than a fifth links, or short and linked, unless
//! they are lists or tables of data (Readability's `_cleanConditionally`).
//!
//! The choice is of elements, and the runs of text inside them are kept as they are:
//! the byte map from the kept text to the page stays exact.

use super::{Run, Stack, Tag};

/// How far up the best element its parts are looked for.
const SPLIT_LEVELS: usize = 5;

/// The element of a run of text outside every element.
pub(super) const NONE: u32 = u32::MAX;

/// An element of the page, in the order its start tag came.
#[derive(Debug, Clone, Copy)]
pub(super) struct Node {
    parent: u32,
    /// Its score before the text under it: its tag's and its class and id's.
    base: f64,
    /// What its class and id say ([`Class`]).
    class: i32,
    /// Its class or id says it is no part of an article ([`Class::unlikely`]).
    unlikely: bool,
    /// An `a`.
    link: bool,
    /// A `p`, or another element with text and no element breaking lines inside
    /// (Readability reads such a `div` as a paragraph) until one opens.
    paragraph: bool,
    /// The innermost element breaking lines around it, or itself.
    block: u32,
    /// `html` or `body`: never the body's element.
    frame: bool,
    /// A `section` or `td`: Readability scores its whole text as one paragraph's.
    whole: bool,
    /// A `div`, list, table, form or fieldset: Readability's conditional cleaning
    /// looks at it.
    suspect: bool,
    /// A `ul` or `ol`.
    list: bool,
    /// Its class attribute ([`Class::name`]).
    name: u64,
    /// A `table`, and a part only a table of data has (`th`, `thead`, `caption`, ...).
    table: bool,
    head: bool,
}

/// Notes a start tag's element (its parent the innermost open element) and returns its
/// number.
pub(super) fn open(nodes: &mut Vec<Node>, stack: &Stack, tag: &Tag) -> u32 {
    let id = nodes.len() as u32;
    let parent = stack.open.last().map_or(NONE, |o| o.id);
    let name = tag.name.as_str();
    let base = f64::from(tag.class.weight)
        + match name {
            "div" | "article" | "main" | "section" => 5.0,
            "pre" | "td" | "blockquote" => 3.0,
            "address" | "ol" | "ul" | "dl" | "dd" | "dt" | "li" | "form" => -3.0,
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "th" => -5.0,
            _ => 0.0,
        };
    let breaks = super::BLOCKS.contains(&name);
    let block = if breaks || parent == NONE { id } else { nodes[parent as usize].block };
    if breaks && parent != NONE && name != "br" {
        nodes[parent as usize].paragraph = false;
    }
    let frame = name == "html" || name == "body";
    let unlikely = tag.class.unlikely && !tag.class.maybe && !frame && name != "a";
    nodes.push(Node {
        parent,
        base,
        class: tag.class.weight,
        unlikely,
        link: name == "a",
        paragraph: name == "p" || name == "div",
        block,
        frame,
        whole: name == "section" || name == "td",
        suspect: matches!(name, "div" | "ul" | "ol" | "table" | "form" | "fieldset"),
        list: name == "ul" || name == "ol",
        name: tag.class.name,
        table: name == "table",
        head: matches!(name, "th" | "thead" | "tfoot" | "caption" | "col" | "colgroup"),
    });
    id
}

/// Whether each element is a paragraph or inside one.
pub(super) fn in_paragraph(nodes: &[Node]) -> Vec<bool> {
    within(nodes, |id| nodes[id].paragraph)
}

/// What ends a sentence, in the scripts that write it differently.
pub(super) const SENTENCE_ENDS: [char; 5] = ['.', '。', '!', '?', '؟'];

/// Whether each element is inside a list.
pub(super) fn in_list(nodes: &[Node]) -> Vec<bool> {
    within(nodes, |id| nodes[id].list)
}

/// Whether each element is inside a table of data: one with headings, a caption or
/// columns declared and no table inside (Readability's test of a data table, whose rows
/// stay whatever their links: a filmography's titles).
pub(super) fn in_data_table(nodes: &[Node]) -> Vec<bool> {
    let (mut head, mut table) = (vec![false; nodes.len()], vec![false; nodes.len()]);
    for id in (0..nodes.len()).rev() {
        let p = nodes[id].parent;
        if p != NONE {
            head[p as usize] |= head[id] || nodes[id].head;
            table[p as usize] |= table[id] || nodes[id].table;
        }
    }
    within(nodes, |id| nodes[id].table && head[id] && !table[id])
}

/// Whether each element is one that `is`, or inside one (a parent's number is smaller,
/// so one pass in order).
fn within(nodes: &[Node], is: impl Fn(usize) -> bool) -> Vec<bool> {
    let mut inside = vec![false; nodes.len()];
    for id in 0..nodes.len() {
        let p = nodes[id].parent;
        inside[id] = (p != NONE && inside[p as usize]) || is(id);
    }
    inside
}

/// What an element's class and id say, by Readability's lists of words (matched as
/// substrings: `foot` stands for `footer` and `footnote`, `comment` for `comments`).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Class {
    /// +25 for a word saying content, -25 for one saying not, each of class and id.
    pub weight: i32,
    /// A word of what no article holds: comments, related links, menus, sidebars,
    /// footers (Readability's unlikely candidates, dropped before scoring) ...
    pub unlikely: bool,
    /// ... unless a word says it may be the body all the same (`article`, `content`).
    pub maybe: bool,
    /// A word naming a template part ([`super::TEMPLATE_CLASSES`]) ...
    named_template: bool,
    /// ... and one starting as the article's holders do: `article`, `body`, `content`,
    /// `main`, `text` (`l-sidebar-fixed l-article-body-segment` and `text-wrapper`
    /// beside a share script's id hold news articles).
    holds_article: bool,
    /// Its class attribute as written, hashed (0 without one): the parts of a body
    /// share it.
    name: u64,
}

impl Class {
    /// Takes in a class or id, lower-cased.
    pub fn add(&mut self, value: &str) {
        self.weight += weight(value);
        let words = || value.split(|c: char| c.is_ascii_whitespace() || c == '-' || c == '_');
        self.unlikely |= words().any(|w| w == "ad" || UNLIKELY.iter().any(|u| w.starts_with(u)))
            || ["cover-wrap", "yom-remote"].iter().any(|u| value.contains(u));
        self.maybe |= MAYBE.iter().any(|m| value.contains(m));
        self.named_template |= !anchor(value) && words().any(|w| super::TEMPLATE_CLASSES.contains(&w));
        self.holds_article |=
            words().any(|w| ["article", "body", "content", "main", "text"].iter().any(|a| w.starts_with(a)));
    }

    /// Takes in the class attribute as written.
    pub fn name(&mut self, value: &str) {
        use std::hash::{Hash, Hasher};
        let value = value.trim();
        if !value.is_empty() {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            value.hash(&mut h);
            self.name = h.finish() | 1;
        }
    }

    /// Its class or id call it a template part, and none says it holds the article.
    pub fn template(&self) -> bool {
        self.named_template && !self.holds_article
    }
}

/// A class or id of four words or more (`sharing-with-a-single-developer`): the anchor a
/// documentation generator made of a section's heading, whose words name no part of a
/// template.
fn anchor(value: &str) -> bool {
    value.split(['-', '_']).filter(|w| !w.is_empty()).count() >= 4 && !value.contains(char::is_whitespace)
}

/// Readability's unlikely candidates, as the start of a word of the class or id (split
/// at `-`, `_` and white space): `relatedposts` and `comments` are, `subheader` (a heading
/// in the article) is not; Readability's `-ad-` is the word `ad` whole, and its two
/// entries of two words, `cover-wrap` and `yom-remote`, are looked for as they are.
const UNLIKELY: &[&str] = &[
    "banner",
    "breadcrumbs",
    "combx",
    "comment",
    "community",
    "disqus",
    "extra",
    "footer",
    "gdpr",
    "header",
    "legends",
    "menu",
    "related",
    "remark",
    "replies",
    "rss",
    "shoutbox",
    "sidebar",
    "skyscraper",
    "social",
    "sponsor",
    "supplemental",
    "agegate",
    "pagination",
    "pager",
    "popup",
];
/// Words that keep an unlikely candidate a candidate.
const MAYBE: &[&str] = &["and", "article", "body", "column", "content", "main", "shadow"];

/// Class and id words that say content (+25) or not (-25).
fn weight(value: &str) -> i32 {
    const POSITIVE: &[&str] =
        &["article", "body", "content", "entry", "hentry", "main", "page", "post", "text", "blog", "story"];
    const NEGATIVE: &[&str] = &[
        "hidden",
        "banner",
        "combx",
        "comment",
        "com-",
        "contact",
        "foot",
        "gdpr",
        "masthead",
        "media",
        "meta",
        "outbrain",
        "promo",
        "related",
        "scroll",
        "share",
        "shoutbox",
        "sidebar",
        "skyscraper",
        "sponsor",
        "shopping",
        "tags",
        "tool",
        "widget",
        "ad-break",
        "agegate",
        "popup",
        "byline",
        "author",
        "caption",
        "newsletter",
        "subscribe",
        "recommend",
        "trending",
        "most-read",
    ];
    let mut w = 0;
    if NEGATIVE.iter().any(|n| value.contains(n)) {
        w -= 25;
    }
    if POSITIVE.iter().any(|p| value.contains(p)) {
        w += 25;
    }
    w
}

/// Characters of text (white space aside), those inside links, and commas.
#[derive(Debug, Clone, Copy, Default)]
struct Chars {
    all: usize,
    link: usize,
    commas: usize,
    /// Those inside lists.
    listed: usize,
}

impl Chars {
    fn link_density(self) -> f64 {
        if self.all == 0 {
            0.0
        } else {
            self.link as f64 / self.all as f64
        }
    }
}

/// The runs of the article body among `keep`'s (None where no line scores, or the
/// page has no elements): those inside the best-scoring element and its siblings that
/// join it, line breaks kept.
pub(super) fn body(html: &str, runs: &[Run], nodes: &[Node], keep: &[bool]) -> Option<Vec<bool>> {
    if nodes.is_empty() {
        return None;
    }
    // First without the unlikely elements and what they hold, as Readability does; and
    // as it does, again with them when that leaves too little ([`too_little`]).
    let mut gone = vec![false; nodes.len()];
    for id in 0..nodes.len() {
        let p = nodes[id].parent;
        gone[id] = nodes[id].unlikely || (p != NONE && gone[p as usize]);
    }
    let likely: Vec<bool> = runs
        .iter()
        .zip(keep)
        .map(|(r, &k)| k && !matches!(r, Run::Text { node, .. } if *node != NONE && gone[*node as usize]))
        .collect();
    let first = choose(html, runs, nodes, &likely);
    let left = first.as_ref().map_or(0, |c| chars(html, runs, c));
    if left >= TOO_LITTLE {
        return first;
    }
    match choose(html, runs, nodes, keep) {
        Some(again) if too_little(left, chars(html, runs, &again)) => Some(again),
        again => first.or(again),
    }
}

/// Readability's least article, in characters: a choice that leaves less was made
/// with rules too strict for the page.
pub(super) const TOO_LITTLE: usize = 500;

/// Whether a choice that leaves `left` characters gives way to one without a rule that
/// leaves `again`: less than [`TOO_LITTLE`], and less than half (a short page's choice
/// stands against the same with its share bar).
pub(super) fn too_little(left: usize, again: usize) -> bool {
    left < TOO_LITTLE && 2 * left < again
}

/// Characters of text (white space aside) of `keep`'s runs.
pub(super) fn chars(html: &str, runs: &[Run], keep: &[bool]) -> usize {
    runs.iter()
        .zip(keep)
        .filter(|(_, &k)| k)
        .map(|(r, _)| match r {
            Run::Text { html: h, .. } => html[h.clone()].chars().filter(|c| !c.is_whitespace()).count(),
            Run::Break(_) => 0,
        })
        .sum()
}

/// [`body`] among `keep`'s runs.
fn choose(html: &str, runs: &[Run], nodes: &[Node], keep: &[bool]) -> Option<Vec<bool>> {
    // Each element's own characters (runs directly in it), then its subtree's.
    let mut chars = vec![Chars::default(); nodes.len()];
    // Lines: the kept text between two breaks, with the element that holds it.
    let mut score: Vec<Option<f64>> = vec![None; nodes.len()];
    let mut line = (NONE, String::new());
    let mut lines = Vec::new();
    // Whether the last text directly in each element ends a sentence.
    let mut ends = vec![false; nodes.len()];
    // The elements holding a line of text directly: paragraphs, whatever their tag.
    let mut holds = vec![false; nodes.len()];
    for (run, _) in runs.iter().zip(keep).filter(|(_, &k)| k) {
        match run {
            Run::Break(_) => lines.push(std::mem::replace(&mut line, (NONE, String::new()))),
            Run::Text { html: h, at, node } if *node != NONE => {
                let text = &html[h.clone()];
                let n = text.chars().filter(|c| !c.is_whitespace()).count();
                let c = &mut chars[*node as usize];
                c.all += n;
                c.link += if at.link { n } else { 0 };
                c.commas += commas(text);
                if n > 0 {
                    ends[*node as usize] = text.trim_end().ends_with(SENTENCE_ENDS);
                }
                if line.0 == NONE && n > 0 {
                    line.0 = nodes[*node as usize].block;
                    holds[line.0 as usize] = true;
                }
                line.1.push_str(text);
            }
            Run::Text { .. } => {}
        }
    }
    lines.push(line);
    for id in (0..nodes.len()).rev() {
        let parent = nodes[id].parent;
        if parent != NONE {
            let c = chars[id];
            let p = &mut chars[parent as usize];
            p.all += c.all;
            p.link += c.link;
            p.commas += c.commas;
            p.listed += if nodes[id].list { c.all } else { c.listed };
        }
    }
    let mut any = false;
    let mut add = |block: u32, len: usize, commas: usize| {
        let worth = 1.0 + commas as f64 + (len / 100).min(3) as f64;
        let mut at = nodes[block as usize].parent;
        for level in 0..5 {
            if at == NONE {
                break;
            }
            let s = score[at as usize].get_or_insert(nodes[at as usize].base);
            *s += match level {
                0 => worth,
                1 => worth / 2.0,
                l => worth / (l as f64 * 3.0),
            };
            any = true;
            at = nodes[at as usize].parent;
        }
    };
    for (block, text) in lines {
        let len = text.trim().chars().count();
        if block != NONE && len >= 25 {
            add(block, len, commas(&text));
        }
    }
    // A section or table cell holding paragraphs is one more paragraph of all their
    // text, as Readability scores it: an essay whose sections each sit in wrappers of
    // their own gives its commas to the element holding them all.
    for id in (0..nodes.len()).filter(|&id| nodes[id].whole && !holds[id] && chars[id].all >= 25) {
        add(id as u32, chars[id].all, chars[id].commas);
    }
    if !any {
        return None;
    }
    let final_score = |id: usize| score[id].map(|s| s * (1.0 - chars[id].link_density()));
    let mut ranked: Vec<(usize, f64)> = (0..nodes.len()).filter_map(|id| final_score(id).map(|s| (id, s))).collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let (mut top, mut best) = *ranked.first()?;
    // A body cut into parts (by advertisements, say): the parts that score at least
    // three quarters of the best's and meet it within [`SPLIT_LEVELS`] elements up are
    // one body, their common ancestor (never the page's frame).
    let up = |mut id: usize, levels: usize| {
        let mut all = Vec::with_capacity(levels);
        while all.len() < levels && nodes[id].parent != NONE && !nodes[nodes[id].parent as usize].frame {
            id = nodes[id].parent as usize;
            all.push(id);
        }
        all
    };
    // The best's own wrappers and what it holds score from its lines: no other parts.
    // The parts are most of the ancestor they make the body (at least half its text):
    // a box of comments that meets the story only at the page's wrapper is no part.
    let above = up(top, SPLIT_LEVELS);
    let mut reach = 0; // how far up `above` the body goes
    let mut parts = chars[top].all;
    for &(part, s) in ranked.iter().skip(1).take(10) {
        if s < best * 0.75 {
            break;
        }
        let part_above = up(part, SPLIT_LEVELS + 1);
        if above.contains(&part) || part_above.contains(&top) {
            continue;
        }
        if let Some(at) = part_above.iter().find_map(|a| above.iter().position(|b| b == a)) {
            reach = reach.max(at + 1);
            parts += chars[part].all;
        }
    }
    if reach > 0 && 2 * parts >= chars[above[reach - 1]].all {
        top = above[reach - 1];
        best = best.max(final_score(top).unwrap_or(0.0));
    }
    // Up to an ancestor that scores more than the one below it (the body's parts scored
    // apart: the lead paragraphs beside a box holding the rest), while each still scores
    // a third of the best.
    let threshold = best / 3.0;
    let mut last = best;
    let mut at = nodes[top].parent;
    while at != NONE && !nodes[at as usize].frame {
        let Some(s) = final_score(at as usize) else {
            at = nodes[at as usize].parent;
            continue;
        };
        if s < threshold {
            break;
        }
        if s > last {
            (top, best) = (at as usize, s);
            break;
        }
        last = s;
        at = nodes[at as usize].parent;
    }
    // The only element holding text in its parent stands for the parent, whose
    // siblings may hold the rest (Readability's rule).
    let mut holding = vec![0u32; nodes.len()];
    for id in (0..nodes.len()).filter(|&id| chars[id].all > 0) {
        if nodes[id].parent != NONE {
            holding[nodes[id].parent as usize] += 1;
        }
    }
    while nodes[top].parent != NONE
        && !nodes[nodes[top].parent as usize].frame
        && holding[nodes[top].parent as usize] == 1
    {
        top = nodes[top].parent as usize;
    }
    // Its siblings that join it.
    let mut chosen = vec![false; nodes.len()];
    chosen[top] = true;
    let parent = nodes[top].parent;
    if parent != NONE {
        let join = (best * 0.2).max(10.0);
        for id in (0..nodes.len()).filter(|&i| i != top && nodes[i].parent == parent) {
            let c = chars[id];
            let paragraph = nodes[id].paragraph && holds[id];
            // A sibling of the body's class is another part of it (Readability's bonus).
            let bonus = if nodes[id].name != 0 && nodes[id].name == nodes[top].name { best * 0.2 } else { 0.0 };
            let joins = final_score(id).is_some_and(|s| s + bonus >= join)
                || (paragraph && c.all > 80 && c.link_density() < 0.25)
                || (paragraph && c.all > 0 && c.link == 0 && ends[id]);
            chosen[id] = joins;
        }
    }
    // Inside a chosen element: its parent's number is smaller, so one pass in order.
    // Within, an element whose class or id says it is no content (comments, related
    // links, share buttons, captions) goes, as Readability cleans its choice, unless it
    // holds the text of an argument: ten commas and a score that outweighs its class
    // twice over. Never a link: `<a class="meta-loc">Sudan</a>` is a word of its line.
    let data = in_data_table(nodes);
    let mut inside = vec![false; nodes.len()];
    for id in 0..nodes.len() {
        let p = nodes[id].parent;
        let within = p != NONE && inside[p as usize];
        let class = nodes[id].class;
        let furniture = !nodes[id].link
            && class < 0
            && (chars[id].commas < 10 || f64::from(class) + score[id].unwrap_or(0.0) < 0.0);
        let c = chars[id];
        let list = nodes[id].list || c.listed as f64 > 0.9 * c.all as f64;
        let linky = nodes[id].suspect
            && !list
            && !data[id]
            && c.commas < 10
            && c.link > 0
            && ((class < 25 && c.link_density() > 0.2) || c.all < 25);
        inside[id] = (chosen[id] || within) && !(within && (furniture || linky));
    }
    Some(
        runs.iter()
            .zip(keep)
            .map(|(r, &k)| {
                k && match r {
                    Run::Text { node, .. } => *node != NONE && inside[*node as usize],
                    Run::Break(_) => true,
                }
            })
            .collect(),
    )
}

/// Commas in `text`, in the scripts that write them differently.
fn commas(text: &str) -> usize {
    text.chars().filter(|c| matches!(c, ',' | '،' | '、' | '，' | '﹐' | '︐')).count()
}
