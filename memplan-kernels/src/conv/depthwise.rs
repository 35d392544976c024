//! The depthwise Conv (`group` = input channels, one input channel a group): each input plane
//! copied once into scratch with its padding and split by stride into phases ([`Plane`]), so
//! every tap reads one run of consecutive words for all of a channel's outputs; blocks of
//! outputs summed in registers; too large a plane or a 3-D window computed directly.

use super::*;
use crate::simd::TakeGreater;

/// Output elements a depthwise Conv sums in one vector of registers (one AVX-512 vector).
pub(super) const DW_COLS: usize = 16;
/// Vectors of sums a block of the padded depthwise method keeps in registers.
pub(super) const DW_CHUNKS: usize = 8;
/// The widest and tallest kernel the padded depthwise method takes (a larger one computes
/// directly).
pub(super) const MAX_DW_K: usize = 32;

/// A depthwise Conv's operands.
pub(super) struct Depthwise<'a> {
    pub(super) geo: &'a ConvGeometry,
    /// Where each channel's input and output plane starts.
    pub(super) planes: Planes,
    /// The input, or `None` when the Conv runs in place ([`in_place_plane`]): the input is then
    /// in the output buffer, each plane copied into the padded plane before its channel's output
    /// is written over it.
    pub(super) x: Option<&'a [f32]>,
    pub(super) w: &'a [f32],
    pub(super) bias: Option<&'a [f32]>,
    pub(super) act: Activation,
}

/// A depthwise Conv's input plane with its padding, in the node's scratch, split by stride into
/// phases so that every tap reads consecutive words for consecutive outputs, across rows too:
///
/// - the padded rows are split by the vertical stride (row `r` is row `r / sh` of row phase
///   `r % sh`, each row phase `phase_rows` rows), the padded columns by the horizontal one
///   (column `x` is word `x / sw` of column phase `x % sw`, each phase `phase` words);
/// - each pair (row phase, column phase) is a sub-plane of its own, `phase_rows` rows of `phase`
///   words, so that a stored row holds one column phase only.
///
/// Output `(yo, xo)` then reads tap `(th, tw)` at `rows[th] + cols[tw] + yo * row_len + xo`
/// ([`Taps`]) with `row_len = phase`: the outputs, numbered `q = yo * row_len + xo` (the columns
/// `ow..row_len` of each row computed and thrown away: at most the window's width over the
/// stride, not the other phases' columns), are one run of consecutive words per tap.
pub(super) struct Plane {
    /// Padded columns (at least what the window reads).
    pub(super) cols: usize,
    /// Horizontal and vertical strides, and each row phase's rows.
    pub(super) stride: usize,
    pub(super) row_stride: usize,
    pub(super) phase_rows: usize,
    /// Zeros before the first input row and column.
    pub(super) top: usize,
    pub(super) left: usize,
    /// Where each tap reads output `(0, 0)`.
    pub(super) taps: Taps,
    /// Words the outputs' runs read, from the plane's start: the plane and a slack after it.
    pub(super) reach: usize,
}

