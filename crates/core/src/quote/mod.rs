//! Quotation search: sentence-level reuse with qSign (Kim, Candan, Tatemura 2009).
//!
//! - **Sentences** ([`sentences`]): a sentence ends at `.`, `!` or `?` (with any closing
//!   quotes or brackets after it) followed by white space and then a capital letter, a
//!   digit, an opening quote or bracket, or the end; at a blank line; and before a line
//!   that starts a list item (`-`, `*`, `•`, `1.`, `2)`). A period does not end a
//!   sentence after a known abbreviation (Mr, Dr, e.g., U.S., Jan, ...) or a single
//!   letter (an initial), nor inside a number (3.14) or a word (example.com). Under
//!   [`crate::text::Terms::Unicode`] also at `。！？` and the other scripts'
//!   full stops wherever they stand, at a space between two Thai sentences, and at the
//!   line break after a headline or title: a first line ending without punctuation,
//!   followed by a line at least a quarter longer that starts as a sentence does
//!   (hard-wrapped prose keeps its sentences whole).
//! - **Signatures** (Section 2.1.1): each distinct word (case-folded term, as in
//!   [`crate::text`]) sets `l` of `m` bits (default 2 of 32), chosen by a seeded hash of
//!   its fingerprint; a sentence's signature is the OR of its words'.
//! - **Radius** (Section 2.1.2): for a sentence of n distinct words, d is the largest
//!   value in `0..=d_max` with `P_max_bit_diff(m, l, n, k+1, d) ≤ ρ_fp`: a sentence with
//!   more than k words of difference is a candidate with probability at most ρ_fp
//!   (defaults k = 6, ρ_fp = 0.1, d_max = 3; d = 0 when no value qualifies). With these
//!   defaults d is 3 for sentences of up to 9 distinct words (the formula alone would
//!   allow 4 below 8 words: d_max keeps the index fast), 2 for 10-12, 1 for 13-17 and 0
//!   from 18 on: a 32-bit signature of a long sentence is so dense that a few differing
//!   bits no longer tell an edit from another sentence. Long copied sentences are what
//!   the shingle table finds anyway. A fixed radius (or a larger d_max with 3 pieces)
//!   can be configured.
//! - **Edited long sentences** (beyond the paper): a sentence of at least 18 distinct
//!   words (d = 0 above) is indexed and searched by 3 part signatures instead of its
//!   full one: its words split into 3 groups by a seeded hash, each group signed under
//!   its own seed ([`part_signatures`]). A one-word edit changes at most two groups, so
//!   one part matches exactly (an exact copy matches all three); the candidates are
//!   verified by the same score as all others. The full signature of a long sentence is
//!   so dense that it mostly meets other long sentences: it is not indexed.
//! - **Clauses** (beyond the paper): a sentence that repeats one clause of a
//!   longer earlier sentence (a quotation inside an attribution, `"…," she said,
//!   adding …`; one item of a list; two sentences run together by a missing space) has
//!   no signature or part in common with it, and at a score of 0.8 or more (its words
//!   are all in the longer one) it was the most missed kind on news (32 of 36 misses
//!   against the naive scan). So the clauses of a sentence (its words between commas,
//!   colons, semicolons, dashes, brackets, quotation marks, stops that end no sentence
//!   and line breaks) of at least `min_words` words are indexed and searched too,
//!   pointing to the whole sentence, which is scored as a whole
//!   ([`QuoteConfig::clauses`]): by the exact signature of their words
//!   ([`exact_signature`]), as is the whole sentence, so that a sentence equal to a
//!   clause of another meets it. Their part signatures would meet too much: the pairs
//!   of a five-word clause are two or three common words (tried: on news the planted
//!   edited sentences of 10-17 words fell from 99.3% to 96.7% found, as the per-sentence
//!   cap of candidates filled with them).
//! - **Index** (replacing the paper's disk-based multidimensional tree): the signature is
//!   cut into `p` pieces (default 2 of 16 bits). For a search within d bits, pieces get
//!   probe radii `r_i` with `Σ (r_i + 1) ≥ d + 1` over the pieces used (generalized
//!   pigeonhole: if two signatures differ in at most d bits, some used piece differs in
//!   at most its `r_i`), so probing every value within `r_i` bits of those query pieces
//!   and checking the full distance finds exactly the sentences within d. For the
//!   defaults: 1 probe at d = 0, 2 at d = 1, 18 at d = 2, 34 at d = 3 ([`piece_radii`]). The probes are computed here ([`probes`]); the
//!   derived index (`crate::index`) keeps a bucket chain per piece value, bounded.
//! - **Score** (Section 2): `S(Q,R) = (|Q∩R|/|Q|) · Σ_{w∈Q∩R} log(N/df_w)` over
//!   distinct words, N the number of earlier documents and df_w the number of them
//!   containing w. Normalised by `S(Q,Q) = Σ_{w∈Q} log(N/df_w)` (a word unseen so far
//!   counts with df = 1), so a sentence whose words all reappear in R scores 1; a match
//!   is reported at `θ` (default 0.5, the paper's setting).
//!
//! Pure: no I/O.

