//! Normalizations: BatchNormalization (inference), InstanceNormalization, LayerNormalization,
//! LpNormalization, LRN, Softmax and LogSoftmax.
//!
//! All of them may run in place. To make the in-place and separate-buffer results identical by
//! construction, a separate input is first copied (exactly) into the output, and the operator
//! then always transforms the output buffer in place, reading every element of a row before
//! writing it.

use crate::attrs::Attrs;
use crate::broadcast::{broadcast_strides, for_each};
use crate::error::{KernelError, bail};
use crate::fast_math;
use crate::simd::dispatch;
use crate::tensor::{
    DataMut, Dims, Input, Operand, Output, axis, collect, expect_shape, operand, opt_value, output,
    strides, typed,
};

/// Output 0 holding input 0's values (copied unless in place): its shape and elements.
fn in_output<'o>(
    inputs: &[Input<'_>],
    outputs: &'o mut [Output<'_>],
) -> Result<(&'o [usize], &'o mut [f32]), KernelError> {
    let (xs, src) = operand::<f32>(inputs, 0, 0)?;
    let (ys, y) = output::<f32>(outputs, 0)?;
    expect_shape(0, ys, xs)?;
    if let Operand::Slice(s) = src {
        y.copy_from_slice(s);
    }
    Ok((ys, y))
}

/// BatchNormalization in inference mode: `(x - mean) / sqrt(var + epsilon) * scale + bias` per
/// channel (dimension 1), computed as ONNX Runtime does, `x * k + (bias - mean * k)` with
/// `k = scale / sqrt(var + epsilon)` (so the same NaN, infinities and signed zeros come out).
pub(crate) fn batch_norm(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    if attrs.int("training_mode", 0)? != 0 || outputs.len() > 1 {
        bail!("training mode is not supported");
    }
    if attrs.int("spatial", 1)? != 1 {
        bail!("spatial = 0 (opset < 9) is not supported");
    }
    let eps = attrs.float("epsilon", 1e-5)?;
    let params = [
        typed::<f32>(inputs, 1)?,
        typed::<f32>(inputs, 2)?,
        typed::<f32>(inputs, 3)?,
        typed::<f32>(inputs, 4)?,
    ];
    let (ys, y) = in_output(inputs, outputs)?;
    if ys.len() < 2 {
        bail!("input {ys:?} must be [N, C, ...]");
    }
    let c = ys[1];
    for (i, (s, _)) in params.iter().enumerate() {
        if *s != [c] {
            bail!("input {} has shape {s:?}, expected [{c}]", i + 1);
        }
    }
    let [scale, bias, mean, var] = [params[0].1, params[1].1, params[2].1, params[3].1];
    let plane: usize = ys[2..].iter().product();
    if plane == 0 {
        return Ok(());
    }
    for (p, chunk) in y.chunks_exact_mut(plane).enumerate() {
        let ch = p % c;
        let k = 1.0 / crate::fast_math::sqrt(var[ch] + eps) * scale[ch];
        let b = bias[ch] - mean[ch] * k;
        for v in chunk {
            *v = *v * k + b;
        }
    }
    Ok(())
}

