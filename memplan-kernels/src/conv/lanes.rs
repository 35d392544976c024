//! The channel-lanes method of a depthwise Conv: 16 channels at a time, one channel a vector
//! lane.
//!
//! The padded method ([`Plane`]) sums one channel's outputs along its rows, so a narrow or small
//! plane leaves most of a vector empty and spends more on each channel's set-up, its copy and
//! its epilogue than on its sums; a stride splits every plane into phases. Here a block of 16
//! channels' input rows is turned into scratch with its padding, interleaved
//! (`tile[(row * padded width + column) * 16 + lane]`), so that the 16 channels' words at one
//! padded position are one vector: every output pixel of the block is a vector of 16 sums, each
//! tap one vector of weights times one vector of inputs, whatever the stride, the dilation or
//! the plane's width. The planes go in and the sums come out 16 x 16 words at a time through
//! [`Transpose`] (16 consecutive words of 16 planes, turned into 16 pixels' vectors and back),
//! so the interleaving costs a few shuffles a vector rather than a word at a time.
//!
//! A plane whose tile would not fit the scratch is taken in bands of output rows: each band
//! turns the input rows its window reads (the rows two bands share turned twice). Where the
//! Conv runs in place, the whole plane must be one band (its input is read whole before any of
//! its output is written); otherwise the padded method runs in place.
//!
//! Each element sums its taps in the order (kh, kw), the padding's zeros included, a product
//! then a sum each rounded, from 0; then the bias and the activation: the padded method's bits.

use super::*;
use crate::simd::{TakeGreater, Transpose};

/// Channels of a block: one vector lane each.
const LANES: usize = 16;
/// The most taps the method takes (a 7x7 kernel has 49): where each tap row reads is on the
/// stack.
const MOST_TAPS: usize = 64;
/// The most words the interleaved tile may take (64 KiB): past it a plane goes in bands.
const MOST_WORDS: usize = 1 << 13;
/// Outputs a channel up to which the method runs with any kernel. On larger planes the padded
/// method's runs of 128 outputs a channel are faster. At AVX-512, 3x3 taps, against it: 1.2x
/// on 25 x 5 planes, 1.1x on 12 x 12, 1.2-1.3x on 14 x 14, 1.16x on 16 x 16; 0.96x on 20 x 20
/// and 24 x 24, 0.8-0.96x on 28 x 28 to 112 x 112.
const SMALL_PLANE: usize = 256;
/// Taps from which a plane of up to [`MANY_TAPS_PLANE`] outputs takes the method (a 7x7
/// kernel: 1.5x on 7 x 7 planes; a 5x5 one takes it to [`SMALL_PLANE`] outputs, 1.13-1.3x on
/// 14 x 14).
const MANY_TAPS: usize = 49;
/// The largest plane a kernel of [`MANY_TAPS`] takes the method on. On 28 x 28 a 7x7 kernel
/// measured 1.28-1.5x alone but 0.96x in a whole ConvNeXt-like network (twice; 0.97x with the
/// method before it was faster), 5x5 ones 1.1-1.4x alone: left to the padded method.
const MANY_TAPS_PLANE: usize = 256;
/// The largest plane a strided window of at most [`STRIDED_TAPS`] taps takes the method on:
/// the padded method splits each strided plane into phases and pays its set-up, copy and
/// epilogue per channel on a quarter of the outputs. At AVX-512 and AVX2 against it, 3x3 stride 2 to 14 x
/// 14 (192 and 480 channels) 1.37-1.59x, 16 x 16 (256) 1.39-1.43x, 15 x 15 (64) 1.13-1.24x; 5x5
/// taps to 14 x 14 0.77x and 3x3 to 28 x 28 0.91x, so neither takes it.
const STRIDED_PLANE: usize = 256;
/// The most taps of a strided window that takes the method on a plane of up to
/// [`STRIDED_PLANE`] outputs: a 3x3 window's (measured; a 5x5 one lost).
const STRIDED_TAPS: usize = 9;

