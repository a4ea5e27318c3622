//! Site templates' records ([`textorigin_core::engine::template`]), in
//! `meta`:
//!
//! - `tpl/l/` + site (u64 BE) + line hash (u64 BE) → [`LineCount`]: the pages of the
//!   site holding the line, and where they hold it while fewer than the threshold (so
//!   that the page that brings the line to it can label it on them too).
//! - `tpl/d/` + document (u64 BE) + deciding document (u64 BE) → [`DocTemplates`]: the
//!   document's site and the template lines ([`TemplateRun`]) the deciding document
//!   made template there (itself, or a later page of its site that brought them to the
//!   threshold); the document's lines are all of its records, read by prefix. A record
//!   per decision, so that a page whose lines cross the threshold one at a time is
//!   written once per crossing, not whole again each time (which was quadratic in its
//!   lines). Data directories made before hold one record under `tpl/d/` + document,
//!   read as one more part.
//!
//! - `tpl/t` → u64: in a partition of a deployment, the last other partition's
//!   document counted (in its own batch: [`Store::put_templates_of_theirs`]), so that a
//!   restart counts none twice.
//!
//! Written in the batch of the document whose analysis decided them, so that a crash
//! leaves them in step with the documents stored; `rebuild --reanalyse` clears and
//! counts them again. Documents without a site have none. A partition of a deployment
//! counts every document of the log, the others' too, as one node does.

use rocksdb::WriteBatch;
use serde::{Deserialize, Serialize};
use textorigin_core::engine::template::{label, TemplateRun};
use textorigin_core::engine::DocResult;

use super::table::Postcard;
use super::{Result, Store, StoreError, CF_META};

const LINE: &[u8] = b"tpl/l/";
const DOC: &[u8] = b"tpl/d/";
const THROUGH: &[u8] = b"tpl/t";

/// The pages of one site holding one line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineCount {
    pub pages: u32,
    /// Where the pages holding it hold it (page, the line there), while fewer than the
    /// threshold (then emptied): what their records get when it reaches it, without
    /// reading their texts again.
    pub holders: Vec<(u64, TemplateRun)>,
}

/// A document's site (a hash of its name) and template lines.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocTemplates {
    pub site: u64,
    pub runs: Vec<TemplateRun>,
}

/// What one document's analysis writes of the template records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TemplateWrite {
    /// The analysed document (the deciding one of every record written).
    pub by: u64,
    /// (site, line hash, count).
    pub counts: Vec<(u64, u64, LineCount)>,
    /// The template lines it decides, on itself and on earlier pages given a line now.
    pub docs: Vec<(u64, DocTemplates)>,
}

fn line_key(site: u64, hash: u64) -> Vec<u8> {
    [LINE, &site.to_be_bytes()[..], &hash.to_be_bytes()[..]].concat()
}

fn doc_key(seq: u64) -> Vec<u8> {
    [DOC, &seq.to_be_bytes()[..]].concat()
}

fn doc_part_key(seq: u64, by: u64) -> Vec<u8> {
    [DOC, &seq.to_be_bytes()[..], &by.to_be_bytes()[..]].concat()
}

impl Store {
    /// The pages of `site` holding each line of `hashes` (distinct), read in one batch.
    pub fn line_counts(&self, site: u64, hashes: &[u64]) -> Result<Vec<LineCount>> {
        let keys: Vec<Vec<u8>> = hashes.iter().map(|&h| line_key(site, h)).collect();
        let mut out = Vec::with_capacity(keys.len());
        for (k, v) in keys.iter().zip(self.db.batched_multi_get_cf(self.cf(CF_META.name), &keys, false)) {
            out.push(match v.map_err(self.db_err())? {
                Some(v) => self.decode_value::<Postcard<LineCount>>(CF_META.name, k, &v)?,
                None => LineCount::default(),
            });
        }
        Ok(out)
    }

    /// Document `seq`'s template lines (None: it has none).
    pub fn doc_templates(&self, seq: u64) -> Result<Option<DocTemplates>> {
        let prefix = doc_key(seq);
        let mut doc: Option<DocTemplates> = None;
        let mode = rocksdb::IteratorMode::From(&prefix, rocksdb::Direction::Forward);
        for item in self.db.iterator_cf(self.cf(CF_META.name), mode) {
            let (k, v) = item.map_err(self.db_err())?;
            if !k.starts_with(&prefix) {
                break;
            }
            let part = self.decode_value::<Postcard<DocTemplates>>(CF_META.name, &k, &v)?;
            match &mut doc {
                Some(d) => d.runs.extend(part.runs),
                None => doc = Some(part),
            }
        }
        if let Some(d) = &mut doc {
            d.runs.sort_by_key(|r| r.span.start_token);
        }
        Ok(doc)
    }

    /// The lines at `threshold` pages of their site or more (site furniture)
    /// and the sites holding them: what `stats` says was labelled.
    pub fn template_lines(&self, threshold: u32) -> Result<(u64, u64)> {
        let (mut lines, mut sites) = (0u64, std::collections::BTreeSet::new());
        let mode = rocksdb::IteratorMode::From(LINE, rocksdb::Direction::Forward);
        for item in self.db.iterator_cf(self.cf(CF_META.name), mode) {
            let (k, v) = item.map_err(self.db_err())?;
            if !k.starts_with(LINE) {
                break;
            }
            if self.decode_value::<Postcard<LineCount>>(CF_META.name, &k, &v)?.pages >= threshold {
                lines += 1;
                sites.insert(k[LINE.len()..LINE.len() + 8].to_vec());
            }
        }
        Ok((lines, sites.len() as u64))
    }

