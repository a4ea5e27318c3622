//! A page's own template lines from its site's line counts held in memory: what a
//! deployment's shard worker keeps so that a document's index work leaves its template
//! lines out as the owning partition's analysis does (`docs/SCALE-OUT.md`, "Site
//! templates in a deployment"). The store keeps the same counts on one node, with the
//! pages holding each line below the threshold, which give the earlier pages their
//! runs when a later one brings a line there; a page's own runs (those made `since`
//! itself) need the counts only.

use std::collections::HashMap;

use super::{furniture, may_be_furniture, Line, TemplateRun};
use crate::config::HtmlMode;
use crate::text::Token;

/// How many pages of each site hold each line, up to a threshold (a count there stays
/// there: the line is template on every later page holding it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SiteLines {
    counts: HashMap<(u64, u64), u32>,
}

impl SiteLines {
    /// Counts page `seq` of `site`, of `lines` over `tokens` of a text of `text_len`
    /// bytes, once in each distinct line that may be furniture ([`may_be_furniture`]),
    /// and returns its template runs: those lines now on at least `threshold` pages of
    /// the site (this one included), made `since` it, where they are its furniture
    /// ([`furniture`]).
    pub fn page(
        &mut self,
        (site, seq): (u64, u64),
        (lines, tokens, text_len): (&[Line], &[Token], u32),
        (threshold, html): (u32, HtmlMode),
    ) -> Vec<TemplateRun> {
        let mut seen: HashMap<u64, bool> = HashMap::with_capacity(lines.len());
        let lines: Vec<&Line> = lines.iter().filter(|l| may_be_furniture(l)).collect();
        for line in &lines {
            seen.entry(line.hash).or_insert_with(|| {
                let count = self.counts.entry((site, line.hash)).or_insert(0);
                *count = (*count + 1).min(threshold);
                *count >= threshold
            });
        }
        let runs: Vec<TemplateRun> =
            lines.iter().filter(|l| seen[&l.hash]).map(|l| TemplateRun::of(l, tokens, text_len, seq)).collect();
        furniture(&runs, tokens.len() as u32, html).to_vec()
    }

    /// Every (site, line, pages) counted, in order: what a checkpoint keeps.
    pub fn entries(&self) -> Vec<(u64, u64, u32)> {
        let mut out: Vec<(u64, u64, u32)> = self.counts.iter().map(|(&(s, h), &n)| (s, h, n)).collect();
        out.sort_unstable();
        out
    }

    /// The counts `entries` gave.
    pub fn from_entries(entries: &[(u64, u64, u32)]) -> SiteLines {
        SiteLines { counts: entries.iter().map(|&(s, h, n)| ((s, h), n)).collect() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::template::lines;
    use crate::rabin::Rabin;
    use crate::text::tokenize;
    use proptest::prelude::*;

    const WORDS: [&str; 6] = ["home", "docs", "about", "licence", "bridge", "river"];
    use super::super::FURNITURE_TOKENS;

    fn tokens_of(text: &str) -> Vec<Token> {
        let mut out = Vec::new();
        tokenize(text, &Rabin::new(1), &mut out);
        out
    }

    proptest! {
        /// Against a count of every page before: a page's runs are its lines that at
        /// least `threshold` pages of its site up to it hold, and the counts survive
        /// their entries.
        #[test]
        fn a_pages_runs_are_its_lines_held_by_enough_pages_of_its_site(
            pages in prop::collection::vec((0u64..3, prop::collection::vec((0usize..6, 0usize..6), 1..6)), 1..30),
            threshold in 1u32..5,
        ) {
            let mut sites = SiteLines::default();
            let mut before: Vec<(u64, Vec<u64>)> = Vec::new();
            for (i, (site, pairs)) in pages.iter().enumerate() {
                let text: String = pairs.iter().map(|&(a, b)| format!("{} {}\n", WORDS[a], WORDS[b])).collect();
                let tokens = tokens_of(&text);
                let lines = lines(&text, &tokens);
                let seq = i as u64 + 1;
                let runs = sites.page((*site, seq), (&lines, &tokens, text.len() as u32), (threshold, HtmlMode::Main));
                before.push((*site, lines.iter().map(|l| l.hash).collect()));
                let held = |h: u64| before.iter().filter(|(s, hs)| s == site && hs.contains(&h)).count() as u32;
                let want: Vec<TemplateRun> = lines
                    .iter()
                    .filter(|l| held(l.hash) >= threshold)
                    .map(|l| TemplateRun::of(l, &tokens, text.len() as u32, seq))
                    .collect();
                // More than half of the page: its content.
                let covered: u32 = want.iter().map(|r| r.span.end_token - r.span.start_token).sum();
                let want = if 2 * covered > tokens.len() as u32 { Vec::new() } else { want };
                prop_assert_eq!(runs, want);
                sites = SiteLines::from_entries(&sites.entries());
            }
        }

        /// Whatever the site's pages repeat, a page's template lines are
        /// never a line of more than [`FURNITURE_TOKENS`] tokens, nor more than half
        /// of the page; and a repeated short line on a page of its own text is one.
        #[test]
        fn the_labelling_never_takes_a_long_line_or_most_of_a_page(
            pages in prop::collection::vec(prop::collection::vec((0usize..4, 1usize..40), 1..8), 1..30),
            threshold in 1u32..5,
        ) {
            let mut sites = SiteLines::default();
            // Line kind k of n words: the same words on every page that has it.
            let line = |k: usize, n: usize| (0..n).map(|i| format!("{}{}", WORDS[k], i)).collect::<Vec<_>>().join(" ");
            for (i, kinds) in pages.iter().enumerate() {
                let text: String = kinds.iter().map(|&(k, n)| line(k, n) + "\n").collect();
                let tokens = tokens_of(&text);
                let lines = lines(&text, &tokens);
                let runs = sites.page((0, i as u64 + 1), (&lines, &tokens, text.len() as u32), (threshold, HtmlMode::Main));
                let covered: u32 = runs.iter().map(|r| r.span.end_token - r.span.start_token).sum();
                prop_assert!(runs.iter().all(|r| r.span.end_token - r.span.start_token <= FURNITURE_TOKENS));
                prop_assert!(2 * covered <= tokens.len() as u32, "{} of {} tokens", covered, tokens.len());
            }
            // A footer of 5 tokens on `threshold` pages each with 40 tokens of their own.
            let mut last = Vec::new();
            for p in 0..threshold as usize {
                let text = format!("{}\nhome docs about licence river\n", line(4 + p % 2, 40));
                let tokens = tokens_of(&text);
                last = sites.page((1, 1000 + p as u64), (&lines(&text, &tokens), &tokens, text.len() as u32), (threshold, HtmlMode::Main));
            }
            prop_assert_eq!(last.len(), 1);
            prop_assert_eq!(last[0].span.end_token - last[0].span.start_token, 5);
        }
    }
}
