//! Concat and Split along one axis: blocks of `size along axis x inner` elements copied in
//! order, for each index of the dimensions before the axis.

use crate::attrs::Attrs;
use crate::error::{KernelError, bail};
use crate::tensor::{
    Dims, Elem, Input, Output, axis, collect, dispatch, expect_shape, opt_ints, out_dtype, output,
    typed,
};

/// Concat.
pub(crate) fn concat(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    fn typed_concat<T: Elem>(
        attrs: &Attrs,
        inputs: &[Input<'_>],
        outputs: &mut [Output<'_>],
    ) -> Result<(), KernelError> {
        if inputs.is_empty() {
            bail!("at least one input is required");
        }
        // Every input is checked before the output (then read again, without a list of them).
        for i in 0..inputs.len() {
            typed::<T>(inputs, i)?;
        }
        let (ys, y) = output::<T>(outputs, 0)?;
        let ax = axis(attrs.int("axis", 0)?, ys.len())?;
        let mut total = 0;
        for i in 0..inputs.len() {
            let (s, _) = typed::<T>(inputs, i)?;
            if s.len() != ys.len()
                || s.iter()
                    .zip(ys.iter())
                    .enumerate()
                    .any(|(d, (a, b))| d != ax && a != b)
            {
                bail!("input {i} of shape {s:?} does not fit output {ys:?} along axis {ax}");
            }
            total += s[ax];
        }
        let mut want: Dims = collect(ys.iter().copied())?;
        want[ax] = total;
        expect_shape(0, ys, &want)?;
        let inner: usize = ys[ax + 1..].iter().product();
        let outer: usize = ys[..ax].iter().product();
        let mut pos = 0;
        for o in 0..outer {
            for i in 0..inputs.len() {
                let (s, x) = typed::<T>(inputs, i)?;
                let block = s[ax] * inner;
                y[pos..pos + block].copy_from_slice(&x[o * block..][..block]);
                pos += block;
            }
        }
        Ok(())
    }
    dispatch!(out_dtype(outputs, 0)?, typed_concat(attrs, inputs, outputs))
}

/// Split: the outputs' sizes along the axis, checked against the `split` input (opset 13+) or
/// attribute (before 13), or equal parts (`num_outputs`, opset 18, or the number of outputs).
pub(crate) fn split(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    fn typed_split<T: Elem>(
        attrs: &Attrs,
        inputs: &[Input<'_>],
        outputs: &mut [Output<'_>],
    ) -> Result<(), KernelError> {
        let (xs, x) = typed::<T>(inputs, 0)?;
        let ax = axis(attrs.int("axis", 0)?, xs.len())?;
        let n = outputs.len();
        if n == 0 {
            bail!("at least one output is required");
        }
        let split_input = opt_ints(inputs, 1)?;
        let explicit: Option<&[i64]> = match &split_input {
            Some(s) => Some(&s[..]),
            None => attrs.ints("split")?,
        };
        if explicit.is_none()
            && let Some(k) = attrs.opt_int("num_outputs")?
            && usize::try_from(k) != Ok(n)
        {
            bail!("num_outputs {k} but {n} outputs");
        }
        // Equal parts, the last one smaller if the size does not divide.
        let part = xs[ax].div_ceil(n);
        let size = |k: usize| match explicit {
            Some(s) => usize::try_from(s[k]).unwrap_or(usize::MAX),
            None => part.min(xs[ax].saturating_sub(k * part)),
        };
        let count = explicit.map_or(n, <[i64]>::len);
        if count != n || (0..n).try_fold(0usize, |a, k| a.checked_add(size(k))) != Some(xs[ax]) {
            match explicit {
                Some(s) => bail!(
                    "split sizes {s:?} do not divide dimension {ax} of {xs:?} into {n} outputs"
                ),
                None => {
                    bail!("equal parts do not divide dimension {ax} of {xs:?} into {n} outputs")
                }
            }
        }
        let inner: usize = xs[ax + 1..].iter().product();
        let outer: usize = xs[..ax].iter().product();
        let mut start = 0;
        for k in 0..n {
            let size = size(k);
            let mut want: Dims = collect(xs.iter().copied())?;
            want[ax] = size;
            let (ys, y) = output::<T>(outputs, k)?;
            expect_shape(k, ys, &want)?;
            let block = size * inner;
            for o in 0..outer {
                y[o * block..][..block]
                    .copy_from_slice(&x[(o * xs[ax] + start) * inner..][..block]);
            }
            start += size;
        }
        Ok(())
    }
    dispatch!(out_dtype(outputs, 0)?, typed_split(attrs, inputs, outputs))
}
