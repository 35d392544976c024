//! Operators that make a tensor from shapes and scalars: Shape, Size, ConstantOfShape and Range.

use crate::attrs::{Attr, Attrs};
use crate::error::{KernelError, bail, error};
use crate::reshape::input_shape;
use crate::tensor::{
    DType, Data, DataMut, Dims, Input, Output, expect_shape, numel, opt_ints, output, try_collect,
    value,
};

/// Shape: the input's dimensions as int64, optionally sliced by `start` / `end` (opset 15).
pub(crate) fn shape(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let s = input_shape(inputs, 0)?;
    let r = i64::try_from(s.len()).unwrap_or(i64::MAX);
    let fix = |v: i64| usize::try_from((if v < 0 { v + r } else { v }).clamp(0, r)).unwrap_or(0);
    let start = fix(attrs.int("start", 0)?);
    let end = fix(attrs.int("end", r)?);
    let dims = &s[start..end.max(start)];
    let (ys, y) = output::<i64>(outputs, 0)?;
    expect_shape(0, ys, &[dims.len()])?;
    for (v, &d) in y.iter_mut().zip(dims) {
        *v = i64::try_from(d).unwrap_or(i64::MAX);
    }
    Ok(())
}

/// ConstantOfShape: the output filled with the `value` attribute (default 0), which the caller
/// passes as a `Float` or `Int`.
pub(crate) fn constant_of_shape(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let Some(dims) = opt_ints(inputs, 0)? else {
        bail!("input 0 (shape) is required");
    };
    let want: Dims = try_collect(
        dims.iter()
            .map(|&d| usize::try_from(d).map_err(|_| error!("negative dimension in {dims:?}"))),
    )?;
    let Some(out) = outputs.first_mut() else {
        bail!("output 0 is required");
    };
    expect_shape(0, out.shape, &want)?;
    // the fill value's cast
    match (attrs.get("value"), &mut out.data) {
        (None, d) => match d {
            DataMut::F32(d) => d.fill(0.0),
            DataMut::I64(d) => d.fill(0),
            DataMut::I32(d) => d.fill(0),
            DataMut::Bool(d) => d.fill(0),
            DataMut::I8(d) => d.fill(0),
            DataMut::U8(d) => d.fill(0),
        },
        (Some(Attr::Float(v)), DataMut::F32(d)) => d.fill(*v),
        (Some(Attr::Int(v)), DataMut::I64(d)) => d.fill(*v),
        (Some(Attr::Int(v)), DataMut::I32(d)) => d.fill(*v as i32),
        (Some(Attr::Int(v)), DataMut::Bool(d)) => d.fill(u8::from(*v != 0)),
        (Some(Attr::Int(v)), DataMut::F32(d)) => d.fill(*v as f32),
        (Some(a), d) => bail!("value {a:?} does not fit a {} output", d.dtype().name()),
    }
    Ok(())
}

/// Range: `start, start + delta, ...` below `limit` (above for a negative delta).
pub(crate) fn range(inputs: &[Input<'_>], outputs: &mut [Output<'_>]) -> Result<(), KernelError> {
    fn scalar<'a>(inputs: &[Input<'a>], i: usize) -> Result<Data<'a>, KernelError> {
        let (s, d) = value(inputs, i)?;
        if d.len() != 1 {
            bail!("input {i} must be a scalar, found shape {s:?}");
        }
        Ok(d)
    }
    let scalars = [scalar(inputs, 0)?, scalar(inputs, 1)?, scalar(inputs, 2)?];
    let dtype = outputs.first().map(|o| o.data.dtype());
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    match (scalars[0], scalars[1], scalars[2], dtype) {
        (Data::F32(s), Data::F32(l), Data::F32(d), Some(DType::F32)) => {
            let (s, l, d) = (s[0], l[0], d[0]);
            if d == 0.0 {
                bail!("delta is 0");
            }
            let n = libm::ceilf((l - s) / d).max(0.0) as usize;
            let (ys, y) = output::<f32>(outputs, 0)?;
            expect_shape(0, ys, &[n])?;
            for (i, v) in y.iter_mut().enumerate() {
                *v = s + i as f32 * d;
            }
        }
        (Data::I64(s), Data::I64(l), Data::I64(d), Some(DType::I64)) => {
            let (start, delta) = (i128::from(s[0]), i128::from(d[0]));
            let n = int_range_len(start, i128::from(l[0]), delta)?;
            let (ys, y) = output::<i64>(outputs, 0)?;
            expect_shape(0, ys, &[n])?;
            for (i, v) in (0i128..).zip(y.iter_mut()) {
                let r = start + i * delta;
                *v = i64::try_from(r).map_err(|_| error!("range value {r} overflows"))?;
            }
        }
        (Data::I32(s), Data::I32(l), Data::I32(d), Some(DType::I32)) => {
            let (start, delta) = (i128::from(s[0]), i128::from(d[0]));
            let n = int_range_len(start, i128::from(l[0]), delta)?;
            let (ys, y) = output::<i32>(outputs, 0)?;
            expect_shape(0, ys, &[n])?;
            for (i, v) in (0i128..).zip(y.iter_mut()) {
                let r = start + i * delta;
                *v = i32::try_from(r).map_err(|_| error!("range value {r} overflows"))?;
            }
        }
        _ => bail!("start, limit, delta and the output must all be float32, int64 or int32"),
    }
    Ok(())
}

/// The number of elements of the integer range `start, start + delta, ...` short of `limit`, at
/// most 2^24.
fn int_range_len(start: i128, limit: i128, delta: i128) -> Result<usize, KernelError> {
    if delta == 0 {
        bail!("delta is 0");
    }
    let n = if delta > 0 {
        (limit - start).max(0).div_euclid(delta) + i128::from((limit - start).max(0) % delta != 0)
    } else {
        (start - limit).max(0).div_euclid(-delta)
            + i128::from((start - limit).max(0) % (-delta) != 0)
    };
    if n > 1 << 24 {
        bail!("the range has {n} elements, too many");
    }
    usize::try_from(n).map_err(|_| error!("the range has {n} elements, too many"))
}

/// Size: the input's number of elements, an int64 scalar.
pub(crate) fn size(inputs: &[Input<'_>], outputs: &mut [Output<'_>]) -> Result<(), KernelError> {
    let n = numel(input_shape(inputs, 0)?)?;
    let (ys, y) = output::<i64>(outputs, 0)?;
    expect_shape(0, ys, &[])?;
    y[0] = i64::try_from(n).unwrap_or(i64::MAX);
    Ok(())
}
