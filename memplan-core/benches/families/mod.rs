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

    /// Puts `items` in a pseudo-random order (Fisher-Yates).
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
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
    Rng::new(seed).shuffle(&mut buffers);
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

/// A log-uniform number in `1..=most` (1 when `most` is 0): small ones common, large ones
/// present, as sizes and lifetimes of real workloads are.
fn log_uniform(rng: &mut Rng, most: u64) -> u64 {
    if most <= 1 {
        return 1;
    }
    let unit = rng.below(1 << 20) as f64 / f64::from(1u32 << 20);
    ((most as f64).powf(unit).floor() as u64).clamp(1, most)
}

/// A plan made by an allocator that reuses freed space at once: `width` bytes (a multiple of
/// `grain`) filled with buffers at step 0, then, each time buffers end, the free runs of
/// addresses they leave (merged with free neighbours) are filled again with new buffers, each
/// run with probability `fill_permille / 1000` (else it waits for its neighbours to free up),
/// until `count` buffers exist. Sizes are log-uniform from `width / 256` to `width / 2` (a run's
/// last buffer takes what is left), lifetimes
/// log-uniform up to `steps / 2` steps (a tenth of them up to `steps`).
///
/// The packing is not a guillotine cut, and step 0 holds exactly `width` bytes: the lower bound
/// is `width` and a plan at that height exists (the allocator's own, returned with the
/// problem as an offset per buffer), so `width` is the optimum.
pub(crate) fn planted_reuse(
    seed: u64,
    width: u64,
    steps: u64,
    count: usize,
    grain: u64,
    fill_permille: u64,
) -> (Problem, Vec<u64>) {
    let mut rng = Rng::new(seed ^ 0x5EED);
    let units = width / grain;
    // (offset, size, start, end), in units and steps.
    let mut made: Vec<(u64, u64, u64, u64)> = Vec::new();
    // Live buffers as indices into `made`, and free runs of units (start, len).
    let mut live: Vec<usize> = Vec::new();
    let mut free: Vec<(u64, u64)> = vec![(0, units)];
    let mut now = 0u64;
    loop {
        // Fill the free runs (every run at step 0).
        let mut still_free = Vec::new();
        for &(start, len) in &free {
            if made.len() >= count || (now > 0 && rng.below(1000) >= fill_permille) {
                still_free.push((start, len));
                continue;
            }
            let mut at = start;
            while at < start + len {
                let left = start + len - at;
                // Log-uniform between units/256 and units/2, and no remainder below the least.
                let least = (units / 256).max(1);
                let mut size = least * log_uniform(&mut rng, 128);
                if size + least > left {
                    size = left;
                }
                let most = if rng.below(10) == 0 { steps } else { steps / 2 };
                let end = (now + log_uniform(&mut rng, most.max(1))).min(steps);
                live.push(made.len());
                made.push((at, size, now, end.max(now + 1)));
                at += size;
            }
        }
        free = still_free;
        // Move to the next end; what ends there frees its units.
        let Some(next) = live.iter().map(|&i| made[i].3).min() else {
            break;
        };
        now = next;
        live.retain(|&i| {
            let (offset, size, _, end) = made[i];
            if end == now {
                free.push((offset, size));
            }
            end != now
        });
        if now >= steps || (made.len() >= count && live.is_empty()) {
            break;
        }
        // Merge adjacent free runs.
        free.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::new();
        for (start, len) in free.drain(..) {
            match merged.last_mut() {
                Some((s, l)) if *s + *l == start => *l += len,
                _ => merged.push((start, len)),
            }
        }
        free = merged;
    }
    let buffers = made
        .iter()
        .enumerate()
        .map(|(i, &(_, size, start, end))| Buffer::new(format!("r{i}"), size * grain, start, end))
        .collect();
    let offsets = made.iter().map(|&(offset, ..)| offset * grain).collect();
    let problem = Problem::new(buffers).expect("an allocator's buffers are a valid problem");
    (problem, offsets)
}

