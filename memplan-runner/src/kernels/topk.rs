//! TopK: the `k` largest (or smallest, `largest = 0`) elements along an axis, sorted, with
//! their int64 indices; among equal values the lower index comes first.
//!
//! Hardmax (opset 13: along one axis, default -1): 1 at the first maximum, 0 elsewhere.
//! OneHot: `values[1]` where the last (or `axis`) coordinate equals the index, `values[0]`
//! elsewhere; negative indices count from `depth`, out-of-range ones match nothing.

use super::attrs::Attrs;
use super::error::{KernelError, bail};
use super::tensor::{
    Data, Elem, Input, Output, axis, dispatch, expect_shape, opt_ints, out_dtype, output, typed,
    value,
};

/// TopK (sorted output only).
pub(crate) fn topk(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    if attrs.int("sorted", 1)? == 0 {
        bail!("sorted = 0 is not supported");
    }
    let largest = attrs.int("largest", 1)? != 0;
    let (xs, x) = typed::<f32>(inputs, 0)?;
    let k = match opt_ints(inputs, 1)? {
        Some(v) if v.len() == 1 => {
            usize::try_from(v[0]).map_err(|_| KernelError::new("k is negative"))?
        }
        _ => match attrs.opt_int("k")? {
            Some(v) => usize::try_from(v).map_err(|_| KernelError::new("k is negative"))?,
            None => bail!("k must be one integer"),
        },
    };
    let ax = axis(attrs.int("axis", -1)?, xs.len())?;
    let len = xs[ax];
    if k > len {
        bail!("k = {k} exceeds dimension {len}");
    }
    let mut want = xs.to_vec();
    want[ax] = k;
    if outputs.len() != 2 {
        bail!("TopK has two outputs (values and indices)");
    }
    let (first, second) = outputs.split_at_mut(1);
    let (vs, vals) = output::<f32>(first, 0)?;
    let (is, idx) = output::<i64>(second, 0)?;
    expect_shape(0, vs, &want)?;
    expect_shape(1, is, &want)?;
    let inner: usize = xs[ax + 1..].iter().product();
    let outer: usize = xs[..ax].iter().product();
    let mut order: Vec<usize> = Vec::with_capacity(len);
    for o in 0..outer {
        for i in 0..inner {
            let at = |j: usize| x[(o * len + j) * inner + i];
            order.clear();
            order.extend(0..len);
            // Stable sort: equal values keep increasing indices. NaN ranks above everything.
            order.sort_by(|&a, &b| {
                let (va, vb) = (at(a), at(b));
                let c = va
                    .partial_cmp(&vb)
                    .unwrap_or_else(|| vb.is_nan().cmp(&va.is_nan()));
                if largest { c.reverse() } else { c }
            });
            for (r, &j) in order[..k].iter().enumerate() {
                let out = (o * k + r) * inner + i;
                vals[out] = at(j);
                idx[out] = i64::try_from(j).unwrap_or(i64::MAX);
            }
        }
    }
    Ok(())
}

/// Hardmax.
pub(crate) fn hardmax(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (xs, x) = typed::<f32>(inputs, 0)?;
    let ax = axis(attrs.int("axis", -1)?, xs.len())?;
    let (ys, y) = output::<f32>(outputs, 0)?;
    expect_shape(0, ys, xs)?;
    let len = xs[ax];
    let inner: usize = xs[ax + 1..].iter().product();
    let outer: usize = xs[..ax].iter().product();
    y.fill(0.0);
    if len == 0 {
        return Ok(());
    }
    for o in 0..outer {
        for i in 0..inner {
            let at = |j: usize| (o * len + j) * inner + i;
            let mut best = 0;
            for j in 1..len {
                if x[at(j)] > x[at(best)] {
                    best = j;
                }
            }
            y[at(best)] = 1.0;
        }
    }
    Ok(())
}

/// OneHot.
pub(crate) fn one_hot(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    fn typed_one_hot<T: Elem>(
        attrs: &Attrs,
        inputs: &[Input<'_>],
        outputs: &mut [Output<'_>],
    ) -> Result<(), KernelError> {
        let (is, idata) = value(inputs, 0)?;
        #[allow(clippy::cast_possible_truncation)] // float indices are truncated, as ONNX says
        let indices: Vec<i64> = match idata {
            Data::I64(d) => d.to_vec(),
            Data::I32(d) => d.iter().map(|&v| i64::from(v)).collect(),
            Data::F32(d) => d.iter().map(|&v| v as i64).collect(),
            Data::Bool(_) => bail!("bool indices are not supported"),
        };
        let (_, ddata) = value(inputs, 1)?;
        #[allow(clippy::cast_possible_truncation)]
        let depth = match ddata {
            Data::I64(d) if d.len() == 1 => d[0],
            Data::I32(d) if d.len() == 1 => i64::from(d[0]),
            Data::F32(d) if d.len() == 1 => d[0] as i64,
            _ => bail!("depth must be one number"),
        };
        let depth_n = usize::try_from(depth)
            .ok()
            .filter(|&d| d > 0 && d <= 1 << 24)
            .ok_or_else(|| KernelError::new(format!("depth {depth} is not positive")))?;
        let (vs, values) = typed::<T>(inputs, 2)?;
        if values.len() != 2 {
            bail!("values {vs:?} must hold [off, on]");
        }
        let rank = is.len() + 1;
        let ax = axis(attrs.int("axis", -1)?, rank)?;
        let mut want = is.to_vec();
        want.insert(ax, depth_n);
        let (ys, y) = output::<T>(outputs, 0)?;
        expect_shape(0, ys, &want)?;
        let inner: usize = is[ax..].iter().product();
        let outer: usize = is[..ax].iter().product();
        y.fill(values[0]);
        for o in 0..outer {
            for i in 0..inner {
                let raw = indices[o * inner + i];
                let j = if raw < 0 { raw + depth } else { raw };
                if let Some(j) = usize::try_from(j).ok().filter(|&j| j < depth_n) {
                    y[(o * depth_n + j) * inner + i] = values[1];
                }
            }
        }
        Ok(())
    }
    dispatch!(
        out_dtype(outputs, 0)?,
        typed_one_hot(attrs, inputs, outputs)
    )
}
