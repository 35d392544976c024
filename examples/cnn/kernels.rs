//! The layers, written on slices: every input and output is a view into the arena, nothing
//! allocates. Tensors are NCHW with N = 1.

/// 3x3 convolution, stride 1, zero padding 1: `input` is `c_in x h x w`, `output` `c_out x h x w`,
/// `weights` `c_out x c_in x 3 x 3`.
pub(crate) fn conv3x3(
    input: &[f32],
    c_in: usize,
    h: usize,
    w: usize,
    weights: &[f32],
    bias: &[f32],
    output: &mut [f32],
) {
    let c_out = bias.len();
    for o in 0..c_out {
        for y in 0..h {
            for x in 0..w {
                let mut acc = bias[o];
                for i in 0..c_in {
                    for ky in 0..3 {
                        for kx in 0..3 {
                            let (sy, sx) = (y + ky, x + kx);
                            if sy < 1 || sx < 1 || sy > h || sx > w {
                                continue;
                            }
                            acc += weights[((o * c_in + i) * 3 + ky) * 3 + kx]
                                * input[(i * h + sy - 1) * w + sx - 1];
                        }
                    }
                }
                output[(o * h + y) * w + x] = acc;
            }
        }
    }
}

/// The same convolution through an im2col matrix `cols` (`c_in * 9` rows x `h * w` columns),
/// the scratch tensor the planner gives this op alone.
#[allow(clippy::too_many_arguments)] // the shape of a convolution, spelled out
pub(crate) fn conv3x3_im2col(
    input: &[f32],
    c_in: usize,
    h: usize,
    w: usize,
    weights: &[f32],
    bias: &[f32],
    cols: &mut [f32],
    output: &mut [f32],
) {
    let pixels = h * w;
    for i in 0..c_in {
        for ky in 0..3 {
            for kx in 0..3 {
                let row = (i * 3 + ky) * 3 + kx;
                for y in 0..h {
                    for x in 0..w {
                        let (sy, sx) = (y + ky, x + kx);
                        let inside = sy >= 1 && sx >= 1 && sy <= h && sx <= w;
                        cols[row * pixels + y * w + x] = if inside {
                            input[(i * h + sy - 1) * w + sx - 1]
                        } else {
                            0.0
                        };
                    }
                }
            }
        }
    }
    let k = c_in * 9;
    for (o, out_row) in output.chunks_exact_mut(pixels).enumerate() {
        out_row.fill(bias[o]);
        for r in 0..k {
            let weight = weights[o * k + r];
            for (out, col) in out_row.iter_mut().zip(&cols[r * pixels..(r + 1) * pixels]) {
                *out += weight * col;
            }
        }
    }
}

/// `max(x, 0)`.
/// ReLU in place: the op's output view starts out holding its input (the planner lets `Relu`
/// write over its input, see the README's "In-place ops").
pub(crate) fn relu_in_place(values: &mut [f32]) {
    for v in values {
        *v = v.max(0.0);
    }
}

/// Elementwise `acc += b` in place (`Add` writes over its first input).
pub(crate) fn add_in_place(acc: &mut [f32], b: &[f32]) {
    for (a, &y) in acc.iter_mut().zip(b) {
        *a += y;
    }
}

/// 2x2 pooling, stride 2, of `c x h x w`; `max` picks max pooling, otherwise average.
pub(crate) fn pool2x2(input: &[f32], c: usize, h: usize, w: usize, max: bool, output: &mut [f32]) {
    let (oh, ow) = (h / 2, w / 2);
    for ch in 0..c {
        for y in 0..oh {
            for x in 0..ow {
                let at = |dy: usize, dx: usize| input[(ch * h + 2 * y + dy) * w + 2 * x + dx];
                let window = [at(0, 0), at(0, 1), at(1, 0), at(1, 1)];
                output[(ch * oh + y) * ow + x] = if max {
                    window.into_iter().fold(f32::NEG_INFINITY, f32::max)
                } else {
                    window.iter().sum::<f32>() / 4.0
                };
            }
        }
    }
}

/// Fully connected layer: `weights` is `outputs x inputs`.
pub(crate) fn dense(input: &[f32], weights: &[f32], bias: &[f32], output: &mut [f32]) {
    for (o, out) in output.iter_mut().enumerate() {
        let row = &weights[o * input.len()..(o + 1) * input.len()];
        *out = bias[o] + row.iter().zip(input).map(|(w, x)| w * x).sum::<f32>();
    }
}

/// Numerically stable softmax.
pub(crate) fn softmax(input: &[f32], output: &mut [f32]) {
    let top = input.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut total = 0.0;
    for (o, &i) in output.iter_mut().zip(input) {
        *o = (i - top).exp();
        total += *o;
    }
    for o in output.iter_mut() {
        *o /= total;
    }
}
