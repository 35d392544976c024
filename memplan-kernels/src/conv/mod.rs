//! Conv: N-D convolution (1 to 3 spatial dimensions) with groups (depthwise included), strides,
//! pads, dilations, `auto_pad`, an optional bias and an optional fused activation
//! ([`crate::activation`]).
//!
//! Six methods, by shape:
//!
//! - **depthwise** (`group` = input channels > 1, one input channel per group): on a small
//!   plane (a keyword spotter's 25 x 5, a MobileNet's 14 x 14 tail) 16 channels at a time, one
//!   a vector lane, their planes turned into an interleaved tile 16 x 16 words at a time
//!   ([`lanes`]); otherwise each input plane copied once into the node's scratch with its
//!   padding and split by stride into phases ([`Plane`]), so that every tap reads one run of
//!   consecutive words for all of a channel's outputs, across rows too: blocks of 128 outputs
//!   summed in registers. Each element sums its taps in the order (kh, kw), the padding's
//!   zeros included, then adds the bias, either way. Too large a plane or a 3-D window
//!   computes directly, output row by output row, skipping the padding: the same bits.
//! - **pointwise** (1x1 kernel, stride 1, no padding): per group, a matrix product
//!   ([`crate::gemm`]) of the weights (`out channels x in channels`) by the input itself
//!   (`in channels x pixels`).
//! - **padded rows** (packed weights, stride 1, output rows a multiple of 16 wide: a 3x3
//!   ResNet Conv at 32 x 32): per output row, the input rows its taps read copied once with
//!   their padding, and the product reads each tap's row of `B` in place from there ([`rows`]).
//! - **direct** (packed weights on x86-64, a 2-D window of horizontal stride 1 or 2 that the
//!   two methods above do not take: narrow output rows, strided windows, 1x1 stride-2
//!   shortcuts): output channels across the vector lanes, a tile of a few output pixels of one
//!   row broadcast from a padded copy of the input rows under it (read in place when there is
//!   no padding), its sums in registers over the whole of `k`; no lane computes a column that is
//!   thrown away ([`direct`]).
//! - **padded planes** (packed weights where the direct method does not run, a 2-D window of
//!   stride 1 or 2 whose rows the padded-rows method does not take, output rows not much
//!   narrower than the padded ones: a stem Conv of 3 channels, a 3x3 Conv at 55 or 28
//!   columns): a band of output rows at a time, every input channel's rows under it copied
//!   with their padding and split by stride into phases, so the product reads each tap's row
//!   of `B` in place across the band's rows ([`planes`]).
//! - **everything else**: the same product with the input seen through the window (im2col), one
//!   panel of `k` rows x a few output pixels at a time, copied into the scratch the product packs
//!   into anyway: no im2col matrix is ever built.
//!
//! In the products every output element sums its products in increasing `(input channel, kd,
//! kh, kw)`, padding included as zeros, then adds the bias and applies the activation.

use crate::activation::Activation;
use crate::attrs::Attrs;
use crate::error::{KernelError, bail, error};
use crate::gemm::{self, A, B, Bias, PANEL, Panel, Product, Row, RowMajor};
use crate::pack;
#[cfg(target_arch = "x86_64")]
use crate::simd::{Avx2Fma, Avx512Fma};
use crate::simd::{DepthwiseSteps, ScalarFma, dispatch};
use crate::spatial::{ConvGeometry, Window};
use crate::tensor::{Dims, Input, Output, collect, opt_value, output, typed};
use arrayvec::ArrayVec;

mod band;
mod depthwise;
mod direct;
mod im2col;
mod lanes;
mod planes;
mod rows;

pub use band::{ConvBand, conv_band, conv_band_scratch_len, conv_band_window};
use depthwise::*;
use direct::*;
use im2col::*;
use lanes::*;
use planes::*;
use rows::*;

/// Scratch words a Conv needs: one panel of each operand the product packs at run time, or for
/// a depthwise one, one padded input plane.
pub(crate) fn scratch_len(
    attrs: &Attrs<'_>,
    input_shapes: &[Option<&[usize]>],
    output_shapes: &[&[usize]],
) -> Result<usize, KernelError> {
    let (Some(Some(xs)), Some(Some(ws))) = (input_shapes.first(), input_shapes.get(1)) else {
        return Ok(0);
    };
    let (Some(&c), Some(&cg)) = (xs.get(1), ws.get(1)) else {
        return Ok(0);
    };
    let group = usize::try_from(attrs.int("group", 1)?).unwrap_or(1);
    if group > 1 && group == c {
        let Some(ys) = output_shapes.first() else {
            return Ok(0);
        };
        let geo = ConvGeometry::new(attrs, xs, ws, ys)?;
        return Ok(depthwise_scratch(&geo));
    }
    if pack::is_packed(attrs)? {
        let Some(ys) = output_shapes.first() else {
            return Ok(0);
        };
        let geo = ConvGeometry::new(attrs, xs, &weight_shape(attrs, xs, ws, ys)?, ys)?;
        if geo.pointwise() {
            // The product reads the input in place.
            return Ok(0);
        }
        // [group, panels, k, 16]: only B is packed at run time, or the padded rows of a stride-1
        // Conv are copied (`PaddedRows`).
        let panel = gemm::scratch_words(ws.get(2).copied().unwrap_or(1), true);
        if let Some(rows) = PaddedRows::of(&geo) {
            return Ok(rows.words().max(panel));
        }
        return Ok(PaddedPlanes::of(&geo).map_or(panel, |planes| planes.words().max(panel)));
    }
    let taps: usize = ws.iter().skip(2).product();
    Ok(gemm::scratch_words(cg.saturating_mul(taps), true))
}

