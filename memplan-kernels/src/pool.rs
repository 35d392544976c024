//! Pools: MaxPool, AveragePool (with `count_include_pad`), both with `ceil_mode`, and the global
//! GlobalAveragePool / GlobalMaxPool, over 1 to 3 spatial dimensions of an `[N, C, ...]` tensor.
//!
//! Each output element scans its window in row-major tap order; taps in the padding are skipped
//! (MaxPool, and AveragePool without `count_include_pad`) or count as zeros in the divisor
//! (`count_include_pad`, the padding being the explicit pads only, not the extra room `ceil_mode`
//! adds at the end).
//!
//! A max pool is ONNX Runtime's: it starts from the lowest finite float32 and takes each tap
//! that is greater. So a NaN tap is ignored, a window of -inf (or only NaN) gives -3.4028235e38,
//! and of equal taps (-0 and +0) the first is kept.

use crate::attrs::Attrs;
use crate::error::{KernelError, bail};
use crate::spatial::{Window, pool_window};
use crate::tensor::{Dims, Input, Output, collect, expect_shape, output, typed};

/// Which pool.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Max,
    Average { include_pad: bool },
}

/// MaxPool (single output) or AveragePool.
pub(crate) fn pool(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    max: bool,
) -> Result<(), KernelError> {
    if outputs.len() > 1 {
        bail!("the Indices output is not supported");
    }
    let kind = if max {
        if attrs.int("storage_order", 0)? != 0 {
            bail!("storage_order 1 is not supported");
        }
        Kind::Max
    } else {
        if attrs
            .ints("dilations")?
            .is_some_and(|d| d.iter().any(|&x| x != 1))
        {
            bail!("AveragePool with dilations is not supported");
        }
        Kind::Average {
            include_pad: attrs.int("count_include_pad", 0)? != 0,
        }
    };
    let (xs, x) = typed::<f32>(inputs, 0)?;
    let (ys, y) = output::<f32>(outputs, 0)?;
    let win = pool_window(attrs, xs, ys)?;
    let planes = xs[0] * xs[1];
    let in_plane: usize = win.input.iter().product();
    let out_plane: usize = win.output.iter().product();
    let [oh, ow] = [win.output[1], win.output[2]];
    if kind == Kind::Max && win.kernel[0] == 1 && win.input[0] == 1 && win.output[0] == 1 {
        for p in 0..planes {
            max_2d(
                &win,
                &x[p * in_plane..][..in_plane],
                &mut y[p * out_plane..][..out_plane],
            );
        }
        return Ok(());
    }
    for p in 0..planes {
        let src = &x[p * in_plane..][..in_plane];
        let dst = &mut y[p * out_plane..][..out_plane];
        for zo in 0..win.output[0] {
            for yo in 0..oh {
                for xo in 0..ow {
                    let mut acc = match kind {
                        Kind::Max => f32::MIN,
                        Kind::Average { .. } => 0.0,
                    };
                    let mut count = 0usize;
                    win.for_each_tap([zo, yo, xo], |source, _| {
                        let v = src[source];
                        match kind {
                            Kind::Max => {
                                if v > acc {
                                    acc = v;
                                }
                            }
                            Kind::Average { .. } => acc += v,
                        }
                        count += 1;
                    });
                    dst[(zo * oh + yo) * ow + xo] = match kind {
                        Kind::Max => acc,
                        Kind::Average { include_pad } => {
                            let divisor = if include_pad {
                                padded_window_size(&win, [zo, yo, xo])
                            } else {
                                count
                            };
                            // window sizes are small
                            let d = divisor as f32;
                            acc / d
                        }
                    };
                }
            }
        }
    }
    Ok(())
}

/// A 1-D or 2-D max pool of one plane: each output the max of its window's taps inside the input
/// in row-major tap order, starting from the lowest finite float32, a tap taken when greater (a
/// select, not a branch: the comparisons are unpredictable).
///
/// The loops run one tap at a time over a whole output row (the outputs for which that tap is
/// inside the input), so the inner loop is a vectorisable max of two rows; each output still
/// sees its taps in row-major order, so the result is the same as tap by tap per output.
fn max_2d(win: &Window, src: &[f32], dst: &mut [f32]) {
    let iw = win.input[2];
    let [oh, ow] = [win.output[1], win.output[2]];
    let (sh, sw) = (win.strides[1], win.strides[2]);
    let (dh, dw) = (win.dilations[1], win.dilations[2]);
    let (ph, pw) = (win.pad_begin[1], win.pad_begin[2]);
    for yo in 0..oh {
        let out = &mut dst[yo * ow..][..ow];
        out.fill(f32::MIN);
        for th in win.valid_taps(1, yo) {
            let yi = yo * sh + th * dh - ph;
            let row = &src[yi * iw..][..iw];
            for tw in 0..win.kernel[2] {
                let shift = tw * dw;
                // Outputs `xo` whose tap is inside: 0 <= xo * sw + shift - pw < iw.
                let lo = pw.saturating_sub(shift).div_ceil(sw);
                let hi = (iw + pw).saturating_sub(shift).div_ceil(sw).min(ow);
                if lo >= hi {
                    continue;
                }
                let first = lo * sw + shift - pw;
                let out = &mut out[lo..hi];
                match sw {
                    1 => max_into::<1>(out, &row[first..]),
                    2 => max_into::<2>(out, &row[first..]),
                    _ => {
                        let taps = row[first..].iter().step_by(sw);
                        for (o, &v) in out.iter_mut().zip(taps) {
                            *o = if v > *o { v } else { *o };
                        }
                    }
                }
            }
        }
    }
}