    /// Document `seq`'s own template lines: those its arrival made template (those a
    /// later page gave it came after its analysis).
    pub fn own_templates(&self, seq: u64) -> Result<Vec<TemplateRun>> {
        Ok(match self.doc_templates(seq)? {
            Some(doc) => doc.runs.into_iter().filter(|r| r.since == seq).collect(),
            None => Vec::new(),
        })
    }

    /// Adds a document's template records to its batch.
    pub(crate) fn add_templates(&self, b: &mut WriteBatch, w: &TemplateWrite) {
        for (site, hash, count) in &w.counts {
            self.put(b, CF_META.records::<Postcard<LineCount>>(), &line_key(*site, *hash), count);
        }
        for (seq, doc) in &w.docs {
            self.put(b, CF_META.records::<Postcard<DocTemplates>>(), &doc_part_key(*seq, w.by), doc);
        }
    }

    /// The last other partition's document whose lines this partition counted (0:
    /// none).
    pub fn templates_counted_through(&self) -> Result<u64> {
        Ok(self.read(CF_META.records::<Postcard<u64>>(), THROUGH)?.unwrap_or(0))
    }

    /// Writes what another partition's document `seq` does to the template records (its
    /// site's counts, its own and earlier pages' records), and that it was counted.
    pub fn put_templates_of_theirs(&self, seq: u64, w: &TemplateWrite) -> Result<()> {
        let mut b = WriteBatch::default();
        self.add_templates(&mut b, w);
        self.put(&mut b, CF_META.records::<Postcard<u64>>(), THROUGH, &seq);
        self.write(b, false)
    }

    /// Removes every template record (`rebuild --reanalyse` counts them again).
    pub fn clear_templates(&self) -> Result<()> {
        let mut b = WriteBatch::default();
        for prefix in [LINE, DOC] {
            let end = [prefix, &[0xffu8; 25][..]].concat();
            self.delete_range(&mut b, CF_META, prefix, &end);
        }
        self.delete(&mut b, CF_META, THROUGH);
        self.write(b, false)
    }

    /// Document `seq`'s stored result as a reader sees it: its template lines (if it
    /// has any) neither old nor fresh, each with the pages of its site holding it now
    /// ([`label`]). What every view reads; the engine's paths read [`Store::result`].
    pub fn labelled_result(&self, seq: u64) -> Result<Option<DocResult>> {
        let Some(result) = self.result(seq)? else { return Ok(None) };
        let Some(doc) = self.doc_templates(seq)? else { return Ok(Some(result)) };
        let hashes: Vec<u64> = doc.runs.iter().map(|r| r.hash).collect();
        let pages: Vec<u32> = self.line_counts(doc.site, &hashes)?.into_iter().map(|c| c.pages).collect();
        let cfg = self.config()?.ok_or_else(|| StoreError::Corrupt {
            path: self.path.clone(),
            what: "config".into(),
            reason: "a document has template lines but the store has no configuration".into(),
        })?;
        Ok(Some(label(&result, &doc.runs, &pages, &cfg)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_clear() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let run = |s| TemplateRun {
            span: textorigin_core::engine::Span { start_token: s, end_token: s + 2, start_byte: 0, end_byte: 9 },
            hash: 42,
            since: 1,
            before_end: 0,
            after_start: 10,
        };
        let count = LineCount { pages: 3, holders: vec![(1, run(0)), (4, run(3)), (9, run(7))] };
        let doc = DocTemplates { site: 7, runs: vec![run(5)] };
        let w = TemplateWrite { by: 9, counts: vec![(7, 42, count.clone())], docs: vec![(9, doc.clone())] };
        let mut b = WriteBatch::default();
        store.add_templates(&mut b, &w);
        store.write(b, false).unwrap();
        assert_eq!(store.line_counts(7, &[42]).unwrap(), [count]);
        assert_eq!(store.line_counts(8, &[42]).unwrap(), [LineCount::default()]);
        assert_eq!(store.doc_templates(9).unwrap(), Some(doc));
        // A later page's decision adds a record of its own; the page reads both, in
        // token order, and so it does a record of a data directory made before (one
        // record under the page's key).
        let later = TemplateWrite { by: 12, docs: vec![(9, DocTemplates { site: 7, runs: vec![run(1)] })], ..w };
        let mut b = WriteBatch::default();
        store.add_templates(&mut b, &later);
        store.put(
            &mut b,
            CF_META.records::<Postcard<DocTemplates>>(),
            &doc_key(9),
            &DocTemplates { site: 7, runs: vec![run(8)] },
        );
        store.write(b, false).unwrap();
        let runs = store.doc_templates(9).unwrap().unwrap().runs;
        assert_eq!(runs.iter().map(|r| r.span.start_token).collect::<Vec<_>>(), [1, 5, 8]);
        assert_eq!(store.doc_templates(10).unwrap(), None);
        store.clear_templates().unwrap();
        assert_eq!(store.line_counts(7, &[42]).unwrap(), [LineCount::default()]);
        assert_eq!(store.doc_templates(9).unwrap(), None);
    }
}
