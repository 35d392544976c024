//! TFLite's builtin operators, as its reference kernels compute them: NHWC layout, fused
//! activations as a clamp, and for int8 the fixed-point requantisation of [`quant`] with the
//! multipliers, shifts, offsets and tables a build step computed from the file's quantization
//! (`memplan-build` does, with [`quant::quantize_multiplier`]). Operator names are TFLite's with a
//! `tflite.` prefix (`tflite.CONV_2D`), so they never clash with ONNX's.
//!
//! | operator | inputs | attributes |
//! |---|---|---|
//! | `tflite.CONV_2D` | x, filter `[O, H, W, I]`, bias?, int8: multiplier and shift `[O]` (int32) | `stride_h/w`, `dilation_h/w`, `pad_top/left`, `act_min/max`; int8 `input_offset`, `output_offset`; hybrid (float x, int8 filter) `filter_scale` |
//! | `tflite.DEPTHWISE_CONV_2D` | x, filter `[1, H, W, O]`, bias?, int8: multiplier and shift | as CONV_2D, plus `depth_multiplier` |
//! | `tflite.FULLY_CONNECTED` | x `[.., I]`, filter `[O, I]`, bias?, int8: multiplier and shift `[1]` or `[O]` | `act_min/max`; int8 `input_offset`, `filter_offset`, `output_offset`; hybrid `filter_scale` |
//! | `tflite.AVERAGE_POOL_2D`, `tflite.MAX_POOL_2D` | x | `filter_h/w`, `stride_h/w`, `pad_top/left`, `act_min/max` |
//! | `tflite.SOFTMAX` | x, int8: the exp table `[256]` (float32) | float `beta`; int8 `output_zero_point`, `output_scale` |
//! | `tflite.ADD`, `tflite.SUB` | a, b (broadcast) | `act_min/max`; int8 `input1/2_offset`, `output_offset`, `left_shift`, `input1/2_multiplier`, `input1/2_shift`, `output_multiplier`, `output_shift` |
//! | `tflite.MUL` | a, b (broadcast) | `act_min/max`; int8 `input1/2_offset`, `output_offset`, `output_multiplier`, `output_shift` |
//! | `tflite.LOGISTIC`, `tflite.TANH` | x, int8: the output table `[256]` (int8, indexed by the input's byte) | - |
//! | `tflite.QUANTIZE` | x (float32 or int8) | `scale`, `zero_point`; int8 to int8 `input_zero_point`, `multiplier`, `shift` |
//! | `tflite.DEQUANTIZE` | x (int8) | `scale`, `zero_point` |
//! | `tflite.RESHAPE` | x | - (any dtype; also SQUEEZE, EXPAND_DIMS) |
//! | `tflite.CONCATENATION` | x, .. | `axis` (the inputs share the output's quantization) |
//! | `tflite.PAD` | x | `pads` (before and after, per axis), `value` (the zero point for int8) |
//! | `tflite.MEAN` | x | `axes`; int8 `input_zero_point`, `output_zero_point`, `multiplier`, `shift` (the count folded in) |
//! | `tflite.RELU` | x | `act_min/max` (RELU, RELU6, RELU_N1_TO_1); int8 `input_zero_point`, `output_zero_point`, `multiplier`, `shift` |
//! | `tflite.STRIDED_SLICE` | x (any dtype) | `begin`, `strides` (per axis, resolved), `out_shape` (per axis, before the shrink) |
//! | `tflite.BATCH_MATMUL` | x `[.., M, K]`, y `[.., K, N]` (broadcast batches; `adj_x`/`adj_y` swap the last two axes) | `adj_x`, `adj_y`; int8 `input_offset` (x), `filter_offset` (y), `output_offset`, `multiplier`, `shift`, `act_min/max` |
//!
//! Float32 forms accumulate in the reference kernels' loop order, so they agree with LiteRT's
//! reference kernels to rounding (exp and tanh come from `libm`).

mod band;
pub use band::input_rows as band_input_rows;
pub mod float;
pub mod hybrid;
pub mod op;
mod overwrite;
pub mod quant;
pub mod s8;
mod taps;

use crate::attrs::Attrs;
use crate::error::{KernelError, bail};
use crate::tensor::{
    DType, Data, Dims, Input, Output, collect, numel, opt_value, out_dtype, output, typed, value,
};
use quant::multiply_by_quantized_multiplier as mbqm;

/// Runs `op` if it is a `tflite.*` operator.
pub(crate) fn run(
    op: &str,
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Option<Result<(), KernelError>> {
    let name = op.strip_prefix("tflite.")?;
    Some(op::kernel(name, attrs, inputs, outputs))
}

/// The names of the `tflite.*` operators, sorted.
pub const OPERATORS: &[&str] = &[
    "tflite.ADD",
    "tflite.AVERAGE_POOL_2D",
    "tflite.BATCH_MATMUL",
    "tflite.CONCATENATION",
    "tflite.CONV_2D",
    "tflite.DEPTHWISE_CONV_2D",
    "tflite.DEQUANTIZE",
    "tflite.FULLY_CONNECTED",
    "tflite.LOGISTIC",
    "tflite.MAX_POOL_2D",
    "tflite.MEAN",
    "tflite.MUL",
    "tflite.PAD",
    "tflite.QUANTIZE",
    "tflite.RELU",
    "tflite.RESHAPE",
    "tflite.SOFTMAX",
    "tflite.STRIDED_SLICE",
    "tflite.SUB",
    "tflite.TANH",
];

fn int(attrs: &Attrs<'_>, name: &str) -> Result<i32, KernelError> {
    let v = attrs.int(name, 0)?;
    i32::try_from(v).map_err(|_| crate::error::error!("attribute `{name}` = {v} overflows int32"))
}

fn size(attrs: &Attrs<'_>, name: &str, default: i64) -> Result<usize, KernelError> {
    let v = attrs.int(name, default)?;
    usize::try_from(v).map_err(|_| crate::error::error!("attribute `{name}` = {v} is negative"))
}

/// The float activation range (`act_min`, `act_max`; unbounded by default).
fn float_range(attrs: &Attrs<'_>) -> Result<(f32, f32), KernelError> {
    Ok((
        attrs.float("act_min", f32::MIN)?,
        attrs.float("act_max", f32::MAX)?,
    ))
}

/// The int8 activation range (`act_min`, `act_max`; -128..=127 by default).
fn int_range(attrs: &Attrs<'_>) -> Result<(i32, i32), KernelError> {
    Ok((
        i32::try_from(attrs.int("act_min", -128)?).unwrap_or(-128),
        i32::try_from(attrs.int("act_max", 127)?).unwrap_or(127),
    ))
}

/// TFLite's `ActivationFunctionWithMinMax`: `min(max(x, lo), hi)` with `std::max`/`std::min`
/// (a NaN stays NaN).
#[inline]
/// `what` must hold `want` values (the specialised kernels' check of each slice they are given).
pub(crate) fn expect_len(what: &str, len: usize, want: usize) -> Result<(), KernelError> {
    if len != want {
        bail!("{what} has {len} values, the node's parameters say {want}");
    }
    Ok(())
}

pub(crate) fn clamp_f(x: f32, lo: f32, hi: f32) -> f32 {
    let y = if x < lo { lo } else { x };
    if hi < y { hi } else { y }
}

#[inline]
// clamped to the int8 range first
fn to_i8(x: i32, lo: i32, hi: i32) -> i8 {
    x.clamp(lo.max(-128), hi.min(127)) as i8
}

/// A 4-D shape as `[N, H, W, C]`.
fn nhwc(shape: &[usize], what: &str) -> Result<[usize; 4], KernelError> {
    match shape {
        &[n, h, w, c] => Ok([n, h, w, c]),
        _ => bail!("{what} has shape {shape:?}, expected 4 dimensions (NHWC)"),
    }
}

/// The int32 per-channel (or single) values at input `i`.
fn int32s<'a>(inputs: &[Input<'a>], i: usize) -> Result<&'a [i32], KernelError> {
    Ok(typed::<i32>(inputs, i)?.1)
}

