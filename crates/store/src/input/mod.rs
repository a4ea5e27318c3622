//! Input formats: files into documents (name, text, url, published_at).
//!
//! - `.txt` and any unknown extension: UTF-8 text; invalid bytes are replaced by
//!   U+FFFD with a warning (the repaired text is what is stored and what spans refer to).
//! - `.html` / `.htm`: markup, scripts, styles and comments dropped, entities decoded,
//!   block elements separated by line breaks; the page's main content, or all its
//!   text, as [`Limits::html`] says ([`html`]). The extracted text is stored
//!   and spans refer to it.
//! - WARC and WET (`.warc`, `.wet`, or any stream starting `WARC/`): a page or text a
//!   record ([`warc`]); Parquet (a file starting `PAR1`): a row a document ([`parquet`]);
//!   other binary formats told by their magic number are refused, named ([`magic`]).
//! - `.json`: one object `{"id", "text" | "html", "url"?, "published_at"?}`;
//!   `.jsonl`: one such object per line (blank lines skipped). `date` is accepted for
//!   `published_at`. Every other field is kept as the document's `meta` (a JSON
//!   object's text, at most [`MAX_META_BYTES`]).
//! - `.gz` / `.zst` (or any name, told by the magic number): gzip or Zstandard, decoded
//!   as it is read, holding the format its name has under the compression's extension
//!   (`news.jsonl.gz`); with none, JSON lines when it starts with `{`, else text
//!   (the same rule as standard input, `-`). See [`stream_docs`].
//!
//! A document's name is its `id` (a string or a number), else the file name without
//! extension (for JSONL, `stem:LINE`); a JSON document's, a WARC record's and a
//! Parquet row's without an id is its URL when it has one ([`warc::name_of_url`]). Errors name the file (and line) and the reason;
//! one bad JSONL line does not stop the others.

use std::collections::HashMap;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub mod compressed;
pub mod date;
pub mod html;
mod json;
pub mod magic;
pub mod parquet;
pub mod warc;

use compressed::Compression;
use textorigin_core::config::HtmlMode;

pub use html::{extract, html_to_text, Extracted};
pub use json::from_json;

/// A document read from a file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
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
    /// For JSON input: every field beyond `id`, `text`, `html`, `url`, `published_at`
    /// and `date`, as a JSON object's text (keys sorted), at most [`MAX_META_BYTES`];
    /// None when there are none.
    pub meta: Option<String>,
    /// Its name is the `id` of a JSON object given as a number (written back as one by
    /// the outputs a pipeline pairs with its input).
    pub id_number: bool,
    /// Its date was the JSON field `date`, not `published_at` (the corpus output keeps
    /// the input's field name).
    pub date_field: bool,
    /// The name its admission key is made with, when that is not `name`: a JSON
    /// document without an `id` is named from its `url`, and keyed by the
    /// name it had before (`STEM:LINE`), so that a file ingested by an earlier build is
    /// not stored again.
    pub key_name: Option<String>,
}

/// Largest metadata a document keeps (its further JSON fields, as JSON text); a
/// document with more fails with [`InputError::MetaTooLarge`].
pub const MAX_META_BYTES: usize = 64 << 10;

/// How an input is read: how far (a document's bytes, and for compressed input what it
/// may decode to, in bytes and per compressed byte, so that a compression bomb stops at
/// a limit with an error for its file instead of filling memory or the store), and what
/// of an HTML page is its text (the data directory's `html` setting).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest document (a text file, a JSON object, a JSONL line), in bytes.
    pub doc_bytes: u64,
    /// Bytes a compressed file may decode to (0: no limit).
    pub decoded_bytes: u64,
    /// Decoded bytes per compressed byte read, beyond the first [`RATIO_FLOOR`] bytes
    /// (0: no limit).
    pub ratio: u64,
    /// What of an HTML page is its text ([`html::extract`]).
    pub html: HtmlMode,
    /// The column of a Parquet file that holds a row's text ([`parquet`]; `text`).
    pub text_column: &'static str,
    /// The column of a Parquet file that names a row ([`parquet`]; `id`).
    pub id_column: &'static str,
}

