//! ConvTranspose: the gradient of Conv with respect to its input, used to upsample (1 to 3
//! spatial dimensions, groups, strides, pads, dilations, `output_padding`, `output_shape`,
//! `auto_pad`, optional bias).
//!
//! Input element `i` of channel `c` spreads into output positions `i s - pad_begin + t d` for
//! each tap `t`, weighted by `W[c, m, t]`. Along one dimension the full output has
//! `s (n - 1) + output_padding + (k - 1) d + 1` positions, of which `pad_begin` and `pad_end` are
//! cut.
//!
//! With its weights packed at build time ([`crate::pack::conv_transpose_weights`], attribute
//! `packed = 16`), a group is one matrix product and a scatter: the *columns*
//! `cols[(m, t), pixel] = sum_c W[c, m, t] x[c, pixel]` (every output channel and tap of a block
//! of input pixels, `A` the packed weights, `B` the input read in place) go into the node's
//! scratch, then each column's sums are added to the output positions its tap reaches (ONNX
//! Runtime's GEMM-and-col2im, with the columns a block at a time). Each output element is then
//! its contributions summed tap by tap, each contribution a sum over the input channels in order.
//! Unpacked weights (a weight computed at run time) take the direct scatter: for each output
//! channel, the (input channel, tap) pairs in a fixed order.

use crate::activation::Activation;
use crate::attrs::Attrs;
use crate::error::{KernelError, bail, error};
use crate::gemm::{self, A, B, Bias, PANEL, Product, Row, RowMajor};
use crate::pack;
use crate::tensor::{Dims, Input, Output, collect, dims_filled, opt_value, output, push, typed};

/// Column sums the packed method keeps in its scratch at a time (16 KiB, little beside a
/// microcontroller's arena): a block of input pixels is as many as fit, at least one (whose
/// columns, every output channel of a group times every tap, may then take more).
const COLUMN_FLOATS: usize = 4096;

/// A ConvTranspose's shapes, every spatial size padded to 3 dimensions (leading ones).
struct Geometry {
    n: usize,
    c: usize,
    m: usize,
    group: usize,
    /// Input and output sizes, kernel, strides, dilations and the pads cut at the start.
    ins: [usize; 3],
    outs: [usize; 3],
    kernel: [usize; 3],
    strides: [usize; 3],
    dilations: [usize; 3],
    pad_begin: [usize; 3],
}

impl Geometry {
    /// The geometry of input `xs`, output `ys` and weight `ws` (`[c, m / group, k..]`, or with
    /// `packed` the panels of [`crate::pack::conv_transpose_weights_shape`] and the kernel from
    /// `kernel_shape`). A packed weight's panels are checked against the output channels only
    /// as far as their count says (the build packs the weight the shapes were inferred from).
    fn new(
        attrs: &Attrs<'_>,
        xs: &[usize],
        ws: &[usize],
        ys: &[usize],
        packed: bool,
    ) -> Result<Geometry, KernelError> {
        let r = xs.len().saturating_sub(2);
        if xs.len() < 3 || ys.len() != xs.len() || r > 3 {
            bail!("input {xs:?} and output {ys:?} must have the same rank, 3 to 5");
        }
        let group = usize::try_from(attrs.int("group", 1)?)
            .ok()
            .filter(|&g| g > 0)
            .ok_or_else(|| error!("group must be positive"))?;
        let (n, c, m) = (xs[0], xs[1], ys[1]);
        if ys[0] != n || c % group != 0 || m % group != 0 {
            bail!("input {xs:?}, output {ys:?} and group {group} do not fit");
        }
        let kernel: Dims = if packed {
            let kernel = attrs.usizes("kernel_shape", r, 0)?;
            let taps = kernel.iter().try_fold(1usize, |a, &k| a.checked_mul(k));
            let rows = taps.and_then(|t| t.checked_mul(m / group));
            let want = rows.map(|rows| [group, rows.div_ceil(PANEL), c / group, PANEL]);
            if attrs.ints("kernel_shape")?.is_none() || want.is_none_or(|w| ws != w) {
                bail!(
                    "packed weight {ws:?} does not fit input {xs:?}, output {ys:?}, group {group} \
                     and the attribute kernel_shape"
                );
            }
            kernel
        } else {
            if ws.len() != xs.len() || ws[0] != c || ws[1] * group != m {
                bail!("input {xs:?}, weight {ws:?}, output {ys:?} and group {group} do not fit");
            }
            collect(ws[2..].iter().copied())?
        };
        let strides = attrs.usizes("strides", r, 1)?;
        let dilations = attrs.usizes("dilations", r, 1)?;
        let out_pad = attrs.usizes("output_padding", r, 0)?;
        const MAX: usize = 1 << 20;
        if strides
            .iter()
            .chain(&dilations)
            .chain(&out_pad)
            .chain(&kernel)
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
        Ok(Geometry {
            n,
            c,
            m,
            group,
            ins: pad3(&xs[2..], 1),
            outs: pad3(&ys[2..], 1),
            kernel: pad3(&kernel, 1),
            strides: pad3(&strides, 1),
            dilations: pad3(&dilations, 1),
            pad_begin: pad3(&pad_begin, 0),
        })
    }