/// Value `c` of a per-channel list (or its only value).
#[inline]
fn channel(list: &[i32], c: usize) -> i32 {
    if list.len() == 1 { list[0] } else { list[c] }
}

/// The window of a convolution or pool: strides, dilations, padding before.
struct Window {
    stride: [usize; 2],
    dilation: [usize; 2],
    pad: [usize; 2],
}

impl Window {
    fn of(attrs: &Attrs<'_>) -> Result<Self, KernelError> {
        let w = Window {
            stride: [size(attrs, "stride_h", 1)?, size(attrs, "stride_w", 1)?],
            dilation: [size(attrs, "dilation_h", 1)?, size(attrs, "dilation_w", 1)?],
            pad: [size(attrs, "pad_top", 0)?, size(attrs, "pad_left", 0)?],
        };
        if w.stride.contains(&0) || w.dilation.contains(&0) {
            bail!("strides and dilations must be at least 1");
        }
        Ok(w)
    }

    /// Refuses a window whose farthest position, `(out - 1) stride + (taps - 1) dilation` on
    /// either axis, is past `usize`: [`Self::at`] computes positions unchecked.
    fn check_reach(&self, out: [usize; 2], taps: [usize; 2]) -> Result<(), KernelError> {
        for a in 0..2 {
            let reach = out[a]
                .saturating_sub(1)
                .checked_mul(self.stride[a])
                .zip(taps[a].saturating_sub(1).checked_mul(self.dilation[a]))
                .and_then(|(o, k)| o.checked_add(k));
            if reach.is_none() {
                bail!(
                    "the window reaches past the largest index (strides {:?}, dilations {:?})",
                    self.stride,
                    self.dilation
                );
            }
        }
        Ok(())
    }

    /// The input row (or column) of output `o` and filter tap `k` on axis `a`, if inside `len`
    /// (within the reach [`Self::check_reach`] checked).
    #[inline]
    fn at(&self, a: usize, o: usize, k: usize, len: usize) -> Option<usize> {
        let p = o * self.stride[a] + k * self.dilation[a];
        p.checked_sub(self.pad[a]).filter(|&p| p < len)
    }
}

/// The symmetric per-batch quantization of a hybrid operator's float input, as TFLite's
/// `SymmetricQuantizeFloats`: scale `max|x| / 127`, values `round(x * 127 / max|x|)` clamped to
/// +-127 (all zeros and scale 1 for an all-zero batch).
pub(crate) struct Symmetric {
    inverse: f32,
    pub(crate) scale: f32,
}

impl Symmetric {
    pub(crate) fn of(x: &[f32]) -> Self {
        let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
        for &v in x {
            if v < lo {
                lo = v;
            }
            if v > hi {
                hi = v;
            }
        }
        let range = libm::fabsf(lo).max(libm::fabsf(hi));
        if x.is_empty() || range == 0.0 {
            return Symmetric {
                inverse: 0.0,
                scale: 1.0,
            };
        }
        Symmetric {
            inverse: 127.0 / range,
            scale: range / 127.0,
        }
    }

    #[inline]
    // rounded and clamped to +-127
    pub(crate) fn q(&self, v: f32) -> i32 {
        (libm::roundf(v * self.inverse) as i32).clamp(-127, 127)
    }
}

/// CONV_2D (and DEPTHWISE_CONV_2D): float32, int8 per-channel, or hybrid (float32 input, int8
/// filter with one scale).
fn conv(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    depthwise: bool,
) -> Result<(), KernelError> {
    let (xs, x) = value(inputs, 0)?;
    let (fs, f) = value(inputs, 1)?;
    let [n, ih, iw, ic] = nhwc(xs, "the input")?;
    let [fo, kh, kw, fi] = nhwc(fs, "the filter")?;
    let out_dtype = out_dtype(outputs, 0)?;
    let os = outputs.first().map(|o| o.shape).unwrap_or(&[]);
    let [on, oh, ow, oc] = nhwc(os, "the output")?;
    let win = Window::of(attrs)?;
    // Output channel `o` reads input channels `first(o)..first(o) + per` through filter row.
    let (per, groups_of) = if depthwise {
        let m = size(attrs, "depth_multiplier", 1)?.max(1);
        if fo != 1 || fi != oc || ic.checked_mul(m) != Some(oc) {
            bail!("depthwise filter {fs:?} does not fit input {xs:?} and output {os:?}");
        }
        (1, m)
    } else {
        if fo != oc || fi == 0 || ic % fi != 0 || ic < fi || oc % (ic / fi) != 0 {
            bail!("filter {fs:?} does not fit input {xs:?} and output {os:?}");
        }
        (fi, oc / (ic / fi))
    };
    if on != n {
        bail!("output batch {on} differs from the input's {n}");
    }
    win.check_reach([oh, ow], [kh, kw])?;
    // The input channel where output channel `o` starts, and where its filter taps are.
    let first = |o: usize| {
        if depthwise {
            o / groups_of
        } else {
            (o / groups_of) * per
        }
    };
    let tap = |o: usize, y: usize, xk: usize, c: usize| {
        if depthwise {
            (y * kw + xk) * oc + o
        } else {
            ((o * kh + y) * kw + xk) * fi + c
        }
    };
    let bias = opt_value(inputs, 2)?;
    match (x, f, out_dtype) {
        (Data::F32(x), Data::F32(f), DType::F32) => {
            let bias = match bias {
                Some((_, Data::F32(b))) if b.len() == oc => Some(b),
                None => None,
                Some(_) => bail!("the bias must be float32 [{oc}]"),
            };
            let (lo, hi) = float_range(attrs)?;
            let (_, out) = output::<f32>(outputs, 0)?;
            let mut k = 0;
            for b in 0..n {
                for oy in 0..oh {
                    for ox in 0..ow {
                        for o in 0..oc {
                            let mut total = 0.0f32;
                            for y in 0..kh {
                                let Some(iy) = win.at(0, oy, y, ih) else {
                                    continue;
                                };
                                for xk in 0..kw {
                                    let Some(ix) = win.at(1, ox, xk, iw) else {
                                        continue;
                                    };
                                    let base = ((b * ih + iy) * iw + ix) * ic + first(o);
                                    for c in 0..per {
                                        total += x[base + c] * f[tap(o, y, xk, c)];
                                    }
                                }
                            }
                            let total = total + bias.map_or(0.0, |b| b[o]);
                            out[k] = clamp_f(total, lo, hi);
                            k += 1;
                        }
                    }
                }
            }
            Ok(())
        }
        (Data::F32(x), Data::I8(f), DType::F32) => {
            // Hybrid: TFLite quantizes each batch of the input symmetrically, accumulates in
            // int32, and scales by input scale times filter scale (dilations are not applied).
            if win.dilation != [1, 1] || depthwise {
                bail!("a hybrid convolution must be CONV_2D without dilation");
            }
            let bias = match bias {
                Some((_, Data::F32(b))) if b.len() == oc => Some(b),
                None => None,
                Some(_) => bail!("the bias must be float32 [{oc}]"),
            };
            let filter_scale = attrs.float("filter_scale", 1.0)?;
            let (lo, hi) = float_range(attrs)?;
            let (_, out) = output::<f32>(outputs, 0)?;
            let batch = ih * iw * ic;
            let mut k = 0;
            for b in 0..n {
                let q = Symmetric::of(&x[b * batch..(b + 1) * batch]);
                let scale = q.scale * filter_scale;
                for oy in 0..oh {
                    for ox in 0..ow {
                        for o in 0..oc {
                            let mut acc = 0i32;
                            for y in 0..kh {
                                let Some(iy) = win.at(0, oy, y, ih) else {
                                    continue;
                                };
                                for xk in 0..kw {
                                    let Some(ix) = win.at(1, ox, xk, iw) else {
                                        continue;
                                    };
                                    let base = ((b * ih + iy) * iw + ix) * ic + first(o);
                                    for c in 0..per {
                                        acc = acc.wrapping_add(
                                            q.q(x[base + c]) * i32::from(f[tap(o, y, xk, c)]),
                                        );
                                    }
                                }
                            }
                            // as TFLite's int-to-float
                            let v = acc as f32 * scale + bias.map_or(0.0, |b| b[o]);
                            out[k] = clamp_f(v, lo, hi);
                            k += 1;
                        }
                    }
                }
            }
            Ok(())
        }
        (Data::I8(x), Data::I8(f), DType::I8) => {
            let bias = match bias {
                Some((_, Data::I32(b))) if b.len() == oc => Some(b),
                None => None,
                Some(_) => bail!("the bias must be int32 [{oc}]"),
            };
            let mult = int32s(inputs, 3)?;
            let shift = int32s(inputs, 4)?;
            if !(mult.len() == oc || mult.len() == 1) || shift.len() != mult.len() {
                bail!("the multipliers and shifts must have one value per output channel");
            }
            let input_offset = int(attrs, "input_offset")?;
            let output_offset = int(attrs, "output_offset")?;
            let (lo, hi) = int_range(attrs)?;
            let (_, out) = output::<i8>(outputs, 0)?;
            let mut k = 0;
            for b in 0..n {
                for oy in 0..oh {
                    for ox in 0..ow {
                        for o in 0..oc {
                            let mut acc = 0i32;
                            for y in 0..kh {
                                let Some(iy) = win.at(0, oy, y, ih) else {
                                    continue;
                                };
                                for xk in 0..kw {
                                    let Some(ix) = win.at(1, ox, xk, iw) else {
                                        continue;
                                    };
                                    let base = ((b * ih + iy) * iw + ix) * ic + first(o);
                                    for c in 0..per {
                                        let xv = i32::from(x[base + c]).wrapping_add(input_offset);
                                        acc = acc.wrapping_add(
                                            i32::from(f[tap(o, y, xk, c)]).wrapping_mul(xv),
                                        );
                                    }
                                }
                            }
                            if let Some(bias) = bias {
                                acc = acc.wrapping_add(bias[o]);
                            }
                            let v = mbqm(acc, channel(mult, o), channel(shift, o))
                                .saturating_add(output_offset);
                            out[k] = to_i8(v, lo, hi);
                            k += 1;
                        }
                    }
                }
            }
            Ok(())
        }
        (x, f, o) => bail!(
            "input {}, filter {} and output {} is not a supported combination",
            x.dtype().name(),
            f.dtype().name(),
            o.name()
        ),
    }
}