use serde::{Deserialize, Serialize};

use crate::hash::mix;

mod packed;
mod split;

pub use packed::{DocSentences, SharedSentence};
pub use split::{sentence_spans, sentences, sentences_without_clauses};

/// Quotation-search parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QuoteConfig {
    /// Signature bits m (1-64).
    pub m: u32,
    /// Bits set per word l.
    pub l: u32,
    /// Word flexibility k of the radius formula.
    pub k_flex: u32,
    /// False-positive bound ρ_fp of the radius formula.
    pub fp_bound: f64,
    /// Largest radius (the index is built for it).
    pub d_max: u32,
    /// A fixed radius instead of the formula.
    pub radius: Option<u32>,
    /// Index pieces p.
    pub pieces: u32,
    /// Score threshold θ (normalised score, 0-1).
    pub threshold: f64,
    /// Sentences with fewer distinct words are neither indexed nor searched.
    pub min_words: u32,
    /// At most this many sources are kept per quoting sentence (best first), and a
    /// signature is indexed at most this many times (its earliest copies: those a
    /// search reports of a sentence repeated more often, `crate::index`).
    pub max_sources: u32,
    /// At most this many index entries within the radius are taken per probe (the
    /// oldest): a bound on boilerplate sentences repeated in thousands of documents.
    pub max_per_probe: u32,
    /// Seed of the word signatures.
    pub seed: u64,
    /// Sentences of at least this many distinct words are signed by part signatures
    /// ([`QuoteConfig::splits`], [`QuoteConfig::pairs`]) instead of one, and searched
    /// exactly (radius 0: one part of an edited copy is unchanged). Default 5, every
    /// sentence searched (34 probes of a short sentence's radius were most of
    /// the cost that grew with the collection); 18 before schema 8.
    pub split_words: u32,
    /// Part signatures of a long sentence: its words split into this many groups by a
    /// hash of each word, each group signed apart; a one-word edit changes at most two
    /// groups, so with 3 one part matches exactly. 0: off (the paper's behaviour).
    pub splits: u32,
    /// Sign each pair of the [`QuoteConfig::splits`] groups instead of each group:
    /// an edit changes at most two groups, so the pair of two others is
    /// unchanged, and a pair holds half the sentence's words, specific enough for
    /// sentences of 5-17 words, where a single group of a few common words matched
    /// thousands of sentences. Off in data directories made before schema 8.
    pub pairs: bool,
    /// At most this many candidates within the radius (the oldest first) are read and
    /// scored per sentence: what keeps the cost of a sentence from growing with the
    /// collection, whose near copies (boilerplate) grow with it. `u32::MAX`:
    /// all of them (data directories made before schema 8).
    pub max_candidates: u32,
    /// Index and search a sentence's clauses too ([`Sentence::clauses`] of at least
    /// `min_words` words, by [`exact_signature`]): a sentence that repeats one clause
    /// of a longer earlier sentence (a quotation inside an attribution, one item of a
    /// list) is found. Off in data directories made before schema 12.
    pub clauses: bool,
    /// When every search is exact ([`QuoteConfig::exact_only`]): a signature is indexed
    /// once, in the bucket a hash of all its bits picks, and a search reads that bucket
    /// alone; off, it is indexed under each of its pieces, in chains of buckets, for
    /// searches within a radius (`crate::index`), where an exact search reads one
    /// piece's chain and never the others'. Off in data directories made before
    /// schema 22.
    pub exact_index: bool,
}

