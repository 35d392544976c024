//! Conv: N-D convolution (1 to 3 spatial dimensions) with groups (depthwise included), strides,
//! pads, dilations, `auto_pad`, an optional bias and an optional fused activation
//! ([`crate::activation`]).
//!
//! Three methods, by shape:
//!
//! - **depthwise** (`group` = input channels > 1, one input channel per group): each input
//!   plane copied once into the node's scratch with its padding and split by stride into
//!   phases ([`Plane`]), so that every tap reads one run of consecutive words for all of a
//!   channel's outputs, across rows too: blocks of 128 outputs summed in registers, however
//!   narrow the rows (a 25 x 5 plane is two blocks). Each element sums its taps in the order
//!   (kh, kw), the padding's zeros included, then adds the bias. Too large a plane or a 3-D
//!   window computes directly, output row by output row, skipping the padding: the same bits.
//! - **pointwise** (1x1 kernel, stride 1, no padding): per group, a matrix product
//!   ([`crate::gemm`]) of the weights (`out channels x in channels`) by the input itself
//!   (`in channels x pixels`).
//! - **everything else**: the same product with the input seen through the window (im2col), one
//!   panel of `k` rows x a few output pixels at a time, copied into the scratch the product packs
//!   into anyway: no im2col matrix is ever built.
//!
//! In the products every output element sums its products in increasing `(input channel, kd,
//! kh, kw)`, padding included as zeros, then adds the bias and applies the activation.

use crate::activation::Activation;
use crate::attrs::Attrs;
use crate::error::{KernelError, bail};
use crate::gemm::{self, A, B, Bias, PANEL, Panel, Product, Row, RowMajor};
use crate::pack;
use crate::simd::dispatch;
use crate::spatial::{ConvGeometry, Window};
use crate::tensor::{Dims, Input, Output, collect, opt_value, output, typed};
use arrayvec::ArrayVec;

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
        return Ok(Plane::of(&geo.win).map_or(0, |p| p.reach.div_ceil(2)));
    }
    if packed(attrs)? {
        let Some(ys) = output_shapes.first() else {
            return Ok(0);
        };
        if ConvGeometry::new(attrs, xs, &weight_shape(attrs, xs, ws, ys)?, ys)?.pointwise() {
            // The product reads the input in place.
            return Ok(0);
        }
        // [group, panels, k, 16]: only B is packed at run time.
        return Ok(gemm::scratch_words(ws.get(2).copied().unwrap_or(1), true));
    }
    let taps: usize = ws.iter().skip(2).product();
    Ok(gemm::scratch_words(cg.saturating_mul(taps), true))
}

/// Whether the node's weights are packed (`packed = 16`).
fn packed(attrs: &Attrs<'_>) -> Result<bool, KernelError> {
    match attrs.int("packed", 0)? {
        0 => Ok(false),
        p if p == PANEL as i64 => Ok(true),
        p => bail!("packed = {p} is not supported (the panels are {PANEL} wide)"),
    }
}