/// FULLY_CONNECTED: float32, int8 (per-tensor or per-channel), or hybrid.
fn fully_connected(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (xs, x) = value(inputs, 0)?;
    let (fs, f) = value(inputs, 1)?;
    let &[units, depth] = fs else {
        bail!("the weights have shape {fs:?}, expected [units, depth]");
    };
    let total = numel(xs)?;
    if depth == 0 || total % depth != 0 {
        bail!("input {xs:?} is not a whole number of rows of {depth}");
    }
    let batches = total / depth;
    let out_len = outputs.first().map_or(0, |o| o.data.len());
    if batches.checked_mul(units) != Some(out_len) {
        bail!("the output has {out_len} elements, expected {batches} x {units}");
    }
    let bias = opt_value(inputs, 2)?;
    match (x, f, out_dtype(outputs, 0)?) {
        (Data::F32(x), Data::F32(f), DType::F32) => {
            let bias = match bias {
                Some((_, Data::F32(b))) if b.len() == units => Some(b),
                None => None,
                Some(_) => bail!("the bias must be float32 [{units}]"),
            };
            let (lo, hi) = float_range(attrs)?;
            let (_, out) = output::<f32>(outputs, 0)?;
            for b in 0..batches {
                let row = &x[b * depth..(b + 1) * depth];
                for u in 0..units {
                    let w = &f[u * depth..(u + 1) * depth];
                    let mut acc = 0.0f32;
                    for d in 0..depth {
                        acc += row[d] * w[d];
                    }
                    out[b * units + u] = clamp_f(acc + bias.map_or(0.0, |b| b[u]), lo, hi);
                }
            }
            Ok(())
        }
        (Data::F32(x), Data::I8(f), DType::F32) => {
            let bias = match bias {
                Some((_, Data::F32(b))) if b.len() == units => Some(b),
                None => None,
                Some(_) => bail!("the bias must be float32 [{units}]"),
            };
            let filter_scale = attrs.float("filter_scale", 1.0)?;
            let (lo, hi) = float_range(attrs)?;
            let (_, out) = output::<f32>(outputs, 0)?;
            for b in 0..batches {
                let row = &x[b * depth..(b + 1) * depth];
                let q = Symmetric::of(row);
                let scale = q.scale * filter_scale;
                for u in 0..units {
                    let w = &f[u * depth..(u + 1) * depth];
                    let mut acc = 0i32;
                    for d in 0..depth {
                        acc = acc.wrapping_add(q.q(row[d]) * i32::from(w[d]));
                    }
                    // as TFLite's int-to-float
                    let v = acc as f32 * scale + bias.map_or(0.0, |b| b[u]);
                    out[b * units + u] = clamp_f(v, lo, hi);
                }
            }
            Ok(())
        }
        (Data::I8(x), Data::I8(f), DType::I8) => {
            let bias = match bias {
                Some((_, Data::I32(b))) if b.len() == units => Some(b),
                None => None,
                Some(_) => bail!("the bias must be int32 [{units}]"),
            };
            let mult = int32s(inputs, 3)?;
            let shift = int32s(inputs, 4)?;
            if !(mult.len() == units || mult.len() == 1) || shift.len() != mult.len() {
                bail!("the multipliers and shifts must have one value, or one per unit");
            }
            let input_offset = int(attrs, "input_offset")?;
            let filter_offset = int(attrs, "filter_offset")?;
            let output_offset = int(attrs, "output_offset")?;
            let (lo, hi) = int_range(attrs)?;
            let (_, out) = output::<i8>(outputs, 0)?;
            for b in 0..batches {
                let row = &x[b * depth..(b + 1) * depth];
                for u in 0..units {
                    let w = &f[u * depth..(u + 1) * depth];
                    let mut acc = 0i32;
                    for d in 0..depth {
                        acc = acc.wrapping_add(
                            (i32::from(w[d]).wrapping_add(filter_offset))
                                .wrapping_mul(i32::from(row[d]).wrapping_add(input_offset)),
                        );
                    }
                    if let Some(bias) = bias {
                        acc = acc.wrapping_add(bias[u]);
                    }
                    // LiteRT's reference FULLY_CONNECTED rounds once (its CONV_2D twice).
                    let v = quant::multiply_by_quantized_multiplier_single(
                        acc,
                        channel(mult, u),
                        channel(shift, u),
                    )
                    .saturating_add(output_offset);
                    out[b * units + u] = to_i8(v, lo, hi);
                }
            }
            Ok(())
        }
        (x, f, o) => bail!(
            "input {}, weights {} and output {} is not a supported combination",
            x.dtype().name(),
            f.dtype().name(),
            o.name()
        ),
    }
}

