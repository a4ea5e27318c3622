//! What the store recomputes from a document's stored text instead of keeping it
//! (schema 16, `migrations/0016-recomputed-from-text.md`, decision 3): its
//! sentences with their word lists, which quotation search reads for its candidates,
//! and its near-duplicate sketch, which near-duplicate search reads for its
//! candidates. They were a third and another third of the store on GCC ChangeLog
//! entries. A new document's are computed when it is prepared, as before, and handed
//! to the caches once it is stored ([`Store::put_document`]): the documents searches
//! meet most are the recent ones, and those are in the caches; an older one's are
//! computed again from its text (tokenized by the data directory's terms, the
//! engine's) by the same functions, so they are exactly what was indexed, and what a
//! replay indexes again.
//!
//! A data directory stored before keeps what this build would compute differently (a
//! sketch of schema 6 or older has no sampling rate; a splitter of an older build
//! may have cut a sentence elsewhere): its schema step deletes a stored sketch, or a
//! document's stored sentences, only where recomputing gives the same, and a read
//! prefers what is stored.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use rocksdb::{IteratorMode, WriteBatch};
use textorigin_core::engine::template::{self, TemplateRun};
use textorigin_core::neardup::{self, NearDupConfig, Sketch};
use textorigin_core::quote::{self, DocSentences, QuoteConfig, Sentence};
use textorigin_core::rabin::Rabin;
use textorigin_core::text::{tokenize, Terms, Token};

use xxhash_rust::xxh3::xxh3_128;

use super::cache::{sketch_bytes, SAME_TEXT_ENTRY};
use super::codec::{be_u64, seq_key};
use super::{Result, Store, StoreError, CF_ND_SKETCH, CF_Q_SENT, CF_TEXT};

/// `q_sent` key: sequence number, sentence index (kept by schema 16 only for the
/// documents of older builds whose sentences it splits otherwise).
pub(super) fn sentence_key(seq: u64, idx: u32) -> Vec<u8> {
    [&seq_key(seq)[..], &idx.to_be_bytes()[..]].concat()
}

/// Documents per batch of the schema step.
const BATCH: usize = 4096;

impl Store {
    /// The tokenizer of the data directory's terms (the engine's: a token's
    /// fingerprint does not depend on the shingle length), made on first use, after
    /// the configuration is stored.
    fn tokenizer(&self) -> Result<&Rabin> {
        if let Some(r) = self.caches.tokenizer.get() {
            return Ok(r);
        }
        let terms = self.config()?.unwrap_or_default().terms;
        Ok(self.caches.tokenizer.get_or_init(|| Rabin::new(1).with_terms(terms)))
    }

    /// Tokenizes by `terms` from now on, for the schema steps that run before the
    /// stored configuration reads as this build's (schemas 1-10 split by words).
    pub(super) fn tokenize_by(&self, terms: Terms) {
        let _ = self.caches.tokenizer.set(Rabin::new(1).with_terms(terms));
    }

    /// The near-duplicate configuration with its shingle fingerprints, made on first
    /// use.
    fn sketcher(&self) -> Result<&(NearDupConfig, Rabin)> {
        if let Some(s) = self.caches.sketcher.get() {
            return Ok(s);
        }
        let cfg = self.neardup_config()?;
        Ok(self.caches.sketcher.get_or_init(|| {
            let rabin = Rabin::new(cfg.k as usize);
            (cfg, rabin)
        }))
    }

