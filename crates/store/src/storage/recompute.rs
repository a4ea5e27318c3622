//! What is computed again from a stored text instead of being kept (schema 16,
//! `migrations/0016-recomputed-from-text.md`): a document's sentences with their word
//! lists, which quotation search reads for its candidates, its near-duplicate sketch,
//! which near-duplicate search reads for its candidates, and its text as alignment
//! reads it ([`origin_text`]). Sentences and sketches were a third and another third of
//! the store on GCC ChangeLog entries.
//!
//! One [`Recomputer`] holds the preparer's configuration (the data directory's terms,
//! its near-duplicate and quotation configurations), so an earlier document's
//! sentences and sketch are computed by the functions, and with the settings, that
//! indexed them, and a replay indexes them again alike. The [`Store`] records and
//! caches (`store/cache.rs`): a new document's sentences and sketch, computed when it
//! was prepared, go to its caches once it is stored ([`Store::put_document`]); the
//! documents searches meet most are the recent ones, and those are in the caches; an
//! older one's are computed here from its stored text.
//!
//! A data directory stored before keeps what this build would compute differently (a
//! sketch of schema 6 or older has no sampling rate; a splitter of an older build may
//! have cut a sentence elsewhere): its schema step deletes a stored sketch, or a
//! document's stored sentences, only where recomputing gives the same
//! (`migrations/v16_recomputed.rs`), and a read prefers what is stored.

use std::cell::RefCell;
use std::sync::Arc;

use textorigin_core::align::OriginText;
use textorigin_core::engine::template::{self, TemplateRun};
use textorigin_core::engine::{Engine, Prepared};
use textorigin_core::neardup::{self, NearDupConfig, Sketch};
use textorigin_core::quote::{self, DocSentences, QuoteConfig, Sentence, SharedSentence};
use textorigin_core::rabin::Rabin;
use textorigin_core::spans::Block;
use textorigin_core::text::{tokenize, Terms, Token};
use xxhash_rust::xxh3::xxh3_128;

use super::store::{Result, Store};

/// Computes a document's sentences and near-duplicate sketch from its text as the
/// preparer did.
#[derive(Debug, Clone)]
pub struct Recomputer {
    /// The tokenizer of the data directory's terms (the engine's: a token's
    /// fingerprint does not depend on the shingle length).
    tokenizer: Rabin,
    /// The near-duplicate configuration and its shingle fingerprints.
    nd: NearDupConfig,
    shingles: Rabin,
    /// Which sentences are indexed.
    quote: QuoteConfig,
}

impl Recomputer {
    /// A recomputer of these settings.
    pub fn new(terms: Terms, nd: NearDupConfig, quote: QuoteConfig) -> Recomputer {
        let shingles = Rabin::new(nd.k as usize);
        Recomputer { tokenizer: Rabin::new(1).with_terms(terms), nd, shingles, quote }
    }

    /// The recomputer of the settings `store` holds.
    pub fn of(store: &Store) -> Result<Recomputer> {
        let terms = store.config()?.unwrap_or_default().terms;
        Ok(Recomputer::new(terms, store.neardup_config()?, store.quote_config()?))
    }

    /// The near-duplicate configuration.
    pub fn neardup(&self) -> &NearDupConfig {
        &self.nd
    }

    /// The quotation configuration.
    pub fn quote(&self) -> &QuoteConfig {
        &self.quote
    }

    /// `f` of `text`'s tokens (in a buffer each thread keeps: this runs for every
    /// document a search meets outside the caches).
    pub(crate) fn with_tokens<T>(&self, text: &str, f: impl FnOnce(&[Token]) -> T) -> T {
        thread_local! {
            static TOKENS: RefCell<Vec<Token>> = const { RefCell::new(Vec::new()) };
        }
        TOKENS.with_borrow_mut(|tokens| {
            tokenize(text, &self.tokenizer, tokens);
            f(tokens)
        })
    }

    /// `text` split into sentences, without their clauses (only a new document's search
    /// reads those).
    pub fn split(&self, text: &str) -> Vec<Sentence> {
        self.with_tokens(text, |tokens| quote::sentences_without_clauses(text, tokens, self.tokenizer.terms()))
    }

    /// The distinct words of `text`'s sentences, as a document's analysis counts them
    /// in the document frequencies (its terms: every one is in a sentence, whole,
    /// [`quote::words_of_terms`]; without the selection of its shingles: what a
    /// deployment's partition counts of another's document).
    pub fn sentence_words(&self, text: &str) -> Vec<u64> {
        self.with_tokens(text, quote::words_of_terms)
    }

