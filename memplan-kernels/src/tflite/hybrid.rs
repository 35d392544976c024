//! Hybrid CONV_2D and FULLY_CONNECTED (float32 input and output, int8 weights with one scale:
//! TFLite's dynamic-range quantization) specialised at build time.
//!
//! They compute the reference's bits: the input is quantized with its batch's scale as TFLite's
//! `SymmetricQuantizeFloats` does (a column or a row at a time, into scratch), the int8
//! products are summed in int32 (whose sum does not depend on the order), and each sum is
//! scaled and biased in float32 exactly as the reference does. Four output channels (units)
//! share each quantized input read.

use super::float::{FullyConnected, Window, units_by_four};
use super::{Symmetric, clamp_f, expect_len};
use crate::error::{KernelError, bail};

/// `x` quantized into the first `x.len()` bytes of `scratch`; its scale.
fn quantize<'s>(x: &[f32], scratch: &'s mut [u64]) -> Result<(&'s [i8], f32), KernelError> {
    let bytes: &mut [i8] = bytemuck::cast_slice_mut(scratch);
    let available = bytes.len();
    let Some(q) = bytes.get_mut(..x.len()) else {
        bail!(
            "the scratch has {available} bytes, quantizing the input needs {}",
            x.len()
        );
    };
    let s = Symmetric::of(x);
    for (d, &v) in q.iter_mut().zip(x) {
        // within +-127
        {
            *d = s.q(v) as i8;
        }
    }
    Ok((q, s.scale))
}

/// The four int32 dot products of `x` with rows `f0..f3`.
#[inline(always)]
fn dot4(x: &[i8], f: [&[i8]; 4], acc: &mut [i32; 4]) {
    let [f0, f1, f2, f3] = f;
    for (&v, (((&w0, &w1), &w2), &w3)) in x.iter().zip(f0.iter().zip(f1).zip(f2).zip(f3)) {
        let v = i32::from(v);
        acc[0] = acc[0].wrapping_add(v * i32::from(w0));
        acc[1] = acc[1].wrapping_add(v * i32::from(w1));
        acc[2] = acc[2].wrapping_add(v * i32::from(w2));
        acc[3] = acc[3].wrapping_add(v * i32::from(w3));
    }
}

/// `acc` scaled and biased as the reference does.
#[inline(always)]
// as TFLite's int-to-float
fn output(acc: i32, scale: f32, bias: f32, [lo, hi]: [f32; 2]) -> f32 {
    clamp_f(acc as f32 * scale + bias, lo, hi)
}

/// Bytes of scratch [`conv`] needs: one output pixel's column of quantized inputs.
#[must_use]
pub const fn conv_scratch_bytes(p: &Window) -> usize {
    p.kernel[0] * p.kernel[1] * p.input[2]
}

