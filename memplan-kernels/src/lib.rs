//! # memplan-kernels: ONNX operators on borrowed slices, with no heap
//!
//! The operator kernels behind networks planned by memplan: one ONNX node at a time, f32 (and
//! int64/int32/bool where ONNX models use them for shapes and indices).
//!
//! The crate is `#![no_std]` and allocates nothing: it does not even link the `alloc` crate.
//! Every value a kernel reads or writes is a slice the caller hands in; shapes, strides and
//! index counters are fixed-size arrays on the stack (rank at most [`MAX_RANK`]); and a
//! temporary as large as a tensor (TopK's sort order, Resize's interpolation taps) is *scratch*
//! memory the caller provides, sized at build time by [`scratch_len`] and planned by memplan
//! into the arena like any tensor. Float math comes from `libm`, so a network computes the same
//! bits on the host and on a microcontroller. The crate forbids `unsafe` code.
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

#![no_std]
#![forbid(unsafe_code)]

#[cfg(test)]
extern crate std;

mod attrs;
mod binary;
mod broadcast;
mod cast;
mod concat_split;
mod conv;
mod conv_transpose;
mod cumsum;
mod einsum;
mod erf;
mod error;
mod expand;
mod gather;
mod generate;
mod matmul;
mod normalization;
mod pad;
mod pool;
pub mod program;
mod reduce;
mod reshape;
mod resize;
mod scatter;
mod slice;
mod space_depth;
mod spatial;
pub mod supported;
mod tensor;
pub mod tflite;
mod tile;
mod topk;
mod transpose;
mod trilu;
mod unary;

pub use attrs::{Attr, Attrs};
pub use error::{KernelError, MESSAGE_CAPACITY};
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
        "Resize" | "Upsample" => resize::scratch_len(attrs, input_shapes, output_shapes),
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
    if let Some(r) = unary::run(op, attrs, inputs, outputs) {
        return r;
    }
    if let Some(r) = binary::run(op, attrs, inputs, outputs) {
        return r;
    }
    if let Some(r) = reshape::run(op, attrs, inputs, outputs) {
        return r;
    }
    if let Some(r) = reduce::run(op, attrs, inputs, outputs) {
        return r;
    }
    match op {
        "AveragePool" => pool::pool(attrs, inputs, outputs, false),
        "BatchNormalization" => normalization::batch_norm(attrs, inputs, outputs),
        "Cast" => cast::cast(attrs, inputs, outputs),
        "Concat" => concat_split::concat(attrs, inputs, outputs),
        "ConstantOfShape" => generate::constant_of_shape(attrs, inputs, outputs),
        "Conv" => conv::conv(attrs, inputs, outputs),
        "ConvTranspose" => conv_transpose::conv_transpose(attrs, inputs, outputs),
        "CumSum" => cumsum::cumsum(attrs, inputs, outputs),
        "DepthToSpace" => space_depth::space_depth(attrs, inputs, outputs, true),
        "Einsum" => einsum::einsum(attrs, inputs, outputs),
        "Expand" => expand::expand(inputs, outputs),
        "Gather" => gather::gather(attrs, inputs, outputs),
        "GatherElements" => gather::gather_elements(attrs, inputs, outputs),
        "Gemm" => matmul::gemm(attrs, inputs, outputs),
        "GlobalAveragePool" => pool::global(inputs, outputs, false),
        "GlobalMaxPool" => pool::global(inputs, outputs, true),
        "Hardmax" => topk::hardmax(attrs, inputs, outputs),
        "InstanceNormalization" => normalization::instance_norm(attrs, inputs, outputs),
        "IsInf" => unary::classify(attrs, inputs, outputs, false),
        "IsNaN" => unary::classify(attrs, inputs, outputs, true),
        "LRN" => normalization::lrn(attrs, inputs, outputs),
        "LayerNormalization" => normalization::layer_norm(attrs, inputs, outputs),
        "LogSoftmax" => normalization::softmax(attrs, inputs, outputs, true),
        "LpNormalization" => normalization::lp_norm(attrs, inputs, outputs),
        "MatMul" => matmul::matmul(inputs, outputs),
        "MaxPool" => pool::pool(attrs, inputs, outputs, true),
        "OneHot" => topk::one_hot(attrs, inputs, outputs),
        "Pad" => pad::pad(attrs, inputs, outputs),
        "Range" => generate::range(inputs, outputs),
        "Resize" => resize::resize(attrs, inputs, outputs, scratch),
        "ScatterElements" => scatter::scatter_elements(attrs, inputs, outputs),
        "ScatterND" => scatter::scatter_nd(attrs, inputs, outputs),
        "Shape" => generate::shape(attrs, inputs, outputs),
        "Size" => generate::size(inputs, outputs),
        "Slice" => slice::slice(attrs, inputs, outputs),
        "Softmax" => normalization::softmax(attrs, inputs, outputs, false),
        "SpaceToDepth" => space_depth::space_depth(attrs, inputs, outputs, false),
        "Split" => concat_split::split(attrs, inputs, outputs),
        "Tile" => tile::tile(inputs, outputs),
        "TopK" => topk::topk(attrs, inputs, outputs, scratch),
        "Transpose" => transpose::transpose(attrs, inputs, outputs),
        "Trilu" => trilu::trilu(attrs, inputs, outputs),
        "Upsample" => resize::upsample(attrs, inputs, outputs, scratch),
        _ => Err(KernelError::new("operator type not supported")),
    }
}
