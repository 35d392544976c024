//! Conv: N-D convolution (1 to 3 spatial dimensions) with groups (depthwise included), strides,
//! pads, dilations, `auto_pad` and an optional bias.
//!
//! Direct convolution, no im2col buffer: for each output channel and each (input channel, tap)
//! pair, one weight is multiplied into whole output rows, the inner loop running over
//! consecutive output columns (contiguous memory when the stride is 1). Each output element thus
//! sums its products in the fixed order (input channel, kd, kh, kw), then adds the bias.

use crate::attrs::Attrs;
use crate::error::{KernelError, bail, error};
use crate::spatial::Window;
use crate::tensor::{Input, Output, opt_value, output, typed};

/// Conv.
pub(crate) fn conv(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (xs, x) = typed::<f32>(inputs, 0)?;
    let (ws, w) = typed::<f32>(inputs, 1)?;
    let bias = match opt_value(inputs, 2)? {
        None => None,
        Some(_) => Some(typed::<f32>(inputs, 2)?),
    };
    let (ys, y) = output::<f32>(outputs, 0)?;
    if xs.len() < 3 || ws.len() != xs.len() || ys.len() != xs.len() {
        bail!("input {xs:?}, weight {ws:?} and output {ys:?} must have the same rank >= 3");
    }
    let (n, c, m) = (xs[0], xs[1], ws[0]);
    let group = usize::try_from(attrs.int("group", 1)?)
        .ok()
        .filter(|&g| g > 0)
        .ok_or_else(|| error!("group must be positive"))?;
    if c % group != 0 || m % group != 0 || ws[1] * group != c {
        bail!("input channels {c}, weight {ws:?} and group {group} do not fit");
    }
    if ys[0] != n || ys[1] != m {
        bail!("output {ys:?} must be [{n}, {m}, ...]");
    }
    if let Some(ks) = attrs.ints("kernel_shape")? {
        if ks
            .iter()
            .zip(&ws[2..])
            .any(|(&k, &w)| usize::try_from(k) != Ok(w))
            || ks.len() != ws.len() - 2
        {
            bail!("kernel_shape {ks:?} does not match the weight {ws:?}");
        }
    }
    if let Some((bs, _)) = bias {
        if bs != [m] {
            bail!("bias {bs:?} must be [{m}]");
        }
    }
    let win = Window::new(attrs, &xs[2..], &ws[2..], false, &ys[2..])?.to_3d();
    let (cg, mg) = (c / group, m / group);
    let in_plane: usize = win.input.iter().product();
    let out_plane: usize = win.output.iter().product();
    let taps: usize = win.kernel.iter().product();
    let [kd, kh, kw] = [win.kernel[0], win.kernel[1], win.kernel[2]];
    let [oh, ow] = [win.output[1], win.output[2]];
    let [ih, iw] = [win.input[1], win.input[2]];
    let sw = win.strides[2];
    for b in 0..n {
        for oc in 0..m {
            let g = oc / mg;
            let out = &mut y[(b * m + oc) * out_plane..][..out_plane];
            out.fill(0.0);
            for ci in 0..cg {
                let ic = g * cg + ci;
                let plane = &x[(b * c + ic) * in_plane..][..in_plane];
                let weights = &w[(oc * cg + ci) * taps..][..taps];
                for td in 0..kd {
                    for th in 0..kh {
                        for tw in 0..kw {
                            let wv = weights[(td * kh + th) * kw + tw];
                            let cols = win.valid_outputs(2, tw);
                            if cols.is_empty() {
                                continue;
                            }
                            // First input column read by output column `cols.start`.
                            let Some(first) = win.source(2, cols.start, tw) else {
                                bail!("output column {} reads outside the input", cols.start);
                            };
                            for zo in win.valid_outputs(0, td) {
                                let Some(zi) = win.source(0, zo, td) else {
                                    bail!("output depth {zo} reads outside the input");
                                };
                                for yo in win.valid_outputs(1, th) {
                                    let Some(yi) = win.source(1, yo, th) else {
                                        bail!("output row {yo} reads outside the input");
                                    };
                                    let row_in = &plane[(zi * ih + yi) * iw..][..iw];
                                    let row_out = &mut out[(zo * oh + yo) * ow..][..ow];
                                    let dst = &mut row_out[cols.clone()];
                                    if sw == 1 {
                                        let src = &row_in[first..first + dst.len()];
                                        for (o, &v) in dst.iter_mut().zip(src) {
                                            *o += wv * v;
                                        }
                                    } else {
                                        for (k, o) in dst.iter_mut().enumerate() {
                                            *o += wv * row_in[first + k * sw];
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            if let Some((_, bv)) = bias {
                for o in out.iter_mut() {
                    *o += bv[oc];
                }
            }
        }
    }
    Ok(())
}
