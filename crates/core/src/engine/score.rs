//! Phase 3's parts (the module docs of [`super`] say the rules): origin propagation and
//! Lucky's scores for the entries a document made or found.

use super::{Block, Feedback, Probe};
use crate::select::Item;
use crate::table::{BucketMemory, Position, Table};

/// Origin propagation: every entry the document inserted for a shingle estimation
/// labelled copied, if the document has not evicted it since, gets the estimated origin
/// and offset (its neighbour bytes, the document's, are the copy's too). An extra
/// shingle's entry only while it is an extra entry ([`crate::table::GUEST`]): a policy
/// shingle may have made it the policy's since, which that shingle's label decides.
pub(super) fn propagate<M: BucketMemory>(table: &mut Table<M>, probe: &Probe, fb: &Feedback) {
    for (k, &i) in probe.items.iter().enumerate() {
        let (origin, offset) = fb.origins[i as usize];
        let (pos, fp) = (probe.positions[k], probe.fps[k]);
        if probe.hits[k].is_none() && origin != fb.seq && table.holds(pos, fp) {
            table.relabel(pos, fp, origin, offset);
        }
    }
}

/// Lucky rules (b)-(d) for the selected shingles of a document: ⌊√(b−2)⌋ for the first
/// and last of each copied block of b shingles, 3 for the first and last, 1 for every
/// y-th.
pub(super) fn lucky_bonus(items: &[Item], blocks: &[Block], y: u32) -> Vec<u32> {
    let n = items.len();
    let mut bonus = vec![0u32; n];
    if n == 0 {
        return bonus;
    }
    let mut at = 0usize;
    for b in blocks {
        // Blocks are in item order; find the block's first item.
        while items[at].start != b.span.start_token {
            at += 1;
        }
        let size = b.shingles as usize;
        let add = if size >= 2 { ((size - 2) as f64).sqrt().floor() as u32 } else { 0 };
        bonus[at] += add;
        bonus[at + size - 1] += add;
        at += size;
    }
    bonus[0] += 3;
    bonus[n - 1] += 3;
    let y = y as usize;
    for (i, b) in bonus.iter_mut().enumerate() {
        if (i + 1) % y == 0 {
            *b += 1;
        }
    }
    bonus
}

/// Lucky rule (a) and the bonuses for the entries `probe` holds, merged per entry, then
/// (e) through [`Table::add_scores`]; an extra shingle scores nothing (the paper's
/// table never saw it).
pub(super) fn lucky_scores<M: BucketMemory>(table: &mut Table<M>, probe: &Probe, fb: &Feedback) {
    // (position, base, bonus, fingerprint), merged per entry.
    let mut per_entry: Vec<(Position, u32, u32, u64)> = (0..probe.items.len())
        .filter(|&k| probe.extra.get(k) != Some(&true))
        .map(|k| {
            let base = u32::from(probe.hits[k].is_some_and(|h| h.origin != fb.seq));
            (probe.positions[k], base, fb.bonus[probe.items[k] as usize], probe.fps[k])
        })
        .collect();
    per_entry.sort_by_key(|e| e.0);
    let mut updates: Vec<(Position, u64, u32)> = Vec::with_capacity(per_entry.len());
    for (pos, base, add, fp) in per_entry {
        if !table.holds(pos, fp) {
            continue; // evicted later in the same document
        }
        match updates.last_mut() {
            Some((p, _, total)) if *p == pos => *total += add, // base counts once
            _ => updates.push((pos, fp, base + add)),
        }
    }
    table.add_scores(&updates);
}
