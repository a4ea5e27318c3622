//! What a Parquet file's footer says, checked before the `parquet` crate reads it.
//!
//! The crate builds a footer's schema into a tree recursively, without a depth limit:
//! 10,000 nested groups (an 80 KB file) overflow the reading thread's stack, which
//! aborts the process (a stack overflow is no panic). So the schema's depth is read
//! here first, from the footer's Thrift compact encoding (the Parquet format's
//! `FileMetaData`, field 2: the schema as a flat list of `SchemaElement`s in depth-first
//! order, each group with its `num_children`, field 5), by a loop with a stack of
//! counts, and a schema deeper than [`MAX_DEPTH`] is refused. Only the fields up to the
//! schema are decoded; the others are skipped, at most [`MAX_NESTING`] structures deep.

use std::fs::File;
use std::os::unix::fs::FileExt;

/// Deepest schema read (real datasets nest a few levels; Arrow's own reader refuses
/// deeper than 64 levels of nesting by default too).
pub const MAX_DEPTH: usize = 64;
/// Deepest Thrift structure skipped inside the footer's fields.
const MAX_NESTING: u32 = 32;
/// Largest footer read for the check (the crate reads it whole anyway).
const MAX_FOOTER: u64 = 256 << 20;

/// Why a footer is refused, in words for the user.
pub type Refusal = String;

/// Checks the footer of the Parquet file `file` (`len` bytes). A footer that cannot be
/// decoded here is left for the crate to refuse with its own words.
pub fn check(file: &File, len: u64) -> Result<(), Refusal> {
    if len < 12 {
        return Ok(());
    }
    let mut tail = [0u8; 8];
    if file.read_exact_at(&mut tail, len - 8).is_err() || &tail[4..] != b"PAR1" {
        return Ok(());
    }
    let size = u64::from(u32::from_le_bytes(tail[..4].try_into().expect("4 bytes")));
    if size > len - 8 || size > MAX_FOOTER {
        return Ok(());
    }
    let mut footer = vec![0u8; size as usize];
    if file.read_exact_at(&mut footer, len - 8 - size).is_err() {
        return Ok(());
    }
    match schema_depth(&footer) {
        Some(depth) if depth > MAX_DEPTH => Err(format!(
            "a Parquet schema nested over {MAX_DEPTH} levels deep (at least {depth}): refused before it is read"
        )),
        _ => Ok(()),
    }
}

/// The deepest level of the schema in a `FileMetaData` (the root is level 0), counted
/// up to one past [`MAX_DEPTH`]; None when it cannot be decoded.
fn schema_depth(footer: &[u8]) -> Option<usize> {
    let mut r = Reader { b: footer, at: 0 };
    let mut last = 0i16;
    loop {
        let (id, kind) = r.field(&mut last)?;
        match (id, kind) {
            (_, STOP) => return Some(0),
            (2, LIST) => break,
            _ => r.skip(kind, 0)?,
        }
    }
    let (count, kind) = r.list_head()?;
    if kind != STRUCT {
        return None;
    }
    let mut open: Vec<u64> = Vec::new();
    let mut deepest = 0;
    for _ in 0..count {
        let depth = open.len();
        deepest = deepest.max(depth);
        if depth > MAX_DEPTH {
            return Some(depth);
        }
        let children = r.schema_element_children()?;
        if let Some(top) = open.last_mut() {
            *top = top.saturating_sub(1);
        }
        if children > 0 {
            open.push(children);
        }
        while open.last() == Some(&0) {
            open.pop();
        }
    }
    Some(deepest)
}

