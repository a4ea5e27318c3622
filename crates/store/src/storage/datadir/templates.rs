//! A document's site template lines, decided as it is analysed (the labels
//! themselves: [`textorigin_core::engine::template`], the records:
//! [`crate::storage::store::templates`]).
//!
//! Streaming: each distinct line of a page adds the page to its count for the site; a
//! line whose count reaches the threshold (`template_pages`) is template on the page
//! that brings it there and on every later page holding it, and the pages before it
//! (kept in the count until then) get it in their records in the same batch. So once
//! stored, every page's template lines are those its site holds on at least
//! `template_pages` pages (the property test of `template_tests.rs` checks it against a count
//! of every site's lines).
//!
//! What is recomputed for those earlier pages: their template lines, and so what every
//! view shows of them (old%, blocks, the dominant origin, quotations). What is not:
//! their sketches and the sentences they indexed, which are the derived indexes'
//! (replayed in sequence order from what each document was given when analysed), and
//! the table's entries for their shingles. A template line was indexed by at most
//! `template_pages - 1` pages of its site; the next page finds those as quotations only
//! where its own text is no template (it searches no template sentence). Near-duplicate
//! sketches keep every token: duplicates are found whatever the templates.
//!
//! Only lines that may be furniture are counted (at most
//! [`template::FURNITURE_TOKENS`] tokens), and a page's lines are its furniture only
//! where they cover at most half of it ([`template::furniture`]).

use std::collections::{BTreeMap, HashMap};

use super::Result;
use crate::storage::store::{DocTemplates, Store, TemplateWrite, Via};
use textorigin_core::config::{Config, SubmittedSites, Templates};
use textorigin_core::engine::template::{self, Line, TemplateRun};
use textorigin_core::text::Token;

/// The site of a document (a hash of its name), when its template lines are labelled
/// by `cfg`: the metadata field the operator chose (`cfg.site_field`, `site` unless
/// told; the host of the URL it holds, or its text), else its URL's host, else the folder of an
/// HTML file read by `ingest`, Python or `cluster submit` (the spool's folder is no
/// site); without one, the one site of every such document under `templates = all`,
/// else none. The fields of a document submitted through the spool or over HTTP name
/// no site unless `cfg.submitted_sites` trusts them: a submitter who could name the
/// site of the pages they send could make a copied line another site's furniture.
pub fn site_of(cfg: &Config, url: Option<&str>, meta: Option<&str>, source: &str, via: Option<Via>) -> Option<u64> {
    if cfg.templates == Templates::Off {
        return None;
    }
    let submitted = matches!(via, Some(Via::Spool | Via::Http));
    let (url, meta) =
        if submitted && cfg.submitted_sites == SubmittedSites::Ignore { (None, None) } else { (url, meta) };
    let named = meta
        .and_then(|m| serde_json::from_str::<serde_json::Value>(m).ok())
        .and_then(|v| v.get(&cfg.site_field).and_then(|s| s.as_str()).map(|s| s.trim().to_string()))
        .filter(|s| !s.is_empty())
        .map(|s| host(&s).map_or_else(|| format!("site {s}"), |h| format!("host {h}")))
        .or_else(|| url.and_then(host).map(|h| format!("host {h}")))
        .or_else(|| html_folder(source, via).map(|f| format!("folder {f}")));
    match named {
        Some(name) => Some(xxhash_rust::xxh3::xxh3_64(name.as_bytes())),
        None => (cfg.templates == Templates::All).then_some(0),
    }
}

