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
use crate::simd::{Avx2Fma, Avx512Fma, DepthwiseSteps, LoadOrNan, TakeGreater};
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
    // A window over the whole plane, no padding, one output: the global pool's bits (taps in
    // row-major order, a mean divided by their count).
    let whole = (0..3).all(|d| {
        win.kernel[d] == win.input[d]
            && win.output[d] == 1
            && win.dilations[d] == 1
            && win.pad_begin[d] == 0
            && win.pad_end[d] == 0
    });
    if whole && in_plane > 0 {
        whole_planes(
            &x[..planes * in_plane],
            &mut y[..planes],
            in_plane,
            kind == Kind::Max,
        );
        return Ok(());
    }
    if kind == Kind::Max && win.kernel[0] == 1 && win.input[0] == 1 && win.output[0] == 1 {
        if in_plane == 0 || out_plane == 0 {
            return Ok(());
        }
        let (x, y) = (&x[..planes * in_plane], &mut y[..planes * out_plane]);
        if in_registers(&win) {
            dispatch!(
                max_rows,
                max_registers_avx2,
                max_registers_avx512,
                (&win, x, y)
            );
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

/// Whether a 2-D max pool takes [`max_in_registers`] rather than the strided rows of
/// [`max_2d`]: a vector level and a horizontal stride of 1 or 2. Measured alone against the
/// split rows it replaced (AVX-512, same bits): 2x2 windows of stride 2 over 16 planes of
/// 32 x 32 1.75-2.4x, of 16 x 16 1.4-2.0x, 32 of 24 x 24 1.35-2.0x; 3x3 of stride 2 over 96
/// planes of 55 x 55 1.24-1.79x, 64 of 112 x 112 1.05-1.13x (there bound by reading the input).
fn in_registers(win: &Window) -> bool {
    cfg!(target_arch = "x86_64")
        && crate::simd::level() != crate::simd::Level::Portable
        && (1..=2).contains(&win.strides[2])
}

/// A 2-D max pool of horizontal stride 1 or 2 over every plane of `x` into `y`, 16 outputs of a
/// row at a time, their maxima in a register over the whole window.
///
/// Tap `tw` of the 16 outputs from `xo` reads input columns `xo sw + tw dw - pw + i sw`: at
/// stride 1 one load of 16 words, at stride 2 the even or the odd words of a load of 32 (one
/// permute per tap). A word outside the input row (a pad, or past the row's end) loads as NaN
/// ([`LoadOrNan`]), which a max ignores as [`max_2d`] skips it; the taps are taken in
/// [`max_2d`]'s row-major order, so the bits are the same. Nothing is copied: the earlier
/// method split each row into a buffer on the stack first, and the wide loads from it stalled
/// on the narrow stores of the copy (2x2 windows over rows of 24 ran no faster than the
/// strided rows). Rows are stored 16 words at a time: a row's last vector spills into the
/// start of the next row, which is stored after it; only the last vector of `y` is cut. The
/// caller checked [`in_registers`] and that the planes are not empty.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn max_in_registers<D>(steps: D, win: &Window, x: &[f32], y: &mut [f32])
where
    D: DepthwiseSteps + TakeGreater + LoadOrNan,
{
    let in_plane = win.input[1] * win.input[2];
    let out_plane = win.output[1] * win.output[2];
    let planes = x.len() / in_plane;
    let mut p = 0;
    while p < planes {
        let (x, y) = (&x[p * in_plane..], &mut y[p * out_plane..]);
        p += match planes - p {
            1 => planes_in_registers::<D, 1>(steps, win, x, y),
            2 => planes_in_registers::<D, 2>(steps, win, x, y),
            3 => planes_in_registers::<D, 3>(steps, win, x, y),
            _ => planes_in_registers::<D, 4>(steps, win, x, y),
        };
    }
}

/// [`max_in_registers`] on the first `G` planes of `x` at once, into those of `y`: their
/// windows are the same, and the maxima of `G` planes are `G` chains of dependent maxima the
/// core runs side by side (one chain waits out the latency of each max). Returns `G`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn planes_in_registers<D, const G: usize>(steps: D, win: &Window, x: &[f32], y: &mut [f32]) -> usize
where
    D: DepthwiseSteps + TakeGreater + LoadOrNan,
{
    let (iw, sw, dw) = (win.input[2], win.strides[2], win.dilations[2]);
    let pw = win.pad_begin[2] as isize;
    let [oh, ow] = [win.output[1], win.output[2]];
    let (sh, dh, ph) = (win.strides[1], win.dilations[1], win.pad_begin[1]);
    let (in_plane, out_plane) = (win.input[1] * iw, oh * ow);
    let blocks = ow.div_ceil(16);
    // The words a block's taps read past its first column, at the widest.
    let span = ((win.kernel[2] - 1) * dw + 16 * sw) as isize;
    for yo in 0..oh {
        let valid = win.valid_taps(1, yo);
        for block in 0..blocks {
            let first = (16 * sw * block) as isize - pw;
            let inside = first >= 0 && first + span <= iw as isize;
            let mut acc = [[f32::MIN; 16]; G];
            for th in valid.clone() {
                let yi = yo * sh + th * dh - ph;
                let rows: [&[f32]; G] =
                    core::array::from_fn(|g| &x[g * in_plane + yi * iw..][..iw]);
                if inside {
                    // Every tap inside the row: plain loads.
                    let load = |g: usize, from: isize, out: &mut [f32; 16]| {
                        let at = rows[g].get(from as usize..);
                        if let Some(w) = at.and_then(<[f32]>::first_chunk) {
                            *out = *w;
                        }
                    };
                    window_row(steps, win, first, load, &mut acc);
                } else {
                    let load = |g: usize, from, out: &mut _| steps.load_or_nan(rows[g], from, out);
                    window_row(steps, win, first, load, &mut acc);
                }
            }
            let at = yo * ow + 16 * block;
            for (g, acc) in acc.iter().enumerate() {
                // A row's last vector spills into the next row, stored after it; the plane's
                // last is cut.
                let n = 16.min(out_plane - at);
                y[g * out_plane + at..][..n].copy_from_slice(&acc[..n]);
            }
        }
    }
    G
}

/// The taps of one window row for 16 outputs of each of `G` planes whose first tap reads
/// column `first`, taken into `acc` in order; `load(g, from, out)` reads 16 words of plane
/// `g`'s input row from column `from`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn window_row<D: DepthwiseSteps + TakeGreater, const G: usize>(
    steps: D,
    win: &Window,
    first: isize,
    load: impl Fn(usize, isize, &mut [f32; 16]),
    acc: &mut [[f32; 16]; G],
) {
    for tw in 0..win.kernel[2] {
        let c = (tw * win.dilations[2]) as isize;
        for (g, acc) in acc.iter_mut().enumerate() {
            let mut taps = [0.0; 16];
            if win.strides[2] == 1 {
                load(g, first + c, &mut taps);
            } else {
                let mut pairs = [0.0; 32];
                let (lo, hi) = pairs.split_at_mut(16);
                let from = first + c - c % 2;
                if let (Ok(lo), Ok(hi)) = (lo.try_into(), hi.try_into()) {
                    load(g, from, lo);
                    load(g, from + 16, hi);
                }
                let mut odd = [0.0; 16];
                steps.split_pairs(&pairs, &mut taps, &mut odd);
                if c % 2 == 1 {
                    taps = odd;
                }
            }
            steps.take_greater(acc, &taps);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn max_registers_avx2(win: &Window, x: &[f32], y: &mut [f32]) {
    max_in_registers(Avx2Fma::new(), win, x, y);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn max_registers_avx512(win: &Window, x: &[f32], y: &mut [f32]) {
    max_in_registers(Avx512Fma::new(), win, x, y);
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
    whole_planes(x, y, plane, max);
    Ok(())
}

/// Planes pooled side by side ([`whole_planes`]).
const SIDE_BY_SIDE: usize = 8;

/// Each plane of `plane` words of `x` pooled whole into its word of `y`: the max (from the
/// lowest finite float32, a word taken when greater) or the mean (the words summed in order,
/// then divided by their count). The sums of [`SIDE_BY_SIDE`] planes run side by side, each
/// its own chain in its own order, so the bits are a plane-at-a-time fold's, while the core
/// overlaps eight additions' latencies (one chain waits out each: a squeeze-and-excitation
/// block's 96 planes of 14 x 14 were 18 800 dependent additions).
fn whole_planes(x: &[f32], y: &mut [f32], plane: usize, max: bool) {
    let take = |a: f32, v: f32| {
        if max {
            if v > a { v } else { a }
        } else {
            a + v
        }
    };
    let start = if max { f32::MIN } else { 0.0 };
    // plane sizes are far below 2^24
    let finish = |a: f32| if max { a } else { a / plane as f32 };
    let (groups, rest) = y.as_chunks_mut::<SIDE_BY_SIDE>();
    for (g, out) in groups.iter_mut().enumerate() {
        let Some(src) = x.get(g * SIDE_BY_SIDE * plane..(g + 1) * SIDE_BY_SIDE * plane) else {
            return;
        };
        let mut acc = [start; SIDE_BY_SIDE];
        for i in 0..plane {
            for (c, a) in acc.iter_mut().enumerate() {
                *a = take(*a, src[c * plane + i]);
            }
        }
        *out = acc.map(finish);
    }
    let done = groups.len() * SIDE_BY_SIDE;
    for (p, out) in rest.iter_mut().enumerate() {
        let src = &x[(done + p) * plane..][..plane];
        *out = finish(src.iter().fold(start, |a, &v| take(a, v)));
    }
}

#[cfg(test)]
mod tests {
    use super::{global, max_2d, pool};
    use crate::simd::{Level, detected, limit};
    use crate::spatial::pool_window;
    use crate::tensor::{Data, DataMut, Input, Output};
    use crate::test_values::values;
    use crate::{Attr, Attrs};
    use std::vec;
    use std::vec::Vec;

    /// Global pools, and MaxPool / AveragePool whose window is the whole plane, give a
    /// plane-at-a-time fold's bits (the max from the lowest finite float, a word taken when
    /// greater; the sum in order, divided by the count) for 1 to 19 planes (whole groups of
    /// eight side by side and the rest), planes of 1 to 196 words with NaN, -0, +0 and -inf.
    #[test]
    fn whole_plane_pools_fold_each_plane_in_order() {
        for hw in [[1usize, 1], [1, 5], [7, 7], [14, 14]] {
            let plane = hw[0] * hw[1];
            for planes in [1usize, 7, 8, 9, 16, 19] {
                let mut x = values(planes * plane, planes as u32 + 3);
                for (i, v) in x.iter_mut().enumerate() {
                    match i % 9 {
                        0 => *v = f32::NAN,
                        4 => *v = -0.0,
                        6 => *v = f32::NEG_INFINITY,
                        _ if i % 13 == 2 => *v = 0.0,
                        _ => {}
                    }
                }
                let xs = [1, planes, hw[0], hw[1]];
                let ys = [1, planes, 1, 1];
                let kernel = [hw[0] as i64, hw[1] as i64];
                for max in [false, true] {
                    let want: Vec<u32> = x
                        .chunks(plane)
                        .map(|p| {
                            if max {
                                p.iter().fold(f32::MIN, |a, &v| if v > a { v } else { a })
                            } else {
                                p.iter().fold(0.0f32, |a, &v| a + v) / plane as f32
                            }
                        })
                        .map(f32::to_bits)
                        .collect();
                    for windowed in [false, true] {
                        let mut y = vec![0.5f32; planes];
                        let inputs = [Input::Value {
                            shape: &xs,
                            data: Data::F32(&x),
                        }];
                        let mut outputs = [Output {
                            shape: &ys,
                            data: DataMut::F32(&mut y),
                        }];
                        if windowed {
                            let list = [("kernel_shape", Attr::Ints(&kernel))];
                            pool(&Attrs::new(&list), &inputs, &mut outputs, max).unwrap();
                        } else {
                            global(&inputs, &mut outputs, max).unwrap();
                        }
                        let got: Vec<u32> = y.iter().map(|v| v.to_bits()).collect();
                        assert_eq!(
                            got, want,
                            "{planes} planes of {hw:?}, max {max}, {windowed}"
                        );
                    }
                }
            }
        }
    }

    /// The row-at-a-time max pool, and at strides 1 and 2 the one in registers at every level,
    /// give the bits of the tap-by-tap one per output (row-major taps, a tap taken when
    /// greater), with NaNs, -0, +0 and -inf among the inputs, over strides, dilations, pads and
    /// ceil_mode, rows shorter and longer than a vector, groups of one to four planes.
    #[test]
    #[allow(clippy::type_complexity)]
    fn max_pool_rows_match_taps_per_output() {
        let cases: [(&[(&str, Attr<'_>)], [usize; 2], [usize; 2]); 12] = [
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
            // Stride 1 over rows of 70, dilated: blocks inside the row and at both its ends.
            (
                &[
                    ("kernel_shape", Attr::Ints(&[3, 3])),
                    ("pads", Attr::Ints(&[1, 2, 1, 2])),
                    ("dilations", Attr::Ints(&[1, 2])),
                ],
                [5, 70],
                [5, 70],
            ),
            // A window 2 wide over rows of 34: 17 outputs (a vector and one).
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
            // Through the kernel, on seven planes (groups of four and three planes at once),
            // the first `x`, the others turned around and every other one negated, at every
            // level this CPU has.
            let x = &x;
            let plane = |k: usize| {
                let sign = if k % 2 == 1 { -1.0 } else { 1.0 };
                (0..ih * iw).map(move |i| sign * x[(i + 5 * k) % (ih * iw)])
            };
            let planes: Vec<f32> = (0..7).flat_map(plane).collect();
            let (xs, ys) = ([1, 7, ih, iw], [1, 7, oh, ow]);
            for level in [Level::Portable, Level::Avx2, Level::Avx512] {
                if level > detected() {
                    continue;
                }
                limit(level);
                let mut y = vec![f32::NAN; 7 * oh * ow];
                let inputs = [Input::Value {
                    shape: &xs,
                    data: Data::F32(&planes),
                }];
                let mut outputs = [Output {
                    shape: &ys,
                    data: DataMut::F32(&mut y),
                }];
                pool(&attrs, &inputs, &mut outputs, true).unwrap();
                for k in 1..7 {
                    let mut reference = vec![f32::NAN; oh * ow];
                    max_2d(&win, &planes[k * ih * iw..][..ih * iw], &mut reference);
                    let got = &y[k * oh * ow..][..oh * ow];
                    for (i, (a, b)) in got.iter().zip(&reference).enumerate() {
                        assert_eq!(
                            a.to_bits(),
                            b.to_bits(),
                            "case {seed} plane {k} at {level:?}: {i}"
                        );
                    }
                }
                got.push(y[..oh * ow].to_vec());
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
