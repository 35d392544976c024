//! The reference SOFTMAX over the last axis, float32 or int8.

use super::*;

/// SOFTMAX over the last axis. float32: `exp((x - max) * beta)` normalized. int8: LiteRT's
/// kernel: the exp table `table[255 - d] = exp(-input_scale * beta * d)` (float, from the build)
/// indexed by the distance `d` to the row's maximum, summed in float, scaled by `1 / (sum *
/// output_scale)` and rounded half away from zero onto the output's zero point.
pub(super) fn softmax(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (xs, x) = value(inputs, 0)?;
    let depth = xs.last().copied().unwrap_or(1).max(1);
    let total = numel(xs)?;
    if outputs.first().map_or(0, |o| o.data.len()) != total {
        bail!("the output does not have the input's size");
    }
    match (x, out_dtype(outputs, 0)?) {
        (Data::F32(x), DType::F32) => {
            let beta = attrs.float("beta", 1.0)?;
            let (_, out) = output::<f32>(outputs, 0)?;
            for (row, orow) in x.chunks(depth).zip(out.chunks_mut(depth)) {
                let mut top = f32::NEG_INFINITY;
                for &v in row {
                    if v > top {
                        top = v;
                    }
                }
                let mut sum = 0.0f32;
                for (o, &v) in orow.iter_mut().zip(row) {
                    *o = libm::expf((v - top) * beta);
                    sum += *o;
                }
                for o in orow.iter_mut() {
                    *o /= sum;
                }
            }
            Ok(())
        }
        (Data::I8(x), DType::I8) => {
            let (_, table) = typed::<f32>(inputs, 1)?;
            if table.len() != 256 {
                bail!("the exp table has {} values, expected 256", table.len());
            }
            let zero_point = int(attrs, "output_zero_point")?;
            let scale = attrs.float("output_scale", 1.0 / 256.0)?;
            let (_, out) = output::<i8>(outputs, 0)?;
            for (row, orow) in x.chunks(depth).zip(out.chunks_mut(depth)) {
                let top = row.iter().map(|&v| i32::from(v)).max().unwrap_or(-128);
                // table_offset[v] = table[255 - top + v]: the index is 255 - (top - v) >= 0.
                let at = |v: i8| table[usize::try_from(255 - top + i32::from(v)).unwrap_or(0)];
                let mut sum = 0.0f32;
                for &v in row {
                    sum += at(v);
                }
                let inverse = 1.0 / (sum * scale);
                for (o, &v) in orow.iter_mut().zip(row) {
                    // clamped below
                    let q = libm::roundf(at(v) * inverse) as i32;
                    *o = to_i8(q.saturating_add(zero_point), -128, 127);
                }
            }
            Ok(())
        }
        (x, o) => bail!("input {} and output {} differ", x.dtype().name(), o.name()),
    }
}
