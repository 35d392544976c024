//! ONNX's `QuantizeLinear` and `DequantizeLinear` on int8, per tensor or per axis, as ONNX
//! Runtime's CPU kernels compute them: a QDQ network (float operators between quantize and
//! dequantize pairs, as ONNX Runtime's quantizer and tf2onnx write them) then runs in float32
//! with its activations rounded at each `QuantizeLinear`, as ONNX Runtime runs it without graph
//! optimisations.
//!
//! - `DequantizeLinear`: `(float)(x - zero_point) * scale`, in float32.
//! - `QuantizeLinear`: `x / scale` in float32, clamped to `[-128 - zero_point, 127 - zero_point]`,
//!   rounded half to even (ONNX's rule, `cvtps2dq` in ONNX Runtime's MLAS), plus the zero point;
//!   NaN becomes the type's minimum.
//!
//! Both int8 and uint8 are supported (the clamp range is the output type's: `[0, 255]` for
//! uint8, and NaN becomes 0); the zero point's type must be the quantized tensor's.

use crate::attrs::Attrs;
use crate::error::{KernelError, bail};
use crate::tensor::{Data, DataMut, Input, Output, axis, numel, opt_value, output, typed, value};

/// The per-element scale and zero point: `(scales, zero points, inner, channels)`, element `i`
/// using index `(i / inner) % channels`.
struct Params<'a> {
    scale: &'a [f32],
    zero_point: Option<Data<'a>>,
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
        let zp = match self.zero_point {
            Some(Data::I8(z)) => i32::from(z[c.min(z.len() - 1)]),
            Some(Data::U8(z)) => i32::from(z[c.min(z.len() - 1)]),
            _ => 0,
        };
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
        Some((_, z @ (Data::I8(_) | Data::U8(_)))) => Some(z),
        Some((_, d)) => bail!(
            "zero point of type {} is not supported (int8 and uint8 are)",
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

/// `DequantizeLinear` of int8 or uint8.
pub(crate) fn dequantize(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (shape, x) = value(inputs, 0)?;
    let p = params(attrs, inputs, shape)?;
    if let Some(z) = p.zero_point
        && z.dtype() != x.dtype()
    {
        bail!("the zero point's type differs from the input's");
    }
    let (_, out) = output::<f32>(outputs, 0)?;
    if out.len() != x.len() {
        bail!("the output does not have the input's size");
    }
    let at = |i: usize| match x {
        Data::I8(x) => i32::from(x[i]),
        Data::U8(x) => i32::from(x[i]),
        _ => 0,
    };
    if !matches!(x, Data::I8(_) | Data::U8(_)) {
        bail!(
            "input of type {} is not supported (int8 and uint8 are)",
            x.dtype().name()
        );
    }
    for (i, o) in out.iter_mut().enumerate() {
        let (scale, zp) = p.at(i);
        // an 8-bit difference is exact in f32
        let d = (at(i) - zp) as f32;
        *o = d * scale;
    }
    Ok(())
}

/// `QuantizeLinear` to int8 or uint8 (the output's type).
pub(crate) fn quantize(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (shape, x) = typed::<f32>(inputs, 0)?;
    let p = params(attrs, inputs, shape)?;
    let Some(out) = outputs.first_mut() else {
        bail!("output 0 is required");
    };
    let (min, max) = match &out.data {
        DataMut::I8(_) => (-128, 127),
        DataMut::U8(_) => (0, 255),
        d => bail!(
            "output of type {} is not supported (int8 and uint8 are)",
            d.dtype().name()
        ),
    };
    if let Some(z) = p.zero_point
        && z.dtype() != out.data.dtype()
    {
        bail!("the zero point's type differs from the output's");
    }
    if out.data.len() != x.len() {
        bail!("the output does not have the input's size");
    }
    let q = |i: usize, v: f32| {
        let (scale, zp) = p.at(i);
        // 8-bit bounds
        let (lo, hi) = ((min - zp) as f32, (max - zp) as f32);
        let q = v / scale;
        let q = if q.is_nan() { lo } else { q.clamp(lo, hi) };
        // clamped to the type's range
        let r = libm::rintf(q) as i32 + zp;
        r.clamp(min, max)
    };
    // in range
    match &mut out.data {
        DataMut::I8(o) => {
            for (i, (o, &v)) in o.iter_mut().zip(x).enumerate() {
                *o = q(i, v) as i8;
            }
        }
        DataMut::U8(o) => {
            for (i, (o, &v)) in o.iter_mut().zip(x).enumerate() {
                *o = q(i, v) as u8;
            }
        }
        _ => {}
    }
    Ok(())
}
