//! What the writer changed in its copy of a table file, by 4 KiB chunk (a
//! table's fixed costs follow its fill, not its size).
//!
//! The writer holds the table file in memory (`crate::sys::Map`) and writes it back to
//! three places: the table file itself (at a flush and at close) and the two checkpoint
//! slots (`storage::checkpoint`). Each keeps its own set of chunks changed since it was
//! last written, so a flush or a checkpoint writes only those. A slot this process has
//! not written yet is unknown: it is written over zeros (holes punched, or a new sparse
//! file) with every chunk ever written (`touched`); the chunks never written are zero
//! in memory and in the slot alike.
//!
//! A checkpoint's hash is over chunks ([`image_hash`]): xxh3-64 of the sequence of each
//! chunk's xxh3-64, so that the writer rehashes only the chunks changed since its last
//! checkpoint, and a chunk never written hashes to a known constant.

use std::ops::Range;

use xxhash_rust::xxh3::{xxh3_64, Xxh3};

/// Bytes per chunk: the page size.
pub const CHUNK: usize = 4096;

/// A set of chunks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bits {
    words: Vec<u64>,
}

impl Bits {
    fn new(chunks: usize) -> Bits {
        Bits { words: vec![0; chunks.div_ceil(64)] }
    }

    fn set_range(&mut self, r: Range<usize>) {
        for c in r {
            self.words[c / 64] |= 1 << (c % 64);
        }
    }

    fn contains(&self, c: usize) -> bool {
        self.words[c / 64] >> (c % 64) & 1 == 1
    }

    fn union(&mut self, other: &Bits) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }

    fn clear(&mut self) {
        self.words.fill(0);
    }

    /// The chunks in the set, as runs of consecutive ones.
    fn runs(&self) -> Vec<Range<usize>> {
        let mut out: Vec<Range<usize>> = Vec::new();
        for (w, &word) in self.words.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let c = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                match out.last_mut() {
                    Some(last) if last.end == c => last.end = c + 1,
                    _ => out.push(c..c + 1),
                }
            }
        }
        out
    }
}

/// The chunks of an image of `len` bytes changed since each place it goes to was last
/// written, and the chunk hashes of its last checkpoint.
#[derive(Debug, Clone)]
pub struct Dirty {
    len: usize,
    /// Every chunk written since the image was made (or read non-zero from its file).
    touched: Bits,
    /// Changed since the table file was last written.
    file: Bits,
    /// Changed since each checkpoint slot was last written by this process; None: the
    /// slot is unknown (made anew from `touched` when it is next written).
    slots: [Option<Bits>; 2],
    /// Changed since the chunk hashes were last computed.
    stale: Bits,
    hashes: Vec<u64>,
}

impl Dirty {
    /// An image of `len` bytes equal to its file, with `loaded` byte ranges non-zero
    /// (read from it) and the rest zero.
    pub fn new(len: usize, loaded: &[Range<usize>]) -> Dirty {
        let chunks = len.div_ceil(CHUNK);
        // Every chunk but perhaps the last is whole: one hash of zeros serves them all
        // (hashing each is hashing the image's length, 192 MiB at the default sizes, at
        // every open).
        let mut hashes = vec![zero_hash(CHUNK); chunks];
        if let Some(last) = hashes.last_mut() {
            *last = zero_hash(chunk_len(len, chunks - 1));
        }
        let mut d = Dirty {
            len,
            touched: Bits::new(chunks),
            file: Bits::new(chunks),
            slots: [None, None],
            stale: Bits::new(chunks),
            hashes,
        };
        for r in loaded {
            d.touched.set_range(chunks_of(r));
        }
        d.stale.union(&d.touched);
        d
    }

    /// Records a write to bytes `r`.
    #[inline]
    pub fn mark(&mut self, r: Range<usize>) {
        if r.is_empty() {
            return;
        }
        let c = chunks_of(&r);
        // The common case, one chunk already marked everywhere, costs a few tests.
        if c.len() == 1
            && self.file.contains(c.start)
            && self.stale.contains(c.start)
            && self.slots.iter().all(|s| s.as_ref().is_none_or(|s| s.contains(c.start)))
        {
            return;
        }
        self.touched.set_range(c.clone());
        self.file.set_range(c.clone());
        self.stale.set_range(c.clone());
        for s in self.slots.iter_mut().flatten() {
            s.set_range(c.clone());
        }
    }

    /// The byte ranges to write to the table file (changed since its last write).
    pub fn file_ranges(&self) -> Vec<Range<usize>> {
        self.bytes(&self.file)
    }

    /// The table file was written: nothing is pending for it.
    pub fn file_written(&mut self) {
        self.file.clear();
    }

    /// What to write into checkpoint slot `slot`: whether to make the file anew (the
    /// slot is unknown to this process), and the byte ranges.
    pub fn slot_plan(&self, slot: usize) -> (bool, Vec<Range<usize>>) {
        match &self.slots[slot] {
            Some(bits) => (false, self.bytes(bits)),
            None => (true, self.bytes(&self.touched)),
        }
    }

    /// Slot `slot` was written (and synced) as [`Dirty::slot_plan`] said: it holds the
    /// image as it is now.
    pub fn slot_written(&mut self, slot: usize) {
        match &mut self.slots[slot] {
            Some(bits) => bits.clear(),
            None => self.slots[slot] = Some(Bits::new(self.hashes.len())),
        }
    }

