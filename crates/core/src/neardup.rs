//! Near-duplicates: sketches of a document and the verdicts comparing two sketches.
//!
//! Implements, for every document against all earlier ones:
//! - **Exact duplicates**: xxh3-128 of the token fingerprint sequence.
//! - **Broder (B)** (Broder's slides "Algorithms for duplicate documents"; Henzinger
//!   2006, Section 2): `m = 84` min-values of the document's k-shingle set (k = 8 in
//!   the papers, 3 by default here: see Defaults)
//!   under 84 hash functions, grouped into `l = 6` supershingles of 14 min-values each
//!   (xxh3 of the 14 values). B-similar: at least 2 supershingles agree. The
//!   resemblance estimate is the fraction of agreeing min-values.
//! - **Charikar (C)** (Henzinger 2006, Section 2): a 384-bit random projection of the
//!   token sequence: every token adds its ±1 vector (weighted by its count), positive
//!   sums become 1. C-similarity = agreeing bits; C-similar at ≥ 372. Candidates come
//!   from a piece index: the 384 bits are cut into `384 − 372 + 1 = 13` pieces, so two
//!   sketches within 12 differing bits agree exactly on at least one piece
//!   (pigeonhole).
//! - **Combined** (Henzinger 2006, Section 5): B-similar pairs kept when their
//!   C-similarity is at least 355.
//! - **Adaptive sampling** (Ye, Wen, Ma, Section 6): the shingles fed to the min-hashes
//!   are sampled by fingerprint (`fp mod n == 0`) with a ratio `1/n` chosen by document
//!   size: more for short documents, less for long ones. Default groups (tokens → n):
//!   below 500 → 1 (all), below 3000 → 2, below 10000 → 4, else 8. A sample that
//!   comes out empty falls back to all shingles. Beyond the paper: two near-identical
//!   documents on either side of a boundary (480 and 520 tokens) would be compared on
//!   samples of different density (estimate ≈ 0.5), so a document whose near-duplicates
//!   may reach the next group (at least `threshold − margin` of its first size) also
//!   keeps min-values at the next group's ratio; a pair one group apart is compared,
//!   and indexed, at the coarser ratio. Pairs further apart are below the threshold.
//! - **The default verdict** answers "which earlier documents are near-copies of this
//!   one" at Jaccard threshold θ of the k-shingle sets: candidates from LSH bands of
//!   the min-values, from the supershingles, the SimHash pieces and the exact hash. The
//!   bands are tuned to θ ([`band_shape`]: the most rows per band with which a pair at
//!   θ is a candidate with probability ≥ 0.995; 21 bands of 4 at 0.7, where a pair
//!   at J = 0.75 is one with 0.9997, at 0.3 with 0.16 and at 0.1 with 0.002). A candidate whose estimate from the
//!   84 min-values is within three standard deviations of θ ([`verify_window`], 0.15
//!   at 0.7) is decided by its exact resemblance, computed from the two texts
//!   ([`NearDupConfig::verify`]), and its verdict carries that value; one
//!   further away by its estimate. Before schema 14 every pair was decided by its
//!   estimate at `θ − margin` (margin 0.08): a pair near θ was accepted or lost by
//!   chance.
//! - **Defaults**: k = 3 and θ = 0.7, chosen on planted copies of news
//!   articles (`neardup-eval --planted`): a copy with 2.5% of its words replaced has
//!   J ≈ 0.86 with its original at k = 3 (0.79 at k = 5, 0.69 at the papers' k = 8), one
//!   with 5% J ≈ 0.75 (0.63, 0.49), one with 10% 0.57: the dedup tools' word 5-grams
//!   at 0.7 lose the 5% copies, k = 8 at 0.9 (the defaults before) even the 2.5% ones.
//!   `--near-k 8 --near-threshold 0.9` gives the papers' setting back.
//!
//! Hash family: min-value i of a shingle fingerprint x is `mix(x ⊕ K_i)` with
//! `K_i = mix(seed + i)` and `mix` the SplitMix64 finalizer (a bijection of 64-bit
//! words, so each function is a permutation of the fingerprints; approximately
//! min-wise independent). Projection word j of a token is `mix(t ⊕ P_j)` with
//! `P_j = mix(seed ⊕ 0x5151… + j)`.
//!
//! Pure: no I/O.

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::{xxh3_128, xxh3_64};