/// Default of [`Limits::decoded_bytes`]: 4 GiB.
pub const DEFAULT_MAX_DECODED: u64 = 4 << 30;
/// Default of [`Limits::ratio`]: text compresses 3-10 times (zstd -19 on news, web
/// pages, mail), heavily duplicated collections some 20-40 times; a bomb thousands of times.
pub const DEFAULT_MAX_RATIO: u64 = 100;
/// Decoded bytes that any compressed input may reach whatever its ratio (a small file
/// of repetitive text).
pub const RATIO_FLOOR: u64 = 1 << 20;

impl From<u64> for Limits {
    /// Documents of at most `doc_bytes`, compressed input within the defaults, HTML
    /// read for its main content (a new data directory's setting).
    fn from(doc_bytes: u64) -> Limits {
        Limits {
            doc_bytes,
            decoded_bytes: DEFAULT_MAX_DECODED,
            ratio: DEFAULT_MAX_RATIO,
            html: HtmlMode::Main,
            text_column: "text",
            id_column: "id",
        }
    }
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
    #[error("{file}: over the limit of {limit} bytes (read no further)")]
    OverLimit { file: String, limit: u64 },
    #[error("{file}: its metadata (the fields beyond id, text, html, url, published_at and date) is {bytes} bytes of JSON, over the limit of {limit} bytes")]
    MetaTooLarge { file: String, bytes: usize, limit: usize },
    /// A JSON document that failed after its `id` was read: `id` is its JSON text (a
    /// string's quotes kept, a number's literal), so that its outputs name it as the
    /// input did.
    #[error("{error}")]
    Identified { id: String, error: Box<InputError> },
}

impl InputError {
    /// Where the failure is: the file, with `:LINE` for a JSON line.
    pub fn source(&self) -> &str {
        match self {
            InputError::Unreadable { file, .. }
            | InputError::Json { file, .. }
            | InputError::TooLarge { file, .. }
            | InputError::OverLimit { file, .. }
            | InputError::MetaTooLarge { file, .. } => file,
            InputError::Binary(file) | InputError::Empty(file) | InputError::NoText(file) => file,
            InputError::Identified { error, .. } => error.source(),
        }
    }

    /// The failed document's `id` as JSON text, when it was read.
    pub fn id(&self) -> Option<&str> {
        match self {
            InputError::Identified { id, .. } => Some(id),
            _ => None,
        }
    }

    /// The failure itself (without the id around it).
    pub fn inner(&self) -> &InputError {
        match self {
            InputError::Identified { error, .. } => error.inner(),
            e => e,
        }
    }
}

/// A document's source split into its file and its line (0: a file of one document).
/// A JSON lines file's documents are `FILE:LINE`; a file of one document is its path,
/// unless that path itself ends in `:DIGITS`, when it is stored as `PATH:0`
/// ([`single_source`]) so that it is never taken for a line of another file (
/// a file named `docs/x:5` was read as line 5 of `docs/x`).
pub fn split_source(source: &str) -> (&str, u64) {
    match source.rsplit_once(':') {
        Some((path, line)) if !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()) => {
            (path, line.parse().unwrap_or(0))
        }
        _ => (source, 0),
    }
}

/// The source of the one document of the file `path` names: `path`, or `path:0` when
/// `path` would read as a line reference ([`split_source`]).
pub fn single_source(path: &str) -> String {
    if split_source(path).0.len() == path.len() {
        path.to_string()
    } else {
        format!("{path}:0")
    }
}

/// How deep [`expand_paths`] walks a directory: deeper directories are reported, not
/// walked (a real tree is far shallower; the walk is recursive).
pub const MAX_WALK_DEPTH: usize = 128;

