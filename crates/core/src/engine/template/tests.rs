use super::*;
use crate::config::Config;
use crate::engine::tests::corpus;
use crate::engine::Engine;
use crate::rabin::Rabin;
use crate::table::Table;
use crate::text::tokenize;
use proptest::prelude::*;

fn tokens_of(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    tokenize(text, &Rabin::new(1), &mut out);
    out
}

/// Brute force: each piece between line breaks tokenized on its own.
fn lines_by_split(text: &str) -> Vec<u64> {
    text.split('\n')
        .map(tokens_of)
        .filter(|t| !t.is_empty())
        .map(|t| xxhash_rust::xxh3::xxh3_64(&t.iter().flat_map(|t| t.fp.to_le_bytes()).collect::<Vec<u8>>()))
        .collect()
}

/// A corpus whose documents have lines: the generated parts joined by line breaks.
fn lined(seed: u64, docs: usize) -> Vec<String> {
    corpus(seed, docs)
        .into_iter()
        .map(|d| {
            let words: Vec<&str> = d.split(' ').collect();
            words.chunks(7).map(|c| c.join(" ")).collect::<Vec<_>>().join(".\n")
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn lines_are_the_pieces_between_line_breaks(words in proptest::collection::vec("[a-c]{1,2}|\n|\n\n|, |  ", 0..60)) {
        let text = words.join(" ");
        let tokens = tokens_of(&text);
        let got: Vec<u64> = lines(&text, &tokens).iter().map(|l| l.hash).collect();
        prop_assert_eq!(got, lines_by_split(&text));
        // The lines cover every token once, in order.
        let mut at = 0;
        for l in lines(&text, &tokens) {
            prop_assert_eq!(l.start_token, at);
            prop_assert!(l.end_token > l.start_token);
            at = l.end_token;
        }
        prop_assert_eq!(at as usize, tokens.len());
    }

    #[test]
    fn labelling_takes_template_tokens_out_of_every_count(seed in any::<u64>(), docs in 2usize..12, pick in any::<u64>(), table_dominant in any::<bool>()) {
        let cfg = Config::default();
        let mut t = Table::in_memory(&cfg.table_params()).unwrap();
        let mut e = Engine::new(cfg.clone());
        let texts = lined(seed, docs);
        let mut g = crate::testdata::XorShift::new(pick | 1);
        for (i, text) in texts.iter().enumerate() {
            let seq = i as u64 + 1;
            let result = e.apply(&mut t, seq, text);
            let tokens = tokens_of(text);
            let runs: Vec<TemplateRun> = lines(text, &tokens)
                .iter()
                .filter(|_| g.below(3) == 0)
                .map(|l| TemplateRun::of(l, &tokens, text.len() as u32, seq))
                .collect();
            let pages: Vec<u32> = runs.iter().map(|_| 5).collect();
            let dominant = if table_dominant { Dominant::Table } else { Dominant::Blocks };
            let got = label(&result, &runs, &pages, &Config { dominant, ..cfg.clone() });
            // Brute force, token by token; lines covering more than half of the page
            // are its content.
            let n = tokens.len();
            let covered: usize = runs.iter().map(|r| (r.span.end_token - r.span.start_token) as usize).sum();
            let runs = if 2 * covered > n { Vec::new() } else { runs };
            let tpl: Vec<bool> = (0..n).map(|k| runs.iter().any(|r| (r.span.start_token..r.span.end_token).contains(&(k as u32)))).collect();
            // (Blocks of two origins may share the k-1 tokens of their seam before
            // alignment.)
            let covered = |spans: &[Span]| {
                let mut v = vec![false; n];
                for s in spans {
                    v[s.start_token as usize..s.end_token as usize].fill(true);
                }
                v
            };
            let novel_before = covered(&result.novel_segments);
            let novel_after = covered(&got.novel_segments);
            let blocks_before = covered(&result.copied_blocks.iter().map(|b| b.span).collect::<Vec<_>>());
            let blocks_after = covered(&got.copied_blocks.iter().map(|b| b.span).collect::<Vec<_>>());
            for k in 0..n {
                prop_assert_eq!(novel_after[k], novel_before[k] && !tpl[k]);
                prop_assert_eq!(blocks_after[k], blocks_before[k] && !tpl[k]);
            }
            for s in got.novel_segments.iter().chain(got.copied_blocks.iter().map(|b| &b.span)) {
                prop_assert_eq!(s.start_byte, tokens[s.start_token as usize].start);
                prop_assert_eq!(s.end_byte, tokens[s.end_token as usize - 1].end);
            }
            let count = |f: &dyn Fn(usize) -> bool| (0..n).filter(|&k| f(k)).count() as u32;
            prop_assert_eq!(got.template_tokens, count(&|k| tpl[k]));
            prop_assert_eq!(got.fresh_tokens, count(&|k| novel_before[k] && !tpl[k]));
            prop_assert_eq!(got.old_tokens, count(&|k| !novel_before[k] && !tpl[k]));
            prop_assert_eq!(got.old_tokens + got.fresh_tokens + got.template_tokens, got.tokens);
            prop_assert_eq!(got.counted_tokens(), got.old_tokens + got.fresh_tokens);
            // The origin counts: the shingles with no template token, counted again.
            let mut kept: Vec<u64> = result
                .selected_origins
                .iter()
                .filter(|s| !(s.start_token..s.end_token).any(|k| tpl[k as usize]))
                .map(|s| s.origin)
                .collect();
            kept.sort_unstable();
            let mut counted: Vec<u64> = got.origin_counts.iter().flat_map(|&(o, c)| std::iter::repeat_n(o, c as usize)).collect();
            counted.sort_unstable();
            prop_assert_eq!(&counted, &kept);
            if table_dominant {
                let top = got.origin_counts.first().map(|x| x.1);
                let tops: Vec<u64> = got.origin_counts.iter().filter(|x| Some(x.1) == top).map(|x| x.0).collect();
                let want = match tops.as_slice() { [one] => Some(*one), _ => Some(seq) };
                prop_assert_eq!(got.dominant_origin, want);
            }
            prop_assert_eq!(got.templates.len(), runs.len());
            // Without runs, nothing changes.
            prop_assert_eq!(&label(&result, &[], &[], &Config { dominant, ..cfg.clone() }), &result);
        }
    }
}

/// A page that is mostly what other pages of its site hold keeps those lines
/// as its content (it is a duplicate, not a frame); with a paragraph of its own the
/// same lines are its furniture; and a line of more than [`FURNITURE_TOKENS`] tokens is
/// never template, whatever a record holds.
#[test]
fn a_page_mostly_template_is_content_and_a_long_line_is_never_template() {
    let cfg = Config::default();
    let mut t = Table::in_memory(&cfg.table_params()).unwrap();
    let mut e = Engine::new(cfg.clone());
    let frame =
        "previous topic next topic this page report a bug show source\ncopyright 2001 python software foundation";
    e.apply(&mut t, 1, frame);
    let result = e.apply(&mut t, 2, frame);
    assert_eq!(result.dominant_origin, Some(1));
    let runs_of = |text: &str, seq: u64| {
        let tokens = tokens_of(text);
        lines(text, &tokens).iter().map(|l| TemplateRun::of(l, &tokens, text.len() as u32, seq)).collect::<Vec<_>>()
    };
    assert_eq!(label(&result, &runs_of(frame, 2), &[7, 7], &cfg), result, "all frame: content");
    // A page read whole (`--html all`) holds its frame: a short one is mostly frame.
    let whole = Config { html: crate::config::HtmlMode::All, ..cfg.clone() };
    assert_eq!(label(&result, &runs_of(frame, 2), &[7, 7], &whole).template_tokens, 16);
    // A paragraph of 30 words of its own: the frame's 16 tokens are furniture.
    let own: Vec<String> = (0..30).map(|i| format!("word{i}")).collect();
    let page = format!("{frame}\n{}", own.join(" "));
    let result = e.apply(&mut t, 3, &page);
    let runs = runs_of(&page, 3);
    let got = label(&result, &runs[..2], &[7, 7], &cfg);
    assert_eq!((got.template_tokens, got.fresh_tokens, got.old_tokens), (16, 30, 0));
    assert_eq!(got.dominant_origin, Some(3));
    assert_eq!(got.templates[1].pages, 7);
    // The paragraph of 30 tokens in a record is no template line.
    assert_eq!(label(&result, &runs, &[7, 7, 7], &cfg), got);
}

#[test]
fn mostly_template_is_more_than_half_of_the_bytes() {
    let run = |s, e| TemplateRun {
        span: Span { start_token: 0, end_token: 0, start_byte: s, end_byte: e },
        hash: 0,
        since: 1,
        before_end: 0,
        after_start: 0,
    };
    assert!(mostly_template(&[run(0, 6)], 0, 10));
    assert!(!mostly_template(&[run(0, 5)], 0, 10));
    assert!(mostly_template(&[run(0, 3), run(4, 7)], 1, 9));
    assert!(!mostly_template(&[], 0, 10));
}