impl Default for QuoteConfig {
    fn default() -> Self {
        QuoteConfig {
            m: 32,
            l: 2,
            k_flex: 6,
            fp_bound: 0.1,
            d_max: 3,
            radius: None,
            pieces: 2,
            threshold: 0.5,
            min_words: 5,
            max_sources: 10,
            max_per_probe: 256,
            seed: 0,
            split_words: 5,
            splits: 4,
            pairs: true,
            max_candidates: 16,
            clauses: true,
            exact_index: true,
        }
    }
}

impl QuoteConfig {
    /// The defaults before schema 8: 3 single groups from 18 words, no
    /// per-sentence cap; what an upgraded data directory keeps, and what the
    /// evaluations compare the defaults with.
    pub fn before_schema_8() -> QuoteConfig {
        QuoteConfig {
            split_words: 18,
            splits: 3,
            pairs: false,
            max_candidates: u32::MAX,
            clauses: false,
            exact_index: false,
            ..QuoteConfig::default()
        }
    }

    /// Whether the index is laid out for exact searches alone: [`QuoteConfig::exact_index`],
    /// and every search at radius 0 (every indexed sentence is signed by parts, or
    /// the radius is fixed at 0).
    pub fn exact_only(&self) -> bool {
        self.exact_index && (self.radius == Some(0) || self.splits > 0 && self.split_words <= self.min_words)
    }

    /// Checks that the parameters fit together.
    pub fn validate(&self) -> Result<(), String> {
        let ok = (1..=64).contains(&self.m)
            && self.l >= 1
            && self.l <= self.m
            && self.pieces >= 1
            && self.pieces <= self.m
            && self.m / self.pieces <= 24
            && self.radius.is_none_or(|r| r <= self.d_max)
            && self.splits <= 8
            && !(self.pairs && self.splits == 1)
            && self.max_candidates >= 1
            && (0.0..=1.0).contains(&self.threshold);
        if ok {
            Ok(())
        } else {
            Err(format!(
                "quotation parameters do not fit together (pieces of at most 24 bits, radius <= d_max): {self:?}"
            ))
        }
    }

    /// Bit range `[lo, hi)` of piece `p`.
    pub fn piece_range(&self, p: u32) -> (u32, u32) {
        (p * self.m / self.pieces, (p + 1) * self.m / self.pieces)
    }
}

/// A sentence: its byte span and its distinct words' fingerprints (sorted). Never
/// stored: the store splits a document's stored text again when a search reads its
/// sentences (schema 16), as a replay does to index them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sentence {
    pub start: u32,
    pub end: u32,
    pub words: Vec<u64>,
    /// The distinct words of each of its clauses (parts between commas, colons,
    /// dashes, brackets, quotation marks and line breaks), when it has two or more
    /// (searched for a new document; a source's were indexed when it came).
    pub clauses: Vec<Vec<u64>>,
}

/// The signature of one word: `l` distinct bits of `m`.
pub fn word_signature(cfg: &QuoteConfig, word: u64) -> u64 {
    let mut sig = 0u64;
    let mut h = mix(word ^ cfg.seed);
    let mut set = 0;
    let mut round = 0u64;
    while set < cfg.l {
        let bit = h % u64::from(cfg.m);
        if sig >> bit & 1 == 0 {
            sig |= 1 << bit;
            set += 1;
        }
        round += 1;
        h = mix(h ^ round);
    }
    sig
}

/// The signature of a sentence: the OR of its words' signatures.
pub fn signature(cfg: &QuoteConfig, words: &[u64]) -> u64 {
    words.iter().fold(0, |s, &w| s | word_signature(cfg, w))
}

/// `P_max_bit_diff(m, l, n, k, d)` of Section 2.1.2.
pub fn p_max_bit_diff(m: u32, l: u32, n: u32, k: u32, d: u32) -> f64 {
    let (m, l, n, k) = (f64::from(m), f64::from(l), f64::from(n), f64::from(k));
    let p = (-n * l / m).exp() * (1.0 - (-k * l / m).exp());
    let mut total = 0.0;
    let mut binom = 1.0f64; // C(m, t)
    for t in 0..=d {
        if t > 0 {
            binom *= (m - f64::from(t) + 1.0) / f64::from(t);
        }
        total += binom * p.powi(t as i32) * (1.0 - p).powf(m - f64::from(t));
    }
    total
}

