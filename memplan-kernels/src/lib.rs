//! # memplan-kernels: ONNX operators on borrowed slices, with no heap
//!
//! The operator kernels behind networks planned by memplan: one ONNX node at a time, f32 (and
//! int64/int32/bool where ONNX models use them for shapes and indices).
//!
//! The crate is `#![no_std]` and allocates nothing: by default it does not even link the `alloc`
//! crate. (The optional feature `alloc` adds `OwnedData`, owned tensor elements for callers on a
//! host that keep values in heap buffers of their own; no kernel uses it.)
//! Every value a kernel reads or writes is a slice the caller hands in; shapes, strides and
//! index counters are fixed-size arrays on the stack (rank at most [`MAX_RANK`]); and a
//! temporary as large as a tensor (TopK's sort order, Resize's interpolation taps) is *scratch*
//! memory the caller provides, sized at build time by [`scratch_len`] and planned by memplan
//! into the arena like any tensor. Float math comes from `libm`, so a network computes the same
//! bits on the host and on a microcontroller. The only `unsafe` code is the CPU check and the
//! calls of the AVX2 and AVX-512 builds of the heavy kernels (in [`simd`], and the matrix
//! product's tiles), which compute the same bits as the portable build.
//!
//! ## Stack
//!
//! No kernel keeps more than a few [`Dims`] (72 bytes each on a 64-bit target, 36 on a 32-bit
//! one) and [`Ints`] (264 bytes) in its frame, plus an error of [`MESSAGE_CAPACITY`] bytes in
//! flight. Measured on a Cortex-M4F (`examples/cortex-m`, the free stack painted and scanned):
//! the whole firmware, reset handler, reporting and the deepest kernel call included, peaks at
//! 6,040 bytes running the MLPerf Tiny keyword spotter and 6,072 bytes running the runner's small
//! CNN, so 8 KiB of stack is enough for these networks.
//!
//! ## Running a node
//!
//! [`run`] executes one node given its `op_type`, its attributes and views of its inputs and
//! outputs. The caller owns all memory: a weight is a borrowed slice, an activation a slice of
//! the arena (or of its own heap buffer), an output a pre-sized mutable slice. The kernels follow
//! ONNX opset 17 semantics with numpy broadcasting, accumulate in f32 in a fixed order (same
//! input, same bits), and never panic on a bad shape, dtype or attribute: they return a
//! [`KernelError`] instead of a wrong answer.
//!
//! ## In place
//!
//! When the planner lets an output overwrite one of the node's inputs, that input is passed as
//! [`Input::InPlace`]: its values are in the output buffer on entry. Elementwise operators,
//! normalizations, Softmax and the reshape-like ones support it, reading each element before
//! writing it, with the same arithmetic as the separate-buffer path, so both give bit-identical
//! results. Operators that cannot run in place (Conv, MatMul, Transpose, ...) return an error.
//!
//! [`supported`] lists the operator types and checks a node's attributes at build time, without
//! depending on the rest of this module.
//!
//! ## Semantics worth knowing
//!
//! - Operators whose inputs moved to attributes or back across opsets accept both forms: Clip
//!   (min/max), Squeeze/Unsqueeze/ReduceX (axes), Split (split), Slice (starts/ends/axes), Pad
//!   (pads, value). Softmax and LogSoftmax follow opset 13+ (one axis, default -1); a node from an
//!   older opset computes the same only when its axis is the last one.
//! - The output shapes are the caller's (from ONNX shape inference); every kernel recomputes them
//!   and refuses a mismatch. One known disagreement between ONNX shape inference and ONNX
//!   Runtime, a `ceil_mode` pool whose last window would start past the input, is refused.
//! - Tensor-valued attributes (`ConstantOfShape.value`) are passed as the one-element
//!   [`Attr::Float`] or [`Attr::Int`] they hold. `Constant` nodes are the caller's to fold.
//! - MaxPool's optional Indices output is not supported (pass only output 0).
//! - Integer division or remainder by zero is an error; float arithmetic follows IEEE 754.
//! - Quantized networks: QuantizeLinear/DequantizeLinear and the QOperator ops (QLinearConv,
//!   QLinearMatMul, ConvInteger, MatMulInteger, DynamicQuantizeLinear, and of `com.microsoft`
//!   QLinearAdd, QLinearMul, QGemm, QLinearGlobalAveragePool) take int8 and uint8 and compute
//!   what ONNX Runtime's MLAS computes (exact int32 sums, float32 requantisation rounded half to
//!   even); the `tflite.*` kernels compute what LiteRT's reference kernels compute.
//!
//! ### Special values
//!
//! NaN, infinities, signed zeros, huge (3e38) and subnormal (1e-40) values go through every
//! float operator that computes (the ones that only move elements, Gather, Pad, Transpose, ...,
//! copy their bits) in the recorded ONNX Runtime cases (the `special_*` cases of
//! `tests/kernel_cases`), compared bit-aware: NaN only for NaN, an infinity only for the same
//! infinity, a zero only for the zero of the same sign. What the kernels do:
//!
//! - NaN propagates through arithmetic, math functions and activations (`Relu(NaN)` is NaN).
//!   Comparisons with a NaN are false, `Equal` included; `Cast` to bool makes NaN true. The sign
//!   and payload of a NaN are not specified (they differ between x86 and Arm).
//! - `Max` and `Min` (elementwise) give NaN when any operand is NaN, and of -0 and +0 the first
//!   operand.
//! - `Relu`, `LeakyRelu`, `Elu`, `Clip` keep -0 (`Relu` is `max(x, 0)` keeping its first
//!   operand, as C++'s `std::max` in ONNX Runtime does); `Sign(-0)` and `Celu(-0)` are +0; `Acosh`
//!   is NaN below 1 (libm's `acoshf` is not, for x <= -2).
//! - `Clip` without a bound clips to the lowest or highest finite float32, as the spec says:
//!   `Clip(inf)` is 3.4028235e38. A NaN input stays NaN; a NaN bound clips nothing.
//! - `MaxPool` and `GlobalMaxPool` start from the lowest finite float32 and take each greater tap:
//!   a NaN tap is ignored, a window of only -inf (or NaN) gives -3.4028235e38, and of -0 and +0
//!   the first is kept, as ONNX Runtime's pooling code does.
//! - `ReduceMax`, `ReduceMin`, Hardmax's maximum and `ArgMax`/`ArgMin` start from the first
//!   element and take each later one that is greater (less): a NaN first element is the result
//!   (`ArgMax` gives its index; `Hardmax` gives all 0, as nothing equals NaN), a later NaN is
//!   ignored, and of equal values the first is kept (the last with `select_last_index`).
//! - `TopK` ranks NaN above every number (first for the largest, last for the smallest); equal
//!   values, -0 and +0 included, come in index order.
//! - Sums (`Sum`, `ReduceSum`, `ReduceMean`, `ReduceL1`, ..., inclusive `CumSum`) start from -0,
//!   the identity of IEEE addition, so a sum of -0s is -0 as in ONNX Runtime (which starts from
//!   the first element); `AveragePool` and `GlobalAveragePool` start from +0 (an average of -0s
//!   is +0, as ONNX Runtime's mostly is), an exclusive `CumSum` from the +0 it writes first.
//!   `Einsum` starts from -0 with one operand and from +0 with several, as ONNX Runtime's
//!   (ReduceSum, or MatMul) do.
//! - `ReduceLogSumExp` subtracts the maximum (0 if it is infinite) before `exp`, as ONNX Runtime
//!   does, so large inputs do not overflow. `LpNormalization` of a zero vector is zeros (not
//!   0 / 0). `BatchNormalization` computes `x * k + (bias - mean * k)` with
//!   `k = scale / sqrt(var + epsilon)`, ONNX Runtime's formula, so the same NaN and zeros come out.
//! - Subnormals are kept, never flushed. libm's `exp`, `tanh`, `erf`, ... can give a subnormal
//!   where ONNX Runtime's approximations round to 0 (`Sigmoid(-100)`); the cases accept that.
//!
//! Where matching ONNX Runtime exactly is impossible, the recorded cases leave the values out
//! and the kernels keep the rule above:
//!
//! - Its vectorised code keeps or drops a NaN, and picks -0 or +0 of a tie, by the SIMD lane the
//!   value falls in, which depends on the row's length and the buffer's alignment: Eigen's
//!   `maxCoeff` in `ReduceMax`/`ReduceMin` along a contiguous axis and in `Hardmax` (a NaN in
//!   one row of a `[7, 7]` input is kept, in another the same NaN is ignored), MLAS in 2-d and
//!   3-d `MaxPool` and in `GlobalMaxPool` (which also returns -inf for some windows of -inf,
//!   -3.4028235e38 for others). Such a result is not a function of the values; the kernels follow
//!   ONNX Runtime's scalar code, which is. Its dilated `MaxPool` keeps a NaN or -inf that comes
//!   first in the window.
//! - `Max`/`Min` of -0 and +0 returns either operand depending on the broadcast; `AveragePool`
//!   with padding gives -0 for some windows of -0s.
//! - `LRN`: ONNX Runtime slides one running sum of squares along the channels, so a NaN or an
//!   infinity in one channel makes every later channel NaN; here each output sums its own window,
//!   as the spec defines it.
//! - `Resize` (linear): ONNX Runtime multiplies every tap by its weight, weight 0 included, so a
//!   NaN or infinity beside a sample point spreads to it (0 * inf is NaN); here a tap of weight 0
//!   is not read.
//! - `LayerNormalization` whose sums or squares overflow float32 (|x| near 1e38): ONNX Runtime
//!   accumulates partly in double and gives 0 or NaN; here float32 gives NaN. Neither is the
//!   exact result.
//! - `Cast` of NaN, an infinity or an out-of-range float to int64/int32: ONNX Runtime on x86
//!   gives the integer minimum (the `cvttss2si` result), here it saturates and NaN is 0 (Rust's
//!   `as`), the same on every target.

