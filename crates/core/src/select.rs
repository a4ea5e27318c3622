//! Shingle selection: which fingerprints of a document are sent to the table.
//!
//! Implements every family of Section 2.1 of the origin-detection paper:
//! All, Every-l (`4th`), Modulo-l (`M4`), Winnowing-w (`W8`), Hailstorm (`Hs`), revised
//! Hash-breaking-p (`Hb3`), DCT-p (`Dct8`), and the "no complete overlap" variants
//! `NM-l`, `NW-w`, `NHs`. The default is `NHs`.
//!
//! Choices the paper leaves open, made here:
//! - Winnowing selects, in each window of `w` consecutive shingles, the right-most
//!   minimal fingerprint; a document with fewer than `w` shingles is one window.
//! - Hailstorm compares token fingerprints ([`crate::rabin::Rabin::token`]); a shingle
//!   is selected when the minimum of its k token fingerprints is at its first or last
//!   token (ties included).
//! - The no-overlap pass goes left to right and drops a selected shingle exactly when
//!   the last kept shingle and the next selected shingle together cover all its
//!   tokens. The union of covered tokens is unchanged (so Lemma 1's total coverage
//!   survives), and applied to All it yields Every-k plus the last shingle, as the
//!   paper remarks for Every-8th.
//! - Hash-breaking ends a segment after every token whose fingerprint is divisible by
//!   `p` (the last, unterminated segment counts too) and, as revised by Seo and Croft,
//!   ignores segments of fewer than `p` tokens. A segment's fingerprint is
//!   [`crate::rabin::Rabin::sequence`] of its tokens.
//! - DCT uses the same segments. The token fingerprints of a segment, scaled to
//!   [-1, 1), are transformed by an orthonormal DCT-II; the first 10 coefficients (fewer
//!   for shorter segments), clamped to [-2, 2] and quantized to 6 bits each, are packed
//!   with the segment length and fingerprinted. Segments whose quantized spectra agree
//!   get the same fingerprint even when some tokens differ. Floating point is used
//!   here; the platform's `cos` may differ in the last bit between C libraries, which
//!   can move a coefficient across a quantization boundary.
//!
//! **Density that follows the table's room** (not in the paper): besides the
//! policy's selection, every other k-shingle gets a density rank, the leading zero bits
//! of `mix` of its stored fingerprint bits ([`density_rank`]); at density threshold `t`
//! (density 2^-t) the shingles of rank >= `t` are selected as well ([`kept`]). Raising
//! the threshold halves the extra shingles and keeps a subset of them (nested sets: a
//! shingle kept at a lower density is kept at every higher one), so a later copy finds
//! what an earlier document inserted while both used the same or a lower threshold. At
//! [`FLOOR`] no extra shingle is selected: the policy's selection alone, the paper's.
//! The table decides the threshold ([`crate::table`]); [`with_extras`] lists the
//! candidates once, [`kept`] filters them at the threshold in force.
//!
//! Pure: no I/O, no clock, no randomness.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::hash::mix;
use crate::rabin::{Rabin, MASK};
use crate::text::Token;

/// A selection algorithm with its parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Selection {
    /// Every shingle.
    All,
    /// Shingles starting at positions 0, l, 2l, ...
    Every(u32),
    /// Shingles whose fingerprint is divisible by l; `no_overlap` gives NM-l.
    Modulo { l: u32, no_overlap: bool },
    /// Winnowing with window w; `no_overlap` gives NW-w.
    Winnowing { w: u32, no_overlap: bool },
    /// Hailstorm; `no_overlap` gives NHs.
    Hailstorm { no_overlap: bool },
    /// Revised hash-breaking with parameter p.
    HashBreaking(u32),
    /// DCT fingerprints of hash-breaking segments with parameter p.
    Dct(u32),
}

impl Default for Selection {
    fn default() -> Self {
        Selection::Hailstorm { no_overlap: true }
    }
}

impl fmt::Display for Selection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = |b: bool| if b { "N" } else { "" };
        match *self {
            Selection::All => write!(f, "All"),
            Selection::Every(l) => write!(f, "{l}th"),
            Selection::Modulo { l, no_overlap } => write!(f, "{}M{l}", n(no_overlap)),
            Selection::Winnowing { w, no_overlap } => write!(f, "{}W{w}", n(no_overlap)),
            Selection::Hailstorm { no_overlap } => write!(f, "{}Hs", n(no_overlap)),
            Selection::HashBreaking(p) => write!(f, "Hb{p}"),
            Selection::Dct(p) => write!(f, "Dct{p}"),
        }
    }
}