impl Plane {
    /// The plane of a 1-D or 2-D window (a 3-D one computes directly).
    pub(super) fn of(win: &Window) -> Option<Plane> {
        if win.input[0] != 1 || win.kernel[0] != 1 || win.output[0] != 1 {
            return None;
        }
        if win.kernel[1] > MAX_DW_K || win.kernel[2] > MAX_DW_K || win.output.contains(&0) {
            return None;
        }
        let (rows, cols) = (padded_extent(win, 1), padded_extent(win, 2));
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
    pub(super) fn phase(&self) -> usize {
        self.cols.div_ceil(self.stride)
    }

    /// Words from one output row to the next: a stored row, one column phase.
    pub(super) fn row_len(&self) -> usize {
        self.phase()
    }

    /// Words of one sub-plane (a row phase's rows of one column phase).
    fn sub_len(&self) -> usize {
        self.phase_rows * self.phase()
    }

    /// Words of the plane itself.
    pub(super) fn len(&self) -> usize {
        self.row_stride * self.stride * self.sub_len()
    }

    /// Copies `plane` (`ih x iw`) into `pad`, over the input's words only: the padding and the
    /// slack keep the zeros `pad` was cleared to, since every channel's input lies at the same
    /// words.
    #[inline(always)]
    pub(super) fn fill<F: DepthwiseSteps>(
        &self,
        steps: F,
        plane: &[f32],
        ih: usize,
        iw: usize,
        pad: &mut [f32],
    ) {
        let (phase, sub) = (self.phase(), self.sub_len());
        if iw == 0 {
            // An empty input (padding only): nothing to copy.
            return;
        }
        let (lo, hi) = (self.left, self.left + iw);
        // Padded row `top + yi` is row `(top + yi) / sh` of row phase `(top + yi) % sh`,
        // counted on rather than divided.
        let (mut row_phase, mut row) = (self.top % self.row_stride, self.top / self.row_stride);
        for src in plane.chunks_exact(iw).take(ih) {
            // Column phase 0 of this stored row; phase `p` is `p` sub-planes after it.
            let at = (row_phase * self.stride * self.phase_rows + row) * phase;
            row_phase += 1;
            if row_phase == self.row_stride {
                row_phase = 0;
                row += 1;
            }
            if self.stride == 1 {
                copy_words(&mut pad[at + lo..at + hi], src);
            } else if self.stride == 2 {
                // Padded column `p` goes to `p / 2` of phase `p % 2`: the columns in pairs.
                let (q0, q1) = (lo.div_ceil(2), (hi - 1) / 2);
                let (first, second) = pad.split_at_mut(at + sub);
                let (even, odd) = (&mut first[at..at + phase], &mut second[..phase]);
                if q1 > q0 {
                    let pairs = &src[2 * q0 - lo..][..2 * (q1 - q0)];
                    let (e, o) = (&mut even[q0..q1], &mut odd[q0..q1]);
                    // 16 pairs at a time through fixed-size arrays (vector shuffles), then the
                    // fewer than 16 left.
                    let (blocks, rest) = pairs.as_chunks::<32>();
                    let (e_blocks, e_rest) = e.as_chunks_mut::<16>();
                    let (o_blocks, o_rest) = o.as_chunks_mut::<16>();
                    for ((block, e), o) in blocks.iter().zip(e_blocks).zip(o_blocks) {
                        steps.split_pairs(block, e, o);
                    }
                    steps.split_pairs_tail(rest, e_rest, o_rest);
                }
                // The columns the pairs did not copy: at most one at each end (the two ranges'
                // columns, not a walk over the whole row testing each).
                let inner = if q1 > q0 { 2 * q0..2 * q1 } else { lo..lo };
                for p in (lo..inner.start).chain(inner.end.max(lo)..hi) {
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
                    let col = (self.left + x0) / st;
                    let base = at + ph * sub;
                    let dst = &mut pad[base + col..base + phase];
                    for (d, &v) in dst.iter_mut().zip(src[x0..].iter().step_by(st)) {
                        *d = v;
                    }
                }
            }
        }
    }
}

/// The padded input's extent along spatial axis `i` of a window with at least one output: the
/// input and its padding, or what the window reads if that is more.
pub(super) fn padded_extent(win: &Window, i: usize) -> usize {
    let read = (win.output[i] - 1) * win.strides[i] + (win.kernel[i] - 1) * win.dilations[i] + 1;
    (win.input[i] + win.pad_begin[i] + win.pad_end[i]).max(read)
}

/// Where each tap reads output `(0, 0)` in a [`Plane`]: tap `(th, tw)` at
/// `rows[th] + cols[tw]`, one entry per kernel row and column.
#[derive(Default)]
pub(super) struct Taps {
    pub(super) rows: ArrayVec<usize, MAX_DW_K>,
    pub(super) cols: ArrayVec<usize, MAX_DW_K>,
}

impl Taps {
    /// The taps of `win` in `plane`. [`Plane::of`] takes kernels of at most [`MAX_DW_K`] each
    /// way only, so both lists fit.
    pub(super) fn of(plane: &Plane, win: &Window) -> Taps {
        let (sh, sw) = (plane.row_stride, plane.stride);
        let (phase, sub) = (plane.phase(), plane.sub_len());
        let rows = (0..win.kernel[1]).map(|th| {
            let r = th * win.dilations[1];
            ((r % sh) * sw * plane.phase_rows + r / sh) * phase
        });
        let cols = (0..win.kernel[2]).map(|tw| {
            let c = tw * win.dilations[2];
            (c % sw) * sub + c / sw
        });
        Taps {
            rows: rows.collect(),
            cols: cols.collect(),
        }
    }
}

pub(super) fn padded_portable(
    d: &Depthwise<'_>,
    plane: &Plane,
    pad: &mut [f32],
    y: &mut [f32],
) -> Result<(), KernelError> {
    padded::<DW_CHUNKS, _>(ScalarFma, d, plane, pad, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(super) fn padded_avx2(
    d: &Depthwise<'_>,
    plane: &Plane,
    pad: &mut [f32],
    y: &mut [f32],
) -> Result<(), KernelError> {
    // 4 vectors of 16 sums: 8 of the 16 ymm registers (8 vectors would spill them all).
    padded::<4, _>(Avx2Fma::new(), d, plane, pad, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
pub(super) fn padded_avx512(
    d: &Depthwise<'_>,
    plane: &Plane,
    pad: &mut [f32],
    y: &mut [f32],
) -> Result<(), KernelError> {
    padded::<DW_CHUNKS, _>(Avx512Fma::new(), d, plane, pad, y)
}

/// The depthwise method on a padded plane: the outputs, numbered across rows as the plane
/// numbers them ([`Plane`]), in blocks of up to 128 (8 vectors of sums in registers), every tap
/// (in the order (kh, kw), the padding's zeros included) added to the whole block with no edge
/// to test; then the bias and the activation, and the block's valid columns stored. A small
/// plane is a few blocks in all, however narrow its rows. `MOST` vectors of sums at most a block
/// (as many as the registers hold); each output's sum is the same whatever the block.
#[inline(always)]
pub(super) fn padded<const MOST: usize, F: DepthwiseSteps + TakeGreater>(
    lanes: F,
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
            match d.x {
                // One output channel per input channel and planes of one size
                // (`in_place_plane`): this channel's output plane is its input plane, copied
                // out before it is written; every later input plane is still whole.
                None => plane.fill(
                    lanes,
                    &y[(b * c + ic) * in_plane..][..in_plane],
                    ih,
                    iw,
                    pad,
                ),
                Some(x) if oc % mg == 0 => {
                    plane.fill(
                        lanes,
                        &x[(b * c + ic) * d.planes.x..][..in_plane],
                        ih,
                        iw,
                        pad,
                    );
                }
                Some(_) => {}
            }
            let pad: &[f32] = pad;
            let block = Block {
                lanes,
                pad,
                weights: &d.w[oc * taps..][..taps],
                taps: &plane.taps,
                row_len: rl,
                bias: d.bias.map(|bias| bias[oc]),
                act: d.act.in_registers(),
                ow,
            };
            let out = &mut y[(b * m + oc) * d.planes.y..][..out_plane];
            let mut q0 = 0;
            while q0 < end {
                let chunks = (end - q0).div_ceil(DW_COLS);
                q0 = if MOST >= DW_CHUNKS && chunks >= DW_CHUNKS {
                    block.run::<DW_CHUNKS>(q0, out)
                } else if MOST >= 4 && chunks >= 4 {
                    block.run::<4>(q0, out)
                } else if chunks >= 2 {
                    block.run::<2>(q0, out)
                } else {
                    block.run::<1>(q0, out)
                };
            }
            // A chain activation on the written plane, in L1 ([`Activation::in_registers`]):
            // inside the block its thirty dependent steps kept the sums in memory, a vector at
            // a time, each waiting on the last.
            if d.act.is_chain() {
                d.act.apply_chain(out);
            }
        }
    }
    Ok(())
}

/// Whether a Conv of this geometry can write its output over its input ([`Input::InPlace`]): a
/// depthwise one with one output channel per input channel, a padded plane
/// ([`Plane::of`]), and output planes of the input's size (so the buffer holds the input, as
/// [`Input::InPlace`] has it). The input planes are read one at a time into the scratch (the
/// node's scratch is that plane either way), so the output needs no memory of its own.
pub(super) fn in_place_plane(geo: &ConvGeometry) -> Option<Plane> {
    let out_plane: usize = geo.win.output.iter().product();
    let in_plane: usize = geo.win.input.iter().product();
    (geo.depthwise() && geo.m == geo.c && out_plane == in_plane)
        .then(|| Plane::of(&geo.win))
        .flatten()
}

/// One channel of the padded depthwise method: its plane, taps and epilogue.
pub(super) struct Block<'a, F> {
    /// The vector instructions.
    pub(super) lanes: F,
    /// The plane's words up to its reach.
    pub(super) pad: &'a [f32],
    pub(super) weights: &'a [f32],
    /// Where the taps read, and the plane's words per stored row.
    pub(super) taps: &'a Taps,
    pub(super) row_len: usize,
    pub(super) bias: Option<f32>,
    pub(super) act: Activation,
    pub(super) ow: usize,
}

impl<F: DepthwiseSteps + TakeGreater> Block<'_, F> {
    /// Outputs `q0..q0 + 16 C` (numbered as the plane numbers them): each sum
    /// `0 + w0 x0 + w1 x1 + ...` over the taps in order, in registers, then `+ bias`, the
    /// activation, and the outputs of real columns stored into `out`. Returns the next block's
    /// start.
    #[inline(always)]
    pub(super) fn run<const C: usize>(&self, q0: usize, out: &mut [f32]) -> usize {
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
                    self.lanes.scale_then_add(&mut acc[ci], wv, &src[ci]);
                }
            }
        }
        for v in &mut acc {
            if let Some(bv) = self.bias {
                v.iter_mut().for_each(|v| *v += bv);
            }
            activate(self.lanes, self.act, v);
        }
        let sums = acc.as_flattened();
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
                copy_words(dst, &sums[lo - q0..hi - q0]);
            }
            row += 1;
        }
        q1
    }
}

