//! ConvTranspose: the gradient of Conv with respect to its input, used to upsample (1 to 3
//! spatial dimensions, groups, strides, pads, dilations, `output_padding`, `output_shape`,
//! `auto_pad`, optional bias).
//!
//! Input element `i` of channel `c` spreads into output positions `i s - pad_begin + t d` for
//! each tap `t`, weighted by `W[c, m, t]`. Along one dimension the full output has
//! `s (n - 1) + output_padding + (k - 1) d + 1` positions, of which `pad_begin` and `pad_end` are
//! cut. For each output channel, the kernel scatters (input channel, tap) pairs in a fixed
//! order, then adds the bias.

use crate::attrs::Attrs;
use crate::error::{KernelError, bail, error};
use crate::tensor::{Dims, Input, Output, collect, dims_filled, opt_value, output, push, typed};

/// ConvTranspose.
pub(crate) fn conv_transpose(
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
    let r = xs.len().saturating_sub(2);
    if xs.len() < 3 || ws.len() != xs.len() || ys.len() != xs.len() || r > 3 {
        bail!("input {xs:?}, weight {ws:?} and output {ys:?} must have the same rank, 3 to 5");
    }
    let group = usize::try_from(attrs.int("group", 1)?)
        .ok()
        .filter(|&g| g > 0)
        .ok_or_else(|| error!("group must be positive"))?;
    let (n, c) = (xs[0], xs[1]);
    let m = ws[1] * group;
    if ws[0] != c || c % group != 0 {
        bail!("input channels {c}, weight {ws:?} and group {group} do not fit");
    }
    if ys[0] != n || ys[1] != m {
        bail!("output {ys:?} must be [{n}, {m}, ...]");
    }
    if let Some((bs, _)) = bias
        && bs != [m]
    {
        bail!("bias {bs:?} must be [{m}]");
    }
    let kernel = &ws[2..];
    let strides = attrs.usizes("strides", r, 1)?;
    let dilations = attrs.usizes("dilations", r, 1)?;
    let out_pad = attrs.usizes("output_padding", r, 0)?;
    const MAX: usize = 1 << 20;
    if strides
        .iter()
        .chain(&dilations)
        .chain(&out_pad)
        .chain(kernel)
        .any(|&v| v > MAX)
        || strides.contains(&0)
        || dilations.contains(&0)
        || kernel.contains(&0)
    {
        bail!("strides, dilations and kernel sizes must be in 1..={MAX}");
    }
    // The uncut output size along each dimension.
    let full: Dims = collect((0..r).map(|i| {
        strides[i] * (xs[2 + i].max(1) - 1) + out_pad[i] + (kernel[i] - 1) * dilations[i] + 1
    }))?;
    let auto_pad = attrs.str("auto_pad", "NOTSET")?;
    let (mut pad_begin, mut pad_end) = (dims_filled(0, r)?, dims_filled(0, r)?);
    let target: Option<Dims> = match attrs.ints("output_shape")? {
        Some(s) => {
            let s = if s.len() == xs.len() { &s[2..] } else { s };
            if s.len() != r {
                bail!("output_shape {s:?} must give {r} spatial sizes");
            }
            Some(collect(
                s.iter().map(|&v| usize::try_from(v).unwrap_or(usize::MAX)),
            )?)
        }
        None if auto_pad.starts_with("SAME") => {
            Some(collect((0..r).map(|i| xs[2 + i] * strides[i]))?)
        }
        None => None,
    };
    match (target, auto_pad) {
        (Some(t), _) => {
            for i in 0..r {
                let Some(total) = full[i].checked_sub(t[i]) else {
                    bail!("output_shape {t:?} is larger than the full output {full:?}");
                };
                let small = total / 2;
                if auto_pad == "SAME_UPPER" {
                    (pad_begin[i], pad_end[i]) = (small, total - small);
                } else {
                    (pad_begin[i], pad_end[i]) = (total - small, small);
                }
            }
        }
        (None, "NOTSET") => {
            let pads = attrs.usizes("pads", 2 * r, 0)?;
            pad_begin.copy_from_slice(&pads[..r]);
            pad_end.copy_from_slice(&pads[r..]);
        }
        (None, "VALID") => {}
        (None, other) => bail!("auto_pad {other:?} is not supported"),
    }
    let mut want = Dims::new();
    for i in 0..r {
        let Some(v) = full[i].checked_sub(pad_begin[i] + pad_end[i]) else {
            bail!("pads exceed the output");
        };
        push(&mut want, v)?;
    }
    if ys[2..] != want[..] {
        bail!(
            "the output's spatial size is {:?}, ConvTranspose computes {want:?}",
            &ys[2..]
        );
    }
    // Pad everything to 3 spatial dimensions.
    let lead = 3 - r;
    let pad3 = |v: &[usize], fill: usize| -> [usize; 3] {
        let mut a = [fill; 3];
        a[lead..].copy_from_slice(v);
        a
    };
    let (ins, outs) = (pad3(&xs[2..], 1), pad3(&ys[2..], 1));
    let (k3, s3, d3, p3) = (
        pad3(kernel, 1),
        pad3(&strides, 1),
        pad3(&dilations, 1),
        pad3(&pad_begin, 0),
    );
    let in_plane: usize = ins.iter().product();
    let out_plane: usize = outs.iter().product();
    let taps: usize = k3.iter().product();
    let (cg, mg) = (c / group, m / group);
    // Output position along dimension `a` for input `i`, tap `t`, if inside the output.
    let dest = |a: usize, i: usize, t: usize| {
        (i * s3[a] + t * d3[a])
            .checked_sub(p3[a])
            .filter(|&o| o < outs[a])
    };
    for b in 0..n {
        for oc in 0..m {
            let (g, ml) = (oc / mg, oc % mg);
            let out = &mut y[(b * m + oc) * out_plane..][..out_plane];
            out.fill(0.0);
            for ci in 0..cg {
                let ic = g * cg + ci;
                let plane = &x[(b * c + ic) * in_plane..][..in_plane];
                let weights = &w[(ic * mg + ml) * taps..][..taps];
                for td in 0..k3[0] {
                    for th in 0..k3[1] {
                        for tw in 0..k3[2] {
                            let wv = weights[(td * k3[1] + th) * k3[2] + tw];
                            for zi in 0..ins[0] {
                                let Some(zo) = dest(0, zi, td) else { continue };
                                for yi in 0..ins[1] {
                                    let Some(yo) = dest(1, yi, th) else { continue };
                                    let row_in = &plane[(zi * ins[1] + yi) * ins[2]..][..ins[2]];
                                    let row_out =
                                        &mut out[(zo * outs[1] + yo) * outs[2]..][..outs[2]];
                                    for (xi, &v) in row_in.iter().enumerate() {
                                        if let Some(xo) = dest(2, xi, tw) {
                                            row_out[xo] += wv * v;
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
