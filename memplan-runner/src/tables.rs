//! The network as tables, written by the build script (`network.rs` includes them): tensors,
//! weights and ops in execution order. The arena run is straight-line code and only uses them
//! for the input and output; the heap run interprets them.

use std::fmt;

use memplan_runner::kernels::{DType, KernelError};

/// An activation tensor.
#[derive(Debug)]
pub(crate) struct TensorInfo {
    /// Its ONNX name.
    pub(crate) name: &'static str,
    /// Its element type.
    pub(crate) dtype: DType,
    /// Its static ONNX shape (`[]` for a scalar).
    pub(crate) shape: &'static [usize],
}

impl TensorInfo {
    /// Number of elements.
    pub(crate) fn elements(&self) -> usize {
        self.shape.iter().product()
    }
}

/// A weight: `bytes` little-endian bytes at `offset` in `WEIGHT_BYTES`.
#[derive(Debug)]
pub(crate) struct WeightInfo {
    /// Its ONNX name.
    #[allow(dead_code)] // read in messages and by debuggers
    pub(crate) name: &'static str,
    /// Its element type.
    pub(crate) dtype: DType,
    /// Its static ONNX shape.
    pub(crate) shape: &'static [usize],
    /// Where its bytes start.
    pub(crate) offset: usize,
    /// How many bytes.
    pub(crate) bytes: usize,
}

/// One input of an op.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ref {
    /// An absent optional input.
    #[allow(dead_code)] // only in models with a gap in a node's inputs
    Absent,
    /// An activation (index into `TENSORS`).
    Tensor(usize),
    /// A weight (index into `WEIGHTS`).
    Weight(usize),
}

/// One op.
#[derive(Debug)]
pub(crate) struct Step {
    /// The ONNX node's name.
    pub(crate) name: &'static str,
    /// Its `op_type`.
    pub(crate) op_type: &'static str,
    /// Its inputs in ONNX order.
    pub(crate) inputs: &'static [Ref],
    /// Its outputs (indices into `TENSORS`).
    pub(crate) outputs: &'static [usize],
}

/// A kernel that failed, with the op it ran.
#[derive(Debug)]
pub(crate) struct StepError {
    step: usize,
    error: KernelError,
}

impl StepError {
    /// Kernel `error` at op `step`.
    pub(crate) fn new(step: usize, error: KernelError) -> Self {
        Self { step, error }
    }
}

impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let step = &crate::network::STEPS[self.step];
        write!(
            f,
            "op {} `{}` ({}) failed: {}",
            self.step, step.name, step.op_type, self.error
        )
    }
}

impl std::error::Error for StepError {}
