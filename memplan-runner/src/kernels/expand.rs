//! Expand: the input broadcast to `broadcast(input shape, shape input)`.
//!
//! In place is possible only when nothing is broadcast (same number of elements): then the
//! output already holds the input and there is nothing to do.

use super::broadcast::{broadcast_shapes, broadcast_strides, for_each};
use super::error::{KernelError, bail};
use super::tensor::{
    Elem, Input, Operand, Output, dispatch, expect_shape, operand, opt_ints, out_dtype, output,
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
        let shape = shape
            .iter()
            .map(|&d| {
                usize::try_from(d)
                    .map_err(|_| KernelError::new(format!("negative dimension in {shape:?}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let (ys, y) = output::<T>(outputs, 0)?;
        expect_shape(0, ys, &broadcast_shapes(&[xs, &shape])?)?;
        match src {
            // Same number of elements (checked for every in-place input): nothing broadcast.
            Operand::Out => {}
            Operand::Slice(x) => {
                let s = broadcast_strides(xs, ys)?;
                for_each(ys, &[s], |i, o| y[i] = x[o[0]]);
            }
        }
        Ok(())
    }
    dispatch!(out_dtype(outputs, 0)?, typed_expand(inputs, outputs))
}
