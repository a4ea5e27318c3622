//! Input formats: files into documents (name, text, url, published_at).
//!
//! - `.txt` and any unknown extension: UTF-8 text; invalid bytes are replaced by
//!   U+FFFD with a warning (the repaired text is what is stored and what spans refer to).
//! - `.html` / `.htm`: markup, scripts, styles and comments dropped, entities decoded,
//!   block elements separated by line breaks (html5ever's spec-compliant tokenizer).
//!   The extracted text is stored and spans refer to it.
//! - `.json`: one object `{"id", "text" | "html", "url"?, "published_at"?}`;
//!   `.jsonl`: one such object per line (blank lines skipped). `date` is accepted for
//!   `published_at`. Other fields are ignored.
//!
//! A document's name is its `id` (a string or a number), else the file name without
//! extension (for JSONL, `stem:LINE`). Errors name the file (and line) and the reason;
//! one bad JSONL line does not stop the others.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use html5ever::tokenizer::{
    BufferQueue, CharacterTokens, EndTag, StartTag, TagToken, Token as HtmlToken, TokenSink, TokenSinkResult,
    Tokenizer, TokenizerOpts,
};
use html5ever::tendril::StrTendril;

/// A document read from a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputDoc {
    pub name: String,
    /// Where it came from: the path, with `:LINE` for JSONL.
    pub source: String,
    pub text: String,
    pub url: Option<String>,
    pub published_at: Option<String>,
    /// Non-fatal problems (e.g. invalid UTF-8 replaced).
    pub warnings: Vec<String>,
    /// For JSON input: `message_id` and `in_reply_to` (mail threads), used by the
    /// evaluation's reply ground truth; empty otherwise.
    pub message_id: Option<String>,
    pub in_reply_to: Vec<String>,
}

/// Why a document could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    #[error("{file}: cannot read: {reason}")]
    Unreadable { file: String, reason: String },
    #[error("{0}: binary file (not text)")]
    Binary(String),
    #[error("{0}: empty document")]
    Empty(String),
    #[error("{file}: malformed JSON: {reason}")]
    Json { file: String, reason: String },
    #[error("{0}: JSON object has neither `text` nor `html`")]
    NoText(String),
    #[error("{file}: {bytes} bytes is over the limit of {limit} bytes")]
    TooLarge { file: String, bytes: u64, limit: u64 },
}

/// Lists the files under `paths` in processing order: files as given, directories
/// walked recursively in sorted name order (hidden entries skipped).
pub fn expand_paths(paths: &[PathBuf]) -> Vec<Result<PathBuf, InputError>> {
    fn walk(dir: &Path, out: &mut Vec<Result<PathBuf, InputError>>) {
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) => {
                out.push(Err(InputError::Unreadable { file: dir.display().to_string(), reason: e.to_string() }));
                return;
            }
        };
        let mut names: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| e.path())
            .collect();
        names.sort();
        for p in names {
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(Ok(p));
            }
        }
    }
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out);
        } else if p.exists() {
            out.push(Ok(p.clone()));
        } else {
            out.push(Err(InputError::Unreadable { file: p.display().to_string(), reason: "no such file or directory".into() }));
        }
    }
    out
}

/// Reads one file into its documents (several for JSONL). The outer error is for the
/// whole file; inner ones for single documents.
pub fn read_file(path: &Path, max_bytes: u64) -> Result<Vec<Result<InputDoc, InputError>>, InputError> {
    let source = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| InputError::Unreadable { file: source.clone(), reason: e.to_string() })?;
    let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    if ext != "jsonl" && meta.len() > max_bytes {
        return Err(InputError::TooLarge { file: source, bytes: meta.len(), limit: max_bytes });
    }
    let bytes = std::fs::read(path).map_err(|e| InputError::Unreadable { file: source.clone(), reason: e.to_string() })?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| source.clone());
    parse_bytes(bytes, &ext, &stem, &source, max_bytes)
}

