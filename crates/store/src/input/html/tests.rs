use std::cell::RefCell;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{
    BufferQueue, CharacterTokens, EndTag, StartTag, TagToken, Token as HtmlToken, TokenSink, TokenSinkResult,
    Tokenizer, TokenizerOpts,
};
use proptest::prelude::*;

use super::*;

/// The reference for [`HtmlMode::All`]: the visible text by html5ever's
/// spec-compliant tokenizer.
fn reference(html: &str) -> String {
    struct Sink {
        out: RefCell<String>,
        skip: RefCell<u32>,
    }
    impl Sink {
        fn newline(&self) {
            let mut out = self.out.borrow_mut();
            while out.ends_with(' ') {
                out.pop();
            }
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    impl TokenSink for Sink {
        type Handle = ();
        fn process_token(&self, token: HtmlToken, _line: u64) -> TokenSinkResult<()> {
            use html5ever::tokenizer::states::RawKind;
            match token {
                TagToken(tag) => {
                    let name: &str = &tag.name;
                    let skipped = SKIPPED.contains(&name);
                    if BLOCKS.contains(&name) && tag.kind == EndTag {
                        self.newline();
                    }
                    if tag.kind == EndTag && skipped {
                        let mut d = self.skip.borrow_mut();
                        *d = d.saturating_sub(1);
                    }
                    if tag.kind == StartTag {
                        if BLOCKS.contains(&name) {
                            self.newline();
                        }
                        if skipped && !tag.self_closing {
                            *self.skip.borrow_mut() += 1;
                            return match name {
                                "script" => TokenSinkResult::RawData(RawKind::ScriptData),
                                "style" | "noscript" | "iframe" => TokenSinkResult::RawData(RawKind::Rawtext),
                                _ => TokenSinkResult::Continue,
                            };
                        }
                        if name == "textarea" || name == "title" {
                            return TokenSinkResult::RawData(RawKind::Rcdata);
                        }
                    }
                }
                CharacterTokens(t) if *self.skip.borrow() == 0 => {
                    let mut out = self.out.borrow_mut();
                    for c in t.chars() {
                        if c.is_whitespace() {
                            if !out.is_empty() && !out.ends_with(' ') && !out.ends_with('\n') {
                                out.push(' ');
                            }
                        } else {
                            out.push(c);
                        }
                    }
                }
                _ => {}
            }
            TokenSinkResult::Continue
        }
    }
    let sink = Sink { out: RefCell::new(String::new()), skip: RefCell::new(0) };
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    let tok = Tokenizer::new(sink, TokenizerOpts::default());
    let _ = tok.feed(&input);
    tok.end();
    let out = tok.sink.out.take();
    out.trim().to_string()
}

/// Every character of the text maps to input bytes that are it, or a character
/// reference or white space that reads as it.
fn check_map(html: &str, x: &Extracted) -> Result<(), TestCaseError> {
    for (i, c) in x.text.char_indices() {
        let r = x.html_range(i..i + c.len_utf8());
        let from = &html[r.clone()];
        if c.is_whitespace() {
            continue;
        }
        if from.starts_with('&') && from != "&" {
            let decoded = reference_of(from);
            prop_assert!(decoded.contains(c), "{c:?} at {i} maps to {from:?} ({r:?})");
        } else {
            prop_assert_eq!(from, c.to_string(), "at {} ({:?})", i, r);
        }
    }
    // A span maps to the bytes from its first character's to its last's.
    if let (Some(first), Some(last)) = (x.text.char_indices().next(), x.text.char_indices().last()) {
        let all = x.html_range(0..x.text.len());
        prop_assert_eq!(all.start, x.html_range(first.0..first.0 + first.1.len_utf8()).start);
        prop_assert_eq!(all.end, x.html_range(last.0..last.0 + last.1.len_utf8()).end);
    }
    Ok(())
}

fn reference_of(s: &str) -> String {
    super::reference(s).map(|(t, _)| t).unwrap_or_default()
}

/// Pieces of pages: tags of each kind, text, character references, comments.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-zA-Z]{1,8}( [a-z]{1,5}){0,3}",
        1 => Just(" \n\t ".to_string()),
        1 => prop::sample::select(vec![
            "&amp;", "&lt;", "&gt;", "&nbsp;", "&eacute;", "&#65;", "&#x42;", "&copy", "&notit;", "&#0;", "&#x80;",
            "&amp", "& x", "&#;", "&unknown;", "&#x1F600;", "&NotEqualTilde;",
        ])
        .prop_map(str::to_string),
        2 => prop::sample::select(vec![
            "<p>", "</p>", "<div class=\"x\">", "</div>", "<span>", "</span>", "<a href='/x'>", "</a>", "<br>", "<br/>",
            "<li>", "</li>", "<ul>", "</ul>", "<h1>", "</h1>", "<b>", "</b>", "<td>", "<hr>", "<main>", "</main>",
            "<nav>", "</nav>", "<section id=\"shared-memory\">", "</section>", "<img src=x alt=\"a>b\">",
        ])
        .prop_map(str::to_string),
        1 => prop::sample::select(vec![
            "<!-- a <p> comment -->", "<!---->", "<!DOCTYPE html>", "<script>if (a < b) x = '<p>';</script>",
            "<style>p > a { x: y }</style>", "<title>A &amp; B</title>", "<textarea>t &lt; u</textarea>",
            "<svg><text>drawn</text></svg>", "< not a tag", "a<b", "</>", "<?php x ?>",
        ])
        .prop_map(str::to_string),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// `all` reads a page as html5ever's tokenizer does.
    #[test]
    fn all_reads_as_the_tokenizer_did(pieces in prop::collection::vec(piece(), 0..40)) {
        let html = pieces.concat();
        let x = extract(&html, HtmlMode::All);
        prop_assert_eq!(&x.text, &reference(&html), "{:?}", html);
        check_map(&html, &x)?;
    }

    /// The text `main` keeps maps to the input as `all`'s does.
    #[test]
    fn main_keeps_byte_spans_mapped_to_the_input(pieces in prop::collection::vec(piece(), 0..40)) {
        let html = pieces.concat();
        check_map(&html, &extract(&html, HtmlMode::Main))?;
    }
}

#[test]
fn references_decode_as_html_reads_them() {
    let x = extract("Caf&eacute; &lt;tag&gt; &notit; &#x41;&#66 &#0; &amp", HtmlMode::All);
    assert_eq!(x.text, "Café <tag> ¬it; AB \u{FFFD} &");
    assert_eq!(x.html_range(3..5), 3..11, "é is &eacute;");
    assert_eq!(x.html_range(0..3), 0..3);
}

/// A page of a documentation site as Sphinx writes it (Python's documentation).
const SPHINX: &str = r#"<!DOCTYPE html>
<html><head><title>concurrent — Python 3.11 documentation</title></head>
<body>
<div class="related" role="navigation" aria-label="related navigation"><h3>Navigation</h3>
<ul><li><a href="genindex.html">index</a></li><li><a href="py-modindex.html">modules</a> |</li></ul></div>
<div class="document"><div class="documentwrapper"><div class="bodywrapper">
<div class="body" role="main">
<section id="the-concurrent-package"><h1>The <code>concurrent</code> package</h1>
<p>Currently, there is only one module in this package:</p>
<ul><li><p><a href="x.html"><code>concurrent.futures</code></a> – Launching parallel tasks</p></li></ul>
</section></div></div></div>
<div class="sphinxsidebar" role="navigation"><h4>Previous topic</h4><p><a href="a.html">Annotations</a></p>
<div role="note"><h3>This Page</h3><ul><li><a href="bugs.html">Report a Bug</a></li></ul></div></div></div>
<div class="footer">&copy; <a href="copyright.html">Copyright</a> 2001-2023, Python Software Foundation.</div>
</body></html>"#;

#[test]
fn main_keeps_the_marked_main_content() {
    assert_eq!(
        html_to_text(SPHINX, HtmlMode::Main),
        "The concurrent package\nCurrently, there is only one module in this package:\nconcurrent.futures – Launching parallel tasks"
    );
    let all = html_to_text(SPHINX, HtmlMode::All);
    assert!(all.contains("Report a Bug") && all.contains("Python Software Foundation"), "{all}");
    let x = extract(SPHINX, HtmlMode::Main);
    let at = x.text.find("Launching").unwrap();
    assert_eq!(&SPHINX[x.html_range(at..at + 9)], "Launching");
}

#[test]
fn main_drops_template_elements_link_lists_and_copyright_lines() {
    let page = r#"<html><body>
<header><a href="/">Home</a> <a href="/news">News</a></header>
<div id="cookie-banner">We use cookies to improve your experience.</div>
<ul class="menu"><li><a href="/a">First section</a></li><li><a href="/b">Second section</a></li></ul>
<div class="content"><h1>A real article</h1>
<p>It has <a href="/x">one link</a> in a paragraph of many more words than the link holds, as text does.</p>
<div class="share-buttons">Share on social media</div>
<p>And a second paragraph.</p></div>
<div>Copyright © 2026 The Site. All rights reserved.</div>
<footer>Contact us</footer>
</body></html>"#;
    assert_eq!(
        html_to_text(page, HtmlMode::Main),
        "A real article\nIt has one link in a paragraph of many more words than the link holds, as text does.\nAnd a second paragraph."
    );
}

#[test]
fn a_page_that_is_all_template_keeps_its_text() {
    // Only links: step 3 would leave nothing, so the links stay.
    let links = r#"<ul><li><a href="a">Alpha page</a></li><li><a href="b">Beta page</a></li></ul>"#;
    assert_eq!(html_to_text(links, HtmlMode::Main), "Alpha page\nBeta page");
    // Only a navigation element: the whole text stays.
    let nav = "<nav>Only navigation here</nav>";
    assert_eq!(html_to_text(nav, HtmlMode::Main), "Only navigation here");
    // A shared-memory section is no share button (words of a class or id, not substrings).
    let section = r#"<section id="shared-memory"><p>Shared memory text.</p></section><p>More</p>"#;
    assert_eq!(html_to_text(section, HtmlMode::Main), "Shared memory text.\nMore");
}

#[test]
fn one_article_is_the_main_content() {
    let page = "<div>Site intro words</div><article><p>The story.</p></article><div>Other words</div>";
    assert_eq!(html_to_text(page, HtmlMode::Main), "The story.");
    let two = "<article><p>One.</p></article><article><p>Two.</p></article><div>Rest</div>";
    assert_eq!(html_to_text(two, HtmlMode::Main), "One.\nTwo.\nRest");
}

/// Issue 79, item 13: every run of text scanned the stack of open elements and every
/// unmatched end tag searched it, so time grew with the square of the nesting
/// (`"<b>"*200000 + words + "</i>"*200000` took 119 s). Four times the nesting now
/// takes about four times as long (best of five runs each; quadratic would be 16).
#[test]
fn reading_a_page_is_linear_in_its_nesting() {
    let page = |n: usize, unit: &str, end: &str| format!("{}the words inside{}", unit.repeat(n), end.repeat(n));
    let best = |html: &str| {
        (0..5)
            .map(|_| {
                let t = std::time::Instant::now();
                let text = html_to_text(html, HtmlMode::Main);
                assert!(text.contains("the words inside"));
                t.elapsed()
            })
            .min()
            .unwrap()
    };
    for (unit, end) in [("<b>", "</i>"), ("<div>x", ""), ("<a><span>", "</a>")] {
        let (small, large) = (best(&page(20_000, unit, end)), best(&page(80_000, unit, end)));
        let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-4);
        assert!(ratio < 8.0, "{unit}: {small:?} for 20,000 levels, {large:?} for 80,000 ({ratio:.1}x)");
    }
}

