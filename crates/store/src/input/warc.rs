//! Web archives: WARC 1.0/1.1 files as crawlers write them (`wget
//! --warc-file`, Heritrix, Common Crawl's `.warc.gz` with one gzip member per record,
//! decoded by [`super::compressed`]) and WET files (Common Crawl's extracted text, WARC
//! `conversion` records).
//!
//! Records are read one at a time, each at most the document limit (plus
//! [`HEADER_ALLOWANCE`] for its HTTP headers): a file of any size is never held. A
//! `response` record whose HTTP status is 2xx and whose body is HTML (read as the data
//! directory's `html` setting says) or plain text becomes a document; a `conversion`
//! record's text becomes one. The document is named from its `WARC-Target-URI`
//! ([`name_of_url`]), which is its URL, and dated by the page's own date (a `<meta>`
//! publication date) when it has a valid one, else by `WARC-Date`. Its source is
//! `FILE:N`, N the record's number in the file. Every other record (`warcinfo`,
//! `request`, `metadata`, `resource`, `revisit`, responses that are no page) is skipped
//! and counted (at most [`MAX_KINDS`] kinds named, the others counted as `other`): the
//! counts are a warning of the file's last document. A record whose `Content-Length`
//! is too short leaves the stream inside its body: the reader resynchronises at the
//! next line that starts with `WARC/` and counts a damaged record (the good records
//! after it are read). A record cut off by the end of the file ends the file with an
//! error naming the record (the documents before it are stored; nothing of it is).
//!
//! Bodies sent with `Transfer-Encoding: chunked` are de-chunked and those with
//! `Content-Encoding: gzip` or `deflate` decoded (a crawler such as wget keeps what the
//! server sent), as they are read and within the limits a compressed file is held to
//! ([`Limits::decoded_bytes`], [`Limits::ratio`]) and the document limit, never whole
//! before its size is checked. Text is read as UTF-8, or as Windows-1252 when the response names
//! ISO-8859-1 or Windows-1252; any other charset is read as UTF-8 with invalid bytes
//! replaced (a warning says so).

use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, BufReader, Read};

use super::{finish, html, Docs, InputDoc, InputError, Limits};

/// Bytes a record may hold beyond the document limit: its HTTP status line and headers.
pub const HEADER_ALLOWANCE: u64 = 64 << 10;
/// Largest WARC header block.
const MAX_WARC_HEADER: usize = 64 << 10;
/// Kinds of skipped records named in the counts; the rest are `other`.
pub const MAX_KINDS: usize = 16;
/// Longest kind named (a record's own `WARC-Type` or content type).
const MAX_KIND_CHARS: usize = 48;

/// Whether `head` (a stream's first bytes, decoded) starts a WARC file.
pub fn is_warc(head: &[u8]) -> bool {
    head.starts_with(b"WARC/")
}

/// A document's name from its URL: the URL without its scheme, `www.`, user
/// information and fragment (`https://www.example.org/a/b.html?x=1#top` is
/// `example.org/a/b.html?x=1`).
pub fn name_of_url(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.split('#').next().unwrap_or(rest);
    let (host, path) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
    let host = host.rsplit('@').next().unwrap_or(host);
    let host = host.strip_prefix("www.").unwrap_or(host).to_ascii_lowercase();
    format!("{host}{path}")
}

/// The documents of a WARC stream (see the module docs).
pub fn warc_docs(reader: Box<dyn Read + Send>, source: &str, limits: Limits) -> Docs {
    let mut warc = Warc {
        reader: BufReader::with_capacity(1 << 16, reader),
        source: source.to_string(),
        limits,
        number: 0,
        skipped: BTreeMap::new(),
        queue: VecDeque::new(),
        done: false,
        documents: 0,
    };
    Box::new(std::iter::from_fn(move || warc.next_item()))
}

struct Warc {
    reader: BufReader<Box<dyn Read + Send>>,
    source: String,
    limits: Limits,
    /// Records read.
    number: u64,
    /// Records skipped, by what they were.
    skipped: BTreeMap<String, u64>,
    /// What was read and not yet taken, in order.
    queue: VecDeque<Result<InputDoc, InputError>>,
    done: bool,
    documents: u64,
}

/// One record read.
enum Record {
    Doc(Box<InputDoc>),
    Skip(String),
    Failed(InputError),
}