/// The search radius for a sentence of `n` distinct words.
pub fn radius(cfg: &QuoteConfig, n: u32) -> u32 {
    if let Some(r) = cfg.radius {
        return r;
    }
    (0..=cfg.d_max).rev().find(|&d| p_max_bit_diff(cfg.m, cfg.l, n, cfg.k_flex + 1, d) <= cfg.fp_bound).unwrap_or(0)
}

/// The value of piece `p` of a signature.
pub fn piece(cfg: &QuoteConfig, sig: u64, p: u32) -> u32 {
    let (lo, hi) = cfg.piece_range(p);
    ((sig >> lo) & ((1u64 << (hi - lo)) - 1)) as u32
}

/// Probe radius of each piece for a search within `d ≤ d_max` bits: the fewest probes
/// such that `Σ (r_i + 1) ≥ d + 1` over the pieces used (a piece not used is `None`).
/// If every used piece differed by more than its radius, the signatures would differ
/// by at least `d + 1` bits, so some used piece is within its radius.
pub fn piece_radii(cfg: &QuoteConfig, d: u32) -> Vec<Option<u32>> {
    let p = cfg.pieces;
    let used = (d + 1).min(p);
    let extra = d + 1 - used; // radius units beyond 0, spread round-robin
    (0..p).map(|i| (i < used).then(|| extra / used + u32::from(i < extra % used))).collect()
}

/// Every (piece, value) to probe for a search within `d` bits of `sig`; with
/// [`QuoteConfig::exact_only`], the one [`exact_probe`].
pub fn probes(cfg: &QuoteConfig, sig: u64, d: u32) -> Vec<(u32, u32)> {
    if cfg.exact_only() {
        debug_assert_eq!(d, 0, "an index laid out for exact searches is searched exactly");
        return vec![exact_probe(sig)];
    }
    let mut out = Vec::new();
    for (p, r) in piece_radii(cfg, d.min(cfg.d_max)).into_iter().enumerate() {
        let Some(r) = r else { continue };
        let p = p as u32;
        let (lo, hi) = cfg.piece_range(p);
        let width = hi - lo;
        let v = piece(cfg, sig, p);
        // All subsets of at most r bit positions, flipped.
        fn rec(v: u32, from: u32, width: u32, left: u32, p: u32, out: &mut Vec<(u32, u32)>) {
            out.push((p, v));
            if left == 0 {
                return;
            }
            for b in from..width {
                rec(v ^ (1 << b), b + 1, width, left - 1, p, out);
            }
        }
        rec(v, 0, width, r, p, &mut out);
    }
    out
}

/// Where a signature is indexed, and searched, in an index laid out for exact searches
/// ([`QuoteConfig::exact_only`]): piece 0 and all its bits folded to 32 (the index
/// hashes them to a bucket).
pub fn exact_probe(sig: u64) -> (u32, u32) {
    (0, (sig ^ sig >> 32) as u32)
}

/// The (piece, value) under which a signature is indexed: each piece's value, or the one
/// [`exact_probe`] ([`QuoteConfig::exact_only`]).
pub fn entries(cfg: &QuoteConfig, sig: u64) -> Vec<(u32, u32)> {
    if cfg.exact_only() {
        return vec![exact_probe(sig)];
    }
    (0..cfg.pieces).map(|p| (p, piece(cfg, sig, p))).collect()
}

/// One earlier sentence a sentence reuses.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QuoteSource {
    pub seq: u64,
    /// Index of the sentence in its document.
    pub sentence: u32,
    /// Differing signature bits.
    pub distance: u32,
    /// Normalised word-overlap score.
    pub score: f64,
}

/// A sentence of a document with the earlier sentences it reuses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quotation {
    pub start_byte: u32,
    pub end_byte: u32,
    pub sentence: u32,
    pub sources: Vec<QuoteSource>,
}

/// What quotation search needs from the index of the earlier documents' sentences
/// (the store implements it).
pub trait SentenceIndex {
    /// The index's error.
    type Error;
    /// Documents counted in the document frequencies.
    fn documents(&self) -> Result<u64, Self::Error>;
    /// Documents (so far) containing `word`.
    fn df(&self, word: u64) -> Result<u64, Self::Error>;
    /// Every indexed sentence within `d` bits of `sig`: (seq, sentence, distance), sorted;
    /// and how many the per-probe cap left out.
    #[allow(clippy::type_complexity)] // one plain tuple, named in the line above
    fn candidates(&self, cfg: &QuoteConfig, sig: u64, d: u32) -> Result<(Vec<(u64, u32, u32)>, u64), Self::Error>;
    /// An indexed sentence (shared: a cache hands out its document's).
    fn sentence(&self, seq: u64, idx: u32) -> Result<Option<SharedSentence>, Self::Error>;
}