/// AVERAGE_POOL_2D and MAX_POOL_2D, float32 or int8: the window clipped to the input (padding
/// takes no part), the int8 average rounded half away from zero.
fn pool(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    max: bool,
) -> Result<(), KernelError> {
    let (xs, x) = value(inputs, 0)?;
    let [n, ih, iw, c] = nhwc(xs, "the input")?;
    let os = outputs.first().map(|o| o.shape).unwrap_or(&[]);
    let [on, oh, ow, oc] = nhwc(os, "the output")?;
    if on != n || oc != c {
        bail!("output {os:?} does not fit input {xs:?}");
    }
    let win = Window::of(attrs)?;
    let (fh, fw) = (size(attrs, "filter_h", 1)?, size(attrs, "filter_w", 1)?);
    win.check_reach([oh, ow], [fh, fw])?;
    // Visits the taps of one output element: `each(input index)`; returns how many.
    let taps = |b: usize, oy: usize, ox: usize, ch: usize, each: &mut dyn FnMut(usize)| {
        let mut count = 0usize;
        for y in 0..fh {
            let Some(iy) = win.at(0, oy, y, ih) else {
                continue;
            };
            for xk in 0..fw {
                let Some(ix) = win.at(1, ox, xk, iw) else {
                    continue;
                };
                each(((b * ih + iy) * iw + ix) * c + ch);
                count += 1;
            }
        }
        count
    };
    match (x, out_dtype(outputs, 0)?) {
        (Data::F32(x), DType::F32) => {
            let (lo, hi) = float_range(attrs)?;
            let (_, out) = output::<f32>(outputs, 0)?;
            let mut k = 0;
            for b in 0..n {
                for oy in 0..oh {
                    for ox in 0..ow {
                        for ch in 0..c {
                            let mut acc = if max { f32::MIN } else { 0.0 };
                            let count = taps(b, oy, ox, ch, &mut |i| {
                                if max {
                                    if acc < x[i] {
                                        acc = x[i];
                                    }
                                } else {
                                    acc += x[i];
                                }
                            });
                            if count == 0 {
                                bail!("a pooling window lies wholly in the padding");
                            }
                            // a window's tap count
                            let v = if max { acc } else { acc / count as f32 };
                            out[k] = clamp_f(v, lo, hi);
                            k += 1;
                        }
                    }
                }
            }
            Ok(())
        }
        (Data::I8(x), DType::I8) => {
            let (lo, hi) = int_range(attrs)?;
            let (_, out) = output::<i8>(outputs, 0)?;
            let mut k = 0;
            for b in 0..n {
                for oy in 0..oh {
                    for ox in 0..ow {
                        for ch in 0..c {
                            // In int64: a window of 2^24 taps or more would overflow LiteRT's
                            // int32 sum (the same result below that).
                            let mut acc: i64 = if max { -128 } else { 0 };
                            let count = taps(b, oy, ox, ch, &mut |i| {
                                let v = i64::from(x[i]);
                                if max {
                                    acc = acc.max(v);
                                } else {
                                    acc += v;
                                }
                            });
                            if count == 0 {
                                bail!("a pooling window lies wholly in the padding");
                            }
                            let v = if max {
                                acc
                            } else {
                                let count = i64::try_from(count).unwrap_or(i64::MAX);
                                if acc > 0 {
                                    (acc + count / 2) / count
                                } else {
                                    (acc - count / 2) / count
                                }
                            };
                            // an int8 max or mean
                            let v = v.clamp(-128, 127) as i32;
                            out[k] = to_i8(v, lo, hi);
                            k += 1;
                        }
                    }
                }
            }
            Ok(())
        }
        (x, o) => bail!("input {} and output {} differ", x.dtype().name(), o.name()),
    }
}

