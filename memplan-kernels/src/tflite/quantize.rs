//! The reference QUANTIZE and DEQUANTIZE.

use super::*;

/// QUANTIZE: float32 to int8 (`round(x / scale) + zero_point`, the division in float32, as
/// TFLite's reference `AffineQuantize`), or int8 to int8 (requantized with a multiplier).
pub(super) fn quantize(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (xs, x) = value(inputs, 0)?;
    if outputs.first().map_or(0, |o| o.data.len()) != numel(xs)? {
        bail!("the output does not have the input's size");
    }
    let zero_point = int(attrs, "zero_point")?;
    let (_, out) = output::<i8>(outputs, 0)?;
    match x {
        Data::F32(x) => {
            let scale = attrs.float("scale", 1.0)?;
            for (o, &v) in out.iter_mut().zip(x) {
                // saturating, as the clamp after it
                let q = libm::roundf(v / scale) as i32;
                *o = to_i8(q.saturating_add(zero_point), -128, 127);
            }
            Ok(())
        }
        Data::I8(x) => {
            let input_zero_point = int(attrs, "input_zero_point")?;
            let (m, s) = (int(attrs, "multiplier")?, int(attrs, "shift")?);
            for (o, &v) in out.iter_mut().zip(x) {
                let q = mbqm(i32::from(v).wrapping_sub(input_zero_point), m, s);
                *o = to_i8(q.saturating_add(zero_point), -128, 127);
            }
            Ok(())
        }
        x => bail!("QUANTIZE of {} is not supported", x.dtype().name()),
    }
}

/// DEQUANTIZE: int8 to float32, `(float)(scale * (q - zero_point))` with the scale in f64, as
/// TFLite's reference `Dequantize`.
pub(super) fn dequantize(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (xs, x) = typed::<i8>(inputs, 0)?;
    if outputs.first().map_or(0, |o| o.data.len()) != numel(xs)? {
        bail!("the output does not have the input's size");
    }
    let scale = f64::from(attrs.float("scale", 1.0)?);
    let zero_point = int(attrs, "zero_point")?;
    let (_, out) = output::<f32>(outputs, 0)?;
    for (o, &v) in out.iter_mut().zip(x) {
        // f64 to f32, as TFLite's static_cast
        let r = (scale * (f64::from(v) - f64::from(zero_point))) as f32;
        *o = r;
    }
    Ok(())
}