/// `act` on 16 sums: Relu and Clip as `vmaxps` and `vminps` ([`TakeGreater`], the same bits as
/// [`Activation::apply`]); the compiler's own form of their selects spends a dozen
/// instructions on a vector, or on sums in memory a masked store, which the next load of the
/// whole vector cannot forward from.
#[inline(always)]
pub(super) fn activate<F: TakeGreater>(vector: F, act: Activation, v: &mut [f32; DW_COLS]) {
    match act {
        Activation::Relu => vector.take_greater(v, &[0.0; DW_COLS]),
        Activation::Clip(lo, hi) => {
            vector.take_greater(v, &[lo; DW_COLS]);
            vector.take_less(v, &[hi; DW_COLS]);
        }
        act => act.apply(v),
    }
}

pub(super) fn depthwise_portable(d: &Depthwise<'_>, y: &mut [f32]) -> Result<(), KernelError> {
    depthwise(d, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) fn depthwise_avx2(d: &Depthwise<'_>, y: &mut [f32]) -> Result<(), KernelError> {
    depthwise(d, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(super) fn depthwise_avx512(d: &Depthwise<'_>, y: &mut [f32]) -> Result<(), KernelError> {
    depthwise(d, y)
}

/// The depthwise method: output row by output row, each tap in order over the whole row.
#[inline(always)]
pub(super) fn depthwise(d: &Depthwise<'_>, y: &mut [f32]) -> Result<(), KernelError> {
    let Some(x) = d.x else {
        bail!("internal error: the direct depthwise method does not run in place");
    };
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
            let plane = &x[(b * c + ic) * d.planes.x..][..in_plane];
            let weights = &d.w[oc * taps..][..taps];
            let out = &mut y[(b * m + oc) * d.planes.y..][..out_plane];
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