    fn in_plane(&self) -> usize {
        self.ins.iter().product()
    }

    fn out_plane(&self) -> usize {
        self.outs.iter().product()
    }

    fn taps(&self) -> usize {
        self.kernel.iter().product()
    }

    /// Output position along dimension `a` for input `i`, tap `t`, if inside the output.
    fn dest(&self, a: usize, i: usize, t: usize) -> Option<usize> {
        (i * self.strides[a] + t * self.dilations[a])
            .checked_sub(self.pad_begin[a])
            .filter(|&o| o < self.outs[a])
    }

    /// The inputs `lo..hi` along dimension `a` that tap `t` sends inside the output, and the
    /// output position of `lo`.
    fn reach(&self, a: usize, t: usize) -> (usize, usize, usize) {
        let (s, shift, pad) = (self.strides[a], t * self.dilations[a], self.pad_begin[a]);
        // `i s + shift >= pad` and `i s + shift - pad < outs`.
        let lo = pad.saturating_sub(shift).div_ceil(s);
        let hi = (self.outs[a] + pad)
            .saturating_sub(shift)
            .div_ceil(s)
            .min(self.ins[a]);
        let hi = hi.max(lo);
        (lo, hi, (lo * s + shift).saturating_sub(pad))
    }

    /// Rows of the packed method's columns: each output channel of a group times each tap.
    fn column_rows(&self) -> usize {
        (self.m / self.group) * self.taps()
    }

    /// Input pixels of one block of the packed method's columns.
    fn block_pixels(&self) -> usize {
        (COLUMN_FLOATS / self.column_rows().max(1))
            .max(1)
            .min(self.in_plane().max(1))
    }
}

/// Scratch words (`u64`) a ConvTranspose needs: one block of columns when its weights are
/// packed, none otherwise.
pub(crate) fn scratch_len(
    attrs: &Attrs<'_>,
    input_shapes: &[Option<&[usize]>],
    output_shapes: &[&[usize]],
) -> Result<usize, KernelError> {
    let (Some(Some(xs)), Some(Some(ws)), Some(ys)) = (
        input_shapes.first(),
        input_shapes.get(1),
        output_shapes.first(),
    ) else {
        return Ok(0);
    };
    if !pack::is_packed(attrs)? {
        return Ok(0);
    }
    let geo = Geometry::new(attrs, xs, ws, ys, true)?;
    let floats = geo
        .column_rows()
        .checked_mul(geo.block_pixels())
        .ok_or_else(|| error!("the columns of {ys:?} do not fit in memory"))?;
    Ok(floats.div_ceil(2))
}