/// A news page that marks no main content: its body is the element whose paragraphs
/// score best; the comments and the related links beside it go, and the byte map
/// still gives each kept word's bytes.
#[test]
fn the_article_body_is_the_best_scoring_element_without_comments_or_related_links() {
    let para = |i: usize| {
        format!("<p>Paragraph {i} of the story, with a clause, another clause, and a third one that makes it long enough to count.</p>")
    };
    let body: String = (0..6).map(para).collect();
    let comment = "<div class=\"comment\"><p>I disagree with this, strongly, and I have said so before, many times, at length.</p></div>";
    let page = format!(
        "<html><body><div class=\"top\"><a href=\"/\">Home</a> <a href=\"/news\">News</a></div>\
         <div class=\"story\"><h1>The headline</h1>{body}</div>\
         <div class=\"comments-area\">{}</div>\
         <div class=\"promo\"><p>Subscribe to our newsletter for more stories, every morning, in your inbox, for free.</p></div>\
         </body></html>",
        comment.repeat(3)
    );
    let x = extract(&page, HtmlMode::Main);
    assert!(x.text.contains("Paragraph 0 of the story") && x.text.contains("Paragraph 5 of the story"), "{}", x.text);
    for gone in ["I disagree", "Subscribe", "Home"] {
        assert!(!x.text.contains(gone), "{gone}: {}", x.text);
    }
    let at = x.text.find("Paragraph 3").unwrap();
    assert_eq!(&page[x.html_range(at..at + 11)], "Paragraph 3");
}