/// The weight's ONNX shape: as given, or `[m, c / group, kernel_shape..]` for packed weights
/// (whose packed shape is checked).
fn weight_shape(
    attrs: &Attrs<'_>,
    xs: &[usize],
    ws: &[usize],
    ys: &[usize],
) -> Result<Dims, KernelError> {
    if !packed(attrs)? {
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

/// Conv.
pub(crate) fn conv(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    let (xs, x) = typed::<f32>(inputs, 0)?;
    let (packed_shape, w) = typed::<f32>(inputs, 1)?;
    let bias = match opt_value(inputs, 2)? {
        None => None,
        Some(_) => Some(typed::<f32>(inputs, 2)?),
    };
    let act = Activation::from_attrs(attrs)?;
    let (ys, y) = output::<f32>(outputs, 0)?;
    let ws = weight_shape(attrs, xs, packed_shape, ys)?;
    let is_packed = packed(attrs)?;
    let geo = ConvGeometry::new(attrs, xs, &ws, ys)?;
    let m = geo.m;
    if let Some((bs, _)) = bias
        && bs != [m]
    {
        bail!("bias {bs:?} must be [{m}]");
    }
    let bias = bias.map(|(_, b)| b);
    if geo.depthwise() {
        if is_packed {
            bail!("a depthwise Conv reads its weights unpacked");
        }
        let args = Depthwise {
            geo: &geo,
            x,
            w,
            bias,
            act,
        };
        let floats: &mut [f32] = bytemuck::cast_slice_mut(scratch);
        if let Some(plane) = Plane::of(&geo.win).filter(|p| p.reach <= floats.len()) {
            let pad = &mut floats[..plane.reach];
            return dispatch!(
                padded_portable,
                padded_avx2,
                padded_avx512,
                (&args, &plane, pad, y)
            );
        }
        return dispatch!(
            depthwise_portable,
            depthwise_avx2,
            depthwise_avx512,
            (&args, y)
        );
    }
    let win = &geo.win;
    let (c, group) = (geo.c, geo.group);
    let (cg, mg) = (c / group, m / group);
    let in_plane: usize = win.input.iter().product();
    let out_plane: usize = win.output.iter().product();
    let k = cg * geo.taps();
    let panels = mg.div_ceil(PANEL);
    let packed_rows: &[Row] = w.as_chunks::<PANEL>().0;
    let buf = gemm::panel_buffer(scratch);
    for b in 0..geo.n {
        for g in 0..group {
            let xg = &x[(b * c + g * cg) * in_plane..][..cg * in_plane];
            let mut p = Product {
                m: mg,
                n: out_plane,
                k,
                c: &mut y[(b * m + g * mg) * out_plane..][..mg * out_plane],
                ldc: out_plane,
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
                    ld: in_plane,
                };
                gemm::product(&mut p, a, b, buf)?;
            } else {
                gemm::product(&mut p, a, B::Pack(&Im2col { x: xg, win }), buf)?;
            }
        }
    }
    Ok(())
}

/// `B` of a Conv as a product: row `(input channel, kd, kh, kw)`, column = output pixel, the
/// input element that tap reads for that pixel (zero in the padding).
struct Im2col<'a> {
    /// The group's input channels, one plane after the other.
    x: &'a [f32],
    win: &'a Window,
}

/// One run of a panel's columns (consecutive outputs along one output row) as one tap sees
/// them: `before` zeros (the tap lies in the padding left of the input), `copied` inputs from
/// `src` (an index into the input channel's plane) on, then zeros up to `len`.
#[derive(Clone, Copy, Default)]
struct Gather {
    /// The run's first column in the panel.
    j: usize,
    before: usize,
    copied: usize,
    len: usize,
    src: usize,
}