/// A URL's host, lower-cased, without user or port (None: no `scheme://`).
fn host(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?;
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next()?,
        None => host.split(':').next()?,
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// The folder of an HTML file a document was read from by `ingest`, Python or
/// `cluster submit` (which reads files as `ingest` does).
fn html_folder(source: &str, via: Option<Via>) -> Option<&str> {
    if !matches!(via, Some(Via::Ingest | Via::Python | Via::Cluster)) {
        return None;
    }
    let lower = source.to_ascii_lowercase();
    if !(lower.ends_with(".html") || lower.ends_with(".htm") || lower.ends_with(".xhtml")) {
        return None;
    }
    Some(source.rsplit_once('/').map_or("", |(dir, _)| dir))
}

/// Decides document `seq`'s template lines (of `lines` that may be furniture,
/// [`template::may_be_furniture`], over `tokens` of a text of `text_len` bytes) on
/// `site` with `cfg.template_pages`, reading the counts in `store`: its runs where they
/// are its furniture ([`template::furniture`]: what its searches and index leave out),
/// and what its batch writes (the counts, its record of them, and those of earlier
/// pages that get a line now; a reader's view applies the rule again to a whole
/// record).
pub(super) fn decide(
    store: &Store,
    cfg: &Config,
    (seq, site): (u64, u64),
    (lines, tokens, text_len): (&[Line], &[Token], u32),
) -> Result<(Vec<TemplateRun>, TemplateWrite)> {
    let threshold = cfg.template_pages;
    let lines: Vec<&Line> = lines.iter().filter(|l| template::may_be_furniture(l)).collect();
    // The distinct lines, each with its count read in one batch.
    let mut index: HashMap<u64, usize> = HashMap::with_capacity(lines.len());
    let mut hashes = Vec::with_capacity(lines.len());
    for line in &lines {
        index.entry(line.hash).or_insert_with(|| {
            hashes.push(line.hash);
            hashes.len() - 1
        });
    }
    let mut counts = store.line_counts(site, &hashes)?;
    // Earlier pages and the lines they get now.
    let mut earlier: BTreeMap<u64, Vec<TemplateRun>> = BTreeMap::new();
    for count in &mut counts {
        count.pages = count.pages.saturating_add(1);
        if count.pages >= threshold {
            for (page, run) in std::mem::take(&mut count.holders) {
                earlier.entry(page).or_default().push(TemplateRun { since: seq, ..run });
            }
        }
    }
    let mut runs = Vec::new();
    for line in lines {
        let count = &mut counts[index[&line.hash]];
        let run = TemplateRun::of(line, tokens, text_len, seq);
        if count.pages >= threshold {
            runs.push(run);
        } else {
            count.holders.push((seq, run));
        }
    }
    let mut write = TemplateWrite {
        by: seq,
        counts: hashes.into_iter().zip(counts).map(|(h, c)| (site, h, c)).collect(),
        docs: Vec::new(),
    };
    if !runs.is_empty() {
        write.docs.push((seq, DocTemplates { site, runs: runs.clone() }));
    }
    // Each earlier page gets a record of what this page decides on it (not its whole
    // record again: [`crate::storage::store::templates`]).
    for (page, mut more) in earlier {
        more.sort_by_key(|r| r.span.start_token);
        write.docs.push((page, DocTemplates { site, runs: more }));
    }
    // Its own lines where they are its furniture: what its searches and index leave
    // out (replay takes the same of its record's own, `Store::own_templates`).
    Ok((template::furniture(&runs, tokens.len() as u32, cfg.html).to_vec(), write))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page whose lines reach the threshold one at a time, each brought there by a
    /// later page: each decision writes the one line it gives the page, so the template
    /// records written grow with the lines (writing the page's whole record again at
    /// each decision would grow with their square), and the page ends with every line.
    #[test]
    fn a_page_given_lines_one_at_a_time_is_written_a_line_at_a_time() {
        use textorigin_core::rabin::Rabin;
        use textorigin_core::text::tokenize;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let cfg = Config { template_pages: 2, ..Config::default() };
        let rabin = Rabin::new(8);
        let line = |i: usize| format!("line {i} of the menu");
        let m = 200;
        let texts: Vec<String> =
            std::iter::once((0..m).map(line).collect::<Vec<_>>().join("\n")).chain((0..m).map(line)).collect();
        let mut runs_written = 0;
        for (i, text) in texts.iter().enumerate() {
            let mut toks = Vec::new();
            tokenize(text, &rabin, &mut toks);
            let lines = textorigin_core::engine::template::lines(text, &toks);
            let (_, write) = decide(&store, &cfg, (i as u64 + 1, 7), (&lines, &toks, text.len() as u32)).unwrap();
            runs_written += write.docs.iter().filter(|(page, _)| *page == 1).map(|(_, d)| d.runs.len()).sum::<usize>();
            let mut b = rocksdb::WriteBatch::default();
            store.add_templates(&mut b, &write);
            store.write(b, false).unwrap();
        }
        assert_eq!(runs_written, m);
        let first = store.doc_templates(1).unwrap().unwrap();
        assert_eq!(first.runs.len(), m);
        assert!(first.runs.windows(2).all(|w| w[0].span.start_token < w[1].span.start_token));
        assert_eq!(first.runs.iter().map(|r| r.since).collect::<Vec<_>>(), (2..m as u64 + 2).collect::<Vec<_>>());
    }

    #[test]
    fn a_site_is_a_site_field_a_host_or_the_folder_of_html_files() {
        let cfg = Config::default();
        let h = |s: &str| Some(xxhash_rust::xxh3::xxh3_64(s.as_bytes()));
        let ingest = Some(Via::Ingest);
        assert_eq!(
            site_of(&cfg, Some("https://Docs.Python.org:443/3/x.html"), None, "a.jsonl:1", ingest),
            h("host docs.python.org")
        );
        assert_eq!(site_of(&cfg, Some("http://u@[::1]:8080/"), None, "a.jsonl:1", ingest), h("host ::1"));
        assert_eq!(site_of(&cfg, Some("https://a.org/"), Some(r#"{"site": "news"}"#), "x", ingest), h("site news"));
        assert_eq!(site_of(&cfg, None, None, "site/library/os.html", ingest), h("folder site/library"));
        // No site: texts, the spool's HTML files, JSON lines without a URL.
        assert_eq!(site_of(&cfg, None, None, "site/library/os.txt", ingest), None);
        assert_eq!(site_of(&cfg, None, None, "os.html", Some(Via::Spool)), None);
        assert_eq!(site_of(&cfg, Some("not a url"), Some("{}"), "a.jsonl:3", ingest), None);
        let all = Config { templates: Templates::All, ..Config::default() };
        assert_eq!(site_of(&all, None, None, "a.jsonl:3", ingest), Some(0));
        let off = Config { templates: Templates::Off, ..Config::default() };
        assert_eq!(site_of(&off, Some("https://a.org/"), None, "x", ingest), None);
    }

    #[test]
    fn the_operator_names_the_field_that_names_a_site() {
        let h = |s: &str| Some(xxhash_rust::xxh3::xxh3_64(s.as_bytes()));
        let ingest = Some(Via::Ingest);
        let by = Config { site_field: "publisher".into(), ..Config::default() };
        let meta = Some(r#"{"site": "copier", "publisher": " Daily News "}"#);
        assert_eq!(site_of(&by, Some("https://a.org/"), meta, "x", ingest), h("site Daily News"));
        // Not the default's field any more; without the chosen one, the URL's host.
        assert_eq!(site_of(&by, Some("https://a.org/"), Some(r#"{"site": "copier"}"#), "x", ingest), h("host a.org"));
        assert_eq!(site_of(&by, None, Some(r#"{"publisher": ""}"#), "a.jsonl:1", ingest), None);
        // A field holding a URL names its host, as the URL would.
        let src = Config { site_field: "source_url".into(), ..Config::default() };
        let meta = Some(r#"{"source_url": "https://News.example.org/2020/x.html"}"#);
        assert_eq!(site_of(&src, None, meta, "a.jsonl:1", ingest), h("host news.example.org"));
        // A submitted document's fields stay unheard unless the operator trusts them.
        assert_eq!(site_of(&by, None, Some(r#"{"publisher": "x"}"#), "spool:x.jsonl", Some(Via::Spool)), None);
    }

    #[test]
    fn a_submitted_document_names_its_site_only_where_the_operator_trusts_it() {
        let h = |s: &str| Some(xxhash_rust::xxh3::xxh3_64(s.as_bytes()));
        let site = Some(r#"{"site": "news"}"#);
        let url = Some("https://a.org/x");
        let ignore = Config::default();
        let trust = Config { submitted_sites: SubmittedSites::Trust, ..Config::default() };
        for via in [Via::Spool, Via::Http] {
            assert_eq!(site_of(&ignore, url, site, "spool:x.jsonl", Some(via)), None, "{via:?}");
            assert_eq!(site_of(&ignore, url, None, "spool:x.jsonl", Some(via)), None, "{via:?}");
            assert_eq!(site_of(&trust, url, site, "spool:x.jsonl", Some(via)), h("site news"), "{via:?}");
            assert_eq!(site_of(&trust, url, None, "spool:x.jsonl", Some(via)), h("host a.org"), "{via:?}");
        }
        // The operator's own runs, and documents stored before `via` was recorded.
        for via in [Some(Via::Ingest), Some(Via::Python), Some(Via::Cluster), None] {
            assert_eq!(site_of(&ignore, url, site, "x.jsonl:1", via), h("site news"), "{via:?}");
        }
        // Under `templates = all` an untrusted document is of the one site of those without.
        let all = Config { templates: Templates::All, ..Config::default() };
        assert_eq!(site_of(&all, url, site, "spool:x.jsonl", Some(Via::Http)), Some(0));
    }
}