/// A body cut into parts by advertisements (each part its own container, as large
/// news sites write them): every part is kept, the advertisement is not.
#[test]
fn a_body_cut_into_parts_is_kept_whole() {
    let part = |from: usize| -> String {
        (from..from + 5)
            .map(|i| {
                format!("<p>Sentence {i} goes on, and on, with commas, clauses, and words enough for a paragraph.</p>")
            })
            .collect()
    };
    let chunk = |from: usize| {
        format!("<div class=\"grid\"><div class=\"wrap\"><div class=\"inner\">{}</div></div></div>", part(from))
    };
    let page = format!(
        "<html><body><main><div class=\"chunks\">{}<div class=\"ad-break\">Advertisement</div>{}<div class=\"ad-break\">Advertisement</div>{}</div></main></body></html>",
        chunk(0),
        chunk(5),
        chunk(10)
    );
    let text = html_to_text(&page, HtmlMode::Main);
    for i in [0, 7, 14] {
        assert!(text.contains(&format!("Sentence {i} goes on")), "{i}: {text}");
    }
    assert!(!text.contains("Advertisement"), "{text}");
}

/// Regression: the best element's own wrapper, scoring three quarters of it, was taken
/// for another part of a body cut up, and the body went up to the wrapper's parent,
/// the most-read rail beside the story with it.
#[test]
fn the_body_is_not_its_own_part() {
    let paragraphs: String =
        (0..6).map(|i| format!("<p>Paragraph {i} of the story, long enough to count as one.</p>")).collect();
    let rail: String = (0..2).map(|i| format!("<p>Most read {i}: an unrelated story about the weather</p>")).collect();
    let page = format!(
        "<html><body><div class=\"site\"><div class=\"page\"><div class=\"story\"><p>The lead of the story, one line long enough.</p>\
         <div class=\"inner\">{paragraphs}</div></div><div class=\"rail\">{rail}</div></div></div></body></html>"
    );
    let text = html_to_text(&page, HtmlMode::Main);
    assert!(text.contains("Paragraph 5 of the story"), "{text}");
    assert!(text.contains("The lead of the story"), "{text}");
    assert!(!text.contains("Most read"), "{text}");
}