use crate::hash::mix;
use crate::rabin::Rabin;
use crate::text::Token;

mod simhash;

/// Parameters of near-duplicate detection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NearDupConfig {
    /// Shingle length for the min-hashes (3; 8 in older data directories).
    pub k: u32,
    /// Number of min-values (B: 84).
    pub minhashes: u32,
    /// Supershingles (B: 6); `minhashes` must be a multiple.
    pub supershingles: u32,
    /// Agreeing supershingles that make a pair B-similar (2).
    pub b_min_agree: u32,
    /// SimHash bits, a multiple of 64 (C: 384).
    pub simhash_bits: u32,
    /// Agreeing bits that make a pair C-similar (372).
    pub c_threshold: u32,
    /// C-similarity a B-similar pair needs in the combined algorithm (355).
    pub combined_threshold: u32,
    /// Jaccard threshold of the default verdict (0.7; 0.9 in older data directories).
    pub threshold: f64,
    /// Accept a candidate when its estimated resemblance is at least threshold − margin.
    pub margin: f64,
    /// LSH bands of the min-values for the default verdict's candidates (21 bands of 4
    /// rows: [`band_shape`] of the threshold; 12 of 7 in older data directories).
    pub bands: u32,
    /// Min-values per band.
    pub rows: u32,
    /// Adaptive sampling: (documents with fewer tokens than this, sample 1 in n).
    pub sampling: Vec<(u32, u32)>,
    /// Seed of the hash functions.
    pub seed: u64,
    /// At most this many documents are read per index key (a bound on boilerplate).
    pub max_per_key: u32,
    /// Decide a pair whose estimate is within [`verify_window`] of the threshold by the
    /// exact resemblance of the two documents' shingle sets, computed from their texts:
    /// the estimate from 84 min-values has a standard deviation of about
    /// 0.05 there, so the pairs near the threshold were accepted or lost by chance.
    /// Off in data directories made before schema 14.
    pub verify: bool,
}

impl Default for NearDupConfig {
    fn default() -> Self {
        NearDupConfig {
            k: 3,
            minhashes: 84,
            supershingles: 6,
            b_min_agree: 2,
            simhash_bits: 384,
            c_threshold: 372,
            combined_threshold: 355,
            threshold: 0.7,
            margin: 0.08,
            bands: 21,
            rows: 4,
            sampling: vec![(500, 1), (3000, 2), (10_000, 4), (u32::MAX, 8)],
            seed: 0,
            max_per_key: 1000,
            verify: true,
        }
    }
}

impl NearDupConfig {
    /// Checks that the parameters fit together.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=MAX_K).contains(&self.k) {
            return Err(format!("near-duplicate shingle length k = {} is out of 1..={MAX_K}", self.k));
        }
        let ok = self.k >= 1
            && self.minhashes >= 1
            && self.supershingles >= 1
            && self.minhashes.is_multiple_of(self.supershingles)
            && self.b_min_agree <= self.supershingles
            && self.simhash_bits >= 64
            && self.simhash_bits.is_multiple_of(64)
            && self.c_threshold <= self.simhash_bits
            && self.simhash_bits - self.c_threshold < 255
            && self.bands * self.rows <= self.minhashes
            && self.rows >= 1
            && self.threshold > 0.0
            && self.threshold <= 1.0
            && !self.sampling.is_empty()
            && self.sampling.iter().all(|&(_, n)| n >= 1);
        if ok {
            Ok(())
        } else {
            Err(format!("near-duplicate parameters do not fit together: {self:?}"))
        }
    }

    /// These parameters with shingle length `k` and resemblance threshold `threshold`,
    /// the LSH bands tuned to the threshold ([`band_shape`]): what the flags
    /// `--near-k` and `--near-threshold` set.
    pub fn tuned(&self, k: u32, threshold: f64) -> NearDupConfig {
        let (bands, rows) = band_shape(self.minhashes, threshold);
        NearDupConfig { k, threshold, bands, rows, ..self.clone() }
    }

    /// The lowest resemblance of a pair the default verdict holds for: the threshold
    /// with [`NearDupConfig::verify`] (a pair near it is decided exactly), else the
    /// threshold less the margin (an estimate that reaches it).
    pub fn lowest(&self) -> f64 {
        if self.verify {
            self.threshold
        } else {
            self.threshold - self.margin
        }
    }

    /// Number of SimHash pieces: one more than the differing bits allowed.
    pub fn pieces(&self) -> u32 {
        self.simhash_bits - self.c_threshold + 1
    }
}

