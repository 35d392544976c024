//! Transpose: output dimension `i` is input dimension `perm[i]` (default: reversed).

use super::attrs::Attrs;
use super::broadcast::for_each;
use super::error::{KernelError, bail};
use super::tensor::{
    Dims, Elem, Input, MAX_RANK, Output, collect, dispatch, expect_shape, out_dtype, output, push,
    strides, typed,
};

/// Transpose.
pub(crate) fn transpose(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    fn typed_transpose<T: Elem>(
        attrs: &Attrs<'_>,
        inputs: &[Input<'_>],
        outputs: &mut [Output<'_>],
    ) -> Result<(), KernelError> {
        let (xs, x) = typed::<T>(inputs, 0)?;
        let rank = xs.len();
        let perm: Dims = match attrs.ints("perm")? {
            None => collect((0..rank).rev())?,
            Some(p) => {
                let mut seen = [false; MAX_RANK];
                let mut perm = Dims::new();
                for &a in p {
                    match usize::try_from(a)
                        .ok()
                        .filter(|&a| a < rank && a < MAX_RANK)
                    {
                        Some(a) if !seen[a] => {
                            seen[a] = true;
                            push(&mut perm, a)?;
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
        let want: Dims = collect(perm.iter().map(|&p| xs[p]))?;
        expect_shape(0, ys, &want)?;
        let xst = strides(xs)?;
        let s: Dims = collect(perm.iter().map(|&p| xst[p]))?;
        for_each(ys, &[s], |i, o| y[i] = x[o[0]])
    }
    dispatch!(
        out_dtype(outputs, 0)?,
        typed_transpose(attrs, inputs, outputs)
    )
}