/// Regression: a box of links elsewhere on the page that scored three quarters of the
/// story was taken for a second part of it, and the body became their common
/// ancestor, the whole page. Parts are one body only when they are most of it.
#[test]
fn parts_are_most_of_the_body_they_make() {
    let story: String =
        (0..6).map(|i| format!("<p>Paragraph {i} of the story, with a comma, long enough to count.</p>")).collect();
    let box_: String = (0..6).map(|i| format!("<p>Reader comment {i}, said with a comma, and long.</p>")).collect();
    let menu: String = (0..300).map(|i| format!("<li>Item {i}</li>")).collect();
    let page = format!(
        "<html><body><div class=\"site\"><ul class=\"misc\">{menu}</ul><div class=\"col\"><div class=\"s1\">{story}</div></div>\
         <div class=\"col2\"><div class=\"s2\">{box_}</div></div></div></body></html>"
    );
    let text = html_to_text(&page, HtmlMode::Main);
    assert!(text.contains("Paragraph 5 of the story"), "{text}");
    assert!(!text.contains("Item 17"), "{text}");
}

/// Regression: ASP.NET pages hold their whole body in one `<form>`, and a form was a
/// template element: nothing was left to choose from and the whole page was kept, its
/// menus with it. A form that holds most of the page's text is its frame.
#[test]
fn a_form_around_the_whole_page_is_no_template() {
    let story: String =
        (0..5).map(|i| format!("Paragraph {i} of the editorial, with a comma, long enough.<br><br>")).collect();
    let page = format!(
        "<html><body><form id=\"aspnetForm\"><div class=\"top\">News | Sports | Business | Opinion</div>\
         <div class=\"hentry\"><h1>Plan draws opposition</h1><div class=\"entry-content\">\
         <span class=\"articleText\">{story}</span></div></div>\
         <div><form><input name=q> Search the site</form></div></form></body></html>"
    );
    let text = html_to_text(&page, HtmlMode::Main);
    assert!(text.contains("Paragraph 4 of the editorial"), "{text}");
    assert!(!text.contains("News | Sports"), "{text}");
}