/// Runs a hybrid CONV_2D (no dilation, as TFLite's hybrid kernel): `x` NHWC float32, `filter`
/// `[out_channels, kernel_h, kernel_w, in_channels]` int8 of scale `filter_scale`, `bias` one
/// float per output channel (zeros for none), `out` NHWC float32, `scratch` at least
/// [`conv_scratch_bytes`]. Each pixel's column (its window's inputs, zeros in the padding, which
/// add nothing to an integer sum) is quantized into scratch with the batch's scale, then read
/// once for every four output channels.
///
/// # Errors
/// Parameters [`Window::check`] refuses, a dilation, or slices whose lengths do not fit them.
#[allow(clippy::too_many_arguments)] // one slice per operand of the node
pub fn conv(
    p: &Window,
    x: &[f32],
    filter: &[i8],
    filter_scale: f32,
    bias: &[f32],
    out: &mut [f32],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    p.check()?;
    if p.dilation != [1, 1] {
        bail!("a hybrid convolution has no dilation");
    }
    let [ih, iw, ic] = p.input;
    let [oh, ow, oc] = p.output;
    let [kh, kw] = p.kernel;
    let image = ih * iw * ic;
    expect_len("the input", x.len(), p.batches * image)?;
    expect_len("the filter", filter.len(), oc * kh * kw * ic)?;
    expect_len("the bias", bias.len(), oc)?;
    expect_len("the output", out.len(), p.batches * oh * ow * oc)?;
    let row = kh * kw * ic;
    let bytes: &mut [i8] = bytemuck::cast_slice_mut(scratch);
    let available = bytes.len();
    let Some(column) = bytes.get_mut(..row) else {
        bail!("the scratch has {available} bytes, a column needs {row}");
    };
    if oc == 0 || ow == 0 || row == 0 {
        return Ok(());
    }
    for (b, outs) in out.chunks_exact_mut(oh * ow * oc).enumerate() {
        let batch = &x[b * image..(b + 1) * image];
        let q = Symmetric::of(batch);
        let scale = q.scale * filter_scale;
        let mut pixels = outs.chunks_exact_mut(oc);
        for oy in 0..oh {
            for ox in 0..ow {
                let Some(pixel) = pixels.next() else {
                    return Ok(());
                };
                // The column, tap by tap in the filter's order.
                for (t, tap) in column.chunks_exact_mut(ic).enumerate() {
                    let (ky, kx) = (t / kw, t % kw);
                    let iy = (oy * p.stride[0] + ky).wrapping_sub(p.pad[0]);
                    let ix = (ox * p.stride[1] + kx).wrapping_sub(p.pad[1]);
                    if iy < ih && ix < iw {
                        let at = (iy * iw + ix) * ic;
                        for (d, &v) in tap.iter_mut().zip(&batch[at..at + ic]) {
                            // within +-127
                            {
                                *d = q.q(v) as i8;
                            }
                        }
                    } else {
                        tap.fill(0);
                    }
                }
                outputs(column, filter, scale, bias, p.act, pixel);
            }
        }
    }
    Ok(())
}

/// One output pixel of a hybrid convolution: the int32 dot products of the quantized `column`
/// with each filter row (four rows a read of the column), scaled and biased.
#[inline(always)]
fn outputs(
    column: &[i8],
    filter: &[i8],
    scale: f32,
    bias: &[f32],
    act: [f32; 2],
    pixel: &mut [f32],
) {
    let row = column.len();
    let mut rows = filter.chunks_exact(4 * row);
    let mut o = 0;
    for four in rows.by_ref() {
        let mut acc = [0i32; 4];
        let f = |j: usize| &four[j * row..(j + 1) * row];
        dot4(column, [f(0), f(1), f(2), f(3)], &mut acc);
        for (j, a) in acc.into_iter().enumerate() {
            pixel[o + j] = output(a, scale, bias[o + j], act);
        }
        o += 4;
    }
    for f in rows.remainder().chunks_exact(row) {
        let acc = column.iter().zip(f).fold(0i32, |acc, (&v, &w)| {
            acc.wrapping_add(i32::from(v) * i32::from(w))
        });
        pixel[o] = output(acc, scale, bias[o], act);
        o += 1;
    }
}

/// Bytes of scratch [`conv_in_place`] needs (one pixel's quantized inputs), or `None` unless
/// the convolution is [`Window::pointwise`] with no more output than input channels.
#[must_use]
pub fn conv_in_place_scratch_bytes(p: &Window) -> Option<usize> {
    // Pointwise with no more output than input channels, as the float kernel's condition.
    p.conv_in_place_scratch_bytes().map(|_| p.input[2])
}

/// Runs a pointwise hybrid CONV_2D as [`conv`] does, with its output written over its own
/// input: `data` holds the input (NHWC) and, when the kernel returns, the output from its start.
/// The batch's scale is taken over the whole input first; then each pixel is quantized into
/// `scratch` before its outputs (no more than its inputs) go where it was.
///
/// # Errors
/// Parameters [`Window::check`] refuses, a convolution that cannot go over its input
/// ([`conv_in_place_scratch_bytes`]), or slices whose lengths do not fit them.
pub fn conv_in_place(
    p: &Window,
    data: &mut [f32],
    filter: &[i8],
    filter_scale: f32,
    bias: &[f32],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    p.check()?;
    if conv_in_place_scratch_bytes(p).is_none() {
        bail!("only a pointwise convolution with no more output than input channels runs in place");
    }
    let [ih, iw, ic] = p.input;
    let oc = p.output[2];
    let pixels = ih * iw;
    expect_len("the tensor", data.len(), p.batches * pixels * ic)?;
    expect_len("the filter", filter.len(), oc * ic)?;
    expect_len("the bias", bias.len(), oc)?;
    let bytes: &mut [i8] = bytemuck::cast_slice_mut(scratch);
    let available = bytes.len();
    let Some(column) = bytes.get_mut(..ic) else {
        bail!("the scratch has {available} bytes, a pixel needs {ic}");
    };
    if oc == 0 || ic == 0 {
        return Ok(());
    }
    for b in 0..p.batches {
        // Batch `b`'s outputs end where its inputs do at the latest: its input is whole here.
        let (input, output) = (b * pixels * ic, b * pixels * oc);
        let q = Symmetric::of(&data[input..input + pixels * ic]);
        let scale = q.scale * filter_scale;
        for pixel in 0..pixels {
            let at = input + pixel * ic;
            for (d, &v) in column.iter_mut().zip(&data[at..at + ic]) {
                // within +-127
                {
                    *d = q.q(v) as i8;
                }
            }
            let out = &mut data[output + pixel * oc..output + (pixel + 1) * oc];
            outputs(column, filter, scale, bias, p.act, out);
        }
    }
    Ok(())
}

