//! ScatterND and ScatterElements: a copy of the data with some elements replaced by (or
//! combined with, per `reduction`: add, mul, max, min) updates, in index order.
//!
//! ScatterND: each row `indices[..., :]` addresses a slice of the data (its first `k`
//! coordinates), which takes the matching slice of the updates. ScatterElements: update `i` goes
//! to the data element at `i` with its `axis` coordinate replaced by `indices[i]`. Both may run
//! in place on the data: the output already holds it, only the addressed elements change.

use crate::attrs::Attrs;
use crate::error::{KernelError, bail, error};
use crate::gather::indices;
use crate::tensor::{
    DType, Dims, Elem, Input, Operand, Output, axis, collect, dims_filled, expect_shape, operand,
    out_dtype, output, strides, typed,
};

/// How an update combines with the element it lands on.
#[derive(Clone, Copy)]
enum Reduction {
    None,
    Add,
    Mul,
    Max,
    Min,
}

fn reduction(attrs: &Attrs) -> Result<Reduction, KernelError> {
    Ok(match attrs.str("reduction", "none")? {
        "none" => Reduction::None,
        "add" => Reduction::Add,
        "mul" => Reduction::Mul,
        "max" => Reduction::Max,
        "min" => Reduction::Min,
        other => bail!("reduction {other:?} is not supported"),
    })
}

/// Applies one update (f32 arithmetic; integer tensors support `none`, `max` and `min`).
trait Combine: Elem {
    fn combine(self, update: Self, r: Reduction) -> Option<Self>;
}

impl Combine for f32 {
    fn combine(self, u: f32, r: Reduction) -> Option<f32> {
        Some(match r {
            Reduction::None => u,
            Reduction::Add => self + u,
            Reduction::Mul => self * u,
            Reduction::Max => self.max(u),
            Reduction::Min => self.min(u),
        })
    }
}

macro_rules! combine_int {
    ($t:ty) => {
        impl Combine for $t {
            fn combine(self, u: $t, r: Reduction) -> Option<$t> {
                match r {
                    Reduction::None => Some(u),
                    Reduction::Add => Some(self.wrapping_add(u)),
                    Reduction::Mul => Some(self.wrapping_mul(u)),
                    Reduction::Max => Some(if u > self { u } else { self }),
                    Reduction::Min => Some(if u < self { u } else { self }),
                }
            }
        }
    };
}
combine_int!(i64);
combine_int!(i8);
combine_int!(i32);
combine_int!(u8);

/// The output holding the data (copied unless in place).
fn data_in_output<'o, T: Elem>(
    inputs: &[Input<'_>],
    outputs: &'o mut [Output<'_>],
) -> Result<(&'o [usize], &'o mut [T]), KernelError> {
    let (xs, src) = operand::<T>(inputs, 0, 0)?;
    let (ys, y) = output::<T>(outputs, 0)?;
    expect_shape(0, ys, xs)?;
    if let Operand::Slice(s) = src {
        y.copy_from_slice(s);
    }
    Ok((ys, y))
}

/// Resolves a possibly negative index against `dim`.
fn resolve(i: i64, dim: usize) -> Result<usize, KernelError> {
    let d = i64::try_from(dim).unwrap_or(i64::MAX);
    let j = if i < 0 { i + d } else { i };
    usize::try_from(j)
        .ok()
        .filter(|&j| j < dim)
        .ok_or_else(|| error!("index {i} is out of range for dimension {dim}"))
}

/// ScatterND.
pub(crate) fn scatter_nd(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    fn typed_scatter<T: Combine>(
        attrs: &Attrs,
        inputs: &[Input<'_>],
        outputs: &mut [Output<'_>],
    ) -> Result<(), KernelError> {
        let r = reduction(attrs)?;
        let (is, indices) = indices(inputs, 1)?;
        let (us, u) = typed::<T>(inputs, 2)?;
        let (ys, y) = data_in_output::<T>(inputs, outputs)?;
        let Some((&k, batch)) = is.split_last() else {
            bail!("indices must have rank >= 1");
        };
        if k == 0 || k > ys.len() {
            bail!(
                "index rows of length {k} do not fit data of rank {}",
                ys.len()
            );
        }
        let want_updates: Dims = collect(batch.iter().chain(&ys[k..]).copied())?;
        if us != &want_updates[..] {
            bail!("updates {us:?} must have shape {want_updates:?}");
        }
        let yst = strides(ys)?;
        let slice: usize = ys[k..].iter().product();
        let rows = indices.len() / k;
        for (row, upd) in (0..rows).zip(u.chunks_exact(slice.max(1))) {
            let mut base = 0;
            for d in 0..k {
                base += resolve(indices.get(row * k + d), ys[d])? * yst[d];
            }
            for (t, &v) in y[base..base + slice].iter_mut().zip(upd) {
                *t = t.combine(v, r).ok_or_else(|| error!("bad update"))?;
            }
        }
        Ok(())
    }
    match out_dtype(outputs, 0)? {
        DType::F32 => typed_scatter::<f32>(attrs, inputs, outputs),
        DType::I64 => typed_scatter::<i64>(attrs, inputs, outputs),
        DType::I32 => typed_scatter::<i32>(attrs, inputs, outputs),
        DType::Bool | DType::U8 => typed_scatter::<u8>(attrs, inputs, outputs),
        DType::I8 => typed_scatter::<i8>(attrs, inputs, outputs),
    }
}

/// ScatterElements.
pub(crate) fn scatter_elements(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    fn typed_scatter<T: Combine>(
        attrs: &Attrs,
        inputs: &[Input<'_>],
        outputs: &mut [Output<'_>],
    ) -> Result<(), KernelError> {
        let r = reduction(attrs)?;
        let (is, indices) = indices(inputs, 1)?;
        let (us, u) = typed::<T>(inputs, 2)?;
        let (ys, y) = data_in_output::<T>(inputs, outputs)?;
        let ax = axis(attrs.int("axis", 0)?, ys.len())?;
        if us != is
            || is.len() != ys.len()
            || is
                .iter()
                .zip(ys)
                .enumerate()
                .any(|(d, (i, n))| d != ax && i > n)
        {
            bail!("indices {is:?} and updates {us:?} do not fit data {ys:?}");
        }
        let yst = strides(ys)?;
        let rank = is.len();
        let mut index = dims_filled(0, rank)?;
        for (raw, &v) in indices.iter().zip(u) {
            let j = resolve(raw, ys[ax])?;
            let off: usize = (0..rank)
                .map(|d| if d == ax { j } else { index[d] } * yst[d])
                .sum();
            y[off] = y[off].combine(v, r).ok_or_else(|| error!("bad update"))?;
            for d in (0..rank).rev() {
                index[d] += 1;
                if index[d] < is[d] {
                    break;
                }
                index[d] = 0;
            }
        }
        Ok(())
    }
    match out_dtype(outputs, 0)? {
        DType::F32 => typed_scatter::<f32>(attrs, inputs, outputs),
        DType::I64 => typed_scatter::<i64>(attrs, inputs, outputs),
        DType::I32 => typed_scatter::<i32>(attrs, inputs, outputs),
        DType::Bool | DType::U8 => typed_scatter::<u8>(attrs, inputs, outputs),
        DType::I8 => typed_scatter::<i8>(attrs, inputs, outputs),
    }
}