/// Regression: a theme's `<body class="site-navigation">` made the whole page template,
/// and the page's every text (its title and menus) was kept as if nothing were content.
#[test]
fn the_body_is_never_template_by_its_class() {
    let page = "<html><head><title>Title</title></head><body class=\"standardnavigation-site-navigation\">\
        <nav><a href=\"/\">Menu</a></nav><article><p>The article's one paragraph, long enough, with a comma, to be the body.</p></article></body></html>";
    assert_eq!(
        html_to_text(page, HtmlMode::Main),
        "The article's one paragraph, long enough, with a comma, to be the body."
    );
}

/// Paragraphs of the story, with commas enough to score.
fn story(n: usize, what: &str) -> String {
    (0..n)
        .map(|i| {
            format!("<p>{what} paragraph {i} goes on, and on, with commas, clauses, and words enough to score.</p>")
        })
        .collect()
}

/// Regression (WordPress, Mozilla's test page `wordpress`): Jetpack's related posts
/// (`jp-relatedposts`: "related" against "post") scored 0 by class and were kept for
/// their excerpts' commas. Readability drops an element whose class names what no
/// article holds before it scores.
#[test]
fn related_posts_go_however_many_commas_their_excerpts_hold() {
    let excerpt =
        "<div class=\"jp-relatedposts-post\"><p>An excerpt, of a post, with commas, and more, and more, and more, \
        and more, and more, and more, and more, and more.</p></div>";
    let page = format!(
        "<html><body><article class=\"post\"><div class=\"entry-content\">{}\
         <div id=\"jp-relatedposts\" class=\"jp-relatedposts\"><h3>Related</h3>{}</div></div></article></body></html>",
        story(6, "Story"),
        excerpt.repeat(3)
    );
    let text = html_to_text(&page, HtmlMode::Main);
    assert!(text.contains("Story paragraph 0") && text.contains("Story paragraph 5"), "{text}");
    assert!(!text.contains("An excerpt") && !text.contains("Related"), "{text}");
}

/// Regression (The New York Times, Mozilla's `nytimes-1`): a link whose class said
/// "meta" went from the middle of its sentence ("its position on and lift").
#[test]
fn a_link_is_a_word_of_its_line_whatever_its_class() {
    let page = format!(
        "<html><body><div class=\"story-body\">{}<p>The government plans to reverse its position on \
         <a class=\"meta-loc\" href=\"/sudan\">Sudan</a> and lift trade sanctions, officials said.</p></div></body></html>",
        story(5, "Story")
    );
    let text = html_to_text(&page, HtmlMode::Main);
    assert!(text.contains("its position on Sudan and lift"), "{text}");
}

/// Regression (Herald Sun, Mozilla's `herald-sun-1`): the lead paragraphs stand beside a
/// "read more" box holding the rest; the box scored best and the lead was lost. The
/// body goes up to an ancestor that scores more than the element below it, as
/// Readability climbs.
#[test]
fn the_lead_beside_a_box_holding_the_rest_is_one_body() {
    let page = format!(
        "<html><body><div id=\"story\"><h1>Headline</h1><div class=\"story-body\">{}\
         <div id=\"read-more\"><a href=\"\">Read more</a><div id=\"read-more-content\">{}</div></div></div></div>\
         <div class=\"sitemap\"><a href=\"/\">Home</a></div></body></html>",
        story(3, "Lead"),
        story(8, "Rest")
    );
    let text = html_to_text(&page, HtmlMode::Main);
    assert!(text.contains("Lead paragraph 0") && text.contains("Rest paragraph 7"), "{text}");
    assert!(!text.contains("Home"), "{text}");
}

