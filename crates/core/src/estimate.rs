//! Estimation: the origin of every selected shingle from the hits in the table.
//!
//! Implements Section 2.3 of the origin-detection paper: No Bridging (NB), Expansion
//! (E), Bridging (B) with limit T (default 30) and Bridging with Expansion (BE).
//!
//! Rules where the paper leaves a choice (see `../shared/papers/README.md`):
//! - A found shingle keeps its stored origin; bridges and expansion only label shingles
//!   that were not found. Precedence: found, then bridge, then expansion, then the
//!   document itself. Among bridges the one that ends first labels first; among
//!   expansions the left neighbour's claim is applied before the right one's.
//! - Hits whose stored origin is the document itself (a shingle repeated within the
//!   document) neither bridge nor expand.
//! - Bridging pairs each found shingle `j` with the nearest earlier found shingle `i`
//!   of the same origin whose offset difference agrees (`j - i ≡ off_j - off_i mod 256`):
//!   the "diagonal" `(i - off_i) mod 256` is the same. Condition (d) is exactly "nearest
//!   on the same diagonal", so one pass with a map from (origin, diagonal) to the last
//!   index finds all bridges in linear time. A bridge needs `j - i < T` (T ≤ 256, so
//!   offsets mod 256 cannot alias).
//! - BE bridges only when additionally (e) the top byte of shingle `i+1` in the document
//!   equals `next` stored with `i`, and (f) the top byte of shingle `j-1` equals `prev`
//!   stored with `j`.
//!
//! Pure: no I/O, no clock, no randomness.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::table::Hit;

/// An estimation algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Estimation {
    /// No bridging: only found shingles get an origin.
    Nb,
    /// Expansion to the neighbours of found shingles.
    E,
    /// Bridging between agreeing found shingles.
    B,
    /// Bridging with the neighbour check, plus expansion.
    #[default]
    Be,
}

impl fmt::Display for Estimation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Estimation::Nb => "NB",
            Estimation::E => "E",
            Estimation::B => "B",
            Estimation::Be => "BE",
        })
    }
}

impl FromStr for Estimation {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "nb" | "none" => Ok(Estimation::Nb),
            "e" | "expansion" => Ok(Estimation::E),
            "b" | "bridging" => Ok(Estimation::B),
            "be" => Ok(Estimation::Be),
            _ => Err(format!("unknown estimation `{s}`; expected nb, e, b or be")),
        }
    }
}

/// How a selected shingle got its origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum How {
    /// Not found and not estimated: the document itself.
    Own,
    /// Found in the table.
    Found,
    /// Labelled by a bridge.
    Bridged,
    /// Labelled by expansion from a neighbour.
    Expanded,
}

/// Estimates the origin of each selected shingle.
///
/// `doc` is the document's own sequence number, `tops[i]` the top byte of selected
/// shingle `i`'s fingerprint, `hits[i]` what the table returned for it.
pub fn estimate(method: Estimation, limit: usize, doc: u64, tops: &[u8], hits: &[Option<Hit>]) -> Vec<(u64, How)> {
    estimate_with_offsets(method, limit, doc, tops, hits).0
}