impl Panel for Im2col<'_> {
    /// Tap by tap: where a tap's inputs lie for the panel's columns depends on the tap only, not
    /// on the input channel, so it is worked out once per tap (a few divisions) and then used for
    /// every input channel's row of that tap, each a short copy from the channel's plane.
    fn pack(&self, k0: usize, n0: usize, w: usize, nr: usize, dst: &mut [Row]) {
        let win = self.win;
        let [kd, kh, kw] = [win.kernel[0], win.kernel[1], win.kernel[2]];
        let [ih, iw] = [win.input[1], win.input[2]];
        let [oh, ow] = [win.output[1], win.output[2]];
        let in_plane = win.input[0] * ih * iw;
        let sw = win.strides[2];
        let taps = kd * kh * kw;
        // The panel's columns as runs along output rows: (first column, depth, row, first x, length).
        let mut runs = [(0usize, 0usize, 0usize, 0usize, 0usize); PANEL];
        let mut count = 0;
        let mut j = 0;
        while j < w && count < PANEL {
            let pos = n0 + j;
            let (xo, yo, zo) = (pos % ow, (pos / ow) % oh, pos / (ow * oh));
            let len = (ow - xo).min(w - j);
            runs[count] = (j, zo, yo, xo, len);
            count += 1;
            j += len;
        }
        let runs = &runs[..count];
        let end = k0 + dst.len();
        let mut gathers = [Gather::default(); PANEL];
        for t in 0..taps {
            // Row `ci * taps + t` is input channel `ci`'s row of tap `t`: the first in the chunk.
            let first_ci = k0.saturating_sub(t).div_ceil(taps);
            let mut r = first_ci * taps + t;
            if r >= end {
                continue;
            }
            let (td, th, tw) = (t / (kh * kw), (t / kw) % kh, t % kw);
            // Output columns whose tap `tw` is inside the input.
            let cols = win.valid_outputs(2, tw);
            for (g, &(j, zo, yo, xo, len)) in gathers.iter_mut().zip(runs) {
                *g = Gather {
                    j,
                    before: len,
                    copied: 0,
                    len,
                    src: 0,
                };
                if let (Some(zi), Some(yi)) = (win.source(0, zo, td), win.source(1, yo, th)) {
                    let lo = cols.start.clamp(xo, xo + len);
                    let hi = cols.end.clamp(lo, xo + len);
                    if let (true, Some(first)) = (hi > lo, win.source(2, lo, tw)) {
                        g.before = lo - xo;
                        g.copied = hi - lo;
                        g.src = (zi * ih + yi) * iw + first;
                    }
                }
            }
            let gathers = &gathers[..count];
            let mut plane_at = first_ci * in_plane;
            while r < end {
                let plane = &self.x[plane_at..][..in_plane];
                let row = &mut dst[r - k0];
                zero_short(&mut row[w..nr]);
                for g in gathers {
                    let seg = &mut row[g.j..g.j + g.len];
                    let (before, rest) = seg.split_at_mut(g.before);
                    let (copied, after) = rest.split_at_mut(g.copied);
                    zero_short(before);
                    zero_short(after);
                    if sw == 1 {
                        copy_short(copied, &plane[g.src..][..g.copied]);
                    } else {
                        let from = plane[g.src..].iter().step_by(sw);
                        for (o, &v) in copied.iter_mut().zip(from) {
                            *o = v;
                        }
                    }
                }
                r += taps;
                plane_at += in_plane;
            }
        }
    }
}

/// `dst.copy_from_slice(src)` for at most two vectors of eight, as fixed-size (overlapping)
/// copies the compiler inlines as vector moves, where `copy_from_slice` of a length it does not
/// know would call `memcpy`.
#[inline(always)]
fn copy_short(dst: &mut [f32], src: &[f32]) {
    let n = dst.len();
    if (8..=16).contains(&n) {
        dst[..8].copy_from_slice(&src[..8]);
        dst[n - 8..].copy_from_slice(&src[n - 8..n]);
    } else if (4..8).contains(&n) {
        dst[..4].copy_from_slice(&src[..4]);
        dst[n - 4..].copy_from_slice(&src[n - 4..n]);
    } else {
        dst.copy_from_slice(src);
    }
}

/// `dst.fill(0.0)` for a few words (the padding of a panel's row), without a call.
#[inline(always)]
fn zero_short(dst: &mut [f32]) {
    let n = dst.len();
    if (8..=16).contains(&n) {
        dst[..8].fill(0.0);
        dst[n - 8..].fill(0.0);
    } else if n < 8 {
        for d in dst {
            *d = 0.0;
        }
    } else {
        dst.fill(0.0);
    }
}

/// Output elements a depthwise Conv sums in one vector of registers (one AVX-512 vector).
const DW_COLS: usize = 16;
/// Vectors of sums a block of the padded depthwise method keeps in registers.
const DW_CHUNKS: usize = 8;
/// The widest and tallest kernel the padded depthwise method takes (a larger one computes
/// directly).
const MAX_DW_K: usize = 32;

/// A depthwise Conv's operands.
struct Depthwise<'a> {
    geo: &'a ConvGeometry,
    x: &'a [f32],
    w: &'a [f32],
    bias: Option<&'a [f32]>,
    act: Activation,
}