/// Lists the files under `paths` in processing order: files as given, directories
/// walked recursively in sorted name order (hidden entries skipped). Each directory is
/// walked once, told by its device and inode: a symbolic link back to a directory
/// walked already (a loop, `ln -s . docs/x`) or to one walked elsewhere is reported and
/// skipped, so that the walk is bounded by the directories there are, not the paths
/// to them (two loops expanded 2^40 paths); so is a directory more than
/// [`MAX_WALK_DEPTH`] levels down.
pub fn expand_paths(paths: &[PathBuf]) -> Vec<Result<PathBuf, InputError>> {
    use std::os::unix::fs::MetadataExt;
    struct Walk {
        out: Vec<Result<PathBuf, InputError>>,
        /// Device and inode of every directory walked, with the path it was walked as.
        seen: HashMap<(u64, u64), PathBuf>,
    }
    impl Walk {
        fn dir(&mut self, dir: &Path, depth: usize) {
            let unreadable = |reason: String| InputError::Unreadable { file: dir.display().to_string(), reason };
            let id = match std::fs::metadata(dir) {
                Ok(m) => (m.dev(), m.ino()),
                Err(e) => return self.out.push(Err(unreadable(e.to_string()))),
            };
            if let Some(first) = self.seen.get(&id) {
                let reason =
                    format!("the directory walked already as {} (a symbolic link loop?): skipped", first.display());
                return self.out.push(Err(unreadable(reason)));
            }
            if depth > MAX_WALK_DEPTH {
                let reason = format!("over {MAX_WALK_DEPTH} directories deep: not walked");
                return self.out.push(Err(unreadable(reason)));
            }
            self.seen.insert(id, dir.to_path_buf());
            let entries = match std::fs::read_dir(dir) {
                Ok(e) => e,
                Err(e) => return self.out.push(Err(unreadable(e.to_string()))),
            };
            let mut names: Vec<PathBuf> = entries
                .filter_map(|e| e.ok())
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .map(|e| e.path())
                .collect();
            names.sort();
            for p in names {
                if p.is_dir() {
                    self.dir(&p, depth + 1);
                } else {
                    self.out.push(Ok(p));
                }
            }
        }
    }
    let mut walk = Walk { out: Vec::new(), seen: HashMap::new() };
    for p in paths {
        if is_stdin(p) {
            walk.out.push(Ok(p.clone()));
        } else if p.is_dir() {
            walk.dir(p, 0);
        } else if p.exists() {
            walk.out.push(Ok(p.clone()));
        } else {
            walk.out.push(Err(InputError::Unreadable {
                file: p.display().to_string(),
                reason: "no such file or directory".into(),
            }));
        }
    }
    walk.out
}

/// Reads one file into its documents (several for JSONL). The outer error is for the
/// whole file; inner ones for single documents.
pub fn read_file(path: &Path, limits: impl Into<Limits>) -> Result<Vec<Result<InputDoc, InputError>>, InputError> {
    Ok(read_docs(path, limits)?.collect())
}

/// Documents as they are taken.
pub type Docs = Box<dyn Iterator<Item = Result<InputDoc, InputError>> + Send>;

/// [`read_file`] as documents are taken: a JSONL file is read a line at a time
/// ([`jsonl_docs`]); other formats are one document, read whole (up to `max_bytes`); a
/// gzip or Zstandard file is decoded as it is read (`-`: standard input, see
/// [`stream_docs`]).
pub fn read_docs(path: &Path, limits: impl Into<Limits>) -> Result<Docs, InputError> {
    read_docs_counting(path, limits, None)
}

/// [`read_docs`], adding the bytes read from the file (compressed ones for a compressed
/// file, as its size counts them) to `read` as they are read: what a progress bar shows.
pub fn read_docs_counting(
    path: &Path,
    limits: impl Into<Limits>,
    read: Option<Arc<AtomicU64>>,
) -> Result<Docs, InputError> {
    if is_stdin(path) {
        return stream_docs(Counting(std::io::stdin(), read), None, "stdin", "<stdin>", limits, None);
    }
    let source = path.display().to_string();
    let unreadable = |e: std::io::Error| InputError::Unreadable { file: source.clone(), reason: e.to_string() };
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| source.clone());
    file_docs(file, &ext, &stem, &source, limits.into(), read)
}

