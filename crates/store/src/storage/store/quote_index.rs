//! Quotation data in the store: the recorded quotations (`q_result`, `q_late`) and the
//! sentences an older build stored where this one splits otherwise (since schema 16
//! they are split again from the stored texts: `crate::storage::recompute`). The
//! search itself is beside the store ([`crate::storage::search::quotations`]).
//!
//! Quotations are oriented by publication: a sentence of a document that
//! arrived earlier but was published after the searching one quotes it, not the
//! reverse. Such a quotation goes to `q_late` (key: the quoting document, the late
//! arrival; value: its quoting sentences with their sources there); the stored
//! `q_result` of the quoting document is never rewritten. [`Store::quotations`] reads
//! both.

use rocksdb::{IteratorMode, WriteBatch};
use textorigin_core::quote::{Quotation, QuoteFind, Sentence};

use super::codec::seq_key;
use super::{Result, Store, CF_Q_LATE, CF_Q_RESULT, CF_Q_SENT};

/// A `q_sent` value: a sentence's first and last token and its words, without its
/// clauses (kept by schema 16 only for the documents of older builds whose sentences
/// it splits otherwise).
pub(super) type StoredSentence = (u32, u32, Vec<u64>);

impl Store {
    /// The sentences an older build stored for document `seq` (none for a document
    /// stored since schema 16).
    pub(crate) fn stored_sentences(&self, seq: u64) -> Result<Vec<(u32, Sentence)>> {
        let prefix = seq_key(seq);
        let mut out = Vec::new();
        for item in self.scan(CF_Q_SENT, IteratorMode::From(&prefix, rocksdb::Direction::Forward)) {
            let (k, (start, end, words)) = item?;
            if !k.starts_with(&prefix) {
                break;
            }
            let idx = u32::from_be_bytes(k[8..12].try_into().expect("key layout"));
            out.push((idx, Sentence { start, end, words, clauses: Vec::new() }));
        }
        Ok(out)
    }

    /// Encodes a sentence as schemas 3-15 stored it (for the tests of schema 16's step).
    #[cfg(test)]
    pub(crate) fn put_stored_sentence(&self, seq: u64, idx: u32, s: &Sentence) -> Result<()> {
        let mut b = WriteBatch::default();
        self.put(&mut b, CF_Q_SENT, &(seq, idx), &(s.start, s.end, s.words.clone()));
        self.write(b, true)
    }

    /// Adds a document's quotations to a batch.
    pub(crate) fn add_quotes(&self, b: &mut WriteBatch, seq: u64, q: &QuoteFind) {
        self.put(b, CF_Q_RESULT, &seq, &q.found);
        for (quoting, found) in &q.late {
            self.put(b, CF_Q_LATE, &(*quoting, seq), found);
        }
    }

    /// Deletes document `seq`'s quotations, and the sentences an older build stored for
    /// it (before a re-analysis, which splits them as this build does).
    pub(super) fn delete_quotes(&self, b: &mut WriteBatch, seq: u64) {
        self.delete_range(b, CF_Q_SENT, &(seq, 0), &(seq + 1, 0));
        self.delete(b, CF_Q_RESULT, &seq);
    }

    /// The quotations of document `seq`: its quoting sentences, by sentence index, with
    /// their sources published before it: those found when it arrived and those that
    /// arrived after it. Joined, a sentence's sources are ordered best score first, then
    /// earliest published, and cut at `max_sources`, as a run in publication order
    /// orders them. An exact copy's are its earlier document's, as they are now (those
    /// of later arrivals included), each at the same words of its own text.
    pub fn quotations(&self, seq: u64) -> Result<Vec<Quotation>> {
        if let Some(of) = self.copy_of(seq)? {
            return self.copied_quotations(seq, of);
        }
        let mut out = self.read(CF_Q_RESULT, &seq)?.unwrap_or_default();
        let late = self.pairs(CF_Q_LATE, seq)?;
        if late.is_empty() {
            return Ok(out);
        }
        for (_, quotations) in late {
            for q in quotations {
                match out.iter_mut().find(|o| o.sentence == q.sentence) {
                    Some(o) => o.sources.extend(q.sources),
                    None => out.push(q),
                }
            }
        }
        out.sort_by_key(|q| q.sentence);
        let max_sources = self.quote_config()?.max_sources as usize;
        for q in &mut out {
            let mut keyed = Vec::with_capacity(q.sources.len());
            for s in q.sources.drain(..) {
                keyed.push((self.publication_key(s.seq)?, s));
            }
            keyed.sort_by(|(ka, a), (kb, b)| {
                b.score.total_cmp(&a.score).then(ka.cmp(kb)).then(a.sentence.cmp(&b.sentence))
            });
            q.sources = keyed.into_iter().take(max_sources).map(|(_, s)| s).collect();
        }
        Ok(out)
    }

    /// The quotations of document `seq`, an exact copy of `of`: `of`'s, each span moved
    /// to the same tokens of `seq`'s text where the two texts differ in their bytes
    /// (case, punctuation, spacing).
    fn copied_quotations(&self, seq: u64, of: u64) -> Result<Vec<Quotation>> {
        let mut out = self.quotations(of)?;
        if out.is_empty() || self.text_hash(seq)? == self.text_hash(of)? {
            return Ok(out);
        }
        let Some(cfg) = self.config()? else { return Ok(out) };
        let rabin = textorigin_core::rabin::Rabin::new(cfg.k as usize).with_terms(cfg.terms);
        let (their_text, text) = (self.text(of)?.unwrap_or_default(), self.text(seq)?.unwrap_or_default());
        let tokens_of = |text: &str| {
            let mut tokens = Vec::new();
            textorigin_core::text::tokenize(text, &rabin, &mut tokens);
            tokens
        };
        let (theirs, mine) = (tokens_of(&their_text), tokens_of(&text));
        let text_len = text.len() as u32;
        for q in &mut out {
            let first = theirs.partition_point(|t| t.start < q.start_byte);
            let end = theirs.partition_point(|t| t.end <= q.end_byte);
            let (Some(a), Some(last)) = (mine.get(first), end.checked_sub(1).filter(|&l| l < mine.len())) else {
                continue;
            };
            // The bytes before its first token and after its last (an opening quote, a
            // full stop) kept, within the gaps around them.
            let before = first.checked_sub(1).map_or(0, |p| mine[p].end);
            let after = mine.get(end).map_or(text_len, |t| t.start);
            let lead = theirs[first].start.saturating_sub(q.start_byte);
            let trail = q.end_byte.saturating_sub(theirs[last].end);
            q.start_byte = a.start.saturating_sub(lead).max(before);
            q.end_byte = (mine[last].end + trail).min(after).max(q.start_byte);
        }
        Ok(out)
    }
}