/// A depthwise Conv's input plane with its padding, in the node's scratch, split by stride into
/// phases so that every tap reads consecutive words for consecutive outputs, across rows too:
///
/// - each padded row is split by column into `stride` phases (column `x` at `x / stride` of
///   phase `x % stride`), which makes a row `row_len` words;
/// - the padded rows are split the same way by the vertical stride (row `r` is row `r / sh` of
///   row phase `r % sh`, each row phase `phase_rows` rows).
///
/// Output `(yo, xo)` then reads tap `(th, tw)` at `rows[th] + cols[tw] + yo * row_len + xo`
/// ([`Taps`]): the outputs, numbered `q = yo * row_len + xo` (the columns `ow..row_len` of each
/// row computed and thrown away), are one run of consecutive words per tap.
struct Plane {
    /// Padded columns (at least what the window reads).
    cols: usize,
    /// Horizontal and vertical strides, and each row phase's rows.
    stride: usize,
    row_stride: usize,
    phase_rows: usize,
    /// Zeros before the first input row and column.
    top: usize,
    left: usize,
    /// Where each tap reads output `(0, 0)`.
    taps: Taps,
    /// Words the outputs' runs read, from the plane's start: the plane and a slack after it.
    reach: usize,
}

impl Plane {
    /// The plane of a 1-D or 2-D window (a 3-D one computes directly).
    fn of(win: &Window) -> Option<Plane> {
        if win.input[0] != 1 || win.kernel[0] != 1 || win.output[0] != 1 {
            return None;
        }
        if win.kernel[1] > MAX_DW_K || win.kernel[2] > MAX_DW_K || win.output.contains(&0) {
            return None;
        }
        let read = |i: usize| {
            (win.output[i] - 1) * win.strides[i] + (win.kernel[i] - 1) * win.dilations[i] + 1
        };
        let rows = (win.input[1] + win.pad_begin[1] + win.pad_end[1]).max(read(1));
        let cols = (win.input[2] + win.pad_begin[2] + win.pad_end[2]).max(read(2));
        let (stride, row_stride) = (win.strides[2], win.strides[1]);
        let mut plane = Plane {
            cols,
            stride,
            row_stride,
            phase_rows: rows.div_ceil(row_stride),
            top: win.pad_begin[1],
            left: win.pad_begin[2],
            taps: Taps::default(),
            reach: 0,
        };
        plane.taps = Taps::of(&plane, win);
        // The phases' taps are not ordered by (th, tw): the largest start of all.
        let widest =
            plane.taps.rows.iter().max().unwrap_or(&0) + plane.taps.cols.iter().max().unwrap_or(&0);
        let outputs = (win.output[1] - 1) * plane.row_len() + win.output[2];
        plane.reach = plane.len().max(widest + outputs.next_multiple_of(DW_COLS));
        // At most 4 Mi floats (16 MiB): a larger plane computes directly.
        (plane.reach <= 1 << 22).then_some(plane)
    }

    /// Words of each column phase of a stored row.
    fn phase(&self) -> usize {
        self.cols.div_ceil(self.stride)
    }

    /// Words per stored row: every column phase padded to the same length.
    fn row_len(&self) -> usize {
        self.phase() * self.stride
    }

    /// Words of the plane itself.
    fn len(&self) -> usize {
        self.row_stride * self.phase_rows * self.row_len()
    }