/// The documents of an open file named `stem.ext`: a Parquet file (told by its magic
/// number) is read as one ([`parquet`]: it needs the file, its metadata is at its end),
/// any other through [`stream_docs`]. Adds the bytes read to `read`, when given.
pub fn file_docs(
    mut file: std::fs::File,
    ext: &str,
    stem: &str,
    source: &str,
    limits: Limits,
    read: Option<Arc<AtomicU64>>,
) -> Result<Docs, InputError> {
    use std::io::{Seek, SeekFrom};
    let unreadable = |e: std::io::Error| InputError::Unreadable { file: source.to_string(), reason: e.to_string() };
    let len = file.metadata().map_err(unreadable)?.len();
    let mut head = [0u8; 4];
    let n = file.read(&mut head).map_err(unreadable)?;
    file.seek(SeekFrom::Start(0)).map_err(unreadable)?;
    if magic::is_parquet(&head[..n]) {
        return parquet::parquet_docs(file, stem, source, limits, len, read);
    }
    stream_docs(Counting(file, read), Some(ext), stem, source, limits, Some(len))
}

/// A reader that adds the bytes it reads to a counter (when it has one).
struct Counting<R>(R, Option<Arc<AtomicU64>>);

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.read(buf)?;
        if let Some(c) = &self.1 {
            c.fetch_add(n as u64, Ordering::Relaxed);
        }
        Ok(n)
    }
}

/// Whether a path argument means standard input (`-`).
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// The documents of a stream of bytes named `stem.ext` (`len` bytes long, if known).
/// A gzip or Zstandard stream (told by its magic number) is decoded as it is read, its
/// format then named by the extension under the compression's (`news.jsonl.gz`: JSON
/// lines); an extension `.gz`/`.zst` on a stream that is not one is an error. With no
/// format named (`ext` None, standard input, or `corpus.gz`): JSON lines when the first
/// byte that is not white space is `{`, else one text document.
pub fn stream_docs<R: Read + Send + 'static>(
    reader: R,
    ext: Option<&str>,
    stem: &str,
    source: &str,
    limits: impl Into<Limits>,
    len: Option<u64>,
) -> Result<Docs, InputError> {
    let limits = limits.into();
    let max_bytes = limits.doc_bytes;
    let unreadable = |e: std::io::Error| InputError::Unreadable { file: source.to_string(), reason: e.to_string() };
    let mut seen = 0;
    let (head, reader) = peek(Box::new(reader), 4, |new| {
        seen += new.len();
        seen >= 4
    })
    .map_err(unreadable)?;
    let named = ext.and_then(Compression::named);
    let (reader, ext, stem, len) = match (Compression::of(&head), named) {
        (Some(c), _) => {
            let (ext, stem) = match named {
                // The name under the compression's extension: `a.jsonl` of `a.jsonl.gz`.
                Some(_) => {
                    let inner = Path::new(stem);
                    let ext = inner.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
                    let stem = inner.file_stem().map_or_else(|| stem.to_string(), |s| s.to_string_lossy().into_owned());
                    (ext, stem)
                }
                None => (ext.map(str::to_string), stem.to_string()),
            };
            (c.decoder(reader, limits), ext, stem, None)
        }
        (None, Some(c)) => {
            let ext = ext.unwrap_or_default();
            return Err(unreadable(std::io::Error::other(format!("named .{ext} but not {} data", c.name()))));
        }
        (None, None) => (reader, ext.map(str::to_string), stem.to_string(), len),
    };
    // What the bytes are, by their magic number, whatever the name says.
    let (head, reader) = peek(reader, 8, |_| false).map_err(unreadable)?;
    if warc::is_warc(&head) || ext.as_deref().is_some_and(|e| e == "warc" || e == "wet") {
        return Ok(warc::warc_docs(reader, source, limits));
    }
    if let Some(refused) = magic::refused(&head) {
        return Err(unreadable(std::io::Error::other(refused)));
    }
    let (reader, ext) = match ext {
        Some(ext) => (reader, ext),
        None => {
            // Past the document limit of white space it is no document of either kind.
            let (head, reader) =
                peek(reader, max_bytes.saturating_add(1), |new| new.iter().any(|b| !b.is_ascii_whitespace()))
                    .map_err(unreadable)?;
            let jsonl = head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
            (reader, if jsonl { "jsonl" } else { "txt" }.to_string())
        }
    };
    if ext == "jsonl" || ext == "ndjson" {
        return jsonl_docs(reader, &stem, source, limits);
    }
    let too_large = |bytes| InputError::TooLarge { file: source.to_string(), bytes, limit: max_bytes };
    if let Some(len) = len.filter(|&l| l > max_bytes) {
        return Err(too_large(len));
    }
    let mut bytes = Vec::new();
    reader.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes).map_err(unreadable)?;
    if bytes.len() as u64 > max_bytes {
        // Not read further just to say how much more there is (a compressed file can
        // decode to terabytes).
        return Err(InputError::OverLimit { file: source.to_string(), limit: max_bytes });
    }
    Ok(Box::new(parse_plain(bytes, &ext, &stem, source, limits)?.into_iter()))
}