impl Warc {
    fn next_item(&mut self) -> Option<Result<InputDoc, InputError>> {
        loop {
            // The last document waits for the next record: the file's last carries the
            // counts.
            let ready = self.done || self.queue.len() > 1 || self.queue.front().is_some_and(Result::is_err);
            if ready {
                return self.queue.pop_front();
            }
            match self.record() {
                Ok(Some(Record::Skip(what))) => {
                    let what: String = what.chars().take(MAX_KIND_CHARS).collect();
                    let known = self.skipped.contains_key(&what) || self.skipped.len() < MAX_KINDS;
                    *self.skipped.entry(if known { what } else { "other".into() }).or_default() += 1;
                }
                Ok(Some(Record::Failed(e))) => self.queue.push_back(Err(e)),
                Ok(Some(Record::Doc(doc))) => {
                    self.documents += 1;
                    self.queue.push_back(Ok(*doc));
                }
                Ok(None) => self.finish(None),
                // The stream cannot be followed past a broken record.
                Err(e) => self.finish(Some(e)),
            }
        }
    }

    /// Ends the file: the counts go to its last document (or are its error when it has
    /// none), then the error that ended it, if one did.
    fn finish(&mut self, error: Option<InputError>) {
        self.done = true;
        let skipped: u64 = self.skipped.values().sum();
        let kinds: Vec<String> = self.skipped.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let counts = format!("{skipped} skipped ({})", kinds.join(", "));
        let last = self.queue.iter_mut().rev().find_map(|d| d.as_mut().ok());
        match last {
            Some(doc) if skipped > 0 => doc.warnings.push(format!(
                "{}: {} records read, {} became documents, {counts}",
                self.source, self.number, self.documents
            )),
            None if skipped > 0 => self.queue.push_back(Err(InputError::Unreadable {
                file: self.source.clone(),
                reason: format!("a WARC file with no page or text record: {counts}"),
            })),
            _ => {}
        }
        self.queue.extend(error.map(Err));
    }

