//! Cast between float32, int64, int32 and bool (the `to` attribute holds an ONNX
//! `TensorProto.DataType` code: 1 float, 6 int32, 7 int64, 9 bool).
//!
//! Float to integer truncates toward zero (saturating at the integer's range, NaN giving 0);
//! anything to bool is `x != 0`; bool to anything is 0 or 1; int64 to int32 wraps. A cast changes
//! the element type, so it never runs in place.

use crate::attrs::Attrs;
use crate::error::{KernelError, bail};
use crate::tensor::{DType, Data, DataMut, Input, Output, expect_shape, value};

/// The dtype of an ONNX `TensorProto.DataType` code, if supported.
pub(crate) fn dtype_of_code(code: i64) -> Option<DType> {
    match code {
        1 => Some(DType::F32),
        6 => Some(DType::I32),
        7 => Some(DType::I64),
        9 => Some(DType::Bool),
        3 => Some(DType::I8),
        _ => None,
    }
}

/// Writes `src` converted into `dst`.
macro_rules! convert {
    ($src:expr, $dst:expr, $f:expr) => {
        for (d, &s) in $dst.iter_mut().zip($src.iter()) {
            *d = $f(s);
        }
    };
}

/// Cast.
// the cast semantics
pub(crate) fn cast(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let to = attrs.int("to", 0)?;
    let Some(dtype) = dtype_of_code(to) else {
        bail!("cast to data type {to} is not supported (1, 6, 7 and 9 are)");
    };
    let (in_shape, data) = value(inputs, 0)?;
    let Some(out) = outputs.first_mut() else {
        bail!("output 0 is required");
    };
    if out.data.dtype() != dtype {
        bail!(
            "output 0 is {}, `to` says {}",
            out.data.dtype().name(),
            dtype.name()
        );
    }
    expect_shape(0, out.shape, in_shape)?;
    match (data, &mut out.data) {
        (Data::F32(s), DataMut::F32(d)) => d.copy_from_slice(s),
        (Data::F32(s), DataMut::I64(d)) => convert!(s, d, |x: f32| x as i64),
        (Data::F32(s), DataMut::I32(d)) => convert!(s, d, |x: f32| x as i32),
        (Data::F32(s), DataMut::Bool(d)) => convert!(s, d, |x: f32| u8::from(x != 0.0)),
        (Data::I64(s), DataMut::F32(d)) => convert!(s, d, |x: i64| x as f32),
        (Data::I64(s), DataMut::I64(d)) => d.copy_from_slice(s),
        (Data::I64(s), DataMut::I32(d)) => convert!(s, d, |x: i64| x as i32),
        (Data::I64(s), DataMut::Bool(d)) => convert!(s, d, |x: i64| u8::from(x != 0)),
        (Data::I32(s), DataMut::F32(d)) => convert!(s, d, |x: i32| x as f32),
        (Data::I32(s), DataMut::I64(d)) => convert!(s, d, i64::from),
        (Data::I32(s), DataMut::I32(d)) => d.copy_from_slice(s),
        (Data::I32(s), DataMut::Bool(d)) => convert!(s, d, |x: i32| u8::from(x != 0)),
        (Data::Bool(s), DataMut::F32(d)) => convert!(s, d, |x: u8| f32::from(u8::from(x != 0))),
        (Data::Bool(s), DataMut::I64(d)) => convert!(s, d, |x: u8| i64::from(x != 0)),
        (Data::Bool(s), DataMut::I32(d)) => convert!(s, d, |x: u8| i32::from(x != 0)),
        (Data::Bool(s), DataMut::Bool(d)) => convert!(s, d, |x: u8| u8::from(x != 0)),
        (Data::Bool(s), DataMut::I8(d)) => convert!(s, d, |x: u8| i8::from(x != 0)),
        // Float to int8 saturates (and NaN is 0), as Rust's `as` does.
        (Data::F32(s), DataMut::I8(d)) => convert!(s, d, |x: f32| x as i8),
        (Data::I64(s), DataMut::I8(d)) => convert!(s, d, |x: i64| x as i8),
        (Data::I32(s), DataMut::I8(d)) => convert!(s, d, |x: i32| x as i8),
        (Data::I8(s), DataMut::F32(d)) => convert!(s, d, f32::from),
        (Data::I8(s), DataMut::I64(d)) => convert!(s, d, i64::from),
        (Data::I8(s), DataMut::I32(d)) => convert!(s, d, i32::from),
        (Data::I8(s), DataMut::Bool(d)) => convert!(s, d, |x: i8| u8::from(x != 0)),
        (Data::I8(s), DataMut::I8(d)) => d.copy_from_slice(s),
        (s, d) => bail!(
            "cast from {} to {} is not supported",
            s.dtype().name(),
            d.dtype().name()
        ),
    }
    Ok(())
}
