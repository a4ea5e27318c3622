//! A document's questions to the signature and near-duplicate sections answered ahead
//! of its searches, part by part (`docs/SCALE-OUT.md`, "The derived indexes
//! in the workers"): a shard worker holding an [`IndexPart`] answers them as of the
//! document before, and the partition analysing the document merges the S answers
//! ([`IndexAnswers::merge`]) into what its searches read ([`Answered`]) instead of
//! those sections of its own region. The document frequencies stay whole in every
//! partition: a search reads those of words it learns only from its candidates (a
//! later-published candidate's sentence is scored from its side, `quote::find`).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::{nd_keys, IndexAdd, IndexPart, IndexShape, Indexes};
use crate::neardup::{NearDupConfig, Sketch};
use crate::quote::{self, QuoteConfig, Sentence};

/// What a document asks of the signature and near-duplicate sections: each (signature,
/// radius) its quotation search probes ([`quote::searches`]) and its near-duplicate
/// keys ([`nd_keys`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexQueries {
    pub quotes: Vec<(u64, u32)>,
    pub nd_keys: Vec<u64>,
}

impl IndexQueries {
    /// The questions of a document of `sentences` (all of them, as split; none without
    /// quotation search) and `sketch` (none without near-duplicate detection).
    pub fn of(q: &QuoteConfig, nd: &NearDupConfig, sentences: &[Sentence], sketch: Option<&Sketch>) -> IndexQueries {
        IndexQueries {
            quotes: quote::searches(q, sentences),
            nd_keys: sketch.map(|s| nd_keys(nd, s)).unwrap_or_default(),
        }
    }
}

/// Quotation candidates: (seq, sentence, distance).
type Candidates = Vec<(u64, u32, u32)>;

/// What a shard worker does with a document in its part of the signature and
/// near-duplicate sections: answer its questions, then add its keys (its words are
/// the partitions': [`IndexAdd::words_only`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexWork {
    pub queries: IndexQueries,
    /// Its signatures and near-duplicate keys (no words).
    pub add: IndexAdd,
}

impl IndexWork {
    /// The work of a document of `sentences` (all of them, as split; none without
    /// quotation search) and `sketch` (none without near-duplicate detection), as its
    /// analysis asks and adds.
    pub fn of(q: &QuoteConfig, nd: &NearDupConfig, sentences: &[Sentence], sketch: Option<&Sketch>) -> IndexWork {
        let queries = IndexQueries::of(q, nd, sentences, sketch);
        let add = IndexAdd {
            words: Vec::new(),
            signatures: quote::signatures(q, sentences),
            nd_keys: queries.nd_keys.clone(),
        };
        IndexWork { queries, add }
    }

    /// What `part` of a region of `shape` answers and adds of this work: the searches
    /// with a probe whose chain it holds, the signatures with a piece it holds, the
    /// near-duplicate keys and words it holds. Its answers and adds are those of the
    /// whole work ([`Indexes::answer_part`] and [`Indexes::add_part`] skip the rest):
    /// what `cluster submit --prepared` sends each shard.
    pub fn part(&self, q: &QuoteConfig, shape: &IndexShape, part: IndexPart) -> IndexWork {
        let probes_held =
            |sig: u64, d: u32| quote::probes(q, sig, d).iter().any(|&(p, v)| part.holds_probe(shape, p, v));
        let entries_held = |sig: u64| quote::entries(q, sig).into_iter().any(|(p, v)| part.holds_probe(shape, p, v));
        let keys = |keys: &[u64]| keys.iter().copied().filter(|&k| part.holds_key(shape, k)).collect();
        IndexWork {
            queries: IndexQueries {
                quotes: self.queries.quotes.iter().copied().filter(|&(sig, d)| probes_held(sig, d)).collect(),
                nd_keys: keys(&self.queries.nd_keys),
            },
            add: IndexAdd {
                words: self.add.words.iter().copied().filter(|&w| part.holds_word(shape, w)).collect(),
                signatures: self.add.signatures.iter().copied().filter(|&(_, sig)| entries_held(sig)).collect(),
                nd_keys: keys(&self.add.nd_keys),
            },
        }
    }
}

/// The candidates of one (signature, radius): (seq, sentence, distance), sorted, and
/// how many the per-probe cap left out ([`Indexes::quote_candidates`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuoteAnswer {
    pub sig: u64,
    pub radius: u32,
    pub candidates: Vec<(u64, u32, u32)>,
    pub capped: u64,
}

/// The answers of an index part, or of every part merged, to one document's
/// [`IndexQueries`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexAnswers {
    /// One per (signature, radius) asked, ascending by them, each once.
    pub quotes: Vec<QuoteAnswer>,
    /// The earlier documents sharing a near-duplicate key with it, ascending
    /// ([`Indexes::nd_candidates`]).
    pub near_dups: Vec<u64>,
}

