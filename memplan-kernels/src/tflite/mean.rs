//! The reference MEAN over axes, float32 or int8.

use super::*;

/// MEAN over `axes`. Float32: the sum in row-major order, divided by the count. Int8, as
/// LiteRT's `QuantizedMeanOrSum`: the int32 sum of `x - zp_in`, times the multiplier the build
/// folded the count into, plus `zp_out`, saturated.
pub(super) fn mean(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (xs, x) = value(inputs, 0)?;
    let axes = attrs.ints("axes")?.unwrap_or(&[]);
    let mut reduced = [false; crate::tensor::MAX_RANK];
    for &a in axes {
        reduced[crate::tensor::axis(a, xs.len())?] = true;
    }
    // The output in the input's rank: reduced axes of size 1.
    let kept: Dims = collect(
        xs.iter()
            .enumerate()
            .map(|(d, &n)| if reduced[d] { 1 } else { n }),
    )?;
    let out_len = outputs.first().map_or(0, |o| o.data.len());
    if numel(&kept)? != out_len {
        bail!(
            "the output has {out_len} elements, the mean of {xs:?} over {axes:?} has {}",
            numel(&kept)?
        );
    }
    let out_strides = crate::tensor::strides(&kept)?;
    let count = (numel(xs)? / out_len.max(1)).max(1);
    // Output element of input element at `index`.
    let target = |index: &[usize]| -> usize {
        index
            .iter()
            .enumerate()
            .map(|(d, &p)| if reduced[d] { 0 } else { p * out_strides[d] })
            .sum()
    };
    match (x, out_dtype(outputs, 0)?) {
        (Data::F32(x), DType::F32) => {
            let (_, out) = output::<f32>(outputs, 0)?;
            out.fill(0.0);
            walk(xs, |i, idx| out[target(idx)] += x[i])?;
            // an element count
            let n = count as f32;
            for o in out.iter_mut() {
                *o /= n;
            }
            Ok(())
        }
        (Data::I8(x), DType::I8) => {
            let zp_in = int(attrs, "input_zero_point")?;
            let zp_out = int(attrs, "output_zero_point")?;
            let (m, sh) = (int(attrs, "multiplier")?, int(attrs, "shift")?);
            let (_, out) = output::<i8>(outputs, 0)?;
            let mut sums = [0i32; 64];
            // Sums of up to 64 outputs at a time (no heap): each pass walks the input once.
            let mut first = 0;
            while first < out.len() {
                let last = (first + sums.len()).min(out.len());
                sums.fill(0);
                walk(xs, |i, idx| {
                    let t = target(idx);
                    if (first..last).contains(&t) {
                        let v = i32::from(x[i]);
                        sums[t - first] = sums[t - first].wrapping_add(v.wrapping_sub(zp_in));
                    }
                })?;
                for (o, &sum) in out[first..last].iter_mut().zip(&sums) {
                    let v = mbqm(sum, m, sh).saturating_add(zp_out);
                    *o = to_i8(v, -128, 127);
                }
                first = last;
            }
            Ok(())
        }
        (x, o) => bail!("input {} and output {} differ", x.dtype().name(), o.name()),
    }
}
