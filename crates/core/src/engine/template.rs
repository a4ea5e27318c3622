//! Site templates: text a site repeats on many of its pages (navigation,
//! footers, licence lines, "Availability: ..." notes) is neither old nor fresh. Not in
//! the papers, whose documents are texts; what jusText's and trafilatura's users
//! expect of crawled pages, and what passim and datatrove remove as boilerplate.
//!
//! The unit is a **line**: the terms between two line breaks of the stored text (HTML
//! input ends each block element with one), keyed by a hash of their fingerprints
//! ([`lines`]), so case and punctuation do not tell two lines apart. The store counts
//! the pages of a site holding each line; a line on at least `template_pages` pages of
//! its site is template there.
//!
//! **A template is furniture, never content**: only a short line
//! ([`FURNITURE_TOKENS`]) is counted, so that a paragraph pasted into six essays of one
//! folder stays copied text; and template lines covering more than half of a page are
//! content on that page ([`furniture`]): a page mostly the same as five others of its
//! site is a duplicate, not a frame. This module is the pure part: the lines of a document,
//! and a stored result as a reader sees it once its template lines are known
//! ([`label`]): template tokens taken out of the copied blocks, the novel segments,
//! the old and fresh counts and the origin counts, and the dominant and most-copied
//! origins counted again without them. The stored result stays the engine's, so that
//! the table replays exactly.

use serde::{Deserialize, Serialize};

use super::{by_arrival, dominant_of, most_copied_of, origin_counts, shingle_labels, Block, DocResult, Span};
use crate::config::{Config, Dominant, HtmlMode};
use crate::text::Token;

mod sites;
pub use sites::SiteLines;

/// The longest line, in tokens, that can be site furniture. Measured on Debian's
/// documentation sites (`docs/EVALUATION.md`, "Page furniture"): their navigation,
/// headers and footers are 1-17 tokens ("Examples, recipes, and other code in the
/// documentation are additionally licensed under the Zero Clause BSD License" is 17);
/// the lines the count made template beyond 20 tokens were repeated paragraphs of the
/// pages' own text (Django's security notes of 29 and 55 tokens, Python's 23-token
/// WebAssembly note), and a pasted paragraph of a source is longer still.
pub const FURNITURE_TOKENS: u32 = 20;

/// Whether `line` can be site furniture: at most [`FURNITURE_TOKENS`] tokens.
pub fn may_be_furniture(line: &Line) -> bool {
    line.end_token - line.start_token <= FURNITURE_TOKENS
}

/// Of a page of `tokens` tokens, its template lines `runs` that are furniture: all of
/// them, or none where they cover more than half of the page (a page that is mostly
/// what other pages of its site hold is a duplicate or a copy, not a frame). Where the
/// text is every visible text of its page (`html`: [`HtmlMode::All`]), the frame is in
/// it, and a short page's frame is most of it: all of them then.
pub fn furniture(runs: &[TemplateRun], tokens: u32, html: HtmlMode) -> &[TemplateRun] {
    let covered: u32 = runs.iter().map(|r| r.span.end_token - r.span.start_token).sum();
    match html == HtmlMode::Main && 2 * u64::from(covered) > u64::from(tokens) {
        true => &[],
        false => runs,
    }
}

/// One line of a document: its tokens and the hash of their fingerprints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line {
    pub start_token: u32,
    /// Exclusive.
    pub end_token: u32,
    pub hash: u64,
}

/// The lines of `text` with at least one token, in order.
pub fn lines(text: &str, tokens: &[Token]) -> Vec<Line> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0usize;
    let mut fps: Vec<u8> = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let breaks = i > 0 && bytes[tokens[i - 1].end as usize..t.start as usize].contains(&b'\n');
        if breaks {
            out.push(Line { start_token: start as u32, end_token: i as u32, hash: xxhash_rust::xxh3::xxh3_64(&fps) });
            fps.clear();
            start = i;
        }
        fps.extend_from_slice(&t.fp.to_le_bytes());
    }
    if !tokens.is_empty() {
        let end = tokens.len() as u32;
        out.push(Line { start_token: start as u32, end_token: end, hash: xxhash_rust::xxh3::xxh3_64(&fps) });
    }
    out
}

/// A template line of a stored document, with what [`label`] needs to cut blocks at
/// its edges without the document's tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplateRun {
    pub span: Span,
    /// The line's hash ([`Line::hash`]).
    pub hash: u64,
    /// The document whose arrival made the line template here: the document itself,
    /// or a later page of its site that brought the line to the threshold (the run was
    /// added to this document's record then).
    pub since: u64,
    /// The byte end of the token before the line (0 when it is the first).
    pub before_end: u32,
    /// The byte start of the token after it (the text's length when it is the last).
    pub after_start: u32,
}

impl TemplateRun {
    /// The run of `line` of a document with `tokens` and `text_len` bytes.
    pub fn of(line: &Line, tokens: &[Token], text_len: u32, since: u64) -> TemplateRun {
        let (s, e) = (line.start_token as usize, line.end_token as usize);
        TemplateRun {
            span: Span {
                start_token: line.start_token,
                end_token: line.end_token,
                start_byte: tokens[s].start,
                end_byte: tokens[e - 1].end,
            },
            hash: line.hash,
            since,
            before_end: if s == 0 { 0 } else { tokens[s - 1].end },
            after_start: tokens.get(e).map_or(text_len, |t| t.start),
        }
    }
}

