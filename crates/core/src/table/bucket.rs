//! The byte layout of one bucket (`docs/table-format.md`, "Bucket") and the operations
//! on it: find, read and write an entry, LRU's queue order, halving, the lowest score.
//!
//! Bucket layout: `B` tags (u16: fingerprint bits 6-21), then `B` eviction bytes, then
//! `B` records of 13 bytes (fingerprint bits 22-29 as a byte, bits 30-61 as u32 — the
//! 32 bits bucket placement uses, so an entry's bucket in a table of any size is known
//! from the entry alone —, origin as 39 bits and the extra flag as bit 39 (the
//! entry was inserted for a shingle the density added, not the policy), offset, prev,
//! next). A lookup reads the
//! tags and the eviction bytes (adjacent, prefetched); an insert or a hit then touches
//! one record (at most two cache lines).

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

/// Entries in use: the slots before the first score of 0 (a bucket fills from its
/// first slot). Read eight scores at a time.
#[inline]
pub(super) fn occupied(data: &[u8], n: usize) -> usize {
    let scores = &data[COL_SCORE * n..COL_SCORE * n + n];
    let mut chunks = scores.chunks_exact(8);
    for (i, chunk) in chunks.by_ref().enumerate() {
        let v = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        // The lowest byte of v that is 0 sets the high bit of its lane here, and no
        // lane below it does (a borrow only runs upwards).
        let zero = v.wrapping_sub(0x0101_0101_0101_0101) & !v & 0x8080_8080_8080_8080;
        if zero != 0 {
            return i * 8 + zero.trailing_zeros() as usize / 8;
        }
    }
    let done = n - chunks.remainder().len();
    done + chunks.remainder().iter().position(|&s| s == 0).unwrap_or(n - done)
}

/// The tag of a fingerprint: its bits 6-21.
#[inline]
fn tag(fp: u64) -> [u8; 2] {
    ((fp >> 6) as u16).to_le_bytes()
}

/// Bits 30-61 of the fingerprint of the entry at `slot`: what bucket placement uses
/// ([`super::bucket_of`]).
#[inline]
pub(super) fn placement(data: &[u8], n: usize, slot: usize) -> u32 {
    get_u32(data, record(n, slot) + 1)
}

/// The fingerprint bits an entry holds (6-61), the others 0.
pub(super) fn stored_bits(data: &[u8], n: usize, slot: usize) -> u64 {
    u64::from(u16::from_le_bytes([data[2 * slot], data[2 * slot + 1]])) << 6
        | u64::from(data[record(n, slot)]) << 22
        | u64::from(placement(data, n, slot)) << 30
}

#[inline]
fn record_matches(data: &[u8], n: usize, slot: usize, fp: u64) -> bool {
    data[record(n, slot)] == (fp >> 22) as u8 && placement(data, n, slot) == (fp >> 30) as u32
}

#[inline]
pub(super) fn entry_matches(data: &[u8], n: usize, slot: usize, fp: u64) -> bool {
    data[2 * slot..2 * slot + 2] == tag(fp) && record_matches(data, n, slot, fp)
}

#[inline]
pub(super) fn find(data: &[u8], n: usize, fp: u64) -> Option<usize> {
    let count = occupied(data, n);
    let tag = tag(fp);
    let matches = |s: usize| data[2 * s..2 * s + 2] == tag && record_matches(data, n, s, fp);
    // Four tags at a time: a lane equal to the tag is 0 after the xor; the test below
    // marks every such lane (and may mark a lane above one, checked like the others).
    let spread = u64::from(u16::from_le_bytes(tag)) * 0x0001_0001_0001_0001;
    let mut chunks = data[..2 * count].chunks_exact(8);
    for (i, chunk) in chunks.by_ref().enumerate() {
        let v = u64::from_le_bytes(chunk.try_into().expect("8 bytes")) ^ spread;
        let mut zero = v.wrapping_sub(0x0001_0001_0001_0001) & !v & 0x8000_8000_8000_8000;
        while zero != 0 {
            let s = i * 4 + zero.trailing_zeros() as usize / 16;
            if matches(s) {
                return Some(s);
            }
            zero &= zero - 1;
        }
    }
    (count - chunks.remainder().len() / 2..count).find(|&s| matches(s))
}