/// The probability that a pair of resemblance `j` shares at least one of `bands`
/// LSH bands of `rows` min-values: `1 − (1 − j^rows)^bands`.
pub fn candidate_probability(j: f64, bands: u32, rows: u32) -> f64 {
    1.0 - (1.0 - j.powi(rows as i32)).powi(bands as i32)
}

/// The LSH bands (bands, rows) of `minhashes` min-values for a resemblance threshold:
/// the most rows per band (the fewest candidates below the threshold to read) with
/// which a pair at the threshold still becomes a candidate with probability at least
/// 0.995 (so the estimate, not the bands, decides: a pair 0.05 above it is one with
/// 0.9997 at 0.7). At 0.9 this is 10 bands of 8 (12 of 7, the defaults before issue
/// 35, reach 0.9996 and read 2.5 times the candidates at J = 0.5), at 0.7 21 bands of
/// 4 (28 of 3 read 3.4 times the candidates at J = 0.3, and cost 10% of the ingestion
/// of templated GCC ChangeLog entries), at 0.5 42 bands of 2.
pub fn band_shape(minhashes: u32, threshold: f64) -> (u32, u32) {
    let mut best = (minhashes, 1);
    for rows in 1..=minhashes {
        let bands = minhashes / rows;
        if candidate_probability(threshold, bands, rows) >= 0.995 {
            best = (bands, rows);
        }
    }
    best
}

/// How far from the threshold an estimate leaves the default verdict to the exact
/// resemblance ([`NearDupConfig::verify`]): three standard deviations of the estimate
/// from `minhashes` min-values at the threshold, `3·√(θ(1−θ)/m)` (0.15 at 0.7 with 84
/// min-values, 0.098 at 0.9); at least 0.01.
pub fn verify_window(cfg: &NearDupConfig) -> f64 {
    let t = cfg.threshold;
    (3.0 * (t * (1.0 - t) / f64::from(cfg.minhashes.max(1))).sqrt()).max(0.01)
}

/// The exact Jaccard resemblance of two sorted, distinct shingle sets (0 when both are
/// empty).
pub fn exact_resemblance(a: &[u64], b: &[u64]) -> f64 {
    let (mut i, mut j, mut shared) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - shared;
    if union == 0 {
        0.0
    } else {
        shared as f64 / union as f64
    }
}

/// The sorted, distinct shingles of `k` tokens of a token sequence, each a hash of its
/// tokens' fingerprints (not their Rabin fingerprint, which needs tables built for k:
/// two sets of the same k compare the same): what [`exact_resemblance`] compares. A
/// sequence shorter than k is one shingle.
pub fn shingle_set(tokens: &[u64], k: u32) -> Vec<u64> {
    let k = (k as usize).clamp(1, tokens.len().max(1));
    let mut out: Vec<u64> = tokens.windows(k).map(|w| w.iter().fold(0u64, |h, &t| mix(h ^ t))).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// What is kept of a document to compare it with later ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sketch {
    /// xxh3-128 of the token fingerprints.
    pub exact: u128,
    /// Min-values (empty when the document has no shingle), of the shingles sampled at
    /// 1 in `rate`: 32-bit values (schema 13), as the MinHash tools keep them.
    pub mins: Vec<u64>,
    /// SimHash words.
    pub simhash: Vec<u64>,
    /// The sampling ratio of `mins` (0: unknown, a sketch stored before schema 7).
    pub rate: u32,
    /// Min-values at the next coarser ratio, for a document near the top of its size
    /// group (a near-duplicate may be in the next group); else empty.
    pub coarse: Vec<u64>,
}

