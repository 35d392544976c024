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
use crate::simd::dispatch;
#[cfg(target_arch = "x86_64")]
use crate::simd::{Avx2Fma, Avx512Fma, DepthwiseSteps, TakeGreater};
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
        if in_plane == 0 || out_plane == 0 {
            return Ok(());
        }
        let (x, y) = (&x[..planes * in_plane], &mut y[..planes * out_plane]);
        if split_pays(&win) {
            dispatch!(max_rows, max_split_avx2, max_split_avx512, (&win, x, y));
        } else {
            max_rows(&win, x, y);
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

/// [`max_2d`] on every plane of `x` into `y` (whole, non-empty planes).
fn max_rows(win: &Window, x: &[f32], y: &mut [f32]) {
    let in_plane: usize = win.input.iter().product();
    let out_plane: usize = win.output.iter().product();
    for (src, dst) in x.chunks_exact(in_plane).zip(y.chunks_exact_mut(out_plane)) {
        max_2d(win, src, dst);
    }
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
    let (dh, ph) = (win.dilations[1], win.pad_begin[1]);
    for yo in 0..oh {
        let out = &mut dst[yo * ow..][..ow];
        out.fill(f32::MIN);
        for th in win.valid_taps(1, yo) {
            let yi = yo * sh + th * dh - ph;
            let row = &src[yi * iw..][..iw];
            for tw in 0..win.kernel[2] {
                let Some((lo, hi, first)) = tap_run(win, tw) else {
                    continue;
                };
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

/// The most columns of each half of a split input row, and the most outputs of a row, for the
/// split (wider rows take the strided loop).
const SPLIT_MOST: usize = 512;

/// Whether a 2-D max pool takes the split ([`max_split`]) rather than the strided rows of
/// [`max_2d`]: horizontal stride 2, rows of 64 (a window 2 wide: 32) to `2 SPLIT_MOST`
/// columns, and a vector level (the split's halves and row of maxima are 6.5 KiB of stack, not
/// for a microcontroller).
/// Measured alone against the strided rows at AVX-512, the same bits: 3x3 stride-2 windows
/// over 64 planes of 111 x 111 or 112 x 112 1.5-1.7x, 2x2 stride 2 over 32 x 32 1.3x; rows of
/// 55 ran 0.98x and rows of 27 0.64-1.0x (a short row's split costs more than it saves).
fn split_pays(win: &Window) -> bool {
    cfg!(target_arch = "x86_64")
        && crate::simd::level() != crate::simd::Level::Portable
        && win.strides[2] == 2
        && (split_from(win)..=2 * SPLIT_MOST).contains(&win.input[2])
        && win.output[2] <= SPLIT_MOST
}

/// The shortest input row whose split pays: 64 columns, or 32 for a window 2 columns wide
/// (whose row is split once for each of its few taps' halves; a 3x3 window reads three rows,
/// each split once, and a short row's split costs more than its taps save).
fn split_from(win: &Window) -> usize {
    if win.kernel[2] <= 2 { 32 } else { 64 }
}

/// A 2-D max pool of horizontal stride 2 over every plane of `x` into `y`: each input row a
/// window reads is first split into its even and its odd columns, so that every tap of a row
/// reads one half contiguously, 16 outputs at a time ([`TakeGreater`]), into a row of maxima
/// on the stack. A half holds NaN past the row's end, which a max ignores: a tap's run of
/// outputs rounded up to whole vectors leaves the outputs past it unchanged, as a tap in the
/// padding does. The taps are taken in [`max_2d`]'s order, so the bits are the same. The
/// caller checked that rows fit ([`split_pays`]) and that the planes are not empty.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn max_split<D: DepthwiseSteps + TakeGreater>(steps: D, win: &Window, x: &[f32], y: &mut [f32]) {
    let iw = win.input[2];
    let [oh, ow] = [win.output[1], win.output[2]];
    let (sh, dh, ph) = (win.strides[1], win.dilations[1], win.pad_begin[1]);
    let in_plane = win.input[1] * iw;
    let mut halves = [[f32::NAN; SPLIT_MOST + 32]; 2];
    let mut maxima = [f32::MIN; SPLIT_MOST + 16];
    for (src, dst) in x.chunks_exact(in_plane).zip(y.chunks_exact_mut(oh * ow)) {
        for yo in 0..oh {
            maxima[..ow].fill(f32::MIN);
            for th in win.valid_taps(1, yo) {
                let yi = yo * sh + th * dh - ph;
                split_row(steps, &src[yi * iw..][..iw], &mut halves);
                for tw in 0..win.kernel[2] {
                    let Some((lo, hi, first)) = tap_run(win, tw) else {
                        continue;
                    };
                    let blocks = (hi - lo).div_ceil(16);
                    let (Some(out), Some(taps)) = (
                        maxima.get_mut(lo..lo + 16 * blocks),
                        halves[first % 2].get(first / 2..first / 2 + 16 * blocks),
                    ) else {
                        return;
                    };
                    let (out, _) = out.as_chunks_mut::<16>();
                    let (taps, _) = taps.as_chunks::<16>();
                    for (o, t) in out.iter_mut().zip(taps) {
                        steps.take_greater(o, t);
                    }
                }
            }
            dst[yo * ow..][..ow].copy_from_slice(&maxima[..ow]);
        }
    }
}

/// `halves[0][j] = row[2 j]`, `halves[1][j] = row[2 j + 1]`, then NaN for 16 words past each
/// half's end (`row` at most `2 SPLIT_MOST` long).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn split_row<D: DepthwiseSteps>(steps: D, row: &[f32], halves: &mut [[f32; SPLIT_MOST + 32]; 2]) {
    let [even, odd] = halves;
    let (blocks, rest) = row.as_chunks::<32>();
    let (e_blocks, _) = even.as_chunks_mut::<16>();
    let (o_blocks, _) = odd.as_chunks_mut::<16>();
    let mut pairs = [f32::NAN; 32];
    pairs[..rest.len()].copy_from_slice(rest);
    let last = (!rest.is_empty()).then_some(&pairs);
    let nan = [f32::NAN; 16];
    let mut e_blocks = e_blocks.iter_mut();
    let mut o_blocks = o_blocks.iter_mut();
    for pairs in blocks.iter().chain(last) {
        if let (Some(e), Some(o)) = (e_blocks.next(), o_blocks.next()) {
            steps.split_pairs(pairs, e, o);
        }
    }
    if let (Some(e), Some(o)) = (e_blocks.next(), o_blocks.next()) {
        (*e, *o) = (nan, nan);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn max_split_avx2(win: &Window, x: &[f32], y: &mut [f32]) {
    max_split(Avx2Fma::new(), win, x, y);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn max_split_avx512(win: &Window, x: &[f32], y: &mut [f32]) {
    max_split(Avx512Fma::new(), win, x, y);
}

/// The outputs `lo..hi` of a row whose column tap `tw` falls inside the input row (`0 <= xo sw
/// + tw dw - pw < iw`), and the column `first` that output `lo` reads (output `lo + i` reads
/// `first + i sw`); `None` when there are none.
fn tap_run(win: &Window, tw: usize) -> Option<(usize, usize, usize)> {
    let (iw, ow, sw) = (win.input[2], win.output[2], win.strides[2]);
    let (shift, pw) = (tw * win.dilations[2], win.pad_begin[2]);
    let lo = pw.saturating_sub(shift).div_ceil(sw);
    let hi = (iw + pw).saturating_sub(shift).div_ceil(sw).min(ow);
    (lo < hi).then(|| (lo, hi, lo * sw + shift - pw))
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
    use super::{max_2d, pool};
    use crate::simd::{Level, detected, limit};
    use crate::spatial::pool_window;
    use crate::tensor::{Data, DataMut, Input, Output};
    use crate::test_values::values;
    use crate::{Attr, Attrs};
    use std::vec;
    use std::vec::Vec;

    /// The row-at-a-time max pool, and at stride 2 the split one at every level, give the bits
    /// of the tap-by-tap one per output (row-major taps, a tap taken when greater), with NaNs,
    /// -0, +0 and -inf among the inputs, over strides, dilations, pads and ceil_mode, rows
    /// shorter and longer than a split block, a row too wide for the split.
    #[test]
    #[allow(clippy::type_complexity)]
    fn max_pool_rows_match_taps_per_output() {
        let cases: [(&[(&str, Attr<'_>)], [usize; 2], [usize; 2]); 11] = [
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
            (
                &[
                    ("kernel_shape", Attr::Ints(&[3, 3])),
                    ("strides", Attr::Ints(&[2, 2])),
                    ("pads", Attr::Ints(&[1, 1, 1, 1])),
                ],
                [9, 75],
                [5, 38],
            ),
            (
                &[
                    ("kernel_shape", Attr::Ints(&[3, 4])),
                    ("strides", Attr::Ints(&[1, 2])),
                    ("pads", Attr::Ints(&[0, 3, 1, 0])),
                    ("dilations", Attr::Ints(&[1, 2])),
                    ("ceil_mode", Attr::Int(1)),
                ],
                [6, 64],
                [5, 31],
            ),
            (
                &[
                    ("kernel_shape", Attr::Ints(&[3, 3])),
                    ("strides", Attr::Ints(&[2, 2])),
                    ("ceil_mode", Attr::Int(1)),
                ],
                [5, 111],
                [2, 55],
            ),
            (
                &[
                    ("kernel_shape", Attr::Ints(&[2, 2])),
                    ("strides", Attr::Ints(&[2, 2])),
                ],
                [2, 1100],
                [1, 550],
            ),
            // A window 2 wide over rows of 34: split, 17 outputs (a vector and one).
            (
                &[
                    ("kernel_shape", Attr::Ints(&[2, 2])),
                    ("strides", Attr::Ints(&[2, 2])),
                ],
                [6, 34],
                [3, 17],
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
                    _ if i % 11 == 1 => *v = f32::NEG_INFINITY,
                    _ => {}
                }
            }
            let win = pool_window(&attrs, &[1, 1, ih, iw], &[1, 1, oh, ow]).unwrap();
            let mut rows = vec![f32::NAN; oh * ow];
            max_2d(&win, &x, &mut rows);
            let mut got = vec![rows];
            // Through the kernel (the split at stride 2), on two planes, the second the first's
            // negation, at every level this CPU has.
            let planes: Vec<f32> = x.iter().copied().chain(x.iter().map(|v| -v)).collect();
            let (xs, ys) = ([1, 2, ih, iw], [1, 2, oh, ow]);
            for level in [Level::Portable, Level::Avx2, Level::Avx512] {
                if level > detected() {
                    continue;
                }
                limit(level);
                let mut y = vec![f32::NAN; 2 * oh * ow];
                let inputs = [Input::Value {
                    shape: &xs,
                    data: Data::F32(&planes),
                }];
                let mut outputs = [Output {
                    shape: &ys,
                    data: DataMut::F32(&mut y),
                }];
                pool(&attrs, &inputs, &mut outputs, true).unwrap();
                let (first, second) = y.split_at(oh * ow);
                let mut reference = vec![f32::NAN; oh * ow];
                max_2d(&win, &planes[ih * iw..], &mut reference);
                for (i, (a, b)) in second.iter().zip(&reference).enumerate() {
                    assert_eq!(
                        a.to_bits(),
                        b.to_bits(),
                        "case {seed} plane 2 at {level:?}: {i}"
                    );
                }
                got.push(first.to_vec());
            }
            limit(Level::Avx512);
            for got in got {
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
}
