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

mod activation;
mod band;
pub use band::input_rows as band_input_rows;
mod batch_matmul;
mod binary;
mod conv;
pub mod float;
mod fully_connected;
pub mod hybrid;
mod mean;
mod movement;
pub mod op;
mod overwrite;
mod pool;
pub mod quant;
mod quantize;
pub mod s8;
mod softmax;
mod symmetric;
mod taps;
#[cfg(test)]
mod tests;
mod window;

use activation::{lut_or, relu};
use batch_matmul::batch_matmul;
use binary::{Binary, binary};
use conv::conv;
use fully_connected::fully_connected;
use mean::mean;
use movement::{pad, reshape, strided_slice, walk};
use pool::pool;
use quantize::{dequantize, quantize};
use softmax::softmax;
pub(crate) use symmetric::Symmetric;
use window::Window;

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

/// The `tflite.*` operators whose reference kernel takes its input 0 as [`Input::InPlace`] (the
/// input's values already in the output buffer), so that the planner may give the output the
/// input's memory: the reshape-like ones, which move no byte.
pub const IN_PLACE: &[&str] = &["tflite.RESHAPE"];

/// Whether `op`'s kernel runs with its output over its input 0 ([`IN_PLACE`]).
pub fn runs_in_place(op: &str) -> bool {
    IN_PLACE.contains(&op)
}

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