    /// [`Recomputer::sentence_words`] of `text`, split into `tokens` already, of the
    /// sentences outside the site template lines `runs` (those mostly in them count
    /// none: [`template::blank_sentences`]).
    pub fn words_outside(&self, text: &str, tokens: &[Token], runs: &[TemplateRun]) -> Vec<u64> {
        if runs.is_empty() {
            return quote::words_of_terms(tokens);
        }
        let mut sentences = quote::sentences_without_clauses(text, tokens, self.tokenizer.terms());
        template::blank_sentences(&mut sentences, runs);
        quote::words(&sentences)
    }

    /// The near-duplicate sketch of a document's `tokens`: all of them, its site
    /// template lines included (duplicates are found whatever the templates).
    pub fn sketch_of_tokens(&self, tokens: &[Token]) -> Sketch {
        neardup::sketch(&self.nd, tokens, &self.shingles)
    }

    /// The near-duplicate sketch of `text`.
    pub fn sketch_of(&self, text: &str) -> Sketch {
        self.with_tokens(text, |tokens| self.sketch_of_tokens(tokens))
    }

    /// Indexed sentence `idx` of document `seq` (of its text's sentences, in order, as
    /// [`quote::sentences`] splits it, one of `min_words` distinct words or more;
    /// without its clauses). `None` when no such document or sentence is stored.
    pub fn sentence(&self, store: &Store, seq: u64, idx: u32) -> Result<Option<SharedSentence>> {
        Ok(self.sentences(store, seq)?.and_then(|all| all.get(idx)))
    }

    /// The indexed sentences of document `seq` (cached): those an older build stored
    /// for it where it split otherwise, else split from its stored text. A document of
    /// the same text split before gives its sentences.
    pub fn sentences(&self, store: &Store, seq: u64) -> Result<Option<DocSentences>> {
        if let Some(all) = store.cached_sentences(seq) {
            return Ok(Some(all));
        }
        let Some(all) = self.split_stored(store, seq)? else { return Ok(None) };
        store.cache_sentences(seq, &all);
        Ok(Some(all))
    }

    fn split_stored(&self, store: &Store, seq: u64) -> Result<Option<DocSentences>> {
        if store.keeps_old_sentences() {
            let stored = store.stored_sentences(seq)?;
            if !stored.is_empty() {
                return Ok(Some(DocSentences::new(stored)));
            }
        }
        // A copy split before is found by the hash its metadata holds, without reading
        // the text.
        if let Some(all) = store.text_hash(seq)?.and_then(|key| store.text_sentences(key)) {
            return Ok(Some(all));
        }
        let Some(text) = store.text(seq)? else { return Ok(None) };
        let key = xxh3_128(text.as_bytes());
        if let Some(all) = store.text_sentences(key) {
            return Ok(Some(all));
        }
        let all = quote::indexed_sentences(&self.quote, self.split(&text));
        store.note_text_sentences(key, seq);
        Ok(Some(all))
    }

    /// Every indexed sentence: ((seq, sentence index), sentence), of every stored text.
    pub fn all_sentences(&self, store: &Store) -> Result<Vec<((u64, u32), Sentence)>> {
        let mut out = Vec::new();
        for seq in store.text_seqs() {
            let seq = seq?;
            let Some(all) = self.split_stored(store, seq)? else { continue };
            out.extend(all.iter().map(|(i, s)| ((seq, i), s)));
        }
        Ok(out)
    }

    /// The sketch of document `seq` (cached): the one an older build stored, else
    /// computed from its stored text, or that of a document of the same text computed
    /// before.
    pub fn sketch(&self, store: &Store, seq: u64) -> Result<Option<Arc<Sketch>>> {
        if let Some(s) = store.cached_sketch(seq) {
            return Ok(Some(s));
        }
        let Some(s) = self.sketch_stored(store, seq)? else { return Ok(None) };
        store.cache_sketch(seq, &s);
        Ok(Some(s))
    }

    fn sketch_stored(&self, store: &Store, seq: u64) -> Result<Option<Arc<Sketch>>> {
        if store.keeps_old_sketches() {
            if let Some(s) = store.stored_sketch(seq)? {
                return Ok(Some(Arc::new(s)));
            }
        }
        // A copy sketched before is found by the hash its metadata holds, without
        // reading the text.
        if let Some(s) = store.text_hash(seq)?.and_then(|key| store.text_sketch(key)) {
            return Ok(Some(s));
        }
        let Some(text) = store.text(seq)? else { return Ok(None) };
        let key = xxh3_128(text.as_bytes());
        if let Some(s) = store.text_sketch(key) {
            return Ok(Some(s));
        }
        let s = Arc::new(self.sketch_of(&text));
        store.note_text_sketch(key, &s);
        Ok(Some(s))
    }
}

