//! Deterministic weights, computed at compile time: no files, no heap, the same on every machine.

/// `N` pseudo-random values in `[-scale, scale)` from a linear congruential generator.
pub(crate) const fn uniform<const N: usize>(seed: u32, scale: f32) -> [f32; N] {
    let mut out = [0.0; N];
    let mut state = seed;
    let mut i = 0;
    while i < N {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let unit = (state >> 8) as f32 / (1u32 << 24) as f32;
        out[i] = (unit * 2.0 - 1.0) * scale;
        i += 1;
    }
    out
}

/// conv1: 8 output channels x 1 input channel x 3 x 3.
pub(crate) const CONV1_W: [f32; 72] = uniform(1, 0.33);
/// conv1 bias.
pub(crate) const CONV1_B: [f32; 8] = uniform(2, 0.1);
/// conv2: 8 x 8 x 3 x 3.
pub(crate) const CONV2_W: [f32; 576] = uniform(3, 0.12);
/// conv2 bias.
pub(crate) const CONV2_B: [f32; 8] = uniform(4, 0.1);
/// conv3: 8 x 8 x 3 x 3.
pub(crate) const CONV3_W: [f32; 576] = uniform(5, 0.12);
/// conv3 bias.
pub(crate) const CONV3_B: [f32; 8] = uniform(6, 0.1);
/// dense: 10 outputs x 128 inputs.
pub(crate) const DENSE_W: [f32; 1280] = uniform(7, 0.09);
/// dense bias.
pub(crate) const DENSE_B: [f32; 10] = uniform(8, 0.1);

/// A 16x16 test image: a ring, like a hand-drawn zero.
pub(crate) fn ring_image() -> [f32; 256] {
    let mut image = [0.0; 256];
    for (i, pixel) in image.iter_mut().enumerate() {
        let (y, x) = ((i / 16) as f32 - 7.5, (i % 16) as f32 - 7.5);
        let radius = (x * x + y * y).sqrt();
        *pixel = if (4.0..6.5).contains(&radius) {
            1.0
        } else {
            0.0
        };
    }
    image
}