/// The sentences of `sentences` that are indexed, with their indexes, without their
/// clauses (a later search reads a document's sentences, whose clauses were indexed).
pub fn indexed_sentences(cfg: &QuoteConfig, sentences: impl IntoIterator<Item = Sentence>) -> DocSentences {
    DocSentences::new((0u32..).zip(sentences).filter(|(_, s)| is_indexed(cfg, s)))
}

/// Whether a sentence is indexed and searched: `min_words` distinct words or more
/// (what [`signatures`] signs and what a store keeps of a document for later
/// searches, [`indexed_sentences`], must be the same sentences).
pub fn is_indexed(cfg: &QuoteConfig, s: &Sentence) -> bool {
    s.words.len() as u32 >= cfg.min_words
}

/// A document's quotation search: what to index and what it found.
#[derive(Debug, Clone)]
pub struct QuoteFind {
    /// (sentence index, signature) of their index entries ([`signatures`]).
    pub signatures: Vec<(u32, u64)>,
    /// The document's indexed sentences: what a later search reads of it
    /// ([`SentenceIndex::sentence`]).
    pub sentences: DocSentences,
    /// The document's distinct words (for the document frequencies).
    pub words: Vec<u64>,
    /// The quoting sentences with their sources, best first.
    pub found: Vec<Quotation>,
    /// Quotations the other way: sentences of documents that arrived before
    /// this one but were published after it, quoting its sentences. (quoting document,
    /// its quoting sentences, by sentence index, with their sources here, best first.)
    pub late: Vec<(u64, Vec<Quotation>)>,
    /// Candidates scored (for evaluation).
    pub candidates: u64,
    /// Index entries within the radius the per-probe cap left out, and candidates the
    /// per-sentence cap ([`QuoteConfig::max_candidates`]) left out (for evaluation).
    pub capped: u64,
}