/// ConvTranspose.
pub(crate) fn conv_transpose(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    let (xs, x) = typed::<f32>(inputs, 0)?;
    let (ws, w) = typed::<f32>(inputs, 1)?;
    let bias = match opt_value(inputs, 2)? {
        None => None,
        Some(_) => Some(typed::<f32>(inputs, 2)?),
    };
    let (ys, y) = output::<f32>(outputs, 0)?;
    let packed = pack::is_packed(attrs)?;
    let geo = Geometry::new(attrs, xs, ws, ys, packed)?;
    if let Some((bs, _)) = bias
        && bs != [geo.m]
    {
        bail!("bias {bs:?} must be [{}]", geo.m);
    }
    if packed {
        by_columns(&geo, w, x, y, scratch)?;
    } else {
        direct(&geo, w, x, y);
    }
    if let Some((_, bv)) = bias {
        // (An empty output plane, its pads cutting it all away, has nothing to add to.)
        for (plane, &b) in y
            .chunks_exact_mut(geo.out_plane().max(1))
            .zip(bv.iter().cycle())
        {
            for o in plane {
                *o += b;
            }
        }
    }
    Ok(())
}

/// The direct scatter of unpacked weights `w` (`[c, m / group, taps]`).
fn direct(geo: &Geometry, w: &[f32], x: &[f32], y: &mut [f32]) {
    let (in_plane, out_plane, taps) = (geo.in_plane(), geo.out_plane(), geo.taps());
    let (c, m) = (geo.c, geo.m);
    let (cg, mg) = (c / geo.group, m / geo.group);
    let (ins, outs, k3) = (geo.ins, geo.outs, geo.kernel);
    for b in 0..geo.n {
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
                                let Some(zo) = geo.dest(0, zi, td) else {
                                    continue;
                                };
                                for yi in 0..ins[1] {
                                    let Some(yo) = geo.dest(1, yi, th) else {
                                        continue;
                                    };
                                    let row_in = &plane[(zi * ins[1] + yi) * ins[2]..][..ins[2]];
                                    let row_out =
                                        &mut out[(zo * outs[1] + yo) * outs[2]..][..outs[2]];
                                    for (xi, &v) in row_in.iter().enumerate() {
                                        if let Some(xo) = geo.dest(2, xi, tw) {
                                            row_out[xo] += wv * v;
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The packed method: per group and block of input pixels, the columns by one matrix product
/// into `scratch`, then each column row added to the output positions of its tap.
fn by_columns(
    geo: &Geometry,
    w: &[f32],
    x: &[f32],
    y: &mut [f32],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    let (in_plane, out_plane, taps) = (geo.in_plane(), geo.out_plane(), geo.taps());
    let (c, m) = (geo.c, geo.m);
    let (cg, mg) = (c / geo.group, m / geo.group);
    let rows = geo.column_rows();
    let block = geo.block_pixels();
    let panels: &[Row] = bytemuck::cast_slice::<f32, Row>(w);
    let per_group = rows.div_ceil(PANEL) * cg;
    let cols: &mut [f32] = bytemuck::cast_slice_mut(scratch);
    if cols.len() < rows * block || panels.len() < geo.group * per_group {
        bail!("internal error: the scratch or the weights are smaller than the columns need");
    }
    y.fill(0.0);
    if cg == 0 || in_plane == 0 {
        return Ok(());
    }
    let (ins, outs, k3) = (geo.ins, geo.outs, geo.kernel);
    for b in 0..geo.n {
        for g in 0..geo.group {
            let xg = &x[(b * c + g * cg) * in_plane..][..cg * in_plane];
            let a = A::Packed(&panels[g * per_group..][..per_group]);
            let mut p0 = 0;
            while p0 < in_plane {
                let nc = block.min(in_plane - p0);
                let cols = &mut cols[..rows * nc];
                let mut product = Product {
                    m: rows,
                    n: nc,
                    k: cg,
                    c: cols,
                    ldc: nc,
                    bias: Bias::None,
                    act: Activation::None,
                };
                let b_in: B<'_, RowMajor<'_>> = B::InPlace {
                    b: &xg[p0..],
                    ld: in_plane,
                };
                gemm::product(&mut product, a, b_in, &mut [])?;
                let cols = &*product.c;
                for ml in 0..mg {
                    let out = &mut y[(b * m + g * mg + ml) * out_plane..][..out_plane];
                    for t in 0..taps {
                        let (td, th, tw) = (t / (k3[1] * k3[2]), t / k3[2] % k3[1], t % k3[2]);
                        let row = &cols[(ml * taps + t) * nc..][..nc];
                        let (xlo, xhi, xo0) = geo.reach(2, tw);
                        let sw = geo.strides[2];
                        // The block's pixels an input row at a time.
                        let mut j = 0;
                        while j < nc {
                            let pixel = p0 + j;
                            let (zi, yi, x0) = (
                                pixel / (ins[1] * ins[2]),
                                pixel / ins[2] % ins[1],
                                pixel % ins[2],
                            );
                            let run = (ins[2] - x0).min(nc - j);
                            if let (Some(zo), Some(yo)) = (geo.dest(0, zi, td), geo.dest(1, yi, th))
                            {
                                let out_row = &mut out[(zo * outs[1] + yo) * outs[2]..][..outs[2]];
                                let (lo, hi) = (xlo.max(x0), xhi.min(x0 + run));
                                for xi in lo..hi {
                                    out_row[xo0 + (xi - xlo) * sw] += row[j + xi - x0];
                                }
                            }
                            j += run;
                        }
                    }
                }
                p0 += nc;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attrs::Attr;
    use crate::tensor::{Data, DataMut};
    use crate::test_values::values;
    use std::vec;
    use std::vec::Vec;

    /// One ConvTranspose, packed or not, through the kernel's entry point.
    fn run(
        list: &[(&str, Attr<'_>)],
        xs: &[usize],
        ws: &[usize],
        ys: &[usize],
        bias: bool,
        pack: bool,
    ) -> Vec<f32> {
        let x = values(xs.iter().product(), 1);
        let w = values(ws.iter().product(), 2);
        let bv = values(ws[1] * (ys[1] / ws[1]), 3);
        let bs = [ys[1]];
        let group = ys[1] / ws[1];
        let (w, ws, list) = if pack {
            let ps = crate::pack::conv_transpose_weights_shape(ws, group).expect("packable");
            let mut out = vec![0.0; ps.iter().product()];
            crate::pack::conv_transpose_weights(&w, ws, group, &mut out).expect("packs");
            let kernel: Vec<i64> = ws[2..].iter().map(|&k| k as i64).collect();
            (out, ps.to_vec(), (list.to_vec(), kernel))
        } else {
            (w, ws.to_vec(), (list.to_vec(), Vec::new()))
        };
        let (mut list, kernel) = list;
        if pack {
            list.push(("packed", Attr::Int(16)));
            list.push(("kernel_shape", Attr::Ints(&kernel)));
        }
        let attrs = Attrs::new(&list);
        let mut inputs = vec![
            Input::Value {
                shape: xs,
                data: Data::F32(&x),
            },
            Input::Value {
                shape: &ws,
                data: Data::F32(&w),
            },
        ];
        if bias {
            inputs.push(Input::Value {
                shape: &bs,
                data: Data::F32(&bv),
            });
        }
        let words = scratch_len(&attrs, &[Some(xs), Some(&ws)], &[ys]).expect("scratch");
        let mut scratch = vec![0u64; words];
        let mut y = vec![f32::NAN; ys.iter().product()];
        let mut outputs = [Output {
            shape: ys,
            data: DataMut::F32(&mut y),
        }];
        conv_transpose(&attrs, &inputs, &mut outputs, &mut scratch).expect("runs");
        y
    }

    /// Attributes, input, weight and output shapes.
    type Case<'a> = (
        &'a [(&'a str, Attr<'a>)],
        &'a [usize],
        &'a [usize],
        &'a [usize],
    );

    /// The packed method sums in another order than the direct scatter: equal within float
    /// rounding, over strides larger, equal and smaller than the kernel, pads, dilations,
    /// `output_padding`, groups, a batch, 1-D to 3-D, and blocks of columns cut mid-row.
    #[test]
    fn packed_columns_equal_the_direct_scatter() {
        let cases: &[Case<'_>] = &[
            // 2x2 stride 2: U-Net's upsampling.
            (
                &[("strides", Attr::Ints(&[2, 2]))],
                &[1, 32, 16, 16],
                &[32, 16, 2, 2],
                &[1, 16, 32, 32],
            ),
            // 3x3 stride 2, pads and output_padding.
            (
                &[
                    ("strides", Attr::Ints(&[2, 2])),
                    ("pads", Attr::Ints(&[1, 1, 1, 1])),
                    ("output_padding", Attr::Ints(&[1, 1])),
                ],
                &[2, 8, 9, 7],
                &[8, 5, 3, 3],
                &[2, 5, 18, 14],
            ),
            // 4x4 stride 2 pads 1 (DCGAN), two groups.
            (
                &[
                    ("strides", Attr::Ints(&[2, 2])),
                    ("pads", Attr::Ints(&[1, 1, 1, 1])),
                    ("group", Attr::Int(2)),
                ],
                &[1, 6, 5, 6],
                &[6, 3, 4, 4],
                &[1, 6, 10, 12],
            ),
            // Stride 1, dilation 2, large pads that cut taps away.
            (
                &[
                    ("dilations", Attr::Ints(&[2, 2])),
                    ("pads", Attr::Ints(&[3, 2, 1, 3])),
                ],
                &[1, 3, 40, 41],
                &[3, 4, 3, 3],
                &[1, 4, 40, 40],
            ),
            // 1-D, stride 3 larger than the kernel.
            (
                &[("strides", Attr::Ints(&[3]))],
                &[1, 4, 300],
                &[4, 2, 2],
                &[1, 2, 899],
            ),
            // 3-D.
            (
                &[("strides", Attr::Ints(&[2, 1, 2]))],
                &[1, 3, 3, 4, 5],
                &[3, 2, 2, 3, 2],
                &[1, 2, 6, 6, 10],
            ),
        ];
        for &(list, xs, ws, ys) in cases {
            for bias in [false, true] {
                let direct = run(list, xs, ws, ys, bias, false);
                let packed = run(list, xs, ws, ys, bias, true);
                assert!(direct.iter().all(|v| v.is_finite()), "{xs:?} {ws:?}");
                for (i, (d, p)) in direct.iter().zip(&packed).enumerate() {
                    assert!(
                        (d - p).abs() <= 1e-5 * (1.0 + d.abs()),
                        "{xs:?} {ws:?} -> {ys:?}: element {i}: direct {d}, packed {p}"
                    );
                }
            }
        }
    }

    /// Pads that cut the whole output away leave it empty, with a bias too: no panic.
    #[test]
    fn an_output_its_pads_cut_away_is_empty() {
        for pack in [false, true] {
            let pads: &[(&str, Attr<'_>)] = &[("pads", Attr::Ints(&[1, 0]))];
            let y = run(pads, &[1, 1, 1], &[1, 1, 1], &[1, 1, 0], true, pack);
            assert!(y.is_empty());
        }
    }

    /// A packed weight must match its kernel_shape and the input and output channels.
    #[test]
    fn a_packed_weight_that_does_not_fit_is_an_error() {
        let kernel = [3i64, 3];
        let list = [
            ("packed", Attr::Int(16)),
            ("kernel_shape", Attr::Ints(&kernel)),
        ];
        let attrs = Attrs::new(&list);
        // 4 output channels x 9 taps = 36 rows: 3 panels, not 2.
        let err = Geometry::new(&attrs, &[1, 2, 4, 4], &[1, 2, 2, 16], &[1, 4, 6, 6], true)
            .err()
            .expect("an error");
        assert!(std::format!("{err}").contains("packed weight"), "{err}");
        assert!(Geometry::new(&attrs, &[1, 2, 4, 4], &[1, 3, 2, 16], &[1, 4, 6, 6], true).is_ok());
    }
}