    /// Copies `plane` (`ih x iw`) into `pad`, over the input's words only: the padding and the
    /// slack keep the zeros `pad` was cleared to, since every channel's input lies at the same
    /// words.
    fn fill(&self, plane: &[f32], ih: usize, iw: usize, pad: &mut [f32]) {
        let (rl, phase) = (self.row_len(), self.phase());
        if iw == 0 {
            // An empty input (padding only): nothing to copy.
            return;
        }
        let (lo, hi) = (self.left, self.left + iw);
        // Padded row `top + yi` is row `(top + yi) / sh` of row phase `(top + yi) % sh`,
        // counted on rather than divided.
        let (mut row_phase, mut row) = (self.top % self.row_stride, self.top / self.row_stride);
        for src in plane.chunks_exact(iw).take(ih) {
            let at = (row_phase * self.phase_rows + row) * rl;
            let dst = &mut pad[at..at + rl];
            row_phase += 1;
            if row_phase == self.row_stride {
                row_phase = 0;
                row += 1;
            }
            if self.stride == 1 {
                copy_short(&mut dst[lo..hi], src);
            } else if self.stride == 2 {
                // Padded column `p` goes to `p / 2` of phase `p % 2`: the columns in pairs.
                let (q0, q1) = (lo.div_ceil(2), (hi - 1) / 2);
                let (even, odd) = dst.split_at_mut(phase);
                if q1 > q0 {
                    let pairs = &src[2 * q0 - lo..][..2 * (q1 - q0)];
                    let (e, o) = (&mut even[q0..q1], &mut odd[q0..q1]);
                    for ((pair, e), o) in pairs.chunks_exact(2).zip(e).zip(o) {
                        *e = pair[0];
                        *o = pair[1];
                    }
                }
                let inner = if q1 > q0 { 2 * q0..2 * q1 } else { lo..lo };
                for p in (lo..hi).filter(|p| !inner.contains(p)) {
                    let v = src[p - lo];
                    if p % 2 == 0 {
                        even[p / 2] = v;
                    } else {
                        odd[p / 2] = v;
                    }
                }
            } else {
                // Column `left + x` goes to phase `(left + x) % stride`, at `(left + x) / stride`:
                // per phase, every `stride`-th input column.
                let st = self.stride;
                for ph in 0..st {
                    let x0 = (ph + st - self.left % st) % st;
                    if x0 >= iw {
                        continue;
                    }
                    let at = (self.left + x0) / st;
                    let dst = &mut dst[ph * phase + at..(ph + 1) * phase];
                    for (d, &v) in dst.iter_mut().zip(src[x0..].iter().step_by(st)) {
                        *d = v;
                    }
                }
            }
        }
    }
}

/// Where each tap reads output `(0, 0)` in a [`Plane`]: tap `(th, tw)` at
/// `rows[th] + cols[tw]`, one entry per kernel row and column.
#[derive(Default)]
struct Taps {
    rows: ArrayVec<usize, MAX_DW_K>,
    cols: ArrayVec<usize, MAX_DW_K>,
}

impl Taps {
    /// The taps of `win` in `plane`. [`Plane::of`] takes kernels of at most [`MAX_DW_K`] each
    /// way only, so both lists fit.
    fn of(plane: &Plane, win: &Window) -> Taps {
        let (sh, sw) = (plane.row_stride, plane.stride);
        let (phase, rl) = (plane.phase(), plane.row_len());
        let rows = (0..win.kernel[1]).map(|th| {
            let r = th * win.dilations[1];
            ((r % sh) * plane.phase_rows + r / sh) * rl
        });
        let cols = (0..win.kernel[2]).map(|tw| {
            let c = tw * win.dilations[2];
            (c % sw) * phase + c / sw
        });
        Taps {
            rows: rows.collect(),
            cols: cols.collect(),
        }
    }
}

