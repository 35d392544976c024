//! Test inputs: reproducible pseudo-random floats, shared by the unit tests of the matrix
//! product, MatMul and Conv.

use std::vec::Vec;

/// `n` floats in `[-1, 1)` from an xorshift32 seeded by `seed` (the same on every machine).
pub(crate) fn values(n: usize, seed: u32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(2_654_435_761).max(1);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s >> 8) as f32 / (1u32 << 23) as f32 - 1.0
        })
        .collect()
}