/// Document `seq` as alignment reads it (cached): its text tokenized by `engine` (or
/// the token fingerprints the store kept of it, [`Store::note_tokens`]) and its stored
/// result's copied blocks.
pub fn origin_text(store: &Store, engine: &Engine, seq: u64) -> Result<Option<Arc<OriginText>>> {
    cached_origin_text(store, seq, |blocks| {
        Ok(match store.recent_tokens(seq) {
            Some(tokens) => Some(engine.origin_text_of_tokens(tokens.to_vec(), blocks)),
            None => store.text(seq)?.map(|text| engine.origin_text(&text, blocks)),
        })
    })
}

/// [`origin_text`] of stored document `seq`, whose tokens are `copy`'s (its exact copy
/// being analysed): from the copy's tokens and the shingles its selection computed,
/// the same, without reading or tokenizing the text again.
pub fn origin_text_of_copy(
    store: &Store,
    engine: &Engine,
    seq: u64,
    copy: &Prepared,
) -> Result<Option<Arc<OriginText>>> {
    let tokens: Vec<u64> = copy.tokens().iter().map(|t| t.fp).collect();
    cached_origin_text(store, seq, |blocks| {
        Ok(Some(OriginText::of_tokens_with(tokens, engine.rabin(), copy.shingles(), blocks)))
    })
}

/// Document `seq` as alignment reads it, from the store's cache, else `make` of its
/// stored blocks (None: its text is not stored), then cached.
fn cached_origin_text(
    store: &Store,
    seq: u64,
    make: impl FnOnce(&[Block]) -> Result<Option<OriginText>>,
) -> Result<Option<Arc<OriginText>>> {
    if let Some(t) = store.cached_origin_text(seq) {
        return Ok(Some(t));
    }
    let blocks = store.result(seq)?.map(|r| r.copied_blocks).unwrap_or_default();
    let Some(t) = make(&blocks)? else { return Ok(None) };
    let t = Arc::new(t);
    store.cache_origin_text(seq, &t);
    Ok(Some(t))
}
#[cfg(test)]
mod tests {
    use rocksdb::{IteratorMode, WriteBatch};
    use textorigin_core::config::Config;
    use textorigin_core::engine::DocResult;
    use textorigin_core::index::Indexes;