impl FromStr for Selection {
    type Err = String;

    /// Accepts the paper's labels, case-insensitive, with an optional dash before the
    /// parameter: `all`, `4th` or `every-4`, `m4`, `nm3`, `w8`, `nw8`, `hs`, `nhs`,
    /// `hb3`, `dct8`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase().replace(['-', '_'], "");
        let param = |prefix: &str| -> Result<u32, String> {
            let v: u32 = lower[prefix.len()..]
                .parse()
                .map_err(|_| format!("selection `{s}`: `{prefix}` needs a whole-number parameter, e.g. `{prefix}4`"))?;
            if v == 0 || v > 64 {
                return Err(format!("selection `{s}`: parameter must be between 1 and 64"));
            }
            Ok(v)
        };
        let sel = match lower.as_str() {
            "all" => Selection::All,
            "hs" => Selection::Hailstorm { no_overlap: false },
            "nhs" => Selection::Hailstorm { no_overlap: true },
            x if x.starts_with("every") => Selection::Every(param("every")?),
            x if x.ends_with("th") && x[..x.len() - 2].parse::<u32>().is_ok() => {
                let v: u32 = x[..x.len() - 2].parse().unwrap_or(0);
                if v == 0 || v > 64 {
                    return Err(format!("selection `{s}`: parameter must be between 1 and 64"));
                }
                Selection::Every(v)
            }
            x if x.starts_with("nm") => Selection::Modulo { l: param("nm")?, no_overlap: true },
            x if x.starts_with("nw") => Selection::Winnowing { w: param("nw")?, no_overlap: true },
            x if x.starts_with("dct") => Selection::Dct(param("dct")?),
            x if x.starts_with("hb") => Selection::HashBreaking(param("hb")?),
            x if x.starts_with('m') => Selection::Modulo { l: param("m")?, no_overlap: false },
            x if x.starts_with('w') => Selection::Winnowing { w: param("w")?, no_overlap: false },
            _ => {
                return Err(format!(
                "unknown selection `{s}`; expected one of all, <l>th, m<l>, nm<l>, w<w>, nw<w>, hs, nhs, hb<p>, dct<p>"
            ))
            }
        };
        Ok(sel)
    }
}

/// One fingerprint sent to the table, with the tokens it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item {
    /// 62-bit fingerprint.
    pub fp: u64,
    /// First token covered.
    pub start: u32,
    /// One past the last token covered.
    pub end: u32,
    /// [`SELECTED`] for the policy's selection, else the shingle's [`density_rank`] (an
    /// extra shingle, kept at thresholds up to it).
    pub rank: u8,
}

/// The rank of a shingle the policy selected: kept at every threshold.
pub const SELECTED: u8 = u8::MAX;

/// The threshold at which no extra shingle is kept: the paper's selection alone
/// (density 2^-8 would add one shingle in 256, too few to matter).
pub const FLOOR: u8 = 8;

/// The threshold of a new table: a quarter of the shingles the policy leaves out. Every
/// one (0) found planted English sentences of 10-19 words 0.973 of the time against
/// 0.943 at a quarter, but made the origins-only job 2.3 times slower instead of 1.36
/// (`docs/PERFORMANCE.md`, "Selection density").
pub const START: u8 = 2;

/// Documents from a full bucket's first ask for a raise of the threshold (to the floor)
/// to the raise
/// ([`crate::config::Config::density_lag`], schema 23; `docs/SCALE-OUT.md`, "The single
/// node's defaults"): the threshold moves only at document ends, so that shards, which
/// each see a part of the buckets, can agree on where. 0 raises it at once, in the
/// middle of the document (data directories made before). 32 is the depth of a
/// deployment worker's pipeline (`AHEAD`): its workers can learn the others' asks from
/// the feedback they wait for anyway. Against
/// raising at once it changed DO, TF and per-token origins by about a point either way
/// on the evaluation corpora (`docs/EVALUATION.md`).
pub const DENSITY_LAG: u8 = 32;

/// Fingerprint bits a table entry stores (6-61): ranks are computed from them alone, so
/// that an entry's rank is known from the table.
const STORED_BITS: u64 = MASK & !0x3f;

