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

/// `n` buffers `b0, b1, ...` with pseudo-random lifetimes within steps `[from, from + steps)` and
/// sizes 1 to 40 (a linear congruential generator: the same problem on every machine).
pub(crate) fn pseudo_random_buffers(seed: u64, n: u64, steps: u64, from: u64) -> Vec<Buffer> {
    let mut state = seed;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        state >> 33
    };
    (0..n)
        .map(|i| {
            let start = next() % steps;
            let end = (start + 1 + next() % (steps / 2)).min(steps);
            Buffer::new(
                format!("b{from}_{i}"),
                1 + next() % 40,
                from + start,
                from + end,
            )
        })
        .collect()
}