/// Bytes of scratch [`fully_connected`] needs: one row of the input, quantized.
#[must_use]
pub const fn fully_connected_scratch_bytes(p: &FullyConnected) -> usize {
    p.depth
}

/// Runs a hybrid FULLY_CONNECTED: `x` `batches x depth` float32, `filter` `[units, depth]` int8
/// of scale `filter_scale`, `bias` one float per unit (zeros for none), `out` `batches x units`
/// float32, `scratch` at least [`fully_connected_scratch_bytes`].
///
/// # Errors
/// Slices whose lengths do not fit the parameters.
#[allow(clippy::too_many_arguments)] // one slice per operand of the node
pub fn fully_connected(
    p: &FullyConnected,
    x: &[f32],
    filter: &[i8],
    filter_scale: f32,
    bias: &[f32],
    out: &mut [f32],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    let (batches, depth, units) = (p.batches, p.depth, p.units);
    expect_len(
        "the input",
        x.len(),
        crate::tensor::numel(&[batches, depth])?,
    )?;
    expect_len(
        "the filter",
        filter.len(),
        crate::tensor::numel(&[units, depth])?,
    )?;
    expect_len("the bias", bias.len(), units)?;
    expect_len(
        "the output",
        out.len(),
        crate::tensor::numel(&[batches, units])?,
    )?;
    if depth == 0 || units == 0 {
        for (y, &b) in out.iter_mut().zip(bias.iter().cycle()) {
            *y = output(0, filter_scale, b, p.act);
        }
        return Ok(());
    }
    for (row, ys) in x.chunks_exact(depth).zip(out.chunks_exact_mut(units)) {
        let (q, scale) = quantize(row, scratch)?;
        let scale = scale * filter_scale;
        units_by_four(
            q,
            filter,
            ys,
            |x, f| {
                let mut acc = [0i32; 4];
                dot4(x, f, &mut acc);
                acc
            },
            |u, acc| output(acc, scale, bias[u], p.act),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::vec;
    use std::vec::Vec;

    use proptest::prelude::*;

    use super::*;
    use crate::attrs::Attr;
    use crate::tensor::Data;
    use crate::tflite::float::tests::{bits, reference};

    fn floats(len: usize) -> impl Strategy<Value = Vec<f32>> {
        proptest::collection::vec(prop_oneof![Just(0.0f32), -4.0f32..4.0], len)
    }

    fn bytes(len: usize) -> impl Strategy<Value = Vec<i8>> {
        proptest::collection::vec(any::<i8>(), len)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn hybrid_conv_equals_the_reference_bit_for_bit(
            (g, x, filter, bias) in (
                (1usize..=2, 1usize..=6, 1usize..=6, 1usize..=9, 1usize..=5, 1usize..=5, 1usize..=9),
                (1usize..=3, 1usize..=3, 1usize..=2, 1usize..=2, 0usize..=2, 0usize..=2),
            ).prop_flat_map(|((n, ih, iw, ic, oh, ow, oc), (kh, kw, sh, sw, pt, pl))| {
                let g = [n, ih, iw, ic, oh, ow, oc, kh, kw, sh, sw, pt, pl];
                (Just(g), floats(n * ih * iw * ic), bytes(oc * kh * kw * ic), prop_oneof![Just(0usize), Just(oc)].prop_flat_map(floats))
            }),
            scale in 0.001f32..0.1,
            relu in any::<bool>(),
        ) {
            let [n, ih, iw, ic, oh, ow, oc, kh, kw, sh, sw, pt, pl] = g;
            let act = if relu { [0.0, f32::MAX] } else { [f32::MIN, f32::MAX] };
            let int = |v: usize| Attr::Int(i64::try_from(v).unwrap());
            let attrs = [
                ("stride_h", int(sh)), ("stride_w", int(sw)), ("pad_top", int(pt)), ("pad_left", int(pl)),
                ("act_min", Attr::Float(act[0])), ("act_max", Attr::Float(act[1])),
                ("filter_scale", Attr::Float(scale)),
            ];
            let want = reference("tflite.CONV_2D", &attrs, (&[n, ih, iw, ic], &x), (&[oc, kh, kw, ic], Data::I8(&filter)), &bias, &[n, oh, ow, oc]);
            let p = Window { batches: n, input: [ih, iw, ic], output: [oh, ow, oc], kernel: [kh, kw], stride: [sh, sw], dilation: [1, 1], pad: [pt, pl], act };
            let bias = if bias.is_empty() { vec![0.0; oc] } else { bias };
            let mut scratch = vec![0u64; conv_scratch_bytes(&p).div_ceil(8)];
            let mut got = vec![0.0f32; want.len()];
            conv(&p, &x, &filter, scale, &bias, &mut got, &mut scratch).unwrap();
            prop_assert_eq!(bits(&got), bits(&want));
        }

        #[test]
        fn hybrid_fully_connected_equals_the_reference_bit_for_bit(
            ((batches, depth, units), x, filter, bias) in (1usize..=3, 1usize..=40, 1usize..=11).prop_flat_map(|(b, d, u)| {
                (Just((b, d, u)), floats(b * d), bytes(u * d), prop_oneof![Just(0usize), Just(u)].prop_flat_map(floats))
            }),
            scale in 0.001f32..0.1,
        ) {
            let act = [f32::MIN, f32::MAX];
            let a = [("act_min", Attr::Float(act[0])), ("act_max", Attr::Float(act[1])), ("filter_scale", Attr::Float(scale))];
            let want = reference("tflite.FULLY_CONNECTED", &a, (&[batches, depth], &x), (&[units, depth], Data::I8(&filter)), &bias, &[batches, units]);
            let bias = if bias.is_empty() { vec![0.0; units] } else { bias };
            let p = FullyConnected { batches, depth, units, act };
            let mut scratch = vec![0u64; fully_connected_scratch_bytes(&p).div_ceil(8)];
            let mut got = vec![0.0f32; want.len()];
            fully_connected(&p, &x, &filter, scale, &bias, &mut got, &mut scratch).unwrap();
            prop_assert_eq!(bits(&got), bits(&want));
        }

        #[test]
        fn hybrid_pointwise_conv_in_place_equals_conv_bit_for_bit(
            ((n, h, w, ic, oc), x, filter, bias) in (1usize..=3, 1usize..=5, 1usize..=5, 1usize..=12, 1usize..=12)
                .prop_filter("no more output than input channels", |g| g.4 <= g.3)
                .prop_flat_map(|(n, h, w, ic, oc)| {
                    (Just((n, h, w, ic, oc)), floats(n * h * w * ic), bytes(oc * ic), floats(oc))
                }),
            scale in 0.001f32..0.1,
        ) {
            let p = Window { batches: n, input: [h, w, ic], output: [h, w, oc], kernel: [1, 1], stride: [1, 1], dilation: [1, 1], pad: [0, 0], act: [0.0, 6.0] };
            let mut want = vec![0.0f32; n * h * w * oc];
            let mut scratch = vec![0u64; conv_scratch_bytes(&p).div_ceil(8)];
            conv(&p, &x, &filter, scale, &bias, &mut want, &mut scratch).unwrap();
            let mut data = x.clone();
            let mut scratch = vec![0u64; conv_in_place_scratch_bytes(&p).unwrap().div_ceil(8)];
            conv_in_place(&p, &mut data, &filter, scale, &bias, &mut scratch).unwrap();
            prop_assert_eq!(bits(&data[..want.len()]), bits(&want));
        }
    }
}