/// The byte of a record holding the extra flag (bit 7: origin bit 39).
const FLAG_BYTE: usize = 9;

#[inline]
pub(super) fn read_hit(data: &[u8], n: usize, slot: usize) -> Hit {
    let r = &data[record(n, slot)..record(n, slot) + RECORD];
    let origin = u64::from_le_bytes([r[5], r[6], r[7], r[8], r[9] & 0x7f, 0, 0, 0]);
    Hit { origin, offset: r[10], prev: r[11], next: r[12] }
}

/// Whether the entry at `slot` was inserted for an extra shingle.
#[inline]
pub(super) fn is_extra(data: &[u8], n: usize, slot: usize) -> bool {
    data[record(n, slot) + FLAG_BYTE] & 0x80 != 0
}

/// Sets or clears the extra flag of the entry at `slot`.
pub(super) fn set_extra(data: &mut [u8], n: usize, slot: usize, extra: bool) {
    let b = &mut data[record(n, slot) + FLAG_BYTE];
    *b = *b & 0x7f | u8::from(extra) << 7;
}

pub(super) fn write_entry(data: &mut [u8], n: usize, slot: usize, fp: u64, e: Hit, extra: bool) {
    data[2 * slot..2 * slot + 2].copy_from_slice(&tag(fp));
    let r = &mut data[record(n, slot)..record(n, slot) + RECORD];
    r[0] = (fp >> 22) as u8;
    r[1..5].copy_from_slice(&((fp >> 30) as u32).to_le_bytes());
    write_hit(data, n, slot, e);
    set_extra(data, n, slot, extra);
    data[COL_SCORE * n + slot] = 1;
}

/// Rewrites the data of the entry at `slot` (origin, offset, neighbour bytes), leaving
/// its fingerprint, extra flag and score.
pub(super) fn write_hit(data: &mut [u8], n: usize, slot: usize, e: Hit) {
    let r = &mut data[record(n, slot)..record(n, slot) + RECORD];
    let flag = r[FLAG_BYTE] & 0x80;
    r[5..10].copy_from_slice(&e.origin.to_le_bytes()[..5]);
    r[FLAG_BYTE] |= flag;
    r[10] = e.offset;
    r[11] = e.prev;
    r[12] = e.next;
}

/// Copies the entry at `from` of bucket `src` into the free slot `to` of bucket `dst`
/// (both of `n` entries).
pub(super) fn copy_entry(src: &[u8], from: usize, dst: &mut [u8], to: usize, n: usize) {
    for (col, w) in COLUMNS {
        dst[col * n + w * to..col * n + w * (to + 1)]
            .copy_from_slice(&src[col * n + w * from..col * n + w * (from + 1)]);
    }
}

/// Moves the entry at `slot` behind the others of the occupied prefix `..count`.
pub(super) fn move_to_back(data: &mut [u8], n: usize, slot: usize, count: usize) {
    for (col, w) in COLUMNS {
        data[col * n + w * slot..col * n + w * count].rotate_left(w);
    }
}

/// Halves the occupied scores of the slots `of` selects, keeping them at 1 or more.
pub(super) fn halve(data: &mut [u8], n: usize, of: impl Fn(usize) -> bool) {
    for (i, s) in data[COL_SCORE * n..COL_SCORE * n + n].iter_mut().enumerate() {
        if *s != 0 && of(i) {
            *s = (*s / 2).max(1);
        }
    }
}

/// The slot with the lowest score among the slots `of` (in bucket order, not empty) of
/// a bucket of `n` entries; ties go to the `h mod ties`-th.
pub(super) fn lowest_score(data: &[u8], n: usize, of: &[usize], h: u64) -> usize {
    let score = |i: usize| data[COL_SCORE * n + i];
    let min = of.iter().map(|&i| score(i)).min().expect("slots to choose from");
    let ties = of.iter().filter(|&&i| score(i) == min).count();
    let pick = (h % ties as u64) as usize;
    *of.iter().filter(|&&i| score(i) == min).nth(pick).expect("pick < ties")
}