/// The density rank of a shingle: the leading zero bits of `mix` of its stored
/// fingerprint bits (a shingle has rank >= t with probability 2^-t).
#[inline]
pub fn density_rank(fp: u64) -> u8 {
    mix(fp & STORED_BITS ^ 0x6465_6e73_6974_7921).leading_zeros() as u8
}

/// Whether a shingle of rank `rank` is selected at threshold `t`.
#[inline]
pub fn kept(rank: u8, t: u8) -> bool {
    rank == SELECTED || (t < FLOOR && rank >= t)
}

/// The density a threshold stands for, as a reader wants it: `1`, `1/2`, ... `1/128`,
/// or `paper` at [`FLOOR`].
pub fn density_label(t: u8) -> String {
    match t {
        0 => "1".into(),
        t if t < FLOOR => format!("1/{}", 1u32 << t),
        _ => "paper".into(),
    }
}

/// Adds every k-shingle [`select`] left out (its last call, with `scratch`) to `out`
/// with its density rank, keeping document order (by first token). Hash-breaking and
/// DCT select segments, not k-shingles: they get no extras.
pub fn with_extras(sel: Selection, k: usize, scratch: &Scratch, out: &mut Vec<Item>) {
    if matches!(sel, Selection::HashBreaking(_) | Selection::Dct(_) | Selection::All) {
        return;
    }
    let policy = std::mem::take(out);
    let mut next = policy.iter().peekable();
    for (i, &fp) in scratch.shingle_fps.iter().enumerate() {
        match next.peek() {
            Some(it) if it.start as usize == i => out.push(*next.next().expect("peeked")),
            _ => out.push(Item { fp, start: i as u32, end: (i + k) as u32, rank: density_rank(fp) }),
        }
    }
    out.extend(next);
}

/// Reusable buffers for [`select`].
#[derive(Debug, Default, Clone)]
pub struct Scratch {
    token_fps: Vec<u64>,
    shingle_fps: Vec<u64>,
    picked: Vec<u32>,
}

impl Scratch {
    /// Every k-shingle's fingerprint of the document [`select`] was last given, in
    /// order (none where it selected by segments).
    pub fn shingles(&self) -> &[u64] {
        &self.shingle_fps
    }
}

/// Number of k-shingles of a document of `tokens` terms.
pub fn shingle_count(tokens: usize, k: usize) -> usize {
    (tokens + 1).saturating_sub(k)
}

/// Selects the fingerprints of a tokenized document to send to the table, in document
/// order. `rabin` carries k.
pub fn select(sel: Selection, tokens: &[Token], rabin: &Rabin, scratch: &mut Scratch, out: &mut Vec<Item>) {
    out.clear();
    let k = rabin.k();
    scratch.token_fps.clear();
    scratch.token_fps.extend(tokens.iter().map(|t| t.fp));
    scratch.shingle_fps.clear();
    match sel {
        Selection::HashBreaking(p) | Selection::Dct(p) => {
            segments(&scratch.token_fps, p, |start, end| {
                let seg = &scratch.token_fps[start..end];
                let fp = match sel {
                    Selection::Dct(_) => dct_fingerprint(seg, rabin),
                    _ => rabin.sequence(seg.iter().copied()),
                };
                out.push(Item { fp, start: start as u32, end: end as u32, rank: SELECTED });
            });
            return;
        }
        _ => {}
    }
    rabin.shingles(&scratch.token_fps, &mut scratch.shingle_fps);
    let fps = &scratch.shingle_fps;
    let n = fps.len();
    let picked = &mut scratch.picked;
    picked.clear();
    let no_overlap = match sel {
        Selection::All => {
            picked.extend(0..n as u32);
            false
        }
        Selection::Every(l) => {
            picked.extend((0..n as u32).step_by(l as usize));
            false
        }
        Selection::Modulo { l, no_overlap } => {
            picked.extend((0..n as u32).filter(|&i| fps[i as usize].is_multiple_of(u64::from(l))));
            no_overlap
        }
        Selection::Winnowing { w, no_overlap } => {
            winnow(fps, w as usize, picked);
            no_overlap
        }
        Selection::Hailstorm { no_overlap } => {
            let t = &scratch.token_fps;
            for i in 0..n {
                let window = &t[i..i + k];
                let min = *window.iter().min().expect("k >= 1");
                if window[0] == min || window[k - 1] == min {
                    picked.push(i as u32);
                }
            }
            no_overlap
        }
        Selection::HashBreaking(_) | Selection::Dct(_) => unreachable!("handled above"),
    };
    let k32 = k as u32;
    if no_overlap {
        drop_complete_overlaps(picked, k32);
    }
    out.extend(picked.iter().map(|&i| Item { fp: fps[i as usize], start: i, end: i + k32, rank: SELECTED }));
}