/// Searches the quotations of document `seq`'s sentences among the earlier documents'
/// in `index`: candidates by signature within each sentence's radius, scored by word
/// overlap weighted by idf, kept at the threshold, best `max_sources` first.
///
/// `later(c)` tells whether candidate document `c`, which arrived before, was published
/// after this one: then its sentence is the quoting one, scored from its
/// side (the score is not symmetric: it is normalised by the quoting sentence), and
/// the pair goes to [`QuoteFind::late`]. With `|_| false`, arrival order.
pub fn find<I: SentenceIndex>(
    index: &I,
    cfg: &QuoteConfig,
    seq: u64,
    sentences: Vec<Sentence>,
    later: impl Fn(u64) -> bool,
) -> Result<QuoteFind, I::Error> {
    let n_docs = index.documents()?;
    let mut dfs: crate::hash::MixMap<u64, u64> = Default::default();
    let mut df = |w: u64| -> Result<u64, I::Error> {
        if let Some(&v) = dfs.get(&w) {
            return Ok(v);
        }
        let v = index.df(w)?;
        dfs.insert(w, v);
        Ok(v)
    };
    let mut found = Vec::new();
    // (quoting document, its sentence, span) → sources here.
    let mut late: std::collections::BTreeMap<(u64, u32), (u32, u32, Vec<QuoteSource>)> = Default::default();
    let (mut candidates, mut capped) = (0u64, 0u64);
    // The same sentences and signatures a replay indexes ([`signatures`]): a sentence's
    // full signature, or a long one's part signatures.
    let sigs = signatures(cfg, &sentences);
    for entries in sigs.chunk_by(|a, b| a.0 == b.0) {
        let i = entries[0].0;
        let s = &sentences[i as usize];
        if n_docs == 0 {
            continue;
        }
        // The idf of each of the sentence's words, in the order of its sorted words.
        let mut idfs = Vec::with_capacity(s.words.len());
        for &w in &s.words {
            let f = df(w)?.max(1);
            idfs.push((n_docs as f64 / f as f64).ln().max(0.0));
        }
        let scorer = Scorer::new(&s.words, idfs);
        let d = search_radius(cfg, s);
        let mut cands = Vec::new();
        for &(_, sig) in entries {
            let (c, left_out) = index.candidates(cfg, sig, d)?;
            cands.extend(c.into_iter().filter(|&(cseq, _, _)| cseq < seq).map(|(cseq, cidx, _)| (cseq, cidx)));
            capped += left_out;
        }
        let ranked = if cfg.pairs {
            rank(cands)
        } else {
            cands.sort_unstable();
            cands.dedup();
            cands
        };
        let mut sources = Vec::new();
        // The sentence's full signature, for the distances of the sources it has.
        let mut full = None;
        // Without pairs (schema 7's search, oldest first): sources with the highest
        // possible score (1): once there are `max_sources` of them, no later candidate
        // (in ascending order, so older ones win ties) can make the cut; a boilerplate
        // sentence stops after its first copies instead of reading hundreds. (With
        // `max_sources` 0 nothing stops early: every source found still makes the
        // sentence a quotation, with its sources cut to none.) In rank order a later
        // candidate may be older, so there the per-sentence cap bounds the reads.
        let mut perfect = 0;
        for (n, &(cseq, cidx)) in ranked.iter().enumerate() {
            if !cfg.pairs && perfect > 0 && perfect >= cfg.max_sources {
                break;
            }
            if n as u64 >= u64::from(cfg.max_candidates) {
                capped += (ranked.len() - n) as u64;
                break;
            }
            candidates += 1;
            if let Some(other) = index.sentence(cseq, cidx)? {
                if later(cseq) {
                    let mut idfs = Vec::with_capacity(other.words().len());
                    for &w in other.words() {
                        idfs.push((n_docs as f64 / df(w)?.max(1) as f64).ln().max(0.0));
                    }
                    let sc = Scorer::new(other.words(), idfs).score(&s.words);
                    if sc >= cfg.threshold {
                        let full = *full.get_or_insert_with(|| signature(cfg, &s.words));
                        let distance = (full ^ signature(cfg, other.words())).count_ones();
                        let source = QuoteSource { seq, sentence: i, distance, score: sc };
                        late.entry((cseq, cidx)).or_insert((other.start(), other.end(), Vec::new())).2.push(source);
                    }
                    continue;
                }
                let sc = scorer.score(other.words());
                if sc >= cfg.threshold {
                    let full = *full.get_or_insert_with(|| signature(cfg, &s.words));
                    let distance = (full ^ signature(cfg, other.words())).count_ones();
                    sources.push(QuoteSource { seq: cseq, sentence: cidx, distance, score: sc });
                    perfect += u32::from(sc >= 1.0);
                }
            }
        }
        if !sources.is_empty() {
            sort_sources(&mut sources);
            sources.truncate(cfg.max_sources as usize);
            found.push(Quotation { start_byte: s.start, end_byte: s.end, sentence: i, sources });
        }
    }
    let mut by_doc: Vec<(u64, Vec<Quotation>)> = Vec::new();
    for ((doc, sentence), (start_byte, end_byte, mut sources)) in late {
        sort_sources(&mut sources);
        sources.truncate(cfg.max_sources as usize);
        let q = Quotation { start_byte, end_byte, sentence, sources };
        match by_doc.last_mut() {
            Some((d, qs)) if *d == doc => qs.push(q),
            _ => by_doc.push((doc, vec![q])),
        }
    }
    let words = words(&sentences);
    let sentences = indexed_sentences(cfg, sentences);
    Ok(QuoteFind { signatures: sigs, sentences, words, found, late: by_doc, candidates, capped })
}

/// A sentence's sources in their order: best score first, then by document and
/// sentence.
fn sort_sources(sources: &mut [QuoteSource]) {
    sources.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.seq.cmp(&b.seq)).then(a.sentence.cmp(&b.sentence)));
}

/// Candidates (seq, sentence), one entry per signature that found them, in the order
/// the per-sentence cap reads them with pairs: those matching more of a sentence's parts first
/// (an edited copy keeps all but one or two of them; a sentence sharing a few common
/// words, one), then the oldest; each once.
pub fn rank(mut cands: Vec<(u64, u32)>) -> Vec<(u64, u32)> {
    cands.sort_unstable();
    let mut counted: Vec<(std::cmp::Reverse<usize>, u64, u32)> =
        cands.chunk_by(|a, b| a == b).map(|same| (std::cmp::Reverse(same.len()), same[0].0, same[0].1)).collect();
    counted.sort_unstable();
    counted.into_iter().map(|(_, seq, idx)| (seq, idx)).collect()
}