/// LayerNormalization over the dimensions from `axis` on: `(x - mean) / sqrt(var + epsilon)
/// * scale + bias`, with the optional Mean and InvStdDev outputs.
pub(crate) fn layer_norm(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let eps = attrs.float("epsilon", 1e-5)?;
    if attrs.int("stash_type", 1)? != 1 {
        bail!("stash_type other than 1 (float) is not supported");
    }
    let (ss, scale) = typed::<f32>(inputs, 1)?;
    let bias = match opt_value(inputs, 2)? {
        Some(_) => Some(typed::<f32>(inputs, 2)?),
        None => None,
    };
    let (extra, rest) = outputs.split_at_mut(1.min(outputs.len()));
    let (ys, y) = in_output(inputs, extra)?;
    let ax = axis(attrs.int("axis", -1)?, ys.len())?;
    let norm_shape = &ys[ax..];
    let row: usize = norm_shape.iter().product();
    // Scale and bias are read through broadcast strides over the normalized dimensions (one
    // offset per row element, the same for every row).
    let mut params: [Dims; 2] = [broadcast_strides(ss, norm_shape)?, Dims::new()];
    let (bias, n_params) = match bias {
        Some((bs, b)) => {
            params[1] = broadcast_strides(bs, norm_shape)?;
            (b, 2)
        }
        None => (&[][..], 1),
    };
    let stat_shape: Dims = collect((0..ys.len()).map(|d| if d < ax { ys[d] } else { 1 }))?;
    let (mut mean_out, mut inv_out): (Option<&mut [f32]>, Option<&mut [f32]>) = (None, None);
    for (o, out) in rest.iter_mut().enumerate() {
        expect_shape(o + 1, out.shape, &stat_shape)?;
        let d: &mut [f32] = match &mut out.data {
            DataMut::F32(d) => d,
            d => bail!("output {} is {}, expected float32", o + 1, d.dtype().name()),
        };
        match o {
            0 => mean_out = Some(d),
            1 => inv_out = Some(d),
            _ => {}
        }
    }
    if row == 0 {
        return Ok(());
    }
    // Scale and bias of the row's own shape (the usual case): read as slices beside the row.
    let whole = |s: &[f32]| s.len() == row;
    let direct = whole(scale) && (n_params == 1 || whole(bias));
    for (r, values) in y.chunks_exact_mut(row).enumerate() {
        let (mean, inv) = if direct {
            let bias = (n_params == 2).then_some(bias);
            dispatch!(
                normalize_row,
                normalize_row_avx2,
                normalize_row_avx512,
                (values, scale, bias, eps)
            )
        } else {
            let (mean, inv) = row_statistics(values, eps);
            for_each(norm_shape, &params[..n_params], |j, o| {
                let mut z = (values[j] - mean) * inv * scale[o[0]];
                if n_params == 2 {
                    z += bias[o[1]];
                }
                values[j] = z;
            })?;
            (mean, inv)
        };
        if let Some(m) = mean_out.as_deref_mut() {
            m[r] = mean;
        }
        if let Some(s) = inv_out.as_deref_mut() {
            s[r] = inv;
        }
    }
    Ok(())
}

/// Lanes of the row sums: 8 partial sums, element `j` into lane `j % 8`, combined in a fixed
/// order, so the result is the same on every target while the loop runs as vector additions.
const LANES: usize = 8;

/// `sum of f(v)` over `values`, in [`LANES`] partial sums added pairwise at the end.
#[inline(always)]
fn lane_sum(values: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let mut lanes = [0.0f32; LANES];
    let (chunks, rest) = values.as_chunks::<LANES>();
    for chunk in chunks {
        for (l, &v) in lanes.iter_mut().zip(chunk) {
            *l += f(v);
        }
    }
    for (l, &v) in lanes.iter_mut().zip(rest) {
        *l += f(v);
    }
    ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6]))
        + ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]))
}

/// A row's mean and `1 / sqrt(variance + eps)`.
#[inline(always)]
fn row_statistics(values: &[f32], eps: f32) -> (f32, f32) {
    // row lengths are far below 2^24
    let n = values.len() as f32;
    let mean = lane_sum(values, |v| v) / n;
    let var = lane_sum(values, |v| (v - mean) * (v - mean)) / n;
    (mean, 1.0 / crate::fast_math::sqrt(var + eps))
}

