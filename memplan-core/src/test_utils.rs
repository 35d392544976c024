//! Helpers shared by the unit tests.

use crate::model::{Buffer, Problem};

/// A problem of buffers `b0, b1, ...` given as `(size, start, end)`.
pub(crate) fn problem(buffers: &[(u64, u64, u64)]) -> Problem {
    Problem::new(
        buffers
            .iter()
            .enumerate()
            .map(|(i, &(size, start, end))| Buffer::new(format!("b{i}"), size, start, end))
            .collect(),
    )
    .expect("test buffers are valid")
}