    /// `f` of `text`'s tokens by the data directory's terms (in a buffer each thread
    /// keeps: this runs for every document a search meets outside the caches).
    fn with_tokens<T>(&self, text: &str, f: impl FnOnce(&[Token], Terms) -> T) -> Result<T> {
        thread_local! {
            static TOKENS: std::cell::RefCell<Vec<Token>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let rabin = self.tokenizer()?;
        Ok(TOKENS.with_borrow_mut(|tokens| {
            tokenize(text, rabin, tokens);
            f(tokens, rabin.terms())
        }))
    }

    /// `text` split into sentences by the data directory's terms, without their
    /// clauses (only a new document's search reads those).
    pub(super) fn split(&self, text: &str) -> Result<Vec<Sentence>> {
        self.with_tokens(text, |tokens, terms| quote::sentences_without_clauses(text, tokens, terms))
    }

    /// The distinct words of `text`'s sentences, as a document's analysis counts them
    /// in the document frequencies (its terms: every one is in a sentence, whole,
    /// [`quote::words_of_terms`]; without the selection of its shingles: what a
    /// deployment's partition counts of another's document).
    pub fn sentence_words(&self, text: &str) -> Result<Vec<u64>> {
        self.with_tokens(text, |tokens, _| quote::words_of_terms(tokens))
    }

    /// The indexed sentences of document `seq`: those an older build stored for it
    /// where it split otherwise, else split from its stored text.
    /// A document of the same text split before gives its sentences
    /// ([`Caches::same_text`](super::cache::Caches)).
    pub(super) fn recompute_sentences(&self, seq: u64) -> Result<Option<DocSentences>> {
        if self.caches.kept_sentences.load(Ordering::Relaxed) {
            let stored = self.stored_sentences(seq)?;
            if !stored.is_empty() {
                return Ok(Some(DocSentences::new(stored)));
            }
        }
        let known = |key: u128| self.caches.same_text.get(&key).and_then(|other| self.caches.sentences.get(&other));
        // A copy split before is found by the hash its metadata holds, without reading
        // the text.
        if let Some(all) = self.text_hash(seq)?.and_then(known) {
            return Ok(Some(all));
        }
        let Some(text) = self.text(seq)? else { return Ok(None) };
        let key = xxh3_128(text.as_bytes());
        if let Some(all) = known(key) {
            return Ok(Some(all));
        }
        let all = quote::indexed_sentences(self.quote_settings()?, self.split(&text)?);
        self.caches.same_text.put(key, seq, SAME_TEXT_ENTRY);
        Ok(Some(all))
    }

    /// The quotation configuration (which sentences are indexed), read on first use.
    fn quote_settings(&self) -> Result<&QuoteConfig> {
        if let Some(c) = self.caches.quote_config.get() {
            return Ok(c);
        }
        let cfg = self.quote_config()?;
        Ok(self.caches.quote_config.get_or_init(|| cfg))
    }

    /// The sentences an older build stored for document `seq` (none for a document
    /// stored since schema 16).
    fn stored_sentences(&self, seq: u64) -> Result<Vec<(u32, Sentence)>> {
        let prefix = seq_key(seq);
        let mut out = Vec::new();
        let from = IteratorMode::From(&prefix, rocksdb::Direction::Forward);
        for item in self.db.iterator_cf(self.cf(CF_Q_SENT), from) {
            let (k, v) = item.map_err(self.db_err())?;
            if !k.starts_with(&prefix) {
                break;
            }
            let idx = u32::from_be_bytes(k[8..12].try_into().expect("key layout"));
            let (start, end, words): (u32, u32, Vec<u64>) = self.decode("sentence", &v)?;
            out.push((idx, Sentence { start, end, words, clauses: Vec::new() }));
        }
        Ok(out)
    }

    /// The sketch of document `seq`: the one an older build stored, else computed from
    /// its stored text, or that of a document of the same text computed before
    /// ([`Caches::text_sketches`](super::cache::Caches)).
    pub(super) fn recompute_sketch(&self, seq: u64) -> Result<Option<Arc<Sketch>>> {
        if self.caches.kept_sketches.load(Ordering::Relaxed) {
            if let Some(v) = self.get(CF_ND_SKETCH, &seq_key(seq))? {
                return self.decode("sketch", &v).map(|s| Some(Arc::new(s)));
            }
        }
        // Without the site template lines it had when analysed, as it was
        // sketched then; a page with its own is sketched alone.
        let own: Vec<_> = match self.doc_templates(seq)? {
            Some(d) => d.runs.into_iter().filter(|r| r.since == seq).collect(),
            None => Vec::new(),
        };
        if own.is_empty() {
            // A copy sketched before is found by the hash its metadata holds, without
            // reading the text.
            if let Some(s) = self.text_hash(seq)?.and_then(|key| self.caches.text_sketches.get(&key)) {
                return Ok(Some(s));
            }
        }
        let Some(text) = self.text(seq)? else { return Ok(None) };
        if !own.is_empty() {
            return Ok(Some(Arc::new(self.sketch_of(&text, &own)?)));
        }
        let key = xxh3_128(text.as_bytes());
        if let Some(s) = self.caches.text_sketches.get(&key) {
            return Ok(Some(s));
        }
        let s = Arc::new(self.sketch_of(&text, &[])?);
        self.note_text_sketch(key, &s);
        Ok(Some(s))
    }

    /// Tells the caches that `sketch` is the sketch of the text whose xxh3-128 is
    /// `text_hash` (without site template lines of its own): what the document being
    /// analysed tells of its own text before its search reads its earlier copies.
    pub fn note_text_sketch(&self, text_hash: u128, sketch: &Arc<Sketch>) {
        self.caches.text_sketches.put(text_hash, Arc::clone(sketch), sketch_bytes(sketch));
    }

    fn sketch_of(&self, text: &str, templates: &[TemplateRun]) -> Result<Sketch> {
        let (cfg, rabin) = self.sketcher()?;
        match templates {
            [] => self.with_tokens(text, |tokens, _| neardup::sketch(cfg, tokens, rabin)),
            runs => self.with_tokens(text, |tokens, _| self.sketch_outside(tokens, runs))?,
        }
    }

    /// The near-duplicate sketch of a document's `tokens` outside its site template
    /// lines `runs`.
    pub fn sketch_outside(&self, tokens: &[Token], runs: &[TemplateRun]) -> Result<Sketch> {
        let (cfg, rabin) = self.sketcher()?;
        Ok(neardup::sketch(cfg, &template::outside(tokens, runs), rabin))
    }

    /// Notes whether an older build's sketches and sentences are stored (read at open
    /// and after the schema step: a store without any reads none).
    pub(super) fn note_kept(&self) {
        // (An older store opened read-only may lack them: it is refused right after.)
        let any =
            |cf| self.db.cf_handle(cf).is_some_and(|h| self.db.iterator_cf(h, IteratorMode::Start).next().is_some());
        self.caches.kept_sketches.store(any(CF_ND_SKETCH), Ordering::Relaxed);
        self.caches.kept_sentences.store(any(CF_Q_SENT), Ordering::Relaxed);
    }

    /// The schema step: deletes every stored sketch and every document's stored
    /// sentences that recomputing from the text gives again, keeps the others, and
    /// compacts both column families. A re-run after a crash finds fewer to compare.
    /// Returns (sketches, documents' sentences) kept.
    pub(super) fn drop_recomputable(&self) -> Result<(u64, u64)> {
        let mut kept = (0, 0);
        let mut batch = WriteBatch::default();
        let mut pending = 0;
        for item in self.db.iterator_cf(self.cf(CF_TEXT), IteratorMode::Start) {
            let (k, v) = item.map_err(self.db_err())?;
            let seq = be_u64(&k, 0);
            let text = self.decode_stored_text(seq, &v)?;
            if let Some(v) = self.get(CF_ND_SKETCH, &k)? {
                let stored: Sketch = self.decode("sketch", &v)?;
                if stored == self.sketch_of(&text, &[])? {
                    batch.delete_cf(self.cf(CF_ND_SKETCH), &k);
                } else {
                    kept.0 += 1;
                }
            }
            let stored = self.stored_sentences(seq)?;
            if !stored.is_empty() {
                let split = self.split(&text)?;
                if stored.iter().all(|(idx, s)| split.get(*idx as usize) == Some(s)) {
                    batch.delete_range_cf(self.cf(CF_Q_SENT), sentence_key(seq, 0), sentence_key(seq + 1, 0));
                } else {
                    kept.1 += 1;
                }
            }
            pending += 1;
            if pending == BATCH {
                self.write(std::mem::take(&mut batch), false)?;
                self.step_failpoint()?;
                pending = 0;
            }
        }
        self.write(batch, false)?;
        self.sync()?;
        self.step_failpoint()?;
        // Their files go now, not at some later compaction.
        for cf in [CF_ND_SKETCH, CF_Q_SENT] {
            self.db.compact_range_cf(self.cf(cf), None::<&[u8]>, None::<&[u8]>);
        }
        self.note_kept();
        Ok(kept)
    }

    /// A crash or an error between the step's batches, or after its last one (before
    /// the stamp), for the crash tests.
    fn step_failpoint(&self) -> Result<()> {
        crate::failpoint::hit("upgrade.recomputed").map_err(|source| StoreError::Io { path: self.path.clone(), source })
    }

    /// Encodes a sentence as schemas 3-15 stored it (for the tests of the step).
    #[cfg(test)]
    pub(super) fn put_stored_sentence(&self, seq: u64, idx: u32, s: &Sentence) -> Result<()> {
        let mut b = WriteBatch::default();
        b.put_cf(self.cf(CF_Q_SENT), sentence_key(seq, idx), super::codec::encode(&(s.start, s.end, &s.words)));
        self.write(b, true)
    }
}

#[cfg(test)]
mod tests {
    use textorigin_core::config::Config;
    use textorigin_core::engine::DocResult;
    use textorigin_core::index::Indexes;
    use textorigin_core::quote::QuoteConfig;