impl<M: AsRef<[u8]>> Indexes<M> {
    /// What `part` of the region answers to document `seq`'s `queries`: every
    /// (signature, radius) asked, through the probes whose chains it holds, and the
    /// candidates of the near-duplicate keys it holds.
    pub fn answer_part(
        &self,
        (q, nd): (&QuoteConfig, &NearDupConfig),
        seq: u64,
        queries: &IndexQueries,
        part: IndexPart,
    ) -> IndexAnswers {
        let mut asked = queries.quotes.clone();
        asked.sort_unstable();
        asked.dedup();
        let quotes = asked
            .into_iter()
            .map(|(sig, radius)| {
                let (candidates, capped) = self.quote_candidates_part(q, sig, radius, part);
                QuoteAnswer { sig, radius, candidates, capped }
            })
            .collect();
        let keys: Vec<u64> = queries.nd_keys.iter().copied().filter(|&k| part.holds_key(&self.shape, k)).collect();
        IndexAnswers { quotes, near_dups: self.nd_candidates(nd, seq, &keys).into_iter().collect() }
    }
}

impl IndexAnswers {
    /// The parts' answers together, as the whole region answers: each (signature,
    /// radius)'s candidates concatenated, sorted and deduplicated, what the caps left
    /// out summed; the near-duplicate candidates united.
    pub fn merge(parts: impl IntoIterator<Item = IndexAnswers>) -> IndexAnswers {
        let mut quotes: BTreeMap<(u64, u32), (Candidates, u64)> = BTreeMap::new();
        let mut near_dups = BTreeSet::new();
        for part in parts {
            for a in part.quotes {
                let e = quotes.entry((a.sig, a.radius)).or_default();
                e.0.extend(a.candidates);
                e.1 += a.capped;
            }
            near_dups.extend(part.near_dups);
        }
        let quotes = quotes
            .into_iter()
            .map(|((sig, radius), (mut candidates, capped))| {
                candidates.sort_unstable();
                candidates.dedup();
                QuoteAnswer { sig, radius, candidates, capped }
            })
            .collect();
        IndexAnswers { quotes, near_dups: near_dups.into_iter().collect() }
    }

    fn quote(&self, sig: u64, radius: u32) -> Option<&QuoteAnswer> {
        let i = self.quotes.binary_search_by_key(&(sig, radius), |a| (a.sig, a.radius)).ok()?;
        Some(&self.quotes[i])
    }
}

/// A question the answers given for a document do not cover (its shards and its
/// partition split its text differently: builds or configurations that differ).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the shards' index answers lack the candidates of signature {sig:#x} within {radius} bits")]
pub struct Unanswered {
    pub sig: u64,
    pub radius: u32,
}

/// What the searches of a document read of the derived indexes: the document
/// frequencies, and the candidates of its signatures and near-duplicate keys.
pub trait IndexLookup {
    /// Documents counted in the document frequencies.
    fn documents(&self) -> u64;
    /// Documents containing `word`.
    fn df(&self, word: u64) -> u64;
    /// [`Indexes::quote_candidates`].
    #[allow(clippy::type_complexity)] // one plain tuple, named in the line above
    fn quote_candidates(&self, cfg: &QuoteConfig, sig: u64, d: u32) -> Result<(Vec<(u64, u32, u32)>, u64), Unanswered>;
    /// [`Indexes::nd_candidates`] of document `seq`'s keys `keys`.
    fn nd_candidates(&self, cfg: &NearDupConfig, seq: u64, keys: &[u64]) -> BTreeSet<u64>;
}

impl<M: AsRef<[u8]>> IndexLookup for Indexes<M> {
    fn documents(&self) -> u64 {
        Indexes::documents(self)
    }

    fn df(&self, word: u64) -> u64 {
        Indexes::df(self, word)
    }

    fn quote_candidates(&self, cfg: &QuoteConfig, sig: u64, d: u32) -> Result<(Vec<(u64, u32, u32)>, u64), Unanswered> {
        Ok(Indexes::quote_candidates(self, cfg, sig, d))
    }

    fn nd_candidates(&self, cfg: &NearDupConfig, seq: u64, keys: &[u64]) -> BTreeSet<u64> {
        Indexes::nd_candidates(self, cfg, seq, keys)
    }
}

/// A document's searches through answers given for it (merged, [`IndexAnswers::merge`])
/// and the document frequencies of a region of one's own.
pub struct Answered<'a, M> {
    pub frequencies: &'a Indexes<M>,
    pub answers: &'a IndexAnswers,
}

impl<M: AsRef<[u8]>> IndexLookup for Answered<'_, M> {
    fn documents(&self) -> u64 {
        self.frequencies.documents()
    }

    fn df(&self, word: u64) -> u64 {
        self.frequencies.df(word)
    }

    fn quote_candidates(&self, _: &QuoteConfig, sig: u64, d: u32) -> Result<(Vec<(u64, u32, u32)>, u64), Unanswered> {
        let a = self.answers.quote(sig, d).ok_or(Unanswered { sig, radius: d })?;
        Ok((a.candidates.clone(), a.capped))
    }

    /// The answers' candidates: given for this document's keys.
    fn nd_candidates(&self, _: &NearDupConfig, seq: u64, _: &[u64]) -> BTreeSet<u64> {
        self.answers.near_dups.iter().copied().filter(|&s| s < seq).collect()
    }
}
