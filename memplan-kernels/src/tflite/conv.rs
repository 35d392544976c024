//! The reference CONV_2D and DEPTHWISE_CONV_2D: float32, int8 per channel, or hybrid.

use super::*;

/// CONV_2D (and DEPTHWISE_CONV_2D): float32, int8 per-channel, or hybrid (float32 input, int8
/// filter with one scale).
pub(super) fn conv(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    depthwise: bool,
) -> Result<(), KernelError> {
    let (xs, x) = value(inputs, 0)?;
    let (fs, f) = value(inputs, 1)?;
    let [n, ih, iw, ic] = nhwc(xs, "the input")?;
    let [fo, kh, kw, fi] = nhwc(fs, "the filter")?;
    let out_dtype = out_dtype(outputs, 0)?;
    let os = outputs.first().map(|o| o.shape).unwrap_or(&[]);
    let [on, oh, ow, oc] = nhwc(os, "the output")?;
    let win = Window::of(attrs)?;
    // Output channel `o` reads input channels `first(o)..first(o) + per` through filter row.
    let (per, groups_of) = if depthwise {
        let m = size(attrs, "depth_multiplier", 1)?.max(1);
        if fo != 1 || fi != oc || ic.checked_mul(m) != Some(oc) {
            bail!("depthwise filter {fs:?} does not fit input {xs:?} and output {os:?}");
        }
        (1, m)
    } else {
        if fo != oc || fi == 0 || ic % fi != 0 || ic < fi || oc % (ic / fi) != 0 {
            bail!("filter {fs:?} does not fit input {xs:?} and output {os:?}");
        }
        (fi, oc / (ic / fi))
    };
    if on != n {
        bail!("output batch {on} differs from the input's {n}");
    }
    win.check_reach([oh, ow], [kh, kw])?;
    // The input channel where output channel `o` starts, and where its filter taps are.
    let first = |o: usize| {
        if depthwise {
            o / groups_of
        } else {
            (o / groups_of) * per
        }
    };
    let tap = |o: usize, y: usize, xk: usize, c: usize| {
        if depthwise {
            (y * kw + xk) * oc + o
        } else {
            ((o * kh + y) * kw + xk) * fi + c
        }
    };
    let bias = opt_value(inputs, 2)?;
    match (x, f, out_dtype) {
        (Data::F32(x), Data::F32(f), DType::F32) => {
            let bias = match bias {
                Some((_, Data::F32(b))) if b.len() == oc => Some(b),
                None => None,
                Some(_) => bail!("the bias must be float32 [{oc}]"),
            };
            let (lo, hi) = float_range(attrs)?;
            let (_, out) = output::<f32>(outputs, 0)?;
            let mut k = 0;
            for b in 0..n {
                for oy in 0..oh {
                    for ox in 0..ow {
                        for o in 0..oc {
                            let mut total = 0.0f32;
                            for y in 0..kh {
                                let Some(iy) = win.at(0, oy, y, ih) else {
                                    continue;
                                };
                                for xk in 0..kw {
                                    let Some(ix) = win.at(1, ox, xk, iw) else {
                                        continue;
                                    };
                                    let base = ((b * ih + iy) * iw + ix) * ic + first(o);
                                    for c in 0..per {
                                        total += x[base + c] * f[tap(o, y, xk, c)];
                                    }
                                }
                            }
                            let total = total + bias.map_or(0.0, |b| b[o]);
                            out[k] = clamp_f(total, lo, hi);
                            k += 1;
                        }
                    }
                }
            }
            Ok(())
        }
        (Data::F32(x), Data::I8(f), DType::F32) => {
            // Hybrid: TFLite quantizes each batch of the input symmetrically, accumulates in
            // int32, and scales by input scale times filter scale (dilations are not applied).
            if win.dilation != [1, 1] || depthwise {
                bail!("a hybrid convolution must be CONV_2D without dilation");
            }
            let bias = match bias {
                Some((_, Data::F32(b))) if b.len() == oc => Some(b),
                None => None,
                Some(_) => bail!("the bias must be float32 [{oc}]"),
            };
            let filter_scale = attrs.float("filter_scale", 1.0)?;
            let (lo, hi) = float_range(attrs)?;
            let (_, out) = output::<f32>(outputs, 0)?;
            let batch = ih * iw * ic;
            let mut k = 0;
            for b in 0..n {
                let q = Symmetric::of(&x[b * batch..(b + 1) * batch]);
                let scale = q.scale * filter_scale;
                for oy in 0..oh {
                    for ox in 0..ow {
                        for o in 0..oc {
                            let mut acc = 0i32;
                            for y in 0..kh {
                                let Some(iy) = win.at(0, oy, y, ih) else {
                                    continue;
                                };
                                for xk in 0..kw {
                                    let Some(ix) = win.at(1, ox, xk, iw) else {
                                        continue;
                                    };
                                    let base = ((b * ih + iy) * iw + ix) * ic + first(o);
                                    for c in 0..per {
                                        acc = acc.wrapping_add(
                                            q.q(x[base + c]) * i32::from(f[tap(o, y, xk, c)]),
                                        );
                                    }
                                }
                            }
                            // as TFLite's int-to-float
                            let v = acc as f32 * scale + bias.map_or(0.0, |b| b[o]);
                            out[k] = clamp_f(v, lo, hi);
                            k += 1;
                        }
                    }
                }
            }
            Ok(())
        }
        (Data::I8(x), Data::I8(f), DType::I8) => {
            let bias = match bias {
                Some((_, Data::I32(b))) if b.len() == oc => Some(b),
                None => None,
                Some(_) => bail!("the bias must be int32 [{oc}]"),
            };
            let mult = int32s(inputs, 3)?;
            let shift = int32s(inputs, 4)?;
            if !(mult.len() == oc || mult.len() == 1) || shift.len() != mult.len() {
                bail!("the multipliers and shifts must have one value per output channel");
            }
            let input_offset = int(attrs, "input_offset")?;
            let output_offset = int(attrs, "output_offset")?;
            let (lo, hi) = int_range(attrs)?;
            let (_, out) = output::<i8>(outputs, 0)?;
            let mut k = 0;
            for b in 0..n {
                for oy in 0..oh {
                    for ox in 0..ow {
                        for o in 0..oc {
                            let mut acc = 0i32;
                            for y in 0..kh {
                                let Some(iy) = win.at(0, oy, y, ih) else {
                                    continue;
                                };
                                for xk in 0..kw {
                                    let Some(ix) = win.at(1, ox, xk, iw) else {
                                        continue;
                                    };
                                    let base = ((b * ih + iy) * iw + ix) * ic + first(o);
                                    for c in 0..per {
                                        let xv = i32::from(x[base + c]).wrapping_add(input_offset);
                                        acc = acc.wrapping_add(
                                            i32::from(f[tap(o, y, xk, c)]).wrapping_mul(xv),
                                        );
                                    }
                                }
                            }
                            if let Some(bias) = bias {
                                acc = acc.wrapping_add(bias[o]);
                            }
                            let v = mbqm(acc, channel(mult, o), channel(shift, o))
                                .saturating_add(output_offset);
                            out[k] = to_i8(v, lo, hi);
                            k += 1;
                        }
                    }
                }
            }
            Ok(())
        }
        (x, f, o) => bail!(
            "input {}, filter {} and output {} is not a supported combination",
            x.dtype().name(),
            f.dtype().name(),
            o.name()
        ),
    }
}
