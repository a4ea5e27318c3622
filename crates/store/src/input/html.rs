//! HTML to text: markup, scripts, styles and comments dropped, entities decoded, block
//! elements separated by line breaks (html5ever's spec-compliant tokenizer).

use std::cell::RefCell;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{
    BufferQueue, CharacterTokens, EndTag, StartTag, TagToken, Token as HtmlToken, TokenSink, TokenSinkResult,
    Tokenizer, TokenizerOpts,
};

/// Elements whose content is not text.
const SKIPPED: &[&str] = &["script", "style", "noscript", "template", "svg", "math", "iframe", "object"];
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

struct TextSink {
    out: RefCell<String>,
    skip_depth: RefCell<u32>,
}

impl TextSink {
    fn newline(&self) {
        let mut out = self.out.borrow_mut();
        while out.ends_with(' ') {
            out.pop();
        }
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
    }

    fn text(&self, t: &StrTendril) {
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
}

impl TokenSink for TextSink {
    type Handle = ();

    fn process_token(&self, token: HtmlToken, _line: u64) -> TokenSinkResult<()> {
        use html5ever::tokenizer::states::RawKind;
        match token {
            TagToken(tag) => {
                let name: &str = &tag.name;
                let skipped = SKIPPED.contains(&name);
                match tag.kind {
                    StartTag => {
                        if BLOCKS.contains(&name) {
                            self.newline();
                        }
                        if skipped && !tag.self_closing {
                            *self.skip_depth.borrow_mut() += 1;
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
                    EndTag => {
                        if skipped {
                            let mut d = self.skip_depth.borrow_mut();
                            *d = d.saturating_sub(1);
                        }
                        if BLOCKS.contains(&name) {
                            self.newline();
                        }
                    }
                }
            }
            CharacterTokens(t) if *self.skip_depth.borrow() == 0 => {
                self.text(&t);
            }
            _ => {}
        }
        TokenSinkResult::Continue
    }
}

/// Extracts the visible text of an HTML document.
pub fn html_to_text(html: &str) -> String {
    let sink = TextSink { out: RefCell::new(String::new()), skip_depth: RefCell::new(0) };
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    let tok = Tokenizer::new(sink, TokenizerOpts::default());
    let _ = tok.feed(&input);
    tok.end();
    let out = tok.sink.out.take();
    out.trim().to_string()
}
