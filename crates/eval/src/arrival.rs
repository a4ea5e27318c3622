//! Arrival orders for `eval --arrival`: the corpus's order is its
//! publication order, and a stream may deliver it otherwise. A run in another arrival
//! order numbers the documents as they arrive (as ingestion does) and is scored against
//! the oracle in publication order, its results renumbered by publication.

use textorigin_core::engine::DocResult;
use textorigin_core::testdata::XorShift;

/// How documents arrive against their publication order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// As published.
    InOrder,
    /// A seeded random permutation.
    Shuffled,
    /// Newest first.
    Reverse,
    /// Each document delayed by a random 0 to N positions (ties: publication order).
    Lag(usize),
}

impl std::str::FromStr for Arrival {
    type Err = String;
    fn from_str(s: &str) -> Result<Arrival, String> {
        match s.trim() {
            "in-order" => Ok(Arrival::InOrder),
            "shuffled" => Ok(Arrival::Shuffled),
            "reverse" => Ok(Arrival::Reverse),
            other => other
                .strip_prefix("lag:")
                .and_then(|n| n.parse().ok())
                .map(Arrival::Lag)
                .ok_or_else(|| format!("unknown arrival `{s}`; expected in-order, shuffled, reverse or lag:N")),
        }
    }
}

impl std::fmt::Display for Arrival {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Arrival::InOrder => f.write_str("in-order"),
            Arrival::Shuffled => f.write_str("shuffled"),
            Arrival::Reverse => f.write_str("reverse"),
            Arrival::Lag(n) => write!(f, "lag:{n}"),
        }
    }
}

impl Arrival {
    /// The publication indices of `n` documents in the order they arrive.
    pub fn order(self, n: usize, seed: u64) -> Vec<usize> {
        let mut rng = XorShift::new(seed ^ 0x05ee_da77_17a1_u64);
        match self {
            Arrival::InOrder => (0..n).collect(),
            Arrival::Reverse => (0..n).rev().collect(),
            Arrival::Shuffled => {
                let mut v: Vec<usize> = (0..n).collect();
                rng.shuffle(&mut v);
                v
            }
            Arrival::Lag(lag) => {
                let mut keyed: Vec<(u64, usize)> = (0..n).map(|i| (i as u64 + rng.below(lag as u64 + 1), i)).collect();
                keyed.sort_unstable();
                keyed.into_iter().map(|(_, i)| i).collect()
            }
        }
    }
}

/// `r` with every document number `s` (its own and its origins') replaced by
/// `number(s)`: a run's arrival numbers turned into publication numbers.
pub fn renumber(mut r: DocResult, number: impl Fn(u64) -> u64) -> DocResult {
    r.seq = number(r.seq);
    r.dominant_origin = r.dominant_origin.map(&number);
    r.most_copied_origin = r.most_copied_origin.map(&number);
    r.origin_counts.iter_mut().for_each(|c| c.0 = number(c.0));
    r.copied_blocks.iter_mut().for_each(|b| b.origin = number(b.origin));
    r.selected_origins.iter_mut().for_each(|s| s.origin = number(s.origin));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_are_permutations_as_named() {
        for a in [Arrival::InOrder, Arrival::Shuffled, Arrival::Reverse, Arrival::Lag(10)] {
            let o = a.order(500, 7);
            let mut sorted = o.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..500).collect::<Vec<_>>(), "{a}");
            assert_eq!(a.to_string().parse::<Arrival>(), Ok(a));
        }
        assert_eq!(Arrival::Reverse.order(3, 0), [2, 1, 0]);
        // lag:N moves a document at most N places later (and so an earlier one ahead
        // of it by at most N).
        let o = Arrival::Lag(10).order(1000, 3);
        assert!(o.iter().enumerate().all(|(pos, &i)| pos + 10 >= i && i + 10 >= pos), "{o:?}");
        assert_ne!(o, Arrival::InOrder.order(1000, 3));
        assert_ne!(Arrival::Shuffled.order(100, 1), Arrival::Shuffled.order(100, 2));
        assert!("lag:x".parse::<Arrival>().is_err());
    }
}
