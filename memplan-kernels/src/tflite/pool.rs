//! The reference AVERAGE_POOL_2D and MAX_POOL_2D, float32 or int8.

use super::*;

/// AVERAGE_POOL_2D and MAX_POOL_2D, float32 or int8: the window clipped to the input (padding
/// takes no part), the int8 average rounded half away from zero.
pub(super) fn pool(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    max: bool,
) -> Result<(), KernelError> {
    let (xs, x) = value(inputs, 0)?;
    let [n, ih, iw, c] = nhwc(xs, "the input")?;
    let os = outputs.first().map(|o| o.shape).unwrap_or(&[]);
    let [on, oh, ow, oc] = nhwc(os, "the output")?;
    if on != n || oc != c {
        bail!("output {os:?} does not fit input {xs:?}");
    }
    let win = Window::of(attrs)?;
    let (fh, fw) = (size(attrs, "filter_h", 1)?, size(attrs, "filter_w", 1)?);
    win.check_reach([oh, ow], [fh, fw])?;
    // Visits the taps of one output element: `each(input index)`; returns how many.
    let taps = |b: usize, oy: usize, ox: usize, ch: usize, each: &mut dyn FnMut(usize)| {
        let mut count = 0usize;
        for y in 0..fh {
            let Some(iy) = win.at(0, oy, y, ih) else {
                continue;
            };
            for xk in 0..fw {
                let Some(ix) = win.at(1, ox, xk, iw) else {
                    continue;
                };
                each(((b * ih + iy) * iw + ix) * c + ch);
                count += 1;
            }
        }
        count
    };
    match (x, out_dtype(outputs, 0)?) {
        (Data::F32(x), DType::F32) => {
            let (lo, hi) = float_range(attrs)?;
            let (_, out) = output::<f32>(outputs, 0)?;
            let mut k = 0;
            for b in 0..n {
                for oy in 0..oh {
                    for ox in 0..ow {
                        for ch in 0..c {
                            let mut acc = if max { f32::MIN } else { 0.0 };
                            let count = taps(b, oy, ox, ch, &mut |i| {
                                if max {
                                    if acc < x[i] {
                                        acc = x[i];
                                    }
                                } else {
                                    acc += x[i];
                                }
                            });
                            if count == 0 {
                                bail!("a pooling window lies wholly in the padding");
                            }
                            // a window's tap count
                            let v = if max { acc } else { acc / count as f32 };
                            out[k] = clamp_f(v, lo, hi);
                            k += 1;
                        }
                    }
                }
            }
            Ok(())
        }
        (Data::I8(x), DType::I8) => {
            let (lo, hi) = int_range(attrs)?;
            let (_, out) = output::<i8>(outputs, 0)?;
            let mut k = 0;
            for b in 0..n {
                for oy in 0..oh {
                    for ox in 0..ow {
                        for ch in 0..c {
                            // In int64: a window of 2^24 taps or more would overflow LiteRT's
                            // int32 sum (the same result below that).
                            let mut acc: i64 = if max { -128 } else { 0 };
                            let count = taps(b, oy, ox, ch, &mut |i| {
                                let v = i64::from(x[i]);
                                if max {
                                    acc = acc.max(v);
                                } else {
                                    acc += v;
                                }
                            });
                            if count == 0 {
                                bail!("a pooling window lies wholly in the padding");
                            }
                            let v = if max {
                                acc
                            } else {
                                let count = i64::try_from(count).unwrap_or(i64::MAX);
                                if acc > 0 {
                                    (acc + count / 2) / count
                                } else {
                                    (acc - count / 2) / count
                                }
                            };
                            // an int8 max or mean
                            let v = v.clamp(-128, 127) as i32;
                            out[k] = to_i8(v, lo, hi);
                            k += 1;
                        }
                    }
                }
            }
            Ok(())
        }
        (x, o) => bail!("input {} and output {} differ", x.dtype().name(), o.name()),
    }
}