/// Computes the sketch of a tokenized document. `rabin` must be built for `cfg.k`.
pub fn sketch(cfg: &NearDupConfig, tokens: &[Token], rabin: &Rabin) -> Sketch {
    debug_assert_eq!(rabin.k(), cfg.k as usize);
    let fps: Vec<u64> = tokens.iter().map(|t| t.fp).collect();
    let bytes: Vec<u8> = fps.iter().flat_map(|f| f.to_le_bytes()).collect();
    let exact = xxh3_128(&bytes);

    let mut shingles = Vec::new();
    rabin.shingles(&fps, &mut shingles);
    let keys: Vec<u64> = (0..cfg.minhashes).map(|i| mix(cfg.seed.wrapping_add(u64::from(i)))).collect();
    let rate = sampling_ratio(cfg, tokens.len());
    let own = sample(&shingles, rate);
    let mins = min_values(&own, &keys);
    // A near-duplicate (resemblance at least `lowest`) has at most 1/lowest times the
    // shingles: when that reaches the next group, keep its rate's min-values too.
    let coarse = match next_group(cfg, tokens.len()) {
        Some((upper, n)) if tokens.len() as f64 >= f64::from(upper) * cfg.lowest() => {
            // Sampling 1 in n of a sample 1 in rate is sampling 1 in n when rate divides n.
            let from = if n % rate == 0 && own.iter().all(|s| s % u64::from(rate) == 0) { &own } else { &shingles };
            min_values(&sample(from, n), &keys)
        }
        _ => Vec::new(),
    };

    let words = (cfg.simhash_bits / 64) as usize;
    let pkeys: Vec<u64> = (0..words).map(|j| mix((cfg.seed ^ 0x5151_5151_5151_5151).wrapping_add(j as u64))).collect();
    let mut sorted = fps;
    sorted.sort_unstable();
    let simhash = simhash::simhash(&sorted, &pkeys);
    Sketch { exact, mins, simhash, rate, coarse }
}

/// The distinct shingles sampled at 1 in `n` (all of them when the sample is empty).
fn sample(shingles: &[u64], n: u32) -> Vec<u64> {
    let mut sampled: Vec<u64> = shingles.iter().copied().filter(|s| s % u64::from(n) == 0).collect();
    if sampled.is_empty() {
        sampled = shingles.to_vec();
    }
    sampled.sort_unstable();
    sampled.dedup();
    sampled
}

/// Min-values of `sampled` under each key; empty without shingles. Each is the top 32
/// bits of the hash (the minimum of the top bits is the top bits of the minimum): two
/// documents agree on a min-value by chance with probability 2^-32, which moves no
/// estimate, and a sketch is stored in half the bytes (schema 13).
fn min_values(sampled: &[u64], keys: &[u64]) -> Vec<u64> {
    if sampled.is_empty() {
        return Vec::new();
    }
    keys.iter().map(|&key| sampled.iter().map(|&s| mix(s ^ key) >> 32).min().expect("not empty")).collect()
}

/// The next size group of a document of `tokens` terms: (its first size, its ratio).
fn next_group(cfg: &NearDupConfig, tokens: usize) -> Option<(u32, u32)> {
    let at = cfg.sampling.iter().position(|&(below, _)| (tokens as u64) < u64::from(below))?;
    let next = cfg.sampling.get(at + 1)?;
    (next.1 != cfg.sampling[at].1).then_some((cfg.sampling[at].0, next.1))
}

/// The min-values two sketches are compared by: at the same ratio, the finer
/// document's coarse ones against the coarser's own when they are one group apart,
/// else (a sketch of unknown ratio, or groups further apart) each one's own.
fn comparable<'a>(a: &'a Sketch, b: &'a Sketch) -> (&'a [u64], &'a [u64]) {
    if a.rate != 0 && b.rate != 0 && a.rate != b.rate {
        if a.rate < b.rate && !a.coarse.is_empty() {
            return (&a.coarse, &b.mins);
        }
        if b.rate < a.rate && !b.coarse.is_empty() {
            return (&a.mins, &b.coarse);
        }
    }
    (&a.mins, &b.mins)
}

/// Adaptive sampling: a document of `tokens` terms samples 1 shingle in the returned n.
pub fn sampling_ratio(cfg: &NearDupConfig, tokens: usize) -> u32 {
    cfg.sampling.iter().find(|&&(below, _)| (tokens as u64) < u64::from(below)).map_or(1, |x| x.1)
}

/// Supershingles: xxh3 of each group of consecutive min-values.
pub fn supershingles(cfg: &NearDupConfig, mins: &[u64]) -> Vec<u64> {
    if mins.is_empty() {
        return Vec::new();
    }
    let per = (cfg.minhashes / cfg.supershingles) as usize;
    mins.chunks(per).map(|c| xxh3_64(&c.iter().flat_map(|m| m.to_le_bytes()).collect::<Vec<u8>>())).collect()
}