    use super::*;
    use crate::storage::search;
    use crate::storage::store::{DocumentWrite, CF_ND_SKETCH, CF_Q_SENT, CF_TEXT};

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
        let rc = Recomputer::of(s).unwrap();
        let rabin = Rabin::new(cfg.k as usize).with_terms(cfg.terms);
        let idx = Indexes::in_memory(1 << 20, &qc).unwrap();
        let mut out = Vec::new();
        for (i, text) in TEXTS.iter().enumerate() {
            let seq = i as u64 + 1;
            let mut tokens = Vec::new();
            tokenize(text, &rabin, &mut tokens);
            let sketch = neardup::sketch(&nc, &tokens, &Rabin::new(nc.k as usize));
            let sentences = quote::sentences(text, &tokens, cfg.terms);
            let nd = search::near_dups(s, &rc, seq, sketch.clone(), &idx, |_| false, None).unwrap();
            let q = search::quotations(s, &rc, seq, sentences.clone(), &idx, |_| false).unwrap();
            let result = DocResult { seq, ..Default::default() };
            let meta = crate::storage::store::tests::meta(seq, "d");
            let doc = DocumentWrite {
                meta: &meta,
                text,
                result: &result,
                nd: Some(&nd),
                q: Some(&q),
                revised: &Default::default(),
                stage: None,
                templates: None,
                exact: Default::default(),
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
        let rc = Recomputer::of(&s).unwrap();
        assert_eq!((stored(&s, CF_ND_SKETCH.name), stored(&s, CF_Q_SENT.name)), (0, 0));
        for (i, (sketch, sentences)) in computed.iter().enumerate() {
            let seq = i as u64 + 1;
            assert_eq!(*rc.sketch(&s, seq).unwrap().unwrap(), *sketch);
            for (idx, sentence) in sentences.iter().enumerate() {
                assert_eq!(rc.sentence(&s, seq, idx as u32).unwrap().unwrap().to_sentence(), *sentence);
            }
            assert!(rc.sentence(&s, seq, sentences.len() as u32).unwrap().is_none());
        }
        assert!(rc.sketch(&s, 9).unwrap().is_none() && rc.sentence(&s, 9, 0).unwrap().is_none());
        assert_eq!(rc.all_sentences(&s).unwrap().len(), 5, "each has 5 distinct words or more");
    }

    #[test]
    fn a_text_sketched_once_is_the_sketch_of_every_stored_copy_of_it() {
        let dir = tempfile::tempdir().unwrap();
        let computed = ingest(&Store::open(dir.path()).unwrap());
        let s = Store::open(dir.path()).unwrap();
        let rc = Recomputer::of(&s).unwrap();
        // The document being analysed tells its text's sketch: a stored document of
        // the same text gets it without a sketch of its own (a marked one shows it),
        // a document of another text does not.
        let mut marked = computed[0].0.clone();
        marked.mins[0] ^= 1;
        s.note_text_sketch(xxh3_128(TEXTS[0].as_bytes()), &Arc::new(marked.clone()));
        assert_eq!(*rc.sketch(&s, 1).unwrap().unwrap(), marked);
        assert_eq!(*rc.sketch(&s, 2).unwrap().unwrap(), computed[1].0);
        // A sketch computed again is noted under its text for the copies read next.
        assert_eq!(*s.text_sketch(xxh3_128(TEXTS[1].as_bytes())).unwrap(), computed[1].0);
    }

    /// A fresh process reads a document's n earlier copies: the first is read and
    /// split or sketched, the others are found by the text hash their metadata holds,
    /// their texts not read (here: deleted, and still answered).
    #[test]
    fn a_copy_read_before_is_found_by_its_metadata_without_its_text() {
        let dir = tempfile::tempdir().unwrap();
        let computed = ingest(&Store::open(dir.path()).unwrap());
        let s = Store::open(dir.path()).unwrap();
        let rc = Recomputer::of(&s).unwrap();
        let mut meta = crate::storage::store::tests::meta(4, "copy");
        meta.content_hash = format!("{:032x}", xxh3_128(TEXTS[0].as_bytes()));
        crate::storage::store::tests::put_bare(&s, &meta, TEXTS[0]);
        let s = {
            drop(s);
            Store::open(dir.path()).unwrap()
        };
        assert_eq!(*rc.sketch(&s, 1).unwrap().unwrap(), computed[0].0);
        assert_eq!(rc.sentence(&s, 1, 0).unwrap().unwrap().to_sentence(), computed[0].1[0]);
        let mut b = WriteBatch::default();
        s.delete(&mut b, CF_TEXT, &4);
        s.write(b, true).unwrap();
        assert_eq!(*rc.sketch(&s, 4).unwrap().unwrap(), computed[0].0);
        assert_eq!(rc.sentence(&s, 4, 1).unwrap().unwrap().to_sentence(), computed[0].1[1]);
        // A document whose metadata holds no hash of this build's (the test's "h") is
        // read: without its text it has neither.
        let mut b = WriteBatch::default();
        s.delete(&mut b, CF_TEXT, &2);
        s.write(b, true).unwrap();
        assert!(rc.sketch(&s, 2).unwrap().is_none() && rc.sentence(&s, 2, 0).unwrap().is_none());
    }

    #[test]
    fn the_schema_step_deletes_only_what_this_build_computes_alike() {
        let dir = tempfile::tempdir().unwrap();
        let computed = ingest(&Store::open(dir.path()).unwrap());
        let s = Store::open(dir.path()).unwrap();
        let rc = Recomputer::of(&s).unwrap();
        // As an older build stored them: document 1 as this build computes it,
        // document 2 otherwise (a sketch without its rate, a sentence cut elsewhere).
        let put_sketch = |seq: u64, sketch: &Sketch| {
            let mut b = WriteBatch::default();
            s.put(&mut b, CF_ND_SKETCH, &seq, sketch);
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
            assert_eq!(crate::storage::migrations::v16_recomputed::drop_recomputable(&s).unwrap(), (1, 1));
            assert_eq!((stored(&s, CF_ND_SKETCH.name), stored(&s, CF_Q_SENT.name)), (1, 2));
        }
        let s = {
            drop(s);
            Store::open(dir.path()).unwrap()
        };
        assert_eq!(*rc.sketch(&s, 2).unwrap().unwrap(), old_sketch, "what is kept is read");
        assert_eq!(rc.sentence(&s, 2, 1).unwrap().unwrap().to_sentence(), old_sentence);
        assert_eq!(rc.sentence(&s, 2, 0).unwrap().unwrap().to_sentence(), computed[1].1[0]);
        assert_eq!(*rc.sketch(&s, 1).unwrap().unwrap(), computed[0].0);
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
            let rc = Recomputer::new(terms, NearDupConfig::default(), QuoteConfig::default());
            for text in &texts {
                assert_eq!(rc.sentence_words(text), quote::words(&rc.split(text)), "{terms:?}: {text}");
            }
        }
    }
}