#![no_std]
// `unsafe` only in `simd` (calls of `#[target_feature]` builds after the CPU was asked), in
// `gemm` (its tiles' `#[target_feature]` functions, called with a level's token), in
// `tflite::s8::dsp` (the Cortex-M DSP instructions) including the depthwise window's
// unaligned reads at offsets its tap list bounds; each says why it holds.
#![deny(unsafe_code)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(test)]
extern crate std;

mod activation;
mod attrs;
mod binary;
mod broadcast;
mod cast;
mod concat_split;
mod conv;
mod conv_transpose;
mod cumsum;
mod einsum;
mod error;
mod expand;
mod fast_math;
mod gather;
mod gemm;
mod generate;
pub mod geometry;
mod matmul;
mod normalization;
pub mod op;
#[cfg(feature = "alloc")]
mod owned;
pub mod pack;
mod pad;
mod pool;
pub mod program;
mod qdq;
mod qlinear;
mod recurrent;
mod reduce;
mod reshape;
mod resize;
mod scatter;
pub mod simd;
mod slice;
mod space_depth;
mod spatial;
pub mod supported;
mod tensor;
#[cfg(test)]
mod test_values;
pub mod tflite;
mod tile;
mod topk;
mod transpose;
mod trilu;
mod unary;

pub use attrs::{Attr, Attrs};
pub use conv::{ConvBand, conv_band, conv_band_scratch_len, conv_band_window, conv_runs_in_place};
pub use error::{KernelError, MESSAGE_CAPACITY};
#[cfg(feature = "alloc")]
pub use owned::{ByteLengthError, OwnedData};
pub use tensor::{DType, Data, DataMut, Dims, Input, Ints, MAX_INTS, MAX_RANK, Output};