// Thrift compact protocol types.
const STOP: u8 = 0;
const TRUE: u8 = 1;
const FALSE: u8 = 2;
const BYTE: u8 = 3;
const I16: u8 = 4;
const I32: u8 = 5;
const I64: u8 = 6;
const DOUBLE: u8 = 7;
const BINARY: u8 = 8;
const LIST: u8 = 9;
const SET: u8 = 10;
const MAP: u8 = 11;
const STRUCT: u8 = 12;
const UUID: u8 = 13;

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Option<u8> {
        let x = *self.b.get(self.at)?;
        self.at += 1;
        Some(x)
    }

    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let x = self.byte()?;
            v |= u64::from(x & 0x7f) << shift;
            if x & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    fn zigzag(&mut self) -> Option<i64> {
        let v = self.varint()?;
        Some((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    fn advance(&mut self, n: u64) -> Option<()> {
        let end = self.at.checked_add(usize::try_from(n).ok()?)?;
        (end <= self.b.len()).then(|| self.at = end)
    }

    /// A field's header: its id and type (`STOP` ends a structure).
    fn field(&mut self, last: &mut i16) -> Option<(i16, u8)> {
        let h = self.byte()?;
        let kind = h & 0x0f;
        if kind == STOP {
            return Some((0, STOP));
        }
        let delta = i16::from(h >> 4);
        *last = if delta == 0 { i16::try_from(self.zigzag()?).ok()? } else { last.checked_add(delta)? };
        Some((*last, kind))
    }

    /// A list's or set's header: its length and element type.
    fn list_head(&mut self) -> Option<(u64, u8)> {
        let h = self.byte()?;
        let n = match u64::from(h >> 4) {
            15 => self.varint()?,
            n => n,
        };
        // Every element takes a byte at least: a length past the footer is no list.
        (n <= self.b.len() as u64).then_some((n, h & 0x0f))
    }

    /// Skips a value of type `kind`, `depth` structures in.
    fn skip(&mut self, kind: u8, depth: u32) -> Option<()> {
        match kind {
            TRUE | FALSE => Some(()),
            BYTE => self.advance(1),
            I16 | I32 | I64 => self.varint().map(|_| ()),
            DOUBLE => self.advance(8),
            UUID => self.advance(16),
            BINARY => {
                let n = self.varint()?;
                self.advance(n)
            }
            LIST | SET => {
                let (n, elem) = self.list_head()?;
                for _ in 0..n {
                    // A list's booleans are a byte each.
                    if elem == TRUE || elem == FALSE {
                        self.advance(1)?
                    } else {
                        self.skip(elem, depth)?
                    }
                }
                Some(())
            }
            MAP => {
                let n = self.varint()?;
                if n == 0 {
                    return Some(());
                }
                let kinds = self.byte()?;
                for _ in 0..n {
                    self.skip(kinds >> 4, depth)?;
                    self.skip(kinds & 0x0f, depth)?;
                }
                Some(())
            }
            STRUCT if depth < MAX_NESTING => {
                let mut last = 0;
                loop {
                    match self.field(&mut last)? {
                        (_, STOP) => return Some(()),
                        (_, k) => self.skip(k, depth + 1)?,
                    }
                }
            }
            _ => None,
        }
    }

    /// A `SchemaElement`'s `num_children` (0 for a leaf).
    fn schema_element_children(&mut self) -> Option<u64> {
        let mut last = 0;
        let mut children = 0;
        loop {
            match self.field(&mut last)? {
                (_, STOP) => return Some(children),
                (5, I32) => children = u64::try_from(self.zigzag()?).unwrap_or(0),
                (_, k) => self.skip(k, 1)?,
            }
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// The footer of a file whose schema is `depth` groups nested in one another
    /// around one string column (what an attacker writes by hand).
    pub(in crate::input) fn nested_footer(depth: usize) -> Vec<u8> {
        let mut f = vec![0x15, 0x02]; // field 1 (i32) version = 1
        f.push(0x19); // field 2 (list)
        f.push(0xfc); // 15+ structs
        let mut n = (depth + 1) as u64;
        while n >= 0x80 {
            f.push((n as u8 & 0x7f) | 0x80);
            n >>= 7;
        }
        f.push(n as u8);
        for level in 0..=depth {
            if level < depth {
                f.extend([0x48, 1, b'g']); // field 4 (binary) name
                f.extend([0x15, 0x02]); // field 5 (i32) num_children = 1
            } else {
                f.extend([0x15, 0x0c]); // field 1 (i32) type = BYTE_ARRAY
                f.extend([0x38, 1, b't']); // field 4 (binary) name
            }
            f.push(0);
        }
        f.extend([0x16, 0x00]); // field 3 (i64) num_rows = 0
        f.extend([0x19, 0x0c]); // field 4 (list) row groups: none
        f.push(0);
        f
    }

    #[test]
    fn a_schema_is_measured_without_recursion_and_refused_past_the_most() {
        assert_eq!(schema_depth(&nested_footer(3)), Some(3), "the column under the root and two groups");
        assert_eq!(schema_depth(&nested_footer(MAX_DEPTH)), Some(MAX_DEPTH));
        assert_eq!(schema_depth(&nested_footer(100_000)), Some(MAX_DEPTH + 1), "stops counting past the most");
        assert_eq!(schema_depth(&[0x15]), None, "cut off");
    }

    #[test]
    fn real_files_are_shallow() {
        for name in ["pydocs.parquet", "pydocs-zstd.parquet"] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/parquet").join(name);
            let file = File::open(&path).unwrap();
            let len = file.metadata().unwrap().len();
            assert_eq!(check(&file, len), Ok(()));
            let mut tail = [0u8; 8];
            file.read_exact_at(&mut tail, len - 8).unwrap();
            let size = u64::from(u32::from_le_bytes(tail[..4].try_into().unwrap()));
            let mut footer = vec![0u8; size as usize];
            file.read_exact_at(&mut footer, len - 8 - size).unwrap();
            assert_eq!(schema_depth(&footer), Some(1), "{name}: the root and its columns");
        }
    }
}