/// Regressions (ACLU and Vox, Mozilla's `aclu` and `videos-1`): a layout's class naming
/// a sidebar (`panel-two-col-sidebar-right`, `l-sidebar-fixed l-article-body-segment`)
/// made the element holding the article template, and the page kept nothing of it.
#[test]
fn a_layout_class_naming_a_sidebar_hides_no_article() {
    for class in ["panel-two-col-sidebar-right", "l-sidebar-fixed l-article-body-segment"] {
        let page = format!(
            "<html><body><nav><a href=\"/\">Home</a></nav><div role=\"main\"><div class=\"{class}\">\
             <div class=\"col\">{}</div><div class=\"links\"><a href=\"/a\">Elsewhere</a></div></div></div></body></html>",
            story(6, "Story")
        );
        let text = html_to_text(&page, HtmlMode::Main);
        assert!(text.contains("Story paragraph 0") && text.contains("Story paragraph 5"), "{class}: {text}");
        assert!(!text.contains("Home"), "{class}: {text}");
    }
    // A share bar so named is template still.
    let page = format!(
        "<html><body><div class=\"post\">{}<div class=\"share-buttons\">Share on social media</div></div></body></html>",
        story(6, "Story")
    );
    assert!(!html_to_text(&page, HtmlMode::Main).contains("Share on"));
}

/// Regression (Medium, Mozilla's `lazy-image-1`): the body's parts are siblings of one
/// class (`<div class="n p">`), the last a short one that scores less than a fifth of
/// the best. Readability adds a fifth of the best to a sibling of the body's class.
#[test]
fn a_sibling_of_the_bodys_class_is_part_of_it() {
    let page = format!(
        "<html><body><section><div class=\"n p\">{}</div><div class=\"n p\"><p>The short last part of the story ends it here.</p></div>\
         <div class=\"other\"><p>Some other box that stands beside the story.</p></div></section></body></html>",
        story(8, "Story")
    );
    let text = html_to_text(&page, HtmlMode::Main);
    assert!(text.contains("Story paragraph 0") && text.contains("The short last part"), "{text}");
    assert!(!text.contains("Some other box"), "{text}");
}

/// Regression (Mozilla's `ebb-org` and `nytimes-2`): the body is the only element holding
/// text in its wrapper, and the wrapper's sibling holds the closing paragraph. As
/// Readability does, the only child stands for its parent, whose siblings join.
#[test]
fn the_only_child_of_a_wrapper_stands_for_it() {
    let page = format!(
        "<html><body><div id=\"wrap\"><div class=\"lead-wrapper\"><div class=\"lead\">{}</div></div>\
         <p>The closing paragraph is plain text of the story, without links, of well over eighty characters.</p></div>\
         <div class=\"elsewhere\"><p>A line of the page beyond the story, plain text of over eighty characters too.</p></div></body></html>",
        story(8, "Story")
    );
    let text = html_to_text(&page, HtmlMode::Main);
    assert!(text.contains("Story paragraph 7") && text.contains("The closing paragraph"), "{text}");
    assert!(!text.contains("beyond the story"), "{text}");
}

/// Regression (Quanta, Mozilla's `quanta-1`): an essay's parts sit in wrappers of one
/// class, the first part's paragraphs eight elements below its wrapper, so that none of
/// them scored it and the first part was lost. Readability scores a section's whole
/// text as one more paragraph (white space between its tags is no text of it), the
/// best part stands for the wrapper it is the only child of, and the wrappers are
/// siblings of one class.
#[test]
fn an_essay_whose_parts_sit_deep_in_wrappers_is_kept_whole() {
    let section = |what: &str, n: usize| {
        format!(
            "\n  <section class=\"outer\">\n    <div class=\"flex\">\n      <div class=\"col\">{}</div>\n    </div>\n  </section>\n",
            story(n, what)
        )
    };
    let page = format!(
        "<html><body><div id=\"post-body\">\n<div class=\"part\"><div class=\"w1\"><div class=\"w2\"><div class=\"w3\">{}</div></div></div></div>\n\
         <div class=\"figure\"><img src=\"x.jpg\"></div>\n<div class=\"part\">{}</div>\n</div>\
         <div class=\"elsewhere\"><p>Not of the essay: the site's closing words go here.</p></div></body></html>",
        section("Opening", 4),
        section("Rest", 10),
    );
    let text = html_to_text(&page, HtmlMode::Main);
    assert!(text.contains("Opening paragraph 0") && text.contains("Rest paragraph 9"), "{text}");
    assert!(!text.contains("site's closing words"), "{text}");
}