/// Winnowing: the right-most minimum of every window of `w` shingles, each position once.
fn winnow(fps: &[u64], w: usize, picked: &mut Vec<u32>) {
    let n = fps.len();
    if n == 0 {
        return;
    }
    let w = w.min(n).max(1);
    for start in 0..=n - w {
        let mut best = start;
        for i in start + 1..start + w {
            if fps[i] <= fps[best] {
                best = i;
            }
        }
        if picked.last() != Some(&(best as u32)) {
            picked.push(best as u32);
        }
    }
}

/// The no-complete-overlap pass over selected shingle positions (all of length k).
fn drop_complete_overlaps(picked: &mut Vec<u32>, k: u32) {
    let n = picked.len();
    let mut kept = 0usize; // picked[..kept] are the kept ones
    for i in 0..n {
        let cur = picked[i];
        let covered = kept > 0 && i + 1 < n && picked[kept - 1] + k >= picked[i + 1];
        if !covered {
            picked[kept] = cur;
            kept += 1;
        }
    }
    picked.truncate(kept);
}

/// Calls `emit(start, end)` for every hash-breaking segment of at least `p` tokens.
fn segments(token_fps: &[u64], p: u32, mut emit: impl FnMut(usize, usize)) {
    let p64 = u64::from(p);
    let mut start = 0;
    for (i, &t) in token_fps.iter().enumerate() {
        if t % p64 == 0 {
            if i + 1 - start >= p as usize {
                emit(start, i + 1);
            }
            start = i + 1;
        }
    }
    if token_fps.len() - start >= p as usize && start < token_fps.len() {
        emit(start, token_fps.len());
    }
}

/// Number of DCT coefficients kept, and bits per coefficient.
const DCT_COEFFS: usize = 10;
const DCT_BITS: u32 = 6;