/// Reads from `reader` until `enough` holds for the bytes just read (it sees each byte
/// once: the reads are linear in the bytes, whatever the head's length) or `limit`
/// bytes were read or the stream ends; returns what was read and the whole stream again.
fn peek(
    mut reader: Box<dyn Read + Send>,
    limit: u64,
    mut enough: impl FnMut(&[u8]) -> bool,
) -> std::io::Result<(Vec<u8>, Box<dyn Read + Send>)> {
    let mut head = Vec::new();
    let mut buf = [0u8; 8192];
    while (head.len() as u64) < limit {
        let n = match reader.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
        if enough(&buf[..n]) {
            break;
        }
    }
    let again = std::io::Cursor::new(head.clone()).chain(reader);
    Ok((head, Box::new(again)))
}

/// The documents of a JSONL stream, read a line at a time as they are taken: a file of
/// any size is never held whole (`ingest`'s memory bound). Its first 8 KiB decide
/// whether it is text; a line over `max_bytes` is skipped without being held (an error
/// naming it); a read error ends the stream with an error.
pub fn jsonl_docs<R: Read + Send + 'static>(
    mut reader: R,
    stem: &str,
    source: &str,
    limits: impl Into<Limits>,
) -> Result<Docs, InputError> {
    let limits = limits.into();
    let max_bytes = limits.doc_bytes;
    let mut head = Vec::with_capacity(8192);
    (&mut reader)
        .take(8192)
        .read_to_end(&mut head)
        .map_err(|e| InputError::Unreadable { file: source.to_string(), reason: e.to_string() })?;
    if looks_binary(&head) {
        return Err(InputError::Binary(source.to_string()));
    }
    let mut lines = std::io::BufReader::with_capacity(1 << 16, std::io::Cursor::new(head).chain(reader));
    let (stem, source) = (stem.to_string(), source.to_string());
    let (mut number, mut done, mut line) = (0usize, false, Vec::new());
    Ok(Box::new(std::iter::from_fn(move || {
        while !done {
            number += 1;
            let src = format!("{source}:{number}");
            line.clear();
            match read_line(&mut lines, max_bytes, &mut line) {
                Ok(None) => done = true,
                Ok(Some(len)) if len > max_bytes => {
                    return Some(Err(InputError::TooLarge { file: src, bytes: len, limit: max_bytes }))
                }
                Ok(Some(_)) => {
                    let text = String::from_utf8_lossy(&line);
                    if !text.trim().is_empty() {
                        let replaced = line.utf8_chunks().filter(|c| !c.invalid().is_empty()).count();
                        return Some(from_json(&text, &format!("{stem}:{number}"), &src, limits.html).map(
                            |mut doc| {
                                if replaced > 0 {
                                    doc.warnings.push(format!(
                                        "{src}: {replaced} invalid UTF-8 sequence(s) replaced by U+FFFD"
                                    ));
                                }
                                doc
                            },
                        ));
                    }
                }
                Err(e) => {
                    done = true;
                    return Some(Err(InputError::Unreadable { file: src, reason: e.to_string() }));
                }
            }
        }
        None
    })))
}

