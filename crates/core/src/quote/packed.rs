//! A document's indexed sentences as later searches read them, packed in two arrays
//! (the store caches them in a bound of bytes: `textorigin_store`'s quotation cache).

use std::borrow::Borrow;
use std::sync::Arc;

use super::Sentence;

/// A document's indexed sentences (those of `min_words` distinct words or more:
/// [`super::indexed_sentences`]) with their indexes, ascending, shared: a search reads a
/// document's once for all its candidates there.
///
/// Packed in two allocations (each sentence's index, span and the end of its words
/// in one array, every word in the other): the store keeps the sentences of the
/// documents candidates come from in a cache bounded in bytes, and a sentence weighs
/// 16 bytes beside its words here against 64 as a [`Sentence`].
#[derive(Debug, Clone)]
pub struct DocSentences(Arc<Packed>);

#[derive(Debug)]
struct Packed {
    /// (sentence index, start byte, end byte, end of its words in `words`).
    spans: Box<[(u32, u32, u32, u32)]>,
    words: Box<[u64]>,
}

impl DocSentences {
    /// Packs sentences given with their indexes, ascending (their clauses are not kept).
    pub fn new<S: Borrow<Sentence>>(sentences: impl IntoIterator<Item = (u32, S)>) -> DocSentences {
        let mut spans: Vec<(u32, u32, u32, u32)> = Vec::new();
        let mut words = Vec::new();
        for (i, s) in sentences {
            let s = s.borrow();
            debug_assert!(spans.last().is_none_or(|&(last, ..)| last < i), "sentence indexes ascend");
            words.extend_from_slice(&s.words);
            spans.push((i, s.start, s.end, words.len() as u32));
        }
        DocSentences(Arc::new(Packed { spans: spans.into(), words: words.into() }))
    }

    /// How many sentences.
    pub fn len(&self) -> usize {
        self.0.spans.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.0.spans.is_empty()
    }

    /// Sentence `idx`, if it is one of these.
    pub fn get(&self, idx: u32) -> Option<SharedSentence> {
        SharedSentence::new(self.clone(), idx)
    }

    /// The sentences with their indexes, ascending (without clauses).
    pub fn iter(&self) -> impl Iterator<Item = (u32, Sentence)> + '_ {
        (0..self.len()).map(|at| {
            let s = SharedSentence { all: self.clone(), at };
            (s.index(), s.to_sentence())
        })
    }

    /// Bytes the sentences take (their two arrays; the caller adds its own overhead).
    pub fn bytes(&self) -> usize {
        std::mem::size_of_val(&*self.0.spans) + std::mem::size_of_val(&*self.0.words)
    }
}

/// One indexed sentence of a document, shared ([`DocSentences`]).
#[derive(Debug, Clone)]
pub struct SharedSentence {
    all: DocSentences,
    at: usize,
}

impl SharedSentence {
    /// Sentence `idx` of `all`, if it is there ([`DocSentences::get`]).
    fn new(all: DocSentences, idx: u32) -> Option<SharedSentence> {
        let at = all.0.spans.binary_search_by_key(&idx, |e| e.0).ok()?;
        Some(SharedSentence { all, at })
    }

    /// Its index among its document's sentences.
    pub fn index(&self) -> u32 {
        self.all.0.spans[self.at].0
    }

    /// Its first byte in its document's text.
    pub fn start(&self) -> u32 {
        self.all.0.spans[self.at].1
    }

    /// The byte after its last.
    pub fn end(&self) -> u32 {
        self.all.0.spans[self.at].2
    }

    /// Its distinct words, sorted ([`Sentence::words`]).
    pub fn words(&self) -> &[u64] {
        let from = if self.at == 0 { 0 } else { self.all.0.spans[self.at - 1].3 as usize };
        &self.all.0.words[from..self.all.0.spans[self.at].3 as usize]
    }

    /// It as a [`Sentence`] of its own (without clauses).
    pub fn to_sentence(&self) -> Sentence {
        Sentence { start: self.start(), end: self.end(), words: self.words().to_vec(), clauses: Vec::new() }
    }
}