/// The DCT fingerprint of a segment (see the module docs).
fn dct_fingerprint(seg: &[u64], rabin: &Rabin) -> u64 {
    let n = seg.len();
    let scale = 2.0 / (MASK as f64 + 1.0);
    let v: Vec<f64> = seg.iter().map(|&t| t as f64 * scale - 1.0).collect();
    let levels = f64::from((1u32 << DCT_BITS) - 1);
    let mut packed = 0u64;
    for c in 0..DCT_COEFFS.min(n) {
        let norm = if c == 0 { (1.0 / n as f64).sqrt() } else { (2.0 / n as f64).sqrt() };
        let sum: f64 = v
            .iter()
            .enumerate()
            .map(|(j, x)| x * (std::f64::consts::PI / n as f64 * (j as f64 + 0.5) * c as f64).cos())
            .sum();
        let q = (((norm * sum).clamp(-2.0, 2.0) + 2.0) / 4.0 * levels).round() as u64;
        packed = packed << DCT_BITS | q;
    }
    rabin.sequence([packed & MASK, n as u64])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::tokenize;
    use proptest::prelude::*;

    fn toks(fps: &[u64]) -> Vec<Token> {
        fps.iter().enumerate().map(|(i, &fp)| Token { start: i as u32, end: i as u32 + 1, fp }).collect()
    }

    fn run(sel: Selection, k: usize, fps: &[u64]) -> Vec<Item> {
        let r = Rabin::new(k);
        let mut out = Vec::new();
        select(sel, &toks(fps), &r, &mut Scratch::default(), &mut out);
        out
    }

    /// Random distinct-ish token fingerprints from a large vocabulary.
    fn random_doc(seed: u64, len: usize) -> Vec<u64> {
        let r = Rabin::new(8);
        let mut g = crate::testdata::XorShift::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        (0..len).map(|_| r.token(format!("w{}", g.below(100_000)).as_bytes())).collect()
    }

    fn covered(items: &[Item], n: usize) -> Vec<bool> {
        let mut c = vec![false; n];
        for it in items {
            for t in it.start..it.end {
                c[t as usize] = true;
            }
        }
        c
    }

    proptest! {
        /// Issue 36: the extras are nested (a shingle kept at a threshold is kept at
        /// every lower one), at threshold 0 every shingle is there once in document
        /// order, and at the floor the policy's selection alone, exactly.
        #[test]
        fn density_selects_nested_sets_down_to_the_policy(seed in any::<u64>(), len in 0usize..300, sel in 0usize..4) {
            let sel = [Selection::default(), "w8".parse().unwrap(), "m4".parse().unwrap(), "nm3".parse().unwrap()][sel];
            let (r, doc) = (Rabin::new(8), toks(&random_doc(seed, len)));
            let (mut scratch, mut policy, mut all) = (Scratch::default(), Vec::new(), Vec::new());
            select(sel, &doc, &r, &mut scratch, &mut policy);
            select(sel, &doc, &r, &mut scratch, &mut all);
            with_extras(sel, 8, &scratch, &mut all);
            let starts: Vec<u32> = all.iter().map(|it| it.start).collect();
            prop_assert_eq!(starts, (0..shingle_count(len, 8) as u32).collect::<Vec<_>>());
            let at = |t: u8| -> Vec<Item> { all.iter().copied().filter(|it| kept(it.rank, t)).collect() };
            prop_assert_eq!(at(FLOOR), policy);
            for t in 0..FLOOR {
                let (wide, narrow) = (at(t), at(t + 1));
                prop_assert!(narrow.iter().all(|it| wide.contains(it)), "threshold {}", t);
            }
        }
    }

    #[test]
    fn a_rank_is_known_from_the_stored_bits_and_halves_the_extras() {
        let fps: Vec<u64> = (0..20_000u64).map(|i| crate::hash::mix(i) & MASK).collect();
        assert!(fps.iter().all(|&fp| density_rank(fp) == density_rank(fp & !0x3f)));
        let share = |t: u8| fps.iter().filter(|&&fp| density_rank(fp) >= t).count() as f64 / fps.len() as f64;
        for t in 1..FLOOR {
            let want = 1.0 / f64::from(1u32 << t);
            assert!((share(t) - want).abs() < 0.25 * want + 0.002, "threshold {t}: {} of the shingles", share(t));
        }
        assert_eq!(density_label(0), "1");
        assert_eq!(density_label(3), "1/8");
        assert_eq!(density_label(FLOOR), "paper");
    }

    #[test]
    fn parses_and_prints_the_paper_labels() {
        for label in ["All", "4th", "M4", "NM3", "W8", "NW8", "Hs", "NHs", "Hb3", "Dct8"] {
            let s: Selection = label.parse().unwrap();
            assert_eq!(s.to_string(), label);
        }
        assert_eq!("every-6".parse::<Selection>().unwrap(), Selection::Every(6));
        assert!("m0".parse::<Selection>().is_err());
        assert!("zz".parse::<Selection>().is_err());
    }

    #[test]
    fn no_overlap_of_all_is_every_kth_plus_last() {
        let fps = random_doc(1, 40);
        let items = run("All".parse().unwrap(), 8, &fps);
        let mut picked: Vec<u32> = items.iter().map(|i| i.start).collect();
        drop_complete_overlaps(&mut picked, 8);
        assert_eq!(picked, [0, 8, 16, 24, 32]);
        let mut picked: Vec<u32> = (0..34).collect();
        drop_complete_overlaps(&mut picked, 8);
        assert_eq!(picked, [0, 8, 16, 24, 32, 33]);
    }

    #[test]
    fn selection_rates_match_section_2_1() {
        let fps: Vec<u64> = (0..40).flat_map(|s| random_doc(s + 7, 1000)).collect();
        let n = shingle_count(fps.len(), 8) as f64;
        let rate = |sel: &str| run(sel.parse().unwrap(), 8, &fps).len() as f64 / n;
        let near = |got: f64, want: f64| (got - want).abs() <= want * 0.08;
        assert!((rate("All") - 1.0).abs() < 1e-9);
        assert!(near(rate("4th"), 0.25), "{}", rate("4th"));
        assert!(near(rate("M4"), 0.25), "{}", rate("M4"));
        assert!(near(rate("M7"), 1.0 / 7.0), "{}", rate("M7"));
        assert!(near(rate("W8"), 2.0 / 9.0), "{}", rate("W8"));
        assert!(near(rate("W5"), 2.0 / 6.0), "{}", rate("W5"));
        assert!(near(rate("Hs"), 2.0 / 8.0), "{}", rate("Hs"));
        // No-overlap variants send strictly fewer.
        assert!(rate("NHs") < rate("Hs") && rate("NW8") < rate("W8") && rate("NM3") < rate("M3"));
        // Hash-breaking and DCT send the same number of segments.
        assert_eq!(rate("Hb4"), rate("Dct4"));
    }

    #[test]
    fn dct_tolerates_identical_segments_and_separates_others() {
        let r = Rabin::new(8);
        let a = random_doc(3, 12);
        let b = random_doc(4, 12);
        assert_eq!(dct_fingerprint(&a, &r), dct_fingerprint(&a.clone(), &r));
        assert_ne!(dct_fingerprint(&a, &r), dct_fingerprint(&b, &r));
    }

    #[test]
    fn hash_breaking_segments_end_at_breakers_and_skip_short_ones() {
        // Breakers are the multiples of 3.
        let fps = [1, 2, 4, 3, 5, 6, 7, 8, 10, 11];
        let mut segs = Vec::new();
        segments(&fps, 3, |s, e| segs.push((s, e)));
        assert_eq!(segs, [(0, 4), (6, 10)]); // [5,6] is shorter than 3
    }

    proptest! {
        #[test]
        fn hailstorm_total_coverage_lemma_1(seed in any::<u64>(), len in 8usize..300, k in 2usize..12) {
            let fps = random_doc(seed, len);
            for sel in ["Hs", "NHs"] {
                let items = run(sel.parse().unwrap(), k, &fps);
                let c = covered(&items, len);
                if len >= k {
                    // every token but the first/last k-1 ones is covered
                    for (p, &covered) in c.iter().enumerate().take(len + 1 - k).skip(k - 1) {
                        prop_assert!(covered, "{sel}: token {p} of {len} uncovered (k={k})");
                    }
                }
            }
        }

        #[test]
        fn hailstorm_is_context_free(seed in any::<u64>(), len in 20usize..200, cut in 0usize..20) {
            // A shingle is selected in one document iff it is selected in another
            // document that contains it.
            let fps = random_doc(seed, len);
            let all = run(Selection::Hailstorm { no_overlap: false }, 8, &fps);
            let tail = run(Selection::Hailstorm { no_overlap: false }, 8, &fps[cut..]);
            let a: Vec<u64> = all.iter().filter(|i| i.start as usize >= cut).map(|i| i.fp).collect();
            let b: Vec<u64> = tail.iter().map(|i| i.fp).collect();
            prop_assert_eq!(a, b);
        }

        #[test]
        fn winnowing_window_guarantee(seed in any::<u64>(), len in 8usize..300, w in 1usize..12) {
            let fps = random_doc(seed, len);
            for no_overlap in [false, true] {
                let items = run(Selection::Winnowing { w: w as u32, no_overlap }, 8, &fps);
                let n = shingle_count(len, 8);
                let c = covered(&items, len);
                if !no_overlap {
                    let starts: std::collections::BTreeSet<u32> = items.iter().map(|i| i.start).collect();
                    for s in 0..n.saturating_sub(w - 1) {
                        prop_assert!((s..s + w).any(|p| starts.contains(&(p as u32))), "window at {s} empty");
                    }
                }
                // Either way, every w+k-1 consecutive tokens hold a covered token run.
                let plain = covered(&run(Selection::Winnowing { w: w as u32, no_overlap: false }, 8, &fps), len);
                prop_assert_eq!(c, plain, "no-overlap pass changed coverage");
            }
        }

        #[test]
        fn no_overlap_keeps_coverage(seed in any::<u64>(), len in 0usize..300, l in 1u32..8) {
            let fps = random_doc(seed, len);
            for (with, without) in [
                (Selection::Modulo { l, no_overlap: true }, Selection::Modulo { l, no_overlap: false }),
                (Selection::Hailstorm { no_overlap: true }, Selection::Hailstorm { no_overlap: false }),
            ] {
                let a = run(with, 8, &fps);
                let b = run(without, 8, &fps);
                prop_assert_eq!(covered(&a, len), covered(&b, len));
                prop_assert!(a.len() <= b.len());
                // The kept ones are a subsequence of the selected ones.
                let mut it = b.iter();
                for x in &a { prop_assert!(it.any(|y| y == x)); }
            }
        }
    }

    #[test]
    fn real_text_selects_in_document_order() {
        let r = Rabin::new(8);
        let mut t = Vec::new();
        tokenize("the quick brown fox jumps over the lazy dog and keeps running far away", &r, &mut t);
        let mut out = Vec::new();
        select(Selection::default(), &t, &r, &mut Scratch::default(), &mut out);
        assert!(!out.is_empty());
        assert!(out.windows(2).all(|w| w[0].start < w[1].start));
    }
}
