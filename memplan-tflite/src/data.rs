//! A constant tensor's bytes as the reader keeps them: a range of one copy of the file, shared by
//! every tensor whose data is those bytes. A file whose thousands of tensors all name one
//! megabyte block (the same buffer, or buffers with the same `offset` and `size`) is held once,
//! not once per tensor.

use std::fmt;
use std::ops::{Deref, Range};
use std::sync::Arc;

/// A constant's little-endian bytes: `range` of the file, which it shares with every other
/// constant of the graph (cloning one copies no bytes).
#[derive(Clone)]
pub struct Data {
    file: Arc<[u8]>,
    range: Range<usize>,
}

impl Data {
    /// `range` of `file` (within it: the reader checked).
    pub(crate) fn new(file: Arc<[u8]>, range: Range<usize>) -> Self {
        debug_assert!(range.end <= file.len());
        Self { file, range }
    }

    /// Where the bytes are in the file. Two constants with the same range have the same bytes:
    /// a consumer that copies constants copies each range once.
    pub fn range(&self) -> Range<usize> {
        self.range.clone()
    }
}

impl Deref for Data {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.file.get(self.range.clone()).unwrap_or(&[])
    }
}

impl AsRef<[u8]> for Data {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl PartialEq for Data {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl fmt::Debug for Data {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Data {{ bytes {}..{} of the file }}",
            self.range.start, self.range.end
        )
    }
}