/// LSH band keys: xxh3 of each band of `rows` min-values.
pub fn bands(cfg: &NearDupConfig, mins: &[u64]) -> Vec<u64> {
    if mins.is_empty() {
        return Vec::new();
    }
    let r = cfg.rows as usize;
    (0..cfg.bands as usize)
        .map(|b| xxh3_64(&mins[b * r..b * r + r].iter().flat_map(|m| m.to_le_bytes()).collect::<Vec<u8>>()))
        .collect()
}

/// Bit range `[lo, hi)` of piece `p` (pieces are as equal as possible).
fn piece_range(cfg: &NearDupConfig, p: u32) -> (u32, u32) {
    let n = cfg.pieces();
    let bits = cfg.simhash_bits;
    (p * bits / n, (p + 1) * bits / n)
}

/// The SimHash pieces (at most 64 bits each; 30 for the defaults).
pub fn pieces(cfg: &NearDupConfig, simhash: &[u64]) -> Vec<u64> {
    (0..cfg.pieces())
        .map(|p| {
            let (lo, hi) = piece_range(cfg, p);
            (lo..hi).fold(0u64, |v, bit| v << 1 | (simhash[(bit / 64) as usize] >> (bit % 64) & 1))
        })
        .collect()
}

/// Fraction of agreeing min-values (0 when either has none).
pub fn resemblance(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() || a.len() != b.len() {
        return 0.0;
    }
    a.iter().zip(b).filter(|(x, y)| x == y).count() as f64 / a.len() as f64
}

/// Number of agreeing SimHash bits.
pub fn c_similarity(a: &[u64], b: &[u64]) -> u32 {
    a.iter().zip(b).map(|(x, y)| 64 - (x ^ y).count_ones()).sum()
}

/// Number of agreeing supershingles.
pub fn b_similarity(a: &[u64], b: &[u64]) -> u32 {
    a.iter().zip(b).filter(|(x, y)| x == y).count() as u32
}

/// How an earlier document compares with this one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NearDup {
    /// The earlier (or, in the reverse index, later) document.
    pub seq: u64,
    pub exact: bool,
    /// Agreeing supershingles.
    pub b_similarity: u32,
    /// Agreeing SimHash bits.
    pub c_similarity: u32,
    /// Estimated Jaccard resemblance of the shingle sets.
    pub resemblance: f64,
    /// Verdicts.
    pub b: bool,
    pub c: bool,
    pub combined: bool,
    pub default: bool,
}

/// A verdict mode for `neardups`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Bands + pieces, verified by the resemblance estimate (the default answer).
    Default,
    /// Broder: at least 2 of 6 supershingles agree.
    B,
    /// Charikar: at least 372 of 384 SimHash bits agree.
    C,
    /// B-similar and at least 355 SimHash bits agree.
    Combined,
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Mode, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "default" => Ok(Mode::Default),
            "b" => Ok(Mode::B),
            "c" => Ok(Mode::C),
            "combined" => Ok(Mode::Combined),
            _ => Err(format!("unknown near-duplicate mode `{s}`; expected default, b, c or combined")),
        }
    }
}

impl NearDup {
    /// Whether this pair is a near-duplicate under `mode` (exact duplicates always are).
    pub fn says(&self, mode: Mode) -> bool {
        self.exact
            || match mode {
                Mode::Default => self.default,
                Mode::B => self.b,
                Mode::C => self.c,
                Mode::Combined => self.combined,
            }
    }
}

/// Compares a document's sketch with an earlier one's.
pub fn compare(cfg: &NearDupConfig, seq: u64, a: &Sketch, b: &Sketch) -> NearDup {
    let exact = a.exact == b.exact;
    let (am, bm) = comparable(a, b);
    let bsim = b_similarity(&supershingles(cfg, am), &supershingles(cfg, bm));
    let csim = c_similarity(&a.simhash, &b.simhash);
    let r = resemblance(am, bm);
    let b_ok = !am.is_empty() && bsim >= cfg.b_min_agree;
    NearDup {
        seq,
        exact,
        b_similarity: bsim,
        c_similarity: csim,
        resemblance: r,
        b: b_ok,
        c: csim >= cfg.c_threshold,
        combined: b_ok && csim >= cfg.combined_threshold,
        default: exact || r >= cfg.threshold - cfg.margin,
    }
}

