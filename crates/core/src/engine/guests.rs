//! The adaptive density's extra shingles beside the policy's (the module docs of
//! [`super`] and of [`crate::table`], "Extra entries are guests"): where a policy
//! shingle's entry places it (among the policy's shingles alone), the result from the
//! policy's estimate and what the extra shingles found, and Lucky's bonuses taken over
//! the policy's shingles.

use super::{copied_blocks, lucky_bonus, DocResult, Span};
use crate::estimate::How;
use crate::select::{Item, SELECTED};
use crate::table::Hit;

/// Where each selected shingle of a document whose shingles have `ranks` and `tops`,
/// those in `kept` (ascending) selected, sits as its entry keeps it: (its place where
/// not its index, the top bytes of its neighbours); an extra shingle's among all of
/// them, a policy shingle's among the policy's ([`ShardItem::place`]).
pub(crate) fn places(kept: &[usize], (ranks, tops): (&[u8], &[u8])) -> Vec<(Option<u32>, u8, u8)> {
    let policy: Vec<usize> = (0..kept.len()).filter(|&i| ranks[kept[i]] == SELECTED).collect();
    let mut out: Vec<(Option<u32>, u8, u8)> = (0..kept.len())
        .map(|i| (None, if i > 0 { tops[kept[i - 1]] } else { 0 }, kept.get(i + 1).map_or(0, |&x| tops[x])))
        .collect();
    if policy.len() < kept.len() {
        for (p, &i) in policy.iter().enumerate() {
            let prev = if p > 0 { tops[kept[policy[p - 1]]] } else { 0 };
            let next = policy.get(p + 1).map_or(0, |&x| tops[kept[x]]);
            out[i] = ((p != i).then_some(p as u32), prev, next);
        }
    }
    out
}

/// The origins and offsets of a document's selected shingles, `hits` what each found,
/// from the estimate of its policy's shingles alone (`policy` their indexes, ascending,
/// `of_policy` the estimate): an extra shingle keeps what it found, and one not found
/// between two policy shingles of one copied origin takes that origin (bridged).
pub(super) fn with_extra_shingles(
    seq: u64,
    policy: &[usize],
    (of_policy, policy_offsets): (Vec<(u64, How)>, Vec<u8>),
    hits: &[Option<Hit>],
) -> (Vec<(u64, How)>, Vec<u8>) {
    let mut origins = vec![(seq, How::Own); hits.len()];
    let mut offsets = vec![0u8; hits.len()];
    for (p, &i) in policy.iter().enumerate() {
        (origins[i], offsets[i]) = (of_policy[p], policy_offsets[p]);
    }
    // The policy's shingles around each extra one: `policy[p - 1]` and `policy[p]`.
    let mut p = 0;
    for i in 0..hits.len() {
        if policy.get(p) == Some(&i) {
            p += 1;
        } else if let Some(h) = hits[i] {
            (origins[i], offsets[i]) = ((h.origin, How::Found), h.offset);
        } else if let (Some(&b), Some(&a)) = (p.checked_sub(1).map(|b| &policy[b]), policy.get(p)) {
            if origins[b].0 == origins[a].0 && origins[b].0 != seq {
                (origins[i], offsets[i]) = ((origins[b].0, How::Bridged), offsets[b]);
            }
        }
    }
    (origins, offsets)
}

/// Lucky's bonuses (rules b-d) of a document's selected shingles `items` whose
/// estimate is `result`: those of the paper's table, taken over the policy's shingles
/// and their copied blocks alone ([`crate::table`], "Extra entries are guests"); 0 for
/// an extra shingle.
pub(super) fn policy_bonus(items: &[Item], result: &DocResult, y: u32) -> Vec<u32> {
    if items.iter().all(|it| it.rank == SELECTED) {
        return lucky_bonus(items, &result.copied_blocks, y);
    }
    let policy: Vec<usize> = (0..items.len()).filter(|&i| items[i].rank == SELECTED).collect();
    let of_policy: Vec<Item> = policy.iter().map(|&i| items[i]).collect();
    let origins: Vec<(u64, How)> =
        policy.iter().map(|&i| (result.selected_origins[i].origin, result.selected_origins[i].how)).collect();
    let span = |start: u32, end: u32| Span { start_token: start, end_token: end, start_byte: 0, end_byte: 0 };
    let blocks = copied_blocks(result.seq, &of_policy, &origins, span);
    let mut bonus = vec![0u32; items.len()];
    for (b, &i) in lucky_bonus(&of_policy, &blocks, y).into_iter().zip(&policy) {
        bonus[i] = b;
    }
    bonus
}