/// A block's interleaved input tile (one band of padded rows) and weights (one vector a tap),
/// in scratch: nothing larger than a step's sums and one 16 x 16 turn on the stack, a
/// microcontroller's included.
///
/// A tile row holds its padded columns split by the horizontal stride into phases (column `x`
/// at `(x % stride) * phase + x / stride`), so that a tap reads consecutive vectors for
/// consecutive output pixels of a row, whatever the stride.
pub(super) struct Lanes {
    /// Padded rows in all.
    rows: usize,
    /// Vectors of each column phase of a tile row, and of the row.
    phase: usize,
    row_len: usize,
    /// Output rows a band computes, and the padded rows its tile holds.
    band: usize,
    band_rows: usize,
    taps: usize,
}

impl Lanes {
    /// The method's tile for a depthwise Conv of geometry `geo`, if it applies: a 1-D or 2-D
    /// window of at most [`MOST_TAPS`] taps ([`MAX_DW_K`] each way), a plane of at most
    /// [`SMALL_PLANE`] outputs (of [`MANY_TAPS_PLANE`] with [`MANY_TAPS`] taps, of
    /// [`STRIDED_PLANE`] for a strided window of at most [`STRIDED_TAPS`]), and a tile of at
    /// least one output row in at most [`MOST_WORDS`], no larger than the padded plane's
    /// scratch or a quarter of the output (the most a faster method may add to the arena).
    pub(super) fn of(geo: &ConvGeometry) -> Option<Lanes> {
        let win = &geo.win;
        if !geo.depthwise()
            || win.input[0] != 1
            || win.kernel[0] != 1
            || win.output[0] != 1
            || geo.taps() > MOST_TAPS
            || win.kernel[1] > MAX_DW_K
            || win.kernel[2] > MAX_DW_K
            || win.output.contains(&0)
        {
            return None;
        }
        let outputs: usize = win.output.iter().product();
        let strided = win.strides[1] > 1 || win.strides[2] > 1;
        let small = outputs <= SMALL_PLANE
            || (geo.taps() >= MANY_TAPS && outputs <= MANY_TAPS_PLANE)
            || (strided && geo.taps() <= STRIDED_TAPS && outputs <= STRIDED_PLANE);
        if !small {
            return None;
        }
        let (rows, cols) = (padded_extent(win, 1), padded_extent(win, 2));
        let (oh, sh, sw) = (win.output[1], win.strides[1], win.strides[2]);
        let phase = cols.div_ceil(sw);
        let row_len = phase * sw;
        let reach = (win.kernel[1] - 1) * win.dilations[1] + 1;
        let plane = Plane::of(win).map_or(0, |p| p.reach.div_ceil(2));
        let most = MOST_WORDS.min(plane.max(quarter_of_output(geo)));
        let words = |band: usize| {
            let band_rows = ((band - 1) * sh + reach).min(rows);
            (
                band_rows,
                ((band_rows * row_len + geo.taps()) * LANES).div_ceil(2),
            )
        };
        // The tallest band that fits: the words grow with the band.
        let (mut lo, mut hi) = (0, oh);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if words(mid).1 <= most {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        (lo > 0).then(|| Lanes {
            rows,
            phase,
            row_len,
            band: lo,
            band_rows: words(lo).0,
            taps: geo.taps(),
        })
    }

    /// Scratch words: the interleaved tile and weights.
    pub(super) fn words(&self) -> usize {
        ((self.band_rows * self.row_len + self.taps) * LANES).div_ceil(2)
    }

    /// Whether the whole plane is one band (the method can then run in place).
    pub(super) fn whole(&self, geo: &ConvGeometry) -> bool {
        self.band >= geo.win.output[1]
    }

    /// Where padded column `x` lies in a tile row.
    fn column(&self, x: usize, stride: usize) -> usize {
        (x % stride) * self.phase + x / stride
    }
}

pub(super) fn lanes_portable(
    d: &Depthwise<'_>,
    tile: &Lanes,
    buf: &mut [f32],
    y: &mut [f32],
) -> Result<(), KernelError> {
    lanes::<4, _>(ScalarFma, d, tile, buf, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(super) fn lanes_avx2(
    d: &Depthwise<'_>,
    tile: &Lanes,
    buf: &mut [f32],
    y: &mut [f32],
) -> Result<(), KernelError> {
    // 4 pixels' sums: 8 of the 16 ymm registers.
    lanes::<4, _>(Avx2Fma::new(), d, tile, buf, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
pub(super) fn lanes_avx512(
    d: &Depthwise<'_>,
    tile: &Lanes,
    buf: &mut [f32],
    y: &mut [f32],
) -> Result<(), KernelError> {
    lanes::<8, _>(Avx512Fma::new(), d, tile, buf, y)
}

/// A vector of the 16 channels' words at one place.
type Vector = [f32; LANES];

/// The channel-lanes method: per block of 16 output channels, the block's weights interleaved
/// per tap; per band of output rows, the input rows the band reads turned into the tile with
/// their padding, then every output pixel's 16 sums, up to `MOST` pixels of a row at a time,
/// turned 16 pixels at a time into the 16 output planes.
#[inline(always)]
fn lanes<const MOST: usize, F: DepthwiseSteps + TakeGreater + Transpose>(
    vector: F,
    d: &Depthwise<'_>,
    tile: &Lanes,
    buf: &mut [f32],
    y: &mut [f32],
) -> Result<(), KernelError> {
    let geo = d.geo;
    let win = &geo.win;
    let (c, m) = (geo.c, geo.m);
    let mg = m / geo.group;
    let [ih, iw] = [win.input[1], win.input[2]];
    let [kh, kw] = [win.kernel[1], win.kernel[2]];
    let [oh, ow] = [win.output[1], win.output[2]];
    let [sh, sw] = [win.strides[1], win.strides[2]];
    let [dh, dw] = [win.dilations[1], win.dilations[2]];
    let [top, left] = [win.pad_begin[1], win.pad_begin[2]];
    let taps = kh * kw;
    let in_plane = ih * iw;
    let row_len = tile.row_len;
    if d.x.is_none() && !tile.whole(geo) {
        bail!("internal error: the channel-lanes method runs in place on a whole plane only");
    }
    let Some(buf) = buf.get_mut(..(tile.band_rows * row_len + taps) * LANES) else {
        bail!("internal error: the scratch cannot hold the interleaved tile");
    };
    let (vectors, _) = buf.as_chunks_mut::<LANES>();
    let (tile_rows, weights) = vectors.split_at_mut(tile.band_rows * row_len);
    // The padding columns, once: every band writes the input's columns only (and clears the
    // rows of the top and bottom padding it holds).
    tile_rows.fill([0.0; LANES]);
    // Where each tap, in the order (th, tw), reads pixel (0, 0) of the band, in vectors.
    let taps_at: ArrayVec<usize, MOST_TAPS> = (0..kh)
        .flat_map(|th| (0..kw).map(move |tw| (th, tw)))
        .map(|(th, tw)| th * dh * row_len + tile.column(tw * dw, sw))
        .collect();
    let reach = taps_at.iter().copied().max().unwrap_or(0);
    // On a cache line of its own: each of its rows is stored whole and read back whole at
    // once, which a row split across two lines cannot forward (a stall a row).
    let mut turn = Turn([[0.0f32; LANES]; LANES]);
    let turn = &mut turn.0;
    for b in 0..geo.n {
        let mut oc0 = 0;
        while oc0 < m {
            let lanes = LANES.min(m - oc0);
            let mut bias = [0.0f32; LANES];
            if let Some(b) = d.bias {
                for (lane, bias) in bias.iter_mut().enumerate() {
                    *bias = b[oc0 + lane.min(lanes - 1)];
                }
            }
            // The block's weights interleaved, 16 taps at a time turned from the 16 channels'
            // runs of taps (the block's last channel again past `lanes`): `weights[t][lane]`.
            let mut t0 = 0;
            while t0 < taps {
                let n = LANES.min(taps - t0);
                // Loops, not closures: a closure would be compiled without the caller's
                // vector features and called.
                let mut runs = [0usize; LANES];
                for (lane, run) in runs.iter_mut().enumerate() {
                    *run = (oc0 + lane.min(lanes - 1)) * taps + t0;
                }
                if !vector.gather16(d.w, &runs, n, turn) {
                    bail!("internal error: a channel's weights are past the weight");
                }
                weights[t0..t0 + n].copy_from_slice(&turn[..n]);
                t0 += n;
            }
            // Where each lane's input plane starts (the block's last channel again past
            // `lanes`), in `x`, or in place (`in_place_plane`, one band) in the output, whose
            // block of planes still holds its inputs, turned whole into the tile before any
            // output is written.
            let mut starts = [0usize; LANES];
            for (lane, start) in starts.iter_mut().enumerate() {
                let ic = (oc0 + lane.min(lanes - 1)) / mg;
                *start = (b * c + ic) * d.x.map_or(in_plane, |_| d.planes.x);
            }
            let mut y0 = 0;
            while y0 < oh {
                let y1 = oh.min(y0 + tile.band);
                // The band's padded rows, and the input rows among them.
                let pr0 = y0 * sh;
                let pr1 = tile.rows.min((y1 - 1) * sh + (kh - 1) * dh + 1);
                let yi0 = pr0.saturating_sub(top).min(ih);
                let yi1 = pr1.saturating_sub(top).min(ih).max(yi0);
                for pr in pr0..pr1 {
                    if pr < top || pr - top >= ih {
                        tile_rows[(pr - pr0) * row_len..][..row_len].fill([0.0; LANES]);
                    }
                }
                // The input rows' words, 16 at a time from the 16 planes, turned into 16
                // pixels' vectors, each stored at its padded place.
                let mut row_start = (yi0 + top - pr0) * row_len;
                let mut xi = 0;
                let mut p = yi0 * iw;
                while p < yi1 * iw {
                    let n = LANES.min(yi1 * iw - p);
                    let src: &[f32] = d.x.unwrap_or(y);
                    // Words `p..p + n` of each lane's plane (`n` ends within it).
                    let mut runs = starts;
                    for run in &mut runs {
                        *run += p;
                    }
                    if !vector.gather16(src, &runs, n, turn) {
                        bail!("internal error: a channel's plane is past the input");
                    }
                    // Each input row's pixels among them: those of one column phase (every
                    // `sw`-th) go to consecutive vectors of the tile row.
                    let mut i = 0;
                    while i < n {
                        let run = (n - i).min(iw - xi);
                        for k in 0..sw.min(run) {
                            let at = row_start + tile.column(left + xi + k, sw);
                            if sw == 1 {
                                // An index loop: on a Cortex-M4F `step_by`'s iterator cost
                                // the keyword spotter about 1% more instructions.
                                let (mut at, mut j) = (at, i);
                                while j < i + run {
                                    if let Some(v) = tile_rows.get_mut(at) {
                                        *v = turn[j];
                                    }
                                    (at, j) = (at + 1, j + 1);
                                }
                            } else {
                                // The iterators: at AVX-512 the index loop spilled its
                                // counters here (32 x 32 stride 2: 0.92x).
                                let pixels = turn[i + k..i + run].iter().step_by(sw);
                                for (v, pixel) in tile_rows.iter_mut().skip(at).zip(pixels) {
                                    *v = *pixel;
                                }
                            }
                        }
                        (i, xi) = (i + run, xi + run);
                        if xi == iw {
                            xi = 0;
                            row_start += row_len;
                        }
                    }
                    p += n;
                }
                let tile_rows: &[Vector] = tile_rows;
                let block = LanesBlock {
                    vector,
                    tile: tile_rows,
                    weights,
                    taps: &taps_at,
                    reach,
                    bias: d.bias.map(|_| bias),
                    act: d.act.in_registers(),
                };
                // The band's outputs, numbered as the output planes number them, 16 at a time
                // into `turn` in runs of one row's pixels.
                let (q0, q1) = (y0 * ow, y1 * ow);
                let (mut yo, mut xo) = (y0, 0);
                let mut q = q0;
                while q < q1 {
                    let n = LANES.min(q1 - q);
                    let mut j = 0;
                    while j < n {
                        let start = (yo * sh - pr0) * row_len + xo;
                        let room = (n - j).min(ow - xo);
                        let out = &mut turn[j..];
                        // One run for a row's pixels where the registers hold their sums.
                        let count = match room.min(MOST) {
                            8.. => block.run::<8>(start, out),
                            7 if MOST >= 8 => block.run::<7>(start, out),
                            6 if MOST >= 8 => block.run::<6>(start, out),
                            5 if MOST >= 8 => block.run::<5>(start, out),
                            4.. => block.run::<4>(start, out),
                            3 => block.run::<3>(start, out),
                            2 => block.run::<2>(start, out),
                            _ => block.run::<1>(start, out),
                        };
                        j += count;
                        xo += count;
                        if xo == ow {
                            xo = 0;
                            yo += 1;
                        }
                    }
                    if d.act.is_chain() {
                        // Sixteen pixels of sixteen channels at once ([`Activation::in_registers`]).
                        d.act.apply_chain(turn.as_flattened_mut());
                    }
                    let mut outputs = [0usize; LANES];
                    for (lane, at) in outputs.iter_mut().enumerate() {
                        *at = (b * m + oc0 + lane) * d.planes.y + q;
                    }
                    if !vector.scatter16(turn, y, &outputs, lanes, n) {
                        bail!("internal error: a channel's output plane is past the output");
                    }
                    q += n;
                }
                y0 = y1;
            }
            oc0 += lanes;
        }
    }
    Ok(())
}

/// The 16 x 16 words turned between planes and lanes, aligned to a cache line.
#[repr(align(64))]
struct Turn([Vector; LANES]);

/// One band of a block of 16 channels: its tile, weights and taps, its bias (one vector, if
/// the Conv has one) and activation.
struct LanesBlock<'a, F> {
    vector: F,
    tile: &'a [Vector],
    /// One vector a tap, in the order (kh, kw).
    weights: &'a [Vector],
    /// Where each tap reads a run's first pixel, from the run's tap (0, 0), and the farthest.
    taps: &'a [usize],
    reach: usize,
    bias: Option<Vector>,
    act: Activation,
}

impl<F: DepthwiseSteps + TakeGreater> LanesBlock<'_, F> {
    /// `P` consecutive output pixels of one row, whose tap (0, 0) reads the tile's vector
    /// `start`: each sum `0 + w0 x0 + w1 x1 + ...` over the taps in order, in registers (every
    /// tap one run of `P` consecutive vectors), then `+ bias` and the activation, into
    /// `out[..P]`. Returns `P`.
    #[inline(always)]
    fn run<const P: usize>(&self, start: usize, out: &mut [Vector]) -> usize {
        let mut sums = [[0.0f32; LANES]; P];
        // The words every tap of the run reads: never short, as `Lanes::of` made the tile as
        // tall and wide as a band reads (checked once here, not at every tap).
        let Some(window) = self.tile.get(start..start + self.reach + P) else {
            return P;
        };
        for (w, &at) in self.weights.iter().zip(self.taps) {
            let Some((x, _)) = window[at..].split_first_chunk::<P>() else {
                continue;
            };
            for (s, x) in sums.iter_mut().zip(x) {
                self.vector.mul_then_add(s, w, x);
            }
        }
        for (s, o) in sums.iter().zip(out) {
            // A copy of its own, held in a register ([`activate`]).
            let mut v = *s;
            if let Some(bias) = &self.bias {
                for (v, &b) in v.iter_mut().zip(bias) {
                    *v += b;
                }
            }
            activate(self.vector, self.act, &mut v);
            *o = v;
        }
        P
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Activation, padded_portable};
    use super::super::{Depthwise, Plane, Planes, depthwise_portable, padded_avx2, padded_avx512};
    use super::{Lanes, lanes_avx2, lanes_avx512, lanes_portable};
    use crate::simd::{Level, detected, dispatch, limit};
    use crate::spatial::ConvGeometry;
    use crate::test_values::values;
    use crate::{Attr, Attrs};
    use std::vec;
    use std::vec::Vec;

    /// The channel-lanes method gives the direct method's bits and the padded method's, at
    /// every level, on the same Convs: tiny planes and 7x7 kernels, a last block of fewer than
    /// 16 channels, two outputs per channel, strides and dilations that differ by axis, pads on
    /// any side, rows narrower than a step of pixels, a batch, an activation, no bias; and
    /// written over its input.
    #[test]
    #[allow(clippy::type_complexity)]
    fn lanes_give_the_direct_and_padded_bits() {
        let cases: [(
            &[(&str, Attr<'_>)],
            [usize; 4],
            [usize; 4],
            [usize; 4],
            bool,
        ); 10] = [
            (
                &[
                    ("group", Attr::Int(136)),
                    ("pads", Attr::Ints(&[1, 1, 1, 1])),
                ],
                [1, 136, 6, 6],
                [136, 1, 3, 3],
                [1, 136, 6, 6],
                true,
            ),
            (
                &[
                    ("group", Attr::Int(152)),
                    ("pads", Attr::Ints(&[3, 3, 3, 3])),
                    ("activation", Attr::Str("Relu")),
                ],
                [2, 152, 7, 7],
                [152, 1, 7, 7],
                [2, 152, 7, 7],
                true,
            ),
            (
                &[
                    ("group", Attr::Int(185)),
                    ("pads", Attr::Ints(&[2, 0, 1, 3])),
                    ("strides", Attr::Ints(&[2, 1])),
                    ("dilations", Attr::Ints(&[1, 2])),
                ],
                [1, 185, 9, 6],
                [370, 1, 3, 3],
                [1, 370, 5, 5],
                true,
            ),
            (
                &[
                    ("group", Attr::Int(337)),
                    ("pads", Attr::Ints(&[1, 1, 1, 1])),
                    ("strides", Attr::Ints(&[2, 2])),
                    ("activation", Attr::Str("HardSwish")),
                ],
                [1, 337, 14, 13],
                [337, 1, 3, 3],
                [1, 337, 7, 7],
                true,
            ),
            (
                &[
                    ("group", Attr::Int(720)),
                    ("pads", Attr::Ints(&[2, 2, 2, 2])),
                ],
                [1, 720, 3, 2],
                [720, 1, 5, 5],
                [1, 720, 3, 2],
                true,
            ),
            (
                &[
                    ("group", Attr::Int(149)),
                    ("pads", Attr::Ints(&[3, 3, 3, 3])),
                ],
                [1, 149, 14, 14],
                [149, 1, 7, 7],
                [1, 149, 14, 14],
                false,
            ),
            (
                &[("group", Attr::Int(115))],
                [1, 115, 1, 9],
                [115, 1, 1, 3],
                [1, 115, 1, 7],
                true,
            ),
            (
                &[
                    ("group", Attr::Int(176)),
                    ("auto_pad", Attr::Str("SAME_UPPER")),
                    ("activation", Attr::Str("Clip")),
                    ("activation_params", Attr::Floats(&[-0.5, 0.75])),
                ],
                [1, 176, 5, 8],
                [176, 1, 4, 4],
                [1, 176, 5, 8],
                true,
            ),
            // A plane in bands (its tile larger than the scratch allows), run in place by the
            // padded method only.
            (
                &[
                    ("group", Attr::Int(60)),
                    ("pads", Attr::Ints(&[3, 3, 3, 3])),
                    ("activation", Attr::Str("Relu")),
                ],
                [1, 60, 16, 15],
                [60, 1, 7, 7],
                [1, 60, 16, 15],
                true,
            ),
            // Strides 2 and 3 (three column phases), a dilated row of taps, uneven pads.
            (
                &[
                    ("group", Attr::Int(203)),
                    ("pads", Attr::Ints(&[3, 6, 2, 5])),
                    ("strides", Attr::Ints(&[2, 3])),
                    ("dilations", Attr::Ints(&[1, 2])),
                ],
                [1, 203, 23, 29],
                [203, 1, 7, 7],
                [1, 203, 11, 10],
                true,
            ),
        ];
        let mut banded = 0;
        for (list, xs, ws, ys, with_bias) in cases {
            let attrs = Attrs::new(list);
            let geo = ConvGeometry::new(&attrs, &xs, &ws, &ys).unwrap();
            let Some(tile) = Lanes::of(&geo) else {
                panic!("{xs:?} {ws:?} does not take the channel-lanes method");
            };
            banded += usize::from(!tile.whole(&geo));
            let plane = Plane::of(&geo.win).unwrap();
            let x = values(xs.iter().product(), 1);
            let w = values(ws.iter().product(), 2);
            let b = values(ws[0], 3);
            let d = Depthwise {
                geo: &geo,
                planes: Planes::whole(&geo),
                x: Some(&x),
                w: &w,
                bias: with_bias.then_some(&b[..]),
                act: Activation::from_attrs(&attrs).unwrap(),
            };
            let mut direct = vec![f32::NAN; ys.iter().product()];
            depthwise_portable(&d, &mut direct).unwrap();
            for level in [Level::Portable, Level::Avx2, Level::Avx512] {
                if level > detected() {
                    continue;
                }
                limit(level);
                // Scratch full of NaNs: a word read before it is written would show.
                let mut scratch = vec![f32::NAN; 2 * tile.words() + plane.reach];
                let mut lanes = vec![f32::NAN; direct.len()];
                dispatch!(
                    lanes_portable,
                    lanes_avx2,
                    lanes_avx512,
                    (&d, &tile, &mut scratch, &mut lanes)
                )
                .unwrap();
                let mut padded = vec![f32::NAN; direct.len()];
                let pad = &mut scratch[..plane.reach];
                dispatch!(
                    padded_portable,
                    padded_avx2,
                    padded_avx512,
                    (&d, &plane, pad, &mut padded)
                )
                .unwrap();
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&lanes), bits(&direct), "{xs:?} {ws:?} at {level:?}");
                assert_eq!(bits(&padded), bits(&direct), "{xs:?} {ws:?} at {level:?}");
                if xs[1..] == ys[1..] {
                    // Over its input: the output buffer holds the input planes.
                    let mut over = x.clone();
                    let d = Depthwise { x: None, ..d };
                    let mut scratch = vec![f32::NAN; 2 * tile.words()];
                    let ran = dispatch!(
                        lanes_portable,
                        lanes_avx2,
                        lanes_avx512,
                        (&d, &tile, &mut scratch, &mut over)
                    );
                    if tile.whole(&geo) {
                        ran.unwrap();
                        assert_eq!(bits(&over), bits(&direct), "in place {xs:?} at {level:?}");
                    } else {
                        assert!(ran.is_err(), "in place in bands {xs:?}");
                    }
                }
            }
            limit(Level::Avx512);
        }
        assert!(banded > 0, "no case went in bands");
    }
}