/// Parses file content of a given extension (see the module docs).
pub fn parse_bytes(
    bytes: impl Into<Vec<u8>>,
    ext: &str,
    stem: &str,
    source: &str,
    max_bytes: u64,
) -> Result<Vec<Result<InputDoc, InputError>>, InputError> {
    let bytes = bytes.into();
    if looks_binary(&bytes) {
        return Err(InputError::Binary(source.to_string()));
    }
    // The bytes become the text without a copy when they are UTF-8 (a large file must
    // not be held twice).
    match ext {
        "jsonl" | "ndjson" => {
            let (text, _) = decode(bytes);
            let docs = text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
                .map(|(i, line)| {
                    let src = format!("{source}:{}", i + 1);
                    if line.len() as u64 > max_bytes {
                        return Err(InputError::TooLarge { file: src, bytes: line.len() as u64, limit: max_bytes });
                    }
                    from_json(line, &format!("{stem}:{}", i + 1), &src)
                })
                .collect();
            Ok(docs)
        }
        "json" => {
            let (text, _) = decode(bytes);
            Ok(vec![from_json(&text, stem, source)])
        }
        _ => {
            let (text, replaced) = decode(bytes);
            let mut warnings = Vec::new();
            if replaced > 0 {
                warnings.push(format!("{source}: {replaced} invalid UTF-8 sequence(s) replaced by U+FFFD"));
            }
            let text = if ext == "html" || ext == "htm" { html_to_text(&text) } else { text };
            Ok(vec![finish(stem.to_string(), source.to_string(), text, None, None, warnings)])
        }
    }
}

fn finish(
    name: String,
    source: String,
    text: String,
    url: Option<String>,
    published_at: Option<String>,
    warnings: Vec<String>,
) -> Result<InputDoc, InputError> {
    if text.trim().is_empty() {
        return Err(InputError::Empty(source));
    }
    Ok(InputDoc { name, source, text, url, published_at, warnings, message_id: None, in_reply_to: Vec::new() })
}

/// A NUL byte, or mostly undecodable bytes, in the first 8 KiB.
fn looks_binary(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(8192)];
    if head.contains(&0) {
        return true;
    }
    let replaced = String::from_utf8_lossy(head).matches('\u{FFFD}').count();
    // A cut multi-byte character at the end of the window is not evidence.
    replaced > 2 && replaced * 10 > head.len() / 4
}

/// UTF-8 decoding with replacement (in place when the bytes are UTF-8); returns the
/// number of replaced sequences.
fn decode(bytes: Vec<u8>) -> (String, usize) {
    match String::from_utf8(bytes) {
        Ok(s) => (s, 0),
        Err(e) => {
            let s = String::from_utf8_lossy(e.as_bytes()).into_owned();
            let replaced = s.matches('\u{FFFD}').count();
            (s, replaced)
        }
    }
}

