//! Memory written range by range: the table's buckets ([`crate::table`]) and the
//! derived indexes behind them ([`crate::index`]) write through [`RangeMut`], so that
//! the memory's owner knows which bytes changed.

/// Bytes written range by range, so that their owner knows which ones changed (a table
/// file writes back only those: `textorigin_store::storage::table_file`).
pub trait RangeMut {
    /// The bytes in `r`, for writing.
    ///
    /// # Panics
    /// When `r` is out of bounds; may panic when the memory is read-only (a table file
    /// opened for reading).
    fn range_mut(&mut self, r: std::ops::Range<usize>) -> &mut [u8];
}

impl RangeMut for Vec<u8> {
    fn range_mut(&mut self, r: std::ops::Range<usize>) -> &mut [u8] {
        &mut self[r]
    }
}

impl RangeMut for &mut [u8] {
    fn range_mut(&mut self, r: std::ops::Range<usize>) -> &mut [u8] {
        &mut self[r]
    }
}