    use super::super::DocumentWrite;
    use super::*;
    use crate::storage::search;

    const TEXTS: [&str; 3] = [
        "The committee met on Tuesday. It is too early to tell, the chair said, whether the plan will pass.",
        "Nobody expected the vote to fail. The committee met on Tuesday and again on Friday!",
        "A third text, with one sentence only and a clause or two, to be sure.",
    ];

    /// Stores `TEXTS` as the data directory does: each document's sketch and sentences
    /// computed when prepared. Returns them.
    fn ingest(s: &Store) -> Vec<(Sketch, Vec<Sentence>)> {
        let cfg = Config::default();
        s.put_config(&cfg).unwrap();
        let (nc, qc) = (s.neardup_config().unwrap(), QuoteConfig::default());
        let rabin = Rabin::new(cfg.k as usize).with_terms(cfg.terms);
        let idx = Indexes::in_memory(1 << 20, &qc).unwrap();
        let mut out = Vec::new();
        for (i, text) in TEXTS.iter().enumerate() {
            let seq = i as u64 + 1;
            let mut tokens = Vec::new();
            tokenize(text, &rabin, &mut tokens);
            let sketch = neardup::sketch(&nc, &tokens, &Rabin::new(nc.k as usize));
            let sentences = quote::sentences(text, &tokens, cfg.terms);
            let nd = search::near_dups(s, &nc, seq, sketch.clone(), &idx, |_| false, None).unwrap();
            let q = search::quotations(s, &qc, seq, sentences.clone(), &idx, |_| false).unwrap();
            let result = DocResult { seq, ..Default::default() };
            let meta = super::super::tests::meta(seq, "d");
            let doc = DocumentWrite {
                meta: &meta,
                text,
                result: &result,
                nd: Some(&nd),
                q: Some(&q),
                revised: &Default::default(),
                stage: None,
                templates: None,
            };
            s.put_document(&doc).unwrap();
            out.push((sketch, sentences.into_iter().map(|s| Sentence { clauses: Vec::new(), ..s }).collect()));
        }
        out
    }

