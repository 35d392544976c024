//! Instance families for checking that the exact search generalises beyond the six MiniMalloc
//! files it was developed on (deterministic: the same seed gives the same problem everywhere).
//!
//! - **Time reversed**: every lifetime `[s, e)` becomes `[T - e, T - s)`. A plan of the original
//!   is a plan of the reversed problem at the same height, so the same capacity fits.
//! - **Row shuffled**: the same buffers in another order. Only the search's tie-breaks see it.
//! - **Planted**: a `width x steps` rectangle cut at random into buffers. Cut only by straight
//!   cuts through a whole piece (guillotine), every step holds exactly `width` bytes, so the
//!   lower bound is `width` and a plan at that height exists (the cutting itself).

#![allow(dead_code)] // each user takes what it needs

use memplan_core::{Buffer, Problem};

/// A small pseudo-random generator (a linear congruential one): the same numbers everywhere.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x2545_F491_4F6C_DD1D)
    }

    /// The next number (31 bits).
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// `problem` with time reversed: same buffers, same feasible heights.
pub(crate) fn reversed(problem: &Problem) -> Problem {
    let end = problem
        .buffers()
        .iter()
        .map(|b| b.lifetime.end)
        .max()
        .unwrap_or(0);
    let buffers = problem
        .buffers()
        .iter()
        .map(|b| {
            let mut r = b.clone();
            r.lifetime = memplan_core::Lifetime::new(end - b.lifetime.end, end - b.lifetime.start);
            r
        })
        .collect();
    Problem::new(buffers).expect("reversing keeps a problem valid")
}

/// `problem` with its buffers in a pseudo-random order (Fisher-Yates from `seed`).
pub(crate) fn shuffled(problem: &Problem, seed: u64) -> Problem {
    let mut buffers: Vec<Buffer> = problem.buffers().to_vec();
    let mut rng = Rng::new(seed);
    for i in (1..buffers.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        buffers.swap(i, j);
    }
    Problem::new(buffers).expect("shuffling keeps a problem valid")
}

/// A `width x steps` rectangle cut into `pieces` buffers by guillotine cuts at multiples of
/// `grain` bytes (and whole steps): the largest piece is cut next, across its longer side
/// (relative to the whole rectangle) at a random point. Every step holds exactly `width`
/// bytes, so the optimum is `width`, the lower bound.
pub(crate) fn planted_guillotine(
    seed: u64,
    width: u64,
    steps: u64,
    pieces: usize,
    grain: u64,
) -> Problem {
    let mut rng = Rng::new(seed);
    // (offset, size, start, end)
    let mut rects: Vec<(u64, u64, u64, u64)> = vec![(0, width, 0, steps)];
    while rects.len() < pieces {
        // The largest piece (area relative to the whole), first on ties.
        let k = (0..rects.len())
            .max_by_key(|&k| {
                let (_, size, start, end) = rects[k];
                (
                    u128::from(size) * u128::from(end - start),
                    std::cmp::Reverse(k),
                )
            })
            .expect("at least one piece");
        let (offset, size, start, end) = rects[k];
        let (bytes_cuts, time_cuts) = (size / grain, end - start);
        let across_bytes = bytes_cuts > 1
            && (time_cuts <= 1
                || rng.below(1000) * width < 1000 * size * steps / (end - start) / 2);
        if across_bytes {
            let cut = (1 + rng.below(bytes_cuts - 1)) * grain;
            rects[k] = (offset, cut, start, end);
            rects.push((offset + cut, size - cut, start, end));
        } else if time_cuts > 1 {
            let cut = start + 1 + rng.below(time_cuts - 1);
            rects[k] = (offset, size, start, cut);
            rects.push((offset, size, cut, end));
        } else {
            break; // nothing left to cut
        }
    }
    let buffers = rects
        .iter()
        .enumerate()
        .map(|(i, &(_, size, start, end))| Buffer::new(format!("g{i}"), size, start, end))
        .collect();
    Problem::new(buffers).expect("pieces of a rectangle are a valid problem")
}