/// Regression (CNN, Mozilla's `cnn`): a partner box inside the body ("Mortgage &
/// Savings", a few words around its links) was kept. Readability's conditional
/// cleaning drops a box of few commas whose text is more than a fifth links, its
/// unlinked lines with it; a list (an entry per bug, each a link) and a table of
/// data (a filmography, its titles links) stay whatever their links.
#[test]
fn a_box_of_links_in_the_body_goes_with_its_words_lists_and_data_tables_stay() {
    let page = format!(
        "<html><body><div class=\"story\">{}\
         <div class=\"partner\"><p>Mortgage and savings offers from our partners</p><p><a href=\"/a\">The best rates of the week are here</a></p></div>\
         <ul><li>Someone fixed <a href=\"/b\">a performance issue with the screenshots</a></li><li>Someone else has <a href=\"/c\">a patch to move the map off the old files</a></li></ul>\
         <table><tr><th>Year</th><th>Title</th></tr><tr><td>1993</td><td><a href=\"/d\">Groundhog Day</a></td></tr>\
         <tr><td>2014</td><td><a href=\"/e\">Edge of Tomorrow</a></td></tr></table>{}</div></body></html>",
        story(5, "Story"),
        story(3, "More")
    );
    let text = html_to_text(&page, HtmlMode::Main);
    assert!(text.contains("Story paragraph 0") && text.contains("More paragraph 2"), "{text}");
    assert!(!text.contains("Mortgage") && !text.contains("best rates"), "{text}");
    assert!(text.contains("a performance issue") && text.contains("a patch to move"), "{text}");
    assert!(text.contains("Groundhog Day") && text.contains("Edge of Tomorrow"), "{text}");
}

/// Regression (Mercurial's Sphinx docs, Mozilla's `mercurial`): a section's id is its
/// heading's anchor (`sharing-with-a-single-developer`), and "sharing" named it a share
/// bar: half the page was lost. An id or class of four words or more names no template
/// part; `share-buttons` still does.
#[test]
fn a_section_anchor_made_of_its_heading_names_no_template() {
    let page = format!(
        "<html><body><div class=\"body\"><div class=\"section\" id=\"evolve-shared-history\">{}\
         <div class=\"section\" id=\"sharing-with-a-single-developer\">{}</div>\
         <div class=\"share-buttons\">Share on social media</div></div></div></body></html>",
        story(8, "Intro"),
        story(6, "Sharing")
    );
    let text = html_to_text(&page, HtmlMode::Main);
    assert!(text.contains("Intro paragraph 0") && text.contains("Sharing paragraph 5"), "{text}");
    assert!(!text.contains("Share on"), "{text}");
}

/// Regression: a sentence of the article that links half its words to its sources was
/// dropped as a link list (more than a fifth of its characters links); a line of
/// links beside it still goes.
#[test]
fn a_sentence_linking_its_sources_stays() {
    let story: String =
        (0..5).map(|i| format!("<p>Paragraph {i} of the essay, with a comma, long enough to be one.</p>")).collect();
    let page = format!(
        "<html><body><article>{story}<p>2. Recall that the country forgets \
         <a href=\"/a\">the many convictions</a> and <a href=\"/b\">helps the rehabilitation</a> \
         of <a href=\"/c\">former prisoners</a>.</p><p><a href=\"/d\">Next story in the series</a></p>\
         </article></body></html>"
    );
    let text = html_to_text(&page, HtmlMode::Main);
    assert!(text.contains("2. Recall that the country forgets the many convictions"), "{text}");
    assert!(!text.contains("Next story in the series"), "{text}");
}