/// Scratch words a depthwise Conv needs: its channel-lanes tile on a small plane
/// ([`Lanes`], one band of rows), one padded input plane otherwise ([`Plane`]; both where it may run in place,
/// which takes the padded plane's method when the lanes' does not apply).
fn depthwise_scratch(geo: &ConvGeometry) -> usize {
    let lanes = Lanes::of(geo).map_or(0, |l| l.words());
    let plane = Plane::of(&geo.win).map_or(0, |p| p.reach.div_ceil(2));
    lanes.max(plane)
}

/// A quarter of a Conv's output, in scratch words: the most a faster method's scratch may take
/// beyond the plain method's ([`PaddedPlanes`], [`Lanes`]). The scratch is planned in the arena
/// beside the output, so a network whose arena peaks at this node grows by at most that, and
/// a small one (a stem of 8 channels at 12 x 12, whose arena is a few of its outputs) keeps
/// its arena.
fn quarter_of_output(geo: &ConvGeometry) -> usize {
    let out_plane: usize = geo.win.output.iter().product();
    (geo.n * geo.m * out_plane / 4).div_ceil(2)
}

/// The weight's ONNX shape: as given, or `[m, c / group, kernel_shape..]` for packed weights
/// (whose packed shape is checked).
fn weight_shape(
    attrs: &Attrs<'_>,
    xs: &[usize],
    ws: &[usize],
    ys: &[usize],
) -> Result<Dims, KernelError> {
    if !pack::is_packed(attrs)? {
        return collect(ws.iter().copied());
    }
    let Some(ks) = attrs.ints("kernel_shape")? else {
        bail!("packed weights need the kernel_shape attribute");
    };
    let group = usize::try_from(attrs.int("group", 1)?).unwrap_or(0);
    let (Some(&c), Some(&m)) = (xs.get(1), ys.get(1)) else {
        bail!("input {xs:?} and output {ys:?} must have channels");
    };
    let mut logical: Dims = collect([m, c.checked_div(group).unwrap_or(0)])?;
    for &k in ks {
        crate::tensor::push(&mut logical, usize::try_from(k).unwrap_or(0))?;
    }
    if pack::conv_weights_shape(&logical, group)
        .as_ref()
        .map(|s| &s[..])
        != Some(ws)
    {
        bail!("packed weight {ws:?} does not fit the weight {logical:?} in {group} groups");
    }
    Ok(logical)
}

/// The optional bias (input 2): `m` elements, one an output channel.
fn bias_of<'a>(inputs: &[Input<'a>], m: usize) -> Result<Option<&'a [f32]>, KernelError> {
    if opt_value(inputs, 2)?.is_none() {
        return Ok(None);
    }
    let (bs, b) = typed::<f32>(inputs, 2)?;
    if bs != [m] {
        bail!("bias {bs:?} must be [{m}]");
    }
    Ok(Some(b))
}

/// Whether the Conv with these attributes and shapes (input, unpacked weight, output) can run
/// with its output over its input (passed as [`Input::InPlace`]): a depthwise Conv with one
/// output channel per input channel whose output planes are the size of its input's, through
/// the scratch it has anyway (one padded input plane, [`crate::scratch_len`]). The same bits as
/// with separate buffers.
pub fn conv_runs_in_place(attrs: &Attrs<'_>, xs: &[usize], ws: &[usize], ys: &[usize]) -> bool {
    !pack::is_packed(attrs).unwrap_or(true)
        && ConvGeometry::new(attrs, xs, ws, ys)
            .ok()
            .and_then(|geo| in_place_plane(&geo))
            .is_some()
}

/// Conv.
pub(crate) fn conv(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    // The input in the output buffer (`Input::InPlace`): only a depthwise Conv runs so
    // (`conv_runs_in_place`), reading each plane before writing over it.
    let (xs, x) = match inputs.first() {
        Some(Input::InPlace { shape, .. }) => (*shape, None),
        _ => {
            let (xs, x) = typed::<f32>(inputs, 0)?;
            (xs, Some(x))
        }
    };
    let (packed_shape, w) = typed::<f32>(inputs, 1)?;
    let (ys, y) = output::<f32>(outputs, 0)?;
    let ws = weight_shape(attrs, xs, packed_shape, ys)?;
    let geo = ConvGeometry::new(attrs, xs, &ws, ys)?;
    let planes = Planes::whole(&geo);
    compute(attrs, inputs, &geo, planes, x, w, y, scratch)
}