    fn stored(s: &Store, cf: &str) -> usize {
        s.db.iterator_cf(s.cf(cf), IteratorMode::Start).count()
    }

    #[test]
    fn sketches_and_sentences_are_not_stored_and_read_back_as_computed() {
        let dir = tempfile::tempdir().unwrap();
        let computed = ingest(&Store::open(dir.path()).unwrap());
        // Opened again: empty caches, everything computed from the texts.
        let s = Store::open(dir.path()).unwrap();
        assert_eq!((stored(&s, CF_ND_SKETCH), stored(&s, CF_Q_SENT)), (0, 0));
        for (i, (sketch, sentences)) in computed.iter().enumerate() {
            let seq = i as u64 + 1;
            assert_eq!(*s.sketch(seq).unwrap().unwrap(), *sketch);
            for (idx, sentence) in sentences.iter().enumerate() {
                assert_eq!(s.sentence(seq, idx as u32).unwrap().unwrap().to_sentence(), *sentence);
            }
            assert!(s.sentence(seq, sentences.len() as u32).unwrap().is_none());
        }
        assert!(s.sketch(9).unwrap().is_none() && s.sentence(9, 0).unwrap().is_none());
        assert_eq!(s.all_sentences().unwrap().len(), 5, "each has 5 distinct words or more");
    }

