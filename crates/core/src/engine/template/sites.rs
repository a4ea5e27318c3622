//! A page's own template lines from its site's line counts held in memory: what a
//! deployment's shard worker keeps so that a document's index work leaves its template
//! lines out as the owning partition's analysis does (`docs/SCALE-OUT.md`, "Site
//! templates in a deployment"). The store keeps the same counts on one node, with the
//! pages holding each line below the threshold, which give the earlier pages their
//! runs when a later one brings a line there; a page's own runs (those made `since`
//! itself) need the counts only.

use std::collections::HashMap;

use super::{Line, TemplateRun};
use crate::text::Token;

/// How many pages of each site hold each line, up to a threshold (a count there stays
/// there: the line is template on every later page holding it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SiteLines {
    counts: HashMap<(u64, u64), u32>,
}

impl SiteLines {
    /// Counts page `seq` of `site`, of `lines` over `tokens` of a text of `text_len`
    /// bytes, once in each distinct line, and returns its template runs: the lines now
    /// on at least `threshold` pages of the site (this one included), made `since` it.
    pub fn page(
        &mut self,
        (site, seq): (u64, u64),
        (lines, tokens, text_len): (&[Line], &[Token], u32),
        threshold: u32,
    ) -> Vec<TemplateRun> {
        let mut seen: HashMap<u64, bool> = HashMap::with_capacity(lines.len());
        for line in lines {
            seen.entry(line.hash).or_insert_with(|| {
                let count = self.counts.entry((site, line.hash)).or_insert(0);
                *count = (*count + 1).min(threshold);
                *count >= threshold
            });
        }
        lines.iter().filter(|l| seen[&l.hash]).map(|l| TemplateRun::of(l, tokens, text_len, seq)).collect()
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
                let runs = sites.page((*site, seq), (&lines, &tokens, text.len() as u32), threshold);
                before.push((*site, lines.iter().map(|l| l.hash).collect()));
                let held = |h: u64| before.iter().filter(|(s, hs)| s == site && hs.contains(&h)).count() as u32;
                let want: Vec<TemplateRun> = lines
                    .iter()
                    .filter(|l| held(l.hash) >= threshold)
                    .map(|l| TemplateRun::of(l, &tokens, text.len() as u32, seq))
                    .collect();
                prop_assert_eq!(runs, want);
                sites = SiteLines::from_entries(&sites.entries());
            }
        }
    }
}
