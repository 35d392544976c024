//! ONNX's `QuantizeLinear` and `DequantizeLinear` on int8, per tensor or per axis, as ONNX
//! Runtime's CPU kernels compute them: a QDQ network (float operators between quantize and
//! dequantize pairs, as ONNX Runtime's quantizer and tf2onnx write them) then runs in float32
//! with its activations rounded at each `QuantizeLinear`, as ONNX Runtime runs it without graph
//! optimisations.
//!
//! - `DequantizeLinear`: `(float)(x - zero_point) * scale`, in float32.
//! - `QuantizeLinear`: `x / scale` in float32, clamped to `[-128 - zero_point, 127 - zero_point]`,
//!   rounded half to even (ONNX's rule, `cvtps2dq` in ONNX Runtime's MLAS), plus the zero point;
//!   NaN becomes -128.
//!
//! uint8 tensors are not supported (the kernels hold int8).

use crate::attrs::Attrs;
use crate::error::{KernelError, bail};
use crate::tensor::{Data, Input, Output, axis, numel, opt_value, output, typed, value};

/// The per-element scale and zero point: `(scales, zero points, inner, channels)`, element `i`
/// using index `(i / inner) % channels`.
struct Params<'a> {
    scale: &'a [f32],
    zero_point: Option<&'a [i8]>,
    inner: usize,
}

impl Params<'_> {
    #[inline]
    fn at(&self, i: usize) -> (f32, i32) {
        let c = if self.scale.len() == 1 {
            0
        } else {
            (i / self.inner) % self.scale.len()
        };
        let zp = self
            .zero_point
            .map_or(0, |z| i32::from(z[c.min(z.len() - 1)]));
        (self.scale[c], zp)
    }
}

fn params<'a>(
    attrs: &Attrs<'_>,
    inputs: &[Input<'a>],
    shape: &[usize],
) -> Result<Params<'a>, KernelError> {
    let (_, scale) = typed::<f32>(inputs, 1)?;
    let zero_point = match opt_value(inputs, 2)? {
        None => None,
        Some((_, Data::I8(z))) => Some(z),
        Some((_, d)) => bail!(
            "zero point of type {} is not supported (int8 is)",
            d.dtype().name()
        ),
    };
    if scale.is_empty() || zero_point.is_some_and(|z| z.len() != scale.len()) {
        bail!("the scale and the zero point must have as many values");
    }
    let mut inner = 1;
    if scale.len() > 1 {
        let a = axis(attrs.int("axis", 1)?, shape.len())?;
        if shape[a] != scale.len() {
            bail!("{} scales for axis {a} of size {}", scale.len(), shape[a]);
        }
        inner = numel(&shape[a + 1..])?;
    }
    Ok(Params {
        scale,
        zero_point,
        inner,
    })
}

/// `DequantizeLinear` of int8.
pub(crate) fn dequantize(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (shape, x) = value(inputs, 0)?;
    let Data::I8(x) = x else {
        bail!(
            "input of type {} is not supported (int8 is)",
            x.dtype().name()
        );
    };
    let p = params(attrs, inputs, shape)?;
    let (_, out) = output::<f32>(outputs, 0)?;
    if out.len() != x.len() {
        bail!("the output does not have the input's size");
    }
    for (i, (o, &v)) in out.iter_mut().zip(x).enumerate() {
        let (scale, zp) = p.at(i);
        #[allow(clippy::cast_precision_loss)] // an int8 difference is exact in f32
        let d = (i32::from(v) - zp) as f32;
        *o = d * scale;
    }
    Ok(())
}

/// `QuantizeLinear` to int8.
pub(crate) fn quantize(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (shape, x) = typed::<f32>(inputs, 0)?;
    let p = params(attrs, inputs, shape)?;
    let (_, out) = output::<i8>(outputs, 0)?;
    if out.len() != x.len() {
        bail!("the output does not have the input's size");
    }
    for (i, (o, &v)) in out.iter_mut().zip(x).enumerate() {
        let (scale, zp) = p.at(i);
        #[allow(clippy::cast_precision_loss)] // int8 bounds
        let (lo, hi) = ((-128 - zp) as f32, (127 - zp) as f32);
        let q = v / scale;
        let q = if q.is_nan() { lo } else { q.clamp(lo, hi) };
        #[allow(clippy::cast_possible_truncation)] // clamped to the int8 range
        let r = libm::rintf(q) as i32 + zp;
        *o = r.clamp(-128, 127) as i8;
    }
    Ok(())
}
