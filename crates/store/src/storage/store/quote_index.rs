//! Quotation data in the store: the recorded quotations (`q_result`, `q_late`) and the
//! sentences searches read (split again from the stored texts since schema 16:
//! [`super::recompute`]). The search itself is beside the store
//! ([`crate::storage::search::quotations`]).
//!
//! Quotations are oriented by publication: a sentence of a document that
//! arrived earlier but was published after the searching one quotes it, not the
//! reverse. Such a quotation goes to `q_late` (key: the quoting document, the late
//! arrival; value: its quoting sentences with their sources there); the stored
//! `q_result` of the quoting document is never rewritten. [`Store::quotations`] reads
//! both.

use rocksdb::{IteratorMode, WriteBatch};
use textorigin_core::quote::{DocSentences, Quotation, QuoteFind, Sentence, SharedSentence};

use super::codec::{be_u64, encode, pair_key, seq_key};
use super::recompute::sentence_key;
use super::{Result, Store, CF_Q_LATE, CF_Q_RESULT, CF_Q_SENT, CF_TEXT};

impl Store {
    /// Indexed sentence `idx` of document `seq` (of its text's sentences, in order, as
    /// [`textorigin_core::quote::sentences`] splits it, one of `min_words` distinct words or more;
    /// without its clauses). `None` when no such document or sentence is stored.
    pub fn sentence(&self, seq: u64, idx: u32) -> Result<Option<SharedSentence>> {
        if let Some(all) = self.caches.sentences.get(&seq) {
            return Ok(all.get(idx));
        }
        let Some(all) = self.recompute_sentences(seq)? else { return Ok(None) };
        self.cache_sentences(seq, &all);
        Ok(all.get(idx))
    }

    /// Keeps document `seq`'s indexed sentences for the searches that read them.
    pub(super) fn cache_sentences(&self, seq: u64, all: &DocSentences) {
        self.caches.sentences.put(seq, all.clone(), super::cache::sentences_bytes(all));
    }

    /// Every indexed sentence: ((seq, sentence index), sentence), of every stored text.
    pub fn all_sentences(&self) -> Result<Vec<((u64, u32), Sentence)>> {
        let mut out = Vec::new();
        for item in self.db.iterator_cf(self.cf(CF_TEXT), IteratorMode::Start) {
            let (k, _) = item.map_err(self.db_err())?;
            let seq = be_u64(&k, 0);
            let Some(all) = self.recompute_sentences(seq)? else { continue };
            out.extend(all.iter().map(|(i, s)| ((seq, i), s)));
        }
        Ok(out)
    }

    /// Adds a document's quotations to a batch.
    pub(super) fn add_quotes(&self, b: &mut WriteBatch, seq: u64, q: &QuoteFind) {
        b.put_cf(self.cf(CF_Q_RESULT), seq_key(seq), encode(&q.found));
        for (quoting, found) in &q.late {
            b.put_cf(self.cf(CF_Q_LATE), pair_key(*quoting, seq), encode(found));
        }
    }

    /// Deletes document `seq`'s quotations, and the sentences an older build stored for
    /// it (before a re-analysis, which splits them as this build does).
    pub(super) fn delete_quotes(&self, b: &mut WriteBatch, seq: u64) {
        b.delete_range_cf(self.cf(CF_Q_SENT), sentence_key(seq, 0), sentence_key(seq + 1, 0));
        b.delete_cf(self.cf(CF_Q_RESULT), seq_key(seq));
    }

    /// The quotations of document `seq`: its quoting sentences, by sentence index, with
    /// their sources published before it: those found when it arrived and those that
    /// arrived after it. Joined, a sentence's sources are ordered best score first, then
    /// earliest published, and cut at `max_sources`, as a run in publication order
    /// orders them.
    pub fn quotations(&self, seq: u64) -> Result<Vec<Quotation>> {
        let mut out: Vec<Quotation> = self
            .get(CF_Q_RESULT, &seq_key(seq))?
            .map(|v| self.decode("quotations", &v))
            .transpose()?
            .unwrap_or_default();
        let late = self.pairs(CF_Q_LATE, seq)?;
        if late.is_empty() {
            return Ok(out);
        }
        for (_, v) in late {
            for q in self.decode::<Vec<Quotation>>("quotations", &v)? {
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
}
