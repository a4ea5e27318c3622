//! The input formats' unit tests.

use super::*;
use proptest::prelude::*;

/// An endless JSONL stream that fails when read past 1 MiB.
struct Endless(usize);

impl std::io::Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.0 > 1 << 20 {
            return Err(std::io::Error::other("read past the documents asked for"));
        }
        let line = format!("{{\"id\": \"d{}\", \"text\": \"words of a document\"}}\n", self.0);
        let n = line.len().min(buf.len());
        buf[..n].copy_from_slice(&line.as_bytes()[..n]);
        self.0 += 1;
        // Whole lines only (a short buffer gets a line's start, which is enough to fail JSON).
        Ok(n)
    }
}

#[test]
fn a_jsonl_line_over_the_limit_is_measured_in_the_files_bytes() {
    let bytes = b"{\"text\": \"ab\"}\r\n{\"text\": \"a\xff\"}\n".to_vec();
    let docs: Vec<_> = jsonl_docs(std::io::Cursor::new(bytes), "s", "src", 15).unwrap().collect();
    assert!(docs[0].is_ok(), "14 bytes without the \\r\\n: {:?}", docs[0]);
    // 14 bytes in the file (the invalid byte is one), 16 once replaced by U+FFFD.
    assert_eq!(docs[1].as_ref().unwrap().text, "a\u{fffd}");
    let docs: Vec<_> =
        jsonl_docs(std::io::Cursor::new(b"{\"text\": \"abcd\"}\n".to_vec()), "s", "src", 15).unwrap().collect();
    assert_eq!(docs, [Err(InputError::TooLarge { file: "src:1".into(), bytes: 16, limit: 15 })]);
    // No limit (the evaluation commands read with u64::MAX).
    let docs: Vec<_> =
        jsonl_docs(std::io::Cursor::new(b"{\"text\": \"abcd\"}\n".to_vec()), "s", "src", u64::MAX).unwrap().collect();
    assert_eq!(docs[0].as_ref().map(|d| d.text.as_str()), Ok("abcd"));
}

/// White space without end, failing when read past `left` bytes.
struct Spaces(u64);

impl std::io::Read for Spaces {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0 = self.0.checked_sub(buf.len() as u64).ok_or_else(|| std::io::Error::other("read too far"))?;
        buf.fill(b' ');
        Ok(buf.len())
    }
}

/// Issue 53, item 2: a source reads back as the file and line it was made of,
/// whatever the file's name: a single-document file whose name ends in `:DIGITS`
/// gets `:0`, and the JSON lines of a file named so keep their name whole.
#[test]
fn sources_read_back_unambiguously() {
    for path in ["docs/x:5", "a.jsonl:12", "c:/x", "notes.txt", "odd:", "x:0", "x:007"] {
        let single = single_source(path);
        assert_eq!(split_source(&single), (path, 0), "{path} as a file of one document ({single})");
        let line = format!("{path}:3");
        assert_eq!(split_source(&line), (path, 3), "{path}, line 3");
    }
    assert_eq!(single_source("notes.txt"), "notes.txt", "a plain name is kept as it is");
    let docs = parse_bytes("some words of a text", "txt", "x", "docs/x:5", 1 << 20).unwrap();
    assert_eq!(docs[0].as_ref().unwrap().source, "docs/x:5:0");
}

/// Regression: a stream with no format named was sniffed by
/// scanning all it had read again at every 8 KiB read (64 MiB of spaces: 157 s),
/// and without end. Each byte is looked at once, and no further than a document's
/// limit: then it is a text over the limit.
#[test]
fn sniffing_white_space_reads_each_byte_once_and_stops_at_the_limit() {
    let mut looked = 0;
    let (head, mut rest) = peek(Box::new(Spaces(1 << 30)), 1 << 20, |new| {
        looked += new.len();
        false
    })
    .unwrap();
    assert_eq!((head.len(), looked), (1 << 20, 1 << 20));
    let mut again = vec![0; 1 << 20];
    rest.read_exact(&mut again).unwrap();
    assert_eq!(again, head, "what was read comes first again");
    let err = stream_docs(Spaces(3 << 20), None, "stdin", "<stdin>", 1 << 20, None).err().unwrap();
    assert_eq!(err, InputError::OverLimit { file: "<stdin>".into(), limit: 1 << 20 });
    // Leading white space before a JSON line still says JSON lines.
    let docs = stream_docs(
        std::io::Cursor::new(format!("{}{{\"text\": \"a b\"}}\n", " \n".repeat(9000))),
        None,
        "s",
        "s",
        1 << 20,
        None,
    )
    .unwrap();
    assert_eq!(docs.map(|d| d.unwrap().text).collect::<Vec<_>>(), ["a b"]);
}

#[test]
fn jsonl_is_read_as_its_documents_are_taken() {
    // The whole file was read before its first document (a 110 MB JSONL held in
    // memory for the whole ingestion, past the memory bound).
    let docs: Vec<InputDoc> =
        jsonl_docs(Endless(0), "s", "src", 1 << 20).unwrap().take(3).map(Result::unwrap).collect();
    assert_eq!(docs.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(), ["d0", "d1", "d2"]);
    assert_eq!(docs[2].source, "src:3");
}

/// Fragments that steer random input toward what the parsers branch on.
pub(super) fn fragments() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        any::<Vec<u8>>(),
        "[a-zA-Z .!?\n]{0,40}".prop_map(String::into_bytes),
        prop::sample::select(vec![
            "{",
            "}",
            "[",
            "]",
            "\"",
            ":",
            ",",
            "\\u00e9",
            "\\ud800",
            "\"text\"",
            "\"html\"",
            "\"id\"",
            "null",
            "1e999",
            "<p>",
            "</p>",
            "<script>",
            "<!--",
            "-->",
            "&amp;",
            "&#xFFFFFF;",
            "<![CDATA[",
            "\n",
            "\r\n",
            "\u{feff}",
            "\0",
        ])
        .prop_map(|s: &str| s.as_bytes().to_vec()),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

