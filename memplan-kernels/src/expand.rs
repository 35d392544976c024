//! Expand: the input broadcast to `broadcast(input shape, shape input)`.
//!
//! In place is possible only when nothing is broadcast (same number of elements): then the
//! output already holds the input and there is nothing to do.

use crate::broadcast::{broadcast_shapes, broadcast_strides, for_each};
use crate::error::{KernelError, bail, error};
use crate::tensor::{
    Dims, Elem, Input, Operand, Output, dispatch, expect_shape, operand, opt_ints, out_dtype,
    output, try_collect,
};

/// Expand.
pub(crate) fn expand(inputs: &[Input<'_>], outputs: &mut [Output<'_>]) -> Result<(), KernelError> {
    fn typed_expand<T: Elem>(
        inputs: &[Input<'_>],
        outputs: &mut [Output<'_>],
    ) -> Result<(), KernelError> {
        let (xs, src) = operand::<T>(inputs, 0, 0)?;
        let Some(shape) = opt_ints(inputs, 1)? else {
            bail!("input 1 (shape) is required");
        };
        let shape: Dims =
            try_collect(shape.iter().map(|&d| {
                usize::try_from(d).map_err(|_| error!("negative dimension in {shape:?}"))
            }))?;
        let (ys, y) = output::<T>(outputs, 0)?;
        expect_shape(0, ys, &broadcast_shapes(&[xs, &shape])?)?;
        match src {
            // Same number of elements (checked for every in-place input): nothing broadcast.
            Operand::Out => {}
            Operand::Slice(x) => {
                let s = broadcast_strides(xs, ys)?;
                for_each(ys, &[s], |i, o| y[i] = x[o[0]])?;
            }
        }
        Ok(())
    }
    dispatch!(out_dtype(outputs, 0)?, typed_expand(inputs, outputs))
}
