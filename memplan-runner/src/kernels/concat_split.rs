//! Concat and Split along one axis: blocks of `size along axis x inner` elements copied in
//! order, for each index of the dimensions before the axis.

use super::attrs::Attrs;
use super::error::{KernelError, bail};
use super::tensor::{
    Elem, Input, Output, axis, dispatch, expect_shape, opt_ints, out_dtype, output, typed,
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
        let parts = (0..inputs.len())
            .map(|i| typed::<T>(inputs, i))
            .collect::<Result<Vec<_>, _>>()?;
        let (ys, y) = output::<T>(outputs, 0)?;
        let ax = axis(attrs.int("axis", 0)?, ys.len())?;
        let mut total = 0;
        for (i, (s, _)) in parts.iter().enumerate() {
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
        let mut want = ys.to_vec();
        want[ax] = total;
        expect_shape(0, ys, &want)?;
        let inner: usize = ys[ax + 1..].iter().product();
        let outer: usize = ys[..ax].iter().product();
        let mut pos = 0;
        for o in 0..outer {
            for (s, x) in &parts {
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
        let sizes: Vec<usize> = match opt_ints(inputs, 1)? {
            Some(s) => s
                .iter()
                .map(|&v| usize::try_from(v).unwrap_or(usize::MAX))
                .collect(),
            None => match attrs.ints("split")? {
                Some(s) => s
                    .iter()
                    .map(|&v| usize::try_from(v).unwrap_or(usize::MAX))
                    .collect(),
                None => {
                    if let Some(k) = attrs.opt_int("num_outputs")? {
                        if usize::try_from(k) != Ok(n) {
                            bail!("num_outputs {k} but {n} outputs");
                        }
                    }
                    // Equal parts, the last one smaller if the size does not divide.
                    let part = xs[ax].div_ceil(n);
                    (0..n)
                        .map(|i| part.min(xs[ax].saturating_sub(i * part)))
                        .collect()
                }
            },
        };
        if sizes.len() != n
            || sizes.iter().try_fold(0usize, |a, &s| a.checked_add(s)) != Some(xs[ax])
        {
            bail!("split sizes {sizes:?} do not divide dimension {ax} of {xs:?} into {n} outputs");
        }
        let inner: usize = xs[ax + 1..].iter().product();
        let outer: usize = xs[..ax].iter().product();
        let mut start = 0;
        for (k, &size) in sizes.iter().enumerate() {
            let mut want = xs.to_vec();
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
