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
    // The reduced axes one run `first..end` (a global average pool over NHWC's H and W): the
    // input is `[outer, reduced, inner]`, each output the sum of one column of its block,
    // added in the same order as the walk below adds it.
    let run = {
        let first = reduced.iter().position(|&r| r);
        let end = reduced.iter().rposition(|&r| r).map(|e| e + 1);
        first
            .zip(end)
            .filter(|&(f, e)| reduced[f..e].iter().all(|&r| r) && e <= xs.len())
    };
    let blocks = run.map(|(f, e)| {
        let product = |dims: &[usize]| dims.iter().product::<usize>();
        (product(&xs[f..e]), product(&xs[e..]))
    });
    match (x, out_dtype(outputs, 0)?) {
        (Data::F32(x), DType::F32) => {
            let (_, out) = output::<f32>(outputs, 0)?;
            out.fill(0.0);
            match blocks {
                Some((r, inner)) if inner > 0 && r > 0 => {
                    for (block, sums) in x.chunks_exact(r * inner).zip(out.chunks_exact_mut(inner))
                    {
                        for row in block.chunks_exact(inner) {
                            for (s, &v) in sums.iter_mut().zip(row) {
                                *s += v;
                            }
                        }
                    }
                }
                _ => walk(xs, |i, idx| out[target(idx)] += x[i])?,
            }
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
            let finish = |sum: i32| to_i8(mbqm(sum, m, sh).saturating_add(zp_out), -128, 127);
            if let Some((r, inner)) = blocks.filter(|&(r, inner)| r > 0 && inner > 0) {
                // A column of int32 sums at a time, 64 values wide (no heap).
                let mut sums = [0i32; 64];
                for (block, outs) in x.chunks_exact(r * inner).zip(out.chunks_exact_mut(inner)) {
                    for (c0, outs) in (0..inner).step_by(64).zip(outs.chunks_mut(64)) {
                        let sums = &mut sums[..outs.len()];
                        sums.fill(0);
                        for row in block.chunks_exact(inner) {
                            for (s, &v) in sums.iter_mut().zip(&row[c0..]) {
                                *s = s.wrapping_add(i32::from(v).wrapping_sub(zp_in));
                            }
                        }
                        for (o, &sum) in outs.iter_mut().zip(sums.iter()) {
                            *o = finish(sum);
                        }
                    }
                }
                return Ok(());
            }
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
                    *o = finish(sum);
                }
                first = last;
            }
            Ok(())
        }
        (x, o) => bail!("input {} and output {} differ", x.dtype().name(), o.name()),
    }
}