/// One row normalised in place with a scale (and bias) of its length; its mean and inverse
/// standard deviation.
#[inline(always)]
fn normalize_row(values: &mut [f32], scale: &[f32], bias: Option<&[f32]>, eps: f32) -> (f32, f32) {
    let (mean, inv) = row_statistics(values, eps);
    match bias {
        Some(bias) => {
            for ((v, &s), &b) in values.iter_mut().zip(scale).zip(bias) {
                *v = (*v - mean) * inv * s + b;
            }
        }
        None => {
            for (v, &s) in values.iter_mut().zip(scale) {
                *v = (*v - mean) * inv * s;
            }
        }
    }
    (mean, inv)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn normalize_row_avx2(
    values: &mut [f32],
    scale: &[f32],
    bias: Option<&[f32]>,
    eps: f32,
) -> (f32, f32) {
    normalize_row(values, scale, bias, eps)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn normalize_row_avx512(
    values: &mut [f32],
    scale: &[f32],
    bias: Option<&[f32]>,
    eps: f32,
) -> (f32, f32) {
    normalize_row(values, scale, bias, eps)
}

/// Softmax (or LogSoftmax) along one axis (opset 13 semantics, default the last).
///
/// Per row: the maximum (NaN if any element is NaN), `e = exp(x - max)` with
/// [`fast_math::exp`], the sum of the `e`, then `e / sum` (Softmax: a division, correctly
/// rounded, not a multiplication by `1 / sum`, which would round twice) or `x - max - ln(sum)`
/// (LogSoftmax). Along the last axis (the common case, a contiguous row) each pass is a loop the
/// compiler vectorises ([`softmax_row`]); along another axis the elements of a row are `inner`
/// apart and are visited one by one.
pub(crate) fn softmax(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    log: bool,
) -> Result<(), KernelError> {
    let (ys, y) = in_output(inputs, outputs)?;
    if ys.is_empty() {
        bail!("Softmax of a scalar is not supported");
    }
    let ax = axis(attrs.int("axis", -1)?, ys.len())?;
    let len = ys[ax];
    let inner = strides(ys)?[ax];
    if inner == 1 {
        if len > 0 {
            dispatch!(
                softmax_rows_portable,
                softmax_rows_avx2,
                softmax_rows_avx512,
                (y, len, log)
            );
        }
        return Ok(());
    }
    let outer: usize = ys[..ax].iter().product();
    for o in 0..outer {
        for i in 0..inner {
            let base = o * len * inner + i;
            let idx = |j: usize| base + j * inner;
            let mut max = f32::NEG_INFINITY;
            for j in 0..len {
                max = greater_or_nan(y[idx(j)], max);
            }
            // In order, from +0.
            let mut sum = 0.0f32;
            for j in 0..len {
                let e = fast_math::exp(y[idx(j)] - max);
                sum += e;
                if !log {
                    y[idx(j)] = e;
                }
            }
            if log {
                let l = libm::logf(sum);
                for j in 0..len {
                    y[idx(j)] = y[idx(j)] - max - l;
                }
            } else {
                for j in 0..len {
                    y[idx(j)] /= sum;
                }
            }
        }
    }
    Ok(())
}

/// [`softmax_row`] on each row of `len` elements of `y` (`len > 0`), compiled for each level:
/// the same bits at every level (the passes' order is fixed by the code, not by the vector
/// width), [`fast_math::exp`] on 16 lanes at AVX-512 rather than the baseline's 4.
#[inline(always)]
fn softmax_rows(y: &mut [f32], len: usize, log: bool) {
    for row in y.chunks_exact_mut(len) {
        if log {
            softmax_row::<true>(row);
        } else {
            softmax_row::<false>(row);
        }
    }
}

fn softmax_rows_portable(y: &mut [f32], len: usize, log: bool) {
    softmax_rows(y, len, log);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn softmax_rows_avx2(y: &mut [f32], len: usize, log: bool) {
    softmax_rows(y, len, log);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn softmax_rows_avx512(y: &mut [f32], len: usize, log: bool) {
    softmax_rows(y, len, log);
}

/// The partial maxima and sums of [`softmax_row`]: element `j` of a row goes to lane `j % 8`.
/// Eight independent accumulators are one AVX2 register, two SSE2 (or NEON) registers; the
/// lanes are a fixed part of the arithmetic, not of the target, so every build adds the same
/// numbers in the same order.
const SOFTMAX_LANES: usize = 8;

/// `v` if it is greater than `max` or NaN, else `max`: a running maximum that becomes NaN at
/// the first NaN and stays NaN. Its result does not depend on the order of the elements (but
/// for which of -0 and +0 a row of zeros keeps, which no later step can tell apart).
#[inline(always)]
fn greater_or_nan(v: f32, max: f32) -> f32 {
    if v > max || v.is_nan() { v } else { max }
}

/// Softmax or LogSoftmax of one contiguous row, in place, in three vectorised passes:
///
/// 1. the maximum: [`SOFTMAX_LANES`] running maxima over the full chunks of eight, then the
///    lanes in order, then the remaining elements;
/// 2. `e = exp(x - max)` (stored by Softmax) and their sum: lane `l` adds the `e` of elements
///    `l, l + 8, l + 16, ...` in order from +0, then the sum is `lane 0 + lane 1 + ... + lane 7`
///    in order, then the remaining elements in order. A fixed order (not the row's one by
///    one), so that the loop vectorises and every build gets the same bits;
/// 3. Softmax `e / sum`, LogSoftmax `(x - max) - ln(sum)`.
///
/// (`LOG` a constant, so that each pass is a loop without a condition.)
#[inline(always)]
fn softmax_row<const LOG: bool>(row: &mut [f32]) {
    let mut maxima = [f32::NEG_INFINITY; SOFTMAX_LANES];
    let mut chunks = row.chunks_exact(SOFTMAX_LANES);
    for chunk in &mut chunks {
        for (m, &v) in maxima.iter_mut().zip(chunk) {
            *m = greater_or_nan(v, *m);
        }
    }
    let mut max = maxima
        .iter()
        .fold(f32::NEG_INFINITY, |max, &m| greater_or_nan(m, max));
    for &v in chunks.remainder() {
        max = greater_or_nan(v, max);
    }

    let mut sums = [0.0f32; SOFTMAX_LANES];
    let mut chunks = row.chunks_exact_mut(SOFTMAX_LANES);
    for chunk in &mut chunks {
        for (s, v) in sums.iter_mut().zip(chunk) {
            let e = fast_math::exp(*v - max);
            *s += e;
            if !LOG {
                *v = e;
            }
        }
    }
    let mut sum = sums.iter().fold(0.0f32, |sum, &s| sum + s);
    for v in chunks.into_remainder() {
        let e = fast_math::exp(*v - max);
        sum += e;
        if !LOG {
            *v = e;
        }
    }

    if LOG {
        let l = libm::logf(sum);
        for v in row.iter_mut() {
            *v = *v - max - l;
        }
    } else {
        for v in row.iter_mut() {
            *v /= sum;
        }
    }
}

/// InstanceNormalization: each `[n, c]` plane normalized by its own mean and variance, then
/// `* scale[c] + bias[c]`.
pub(crate) fn instance_norm(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let eps = attrs.float("epsilon", 1e-5)?;
    let (ss, scale) = typed::<f32>(inputs, 1)?;
    let (bs, bias) = typed::<f32>(inputs, 2)?;
    let (ys, y) = in_output(inputs, outputs)?;
    if ys.len() < 3 {
        bail!("input {ys:?} must be [N, C, spatial...]");
    }
    let c = ys[1];
    if ss != [c] || bs != [c] {
        bail!("scale {ss:?} and bias {bs:?} must be [{c}]");
    }
    let plane: usize = ys[2..].iter().product();
    if plane == 0 {
        return Ok(());
    }
    // plane sizes are far below 2^24
    let n = plane as f32;
    for (p, values) in y.chunks_exact_mut(plane).enumerate() {
        let ch = p % c;
        let mean = values.iter().fold(0.0f32, |a, &v| a + v) / n;
        let var = values
            .iter()
            .fold(0.0f32, |a, &v| a + (v - mean) * (v - mean))
            / n;
        let inv = 1.0 / crate::fast_math::sqrt(var + eps);
        for v in values.iter_mut() {
            *v = (*v - mean) * inv * scale[ch] + bias[ch];
        }
    }
    Ok(())
}

/// LRN (local response normalization across channels):
/// `x / (bias + alpha / size * sum of x^2 over the size channels around c)^beta`.
pub(crate) fn lrn(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let alpha = attrs.float("alpha", 1e-4)?;
    let beta = attrs.float("beta", 0.75)?;
    let bias = attrs.float("bias", 1.0)?;
    let size = usize::try_from(attrs.int("size", 0)?)
        .ok()
        .filter(|&s| s > 0)
        .ok_or_else(|| KernelError::new("size must be positive"))?;
    let (xs, x) = typed::<f32>(inputs, 0)?;
    let (ys, y) = output::<f32>(outputs, 0)?;
    expect_shape(0, ys, xs)?;
    if xs.len() < 2 {
        bail!("input {xs:?} must be [N, C, ...]");
    }
    let c = xs[1];
    let plane: usize = xs[2..].iter().product();
    let (before, after) = ((size - 1) / 2, (size - 1).div_ceil(2));
    // a handful of channels
    let scale = alpha / size as f32;
    for b in 0..xs[0] {
        for ch in 0..c {
            let lo = ch.saturating_sub(before);
            let hi = (ch + after).min(c - 1);
            for p in 0..plane {
                let at = |k: usize| (b * c + k) * plane + p;
                let sum = (lo..=hi).fold(0.0f32, |a, k| a + x[at(k)] * x[at(k)]);
                y[at(ch)] = x[at(ch)] / libm::powf(bias + scale * sum, beta);
            }
        }
    }
    Ok(())
}

/// LpNormalization: `x / ||x||_p` along `axis` (default -1), `p` 1 or 2 (default 2); a
/// vector whose norm is zero becomes +0s, as in ONNX Runtime (not 0 / 0 = NaN).
pub(crate) fn lp_norm(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let p = attrs.int("p", 2)?;
    if p != 1 && p != 2 {
        bail!("p = {p} is not supported (1 and 2 are)");
    }
    let (ys, y) = in_output(inputs, outputs)?;
    if ys.is_empty() {
        bail!("LpNormalization of a scalar is not supported");
    }
    let ax = axis(attrs.int("axis", -1)?, ys.len())?;
    let len = ys[ax];
    let inner = strides(ys)?[ax];
    let outer: usize = ys[..ax].iter().product();
    for o in 0..outer {
        for i in 0..inner {
            let idx = |j: usize| (o * len + j) * inner + i;
            let mut norm = 0.0f32;
            for j in 0..len {
                let v = y[idx(j)];
                norm += if p == 1 { v.abs() } else { v * v };
            }
            if p == 2 {
                norm = crate::fast_math::sqrt(norm);
            }
            for j in 0..len {
                if norm == 0.0 {
                    y[idx(j)] = 0.0;
                } else {
                    y[idx(j)] /= norm;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod layer_norm_tests {
    use super::*;
    use crate::simd::{Level, detected, limit};
    use crate::tensor::{Data, DataMut};
    use std::vec::Vec;

    fn layer_norm_of(
        x: &[f32],
        shape: &[usize],
        scale: (&[usize], &[f32]),
        bias: (&[usize], &[f32]),
    ) -> Vec<f32> {
        let mut y = x.to_vec();
        let inputs = [
            Input::Value {
                shape,
                data: Data::F32(x),
            },
            Input::Value {
                shape: scale.0,
                data: Data::F32(scale.1),
            },
            Input::Value {
                shape: bias.0,
                data: Data::F32(bias.1),
            },
        ];
        let mut outputs = [Output {
            shape,
            data: DataMut::F32(&mut y),
        }];
        // Normalised over the last two dimensions: rows of 26.
        let axis = [("axis", crate::Attr::Int(1))];
        layer_norm(&Attrs::new(&axis), &inputs, &mut outputs).unwrap();
        y
    }

    /// A scale and bias of the row's shape (read as slices) give the bits of the same values
    /// broadcast (read through strides), at every SIMD level; and the rows are normalised.
    #[test]
    fn the_row_path_equals_the_broadcast_path_at_every_level() {
        let shape = [3, 2, 13];
        let x: Vec<f32> = (0..78)
            .map(|i| ((i * 37) % 23) as f32 * 0.37 - 3.0)
            .collect();
        let scale_row: Vec<f32> = (0..13).map(|j| 0.5 + j as f32 * 0.1).collect();
        let bias_row: Vec<f32> = (0..13).map(|j| j as f32 * -0.2).collect();
        let (scale, bias): (Vec<f32>, Vec<f32>) = (scale_row.repeat(2), bias_row.repeat(2));
        let broadcast = layer_norm_of(&x, &shape, (&[1, 13], &scale_row), (&[13], &bias_row));
        for level in [Level::Portable, Level::Avx2, Level::Avx512] {
            if level > detected() {
                continue;
            }
            limit(level);
            let direct = layer_norm_of(&x, &shape, (&[2, 13], &scale), (&[2, 13], &bias));
            let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&direct), bits(&broadcast), "{level:?}");
        }
        limit(Level::Avx512);
        // Each row of 26, unscaled, has mean 0 and variance 1.
        let ones = [1.0f32; 26];
        let zeros = [0.0f32; 26];
        let y = layer_norm_of(&x, &shape, (&[2, 13], &ones), (&[2, 13], &zeros));
        for row in y.chunks(26) {
            let mean: f32 = row.iter().sum::<f32>() / 26.0;
            let var: f32 = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / 26.0;
            assert!(
                mean.abs() < 1e-6 && (var - 1.0).abs() < 1e-4,
                "{mean} {var}"
            );
        }
    }

    /// Softmax and LogSoftmax along the last axis give the same bits at every SIMD level (rows
    /// shorter than, equal to and longer than the eight partial sums, a NaN row, a row with
    /// infinities), and each Softmax row sums to 1.
    #[test]
    fn softmax_rows_give_the_same_bits_at_every_level() {
        for len in [1usize, 7, 8, 128, 131] {
            let mut x: Vec<f32> = (0..3 * len)
                .map(|i| ((i * 53) % 97) as f32 * 0.21 - 9.0)
                .collect();
            if len > 1 {
                x[len] = f32::NAN;
                x[2 * len] = f32::INFINITY;
                x[2 * len + 1] = f32::NEG_INFINITY;
            }
            for log in [false, true] {
                let run = |level| {
                    limit(level);
                    let shape = [3, len];
                    let mut y = std::vec![0.0f32; 3 * len];
                    let inputs = [Input::Value {
                        shape: &shape,
                        data: Data::F32(&x),
                    }];
                    let mut outputs = [Output {
                        shape: &shape,
                        data: DataMut::F32(&mut y),
                    }];
                    softmax(&Attrs::new(&[]), &inputs, &mut outputs, log).unwrap();
                    limit(Level::Avx512);
                    y
                };
                let want = run(Level::Portable);
                for level in [Level::Avx2, Level::Avx512] {
                    if level > detected() {
                        continue;
                    }
                    let got = run(level);
                    let same = got
                        .iter()
                        .zip(&want)
                        .all(|(a, b)| a.to_bits() == b.to_bits());
                    assert!(same, "len {len}, log {log} at {level:?}");
                }
                if !log {
                    let sum: f32 = want[..len].iter().sum();
                    assert!((sum - 1.0).abs() < 1e-5, "len {len}: {sum}");
                }
            }
        }
    }
}