    #[test]
    fn a_text_sketched_once_is_the_sketch_of_every_stored_copy_of_it() {
        let dir = tempfile::tempdir().unwrap();
        let computed = ingest(&Store::open(dir.path()).unwrap());
        let s = Store::open(dir.path()).unwrap();
        // The document being analysed tells its text's sketch: a stored document of
        // the same text gets it without a sketch of its own (a marked one shows it),
        // a document of another text does not.
        let mut marked = computed[0].0.clone();
        marked.mins[0] ^= 1;
        s.note_text_sketch(xxh3_128(TEXTS[0].as_bytes()), &Arc::new(marked.clone()));
        assert_eq!(*s.sketch(1).unwrap().unwrap(), marked);
        assert_eq!(*s.sketch(2).unwrap().unwrap(), computed[1].0);
        // A sketch computed again is noted under its text for the copies read next.
        assert_eq!(*s.caches.text_sketches.get(&xxh3_128(TEXTS[1].as_bytes())).unwrap(), computed[1].0);
    }

    /// A fresh process reads a document's n earlier copies: the first is read and
    /// split or sketched, the others are found by the text hash their metadata holds,
    /// their texts not read (here: deleted, and still answered).
    #[test]
    fn a_copy_read_before_is_found_by_its_metadata_without_its_text() {
        let dir = tempfile::tempdir().unwrap();
        let computed = ingest(&Store::open(dir.path()).unwrap());
        let s = Store::open(dir.path()).unwrap();
        let mut meta = super::super::tests::meta(4, "copy");
        meta.content_hash = format!("{:032x}", xxh3_128(TEXTS[0].as_bytes()));
        let result = DocResult { seq: 4, ..Default::default() };
        let doc = DocumentWrite {
            meta: &meta,
            text: TEXTS[0],
            result: &result,
            nd: None,
            q: None,
            revised: &Default::default(),
            stage: None,
            templates: None,
        };
        s.put_document(&doc).unwrap();
        let s = {
            drop(s);
            Store::open(dir.path()).unwrap()
        };
        assert_eq!(*s.sketch(1).unwrap().unwrap(), computed[0].0);
        assert_eq!(s.sentence(1, 0).unwrap().unwrap().to_sentence(), computed[0].1[0]);
        let mut b = WriteBatch::default();
        b.delete_cf(s.cf(super::super::CF_TEXT), seq_key(4));
        s.write(b, true).unwrap();
        assert_eq!(*s.sketch(4).unwrap().unwrap(), computed[0].0);
        assert_eq!(s.sentence(4, 1).unwrap().unwrap().to_sentence(), computed[0].1[1]);
        // A document whose metadata holds no hash of this build's (the test's "h") is
        // read: without its text it has neither.
        let mut b = WriteBatch::default();
        b.delete_cf(s.cf(super::super::CF_TEXT), seq_key(2));
        s.write(b, true).unwrap();
        assert!(s.sketch(2).unwrap().is_none() && s.sentence(2, 0).unwrap().is_none());
    }