/// A template line as a reader sees it: where, and on how many pages of its site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Templated {
    pub span: Span,
    pub pages: u32,
}

/// Whether bytes `start..end` of a document are mostly (more than half) in `runs`: a
/// sentence that is not searched for quotations nor indexed as one.
pub fn mostly_template(runs: &[TemplateRun], start: u32, end: u32) -> bool {
    let inside: u32 = runs.iter().map(|r| r.span.end_byte.min(end).saturating_sub(r.span.start_byte.max(start))).sum();
    2 * inside > end.saturating_sub(start)
}

/// Empties the sentences mostly in `runs` ([`mostly_template`]): with no words they
/// are neither searched for quotations, indexed nor counted in the document
/// frequencies, and every other sentence keeps its place (the index names a sentence
/// by its place in the document, [`crate::quote::signatures`]).
pub fn blank_sentences(sentences: &mut [crate::quote::Sentence], runs: &[TemplateRun]) {
    if runs.is_empty() {
        return;
    }
    for s in sentences.iter_mut().filter(|s| mostly_template(runs, s.start, s.end)) {
        s.words.clear();
        s.clauses.clear();
    }
}

fn mask(n: usize, runs: &[TemplateRun]) -> Vec<bool> {
    let mut mask = vec![false; n];
    for r in runs {
        let (s, e) = (r.span.start_token as usize, (r.span.end_token as usize).min(n));
        mask[s.min(e)..e].fill(true);
    }
    mask
}

/// `result` as a reader sees it with the template lines `runs` (each with the pages
/// holding it, `pages`): their tokens out of the copied blocks (cut at the lines'
/// edges), the novel segments and the passages' notes, counted neither old nor fresh
/// ([`DocResult::template_tokens`]), their selected shingles (any token in a run) out
/// of the origin counts, and the dominant origin (by `dominant`) and the most-copied
/// origin counted again without them. Ties between origins are taken in arrival order
/// (the counts' order only; the dominant origin of a tie is the document itself).
pub fn label(result: &DocResult, runs: &[TemplateRun], pages: &[u32], cfg: &Config) -> DocResult {
    let mut out = result.clone();
    // The rules hold for the whole record: the lines later pages added to it, and
    // lines a record kept that the count does not take.
    let long = |r: &TemplateRun| r.span.end_token - r.span.start_token > FURNITURE_TOKENS;
    let (runs, pages): (Vec<TemplateRun>, Vec<u32>) = runs.iter().zip(pages).filter(|(r, _)| !long(r)).unzip();
    let runs = furniture(&runs, result.tokens, cfg.html);
    if runs.is_empty() {
        return out;
    }
    let n = result.tokens as usize;
    let tpl = mask(n, runs);
    // Byte edges at a run's boundaries: where a kept part starts after a run, and ends
    // before one.
    let mut start_at = std::collections::HashMap::new();
    let mut end_at = std::collections::HashMap::new();
    for r in runs {
        start_at.insert(r.span.end_token, r.after_start);
        end_at.insert(r.span.start_token, r.before_end);
    }
    let cut = |span: &Span| -> Vec<Span> {
        let mut parts = Vec::new();
        let mut t = span.start_token;
        while t < span.end_token {
            if tpl[t as usize] {
                t += 1;
                continue;
            }
            let s = t;
            while t < span.end_token && !tpl[t as usize] {
                t += 1;
            }
            let start_byte = if s == span.start_token { span.start_byte } else { start_at[&s] };
            let end_byte = if t == span.end_token { span.end_byte } else { end_at[&t] };
            parts.push(Span { start_token: s, end_token: t, start_byte, end_byte });
        }
        parts
    };
    let inside = |s: u32, e: u32| (s..e).any(|t| tpl[t as usize]);
    out.selected_origins.retain(|s| !inside(s.start_token, s.end_token));
    out.copied_blocks = result
        .copied_blocks
        .iter()
        .flat_map(|b| {
            cut(&b.span).into_iter().map(|span| {
                let shingles = out
                    .selected_origins
                    .iter()
                    .filter(|s| s.start_token >= span.start_token && s.end_token <= span.end_token)
                    .count() as u32;
                Block { span, origin: b.origin, shingles }
            })
        })
        .collect();
    out.novel_segments = result.novel_segments.iter().flat_map(cut).collect();
    let mut novel = vec![false; n];
    for s in &result.novel_segments {
        novel[s.start_token as usize..s.end_token as usize].fill(true);
    }
    let counted = |want: bool| (0..n).filter(|&t| !tpl[t] && novel[t] == want).count() as u32;
    out.fresh_tokens = counted(true);
    out.old_tokens = counted(false);
    out.template_tokens = tpl.iter().filter(|&&m| m).count() as u32;
    out.origin_counts = origin_counts(out.selected_origins.iter().map(|s| s.origin), &by_arrival);
    out.dominant_origin = match cfg.dominant {
        Dominant::Table => dominant_of(&out.origin_counts, out.seq, n),
        Dominant::Blocks => out.dominant_by_blocks(),
    };
    out.most_copied_origin = most_copied_of(&shingle_labels(&out, &by_arrival), &by_arrival);
    out.passages.also_earlier.retain(|a| !inside(a.start_token, a.end_token));
    out.passages.edits.retain(|&t| !tpl.get(t as usize).copied().unwrap_or(false));
    out.templates = runs.iter().zip(pages).map(|(r, pages)| Templated { span: r.span, pages }).collect();
    out
}

#[cfg(test)]
mod tests;