/// Where each channel's plane starts: `x` words from one input channel's to the next's, `y`
/// from one output channel's to the next's (the planes' own sizes for whole tensors; the rows of
/// a band buffer for a band, [`band`]).
#[derive(Clone, Copy)]
struct Planes {
    x: usize,
    y: usize,
}

impl Planes {
    /// Planes one after the other.
    fn whole(geo: &ConvGeometry) -> Planes {
        Planes {
            x: geo.win.input.iter().product(),
            y: geo.win.output.iter().product(),
        }
    }

    /// Words of `count` planes of `plane` words, `stride` apart (`usize::MAX` past it: more
    /// than any slice holds).
    fn span(count: usize, stride: usize, plane: usize) -> usize {
        match count {
            0 => 0,
            _ => (count - 1).saturating_mul(stride).saturating_add(plane),
        }
    }
}

/// A Conv of checked geometry `geo` on planes laid out as `planes` says: the input `x` (`None`:
/// in the output buffer), the weights `w` as input 1 gives them, the bias (input 2), the output
/// `y`.
///
/// Always inlined into its two callers: called, its frame (the product's and the depthwise
/// methods' state) stacked on top of the caller's argument checks (on a Cortex-M4F 1.7 KiB
/// more stack at the peak of a small CNN) instead of sharing their slots.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn compute(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    geo: &ConvGeometry,
    planes: Planes,
    x: Option<&[f32]>,
    w: &[f32],
    y: &mut [f32],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    let cannot = || {
        error!(
            "this Conv cannot run in place (only a depthwise one with one output channel per input channel, output planes the size of its input's and a padded plane in its scratch can)"
        )
    };
    let act = Activation::from_attrs(attrs)?;
    let is_packed = pack::is_packed(attrs)?;
    let m = geo.m;
    let bias = bias_of(inputs, m)?;
    let in_plane: usize = geo.win.input.iter().product();
    let out_plane: usize = geo.win.output.iter().product();
    if let Some(x) = x
        && x.len() < Planes::span(geo.n * geo.c, planes.x, in_plane)
    {
        bail!("internal error: the input is shorter than its planes");
    }
    if y.len() < Planes::span(geo.n * m, planes.y, out_plane) {
        bail!("internal error: the output is shorter than its planes");
    }
    if geo.depthwise() {
        if is_packed {
            bail!("a depthwise Conv reads its weights unpacked");
        }
        let args = Depthwise {
            geo,
            planes,
            x,
            w,
            bias,
            act,
        };
        let floats: &mut [f32] = bytemuck::cast_slice_mut(scratch);
        if let Some(tile) = Lanes::of(geo).filter(|t| 2 * t.words() <= floats.len())
            && (x.is_some() || (tile.whole(geo) && in_place_plane(geo).is_some()))
        {
            return dispatch!(
                lanes_portable,
                lanes_avx2,
                lanes_avx512,
                (&args, &tile, floats, y)
            );
        }
        let plane = match x {
            Some(_) => Plane::of(&geo.win),
            None => in_place_plane(geo),
        };
        if let Some(plane) = plane.filter(|p| p.reach <= floats.len()) {
            let pad = &mut floats[..plane.reach];
            return dispatch!(
                padded_portable,
                padded_avx2,
                padded_avx512,
                (&args, &plane, pad, y)
            );
        }
        if x.is_none() {
            return Err(cannot());
        }
        return dispatch!(
            depthwise_portable,
            depthwise_avx2,
            depthwise_avx512,
            (&args, y)
        );
    }
    let x = x.ok_or_else(cannot)?;
    let win = &geo.win;
    let (c, group) = (geo.c, geo.group);
    let (cg, mg) = (c / group, m / group);
    let k = cg * geo.taps();
    let panels = mg.div_ceil(PANEL);
    let packed_rows: &[Row] = w.as_chunks::<PANEL>().0;
    let as_row;
    let direct_geo = if is_packed && geo.pointwise() {
        as_row = pointwise_as_row(geo);
        &as_row
    } else {
        geo
    };
    if is_packed
        && let Some(layout) = Direct::of(direct_geo, scratch.len())
            .filter(|l| l.fits(planes) && direct_pays(direct_geo, l))
    {
        let mut args = DirectArgs {
            geo: direct_geo,
            layout: &layout,
            planes,
            panels: packed_rows,
            x,
            bias,
            act,
            y,
        };
        dispatch!(
            direct_portable,
            direct_avx2,
            direct_avx512,
            (&mut args, scratch)
        );
        return Ok(());
    }
    if is_packed && let Some(rows) = PaddedRows::of(geo).filter(|r| r.words() <= scratch.len()) {
        return padded_rows(geo, &rows, planes, packed_rows, x, bias, act, y, scratch);
    }
    if is_packed && let Some(layout) = PaddedPlanes::of(geo).filter(|l| l.words() <= scratch.len())
    {
        return padded_planes(geo, &layout, planes, packed_rows, x, bias, act, y, scratch);
    }
    let buf = gemm::panel_buffer(scratch);
    for b in 0..geo.n {
        for g in 0..group {
            let xg = &x[(b * c + g * cg) * planes.x..][..Planes::span(cg, planes.x, in_plane)];
            let mut p = Product {
                m: mg,
                n: out_plane,
                k,
                c: &mut y[(b * m + g * mg) * planes.y..][..Planes::span(mg, planes.y, out_plane)],
                ldc: planes.y,
                bias: bias.map_or(Bias::None, |bias| Bias::Row(&bias[g * mg..][..mg])),
                act,
            };
            let a = if is_packed {
                A::Packed(&packed_rows[g * panels * k..][..panels * k])
            } else {
                A::Rows {
                    a: &w[g * mg * k..][..mg * k],
                    lda: k,
                }
            };
            if geo.pointwise() {
                // Packed weights read the input in place; unpacked ones pack it as `RowMajor`.
                let b: B<'_, RowMajor<'_>> = B::InPlace {
                    b: xg,
                    ld: planes.x,
                };
                gemm::product(&mut p, a, b, buf)?;
            } else {
                let im2col = Im2col {
                    x: xg,
                    stride: planes.x,
                    win,
                };
                gemm::product(&mut p, a, B::Pack(&im2col), buf)?;
            }
        }
    }
    Ok(())
}