/// [`estimate`], and for every selected shingle its offset among its origin's selected
/// shingles mod 256 as the estimate places it: a found shingle's stored offset, a
/// bridged one's counted from the bridge's left anchor, an expanded one's its
/// neighbour's minus or plus one, the document's own its own index. Origin propagation
/// stores these with the estimated origin.
pub fn estimate_with_offsets(
    method: Estimation,
    limit: usize,
    doc: u64,
    tops: &[u8],
    hits: &[Option<Hit>],
) -> (Vec<(u64, How)>, Vec<u8>) {
    let n = hits.len();
    debug_assert_eq!(tops.len(), n);
    let mut out: Vec<(u64, How)> = hits
        .iter()
        .map(|h| match h {
            Some(h) => (h.origin, How::Found),
            None => (doc, How::Own),
        })
        .collect();
    let mut offsets: Vec<u8> = hits.iter().enumerate().map(|(i, h)| h.map_or(i as u8, |h| h.offset)).collect();
    let foreign = |i: usize| hits[i].filter(|h| h.origin != doc);
    if matches!(method, Estimation::B | Estimation::Be) {
        // Hashed for every hit, so with the core's fast hasher: the keys are sequence
        // numbers and diagonals, which no submitter chooses.
        let mut last: crate::hash::MixMap<(u64, u8), usize> = Default::default();
        for j in 0..n {
            let Some(hj) = foreign(j) else { continue };
            let diag = (j as u64).wrapping_sub(u64::from(hj.offset)) as u8;
            if let Some(i) = last.insert((hj.origin, diag), j) {
                let hi = foreign(i).expect("indexed hits are foreign");
                let ok = j - i < limit
                    && j - i >= 2
                    && (method == Estimation::B || (tops[i + 1] == hi.next && tops[j - 1] == hj.prev));
                if ok {
                    for (at, slot) in out.iter_mut().enumerate().take(j).skip(i + 1) {
                        if slot.1 == How::Own {
                            *slot = (hj.origin, How::Bridged);
                            offsets[at] = hi.offset.wrapping_add((at - i) as u8);
                        }
                    }
                }
            }
        }
    }
    if matches!(method, Estimation::E | Estimation::Be) {
        for i in 0..n {
            let Some(h) = foreign(i) else { continue };
            if i > 0 && out[i - 1].1 == How::Own && tops[i - 1] == h.prev {
                out[i - 1] = (h.origin, How::Expanded);
                offsets[i - 1] = h.offset.wrapping_sub(1);
            }
            if i + 1 < n && out[i + 1].1 == How::Own && hits[i + 1].is_none() && tops[i + 1] == h.next {
                out[i + 1] = (h.origin, How::Expanded);
                offsets[i + 1] = h.offset.wrapping_add(1);
            }
        }
    }
    (out, offsets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const DOC: u64 = 100;

    fn h(origin: u64, offset: u8, prev: u8, next: u8) -> Option<Hit> {
        Some(Hit { origin, offset, prev, next })
    }

    #[test]
    fn nb_reports_found_origins_only() {
        let hits = [None, h(3, 0, 0, 0), None, h(DOC, 1, 0, 0)];
        let o = estimate(Estimation::Nb, 30, DOC, &[0; 4], &hits);
        assert_eq!(o, [(DOC, How::Own), (3, How::Found), (DOC, How::Own), (DOC, How::Found)]);
    }

    #[test]
    fn bridging_labels_exactly_the_run_between_agreeing_anchors() {
        // Anchors at 2 and 7 with origin offsets 10 and 15: same diagonal.
        let mut hits = vec![None; 10];
        hits[2] = h(5, 10, 0, 0);
        hits[7] = h(5, 15, 0, 0);
        let o = estimate(Estimation::B, 30, DOC, &[0; 10], &hits);
        let origins: Vec<u64> = o.iter().map(|x| x.0).collect();
        assert_eq!(origins, [DOC, DOC, 5, 5, 5, 5, 5, 5, DOC, DOC]);
        // Bridged shingles sit where the origin has them: 10 + their distance from 2.
        let (_, offsets) = estimate_with_offsets(Estimation::B, 30, DOC, &[0; 10], &hits);
        assert_eq!(offsets, [0, 1, 10, 11, 12, 13, 14, 15, 8, 9]);
        // A different diagonal does not bridge; nor does a gap of T or more.
        hits[7] = h(5, 16, 0, 0);
        assert!(estimate(Estimation::B, 30, DOC, &[0; 10], &hits).iter().all(|x| x.1 != How::Bridged));
        hits[7] = h(5, 15, 0, 0);
        assert!(estimate(Estimation::B, 5, DOC, &[0; 10], &hits).iter().all(|x| x.1 != How::Bridged));
        assert_eq!(estimate(Estimation::B, 6, DOC, &[0; 10], &hits)[4].1, How::Bridged);
    }

    #[test]
    fn be_checks_neighbour_bytes_and_expands() {
        let mut tops = vec![0u8; 10];
        tops[3] = 0xaa; // after anchor 2
        tops[6] = 0xbb; // before anchor 7
        let mut hits = vec![None; 10];
        hits[2] = h(5, 10, 0x11, 0xaa);
        hits[7] = h(5, 15, 0xbb, 0x22);
        let o = estimate(Estimation::Be, 30, DOC, &tops, &hits);
        assert!(o[3..7].iter().all(|x| *x == (5, How::Bridged)));
        // (f) fails: no bridge, but expansion still labels 3 (next of 2) and 6 (prev of 7).
        hits[7] = h(5, 15, 0xbc, 0x22);
        let (o, offsets) = estimate_with_offsets(Estimation::Be, 30, DOC, &tops, &hits);
        assert_eq!(o[3], (5, How::Expanded));
        assert_eq!(offsets[3], 11, "next of the anchor at offset 10");
        assert_eq!(o[4], (DOC, How::Own));
        assert_eq!(o[6], (DOC, How::Own));
        // Expansion to the left: tops[1] matches prev of 2.
        tops[1] = 0x11;
        assert_eq!(estimate(Estimation::E, 30, DOC, &tops, &hits)[1], (5, How::Expanded));
    }

    /// Literal reading of conditions (a)-(d), quadratic.
    fn brute_bridges(limit: usize, doc: u64, hits: &[Option<Hit>]) -> Vec<(usize, usize)> {
        let n = hits.len();
        let ok = |i: usize, j: usize| -> bool {
            match (hits[i], hits[j]) {
                (Some(a), Some(b)) => {
                    a.origin != doc
                        && a.origin == b.origin
                        && i < j
                        && (j - i) % 256 == (usize::from(b.offset) + 256 - usize::from(a.offset)) % 256
                }
                _ => false,
            }
        };
        let mut out = Vec::new();
        for i in 0..n {
            // (d): s' is the first j after i that satisfies (a)-(c) with i.
            if let Some(j) = (i + 1..n).find(|&j| ok(i, j)) {
                if j - i < limit {
                    out.push((i, j));
                }
            }
        }
        out
    }

    proptest! {
        #[test]
        fn linear_bridging_equals_literal_definition(
            raw in proptest::collection::vec(proptest::option::weighted(0.4, (1u64..4, 0u8..6)), 0..80),
            limit in 2usize..40,
        ) {
            let hits: Vec<Option<Hit>> = raw.iter().enumerate()
                .map(|(i, x)| x.map(|(o, d)| Hit { origin: o, offset: (i as u8).wrapping_sub(d), prev: 0, next: 0 }))
                .collect();
            let got = estimate(Estimation::B, limit, DOC, &vec![0; hits.len()], &hits);
            let mut want: Vec<(u64, How)> = hits.iter().map(|h| h.map_or((DOC, How::Own), |h| (h.origin, How::Found))).collect();
            let mut bridges = brute_bridges(limit, DOC, &hits);
            bridges.sort_by_key(|&(_, j)| j);
            for (i, j) in bridges {
                for slot in &mut want[i + 1..j] {
                    if slot.1 == How::Own { *slot = (hits[i].unwrap().origin, How::Bridged); }
                }
            }
            prop_assert_eq!(got, want);
        }
    }
}
