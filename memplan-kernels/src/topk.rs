//! TopK: the `k` largest (or smallest, `largest = 0`) elements along an axis, sorted, with
//! their int64 indices; among equal values the lower index comes first.
//!
//! Hardmax (opset 13: along one axis, default -1): 1 at the first maximum, 0 elsewhere. The
//! maximum is ONNX Runtime's: the first element, then each later one that is greater; so a NaN
//! first element makes the whole slice 0 (nothing equals NaN), and a later NaN is ignored.
//! OneHot: `values[1]` where the last (or `axis`) coordinate equals the index, `values[0]`
//! elsewhere; negative indices count from `depth`, out-of-range ones match nothing.

use crate::attrs::Attrs;
use crate::error::{KernelError, bail, error};
use crate::tensor::{
    Data, Dims, Elem, Input, Output, axis, collect, dispatch, expect_shape, opt_ints, out_dtype,
    output, typed, value,
};

/// The scratch words TopK needs: the sort order of one slice along the axis, a `u32` index per
/// element, two to a word.
pub(crate) fn scratch_len(
    attrs: &Attrs<'_>,
    input_shapes: &[Option<&[usize]>],
    _output_shapes: &[&[usize]],
) -> Result<usize, KernelError> {
    let Some(Some(xs)) = input_shapes.first() else {
        bail!("input 0 is required");
    };
    let ax = axis(attrs.int("axis", -1)?, xs.len())?;
    let len = xs[ax];
    if u32::try_from(len).is_err() {
        bail!("dimension {len} along the axis is too long to sort");
    }
    Ok(len.div_ceil(2))
}

/// TopK (sorted output only). `scratch` holds the sort order of one slice ([`scratch_len`]).
pub(crate) fn topk(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    if attrs.int("sorted", 1)? == 0 {
        bail!("sorted = 0 is not supported");
    }
    let largest = attrs.int("largest", 1)? != 0;
    let (xs, x) = typed::<f32>(inputs, 0)?;
    let k = match opt_ints(inputs, 1)? {
        Some(v) if v.len() == 1 => usize::try_from(v[0]).map_err(|_| error!("k is negative"))?,
        _ => match attrs.opt_int("k")? {
            Some(v) => usize::try_from(v).map_err(|_| error!("k is negative"))?,
            None => bail!("k must be one integer"),
        },
    };
    let ax = axis(attrs.int("axis", -1)?, xs.len())?;
    let len = xs[ax];
    if k > len {
        bail!("k = {k} exceeds dimension {len}");
    }
    let mut want: Dims = collect(xs.iter().copied())?;
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
    if u32::try_from(len).is_err() {
        bail!("dimension {len} along the axis is too long to sort");
    }
    let words = bytemuck::try_cast_slice_mut::<u64, u32>(scratch)
        .map_err(|e| error!("scratch cannot hold u32 indices: {e:?}"))?;
    let Some(order) = words.get_mut(..len) else {
        bail!(
            "scratch holds {} words, TopK needs {}",
            words.len() / 2,
            len.div_ceil(2)
        );
    };
    for o in 0..outer {
        for i in 0..inner {
            let at = |j: u32| x[(o * len + j as usize) * inner + i];
            for (slot, j) in order.iter_mut().zip(0u32..) {
                *slot = j;
            }
            // Equal values keep increasing indices (the index breaks ties, so this unstable sort
            // gives the order of a stable one). NaN ranks above everything (first among the
            // largest, last among the smallest) and equal to NaN, as in ONNX Runtime.
            order.sort_unstable_by(|&a, &b| {
                let (va, vb) = (at(a), at(b));
                let c = va
                    .partial_cmp(&vb)
                    .unwrap_or_else(|| va.is_nan().cmp(&vb.is_nan()));
                let c = if largest { c.reverse() } else { c };
                c.then(a.cmp(&b))
            });
            for (r, &j) in order[..k].iter().enumerate() {
                let out = (o * k + r) * inner + i;
                vals[out] = at(j);
                idx[out] = i64::from(j);
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
            let max = (1..len).fold(x[at(0)], |m, j| if x[at(j)] > m { x[at(j)] } else { m });
            if let Some(j) = (0..len).find(|&j| x[at(j)] == max) {
                y[at(j)] = 1.0;
            }
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
        if let Data::Bool(_) = idata {
            bail!("bool indices are not supported");
        }
        // float indices are truncated, as ONNX says
        let index = |p: usize| match idata {
            Data::I64(d) => d[p],
            Data::I32(d) => i64::from(d[p]),
            Data::F32(d) => d[p] as i64,
            Data::Bool(d) => i64::from(d[p]),
            Data::I8(d) => i64::from(d[p]),
            Data::U8(d) => i64::from(d[p]),
        };
        let (_, ddata) = value(inputs, 1)?;
        let depth = match ddata {
            Data::I64(d) if d.len() == 1 => d[0],
            Data::I32(d) if d.len() == 1 => i64::from(d[0]),
            Data::F32(d) if d.len() == 1 => d[0] as i64,
            _ => bail!("depth must be one number"),
        };
        let depth_n = usize::try_from(depth)
            .ok()
            .filter(|&d| d > 0 && d <= 1 << 24)
            .ok_or_else(|| error!("depth {depth} is not positive"))?;
        let (vs, values) = typed::<T>(inputs, 2)?;
        if values.len() != 2 {
            bail!("values {vs:?} must hold [off, on]");
        }
        let rank = is.len() + 1;
        let ax = axis(attrs.int("axis", -1)?, rank)?;
        let want: Dims = collect((0..rank).map(|d| match d.cmp(&ax) {
            core::cmp::Ordering::Less => is[d],
            core::cmp::Ordering::Equal => depth_n,
            core::cmp::Ordering::Greater => is[d - 1],
        }))?;
        let (ys, y) = output::<T>(outputs, 0)?;
        expect_shape(0, ys, &want)?;
        let inner: usize = is[ax..].iter().product();
        let outer: usize = is[..ax].iter().product();
        y.fill(values[0]);
        for o in 0..outer {
            for i in 0..inner {
                let raw = index(o * inner + i);
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