    #[test]
    fn the_schema_step_deletes_only_what_this_build_computes_alike() {
        let dir = tempfile::tempdir().unwrap();
        let computed = ingest(&Store::open(dir.path()).unwrap());
        let s = Store::open(dir.path()).unwrap();
        // As an older build stored them: document 1 as this build computes it,
        // document 2 otherwise (a sketch without its rate, a sentence cut elsewhere).
        let put_sketch = |seq: u64, sketch: &Sketch| {
            let mut b = WriteBatch::default();
            b.put_cf(s.cf(CF_ND_SKETCH), seq_key(seq), super::super::codec::encode(sketch));
            s.write(b, true).unwrap();
        };
        put_sketch(1, &computed[0].0);
        s.put_stored_sentence(1, 0, &computed[0].1[0]).unwrap();
        let old_sketch = Sketch { rate: 0, ..computed[1].0.clone() };
        put_sketch(2, &old_sketch);
        let old_sentence = Sentence { end: 20, ..computed[1].1[1].clone() };
        s.put_stored_sentence(2, 1, &old_sentence).unwrap();
        s.put_stored_sentence(2, 0, &computed[1].1[0]).unwrap();
        for _ in 0..2 {
            // A re-run after a crash keeps the same.
            assert_eq!(s.drop_recomputable().unwrap(), (1, 1));
            assert_eq!((stored(&s, CF_ND_SKETCH), stored(&s, CF_Q_SENT)), (1, 2));
        }
        let s = {
            drop(s);
            Store::open(dir.path()).unwrap()
        };
        assert_eq!(*s.sketch(2).unwrap().unwrap(), old_sketch, "what is kept is read");
        assert_eq!(s.sentence(2, 1).unwrap().unwrap().to_sentence(), old_sentence);
        assert_eq!(s.sentence(2, 0).unwrap().unwrap().to_sentence(), computed[1].1[0]);
        assert_eq!(*s.sketch(1).unwrap().unwrap(), computed[0].0);
    }

    /// The words a partition counts of another partition's document are those of its
    /// sentences as the owner's analysis splits them, over the sample corpora (English
    /// ChangeLog entries and mail, SPDX licence texts, Chinese) under both kinds of
    /// terms (`textorigin_core::quote`'s property test draws texts).
    #[test]
    fn sentence_words_are_the_words_of_the_split_sentences_of_the_samples() {
        // The checkout cargo runs the test in (a binary built from another checkout
        // into the same target directory is reused with that one's path baked in).
        let crate_dir = std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
        let fixtures = std::path::Path::new(&crate_dir).join("../../tests/fixtures");
        let mut texts = vec![std::fs::read_to_string(fixtures.join("v10-chinese.txt")).unwrap()];
        for f in ["gcc-sample.jsonl", "mail-sample.jsonl", "spdx-sample.jsonl"] {
            for line in std::fs::read_to_string(fixtures.join(f)).unwrap().lines() {
                let v: serde_json::Value = serde_json::from_str(line).unwrap();
                texts.push(v["text"].as_str().unwrap().to_string());
            }
        }
        assert!(texts.len() > 500, "{}", texts.len());
        for terms in [Terms::Words, Terms::Unicode] {
            let dir = tempfile::tempdir().unwrap();
            let s = Store::open(dir.path()).unwrap();
            s.tokenize_by(terms);
            for text in &texts {
                assert_eq!(s.sentence_words(text).unwrap(), quote::words(&s.split(text).unwrap()), "{terms:?}: {text}");
            }
        }
    }
}