/// Reads one line into `out` without its `\n` or `\r\n` (as `str::lines` splits), and
/// holds at most `max + 2` bytes of it; returns the line's length, or None at the end
/// of the stream.
fn read_line(r: &mut impl BufRead, max: u64, out: &mut Vec<u8>) -> std::io::Result<Option<u64>> {
    let (mut len, mut any, mut ended, mut last) = (0u64, false, false, 0u8);
    while !ended {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        any = true;
        let (chunk, found) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        let room = usize::try_from(max.saturating_add(2).saturating_sub(len)).unwrap_or(usize::MAX);
        out.extend_from_slice(&chunk[..chunk.len().min(room)]);
        last = chunk.last().copied().unwrap_or(last);
        len += chunk.len() as u64;
        let used = chunk.len() + usize::from(found);
        r.consume(used);
        ended = found;
    }
    if !any {
        return Ok(None);
    }
    if ended && len > 0 && last == b'\r' {
        len -= 1;
        if out.len() as u64 > len {
            out.truncate(len as usize);
        }
    }
    Ok(Some(len))
}

/// Parses file content of a given extension (see the module docs); compressed content
/// is decoded first ([`stream_docs`]).
pub fn parse_bytes(
    bytes: impl Into<Vec<u8>>,
    ext: &str,
    stem: &str,
    source: &str,
    limits: impl Into<Limits>,
) -> Result<Vec<Result<InputDoc, InputError>>, InputError> {
    let (bytes, limits) = (bytes.into(), limits.into());
    Ok(stream_docs(std::io::Cursor::new(bytes), Some(ext), stem, source, limits, None)?.collect())
}

fn parse_plain(
    bytes: Vec<u8>,
    ext: &str,
    stem: &str,
    source: &str,
    limits: Limits,
) -> Result<Vec<Result<InputDoc, InputError>>, InputError> {
    if looks_binary(&bytes) {
        return Err(InputError::Binary(source.to_string()));
    }
    if ext == "jsonl" || ext == "ndjson" {
        return Ok(jsonl_docs(std::io::Cursor::new(bytes), stem, source, limits)?.collect());
    }
    let source = &single_source(source);
    // The bytes become the text without a copy when they are UTF-8 (a large file must
    // not be held twice).
    match ext {
        "json" => {
            let (text, _) = decode(bytes);
            Ok(vec![from_json(&text, stem, source, limits.html)])
        }
        _ => {
            let (text, replaced) = decode(bytes);
            let mut warnings = Vec::new();
            if replaced > 0 {
                warnings.push(format!("{source}: {replaced} invalid UTF-8 sequence(s) replaced by U+FFFD"));
            }
            let text = if ext == "html" || ext == "htm" { html_to_text(&text, limits.html) } else { text };
            Ok(vec![finish(stem.to_string(), source.to_string(), text, None, None, warnings)])
        }
    }
}

/// A document's further fields as its metadata: none when there are none, else their
/// JSON text, at most [`MAX_META_BYTES`] (else the document fails, naming `source`).
fn meta_text(fields: serde_json::Map<String, serde_json::Value>, source: &str) -> Result<Option<String>, InputError> {
    if fields.is_empty() {
        return Ok(None);
    }
    let text = serde_json::Value::Object(fields).to_string();
    if text.len() > MAX_META_BYTES {
        return Err(InputError::MetaTooLarge { file: source.to_string(), bytes: text.len(), limit: MAX_META_BYTES });
    }
    Ok(Some(text))
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
    Ok(InputDoc { name, source, text, url, published_at, warnings, ..InputDoc::default() })
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

#[cfg(test)]
mod tests;