/// A new problem cut from `problem`, every plan of which stays a plan of the new one: each
/// buffer is, with probability `cut_permille / 1000`, cut in two (across its bytes at
/// a multiple of `grain`, or across its lifetime at a step, at random), or with probability
/// `drop_permille / 1000` left out; then the rows are shuffled. A plan of the original is a
/// plan of the mutant (the pieces stay where their buffer was), so a capacity the original
/// met is met by the mutant, but its buffers, their orders and
/// the lower bound (when buffers were left out) are new.
pub(crate) fn mutated(
    problem: &Problem,
    seed: u64,
    cut_permille: u64,
    drop_permille: u64,
    grain: u64,
) -> Problem {
    let mut rng = Rng::new(seed ^ 0x0077_7A7E);
    let mut buffers = Vec::new();
    for b in problem.buffers() {
        let roll = rng.below(1000);
        let (start, end) = (b.lifetime.start, b.lifetime.end);
        if roll < drop_permille {
            continue;
        }
        if roll < drop_permille + cut_permille {
            let units = b.size / grain;
            if rng.below(2) == 0 && units >= 2 {
                let cut = (1 + rng.below(units - 1)) * grain;
                buffers.push(Buffer::new(format!("{}a", b.id), cut, start, end));
                buffers.push(Buffer::new(format!("{}b", b.id), b.size - cut, start, end));
                continue;
            }
            if end - start >= 2 {
                let cut = start + 1 + rng.below(end - start - 1);
                buffers.push(Buffer::new(format!("{}a", b.id), b.size, start, cut));
                buffers.push(Buffer::new(format!("{}b", b.id), b.size, cut, end));
                continue;
            }
        }
        buffers.push(Buffer::new(b.id.clone(), b.size, start, end));
    }
    let p = Problem::new(buffers).expect("pieces of a valid problem are valid");
    shuffled(&p, seed)
}

/// A `side x side` square (bytes by steps, both cut at multiples of `grain`) cut into `pieces`
/// rectangles by guillotine cuts, then each piece left out with probability
/// `1 - keep_permille / 1000`, rows shuffled; returned with the plan the cutting makes (each
/// kept piece at its own offset, so `side` always fits).
///
/// This is the shape of MiniMalloc's published challenging set: both axes 2^20 at a grain of
/// 1024, 150-400 buffers, a packing that fits 1048576 with 57-97% of the square filled, so
/// the lower bound may fall below the capacity. With `largest_first` the largest piece is cut
/// next (pieces of similar size); otherwise a piece picked at random, weighted by its area
/// (some pieces stay huge while others split down to one grain: long thin buffers beside
/// short wide ones). A cut goes across the longer side of the piece more often than not.
pub(crate) fn planted_square(
    seed: u64,
    side: u64,
    grain: u64,
    pieces: usize,
    keep_permille: u64,
    largest_first: bool,
) -> (Problem, Vec<u64>) {
    let mut rng = Rng::new(seed ^ 0x5A5A_0001);
    let units = side / grain;
    // (offset, size, start, end) in grains.
    let mut rects: Vec<(u64, u64, u64, u64)> = vec![(0, units, 0, units)];
    let area = |r: &(u64, u64, u64, u64)| r.1 * (r.3 - r.2);
    while rects.len() < pieces {
        let k = if largest_first {
            (0..rects.len())
                .max_by_key(|&k| (area(&rects[k]), std::cmp::Reverse(k)))
                .expect("at least one piece")
        } else {
            let total: u64 = rects.iter().map(area).sum();
            let mut pick = rng.below(total);
            let mut k = 0;
            while pick >= area(&rects[k]) {
                pick -= area(&rects[k]);
                k += 1;
            }
            k
        };
        let (offset, size, start, end) = rects[k];
        let length = end - start;
        if size < 2 && length < 2 {
            if rects.iter().all(|r| r.1 < 2 && r.3 - r.2 < 2) {
                break; // nothing left to cut
            }
            continue;
        }
        // Across the longer side three times in four.
        let longer_is_bytes = size >= length;
        let across_bytes = if size < 2 {
            false
        } else if length < 2 {
            true
        } else {
            (rng.below(4) != 0) == longer_is_bytes
        };
        if across_bytes {
            let cut = 1 + rng.below(size - 1);
            rects[k] = (offset, cut, start, end);
            rects.push((offset + cut, size - cut, start, end));
        } else {
            let cut = start + 1 + rng.below(length - 1);
            rects[k] = (offset, size, start, cut);
            rects.push((offset, size, cut, end));
        }
    }
    let mut kept: Vec<(u64, u64, u64, u64)> = rects
        .into_iter()
        .filter(|_| rng.below(1000) < keep_permille)
        .collect();
    rng.shuffle(&mut kept);
    let buffers = kept
        .iter()
        .enumerate()
        .map(|(i, &(_, size, start, end))| {
            Buffer::new(format!("q{i}"), size * grain, start * grain, end * grain)
        })
        .collect();
    let offsets = kept.iter().map(|&(offset, ..)| offset * grain).collect();
    let problem = Problem::new(buffers).expect("pieces of a square are a valid problem");
    (problem, offsets)
}