/// SOFTMAX over the last axis. float32: `exp((x - max) * beta)` normalized. int8: LiteRT's
/// kernel: the exp table `table[255 - d] = exp(-input_scale * beta * d)` (float, from the build)
/// indexed by the distance `d` to the row's maximum, summed in float, scaled by `1 / (sum *
/// output_scale)` and rounded half away from zero onto the output's zero point.
fn softmax(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (xs, x) = value(inputs, 0)?;
    let depth = xs.last().copied().unwrap_or(1).max(1);
    let total = numel(xs)?;
    if outputs.first().map_or(0, |o| o.data.len()) != total {
        bail!("the output does not have the input's size");
    }
    match (x, out_dtype(outputs, 0)?) {
        (Data::F32(x), DType::F32) => {
            let beta = attrs.float("beta", 1.0)?;
            let (_, out) = output::<f32>(outputs, 0)?;
            for (row, orow) in x.chunks(depth).zip(out.chunks_mut(depth)) {
                let mut top = f32::NEG_INFINITY;
                for &v in row {
                    if v > top {
                        top = v;
                    }
                }
                let mut sum = 0.0f32;
                for (o, &v) in orow.iter_mut().zip(row) {
                    *o = libm::expf((v - top) * beta);
                    sum += *o;
                }
                for o in orow.iter_mut() {
                    *o /= sum;
                }
            }
            Ok(())
        }
        (Data::I8(x), DType::I8) => {
            let (_, table) = typed::<f32>(inputs, 1)?;
            if table.len() != 256 {
                bail!("the exp table has {} values, expected 256", table.len());
            }
            let zero_point = int(attrs, "output_zero_point")?;
            let scale = attrs.float("output_scale", 1.0 / 256.0)?;
            let (_, out) = output::<i8>(outputs, 0)?;
            for (row, orow) in x.chunks(depth).zip(out.chunks_mut(depth)) {
                let top = row.iter().map(|&v| i32::from(v)).max().unwrap_or(-128);
                // table_offset[v] = table[255 - top + v]: the index is 255 - (top - v) >= 0.
                let at = |v: i8| table[usize::try_from(255 - top + i32::from(v)).unwrap_or(0)];
                let mut sum = 0.0f32;
                for &v in row {
                    sum += at(v);
                }
                let inverse = 1.0 / (sum * scale);
                for (o, &v) in orow.iter_mut().zip(row) {
                    // clamped below
                    let q = libm::roundf(at(v) * inverse) as i32;
                    *o = to_i8(q.saturating_add(zero_point), -128, 127);
                }
            }
            Ok(())
        }
        (x, o) => bail!("input {} and output {} differ", x.dtype().name(), o.name()),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Binary {
    Add,
    Sub,
    Mul,
}

/// ADD, SUB, MUL with broadcasting: float32 (then the activation clamp), or int8 (ADD and MUL)
/// with TFLite's rescaling.
fn binary(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    op: Binary,
) -> Result<(), KernelError> {
    let (a_shape, a) = value(inputs, 0)?;
    let (b_shape, b) = value(inputs, 1)?;
    let out_shape: Dims = collect(
        outputs
            .first()
            .map(|o| o.shape)
            .unwrap_or(&[])
            .iter()
            .copied(),
    )?;
    let sa = crate::broadcast::broadcast_strides(a_shape, &out_shape)?;
    let sb = crate::broadcast::broadcast_strides(b_shape, &out_shape)?;
    let strides = [sa, sb];
    match (a, b, out_dtype(outputs, 0)?) {
        (Data::F32(a), Data::F32(b), DType::F32) => {
            let (lo, hi) = float_range(attrs)?;
            let (_, out) = output::<f32>(outputs, 0)?;
            crate::broadcast::for_each(&out_shape, &strides, |i, at| {
                let (x, y) = (a[at[0]], b[at[1]]);
                let v = match op {
                    Binary::Add => x + y,
                    Binary::Sub => x - y,
                    Binary::Mul => x * y,
                };
                out[i] = clamp_f(v, lo, hi);
            })
        }
        (Data::I8(a), Data::I8(b), DType::I8) => {
            let (lo, hi) = int_range(attrs)?;
            let off1 = int(attrs, "input1_offset")?;
            let off2 = int(attrs, "input2_offset")?;
            let out_off = int(attrs, "output_offset")?;
            let out_mult = int(attrs, "output_multiplier")?;
            let out_shift = int(attrs, "output_shift")?;
            let (_, out) = output::<i8>(outputs, 0)?;
            match op {
                Binary::Add | Binary::Sub => {
                    let left = int(attrs, "left_shift")?.clamp(0, 30);
                    let (m1, s1) = (
                        int(attrs, "input1_multiplier")?,
                        int(attrs, "input1_shift")?,
                    );
                    let (m2, s2) = (
                        int(attrs, "input2_multiplier")?,
                        int(attrs, "input2_shift")?,
                    );
                    let sub = matches!(op, Binary::Sub);
                    crate::broadcast::for_each(&out_shape, &strides, |i, at| {
                        let x = i32::from(a[at[0]])
                            .wrapping_add(off1)
                            .wrapping_shl(left as u32);
                        let y = i32::from(b[at[1]])
                            .wrapping_add(off2)
                            .wrapping_shl(left as u32);
                        let (x, y) = (mbqm(x, m1, s1), mbqm(y, m2, s2));
                        let raw = if sub {
                            x.wrapping_sub(y)
                        } else {
                            x.wrapping_add(y)
                        };
                        let v = mbqm(raw, out_mult, out_shift).saturating_add(out_off);
                        out[i] = to_i8(v, lo, hi);
                    })
                }
                Binary::Mul => crate::broadcast::for_each(&out_shape, &strides, |i, at| {
                    let x = i32::from(a[at[0]]).wrapping_add(off1);
                    let y = i32::from(b[at[1]]).wrapping_add(off2);
                    let v = mbqm(x.wrapping_mul(y), out_mult, out_shift).saturating_add(out_off);
                    out[i] = to_i8(v, lo, hi);
                }),
            }
        }
        (a, b, o) => bail!(
            "inputs {} and {} and output {} is not a supported combination",
            a.dtype().name(),
            b.dtype().name(),
            o.name()
        ),
    }
}

/// LOGISTIC and TANH: int8 through the 256-entry table of the build (TFLite's LUT, indexed by
/// the input's byte), float32 through `f`.
fn lut_or(
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    f: fn(f32) -> f32,
) -> Result<(), KernelError> {
    let (xs, x) = value(inputs, 0)?;
    if outputs.first().map_or(0, |o| o.data.len()) != numel(xs)? {
        bail!("the output does not have the input's size");
    }
    match (x, out_dtype(outputs, 0)?) {
        (Data::F32(x), DType::F32) => {
            let (_, out) = output::<f32>(outputs, 0)?;
            for (o, &v) in out.iter_mut().zip(x) {
                *o = f(v);
            }
            Ok(())
        }
        (Data::I8(x), DType::I8) => {
            let (_, table) = typed::<i8>(inputs, 1)?;
            if table.len() != 256 {
                bail!("the table has {} values, expected 256", table.len());
            }
            let (_, out) = output::<i8>(outputs, 0)?;
            for (o, &v) in out.iter_mut().zip(x) {
                *o = table[usize::from(v.cast_unsigned())];
            }
            Ok(())
        }
        (x, o) => bail!("input {} and output {} differ", x.dtype().name(), o.name()),
    }
}

/// QUANTIZE: float32 to int8 (`round(x / scale) + zero_point`, the division in float32, as
/// TFLite's reference `AffineQuantize`), or int8 to int8 (requantized with a multiplier).
fn quantize(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (xs, x) = value(inputs, 0)?;
    if outputs.first().map_or(0, |o| o.data.len()) != numel(xs)? {
        bail!("the output does not have the input's size");
    }
    let zero_point = int(attrs, "zero_point")?;
    let (_, out) = output::<i8>(outputs, 0)?;
    match x {
        Data::F32(x) => {
            let scale = attrs.float("scale", 1.0)?;
            for (o, &v) in out.iter_mut().zip(x) {
                // saturating, as the clamp after it
                let q = libm::roundf(v / scale) as i32;
                *o = to_i8(q.saturating_add(zero_point), -128, 127);
            }
            Ok(())
        }
        Data::I8(x) => {
            let input_zero_point = int(attrs, "input_zero_point")?;
            let (m, s) = (int(attrs, "multiplier")?, int(attrs, "shift")?);
            for (o, &v) in out.iter_mut().zip(x) {
                let q = mbqm(i32::from(v).wrapping_sub(input_zero_point), m, s);
                *o = to_i8(q.saturating_add(zero_point), -128, 127);
            }
            Ok(())
        }
        x => bail!("QUANTIZE of {} is not supported", x.dtype().name()),
    }
}

/// DEQUANTIZE: int8 to float32, `(float)(scale * (q - zero_point))` with the scale in f64, as
/// TFLite's reference `Dequantize`.
fn dequantize(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (xs, x) = typed::<i8>(inputs, 0)?;
    if outputs.first().map_or(0, |o| o.data.len()) != numel(xs)? {
        bail!("the output does not have the input's size");
    }
    let scale = f64::from(attrs.float("scale", 1.0)?);
    let zero_point = int(attrs, "zero_point")?;
    let (_, out) = output::<f32>(outputs, 0)?;
    for (o, &v) in out.iter_mut().zip(x) {
        // f64 to f32, as TFLite's static_cast
        let r = (scale * (f64::from(v) - f64::from(zero_point))) as f32;
        *o = r;
    }
    Ok(())
}

/// RESHAPE (SQUEEZE, EXPAND_DIMS): the elements as they are, any dtype.
fn reshape(inputs: &[Input<'_>], outputs: &mut [Output<'_>]) -> Result<(), KernelError> {
    let dtype = out_dtype(outputs, 0)?;
    crate::tensor::dispatch!(dtype, copy(inputs, outputs))
}

fn copy<T: crate::tensor::Elem>(
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    crate::tensor::copy_input::<T>(inputs, 0, outputs, 0)
}

/// PAD with a constant (`value`: 0 for float32, the zero point for int8), `pads` before and
/// after per axis, as `[b0, a0, b1, a1, ..]`.
fn pad(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (xs, x) = value(inputs, 0)?;
    let pads = attrs.ints("pads")?.unwrap_or(&[]);
    if pads.len() != 2 * xs.len() {
        bail!(
            "`pads` has {} values, expected {}",
            pads.len(),
            2 * xs.len()
        );
    }
    let os: Dims = collect(
        outputs
            .first()
            .map(|o| o.shape)
            .unwrap_or(&[])
            .iter()
            .copied(),
    )?;
    let mut before = Dims::new();
    for (d, &n) in xs.iter().enumerate() {
        let (b, a) = (pads[2 * d], pads[2 * d + 1]);
        let (Ok(b), Ok(a)) = (usize::try_from(b), usize::try_from(a)) else {
            bail!("negative pads are not supported");
        };
        let Some(padded) = n.checked_add(b).and_then(|m| m.checked_add(a)) else {
            bail!("axis {d}: {n} + {b} + {a} is past the largest size");
        };
        if os.get(d) != Some(&padded) {
            bail!("output {os:?} does not fit input {xs:?} padded by {pads:?}");
        }
        crate::tensor::push(&mut before, b)?;
    }
    let in_strides = crate::tensor::strides(xs)?;
    // Each output element reads the input element at (index - before) when inside.
    let each = |out_index: &[usize]| -> Option<usize> {
        let mut at = 0;
        for d in 0..xs.len() {
            let p = out_index[d].checked_sub(before[d]).filter(|&p| p < xs[d])?;
            at += p * in_strides[d];
        }
        Some(at)
    };
    match (x, out_dtype(outputs, 0)?) {
        (Data::F32(x), DType::F32) => {
            let v = attrs.float("value", 0.0)?;
            let (_, out) = output::<f32>(outputs, 0)?;
            walk(&os, |i, idx| out[i] = each(idx).map_or(v, |a| x[a]))
        }
        (Data::I8(x), DType::I8) => {
            let v = to_i8(int(attrs, "value")?, -128, 127);
            let (_, out) = output::<i8>(outputs, 0)?;
            walk(&os, |i, idx| out[i] = each(idx).map_or(v, |a| x[a]))
        }
        (x, o) => bail!("input {} and output {} differ", x.dtype().name(), o.name()),
    }
}

/// Calls `f(i, index)` for every element of `shape` in row-major order.
fn walk(shape: &[usize], mut f: impl FnMut(usize, &[usize])) -> Result<(), KernelError> {
    let total = numel(shape)?;
    let mut index: Dims = collect(shape.iter().map(|_| 0))?;
    for i in 0..total {
        f(i, &index);
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Ok(())
}

/// MEAN over `axes`. Float32: the sum in row-major order, divided by the count. Int8, as
/// LiteRT's `QuantizedMeanOrSum`: the int32 sum of `x - zp_in`, times the multiplier the build
/// folded the count into, plus `zp_out`, saturated.
fn mean(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (xs, x) = value(inputs, 0)?;
    let axes = attrs.ints("axes")?.unwrap_or(&[]);
    let mut reduced = [false; crate::tensor::MAX_RANK];
    for &a in axes {
        reduced[crate::tensor::axis(a, xs.len())?] = true;
    }
    // The output in the input's rank: reduced axes of size 1.
    let kept: Dims = collect(
        xs.iter()
            .enumerate()
            .map(|(d, &n)| if reduced[d] { 1 } else { n }),
    )?;
    let out_len = outputs.first().map_or(0, |o| o.data.len());
    if numel(&kept)? != out_len {
        bail!(
            "the output has {out_len} elements, the mean of {xs:?} over {axes:?} has {}",
            numel(&kept)?
        );
    }
    let out_strides = crate::tensor::strides(&kept)?;
    let count = (numel(xs)? / out_len.max(1)).max(1);
    // Output element of input element at `index`.
    let target = |index: &[usize]| -> usize {
        index
            .iter()
            .enumerate()
            .map(|(d, &p)| if reduced[d] { 0 } else { p * out_strides[d] })
            .sum()
    };
    match (x, out_dtype(outputs, 0)?) {
        (Data::F32(x), DType::F32) => {
            let (_, out) = output::<f32>(outputs, 0)?;
            out.fill(0.0);
            walk(xs, |i, idx| out[target(idx)] += x[i])?;
            // an element count
            let n = count as f32;
            for o in out.iter_mut() {
                *o /= n;
            }
            Ok(())
        }
        (Data::I8(x), DType::I8) => {
            let zp_in = int(attrs, "input_zero_point")?;
            let zp_out = int(attrs, "output_zero_point")?;
            let (m, sh) = (int(attrs, "multiplier")?, int(attrs, "shift")?);
            let (_, out) = output::<i8>(outputs, 0)?;
            let mut sums = [0i32; 64];
            // Sums of up to 64 outputs at a time (no heap): each pass walks the input once.
            let mut first = 0;
            while first < out.len() {
                let last = (first + sums.len()).min(out.len());
                sums.fill(0);
                walk(xs, |i, idx| {
                    let t = target(idx);
                    if (first..last).contains(&t) {
                        let v = i32::from(x[i]);
                        sums[t - first] = sums[t - first].wrapping_add(v.wrapping_sub(zp_in));
                    }
                })?;
                for (o, &sum) in out[first..last].iter_mut().zip(&sums) {
                    let v = mbqm(sum, m, sh).saturating_add(zp_out);
                    *o = to_i8(v, -128, 127);
                }
                first = last;
            }
            Ok(())
        }
        (x, o) => bail!("input {} and output {} differ", x.dtype().name(), o.name()),
    }
}

/// RELU, RELU6, RELU_N1_TO_1: float32 clamps to `act_min/max`; int8 rescales as LiteRT's
/// `ReluX` does (`zp_out + MultiplyByQuantizedMultiplier(x - zp_in)`, then the clamp).
fn relu(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (xs, x) = value(inputs, 0)?;
    match (x, out_dtype(outputs, 0)?) {
        (Data::F32(x), DType::F32) => {
            let (lo, hi) = float_range(attrs)?;
            let (ys, y) = output::<f32>(outputs, 0)?;
            if numel(xs)? != numel(ys)? {
                bail!("input {xs:?} and output {ys:?} differ in size");
            }
            for (o, &v) in y.iter_mut().zip(x) {
                *o = clamp_f(v, lo, hi);
            }
            Ok(())
        }
        (Data::I8(x), DType::I8) => {
            let (lo, hi) = int_range(attrs)?;
            let zp_in = int(attrs, "input_zero_point")?;
            let zp_out = int(attrs, "output_zero_point")?;
            let (m, sh) = (int(attrs, "multiplier")?, int(attrs, "shift")?);
            let (ys, y) = output::<i8>(outputs, 0)?;
            if numel(xs)? != numel(ys)? {
                bail!("input {xs:?} and output {ys:?} differ in size");
            }
            for (o, &v) in y.iter_mut().zip(x) {
                let v = zp_out.saturating_add(mbqm(i32::from(v).wrapping_sub(zp_in), m, sh));
                *o = to_i8(v, lo, hi);
            }
            Ok(())
        }
        (x, o) => bail!("input {} and output {} differ", x.dtype().name(), o.name()),
    }
}

/// STRIDED_SLICE with the build's resolved `begin`, `strides` and per-axis `out_shape` (before
/// shrinking): output element `(i_0, ..)` is input element `(begin_d + i_d strides_d, ..)`.
fn strided_slice(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    fn typed_slice<T: crate::tensor::Elem>(
        attrs: &Attrs<'_>,
        inputs: &[Input<'_>],
        outputs: &mut [Output<'_>],
    ) -> Result<(), KernelError> {
        let (xs, x) = typed::<T>(inputs, 0)?;
        let begin = attrs.ints("begin")?.unwrap_or(&[]);
        let strides = attrs.ints("strides")?.unwrap_or(&[]);
        let shape = attrs.ints("out_shape")?.unwrap_or(&[]);
        let r = xs.len();
        if begin.len() != r || strides.len() != r || shape.len() != r {
            bail!("begin, strides and out_shape must have {r} values");
        }
        let shape: Dims =
            crate::tensor::try_collect(shape.iter().map(|&d| {
                usize::try_from(d).map_err(|_| crate::error::error!("negative size {d}"))
            }))?;
        let in_strides = crate::tensor::strides(xs)?;
        let (_, y) = output::<T>(outputs, 0)?;
        if numel(&shape)? != y.len() {
            bail!(
                "the output has {} elements, the slice {}",
                y.len(),
                numel(&shape)?
            );
        }
        // Every position must be inside the input.
        for d in 0..r {
            if shape[d] == 0 {
                continue;
            }
            let n = xs[d] as i64;
            let last = i64::try_from(shape[d] - 1)
                .ok()
                .and_then(|steps| strides[d].checked_mul(steps))
                .and_then(|span| begin[d].checked_add(span));
            if !(0..n).contains(&begin[d]) || !last.is_some_and(|last| (0..n).contains(&last)) {
                bail!("the slice leaves axis {d} of size {n}");
            }
        }
        let mut err = Ok(());
        walk(&shape, |i, idx| {
            let mut at = 0i64;
            for d in 0..r {
                at += (begin[d] + strides[d] * idx[d] as i64) * in_strides[d] as i64;
            }
            match usize::try_from(at).ok().and_then(|a| x.get(a)) {
                Some(&v) => y[i] = v,
                None => err = Err(crate::error::error!("index {at} outside the input")),
            }
        })?;
        err
    }
    crate::tensor::dispatch!(out_dtype(outputs, 0)?, typed_slice(attrs, inputs, outputs))
}

/// BATCH_MATMUL: `x [.., M, K] * y [.., K, N]` with broadcast batch axes, `adj_x`/`adj_y`
/// reading the operand with its last two axes swapped. Float32 sums in `k` order; int8 sums
/// `(x + input_offset) (y + filter_offset)` in int32 and requantises as LiteRT's reference
/// kernel does.
fn batch_matmul(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (xs, x) = value(inputs, 0)?;
    let (ws, w) = value(inputs, 1)?;
    let adj_x = attrs.int("adj_x", 0)? != 0;
    let adj_y = attrs.int("adj_y", 0)? != 0;
    if xs.len() < 2 || ws.len() < 2 {
        bail!("BATCH_MATMUL needs operands of rank 2 or more, found {xs:?} and {ws:?}");
    }
    let (xr, wr) = (xs.len(), ws.len());
    let (m, k) = if adj_x {
        (xs[xr - 1], xs[xr - 2])
    } else {
        (xs[xr - 2], xs[xr - 1])
    };
    let (k2, n) = if adj_y {
        (ws[wr - 1], ws[wr - 2])
    } else {
        (ws[wr - 2], ws[wr - 1])
    };
    if k != k2 {
        bail!("{xs:?} and {ws:?} do not multiply");
    }
    let batch = crate::broadcast::broadcast_shapes(&[&xs[..xr - 2], &ws[..wr - 2]])?;
    let bx = crate::broadcast::broadcast_strides(&xs[..xr - 2], &batch)?;
    let bw = crate::broadcast::broadcast_strides(&ws[..wr - 2], &batch)?;
    let out_len = outputs.first().map_or(0, |o| o.data.len());
    let product = numel(&batch)?.checked_mul(m).and_then(|p| p.checked_mul(n));
    match product {
        Some(p) if p == out_len => {}
        Some(p) => bail!("the output has {out_len} elements, the product {p}"),
        None => bail!("the product of {xs:?} and {ws:?} has more elements than fit in memory"),
    }
    // Element (i, p) of x and (p, j) of y within one matrix.
    let xi = move |i: usize, p: usize| if adj_x { p * m + i } else { i * k + p };
    let wi = move |p: usize, j: usize| if adj_y { j * k + p } else { p * n + j };
    match (x, w, out_dtype(outputs, 0)?) {
        (Data::F32(x), Data::F32(w), DType::F32) => {
            let (_, out) = output::<f32>(outputs, 0)?;
            crate::broadcast::for_each(&batch, &[bx, bw], |b, off| {
                let (x, w) = (&x[off[0] * m * k..], &w[off[1] * k * n..]);
                for i in 0..m {
                    for j in 0..n {
                        let mut acc = 0.0f32;
                        for p in 0..k {
                            acc += x[xi(i, p)] * w[wi(p, j)];
                        }
                        out[(b * m + i) * n + j] = acc;
                    }
                }
            })
        }
        (Data::I8(x), Data::I8(w), DType::I8) => {
            let (lo, hi) = int_range(attrs)?;
            let x_off = int(attrs, "input_offset")?;
            let w_off = int(attrs, "filter_offset")?;
            let out_off = int(attrs, "output_offset")?;
            let (mult, sh) = (int(attrs, "multiplier")?, int(attrs, "shift")?);
            let (_, out) = output::<i8>(outputs, 0)?;
            crate::broadcast::for_each(&batch, &[bx, bw], |b, off| {
                let (x, w) = (&x[off[0] * m * k..], &w[off[1] * k * n..]);
                for i in 0..m {
                    for j in 0..n {
                        let mut acc = 0i32;
                        for p in 0..k {
                            acc = acc.wrapping_add(
                                i32::from(x[xi(i, p)])
                                    .wrapping_add(x_off)
                                    .wrapping_mul(i32::from(w[wi(p, j)]).wrapping_add(w_off)),
                            );
                        }
                        let v = mbqm(acc, mult, sh).saturating_add(out_off);
                        out[(b * m + i) * n + j] = to_i8(v, lo, hi);
                    }
                }
            })
        }
        (x, w, o) => bail!(
            "inputs {} and {} and output {} is not a supported combination",
            x.dtype().name(),
            w.dtype().name(),
            o.name()
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::string::ToString;
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::attrs::Attr;
    use crate::tensor::DataMut;

    /// `op` on float32 `inputs`, its output of `shape`: the output, or the kernel's error.
    fn run_f32(
        op: &str,
        attrs: &[(&str, Attr<'_>)],
        inputs: &[(&[usize], &[f32])],
        shape: &[usize],
    ) -> Result<Vec<f32>, KernelError> {
        let mut out = vec![0.0; shape.iter().product()];
        let inputs: Vec<Input<'_>> = inputs
            .iter()
            .map(|&(shape, data)| Input::Value {
                shape,
                data: Data::F32(data),
            })
            .collect();
        let mut outputs = [Output {
            shape,
            data: DataMut::F32(&mut out),
        }];
        run(op, &Attrs::new(attrs), &inputs, &mut outputs).expect("a tflite operator")?;
        Ok(out)
    }

    /// `op` on `inputs`, its int8 output of `shape`.
    fn run_i8(
        op: &str,
        attrs: &[(&str, Attr<'_>)],
        inputs: &[Input<'_>],
        shape: &[usize],
    ) -> Result<Vec<i8>, KernelError> {
        let mut out = vec![0; shape.iter().product()];
        let mut outputs = [Output {
            shape,
            data: DataMut::I8(&mut out),
        }];
        run(op, &Attrs::new(attrs), inputs, &mut outputs).expect("a tflite operator")?;
        Ok(out)
    }

    fn int8<'a>(shape: &'a [usize], data: &'a [i8]) -> Input<'a> {
        Input::Value {
            shape,
            data: Data::I8(data),
        }
    }

    fn int32<'a>(shape: &'a [usize], data: &'a [i32]) -> Input<'a> {
        Input::Value {
            shape,
            data: Data::I32(data),
        }
    }

    #[test]
    fn issue_36_pad_sizes_past_usize_are_an_error_not_a_panic() {
        let x = [1.0, 2.0];
        let pad = |pads: &[i64], out: &[usize]| {
            run_f32(
                "tflite.PAD",
                &[("pads", Attr::Ints(pads))],
                &[(&[2], &x)],
                out,
            )
        };
        assert_eq!(pad(&[1, 2], &[5]).unwrap(), [0.0, 1.0, 2.0, 0.0, 0.0]);
        // 2 + (2^63 - 1) + (2^63 - 1) is past `usize` (it panicked with overflow).
        let error = pad(&[i64::MAX, i64::MAX], &[1]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "axis 0: 2 + 9223372036854775807 + 9223372036854775807 is past the largest size"
        );
        let error = pad(&[-1, 0], &[1]).unwrap_err();
        assert!(error.to_string().contains("negative pads"), "{error}");
    }

    #[test]
    fn issue_36_windows_reaching_past_usize_are_an_error_not_a_panic() {
        let x = [0.0f32; 9];
        let f = [0.0f32; 4];
        let conv = |attrs: &[(&str, Attr<'_>)]| {
            run_f32(
                "tflite.CONV_2D",
                attrs,
                &[(&[1, 3, 3, 1], &x), (&[1, 2, 2, 1], &f)],
                &[1, 3, 3, 1],
            )
        };
        assert!(conv(&[("pad_top", Attr::Int(1)), ("pad_left", Attr::Int(1))]).is_ok());
        // Output row 2, tap row 1: 2 (2^63 - 1) + (2^63 - 1) is past `usize` (it panicked with
        // overflow); either alone is not.
        let error = conv(&[
            ("stride_h", Attr::Int(i64::MAX)),
            ("dilation_h", Attr::Int(i64::MAX)),
        ])
        .unwrap_err();
        assert!(
            error.to_string().contains("reaches past the largest index"),
            "{error}"
        );
        assert!(conv(&[("dilation_w", Attr::Int(i64::MAX))]).is_ok());
        // Output column 3: 3 (2^63 - 1).
        let pool = run_f32(
            "tflite.MAX_POOL_2D",
            &[
                ("filter_h", Attr::Int(1)),
                ("filter_w", Attr::Int(1)),
                ("stride_w", Attr::Int(i64::MAX)),
            ],
            &[(&[1, 1, 4, 1], &x[..4])],
            &[1, 1, 4, 1],
        );
        let error = pool.unwrap_err();
        assert!(
            error.to_string().contains("reaches past the largest index"),
            "{error}"
        );
    }

    #[test]
    fn issue_36_convolution_channels_past_usize_or_zero_are_an_error_not_a_panic() {
        // A depth multiplier of 2^63 - 1 times 2 input channels (it panicked with overflow).
        let x = [0.0f32; 2];
        let f = [0.0f32; 2];
        let error = run_f32(
            "tflite.DEPTHWISE_CONV_2D",
            &[("depth_multiplier", Attr::Int(i64::MAX))],
            &[(&[1, 1, 1, 2], &x), (&[1, 1, 1, 2], &f)],
            &[1, 1, 1, 2],
        )
        .unwrap_err();
        assert!(error.to_string().contains("does not fit"), "{error}");
        // No input channels: `ic / fi` was a division by zero.
        let error = run_f32(
            "tflite.CONV_2D",
            &[],
            &[(&[1, 1, 1, 0], &[]), (&[1, 1, 1, 1], &[0.0])],
            &[1, 1, 1, 1],
        )
        .unwrap_err();
        assert!(error.to_string().contains("does not fit"), "{error}");
    }

    #[test]
    fn issue_36_offsets_and_zero_points_far_from_int8_never_panic() {
        // LiteRT's offsets are minus an 8-bit zero point; these are int32's ends (each of these
        // ran `i8 + offset` or `i8 - zero_point` with overflow checks).
        let (s, x) = ([1usize, 1, 1, 1], [1i8]);
        let one = [1i32];
        let mult = [1 << 30];
        let (zero, s1) = ([0i32], [1usize]);
        for offset in [i64::from(i32::MAX), i64::from(i32::MIN)] {
            let conv = run_i8(
                "tflite.CONV_2D",
                &[("input_offset", Attr::Int(offset))],
                &[
                    int8(&s, &x),
                    int8(&s, &x),
                    Input::Absent,
                    int32(&s1, &mult),
                    int32(&s1, &zero),
                ],
                &s,
            );
            assert!(conv.is_ok(), "{conv:?}");
            for name in ["input_offset", "filter_offset"] {
                let fc = run_i8(
                    "tflite.FULLY_CONNECTED",
                    &[(name, Attr::Int(offset))],
                    &[
                        int8(&s1, &x),
                        int8(&[1, 1], &x),
                        Input::Absent,
                        int32(&s1, &mult),
                        int32(&s1, &zero),
                    ],
                    &[1, 1],
                );
                assert!(fc.is_ok(), "{fc:?}");
                let matmul = run_i8(
                    "tflite.BATCH_MATMUL",
                    &[
                        (name, Attr::Int(offset)),
                        ("multiplier", Attr::Int(1 << 30)),
                    ],
                    &[int8(&[1, 1], &x), int8(&[1, 1], &x)],
                    &[1, 1],
                );
                assert!(matmul.is_ok(), "{matmul:?}");
            }
            for op in ["tflite.ADD", "tflite.SUB", "tflite.MUL"] {
                let binary = run_i8(
                    op,
                    &[
                        ("input1_offset", Attr::Int(offset)),
                        ("input2_offset", Attr::Int(offset)),
                    ],
                    &[int8(&s1, &x), int8(&s1, &x)],
                    &s1,
                );
                assert!(binary.is_ok(), "{op}: {binary:?}");
            }
            for op in ["tflite.RELU", "tflite.MEAN", "tflite.QUANTIZE"] {
                let unary = run_i8(
                    op,
                    &[
                        ("input_zero_point", Attr::Int(offset)),
                        ("multiplier", Attr::Int(1 << 30)),
                    ],
                    &[int8(&s1, &x)],
                    &s1,
                );
                assert!(unary.is_ok(), "{op}: {unary:?}");
            }
            let mut out = [0.0f32];
            let mut outputs = [Output {
                shape: &s1,
                data: DataMut::F32(&mut out),
            }];
            let attrs = [("zero_point", Attr::Int(offset))];
            run(
                "tflite.DEQUANTIZE",
                &Attrs::new(&attrs),
                &[int8(&s1, &x)],
                &mut outputs,
            )
            .unwrap()
            .unwrap();
            assert_eq!(out[0], (1.0 - offset as f64) as f32);
        }
        let _ = one;
    }

    #[test]
    fn issue_36_an_int8_average_past_int32_is_exact() {
        // 4113 x 4113 taps of 127: a sum of 2,148,429,663, past int32 (it panicked with
        // overflow; LiteRT's int32 sum would wrap). The mean is 127.
        let side = 4113usize;
        let x = vec![127i8; side * side];
        let shape = [1, side, side, 1];
        let side = i64::try_from(side).unwrap();
        let out = run_i8(
            "tflite.AVERAGE_POOL_2D",
            &[("filter_h", Attr::Int(side)), ("filter_w", Attr::Int(side))],
            &[int8(&shape, &x)],
            &[1, 1, 1, 1],
        );
        assert_eq!(out.unwrap(), [127]);
    }

    #[test]
    fn issue_36_strided_slice_spans_past_int64_are_an_error_not_a_panic() {
        let x = [1.0f32, 2.0, 3.0];
        let slice = |begin: i64, stride: i64, len: i64, out: usize| {
            run_f32(
                "tflite.STRIDED_SLICE",
                &[
                    ("begin", Attr::Ints(&[begin])),
                    ("strides", Attr::Ints(&[stride])),
                    ("out_shape", Attr::Ints(&[len])),
                ],
                &[(&[3], &x)],
                &[out],
            )
        };
        assert_eq!(slice(2, -1, 3, 3).unwrap(), [3.0, 2.0, 1.0]);
        // 2 + i64::MAX: past int64 (it panicked with overflow).
        let error = slice(2, i64::MAX, 2, 2).unwrap_err();
        assert!(
            error.to_string().contains("leaves axis 0 of size 3"),
            "{error}"
        );
        let error = slice(0, i64::MIN, 3, 3).unwrap_err();
        assert!(
            error.to_string().contains("leaves axis 0 of size 3"),
            "{error}"
        );
    }
}
