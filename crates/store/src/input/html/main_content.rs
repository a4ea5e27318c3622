//! [`HtmlMode::Main`](textorigin_core::config::HtmlMode::Main)'s choice of a page's runs
//! of text: the steps of the parent module's docs.

use super::{score, Run};

/// [`HtmlMode::Main`]'s choice of runs (the module docs' steps).
pub(super) fn keep(html: &str, runs: &[Run], nodes: &[score::Node]) -> Vec<bool> {
    let has_main = runs.iter().any(|r| matches!(r, Run::Text { at, .. } if at.main && !at.template));
    let visible = |keep: &[bool]| {
        runs.iter().zip(keep).any(|(r, &k)| k && matches!(r, Run::Text { html: h, .. } if has_word(&html[h.clone()])))
    };
    // Steps 1 to 3: the article body among what the template elements and the main
    // content's mark leave, as Readability scores it.
    let choose = |named: bool| {
        let marked: Vec<bool> = runs
            .iter()
            .map(|r| match r {
                Run::Text { at, .. } => !at.template && (named || !at.named) && (at.main || !has_main),
                Run::Break(_) => true,
            })
            .collect();
        score::body(html, runs, nodes, &marked).filter(|keep| visible(keep)).unwrap_or(marked)
    };
    // Elements only their class calls template ("sidebar" in a layout's class
    // `panel-two-col-sidebar-right`) go, unless that leaves too little.
    let mut candidate = choose(false);
    let left = score::chars(html, runs, &candidate);
    if left < score::TOO_LITTLE {
        let with = choose(true);
        if score::too_little(left, score::chars(html, runs, &with)) {
            candidate = with;
        }
    }
    // Steps 4 and 5: link lists and copyright lines go, block by block (in a marked
    // main content only lines mostly of links: a table of contents whose entries say
    // what each page is stays; in a list only lines nearly all links; a table of
    // data's links are its text).
    let max_links = if has_main { super::MAX_LINK_DENSITY_IN_MAIN } else { super::MAX_LINK_DENSITY };
    let data = score::in_data_table(nodes);
    let listed = score::in_list(nodes);
    let paragraph = score::in_paragraph(nodes);
    let mut keep = candidate.clone();
    let mut block = 0;
    while block < runs.len() {
        let end = runs[block..].iter().position(|r| matches!(r, Run::Break(_))).map_or(runs.len(), |p| p + block);
        let (mut chars, mut link) = (0usize, 0usize);
        let mut copyright = false;
        let (mut in_list, mut prose, mut ends) = (false, false, false);
        for (r, _) in runs[block..end].iter().zip(&candidate[block..end]).filter(|(_, &k)| k) {
            if let Run::Text { html: h, at, node } = r {
                let within = |of: &[bool]| *node != score::NONE && of[*node as usize];
                let text = &html[h.clone()];
                let n = text.chars().filter(|c| !c.is_whitespace()).count();
                chars += n;
                link += if at.link && !within(&data) { n } else { 0 };
                in_list |= within(&listed);
                prose |= within(&paragraph);
                if n > 0 {
                    ends = text.trim_end().ends_with(score::SENTENCE_ENDS);
                }
                copyright |= text.contains('©') || text.contains("&copy");
            }
        }
        // A paragraph (`p`, or an element of text alone) whose text ends a sentence.
        let sentence = prose && ends;
        let max_links = if in_list || sentence { super::MAX_LINK_DENSITY_IN_LIST } else { max_links };
        if chars > 0 && (link as f64 > max_links * chars as f64 || copyright) {
            keep[block..end].iter_mut().for_each(|k| *k = false);
        }
        block = end + 1;
    }
    if visible(&keep) {
        keep
    } else if visible(&candidate) {
        candidate
    } else {
        vec![true; runs.len()]
    }
}

fn has_word(s: &str) -> bool {
    s.chars().any(char::is_alphanumeric)
}