fn padded_portable(
    d: &Depthwise<'_>,
    plane: &Plane,
    pad: &mut [f32],
    y: &mut [f32],
) -> Result<(), KernelError> {
    padded(d, plane, pad, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn padded_avx2(
    d: &Depthwise<'_>,
    plane: &Plane,
    pad: &mut [f32],
    y: &mut [f32],
) -> Result<(), KernelError> {
    padded(d, plane, pad, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn padded_avx512(
    d: &Depthwise<'_>,
    plane: &Plane,
    pad: &mut [f32],
    y: &mut [f32],
) -> Result<(), KernelError> {
    padded(d, plane, pad, y)
}

/// The depthwise method on a padded plane: the outputs, numbered across rows as the plane
/// numbers them ([`Plane`]), in blocks of up to 128 (8 vectors of sums in registers), every tap
/// (in the order (kh, kw), the padding's zeros included) added to the whole block with no edge
/// to test; then the bias and the activation, and the block's valid columns stored. A small
/// plane is a few blocks in all, however narrow its rows.
#[inline(always)]
fn padded(
    d: &Depthwise<'_>,
    plane: &Plane,
    pad: &mut [f32],
    y: &mut [f32],
) -> Result<(), KernelError> {
    let geo = d.geo;
    let win = &geo.win;
    let (c, m) = (geo.c, geo.m);
    let mg = m / geo.group;
    let [ih, iw] = [win.input[1], win.input[2]];
    let [kh, kw] = [win.kernel[1], win.kernel[2]];
    let [oh, ow] = [win.output[1], win.output[2]];
    let taps = kh * kw;
    let (in_plane, out_plane) = (ih * iw, oh * ow);
    if pad.len() < plane.reach {
        bail!("internal error: the padded plane has no slack");
    }
    let pad = &mut pad[..plane.reach];
    // The padding and the slack, once: each channel then overwrites only its input's words.
    pad.fill(0.0);
    let rl = plane.row_len();
    let end = (oh - 1) * rl + ow;
    for b in 0..geo.n {
        for oc in 0..m {
            let ic = oc / mg;
            if oc % mg == 0 {
                plane.fill(&d.x[(b * c + ic) * in_plane..][..in_plane], ih, iw, pad);
            }
            let pad: &[f32] = pad;
            let block = Block {
                pad,
                weights: &d.w[oc * taps..][..taps],
                taps: &plane.taps,
                row_len: rl,
                bias: d.bias.map(|bias| bias[oc]),
                act: d.act,
                ow,
            };
            let out = &mut y[(b * m + oc) * out_plane..][..out_plane];
            let mut q0 = 0;
            while q0 < end {
                let chunks = (end - q0).div_ceil(DW_COLS);
                q0 = match chunks {
                    DW_CHUNKS.. => block.run::<DW_CHUNKS>(q0, out),
                    4.. => block.run::<4>(q0, out),
                    2.. => block.run::<2>(q0, out),
                    _ => block.run::<1>(q0, out),
                };
            }
        }
    }
    Ok(())
}

/// `s += a * b` lane by lane (a multiply, then an add: the direct method's bits), one vector.
/// Kept apart so that the compiler vectorises its lanes, not the block's vectors (a loop over
/// those it made into gathers and scatters of sums kept in memory).
#[inline(always)]
fn mul_add_vector(s: &mut [f32; DW_COLS], a: f32, b: &[f32; DW_COLS]) {
    for (s, &b) in s.iter_mut().zip(b) {
        *s += a * b;
    }
}

/// One channel of the padded depthwise method: its plane, taps and epilogue.
struct Block<'a> {
    /// The plane's words up to its reach.
    pad: &'a [f32],
    weights: &'a [f32],
    /// Where the taps read, and the plane's words per stored row.
    taps: &'a Taps,
    row_len: usize,
    bias: Option<f32>,
    act: Activation,
    ow: usize,
}

impl Block<'_> {
    /// Outputs `q0..q0 + 16 C` (numbered as the plane numbers them): each sum
    /// `0 + w0 x0 + w1 x1 + ...` over the taps in order, in registers, then `+ bias`, the
    /// activation, and the outputs of real columns stored into `out`. Returns the next block's
    /// start.
    #[inline(always)]
    fn run<const C: usize>(&self, q0: usize, out: &mut [f32]) -> usize {
        let mut acc = [[0.0f32; DW_COLS]; C];
        let kw = self.taps.cols.len();
        for (th, &row) in self.taps.rows.iter().enumerate() {
            for (tw, &col) in self.taps.cols.iter().enumerate() {
                let wv = self.weights[th * kw + tw];
                let at = row + col + q0;
                // Never taken: `reach` covers every tap's run up to the last block's end.
                let Some(src) = self.pad.get(at..at + C * DW_COLS) else {
                    continue;
                };
                let (src, _) = src.as_chunks::<DW_COLS>();
                for ci in 0..C {
                    mul_add_vector(&mut acc[ci], wv, &src[ci]);
                }
            }
        }
        let sums = acc.as_flattened_mut();
        if let Some(bv) = self.bias {
            sums.iter_mut().for_each(|v| *v += bv);
        }
        self.act.apply(sums);
        let (rl, ow) = (self.row_len, self.ow);
        let q1 = q0 + C * DW_COLS;
        let mut row = q0 / rl;
        while row * rl < q1 {
            let start = row * rl;
            let (lo, hi) = (q0.max(start), q1.min(start + ow));
            if lo < hi {
                let Some(dst) = out.get_mut(row * ow + lo - start..row * ow + hi - start) else {
                    break;
                };
                copy_short(dst, &sums[lo - q0..hi - q0]);
            }
            row += 1;
        }
        q1
    }
}

fn depthwise_portable(d: &Depthwise<'_>, y: &mut [f32]) -> Result<(), KernelError> {
    depthwise(d, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn depthwise_avx2(d: &Depthwise<'_>, y: &mut [f32]) -> Result<(), KernelError> {
    depthwise(d, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn depthwise_avx512(d: &Depthwise<'_>, y: &mut [f32]) -> Result<(), KernelError> {
    depthwise(d, y)
}

/// The depthwise method: output row by output row, each tap in order over the whole row.
#[inline(always)]
fn depthwise(d: &Depthwise<'_>, y: &mut [f32]) -> Result<(), KernelError> {
    let geo = d.geo;
    let win = &geo.win;
    let (c, m) = (geo.c, geo.m);
    let mg = m / geo.group;
    let in_plane: usize = win.input.iter().product();
    let out_plane: usize = win.output.iter().product();
    let taps = geo.taps();
    let [kd, kh, kw] = [win.kernel[0], win.kernel[1], win.kernel[2]];
    let [od, oh, ow] = [win.output[0], win.output[1], win.output[2]];
    let [ih, iw] = [win.input[1], win.input[2]];
    let sw = win.strides[2];
    for b in 0..geo.n {
        for oc in 0..m {
            let ic = oc / mg;
            let plane = &d.x[(b * c + ic) * in_plane..][..in_plane];
            let weights = &d.w[oc * taps..][..taps];
            let out = &mut y[(b * m + oc) * out_plane..][..out_plane];
            for zo in 0..od {
                for yo in 0..oh {
                    let row_out = &mut out[(zo * oh + yo) * ow..][..ow];
                    row_out.fill(0.0);
                    for td in 0..kd {
                        let Some(zi) = win.source(0, zo, td) else {
                            continue;
                        };
                        for th in 0..kh {
                            let Some(yi) = win.source(1, yo, th) else {
                                continue;
                            };
                            let row_in = &plane[(zi * ih + yi) * iw..][..iw];
                            for tw in 0..kw {
                                let wv = weights[(td * kh + th) * kw + tw];
                                let cols = win.valid_outputs(2, tw);
                                if cols.is_empty() {
                                    continue;
                                }
                                let Some(first) = win.source(2, cols.start, tw) else {
                                    bail!("output column {} reads outside the input", cols.start);
                                };
                                let dst = &mut row_out[cols];
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
                    if let Some(bias) = d.bias {
                        let bv = bias[oc];
                        row_out.iter_mut().for_each(|o| *o += bv);
                    }
                    d.act.apply(row_out);
                }
            }
        }
    }
    Ok(())
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
        let x = values(xs.iter().product(), 1);
        let w = values(ws.iter().product(), 2);
        let b = values(ws[0], 3);
        let bs = [ws[0]];
        let inputs = [
            Input::Value {
                shape: xs,
                data: Data::F32(&x),
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
        let cases: [(&[(&str, Attr<'_>)], [usize; 4], [usize; 4], [usize; 4]); 11] = [
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
            }
            limit(Level::Avx512);
        }
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
            let im2col = Im2col { x: &x, win: &win };
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
}
