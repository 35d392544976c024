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

/// Six buffers, six bytes live at every step, that pack without waste only when the two small
/// ones share a level (naive stacking needs 14).
pub(crate) fn two_pairs_sharing_a_level() -> Vec<Buffer> {
    vec![
        Buffer::new("a", 2, 0, 2),
        Buffer::new("b", 3, 1, 3),
        Buffer::new("c", 2, 2, 4),
        Buffer::new("d", 3, 0, 1),
        Buffer::new("e", 3, 3, 4),
        Buffer::new("f", 1, 0, 4),
    ]
}

/// A linear congruential generator: the same numbers on every machine, for tests.
pub(crate) struct Lcg(u64);

impl Lcg {
    /// A generator started at `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next number (31 bits).
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    /// The next number below `n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// `n` buffers `b{from}_0, b{from}_1, ...` with pseudo-random lifetimes within steps
/// `[from, from + steps)` and sizes 1 to 40 (an [`Lcg`]: the same problem on every machine).
pub(crate) fn pseudo_random_buffers(seed: u64, n: u64, steps: u64, from: u64) -> Vec<Buffer> {
    let mut rng = Lcg::new(seed);
    (0..n)
        .map(|i| {
            let start = rng.next() % steps;
            let end = (start + 1 + rng.next() % (steps / 2)).min(steps);
            Buffer::new(
                format!("b{from}_{i}"),
                1 + rng.next() % 40,
                from + start,
                from + end,
            )
        })
        .collect()
}