    /// The next record, None at the end of the stream.
    fn record(&mut self) -> Result<Option<Record>, InputError> {
        let Some(headers) = self.headers()? else { return Ok(None) };
        self.number += 1;
        let src = format!("{}:{}", self.source, self.number);
        let bad = |reason: String| InputError::Unreadable { file: src.clone(), reason };
        let length: u64 = headers
            .get("content-length")
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| bad("a WARC record without a valid Content-Length".into()))?;
        let limit = self.limits.doc_bytes.saturating_add(HEADER_ALLOWANCE);
        let kind = headers.get("warc-type").map_or("untyped", |t| t.trim()).to_ascii_lowercase();
        let wanted = kind == "response" || kind == "conversion";
        if !wanted || length > limit {
            let skipped = std::io::copy(&mut (&mut self.reader).take(length), &mut std::io::sink())
                .map_err(|e| bad(e.to_string()))?;
            if skipped < length {
                return Err(bad(format!("cut off: {skipped} of its {length} bytes")));
            }
            if wanted {
                return Ok(Some(Record::Failed(InputError::TooLarge {
                    file: src,
                    bytes: length,
                    limit: self.limits.doc_bytes,
                })));
            }
            return Ok(Some(Record::Skip(kind)));
        }
        let mut body = Vec::with_capacity(length as usize);
        (&mut self.reader).take(length).read_to_end(&mut body).map_err(|e| bad(e.to_string()))?;
        if (body.len() as u64) < length {
            return Err(bad(format!("cut off: {} of its {length} bytes", body.len())));
        }
        let url = headers.get("warc-target-uri").map(|u| u.trim().trim_matches(['<', '>']).to_string());
        let date = headers.get("warc-date").map(|d| d.trim().to_string());
        let page = if kind == "conversion" { Ok(Page::text(body)) } else { Page::of_response(body, self.limits) };
        let page = match page {
            Ok(p) => p,
            Err(Skip(what)) => return Ok(Some(Record::Skip(what))),
            Err(Over(reason)) => return Ok(Some(Record::Failed(InputError::Unreadable { file: src, reason }))),
        };
        Ok(Some(self.document(page, url, date, src)))
    }

    fn document(&self, page: Page, url: Option<String>, date: Option<String>, src: String) -> Record {
        let (text, mut warnings) = page.decode(&src);
        let (text, own_date) = if page.html {
            let x = html::extract(&text, self.limits.html);
            (x.text, x.published)
        } else {
            (text, None)
        };
        if text.len() as u64 > self.limits.doc_bytes {
            let e = InputError::TooLarge { file: src, bytes: text.len() as u64, limit: self.limits.doc_bytes };
            return Record::Failed(e);
        }
        let own_date = own_date.filter(|d| super::date::parse_published(d).is_ok());
        if page.charset_unread {
            warnings.push(format!("{src}: a charset other than UTF-8 or Windows-1252, read as UTF-8"));
        }
        let name = url.as_deref().map_or_else(|| src.clone(), name_of_url);
        match finish(name, src, text, url, own_date.or(date), warnings) {
            Ok(doc) => Record::Doc(Box::new(doc)),
            Err(e) => Record::Failed(e),
        }
    }

    /// A record's WARC headers (names lower-cased), None at the end of the stream.
    fn headers(&mut self) -> Result<Option<BTreeMap<String, String>>, InputError> {
        let next = self.number + 1;
        let bad = |reason: String| InputError::Unreadable { file: format!("{}:{next}", self.source), reason };
        let mut line = Vec::new();
        let mut read_line = |line: &mut Vec<u8>| {
            line.clear();
            (&mut self.reader).take(MAX_WARC_HEADER as u64).read_until(b'\n', line).map_err(|e| bad(e.to_string()))
        };
        // Blank lines end the record before. Anything else before a `WARC/` line is the
        // rest of a record whose Content-Length was too short: skipped to the next
        // record (a line read in parts starts only where the line before ended).
        let mut damaged = None;
        let mut at_line_start = true;
        loop {
            let n = read_line(&mut line)?;
            if n == 0 {
                break;
            }
            if at_line_start && line.starts_with(b"WARC/") {
                break;
            }
            if damaged.is_none() && !line.trim_ascii().is_empty() {
                damaged = Some(String::from_utf8_lossy(&line[..line.len().min(40)]).trim().to_string());
            }
            at_line_start = line.ends_with(b"\n");
        }
        if let Some(shown) = damaged {
            if self.number == 0 {
                return Err(bad(format!("not a WARC record: it starts {shown:?}")));
            }
            *self.skipped.entry("damaged record (its Content-Length too short)".into()).or_default() += 1;
        }
        if line.is_empty() || !line.starts_with(b"WARC/") {
            return Ok(None);
        }
        let mut headers = BTreeMap::new();
        let mut total = 0;
        loop {
            let n = read_line(&mut line)?;
            total += n;
            if n == 0 {
                return Err(bad("cut off in its WARC header".into()));
            }
            if total > MAX_WARC_HEADER {
                return Err(bad(format!("a WARC header over {MAX_WARC_HEADER} bytes")));
            }
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches(['\r', '\n']);
            if text.is_empty() {
                return Ok(Some(headers));
            }
            if let Some((k, v)) = text.split_once(':') {
                headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
            }
        }
    }
}

/// Why a record is no document.
enum NoPage {
    /// What it is, for the counts.
    Skip(String),
    /// Its body decodes past the limits: why, for its failure.
    Over(String),
}
use NoPage::{Over, Skip};

/// A page's body and how to read it.
struct Page {
    body: Vec<u8>,
    html: bool,
    latin1: bool,
    charset_unread: bool,
}

impl Page {
    fn text(body: Vec<u8>) -> Page {
        Page { body, html: false, latin1: false, charset_unread: false }
    }

