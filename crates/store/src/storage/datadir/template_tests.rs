//! Site templates against a brute-force count: once stored, every page's
//! template lines are exactly the lines its site holds on at least `template_pages`
//! pages (none where they cover more than half of the page), whatever the
//! order the pages came in, and a replay gives the same table.

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;
use textorigin_core::config::{Overrides, Templates};
use textorigin_core::engine::template::lines;
use textorigin_core::rabin::Rabin;
use textorigin_core::testdata::XorShift;
use textorigin_core::text::tokenize;

use super::DataDir;
use crate::input::InputDoc;
use crate::intake::Policy;

fn page(site: Option<usize>, n: usize, text: String) -> InputDoc {
    InputDoc {
        name: format!("p{n}"),
        source: format!("p{n}"),
        text,
        url: site.map(|s| format!("https://site{s}.example/p{n}")),
        ..InputDoc::default()
    }
}

/// Pages of up to three sites (and some without a site), each line drawn from its
/// site's small pool of repeated lines or made up.
fn pages(seed: u64, count: usize) -> Vec<(Option<usize>, String)> {
    let mut g = XorShift::new(seed | 1);
    (0..count)
        .map(|_| {
            let site = match g.below(4) {
                3 => None,
                s => Some(s as usize),
            };
            let lines: Vec<String> = (0..1 + g.below(8))
                .map(|_| match g.below(3) {
                    0 => format!("w{} w{} fresh", g.below(10_000), g.below(10_000)),
                    _ => format!("pool{} line {} of the site", site.unwrap_or(9), g.below(6)),
                })
                .collect();
            (site, lines.join("\n"))
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn template_lines_are_those_on_enough_pages_of_their_site(seed in any::<u64>(), count in 1usize..30, n in 2u32..5) {
        let dir = tempfile::tempdir().unwrap();
        let ov = Overrides {
            table_bytes: Some(64 << 10),
            index_bytes: Some(8 << 20),
            templates: Some(Templates::Site),
            template_pages: Some(n),
            ..Overrides::default()
        };
        let mut dd = DataDir::open_write(dir.path(), &ov, Policy::default()).unwrap();
        let corpus = pages(seed, count);
        for (i, (site, text)) in corpus.iter().enumerate() {
            dd.ingest(&page(*site, i, text.clone())).unwrap();
        }
        // Brute force: the pages of each site holding each line.
        let rabin = Rabin::new(8).with_terms(dd.config().terms);
        let mut toks = Vec::new();
        let mut holding: HashMap<(usize, u64), HashSet<usize>> = HashMap::new();
        for (i, (site, text)) in corpus.iter().enumerate() {
            tokenize(text, &rabin, &mut toks);
            for l in lines(text, &toks) {
                if let Some(s) = site {
                    holding.entry((*s, l.hash)).or_default().insert(i);
                }
            }
        }
        for (i, (site, text)) in corpus.iter().enumerate() {
            tokenize(text, &rabin, &mut toks);
            let want: Vec<(u32, u32)> = lines(text, &toks)
                .iter()
                .filter(|l| site.is_some_and(|s| holding[&(s, l.hash)].len() as u32 >= n))
                .map(|l| (l.start_token, l.end_token))
                .collect();
            // Lines covering more than half of the page are its content.
            let covered: u32 = want.iter().map(|(s, e)| e - s).sum();
            let want = if 2 * covered as usize > toks.len() { Vec::new() } else { want };
            let seq = i as u64 + 1;
            // What a reader sees: those lines, with the pages now holding each.
            let labelled = dd.store().labelled_result(seq).unwrap().unwrap();
            let got: Vec<(u32, u32)> = labelled.templates.iter().map(|t| (t.span.start_token, t.span.end_token)).collect();
            prop_assert_eq!(&got, &want, "page {} of site {:?}", i, site);
            for t in &labelled.templates {
                let l = lines(text, &toks).into_iter().find(|l| l.start_token == t.span.start_token).unwrap();
                prop_assert_eq!(t.pages as usize, holding[&(site.unwrap(), l.hash)].len());
            }
            prop_assert_eq!(labelled.old_tokens + labelled.fresh_tokens + labelled.template_tokens, labelled.tokens);
        }
        // A replay of the stored documents gives the same table (the sentences each
        // page indexed are those it had when analysed).
        let digest = |dd: &DataDir| (dd.table().digest(), xxhash_rust::xxh3::xxh3_64(dd.table().index_region()));
        let before = digest(&dd);
        dd.close().unwrap();
        let rebuilt = DataDir::rebuild(dir.path(), super::RebuildOptions::default(), |_, _| {}).unwrap();
        prop_assert_eq!(rebuilt.differing, 0);
        let dd = DataDir::open_read(dir.path()).unwrap();
        prop_assert_eq!(digest(&dd), before);
    }
}
