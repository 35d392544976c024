//! A network as tables, the form `memplan-build` generates beside the straight-line `run`: every
//! value with its dtype and static shape, every node with its operator, attributes, operands and
//! scratch, and the constants as views of bytes that live in the binary (`.rodata`, so flash on a
//! microcontroller) and are read in place.
//!
//! The generated `run` does not read these tables (it is straight-line code on the arena's
//! views); an interpreter does: the runner's `--heap` run, which gives every value a buffer of
//! its own and so checks the planned arena against a plan-free execution of the same kernels.

use core::fmt;

use bytemuck::Pod;

use crate::{Attrs, DType, KernelError};

/// One value of the network computed at run time: a graph input, an activation or an output.
#[derive(Debug, Clone, Copy)]
pub struct Value {
    /// Its name in the generated code (a Rust identifier, snake_case of the ONNX name).
    pub name: &'static str,
    /// Its ONNX name.
    pub onnx: &'static str,
    /// Its element type.
    pub dtype: DType,
    /// Its static ONNX shape (`[]` for a scalar).
    pub shape: &'static [usize],
}

impl Value {
    /// Number of elements.
    pub fn elements(&self) -> usize {
        self.shape.iter().product()
    }
}

/// A constant: `bytes` little-endian bytes at `offset` of the network's weight blob.
#[derive(Debug, Clone, Copy)]
pub struct Constant {
    /// Its ONNX name.
    pub onnx: &'static str,
    /// Its element type.
    pub dtype: DType,
    /// Its static ONNX shape.
    pub shape: &'static [usize],
    /// Where its bytes start in the blob (a multiple of 16).
    pub offset: usize,
    /// How many bytes.
    pub bytes: usize,
}

/// One operand of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operand {
    /// An absent optional input.
    Absent,
    /// A value: an index into the network's values.
    Value(usize),
    /// A constant: an index into the network's constants.
    Constant(usize),
}

/// One node, in execution order.
#[derive(Debug, Clone, Copy)]
pub struct Node {
    /// The ONNX node's name (or `<op_type>_<k>` when it has none).
    pub name: &'static str,
    /// Its `op_type`.
    pub op_type: &'static str,
    /// Its attributes.
    pub attrs: Attrs<'static>,
    /// Its inputs, in ONNX order.
    pub inputs: &'static [Operand],
    /// Its outputs (indices into the values).
    pub outputs: &'static [usize],
    /// The scratch words it needs ([`crate::scratch_len`]).
    pub scratch: usize,
}

/// A kernel that failed while running a network, with the node it ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunError {
    /// The node's index in execution order.
    pub step: usize,
    /// The node's name.
    pub node: &'static str,
    /// What the kernel reported.
    pub error: KernelError,
}

impl RunError {
    /// Kernel `error` at node `step` named `node`.
    pub fn new(step: usize, node: &'static str, error: KernelError) -> Self {
        Self { step, node, error }
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "node {} `{}` failed: {}",
            self.step, self.node, self.error
        )
    }
}

impl core::error::Error for RunError {}

/// The `len` elements of type `T` at byte `offset` of `blob`: a constant read in place.
///
/// Generated code aligns the blob to 16 bytes and every constant's offset to 16, so the view is
/// always in range and aligned; should it not be, this is an error, never a panic or a copy.
///
/// # Errors
/// A range outside the blob, or bytes not aligned for `T`.
pub fn constant<T: Pod>(
    blob: &'static [u8],
    offset: usize,
    len: usize,
) -> Result<&'static [T], KernelError> {
    let bytes = len
        .checked_mul(core::mem::size_of::<T>())
        .and_then(|n| n.checked_add(offset))
        .and_then(|end| blob.get(offset..end))
        .ok_or_else(|| crate::error::error!("constant at byte {offset} is outside the weights"))?;
    bytemuck::try_cast_slice(bytes)
        .map_err(|_| crate::error::error!("constant at byte {offset} is not aligned for its type"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(C, align(16))]
    struct Aligned<T>(T);

    static BLOB: Aligned<[u8; 24]> = Aligned([
        0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0,
    ]);

    #[test]
    fn constants_are_read_in_place() {
        let floats = constant::<f32>(&BLOB.0, 0, 2).unwrap();
        assert_eq!(floats, &[1.0, 2.0]);
        assert!(core::ptr::eq(floats.as_ptr().cast::<u8>(), BLOB.0.as_ptr()));
        assert_eq!(constant::<i64>(&BLOB.0, 16, 1).unwrap(), &[7]);
    }

    #[test]
    fn a_bad_range_or_alignment_is_an_error() {
        assert!(constant::<f32>(&BLOB.0, 16, 3).is_err());
        assert!(constant::<f32>(&BLOB.0, 2, 1).is_err());
        assert!(constant::<f32>(&BLOB.0, usize::MAX, 2).is_err());
    }
}
