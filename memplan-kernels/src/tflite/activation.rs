//! The reference activations: LOGISTIC and TANH (int8 through the build's table), RELU, RELU6
//! and RELU_N1_TO_1.

use super::*;

/// LOGISTIC and TANH: int8 through the 256-entry table of the build (TFLite's LUT, indexed by
/// the input's byte), float32 through `f`.
pub(super) fn lut_or(
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    f: fn(f32) -> f32,
) -> Result<(), KernelError> {
    let (xs, x) = value(inputs, 0)?;
    if outputs.first().map_or(0, |o| o.data.len()) != numel(xs)? {
        bail!("the output does not have the input's size");
    }
    match (x, out_dtype(outputs, 0)?) {
        (Data::F32(x), DType::F32) => {
            let (_, out) = output::<f32>(outputs, 0)?;
            for (o, &v) in out.iter_mut().zip(x) {
                *o = f(v);
            }
            Ok(())
        }
        (Data::I8(x), DType::I8) => {
            let (_, table) = typed::<i8>(inputs, 1)?;
            if table.len() != 256 {
                bail!("the table has {} values, expected 256", table.len());
            }
            let (_, out) = output::<i8>(outputs, 0)?;
            for (o, &v) in out.iter_mut().zip(x) {
                *o = table[usize::from(v.cast_unsigned())];
            }
            Ok(())
        }
        (x, o) => bail!("input {} and output {} differ", x.dtype().name(), o.name()),
    }
}

/// RELU, RELU6, RELU_N1_TO_1: float32 clamps to `act_min/max`; int8 rescales as LiteRT's
/// `ReluX` does (`zp_out + MultiplyByQuantizedMultiplier(x - zp_in)`, then the clamp).
pub(super) fn relu(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (xs, x) = value(inputs, 0)?;
    match (x, out_dtype(outputs, 0)?) {
        (Data::F32(x), DType::F32) => {
            let (lo, hi) = float_range(attrs)?;
            let (ys, y) = output::<f32>(outputs, 0)?;
            if numel(xs)? != numel(ys)? {
                bail!("input {xs:?} and output {ys:?} differ in size");
            }
            for (o, &v) in y.iter_mut().zip(x) {
                *o = clamp_f(v, lo, hi);
            }
            Ok(())
        }
        (Data::I8(x), DType::I8) => {
            let (lo, hi) = int_range(attrs)?;
            let zp_in = int(attrs, "input_zero_point")?;
            let zp_out = int(attrs, "output_zero_point")?;
            let (m, sh) = (int(attrs, "multiplier")?, int(attrs, "shift")?);
            let (ys, y) = output::<i8>(outputs, 0)?;
            if numel(xs)? != numel(ys)? {
                bail!("input {xs:?} and output {ys:?} differ in size");
            }
            for (o, &v) in y.iter_mut().zip(x) {
                let v = zp_out.saturating_add(mbqm(i32::from(v).wrapping_sub(zp_in), m, sh));
                *o = to_i8(v, lo, hi);
            }
            Ok(())
        }
        (x, o) => bail!("input {} and output {} differ", x.dtype().name(), o.name()),
    }
}
