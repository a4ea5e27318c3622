//! The quotation index: indexed sentences (`q_sent`), the qSign signature index
//! (`q_index`: piece, piece value, signature, sequence number, sentence), document
//! frequencies of words (`q_df`) and the recorded quotations (`q_result`). This module
//! answers the probes and lookups of [`SentenceIndex`]; the search and its scoring
//! are `textorigin_core::quote::find`.

use rocksdb::{IteratorMode, WriteBatch};
use textorigin_core::quote::{self, Quotation, QuoteConfig, QuoteFind, Sentence, SentenceIndex};

use super::codec::{be_u32, be_u64, encode, le_u64, seq_key};
use super::meta::MetaKey;
use super::{Result, Store, StoreError, CF_Q_DF, CF_Q_INDEX, CF_Q_RESULT, CF_Q_SENT};

/// `q_sent` key: sequence number, sentence index.
fn sentence_key(seq: u64, idx: u32) -> Vec<u8> {
    [&seq_key(seq)[..], &idx.to_be_bytes()[..]].concat()
}

impl SentenceIndex for Store {
    type Error = StoreError;

    fn documents(&self) -> Result<u64> {
        self.quote_docs()
    }

    fn df(&self, word: u64) -> Result<u64> {
        Store::df(self, word)
    }

    fn candidates(&self, cfg: &QuoteConfig, sig: u64, d: u32) -> Result<Vec<(u64, u32, u32)>> {
        self.quote_candidates(cfg, sig, d)
    }

    fn sentence(&self, seq: u64, idx: u32) -> Result<Option<Sentence>> {
        Store::sentence(self, seq, idx)
    }
}

impl Store {
    /// Documents counted in the document frequencies.
    pub fn quote_docs(&self) -> Result<u64> {
        Ok(self.meta_u64(MetaKey::QuoteDocs)?.unwrap_or(0))
    }

    /// Documents (so far) containing the word.
    pub fn df(&self, word: u64) -> Result<u64> {
        if let Some(n) = self.caches.df.get(&word) {
            return Ok(n);
        }
        let n = self.get(CF_Q_DF, &word.to_be_bytes())?.and_then(|v| le_u64(&v)).unwrap_or(0);
        self.caches.df.put(word, n);
        Ok(n)
    }

    /// A stored sentence.
    pub fn sentence(&self, seq: u64, idx: u32) -> Result<Option<Sentence>> {
        if let Some(s) = self.caches.sentences.get(&(seq, idx)) {
            return Ok(Some(s));
        }
        let s: Option<Sentence> = self.get(CF_Q_SENT, &sentence_key(seq, idx))?.map(|v| self.decode("sentence", &v)).transpose()?;
        if let Some(s) = &s {
            self.caches.sentences.put((seq, idx), s.clone());
        }
        Ok(s)
    }

    /// Every indexed sentence: ((seq, sentence index), sentence).
    pub fn all_sentences(&self) -> Result<Vec<((u64, u32), Sentence)>> {
        let mut out = Vec::new();
        for item in self.db.iterator_cf(self.cf(CF_Q_SENT), IteratorMode::Start) {
            let (k, v) = item.map_err(self.db_err())?;
            out.push(((be_u64(&k, 0), be_u32(&k, 8)), self.decode("sentence", &v)?));
        }
        Ok(out)
    }

    /// Every indexed sentence within `d` bits of `sig`: (seq, sentence, distance).
    pub fn quote_candidates(&self, cfg: &QuoteConfig, sig: u64, d: u32) -> Result<Vec<(u64, u32, u32)>> {
        let mut out = Vec::new();
        let prefixes = quote::probes(cfg, sig, d).into_iter().map(|(p, v)| {
            let mut prefix = vec![p as u8];
            prefix.extend_from_slice(&v.to_be_bytes());
            prefix
        });
        self.scan_prefixes(CF_Q_INDEX, prefixes, cfg.max_per_probe as usize, |rest| {
            // rest: signature u64, seq u64, sentence u32
            let dist = (be_u64(rest, 0) ^ sig).count_ones();
            if dist <= d {
                out.push((be_u64(rest, 8), be_u32(rest, 16), dist));
            }
        })?;
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// Finds the quotations of a new document's sentences among the earlier documents'.
    pub fn quote_write(&self, cfg: &QuoteConfig, seq: u64, sentences: Vec<Sentence>) -> Result<QuoteFind> {
        quote::find(self, cfg, seq, sentences)
    }

    /// Adds a document's quotation data to a batch.
    pub(super) fn add_quotes(&self, b: &mut WriteBatch, cfg: &QuoteConfig, seq: u64, q: &QuoteFind) {
        for (idx, s, sig) in &q.indexed {
            let sent_key = sentence_key(seq, *idx);
            b.put_cf(self.cf(CF_Q_SENT), &sent_key, encode(s));
            for p in 0..cfg.pieces {
                let mut k = vec![p as u8];
                k.extend_from_slice(&quote::piece(cfg, *sig, p).to_be_bytes());
                k.extend_from_slice(&sig.to_be_bytes());
                k.extend_from_slice(&sent_key);
                b.put_cf(self.cf(CF_Q_INDEX), k, []);
            }
        }
        for (w, n) in &q.df {
            b.put_cf(self.cf(CF_Q_DF), w.to_be_bytes(), n.to_le_bytes());
        }
        self.put_meta_u64(b, MetaKey::QuoteDocs, q.docs);
        b.put_cf(self.cf(CF_Q_RESULT), seq_key(seq), encode(&q.found));
    }

    /// The quotations recorded for document `seq`.
    pub fn quotations(&self, seq: u64) -> Result<Vec<Quotation>> {
        Ok(self.get(CF_Q_RESULT, &seq_key(seq))?.map(|v| self.decode("quotations", &v)).transpose()?.unwrap_or_default())
    }
}