/// What [`compare`] gives for two equal sketches of documents with at least one
/// shingle (every such sketch has `cfg.minhashes` min-values and the configured SimHash
/// words): the verdict of an exact copy with its earlier copy, made without either
/// sketch. Equal sketches agree wherever they are compared, so any of that shape gives it.
pub fn identical(cfg: &NearDupConfig, seq: u64) -> NearDup {
    let shape = Sketch {
        exact: 0,
        mins: vec![0; cfg.minhashes as usize],
        simhash: vec![0; (cfg.simhash_bits / 64) as usize],
        rate: 1,
        coarse: Vec::new(),
    };
    compare(cfg, seq, &shape, &shape)
}

/// The longest near-duplicate shingle, in terms: the table's bound too. Broder's
/// shingles are of 4 to 10 words; past a few dozen, one edit in k words changes every
/// shingle and no near copy is found, while the work of a shingle grows with k (issue
/// 53: k = 10^9 never finished a document, and 10^8 cost 5.7 s at every open).
pub const MAX_K: u32 = 64;

/// The most near-duplicates a document keeps, the closest first (exact copies, then
/// the highest resemblance, then the earliest): a low threshold over a corpus of one
/// template stored every pair (3 million for 3,000 articles), as the
/// quotation sources are bounded by `max_sources`.
pub const MAX_PAIRS: usize = 100;

/// The [`MAX_PAIRS`] closest of a document's pairs, in the order given (ascending).
pub fn closest(mut pairs: Vec<NearDup>) -> Vec<NearDup> {
    if pairs.len() <= MAX_PAIRS {
        return pairs;
    }
    pairs.sort_by(|a, b| {
        (b.exact.cmp(&a.exact))
            .then(b.resemblance.total_cmp(&a.resemblance))
            .then(b.c_similarity.cmp(&a.c_similarity))
            .then(a.seq.cmp(&b.seq))
    });
    pairs.truncate(MAX_PAIRS);
    pairs.sort_by_key(|d| d.seq);
    pairs
}

/// Whether any verdict holds (the pair is worth recording).
pub fn any_verdict(d: &NearDup) -> bool {
    d.exact || d.b || d.c || d.combined || d.default
}

/// The verdicts of document `seq`'s sketch against its candidates (earlier documents
/// that share an index key with it, in ascending order): the pairs with any verdict,
/// the [`MAX_PAIRS`] closest.
pub fn verdicts<S: std::borrow::Borrow<Sketch>>(
    cfg: &NearDupConfig,
    sketch: &Sketch,
    candidates: impl IntoIterator<Item = (u64, S)>,
) -> Vec<NearDup> {
    let none = |_| Ok::<_, std::convert::Infallible>(None);
    match verified_verdicts(cfg, sketch, candidates, none) {
        Ok(v) => v,
        Err(never) => match never {},
    }
}

/// [`verdicts`], with a pair whose estimate is within [`verify_window`] of the
/// threshold decided by `exact(candidate)`, its exact resemblance (when
/// [`NearDupConfig::verify`] is on and `exact` knows it): the verdict's resemblance is
/// then the exact one, and the default verdict holds at the threshold itself.
pub fn verified_verdicts<S: std::borrow::Borrow<Sketch>, E>(
    cfg: &NearDupConfig,
    sketch: &Sketch,
    candidates: impl IntoIterator<Item = (u64, S)>,
    mut exact: impl FnMut(u64) -> Result<Option<f64>, E>,
) -> Result<Vec<NearDup>, E> {
    let window = verify_window(cfg);
    let mut out = Vec::new();
    for (c, other) in candidates {
        let mut d = compare(cfg, c, sketch, other.borrow());
        if cfg.verify && !d.exact && (d.resemblance - cfg.threshold).abs() < window {
            if let Some(j) = exact(c)? {
                d.resemblance = j;
                d.default = j >= cfg.threshold;
            }
        }
        if any_verdict(&d) {
            out.push(d);
        }
    }
    Ok(closest(out))
}

#[cfg(test)]
mod tests;