/// `out[i] = max(out[i], taps[i * S])` (the tap taken when greater) for every output, with the
/// stride a constant so that the compiler vectorises the loop (at stride 2 as loads of pairs,
/// the first of each kept). `taps` holds `(out.len() - 1) * S + 1` elements at least.
#[inline(always)]
fn max_into<const S: usize>(out: &mut [f32], taps: &[f32]) {
    let (groups, rest) = taps.as_chunks::<S>();
    let full = out.len().min(groups.len());
    let (head, tail) = out.split_at_mut(full);
    for (o, g) in head.iter_mut().zip(groups) {
        let v = g[0];
        *o = if v > *o { v } else { *o };
    }
    // The last output's tap when it starts an incomplete group.
    if let (Some(o), Some(&v)) = (tail.first_mut(), rest.first()) {
        *o = if v > *o { v } else { *o };
    }
}

/// The number of taps of output `o`'s window inside the input plus its explicit padding: the
/// taps `t < k` with `o s + t d < b + n + e`, counted without visiting them.
fn padded_window_size(win: &Window, o: [usize; 3]) -> usize {
    (0..3)
        .map(|i| {
            let end = win.pad_begin[i] + win.input[i] + win.pad_end[i];
            let start = o[i] * win.strides[i];
            if end > start {
                (end - start).div_ceil(win.dilations[i]).min(win.kernel[i])
            } else {
                0
            }
        })
        .product()
}

/// GlobalAveragePool / GlobalMaxPool: one value per `[n, c]` plane, in row-major order.
pub(crate) fn global(
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    max: bool,
) -> Result<(), KernelError> {
    let (xs, x) = typed::<f32>(inputs, 0)?;
    let (ys, y) = output::<f32>(outputs, 0)?;
    if xs.len() < 2 {
        bail!("input {xs:?} must be [N, C, ...]");
    }
    let want: Dims = collect((0..xs.len()).map(|d| if d < 2 { xs[d] } else { 1 }))?;
    expect_shape(0, ys, &want)?;
    let plane: usize = xs[2..].iter().product();
    if plane == 0 {
        bail!("cannot pool an empty plane");
    }
    for (p, out) in y.iter_mut().enumerate() {
        let src = &x[p * plane..][..plane];
        *out = if max {
            src.iter().fold(f32::MIN, |a, &v| if v > a { v } else { a })
        } else {
            // plane sizes are far below 2^24
            let n = plane as f32;
            src.iter().fold(0.0f32, |a, &v| a + v) / n
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::max_2d;
    use crate::spatial::pool_window;
    use crate::test_values::values;
    use crate::{Attr, Attrs};
    use std::vec;

    /// The row-at-a-time max pool gives the bits of the tap-by-tap one per output (row-major
    /// taps, a tap taken when greater), with NaNs, -0 and +0 among the inputs, over strides,
    /// dilations, pads and ceil_mode.
    #[test]
    #[allow(clippy::type_complexity)]
    fn max_pool_rows_match_taps_per_output() {
        let cases: [(&[(&str, Attr<'_>)], [usize; 2], [usize; 2]); 6] = [
            (
                &[
                    ("kernel_shape", Attr::Ints(&[3, 3])),
                    ("strides", Attr::Ints(&[2, 2])),
                    ("ceil_mode", Attr::Int(1)),
                ],
                [13, 17],
                [6, 8],
            ),
            (
                &[
                    ("kernel_shape", Attr::Ints(&[3, 3])),
                    ("pads", Attr::Ints(&[1, 1, 1, 1])),
                ],
                [9, 11],
                [9, 11],
            ),
            (
                &[
                    ("kernel_shape", Attr::Ints(&[2, 3])),
                    ("pads", Attr::Ints(&[0, 2, 1, 2])),
                    ("strides", Attr::Ints(&[1, 3])),
                    ("dilations", Attr::Ints(&[2, 2])),
                ],
                [10, 20],
                [9, 7],
            ),
            (
                &[
                    ("kernel_shape", Attr::Ints(&[2, 2])),
                    ("strides", Attr::Ints(&[2, 2])),
                ],
                [8, 9],
                [4, 4],
            ),
            (
                &[
                    ("kernel_shape", Attr::Ints(&[5, 5])),
                    ("pads", Attr::Ints(&[4, 4, 4, 4])),
                    ("strides", Attr::Ints(&[4, 4])),
                    ("ceil_mode", Attr::Int(1)),
                ],
                [7, 6],
                [3, 3],
            ),
            (
                &[
                    ("kernel_shape", Attr::Ints(&[1, 4])),
                    ("auto_pad", Attr::Str("SAME_LOWER")),
                ],
                [3, 15],
                [3, 15],
            ),
        ];
        for (seed, (list, [ih, iw], [oh, ow])) in (1..).zip(cases) {
            let attrs = Attrs::new(list);
            let mut x = values(ih * iw, seed);
            for (i, v) in x.iter_mut().enumerate() {
                match i % 7 {
                    0 => *v = f32::NAN,
                    3 => *v = 0.0,
                    5 => *v = -0.0,
                    _ => {}
                }
            }
            let win = pool_window(&attrs, &[1, 1, ih, iw], &[1, 1, oh, ow]).unwrap();
            let mut got = vec![f32::NAN; oh * ow];
            max_2d(&win, &x, &mut got);
            for yo in 0..oh {
                for xo in 0..ow {
                    let mut acc = f32::MIN;
                    win.for_each_tap([0, yo, xo], |source, _| {
                        let v = x[source];
                        if v > acc {
                            acc = v;
                        }
                    });
                    let g = got[yo * ow + xo];
                    assert_eq!(g.to_bits(), acc.to_bits(), "case {seed} at ({yo}, {xo})");
                }
            }
        }
    }
}