/// Runs one ONNX node.
///
/// `op_type` is the ONNX op_type; `inputs` are in ONNX order (`Input::Absent` for a left-out
/// optional input); `outputs` are pre-sized with their static shapes (from ONNX shape
/// inference). Every slice must hold as many elements as its shape. `scratch` is the node's
/// temporary memory, at least [`scratch_len`] words (any contents; empty for most operators).
/// On error the outputs may be partly written.
///
/// # Errors
/// An unknown operator, an attribute value the kernels do not implement, or inputs and outputs
/// whose shapes or types do not fit the operator.
pub fn run(
    op_type: &str,
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    dispatch(op_type, attrs, inputs, outputs, scratch).map_err(|e| e.context(op_type))
}

/// The scratch words (`u64`s, so 8-byte aligned) a node needs beside its inputs and outputs,
/// from its attributes and its static shapes (`None` for an absent input); 0 for most operators.
/// A build step declares that much scratch on the op, and the planner places it in the arena.
/// The count does not depend on the target (scratch holds `u32` and `f32` values, never `usize`).
///
/// # Errors
/// Shapes whose scratch does not fit in memory.
pub fn scratch_len(
    op_type: &str,
    attrs: &Attrs<'_>,
    input_shapes: &[Option<&[usize]>],
    output_shapes: &[&[usize]],
) -> Result<usize, KernelError> {
    match op_type {
        "TopK" => topk::scratch_len(attrs, input_shapes, output_shapes),
        "Conv" => conv::scratch_len(attrs, input_shapes, output_shapes),
        "ConvTranspose" => conv_transpose::scratch_len(attrs, input_shapes, output_shapes),
        "Einsum" => Ok(einsum::scratch_len(input_shapes)),
        "Gemm" => matmul::gemm_scratch_len(attrs, input_shapes),
        "MatMul" => matmul::matmul_scratch_len(attrs, input_shapes),
        "Resize" | "Upsample" => resize::scratch_len(attrs, input_shapes, output_shapes),
        "LSTM" | "GRU" | "RNN" => recurrent::Cell::of(op_type).map_or(Ok(0), |cell| {
            recurrent::scratch_len(cell, attrs, input_shapes)
        }),
        _ => Ok(0),
    }
    .map_err(|e| e.context(op_type))
}

fn dispatch(
    op: &str,
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    tensor::check_views(inputs, outputs)?;
    if let Some(r) = tflite::run(op, attrs, inputs, outputs) {
        return r;
    }
    op::kernel(op, attrs, inputs, outputs, scratch)
}