/// The distinct words of a document's sentences, sorted (what its document
/// frequencies count).
pub fn words(sentences: &[Sentence]) -> Vec<u64> {
    distinct(sentences.iter().flat_map(|s| s.words.iter().copied()).collect())
}

/// [`words`] of a text's sentences from its terms, without splitting it: every term is
/// in a sentence, whole. A term is a run of letters and digits (`crate::text::Terms`),
/// and the splitter cuts at line breaks, spaces and punctuation only, keeping every
/// character but the spaces around a sentence; what a deployment's partition counts of
/// another partition's document (the split was a quarter of that).
pub fn words_of_terms(tokens: &[crate::text::Token]) -> Vec<u64> {
    distinct(tokens.iter().map(|t| t.fp).collect())
}

fn distinct(mut words: Vec<u64>) -> Vec<u64> {
    words.sort_unstable();
    words.dedup();
    words
}

/// The radius a sentence's signatures are searched within: the sentence's radius; a
/// part signature exactly (one part of an edited copy is unchanged: [`part_signatures`]).
pub fn search_radius(cfg: &QuoteConfig, s: &Sentence) -> u32 {
    if parted(cfg, s.words.len()) {
        0
    } else {
        radius(cfg, s.words.len() as u32)
    }
}

/// Every (signature, radius) [`find`] asks [`SentenceIndex::candidates`] about for a
/// document of `sentences` (all of them, as split), in its order: what a shard worker
/// answers for it ahead of the search (`textorigin_core::index::IndexAnswers`).
pub fn searches(cfg: &QuoteConfig, sentences: &[Sentence]) -> Vec<(u64, u32)> {
    signatures(cfg, sentences).into_iter().map(|(i, sig)| (sig, search_radius(cfg, &sentences[i as usize]))).collect()
}

/// (sentence number, signature) of the sentences a document indexes: those of at
/// least `min_words` distinct words, each with its full signature, or, from
/// `split_words` on, its part signatures instead ([`part_signatures`]): an exact or
/// edited copy matches a part exactly, while the dense full signatures of long
/// sentences mostly meet other long sentences; with [`QuoteConfig::clauses`] a signed
/// by parts also has the exact signature ([`exact_signature`]) of its words and of each
/// of its clauses of at least `min_words` words. The same list is indexed and searched
/// with.
pub fn signatures(cfg: &QuoteConfig, sentences: &[Sentence]) -> Vec<(u32, u64)> {
    let mut out = Vec::new();
    for (i, s) in sentences.iter().enumerate().filter(|(_, s)| is_indexed(cfg, s)) {
        let parts = part_signatures(cfg, &s.words);
        if parts.is_empty() {
            out.push((i as u32, signature(cfg, &s.words)));
            continue;
        }
        out.extend(parts.into_iter().map(|sig| (i as u32, sig)));
        if cfg.clauses {
            out.push((i as u32, exact_signature(cfg, &s.words)));
            let clauses = s.clauses.iter().filter(|c| c.len() as u32 >= cfg.min_words && c.len() < s.words.len());
            out.extend(clauses.map(|c| (i as u32, exact_signature(cfg, c))));
        }
    }
    out
}

/// The signature of exactly this set of words (sorted, distinct): a seeded hash of all
/// of them, searched exactly. A clause indexed by it is found by a sentence (or a
/// clause) of the same words and, unlike its part signatures, by no sentence that
/// shares a few common words with it: a clause of five words has pairs of two or three.
pub fn exact_signature(cfg: &QuoteConfig, words: &[u64]) -> u64 {
    let bits = if cfg.m == 64 { u64::MAX } else { (1u64 << cfg.m) - 1 };
    (mix(words.iter().fold(cfg.seed ^ EXACT_SEED, |h, &w| mix(h ^ w))) & bits).max(1)
}

