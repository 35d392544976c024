//! Trilu: the upper (`upper = 1`, default) or lower triangle of the last two dimensions,
//! shifted by the optional diagonal offset `k`; the other elements become zero.
//!
//! Element `(i, j)` is kept when `j - i >= k` (upper) or `j - i <= k` (lower). It may run in
//! place: kept elements are left as they are, the others overwritten.

use crate::attrs::Attrs;
use crate::error::{KernelError, bail};
use crate::tensor::{
    Elem, Input, Operand, Output, dispatch, expect_shape, operand, opt_ints, out_dtype, output,
};

/// Trilu.
pub(crate) fn trilu(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    fn typed_trilu<T: Elem>(
        attrs: &Attrs,
        inputs: &[Input<'_>],
        outputs: &mut [Output<'_>],
    ) -> Result<(), KernelError> {
        let upper = attrs.int("upper", 1)? != 0;
        let k = match opt_ints(inputs, 1)? {
            None => 0,
            Some(v) if v.len() == 1 => v[0],
            Some(v) => bail!("k must be a single value, found {v:?}"),
        };
        let (xs, src) = operand::<T>(inputs, 0, 0)?;
        let (ys, y) = output::<T>(outputs, 0)?;
        expect_shape(0, ys, xs)?;
        if ys.len() < 2 {
            bail!("input {xs:?} must have rank >= 2");
        }
        if let Operand::Slice(s) = src {
            y.copy_from_slice(s);
        }
        let (rows, cols) = (ys[ys.len() - 2], ys[ys.len() - 1]);
        if rows * cols == 0 {
            return Ok(());
        }
        for matrix in y.chunks_exact_mut(rows * cols) {
            for (i, row) in matrix.chunks_exact_mut(cols).enumerate() {
                for (j, v) in row.iter_mut().enumerate() {
                    let diff = i128::try_from(j).unwrap_or(0) - i128::try_from(i).unwrap_or(0);
                    let keep = if upper {
                        diff >= i128::from(k)
                    } else {
                        diff <= i128::from(k)
                    };
                    if !keep {
                        *v = T::default();
                    }
                }
            }
        }
        Ok(())
    }
    dispatch!(out_dtype(outputs, 0)?, typed_trilu(attrs, inputs, outputs))
}