fn from_json(text: &str, default_name: &str, source: &str) -> Result<InputDoc, InputError> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| InputError::Json { file: source.to_string(), reason: e.to_string() })?;
    let obj = v.as_object().ok_or_else(|| InputError::Json { file: source.to_string(), reason: "expected an object".into() })?;
    let string = |key: &str| -> Option<String> {
        match obj.get(key)? {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    };
    let name = string("id").unwrap_or_else(|| default_name.to_string());
    let body = if let Some(t) = obj.get("text").and_then(|t| t.as_str()) {
        t.to_string()
    } else if let Some(h) = obj.get("html").and_then(|t| t.as_str()) {
        html_to_text(h)
    } else {
        return Err(InputError::NoText(source.to_string()));
    };
    let mut doc =
        finish(name, source.to_string(), body, string("url"), string("published_at").or_else(|| string("date")), Vec::new())?;
    doc.message_id = string("message_id");
    doc.in_reply_to = match obj.get("in_reply_to") {
        Some(serde_json::Value::Array(a)) => a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect(),
        Some(serde_json::Value::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    };
    Ok(doc)
}

/// Elements whose content is not text.
const SKIPPED: &[&str] = &["script", "style", "noscript", "template", "svg", "math", "iframe", "object"];
/// Elements that break lines.
const BLOCKS: &[&str] = &[
    "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "figcaption", "figure", "footer", "form",
    "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "table",
    "td", "th", "title", "tr", "ul",
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
            CharacterTokens(t)
                if *self.skip_depth.borrow() == 0 => {
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Fragments that steer random input toward what the parsers branch on.
    fn fragments() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            any::<Vec<u8>>(),
            "[a-zA-Z .!?\n]{0,40}".prop_map(String::into_bytes),
            prop::sample::select(vec![
                "{", "}", "[", "]", "\"", ":", ",", "\\u00e9", "\\ud800", "\"text\"", "\"html\"", "\"id\"", "null", "1e999",
                "<p>", "</p>", "<script>", "<!--", "-->", "&amp;", "&#xFFFFFF;", "<![CDATA[", "\n", "\r\n", "\u{feff}", "\0",
            ])
            .prop_map(|s: &str| s.as_bytes().to_vec()),
        ];
        prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
    }

    proptest! {
        /// Fuzzing (issue 11): any bytes in any input format give documents or clean
        /// errors, never a panic; `scripts/fuzz.sh` runs a million cases.
        #[test]
        fn fuzz_any_bytes_parse_to_documents_or_errors(bytes in fragments(), ext in prop::sample::select(vec!["txt", "html", "json", "jsonl", "xyz"])) {
            let limit = 1 << 12;
            if let Ok(docs) = parse_bytes(bytes.clone(), ext, "stem", "src", limit) {
                for d in docs.into_iter().flatten() {
                    prop_assert!(d.text.len() as u64 <= 4 * bytes.len() as u64 + 64, "output bounded by the input");
                }
            }
        }
    }

    #[test]
    fn html_drops_markup_scripts_and_decodes_entities() {
        let html = r#"<html><head><title>T&amp;C</title><style>p{color:red}</style>
            <script>var x = "<p>not text</p>";</script></head>
            <body><p>Caf&eacute; <b>bo</b>ld &lt;tag&gt;</p><!-- hidden --><div>next&nbsp;line</div></body></html>"#;
        let text = html_to_text(html);
        assert_eq!(text, "T&C\nCafé bold <tag>\nnext line", "nbsp is whitespace");
    }

    #[test]
    fn json_and_jsonl() {
        let docs = parse_bytes(&br#"{"id": 7, "text": "hello world", "url": "http://x", "date": "2020"}"#[..], "json", "f", "f.json", 1000)
            .unwrap();
        let d = docs[0].as_ref().unwrap();
        assert_eq!((d.name.as_str(), d.url.as_deref(), d.published_at.as_deref()), ("7", Some("http://x"), Some("2020")));
        let docs = parse_bytes(&b"{\"text\":\"a b\"}\n\n{bad\n{\"html\":\"<p>x</p>\"}\n{\"id\":\"q\"}\n"[..], "jsonl", "f", "f.jsonl", 1000)
            .unwrap();
        assert_eq!(docs.len(), 4);
        assert_eq!(docs[0].as_ref().unwrap().name, "f:1");
        assert!(matches!(&docs[1], Err(InputError::Json { file, .. }) if file == "f.jsonl:3"));
        assert_eq!(docs[2].as_ref().unwrap().text, "x");
        assert!(matches!(&docs[3], Err(InputError::NoText(_))));
    }

    #[test]
    fn text_binary_empty_and_invalid_utf8() {
        assert!(matches!(parse_bytes(&b"\x89PNG\r\n\x1a\n\0\0"[..], "txt", "f", "f", 100), Err(InputError::Binary(_))));
        let docs = parse_bytes(&b"  \n "[..], "txt", "f", "f", 100).unwrap();
        assert!(matches!(docs[0], Err(InputError::Empty(_))));
        let docs = parse_bytes(&b"caf\xe9 ol\xe9 and much more text here"[..], "txt", "f", "f", 100).unwrap();
        let d = docs[0].as_ref().unwrap();
        assert_eq!(d.text, "caf\u{FFFD} ol\u{FFFD} and much more text here");
        assert_eq!(d.warnings.len(), 1);
    }
}