/// JSONL as it was parsed from a whole file in memory, before it was streamed.
fn jsonl_whole(bytes: Vec<u8>, max: u64) -> Vec<Result<InputDoc, InputError>> {
    let (text, _) = decode(bytes);
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            let src = format!("src:{}", i + 1);
            if line.len() as u64 > max {
                return Err(InputError::TooLarge { file: src, bytes: line.len() as u64, limit: max });
            }
            from_json(line, &format!("s:{}", i + 1), &src, textorigin_core::config::HtmlMode::Main)
        })
        .collect()
}

proptest! {
    /// Streamed JSONL gives what parsing the whole file gave: the same documents,
    /// line numbers and errors (`\r\n`, blank lines, lines over the limit).
    #[test]
    fn streamed_jsonl_equals_parsing_the_whole_file(
        lines in prop::collection::vec(("[a-z \"{}:,\\\\\r\u{e9}\u{feff}]{0,30}", prop::sample::select(vec!["", "\"text\"", "{\"text\": \"a b\"}", "{\"id\": 7, \"html\": \"<p>x</p>\"}"]), prop::bool::ANY), 0..12),
        max in 1u64..64,
    ) {
        let mut text = String::new();
        for (noise, json, crlf) in lines {
            text.push_str(json);
            text.push_str(&noise);
            text.push_str(if crlf { "\r\n" } else { "\n" });
        }
        let docs = jsonl_docs(std::io::Cursor::new(text.clone().into_bytes()), "s", "src", max).unwrap();
        prop_assert_eq!(docs.collect::<Vec<_>>(), jsonl_whole(text.into_bytes(), max));
    }

    /// Fuzzing: any bytes in any input format give documents or clean
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
fn json_and_jsonl() {
    let docs = parse_bytes(
        &br#"{"id": 7, "text": "hello world", "url": "http://x", "date": "2020"}"#[..],
        "json",
        "f",
        "f.json",
        1000,
    )
    .unwrap();
    let d = docs[0].as_ref().unwrap();
    assert_eq!((d.name.as_str(), d.url.as_deref(), d.published_at.as_deref()), ("7", Some("http://x"), Some("2020")));
    let docs = parse_bytes(
        &b"{\"text\":\"a b\"}\n\n{bad\n{\"html\":\"<p>x</p>\"}\n{\"id\":\"q\"}\n"[..],
        "jsonl",
        "f",
        "f.jsonl",
        1000,
    )
    .unwrap();
    assert_eq!(docs.len(), 4);
    assert_eq!(docs[0].as_ref().unwrap().name, "f:1");
    assert!(matches!(&docs[1], Err(InputError::Json { file, .. }) if file == "f.jsonl:3"));
    assert_eq!(docs[2].as_ref().unwrap().text, "x");
    // Issue 35: a document failing after its id was read is named by it.
    let e = docs[3].as_ref().unwrap_err();
    assert!(matches!(e.inner(), InputError::NoText(_)));
    assert_eq!((e.id(), e.source()), (Some("\"q\""), "f.jsonl:5"));
    assert_eq!(e.to_string(), "f.jsonl:5: JSON object has neither `text` nor `html`");
    assert_eq!(docs[1].as_ref().unwrap_err().id(), None);
}

#[test]
fn text_binary_empty_and_invalid_utf8() {
    let png = parse_bytes(&b"\x89PNG\r\n\x1a\n\0\0"[..], "txt", "f", "f", 100).unwrap_err();
    assert_eq!(png.to_string(), "f: cannot read: a PNG image (not text)", "named by its magic number");
    assert!(matches!(parse_bytes(&b"\x00\x01\x02 binary"[..], "txt", "f", "f", 100), Err(InputError::Binary(_))));
    let docs = parse_bytes(&b"  \n "[..], "txt", "f", "f", 100).unwrap();
    assert!(matches!(docs[0], Err(InputError::Empty(_))));
    let docs = parse_bytes(&b"caf\xe9 ol\xe9 and much more text here"[..], "txt", "f", "f", 100).unwrap();
    let d = docs[0].as_ref().unwrap();
    assert_eq!(d.text, "caf\u{FFFD} ol\u{FFFD} and much more text here");
    assert_eq!(d.warnings.len(), 1);
}

/// Issue 54: a JSON document without an id is named from its URL, and keyed by the
/// name it had before (so that a file ingested by an earlier build is not stored again).
#[test]
fn a_json_document_without_an_id_is_named_from_its_url() {
    let docs = parse_bytes(
        &b"{\"text\": \"a b c\", \"url\": \"https://www.example.org/news/1#top\"}\n{\"text\": \"d e\"}\n{\"id\": 5, \"text\": \"f\", \"url\": \"http://x.example/\"}\n"[..],
        "jsonl",
        "feed",
        "feed.jsonl",
        1000,
    )
    .unwrap();
    let names: Vec<&str> = docs.iter().map(|d| d.as_ref().unwrap().name.as_str()).collect();
    assert_eq!(names, ["example.org/news/1", "feed:2", "5"]);
    let first = docs[0].as_ref().unwrap();
    assert_eq!(first.key_name.as_deref(), Some("feed:1"));
    let mut keys = crate::storage::store::DocumentKeys::new(b"feed.jsonl");
    let want = crate::storage::store::document_key(b"feed.jsonl", "feed:1", "a b c", first.url.as_deref(), None, 0);
    assert_eq!(keys.next(first), want, "keyed by the name it had before");
}
