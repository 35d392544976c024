//! Gather and GatherElements.
//!
//! Gather: slices of the data along `axis` picked by an int64/int32 index tensor (negative
//! indices count from the end; out of range is an error).
//!
//! Output shape: `data[..axis] ++ indices ++ data[axis + 1..]`.

use crate::attrs::Attrs;
use crate::error::{KernelError, bail, error};
use crate::tensor::{
    Data, Dims, Elem, Input, Output, axis, collect, dims_filled, dispatch, expect_shape, out_dtype,
    output, strides, typed, value,
};

/// The elements of an index tensor (int64 or int32), read one at a time: Gather's and Scatter's
/// indices are as large as a tensor, so they are never copied.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Indices<'a> {
    /// int64 indices.
    I64(&'a [i64]),
    /// int32 indices.
    I32(&'a [i32]),
}

impl Indices<'_> {
    /// The number of indices.
    pub(crate) fn len(&self) -> usize {
        match self {
            Indices::I64(d) => d.len(),
            Indices::I32(d) => d.len(),
        }
    }

    /// Index `p` (which must be below [`Indices::len`]).
    pub(crate) fn get(&self, p: usize) -> i64 {
        match self {
            Indices::I64(d) => d[p],
            Indices::I32(d) => i64::from(d[p]),
        }
    }

    /// The indices in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        (0..self.len()).map(|p| self.get(p))
    }
}

/// The index tensor at input `i` (present, not in place, int64 or int32): its shape and values.
pub(crate) fn indices<'a>(
    inputs: &[Input<'a>],
    i: usize,
) -> Result<(&'a [usize], Indices<'a>), KernelError> {
    match value(inputs, i)? {
        (s, Data::I64(d)) => Ok((s, Indices::I64(d))),
        (s, Data::I32(d)) => Ok((s, Indices::I32(d))),
        (_, d) => bail!("input {i} is {}, expected int64", d.dtype().name()),
    }
}

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
        let (is, indices) = self::indices(inputs, 1)?;
        let ax = axis(attrs.int("axis", 0)?, xs.len())?;
        let want: Dims = collect(xs[..ax].iter().chain(is).chain(&xs[ax + 1..]).copied())?;
        let (ys, y) = output::<T>(outputs, 0)?;
        expect_shape(0, ys, &want)?;
        let dim = xs[ax];
        let d = i64::try_from(dim).unwrap_or(i64::MAX);
        let row = |i: i64| {
            let j = if i < 0 { i + d } else { i };
            usize::try_from(j)
                .ok()
                .filter(|&j| j < dim)
                .ok_or_else(|| error!("index {i} is out of range for dimension {dim}"))
        };
        // Every index is checked before anything is written.
        for i in indices.iter() {
            row(i)?;
        }
        let inner: usize = xs[ax + 1..].iter().product();
        let outer: usize = xs[..ax].iter().product();
        let mut pos = 0;
        for o in 0..outer {
            for i in indices.iter() {
                let r = row(i)?;
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
        let (is, indices) = self::indices(inputs, 1)?;
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
        let xst = strides(xs)?;
        let dim = xs[ax];
        let d = i64::try_from(dim).unwrap_or(i64::MAX);
        let rank = is.len();
        let mut index = dims_filled(0, rank)?;
        for (v, raw) in y.iter_mut().zip(indices.iter()) {
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
