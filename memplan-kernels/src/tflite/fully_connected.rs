//! The reference FULLY_CONNECTED: float32, int8 (per tensor or per channel), or hybrid.

use super::*;

/// FULLY_CONNECTED: float32, int8 (per-tensor or per-channel), or hybrid.
pub(super) fn fully_connected(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (xs, x) = value(inputs, 0)?;
    let (fs, f) = value(inputs, 1)?;
    let &[units, depth] = fs else {
        bail!("the weights have shape {fs:?}, expected [units, depth]");
    };
    let total = numel(xs)?;
    if depth == 0 || total % depth != 0 {
        bail!("input {xs:?} is not a whole number of rows of {depth}");
    }
    let batches = total / depth;
    let out_len = outputs.first().map_or(0, |o| o.data.len());
    if batches.checked_mul(units) != Some(out_len) {
        bail!("the output has {out_len} elements, expected {batches} x {units}");
    }
    let bias = opt_value(inputs, 2)?;
    match (x, f, out_dtype(outputs, 0)?) {
        (Data::F32(x), Data::F32(f), DType::F32) => {
            let bias = match bias {
                Some((_, Data::F32(b))) if b.len() == units => Some(b),
                None => None,
                Some(_) => bail!("the bias must be float32 [{units}]"),
            };
            let (lo, hi) = float_range(attrs)?;
            let (_, out) = output::<f32>(outputs, 0)?;
            for b in 0..batches {
                let row = &x[b * depth..(b + 1) * depth];
                for u in 0..units {
                    let w = &f[u * depth..(u + 1) * depth];
                    let mut acc = 0.0f32;
                    for d in 0..depth {
                        acc += row[d] * w[d];
                    }
                    out[b * units + u] = clamp_f(acc + bias.map_or(0.0, |b| b[u]), lo, hi);
                }
            }
            Ok(())
        }
        (Data::F32(x), Data::I8(f), DType::F32) => {
            let bias = match bias {
                Some((_, Data::F32(b))) if b.len() == units => Some(b),
                None => None,
                Some(_) => bail!("the bias must be float32 [{units}]"),
            };
            let filter_scale = attrs.float("filter_scale", 1.0)?;
            let (lo, hi) = float_range(attrs)?;
            let (_, out) = output::<f32>(outputs, 0)?;
            for b in 0..batches {
                let row = &x[b * depth..(b + 1) * depth];
                let q = Symmetric::of(row);
                let scale = q.scale * filter_scale;
                for u in 0..units {
                    let w = &f[u * depth..(u + 1) * depth];
                    let mut acc = 0i32;
                    for d in 0..depth {
                        acc = acc.wrapping_add(q.q(row[d]) * i32::from(w[d]));
                    }
                    // as TFLite's int-to-float
                    let v = acc as f32 * scale + bias.map_or(0.0, |b| b[u]);
                    out[b * units + u] = clamp_f(v, lo, hi);
                }
            }
            Ok(())
        }
        (Data::I8(x), Data::I8(f), DType::I8) => {
            let bias = match bias {
                Some((_, Data::I32(b))) if b.len() == units => Some(b),
                None => None,
                Some(_) => bail!("the bias must be int32 [{units}]"),
            };
            let mult = int32s(inputs, 3)?;
            let shift = int32s(inputs, 4)?;
            if !(mult.len() == units || mult.len() == 1) || shift.len() != mult.len() {
                bail!("the multipliers and shifts must have one value, or one per unit");
            }
            let input_offset = int(attrs, "input_offset")?;
            let filter_offset = int(attrs, "filter_offset")?;
            let output_offset = int(attrs, "output_offset")?;
            let (lo, hi) = int_range(attrs)?;
            let (_, out) = output::<i8>(outputs, 0)?;
            for b in 0..batches {
                let row = &x[b * depth..(b + 1) * depth];
                for u in 0..units {
                    let w = &f[u * depth..(u + 1) * depth];
                    let mut acc = 0i32;
                    for d in 0..depth {
                        acc = acc.wrapping_add(
                            (i32::from(w[d]).wrapping_add(filter_offset))
                                .wrapping_mul(i32::from(row[d]).wrapping_add(input_offset)),
                        );
                    }
                    if let Some(bias) = bias {
                        acc = acc.wrapping_add(bias[u]);
                    }
                    // LiteRT's reference FULLY_CONNECTED rounds once (its CONV_2D twice).
                    let v = quant::multiply_by_quantized_multiplier_single(
                        acc,
                        channel(mult, u),
                        channel(shift, u),
                    )
                    .saturating_add(output_offset);
                    out[b * units + u] = to_i8(v, lo, hi);
                }
            }
            Ok(())
        }
        (x, f, o) => bail!(
            "input {}, weights {} and output {} is not a supported combination",
            x.dtype().name(),
            f.dtype().name(),
            o.name()
        ),
    }
}