/// Test weights `w` of shape `ws` packed as the build packs them for a Conv with attributes
/// `list` (its `group`): the panels and their shape.
#[cfg(test)]
fn packed_for_test(
    list: &[(&str, crate::Attr<'_>)],
    ws: &[usize],
    w: &[f32],
) -> (std::vec::Vec<f32>, std::vec::Vec<usize>) {
    let group = list
        .iter()
        .find_map(|(n, a)| match (n, a) {
            (&"group", crate::Attr::Int(g)) => Some(*g as usize),
            _ => None,
        })
        .unwrap_or(1);
    let shape = pack::conv_weights_shape(ws, group).expect("packable test weights");
    let mut out = std::vec![0.0f32; shape.iter().product()];
    pack::conv_weights(w, ws, group, &mut out).expect("packable test weights");
    (out, shape.to_vec())
}

#[cfg(test)]
mod tests {
    use crate::simd::{Level, detected, limit};
    use crate::test_values::values;
    use crate::{Attr, Attrs, Data, DataMut, Input, Output, run, scratch_len};
    use std::vec;
    use std::vec::Vec;

    /// Runs a Conv with `words` of scratch (`None`: what `scratch_len` says), filled with NaNs.
    fn conv(
        attrs: &Attrs<'_>,
        xs: &[usize],
        ws: &[usize],
        ys: &[usize],
        words: Option<usize>,
    ) -> Vec<f32> {
        conv_weighing(attrs, xs, ws, &values(ws.iter().product(), 2), ys, words)
    }

    /// [`conv`] with the weights `w` of shape `ws` (packed ones too), a bias per output channel.
    fn conv_weighing(
        attrs: &Attrs<'_>,
        xs: &[usize],
        ws: &[usize],
        w: &[f32],
        ys: &[usize],
        words: Option<usize>,
    ) -> Vec<f32> {
        let x = values(xs.iter().product(), 1);
        let b = values(ys[1], 3);
        let bs = [ys[1]];
        let inputs = [
            Input::Value {
                shape: xs,
                data: Data::F32(&x),
            },
            Input::Value {
                shape: ws,
                data: Data::F32(w),
            },
            Input::Value {
                shape: &bs,
                data: Data::F32(&b),
            },
        ];
        let words = words.unwrap_or_else(|| {
            scratch_len("Conv", attrs, &[Some(xs), Some(ws), Some(&bs)], &[ys]).unwrap()
        });
        // Scratch full of NaNs: a kernel that read a word it did not write would show it.
        let mut scratch = vec![0x7fc0_0000_7fc0_0000u64; words];
        let mut y = vec![f32::NAN; ys.iter().product()];
        let mut outputs = [Output {
            shape: ys,
            data: DataMut::F32(&mut y),
        }];
        run("Conv", attrs, &inputs, &mut outputs, &mut scratch).unwrap();
        y
    }

    /// The padded-plane depthwise method gives the bits of the direct one (finite weights: the
    /// padding's zero products change no sum), at every level.
    #[test]
    #[allow(clippy::type_complexity)]
    fn depthwise_methods_agree() {
        let cases: [(&[(&str, Attr<'_>)], [usize; 4], [usize; 4], [usize; 4]); 12] = [
            // A 3x3 stride-2 window to 14 x 14 (the channel-lanes method, `STRIDED_PLANE`, in
            // bands of output rows), a last block of 2 channels.
            (
                &[
                    ("group", Attr::Int(66)),
                    ("pads", Attr::Ints(&[1, 1, 1, 1])),
                    ("strides", Attr::Ints(&[2, 2])),
                    ("activation", Attr::Str("Relu")),
                ],
                [1, 66, 28, 28],
                [66, 1, 3, 3],
                [1, 66, 14, 14],
            ),
            // An input with no columns: the outputs are the padding's, the bias alone.
            (
                &[("group", Attr::Int(2)), ("pads", Attr::Ints(&[0, 1, 0, 1]))],
                [1, 2, 3, 0],
                [2, 1, 1, 1],
                [1, 2, 3, 2],
            ),
            // Narrow rows: a few blocks span the whole plane.
            (
                &[("group", Attr::Int(4)), ("pads", Attr::Ints(&[1, 1, 1, 1]))],
                [1, 4, 25, 5],
                [4, 1, 3, 3],
                [1, 4, 25, 5],
            ),
            // Vertical and horizontal strides that differ, an odd right padding.
            (
                &[
                    ("group", Attr::Int(3)),
                    ("pads", Attr::Ints(&[1, 0, 2, 3])),
                    ("strides", Attr::Ints(&[2, 1])),
                    ("dilations", Attr::Ints(&[1, 2])),
                ],
                [1, 3, 11, 9],
                [3, 1, 3, 3],
                [1, 3, 6, 8],
            ),
            (
                &[
                    ("group", Attr::Int(2)),
                    ("pads", Attr::Ints(&[2, 1, 0, 2])),
                    ("strides", Attr::Ints(&[3, 2])),
                    ("activation", Attr::Str("Clip")),
                    ("activation_params", Attr::Floats(&[-0.5, 0.75])),
                ],
                [1, 2, 13, 7],
                [4, 1, 4, 2],
                [1, 4, 4, 5],
            ),
            // More outputs than one block of 128, rows far narrower than a vector.
            (
                &[("group", Attr::Int(2)), ("pads", Attr::Ints(&[0, 1, 0, 1]))],
                [1, 2, 70, 3],
                [2, 1, 5, 3],
                [1, 2, 66, 3],
            ),
            (
                &[
                    ("group", Attr::Int(4)),
                    ("pads", Attr::Ints(&[0, 0, 1, 1])),
                    ("strides", Attr::Ints(&[2, 2])),
                    ("activation", Attr::Str("HardSwish")),
                ],
                [1, 4, 20, 34],
                [4, 1, 3, 3],
                [1, 4, 10, 17],
            ),
            (
                &[("group", Attr::Int(8)), ("pads", Attr::Ints(&[1, 1, 1, 1]))],
                [1, 8, 19, 21],
                [8, 1, 3, 3],
                [1, 8, 19, 21],
            ),
            (
                &[
                    ("group", Attr::Int(4)),
                    ("pads", Attr::Ints(&[0, 1, 2, 1])),
                    ("strides", Attr::Ints(&[2, 2])),
                ],
                [2, 4, 17, 33],
                [4, 1, 3, 3],
                [2, 4, 9, 17],
            ),
            (
                &[
                    ("group", Attr::Int(3)),
                    ("pads", Attr::Ints(&[2, 2, 2, 2])),
                    ("dilations", Attr::Ints(&[2, 2])),
                    ("activation", Attr::Str("Relu")),
                ],
                [1, 3, 9, 40],
                [6, 1, 3, 3],
                [1, 6, 9, 40],
            ),
            (
                &[
                    ("group", Attr::Int(5)),
                    ("pads", Attr::Ints(&[2, 2, 2, 2])),
                    ("strides", Attr::Ints(&[3, 3])),
                ],
                [1, 5, 14, 50],
                [5, 1, 5, 5],
                [1, 5, 5, 17],
            ),
            (
                &[
                    ("group", Attr::Int(2)),
                    ("auto_pad", Attr::Str("SAME_UPPER")),
                ],
                [1, 2, 6, 16],
                [2, 1, 4, 4],
                [1, 2, 6, 16],
            ),
        ];
        let strided = super::ConvGeometry::new(
            &Attrs::new(cases[0].0),
            &cases[0].1,
            &cases[0].2,
            &cases[0].3,
        );
        assert!(
            strided
                .ok()
                .and_then(|geo| super::Lanes::of(&geo))
                .is_some()
        );
        for (attrs, xs, ws, ys) in cases {
            let attrs = Attrs::new(attrs);
            let direct = conv(&attrs, &xs, &ws, &ys, Some(0));
            for level in [Level::Portable, Level::Avx2, Level::Avx512] {
                if level > detected() {
                    continue;
                }
                limit(level);
                let padded = conv(&attrs, &xs, &ws, &ys, None);
                for (a, b) in padded.iter().zip(&direct) {
                    assert_eq!(a.to_bits(), b.to_bits(), "{xs:?} {ws:?} at {level:?}");
                }
                // Written over its input where it can: the same bits.
                let can = crate::conv_runs_in_place(&attrs, &xs, &ws, &ys);
                assert_eq!(
                    can,
                    ws[0] == xs[1] && xs[2..] == ys[2..],
                    "{xs:?} {ws:?} {ys:?}"
                );
                if can {
                    let over = conv_in_place(&attrs, &xs, &ws, &ys);
                    for (a, b) in over.iter().zip(&direct) {
                        assert_eq!(a.to_bits(), b.to_bits(), "in place {xs:?} at {level:?}");
                    }
                }
            }
            limit(Level::Avx512);
        }
    }

    /// [`conv`] with the input in the output buffer (`Input::InPlace`).
    fn conv_in_place(attrs: &Attrs<'_>, xs: &[usize], ws: &[usize], ys: &[usize]) -> Vec<f32> {
        let mut y = values(xs.iter().product(), 1);
        let w = values(ws.iter().product(), 2);
        let b = values(ws[0], 3);
        let bs = [ws[0]];
        let inputs = [
            Input::InPlace {
                output: 0,
                shape: xs,
            },
            Input::Value {
                shape: ws,
                data: Data::F32(&w),
            },
            Input::Value {
                shape: &bs,
                data: Data::F32(&b),
            },
        ];
        let words = scratch_len("Conv", attrs, &[Some(xs), Some(ws), Some(&bs)], &[ys]).unwrap();
        let mut scratch = vec![0x7fc0_0000_7fc0_0000u64; words];
        let mut outputs = [Output {
            shape: ys,
            data: DataMut::F32(&mut y),
        }];
        run("Conv", attrs, &inputs, &mut outputs, &mut scratch).unwrap();
        y
    }

    /// One case of [`im2col_panels_are_the_im2col_matrix`]: spatial input sizes, kernel sizes,
    /// strides, dilations, pads (begin then end).
    type WindowCase<'a> = (&'a [usize], &'a [usize], &'a [i64], &'a [i64], &'a [i64]);

    /// Every panel `Im2col` packs is its part of the im2col matrix: row `ci * taps + tap`,
    /// column `pixel`, the input that tap reads for that pixel, 0 in the padding and in the
    /// columns past the panel's width; over 1 to 3 spatial dimensions, pads, strides, dilations,
    /// output rows narrower and wider than a panel, chunks of `k` that start inside a channel.
    #[test]
    fn im2col_panels_are_the_im2col_matrix() {
        use super::Im2col;
        use crate::gemm::{PANEL, Panel, Row};
        use crate::spatial::Window;
        let cases: [WindowCase<'_>; 9] = [
            (&[5, 7], &[3, 3], &[1, 1], &[1, 1], &[1, 1, 1, 1]),
            (&[9, 8], &[3, 3], &[2, 2], &[1, 1], &[1, 0, 0, 1]),
            (&[6, 20], &[2, 3], &[1, 1], &[2, 1], &[0, 0, 0, 0]),
            (&[40], &[5], &[3], &[1], &[2, 2]),
            (
                &[3, 4, 5],
                &[2, 2, 2],
                &[1, 1, 1],
                &[1, 1, 1],
                &[1, 1, 1, 1, 1, 1],
            ),
            (&[11, 11], &[7, 7], &[2, 2], &[1, 1], &[3, 3, 3, 3]),
            (&[6, 6], &[1, 1], &[2, 2], &[1, 1], &[0, 0, 0, 0]),
            (&[2, 3], &[5, 5], &[1, 1], &[1, 1], &[2, 2, 2, 2]),
            (&[4, 37], &[3, 3], &[1, 3], &[1, 2], &[0, 5, 2, 1]),
        ];
        let channels = 3;
        for (input, kernel, strides, dilations, pads) in cases {
            let r = input.len();
            let given: Vec<usize> = (0..r)
                .map(|i| {
                    let span = (kernel[i] - 1) * dilations[i] as usize + 1;
                    let padded = input[i] + (pads[i] + pads[i + r]) as usize;
                    (padded - span) / strides[i] as usize + 1
                })
                .collect();
            let list = [
                ("strides", Attr::Ints(strides)),
                ("dilations", Attr::Ints(dilations)),
                ("pads", Attr::Ints(pads)),
            ];
            let win = Window::new(&Attrs::new(&list), input, kernel, false, &given)
                .unwrap()
                .to_3d();
            let plane: usize = input.iter().product();
            // Distinct non-zero values: an input read from the wrong place shows.
            let x: Vec<f32> = (0..channels * plane).map(|i| i as f32 + 1.0).collect();
            let im2col = Im2col {
                x: &x,
                stride: plane,
                win: &win,
            };
            let taps: usize = kernel.iter().product();
            let (k, n) = (channels * taps, given.iter().product::<usize>());
            let want = |row: usize, col: usize| -> f32 {
                let (ci, t) = (row / taps, row % taps);
                let tap = [
                    t / (win.kernel[1] * win.kernel[2]),
                    (t / win.kernel[2]) % win.kernel[1],
                    t % win.kernel[2],
                ];
                let (ow, oh) = (win.output[2], win.output[1]);
                let out = [col / (ow * oh), (col / ow) % oh, col % ow];
                let mut at = 0;
                for d in 0..3 {
                    match win.source(d, out[d], tap[d]) {
                        Some(i) => at = at * win.input[d] + i,
                        None => return 0.0,
                    }
                }
                x[ci * plane + at]
            };
            for chunk in [k, 5, taps + 1] {
                for n0 in (0..n).step_by(PANEL) {
                    let w = PANEL.min(n - n0);
                    for nr in [w, PANEL] {
                        let mut k0 = 0;
                        while k0 < k {
                            let kc = chunk.min(k - k0);
                            let mut dst: Vec<Row> = vec![[f32::NAN; PANEL]; kc];
                            im2col.pack(k0, n0, w, nr, &mut dst);
                            for (i, row) in dst.iter().enumerate() {
                                for (j, &got) in row[..nr].iter().enumerate() {
                                    let want = if j < w { want(k0 + i, n0 + j) } else { 0.0 };
                                    assert_eq!(
                                        got.to_bits(),
                                        want.to_bits(),
                                        "{input:?} {kernel:?} s{strides:?} d{dilations:?} \
                                         p{pads:?}: row {} col {}",
                                        k0 + i,
                                        n0 + j
                                    );
                                }
                            }
                            k0 += kc;
                        }
                    }
                }
            }
        }
    }

    /// A pointwise Conv with packed weights (the product reading its input in place: wide
    /// tiles for a short `k` at AVX-512, the full tiles otherwise) gives the bits of the same
    /// weights unpacked, at every level: whole and partial pairs of 16 columns, a panel of
    /// output channels and part of one, groups, `k` on either side of the wide tiles' limit.
    #[test]
    #[allow(clippy::type_complexity)]
    fn pointwise_gives_the_im2col_bits() {
        let cases: [(
            &[(&str, crate::Attr<'_>)],
            [usize; 4],
            [usize; 4],
            [usize; 4],
        ); 8] = [
            (
                &[("activation", crate::Attr::Str("Relu"))],
                [1, 24, 9, 9],
                [20, 24, 1, 1],
                [1, 20, 9, 9],
            ),
            (&[], [1, 16, 8, 12], [32, 16, 1, 1], [1, 32, 8, 12]),
            (&[], [1, 130, 4, 10], [16, 130, 1, 1], [1, 16, 4, 10]),
            (
                &[("group", crate::Attr::Int(2))],
                [2, 8, 6, 8],
                [16, 4, 1, 1],
                [2, 16, 6, 8],
            ),
            // The direct method: a batch of 3 x 3 planes, a pair of panels and part of one.
            (
                &[("activation", crate::Attr::Str("Relu"))],
                [2, 24, 3, 3],
                [40, 24, 1, 1],
                [2, 40, 3, 3],
            ),
            // The direct method for 200 input channels on 13 x 13 (little waste).
            (&[], [1, 200, 13, 13], [20, 200, 1, 1], [1, 20, 13, 13]),
            (
                &[("group", crate::Attr::Int(2))],
                [1, 16, 5, 5],
                [8, 8, 1, 1],
                [1, 8, 5, 5],
            ),
            // Too many steps for the stack: the product.
            (&[], [1, 2100, 2, 2], [3, 2100, 1, 1], [1, 3, 2, 2]),
        ];
        for (list, xs, ws, ys) in cases {
            crate::conv::rows::tests::packed_gives_the_im2col_bits(list, xs, ws, ys);
        }
    }

    /// Which pointwise Convs the direct method takes (AVX-512, where the rule was measured):
    /// planes that waste a fifth of the product's last tile, or 192 input channels or more on
    /// a plane not a multiple of 16 pixels; never a plane of whole tiles, nor more steps than
    /// the stack holds.
    #[cfg(target_arch = "x86_64")]
    /// A chain activation (Sigmoid, SiLU, GELU: applied once a tile, a plane or a block of
    /// lanes is stored, not in the sums' registers) gives the bits of the Conv without it
    /// followed by the activation, in every method (the products' tiles with the weights
    /// packed or not, the padded rows, im2col, the direct method, the depthwise plane and
    /// lanes), at every level.
    #[test]
    #[allow(clippy::type_complexity)]
    fn chain_activations_equal_the_activation_after_the_conv() {
        use crate::activation::Activation;
        let cases: [(&[(&str, Attr<'_>)], [usize; 4], [usize; 4], [usize; 4]); 9] = [
            (&[], [1, 16, 12, 12], [64, 16, 1, 1], [1, 64, 12, 12]),
            (&[], [1, 24, 5, 7], [40, 24, 1, 1], [1, 40, 5, 7]),
            (&[], [1, 7, 1, 1], [33, 7, 1, 1], [1, 33, 1, 1]),
            (
                &[("pads", Attr::Ints(&[1, 1, 1, 1]))],
                [1, 16, 10, 10],
                [32, 16, 3, 3],
                [1, 32, 10, 10],
            ),
            (
                &[
                    ("pads", Attr::Ints(&[1, 1, 1, 1])),
                    ("strides", Attr::Ints(&[2, 2])),
                ],
                [1, 3, 17, 17],
                [16, 3, 3, 3],
                [1, 16, 9, 9],
            ),
            (
                &[("pads", Attr::Ints(&[1, 1, 1, 1]))],
                [1, 64, 8, 8],
                [32, 64, 3, 3],
                [1, 32, 8, 8],
            ),
            (
                &[("pads", Attr::Ints(&[0, 1, 0, 1]))],
                [1, 64, 1, 50],
                [64, 64, 1, 3],
                [1, 64, 1, 50],
            ),
            (
                &[("group", Attr::Int(8)), ("pads", Attr::Ints(&[1, 1, 1, 1]))],
                [1, 8, 24, 24],
                [8, 1, 3, 3],
                [1, 8, 24, 24],
            ),
            (
                &[
                    ("group", Attr::Int(66)),
                    ("pads", Attr::Ints(&[1, 1, 1, 1])),
                    ("strides", Attr::Ints(&[2, 2])),
                ],
                [1, 66, 28, 28],
                [66, 1, 3, 3],
                [1, 66, 14, 14],
            ),
        ];
        let chains: [(&str, &[f32], Activation); 3] = [
            ("Sigmoid", &[], Activation::Sigmoid),
            ("Silu", &[], Activation::Silu),
            (
                "ErfGelu",
                &[core::f32::consts::SQRT_2, 1.0, 0.5],
                Activation::ErfGelu(core::f32::consts::SQRT_2, 1.0, 0.5),
            ),
        ];
        for (list, xs, ws, ys) in cases {
            for level in [Level::Portable, Level::Avx2, Level::Avx512] {
                if level > detected() {
                    continue;
                }
                limit(level);
                for packed in [false, true] {
                    // The build leaves a depthwise Conv's weights unpacked.
                    if packed && group_of(list) == xs[1] && xs[1] > 1 {
                        continue;
                    }
                    let mut plain = conv_maybe_packed(list, &xs, &ws, &ys, packed);
                    for (name, params, act) in chains {
                        let mut with: Vec<(&str, Attr<'_>)> = list.to_vec();
                        with.push(("activation", Attr::Str(name)));
                        if !params.is_empty() {
                            with.push(("activation_params", Attr::Floats(params)));
                        }
                        let fused = conv_maybe_packed(&with, &xs, &ws, &ys, packed);
                        let mut after = plain.clone();
                        act.apply(&mut after);
                        for (i, (a, b)) in fused.iter().zip(&after).enumerate() {
                            assert_eq!(
                                a.to_bits(),
                                b.to_bits(),
                                "{name} {xs:?} {ws:?} packed {packed} at {level:?}, element {i}"
                            );
                        }
                    }
                    plain.clear();
                }
            }
            limit(Level::Avx512);
        }
    }

    /// The `group` attribute of `list` (1 when absent).
    fn group_of(list: &[(&str, Attr<'_>)]) -> usize {
        list.iter()
            .find_map(|(n, a)| match (n, a) {
                (&"group", Attr::Int(g)) => Some(*g as usize),
                _ => None,
            })
            .unwrap_or(1)
    }

    /// A Conv with attributes `list`, its weights packed as the build packs them or not.
    fn conv_maybe_packed(
        list: &[(&str, Attr<'_>)],
        xs: &[usize],
        ws: &[usize],
        ys: &[usize],
        packed: bool,
    ) -> Vec<f32> {
        if !packed {
            return conv(&Attrs::new(list), xs, ws, ys, None);
        }
        let w = values(ws.iter().product(), 2);
        let (pw, ps) = super::packed_for_test(list, ws, &w);
        let kernel = [ws[2] as i64, ws[3] as i64];
        let mut with: Vec<(&str, Attr<'_>)> = list.to_vec();
        with.push(("packed", Attr::Int(16)));
        with.push(("kernel_shape", Attr::Ints(&kernel)));
        conv_weighing(&Attrs::new(&with), xs, &ps, &pw, ys, None)
    }

    #[test]
    fn pointwise_convs_take_the_direct_method_where_tiles_waste_lanes() {
        use super::{ConvGeometry, Direct, direct_pays, pointwise_as_row};
        use crate::simd::{Level, detected, limit};
        if detected() < Level::Avx512 {
            return;
        }
        limit(Level::Avx512);
        let direct = |c: usize, m: usize, hw: [usize; 2]| {
            let attrs = Attrs::new(&[]);
            let (xs, ws, ys) = ([1, c, hw[0], hw[1]], [m, c, 1, 1], [1, m, hw[0], hw[1]]);
            let geo = ConvGeometry::new(&attrs, &xs, &ws, &ys).unwrap();
            let row = pointwise_as_row(&geo);
            assert_eq!(row.win.output.iter().product::<usize>(), hw[0] * hw[1]);
            Direct::of(&row, 0).is_some_and(|l| direct_pays(&row, &l))
        };
        assert!(direct(256, 256, [3, 3]));
        assert!(direct(64, 64, [5, 5]));
        assert!(direct(576, 96, [7, 7]));
        assert!(direct(512, 1000, [13, 13]));
        assert!(direct(576, 96, [14, 14]));
        assert!(!direct(96, 576, [14, 14]));
        assert!(!direct(128, 16, [55, 55]));
        assert!(!direct(512, 1000, [16, 16]));
        assert!(!direct(128, 128, [8, 8]));
        assert!(!direct(2100, 16, [3, 3]));
        assert!(!direct(96, 24, [1, 1]));
        assert!(direct(64, 64, [2, 1]));
    }
}
