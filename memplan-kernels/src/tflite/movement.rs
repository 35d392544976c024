//! The reference operators that move elements without arithmetic: RESHAPE (SQUEEZE,
//! EXPAND_DIMS), PAD and STRIDED_SLICE.

use super::*;

/// RESHAPE (SQUEEZE, EXPAND_DIMS): the elements as they are, any dtype.
pub(super) fn reshape(inputs: &[Input<'_>], outputs: &mut [Output<'_>]) -> Result<(), KernelError> {
    let dtype = out_dtype(outputs, 0)?;
    crate::tensor::dispatch!(dtype, copy(inputs, outputs))
}

pub(super) fn copy<T: crate::tensor::Elem>(
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    crate::tensor::copy_input::<T>(inputs, 0, outputs, 0)
}

/// PAD with a constant (`value`: 0 for float32, the zero point for int8), `pads` before and
/// after per axis, as `[b0, a0, b1, a1, ..]`.
pub(super) fn pad(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (xs, x) = value(inputs, 0)?;
    let pads = attrs.ints("pads")?.unwrap_or(&[]);
    if pads.len() != 2 * xs.len() {
        bail!(
            "`pads` has {} values, expected {}",
            pads.len(),
            2 * xs.len()
        );
    }
    let os: Dims = collect(
        outputs
            .first()
            .map(|o| o.shape)
            .unwrap_or(&[])
            .iter()
            .copied(),
    )?;
    let mut before = Dims::new();
    for (d, &n) in xs.iter().enumerate() {
        let (b, a) = (pads[2 * d], pads[2 * d + 1]);
        let (Ok(b), Ok(a)) = (usize::try_from(b), usize::try_from(a)) else {
            bail!("negative pads are not supported");
        };
        let Some(padded) = n.checked_add(b).and_then(|m| m.checked_add(a)) else {
            bail!("axis {d}: {n} + {b} + {a} is past the largest size");
        };
        if os.get(d) != Some(&padded) {
            bail!("output {os:?} does not fit input {xs:?} padded by {pads:?}");
        }
        crate::tensor::push(&mut before, b)?;
    }
    let in_strides = crate::tensor::strides(xs)?;
    // Each output element reads the input element at (index - before) when inside.
    let each = |out_index: &[usize]| -> Option<usize> {
        let mut at = 0;
        for d in 0..xs.len() {
            let p = out_index[d].checked_sub(before[d]).filter(|&p| p < xs[d])?;
            at += p * in_strides[d];
        }
        Some(at)
    };
    match (x, out_dtype(outputs, 0)?) {
        (Data::F32(x), DType::F32) => {
            let v = attrs.float("value", 0.0)?;
            let (_, out) = output::<f32>(outputs, 0)?;
            walk(&os, |i, idx| out[i] = each(idx).map_or(v, |a| x[a]))
        }
        (Data::I8(x), DType::I8) => {
            let v = to_i8(int(attrs, "value")?, -128, 127);
            let (_, out) = output::<i8>(outputs, 0)?;
            walk(&os, |i, idx| out[i] = each(idx).map_or(v, |a| x[a]))
        }
        (x, o) => bail!("input {} and output {} differ", x.dtype().name(), o.name()),
    }
}

/// Calls `f(i, index)` for every element of `shape` in row-major order.
pub(super) fn walk(shape: &[usize], mut f: impl FnMut(usize, &[usize])) -> Result<(), KernelError> {
    let total = numel(shape)?;
    let mut index: Dims = collect(shape.iter().map(|_| 0))?;
    for i in 0..total {
        f(i, &index);
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Ok(())
}

/// STRIDED_SLICE with the build's resolved `begin`, `strides` and per-axis `out_shape` (before
/// shrinking): output element `(i_0, ..)` is input element `(begin_d + i_d strides_d, ..)`.
pub(super) fn strided_slice(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    fn typed_slice<T: crate::tensor::Elem>(
        attrs: &Attrs<'_>,
        inputs: &[Input<'_>],
        outputs: &mut [Output<'_>],
    ) -> Result<(), KernelError> {
        let (xs, x) = typed::<T>(inputs, 0)?;
        let begin = attrs.ints("begin")?.unwrap_or(&[]);
        let strides = attrs.ints("strides")?.unwrap_or(&[]);
        let shape = attrs.ints("out_shape")?.unwrap_or(&[]);
        let r = xs.len();
        if begin.len() != r || strides.len() != r || shape.len() != r {
            bail!("begin, strides and out_shape must have {r} values");
        }
        let shape: Dims =
            crate::tensor::try_collect(shape.iter().map(|&d| {
                usize::try_from(d).map_err(|_| crate::error::error!("negative size {d}"))
            }))?;
        let in_strides = crate::tensor::strides(xs)?;
        let (_, y) = output::<T>(outputs, 0)?;
        if numel(&shape)? != y.len() {
            bail!(
                "the output has {} elements, the slice {}",
                y.len(),
                numel(&shape)?
            );
        }
        // Every position must be inside the input.
        for d in 0..r {
            if shape[d] == 0 {
                continue;
            }
            let n = xs[d] as i64;
            let last = i64::try_from(shape[d] - 1)
                .ok()
                .and_then(|steps| strides[d].checked_mul(steps))
                .and_then(|span| begin[d].checked_add(span));
            if !(0..n).contains(&begin[d]) || !last.is_some_and(|last| (0..n).contains(&last)) {
                bail!("the slice leaves axis {d} of size {n}");
            }
        }
        let mut err = Ok(());
        walk(&shape, |i, idx| {
            let mut at = 0i64;
            for d in 0..r {
                at += (begin[d] + strides[d] * idx[d] as i64) * in_strides[d] as i64;
            }
            match usize::try_from(at).ok().and_then(|a| x.get(a)) {
                Some(&v) => y[i] = v,
                None => err = Err(crate::error::error!("index {at} outside the input")),
            }
        })?;
        err
    }
    crate::tensor::dispatch!(out_dtype(outputs, 0)?, typed_slice(attrs, inputs, outputs))
}
