//! The byte layout of one bucket (`docs/table-format.md`, "Bucket") and the operations
//! on it: find, read and write an entry, LRU's queue order, halving, the lowest score.
//!
//! Bucket layout: `B` tags (u16), then `B` eviction bytes, then `B` records of 13 bytes
//! (fingerprint bits 16-47 as u32, origin as 48 bits, offset, prev, next). A lookup
//! reads the tags and the eviction bytes (adjacent, prefetched); an insert or a hit
//! then touches one record (at most two cache lines).

use super::Hit;

/// Column offsets within a bucket, as multiples of the bucket's entry count B.
pub(super) const COL_SCORE: usize = 2;
const COL_RECORD: usize = 3;
const RECORD: usize = 13;
/// (column, width) of every field, for moving whole entries.
const COLUMNS: [(usize, usize); 3] = [(0, 2), (COL_SCORE, 1), (COL_RECORD, RECORD)];

#[inline]
pub(super) fn record(n: usize, slot: usize) -> usize {
    COL_RECORD * n + RECORD * slot
}

pub(super) fn get_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

#[inline]
pub(super) fn occupied(data: &[u8], n: usize) -> usize {
    data[COL_SCORE * n..COL_SCORE * n + n].iter().position(|&s| s == 0).unwrap_or(n)
}

#[inline]
pub(super) fn entry_matches(data: &[u8], n: usize, slot: usize, fp: u64) -> bool {
    let tag = (fp & 0xffff) as u16;
    u16::from_le_bytes([data[2 * slot], data[2 * slot + 1]]) == tag
        && get_u32(data, record(n, slot)) == (fp >> 16) as u32
}

#[inline]
pub(super) fn find(data: &[u8], n: usize, fp: u64) -> Option<usize> {
    let count = occupied(data, n);
    let tag = ((fp & 0xffff) as u16).to_le_bytes();
    let lo = (fp >> 16) as u32;
    (0..count).find(|&s| data[2 * s..2 * s + 2] == tag && get_u32(data, record(n, s)) == lo)
}

#[inline]
pub(super) fn read_hit(data: &[u8], n: usize, slot: usize) -> Hit {
    let r = &data[record(n, slot)..record(n, slot) + RECORD];
    let origin = u64::from_le_bytes([r[4], r[5], r[6], r[7], r[8], r[9], 0, 0]);
    Hit { origin, offset: r[10], prev: r[11], next: r[12] }
}

pub(super) fn write_entry(data: &mut [u8], n: usize, slot: usize, fp: u64, e: Hit) {
    data[2 * slot..2 * slot + 2].copy_from_slice(&((fp & 0xffff) as u16).to_le_bytes());
    let r = &mut data[record(n, slot)..record(n, slot) + RECORD];
    r[0..4].copy_from_slice(&((fp >> 16) as u32).to_le_bytes());
    write_hit(data, n, slot, e);
    data[COL_SCORE * n + slot] = 1;
}

/// Rewrites the data of the entry at `slot` (origin, offset, neighbour bytes), leaving
/// its fingerprint and score.
pub(super) fn write_hit(data: &mut [u8], n: usize, slot: usize, e: Hit) {
    let r = &mut data[record(n, slot)..record(n, slot) + RECORD];
    r[4..10].copy_from_slice(&e.origin.to_le_bytes()[..6]);
    r[10] = e.offset;
    r[11] = e.prev;
    r[12] = e.next;
}

/// Moves the entry at `slot` behind the others of the occupied prefix `..count`.
pub(super) fn move_to_back(data: &mut [u8], n: usize, slot: usize, count: usize) {
    for (col, w) in COLUMNS {
        data[col * n + w * slot..col * n + w * count].rotate_left(w);
    }
}

/// Halves every occupied score, keeping occupied scores at 1 or more.
pub(super) fn halve(data: &mut [u8], n: usize) {
    for s in &mut data[COL_SCORE * n..COL_SCORE * n + n] {
        if *s != 0 {
            *s = (*s / 2).max(1);
        }
    }
}

/// The slot with the lowest score of a full bucket; ties go to the `h mod ties`-th.
pub(super) fn lowest_score(data: &[u8], n: usize, h: u64) -> usize {
    let scores = &data[COL_SCORE * n..COL_SCORE * n + n];
    let min = *scores.iter().min().expect("bucket not empty");
    let ties = scores.iter().filter(|&&s| s == min).count();
    let pick = (h % ties as u64) as usize;
    scores.iter().enumerate().filter(|(_, &s)| s == min).nth(pick).map(|(i, _)| i).expect("pick < ties")
}