    /// Forgets what slot `slot` holds (it was removed, or never written).
    pub fn forget_slot(&mut self, slot: usize) {
        self.slots[slot] = None;
    }

    /// The [`image_hash`] of `image` (this tracker's image), rehashing only the chunks
    /// changed since the last call.
    pub fn image_hash(&mut self, image: &[u8]) -> u64 {
        assert_eq!(image.len(), self.len, "the image this tracker follows");
        for r in self.stale.runs() {
            for c in r {
                self.hashes[c] = xxh3_64(&image[c * CHUNK..(c * CHUNK + CHUNK).min(self.len)]);
            }
        }
        self.stale.clear();
        combine(&self.hashes)
    }

    fn bytes(&self, bits: &Bits) -> Vec<Range<usize>> {
        bits.runs().into_iter().map(|r| r.start * CHUNK..(r.end * CHUNK).min(self.len)).collect()
    }
}

/// The chunks that bytes `r` lie in.
fn chunks_of(r: &Range<usize>) -> Range<usize> {
    r.start / CHUNK..r.end.div_ceil(CHUNK)
}

/// Bytes of chunk `c` of an image of `len` bytes (the last one may be short).
fn chunk_len(len: usize, c: usize) -> usize {
    (len - c * CHUNK).min(CHUNK)
}

fn zero_hash(n: usize) -> u64 {
    const ZERO: [u8; CHUNK] = [0; CHUNK];
    xxh3_64(&ZERO[..n])
}

fn combine(hashes: &[u64]) -> u64 {
    let mut h = Xxh3::new();
    for x in hashes {
        h.update(&x.to_le_bytes());
    }
    h.digest()
}

/// The checkpoint hash of an image given in parts, one after the other: xxh3-64 of the
/// little-endian xxh3-64 of each [`CHUNK`] of their concatenation (the last one may be
/// short). What [`Dirty::image_hash`] computes incrementally.
pub fn image_hash<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> u64 {
    let mut hasher = ChunkHasher::default();
    for p in parts {
        hasher.update(p);
    }
    hasher.digest()
}

/// [`image_hash`] over bytes fed in any pieces.
#[derive(Default)]
pub struct ChunkHasher {
    buf: Vec<u8>,
    hashes: Xxh3,
}

impl ChunkHasher {
    pub fn update(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.buf.is_empty() && bytes.len() >= CHUNK {
                self.hashes.update(&xxh3_64(&bytes[..CHUNK]).to_le_bytes());
                bytes = &bytes[CHUNK..];
                continue;
            }
            let take = (CHUNK - self.buf.len()).min(bytes.len());
            self.buf.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.buf.len() == CHUNK {
                self.hashes.update(&xxh3_64(&self.buf).to_le_bytes());
                self.buf.clear();
            }
        }
    }

    pub fn digest(mut self) -> u64 {
        if !self.buf.is_empty() {
            self.hashes.update(&xxh3_64(&self.buf).to_le_bytes());
        }
        self.hashes.digest()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use textorigin_core::testdata::XorShift;

    proptest::proptest! {
        /// Against the brute-force reference: after any writes, each place written
        /// with its planned ranges holds the image, and the incremental hash is the
        /// hash of the whole image.
        #[test]
        fn planned_writes_keep_every_copy_equal_to_the_image(seed in 0u64..1 << 32, len in 1usize..40_000) {
            let mut g = XorShift::new(seed | 1);
            let mut image = vec![0u8; len];
            let first = g.below(len as u64) as usize;
            image[first] = 1; // loaded non-zero from the file
            let mut file = image.clone();
            let mut slots: [Vec<u8>; 2] = [vec![7; len], vec![9; len]]; // unknown content
            let loaded = std::iter::once(first..first + 1).collect::<Vec<_>>();
            let mut d = Dirty::new(len, &loaded);
            for round in 0..6 {
                for _ in 0..g.below(20) {
                    let at = g.below(len as u64) as usize;
                    let n = (g.below(300) as usize).min(len - at);
                    for b in &mut image[at..at + n] {
                        *b = g.below(256) as u8;
                    }
                    d.mark(at..at + n);
                }
                if g.below(2) == 0 {
                    for r in d.file_ranges() {
                        file[r.clone()].copy_from_slice(&image[r]);
                    }
                    d.file_written();
                    proptest::prop_assert_eq!(&file, &image);
                }
                let slot = round % 2;
                let (fresh, ranges) = d.slot_plan(slot);
                if fresh {
                    slots[slot] = vec![0; len];
                }
                for r in ranges {
                    slots[slot][r.clone()].copy_from_slice(&image[r]);
                }
                d.slot_written(slot);
                proptest::prop_assert_eq!(&slots[slot], &image);
                proptest::prop_assert_eq!(d.image_hash(&image), image_hash([&image[..]]));
            }
        }
    }

    #[test]
    fn the_hash_does_not_depend_on_how_the_image_is_cut() {
        let bytes: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
        let whole = image_hash([&bytes[..]]);
        assert_eq!(image_hash([&bytes[..100], &bytes[100..5000], &bytes[5000..]]), whole);
        assert_ne!(image_hash([&bytes[..9999]]), whole);
    }
}