    /// The page an HTTP response holds, or why it holds none.
    fn of_response(mut record: Vec<u8>, limits: Limits) -> Result<Page, NoPage> {
        let end = find(&record, b"\r\n\r\n").map(|i| (i, i + 4)).or_else(|| find(&record, b"\n\n").map(|i| (i, i + 2)));
        let Some((head_end, body_at)) = end else { return Err(Skip("response without HTTP headers".into())) };
        let head = String::from_utf8_lossy(&record[..head_end]);
        let mut lines = head.lines();
        let status = lines.next().unwrap_or_default();
        if !status.starts_with("HTTP/") {
            return Err(Skip("response that is not HTTP".into()));
        }
        let code = status.split_whitespace().nth(1).and_then(|c| c.parse::<u16>().ok()).unwrap_or(0);
        if !(200..300).contains(&code) {
            return Err(Skip(format!("response of status {code}")));
        }
        let header = |name: &str| {
            lines.clone().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_ascii_lowercase())
            })
        };
        let content_type = header("content-type").unwrap_or_default();
        let (chunked, encoding) = (header("transfer-encoding"), header("content-encoding"));
        record.drain(..body_at);
        let mut body = record;
        if chunked.is_some_and(|t| t.contains("chunked")) {
            body = dechunk(&body).ok_or_else(|| Skip("response with broken chunked encoding".into()))?;
        }
        match encoding.as_deref() {
            None | Some("" | "identity") => {}
            Some("gzip" | "x-gzip") => {
                body = inflate(flate2::read::MultiGzDecoder::new(&body[..]), body.len(), limits)?
            }
            Some("deflate") => body = inflate(flate2::read::ZlibDecoder::new(&body[..]), body.len(), limits)?,
            Some(other) => return Err(Skip(format!("response in {other} encoding"))),
        }
        let mime = content_type.split(';').next().unwrap_or_default().trim();
        let html = match mime {
            "text/html" | "application/xhtml+xml" => true,
            "text/plain" => false,
            "" => {
                let head = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_ascii_lowercase();
                if !(head.contains("<html") || head.contains("<!doctype html")) {
                    return Err(Skip("response of no content type".into()));
                }
                true
            }
            _ => return Err(Skip(format!("response of {mime}"))),
        };
        let charset =
            content_type.split(';').find_map(|p| p.trim().strip_prefix("charset=")).map(|c| c.trim_matches('"'));
        let latin1 = matches!(charset, Some("iso-8859-1" | "latin1" | "windows-1252" | "cp1252" | "us-ascii"));
        let charset_unread = charset.is_some_and(|c| !latin1 && c != "utf-8" && c != "utf8");
        Ok(Page { body, html, latin1, charset_unread })
    }

    /// The body as text, and warnings.
    fn decode(&self, src: &str) -> (String, Vec<String>) {
        if self.latin1 {
            let text = self
                .body
                .iter()
                .map(|&b| match b {
                    0x80..=0x9f => html5ever::data::C1_REPLACEMENTS[(b - 0x80) as usize].unwrap_or(char::from(b)),
                    b => char::from(b),
                })
                .collect();
            return (text, Vec::new());
        }
        let text = String::from_utf8_lossy(&self.body).into_owned();
        let replaced = text.matches('\u{FFFD}').count();
        let warnings = if replaced > 0 && !self.charset_unread {
            vec![format!("{src}: {replaced} invalid UTF-8 sequence(s) replaced by U+FFFD")]
        } else {
            Vec::new()
        };
        (text, warnings)
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The decoded body of `packed` compressed bytes read through `r`, stopped one byte past
/// the most it may decode to (see the module docs).
fn inflate(r: impl Read, packed: usize, limits: Limits) -> Result<Vec<u8>, NoPage> {
    let mut most = limits.doc_bytes.saturating_add(HEADER_ALLOWANCE);
    if limits.decoded_bytes > 0 {
        most = most.min(limits.decoded_bytes);
    }
    if limits.ratio > 0 {
        most = most.min(super::RATIO_FLOOR.saturating_add((packed as u64).saturating_mul(limits.ratio)));
    }
    let mut out = Vec::new();
    r.take(most.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|_| Skip("response with a broken compressed body".into()))?;
    if out.len() as u64 > most {
        return Err(Over(format!(
            "its compressed body ({packed} bytes) decodes to over {most} bytes: past the document limit (--max-doc-bytes), the decoded size (--max-decoded-bytes) or {} times its size (--max-ratio)",
            limits.ratio
        )));
    }
    Ok(out)
}

/// The body of a chunked transfer (RFC 9112 §7.1), None when it is malformed.
fn dechunk(mut b: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = find(b, b"\r\n")?;
        let size = std::str::from_utf8(&b[..eol]).ok()?.split(';').next()?.trim();
        let size = usize::from_str_radix(size, 16).ok()?;
        b = &b[eol + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(b.get(..size)?);
        b = b.get(size..)?.strip_prefix(b"\r\n").unwrap_or(&b[size..]);
    }
}

#[cfg(test)]
mod tests;