/// The part signatures of a long sentence (none below `split_words` or with `splits`
/// 0): its words split into `splits` groups by a seeded hash, each group's signature
/// under a seed of its own, so that parts and full signatures do not meet by design.
/// A word changed changes its group and the new word's: with three groups, one stays,
/// unless the sentence had an empty group (3·(2/3)^n of sentences of n words: 0.2% at
/// 18, 0.002% at 30), whose edit can change both of its parts.
pub fn part_signatures(cfg: &QuoteConfig, words: &[u64]) -> Vec<u64> {
    if !parted(cfg, words.len()) {
        return Vec::new();
    }
    let group = |w: u64| mix(w ^ cfg.seed ^ PART_SEED) % u64::from(cfg.splits);
    if cfg.pairs {
        let mut out = Vec::new();
        for a in 0..u64::from(cfg.splits) {
            for b in a + 1..u64::from(cfg.splits) {
                let part = QuoteConfig { seed: mix(cfg.seed ^ PAIR_SEED ^ (a << 8 | b)), ..cfg.clone() };
                let sig = words
                    .iter()
                    .filter(|&&w| [a, b].contains(&group(w)))
                    .fold(0, |sig, &w| sig | word_signature(&part, w));
                // Both groups empty: it would meet every other such pair. Searched only
                // exactly, a pair's signature is indexed hashed: a few words' bits are
                // sparse, and their raw pieces would crowd a few chains of the index.
                if sig != 0 {
                    let bits = if cfg.m == 64 { u64::MAX } else { (1u64 << cfg.m) - 1 };
                    out.push((mix(sig) & bits).max(1));
                }
            }
        }
        return out;
    }
    (0..cfg.splits)
        .map(|g| {
            let part = QuoteConfig { seed: mix(cfg.seed ^ PART_SEED ^ u64::from(g)), ..cfg.clone() };
            let group =
                words.iter().filter(|&&w| mix(w ^ cfg.seed ^ PART_SEED) % u64::from(cfg.splits) == u64::from(g));
            group.fold(0, |sig, &w| sig | word_signature(&part, w))
        })
        // An empty group would meet every other empty group.
        .filter(|&sig| sig != 0)
        .collect()
}

/// Whether a sentence of `n` distinct words is signed by parts (and searched exactly).
pub fn parted(cfg: &QuoteConfig, n: usize) -> bool {
    cfg.splits > 0 && n as u64 >= u64::from(cfg.split_words)
}

/// Seeds the part signatures' grouping and signatures apart from the full ones.
const PART_SEED: u64 = 0x7061_7274_7369_6773;
/// Seeds the signatures of pairs of groups apart from those of single groups.
const PAIR_SEED: u64 = 0x7061_6972_7369_6773;
/// The seed of [`exact_signature`] ("exactsig").
const EXACT_SEED: u64 = 0x6578_6163_7473_6967;

/// Normalised word-overlap score of query words `q` against `r` (both sorted, distinct);
/// `idf(w)` gives `log(N/df_w)`.
pub fn score(q: &[u64], r: &[u64], idf: impl Fn(u64) -> f64) -> f64 {
    Scorer::with_idf(q, idf).score(r)
}

/// [`score`] of one query sentence against many: its words' idfs and their sum computed
/// once (the same values summed in the same order, so the same scores to the bit).
pub struct Scorer<'a> {
    q: &'a [u64],
    idfs: Vec<f64>,
    full: f64,
}

impl<'a> Scorer<'a> {
    /// `idfs[i]` is the idf of `q[i]`.
    pub fn new(q: &'a [u64], idfs: Vec<f64>) -> Self {
        let full = idfs.iter().sum();
        Scorer { q, idfs, full }
    }

    /// A scorer with `idf(w)` giving the idf of each word.
    pub fn with_idf(q: &'a [u64], idf: impl Fn(u64) -> f64) -> Self {
        Self::new(q, q.iter().map(|&w| idf(w)).collect())
    }

    /// The score of the query words against `r` (sorted, distinct).
    pub fn score(&self, r: &[u64]) -> f64 {
        let q = self.q;
        if q.is_empty() {
            return 0.0;
        }
        let (mut i, mut j) = (0, 0);
        let (mut shared, mut sum) = (0usize, 0.0);
        while i < q.len() && j < r.len() {
            match q[i].cmp(&r[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    shared += 1;
                    sum += self.idfs[i];
                    i += 1;
                    j += 1;
                }
            }
        }
        if self.full <= 0.0 {
            return if shared == q.len() { 1.0 } else { 0.0 };
        }
        (shared as f64 / q.len() as f64) * sum / self.full
    }
}

#[cfg(test)]
mod tests;
