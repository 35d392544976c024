//! Transpose: output dimension `i` is input dimension `perm[i]` (default: reversed).

use super::attrs::Attrs;
use super::broadcast::for_each;
use super::error::{KernelError, bail};
use super::tensor::{
    Elem, Input, Output, dispatch, expect_shape, out_dtype, output, strides, typed,
};

/// Transpose.
pub(crate) fn transpose(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    fn typed_transpose<T: Elem>(
        attrs: &Attrs,
        inputs: &[Input<'_>],
        outputs: &mut [Output<'_>],
    ) -> Result<(), KernelError> {
        let (xs, x) = typed::<T>(inputs, 0)?;
        let rank = xs.len();
        let perm: Vec<usize> = match attrs.ints("perm")? {
            None => (0..rank).rev().collect(),
            Some(p) => {
                let mut seen = vec![false; rank];
                let mut perm = Vec::with_capacity(rank);
                for &a in p {
                    match usize::try_from(a).ok().filter(|&a| a < rank) {
                        Some(a) if !seen[a] => {
                            seen[a] = true;
                            perm.push(a);
                        }
                        _ => bail!("perm {p:?} is not a permutation of 0..{rank}"),
                    }
                }
                if perm.len() != rank {
                    bail!("perm {p:?} is not a permutation of 0..{rank}");
                }
                perm
            }
        };
        let (ys, y) = output::<T>(outputs, 0)?;
        let want: Vec<usize> = perm.iter().map(|&p| xs[p]).collect();
        expect_shape(0, ys, &want)?;
        let xst = strides(xs);
        let s: Vec<usize> = perm.iter().map(|&p| xst[p]).collect();
        for_each(ys, &[s], |i, o| y[i] = x[o[0]]);
        Ok(())
    }
    dispatch!(
        out_dtype(outputs, 0)?,
        typed_transpose(attrs, inputs, outputs)
    )
}
