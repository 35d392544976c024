//! Gather and GatherElements.
//!
//! Gather: slices of the data along `axis` picked by an int64/int32 index tensor (negative
//! indices count from the end; out of range is an error).
//!
//! Output shape: `data[..axis] ++ indices ++ data[axis + 1..]`.

use super::attrs::Attrs;
use super::error::{KernelError, bail};
use super::tensor::{
    Elem, Input, Output, axis, dispatch, expect_shape, opt_ints, out_dtype, output, typed,
};

/// Gather.
pub(crate) fn gather(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    fn typed_gather<T: Elem>(
        attrs: &Attrs,
        inputs: &[Input<'_>],
        outputs: &mut [Output<'_>],
    ) -> Result<(), KernelError> {
        let (xs, x) = typed::<T>(inputs, 0)?;
        let (is, _) = super::tensor::value(inputs, 1)?;
        let Some(indices) = opt_ints(inputs, 1)? else {
            bail!("input 1 (indices) is required");
        };
        let ax = axis(attrs.int("axis", 0)?, xs.len())?;
        let mut want = xs[..ax].to_vec();
        want.extend_from_slice(is);
        want.extend_from_slice(&xs[ax + 1..]);
        let (ys, y) = output::<T>(outputs, 0)?;
        expect_shape(0, ys, &want)?;
        let dim = xs[ax];
        let d = i64::try_from(dim).unwrap_or(i64::MAX);
        let rows = indices
            .iter()
            .map(|&i| {
                let j = if i < 0 { i + d } else { i };
                usize::try_from(j).ok().filter(|&j| j < dim).ok_or_else(|| {
                    KernelError::new(format!("index {i} is out of range for dimension {dim}"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let inner: usize = xs[ax + 1..].iter().product();
        let outer: usize = xs[..ax].iter().product();
        let mut pos = 0;
        for o in 0..outer {
            for &r in &rows {
                y[pos..pos + inner].copy_from_slice(&x[(o * dim + r) * inner..][..inner]);
                pos += inner;
            }
        }
        Ok(())
    }
    dispatch!(out_dtype(outputs, 0)?, typed_gather(attrs, inputs, outputs))
}

/// GatherElements: `out[i] = data[i with its `axis` coordinate replaced by indices[i]]`; the
/// output has the indices' shape.
pub(crate) fn gather_elements(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    fn typed_gather_elements<T: Elem>(
        attrs: &Attrs,
        inputs: &[Input<'_>],
        outputs: &mut [Output<'_>],
    ) -> Result<(), KernelError> {
        let (xs, x) = typed::<T>(inputs, 0)?;
        let (is, _) = super::tensor::value(inputs, 1)?;
        let Some(indices) = opt_ints(inputs, 1)? else {
            bail!("input 1 (indices) is required");
        };
        let ax = axis(attrs.int("axis", 0)?, xs.len())?;
        if is.len() != xs.len()
            || is
                .iter()
                .zip(xs)
                .enumerate()
                .any(|(d, (i, x))| d != ax && i > x)
        {
            bail!("indices {is:?} do not fit data {xs:?} along axis {ax}");
        }
        let (ys, y) = output::<T>(outputs, 0)?;
        expect_shape(0, ys, is)?;
        let xst = super::tensor::strides(xs);
        let dim = xs[ax];
        let d = i64::try_from(dim).unwrap_or(i64::MAX);
        let rank = is.len();
        let mut index = vec![0usize; rank];
        for (v, &raw) in y.iter_mut().zip(&indices) {
            let j = if raw < 0 { raw + d } else { raw };
            let Some(j) = usize::try_from(j).ok().filter(|&j| j < dim) else {
                bail!("index {raw} is out of range for dimension {dim}");
            };
            let off: usize = (0..rank)
                .map(|k| {
                    if k == ax {
                        j * xst[k]
                    } else {
                        index[k] * xst[k]
                    }
                })
                .sum();
            *v = x[off];
            for k in (0..rank).rev() {
                index[k] += 1;
                if index[k] < is[k] {
                    break;
                }
                index[k] = 0;
            }
        }
        Ok(())
    }
    dispatch!(
        out_dtype(outputs, 0)?,
        typed_gather_elements(attrs, inputs, outputs)
    )
}
