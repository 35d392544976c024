//! Tile: the input repeated `repeats[d]` times along each dimension `d`.

use crate::error::{KernelError, bail, error};
use crate::tensor::{
    Dims, Elem, Input, Output, dims_filled, dispatch, expect_shape, opt_ints, out_dtype, output,
    strides, try_collect, typed,
};

/// Tile.
pub(crate) fn tile(inputs: &[Input<'_>], outputs: &mut [Output<'_>]) -> Result<(), KernelError> {
    fn typed_tile<T: Elem>(
        inputs: &[Input<'_>],
        outputs: &mut [Output<'_>],
    ) -> Result<(), KernelError> {
        let (xs, x) = typed::<T>(inputs, 0)?;
        let Some(repeats) = opt_ints(inputs, 1)? else {
            bail!("input 1 (repeats) is required");
        };
        if repeats.len() != xs.len() {
            bail!(
                "{} repeats for an input of rank {}",
                repeats.len(),
                xs.len()
            );
        }
        let want: Dims = try_collect(xs.iter().zip(&repeats).map(|(&d, &r)| {
            usize::try_from(r)
                .ok()
                .and_then(|r| d.checked_mul(r))
                .ok_or_else(|| error!("invalid repeats {repeats:?}"))
        }))?;
        let (ys, y) = output::<T>(outputs, 0)?;
        expect_shape(0, ys, &want)?;
        let xst = strides(xs)?;
        let rank = xs.len();
        let mut index = dims_filled(0, rank)?;
        for v in y.iter_mut() {
            let off: usize = (0..rank).map(|d| (index[d] % xs[d]) * xst[d]).sum();
            *v = x[off];
            for d in (0..rank).rev() {
                index[d] += 1;
                if index[d] < ys[d] {
                    break;
                }
                index[d] = 0;
            }
        }
        Ok(())
    }
    dispatch!(out_dtype(outputs, 0)?, typed_tile(inputs, outputs))
}
