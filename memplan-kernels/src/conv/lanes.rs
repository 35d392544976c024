//! The channel-lanes method of a depthwise Conv on small planes (a MobileNet's 7 x 7 or 14 x 14
//! tail, a ConvNeXt's 7x7 kernel): 16 channels at a time, one channel a vector lane.
//!
//! Where a plane is small, the padded method ([`Plane`]) spends more on each channel's set-up,
//! its copy and its epilogue than on its sums, and a few outputs leave most of a vector empty.
//! Here a block of 16 channels' input planes is copied once into scratch with its padding,
//! interleaved (`tile[(row * padded width + column) * 16 + lane]`), so that the 16 channels'
//! words at one padded position are one vector: every output pixel of the block is a vector of
//! 16 sums, each tap one vector of weights times one vector of inputs, whatever the stride,
//! the dilation or the plane's size. The sums go straight to their 16 output planes.
//!
//! Each element sums its taps in the order (kh, kw), the padding's zeros included, a product
//! then a sum each rounded, from 0; then the bias and the activation: the padded method's bits.

use super::*;

/// Channels of a block: one vector lane each.
const LANES: usize = 16;
/// Output pixels a step sums at once (their vectors of sums in registers).
const PIXELS: usize = 4;
/// The most taps the method takes (a 7x7 kernel has 49): where each tap reads is on the stack.
const MOST_TAPS: usize = 64;
/// The largest output plane the method takes: past it the padded method's runs of 128 outputs
/// per channel are as fast, and the interleaved tile grows.
const MOST_OUTPUTS: usize = 256;
/// Outputs a channel below which a small kernel takes the method too: with few taps, moving a
/// plane into the lanes and out again costs more than the padded method's set-up unless the
/// plane is tiny (at AVX-512, 3x3 taps: 1.2x on 6 x 6 planes, 0.66x on 14 x 14).
const FEW_OUTPUTS: usize = 64;
/// Taps from which any plane up to [`MOST_OUTPUTS`] takes the method (a 7x7 kernel: 2x on
/// 7 x 7 planes, 1.1x on 14 x 14; a 5x5 one was 0.8x on 14 x 14).
const MANY_TAPS: usize = 49;
/// The most words the interleaved tile may take (64 KiB).
const MOST_WORDS: usize = 1 << 13;

/// A block's interleaved input tile (the padded plane's size) and weights (one vector a tap),
/// in scratch: nothing larger than a step's sums on the stack, a microcontroller's included.
pub(super) struct Lanes {
    /// Padded rows and columns (at least what the window reads).
    rows: usize,
    cols: usize,
    taps: usize,
}

impl Lanes {
    /// The method's tile for a depthwise Conv of geometry `geo`, if it applies: a 1-D or 2-D
    /// window, at most [`MOST_TAPS`] taps, at most [`FEW_OUTPUTS`] outputs a channel (at most
    /// [`MOST_OUTPUTS`] with [`MANY_TAPS`]), and a tile of at most [`MOST_WORDS`], no larger
    /// than the padded plane or a quarter of the output.
    pub(super) fn of(geo: &ConvGeometry) -> Option<Lanes> {
        let win = &geo.win;
        if !geo.depthwise()
            || win.input[0] != 1
            || win.kernel[0] != 1
            || win.output[0] != 1
            || geo.taps() > MOST_TAPS
            || win.output.contains(&0)
        {
            return None;
        }
        let outputs: usize = win.output.iter().product();
        if outputs > MOST_OUTPUTS || (outputs > FEW_OUTPUTS && geo.taps() < MANY_TAPS) {
            return None;
        }
        let lanes = Lanes {
            rows: padded_extent(win, 1),
            cols: padded_extent(win, 2),
            taps: geo.taps(),
        };
        let plane = Plane::of(win).map_or(0, |p| p.reach.div_ceil(2));
        let most = MOST_WORDS.min(plane.max(quarter_of_output(geo)));
        (lanes.words() <= most).then_some(lanes)
    }

    /// Scratch words: the interleaved tile and weights.
    pub(super) fn words(&self) -> usize {
        ((self.rows * self.cols + self.taps) * LANES).div_ceil(2)
    }
}

pub(super) fn lanes_portable(
    d: &Depthwise<'_>,
    tile: &Lanes,
    buf: &mut [f32],
    y: &mut [f32],
) -> Result<(), KernelError> {
    lanes(ScalarFma, d, tile, buf, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(super) fn lanes_avx2(
    d: &Depthwise<'_>,
    tile: &Lanes,
    buf: &mut [f32],
    y: &mut [f32],
) -> Result<(), KernelError> {
    lanes(Avx2Fma::new(), d, tile, buf, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
pub(super) fn lanes_avx512(
    d: &Depthwise<'_>,
    tile: &Lanes,
    buf: &mut [f32],
    y: &mut [f32],
) -> Result<(), KernelError> {
    lanes(Avx512Fma::new(), d, tile, buf, y)
}

/// A vector of the 16 channels' words at one place.
type Vector = [f32; LANES];

/// The channel-lanes method: per block of 16 output channels, their input planes interleaved
/// into `buf` with their padding (the padding's zeros written once: every block's inputs lie
/// at the same words), the block's weights interleaved per tap, then every output pixel's 16
/// sums, [`PIXELS`] pixels of a row at a time.
#[inline(always)]
fn lanes<F: DepthwiseSteps>(
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
    let cols = tile.cols;
    let Some(buf) = buf.get_mut(..(tile.rows * cols + taps) * LANES) else {
        bail!("internal error: the scratch cannot hold the interleaved tile");
    };
    let (vectors, _) = buf.as_chunks_mut::<LANES>();
    let (tile_rows, weights) = vectors.split_at_mut(tile.rows * cols);
    tile_rows.fill([0.0; LANES]);
    weights.fill([0.0; LANES]);
    // Where each tap reads pixel (0, 0), in vectors.
    let mut at = [0usize; MOST_TAPS];
    for th in 0..kh {
        for tw in 0..kw {
            at[th * kw + tw] = th * dh * cols + tw * dw;
        }
    }
    let at = &at[..taps];
    for b in 0..geo.n {
        let mut oc0 = 0;
        while oc0 < m {
            let lanes = LANES.min(m - oc0);
            // The block's inputs, lane by lane (every earlier block wrote the same words).
            for lane in 0..lanes {
                let ic = (oc0 + lane) / mg;
                let src = match d.x {
                    Some(x) => &x[(b * c + ic) * d.planes.x..][..in_plane],
                    // In place (`in_place_plane`: one output channel per input channel, planes
                    // of one size): the block's output planes still hold its inputs, read
                    // whole before any output is written.
                    None => &y[(b * c + ic) * in_plane..][..in_plane],
                };
                for (yi, row) in src.chunks_exact(iw.max(1)).take(ih).enumerate() {
                    let dst = &mut tile_rows[(yi + top) * cols + left..][..iw];
                    for (v, &x) in dst.iter_mut().zip(row) {
                        v[lane] = x;
                    }
                }
            }
            let mut bias = [0.0f32; LANES];
            for lane in 0..lanes {
                let oc = oc0 + lane;
                for (t, &w) in d.w[oc * taps..][..taps].iter().enumerate() {
                    weights[t][lane] = w;
                }
                if let Some(b) = d.bias {
                    bias[lane] = b[oc];
                }
            }
            let (weights, tile): (&[Vector], &[Vector]) = (weights, tile_rows);
            let out = &mut y[(b * m + oc0) * d.planes.y..];
            for yo in 0..oh {
                let row = yo * sh * cols;
                let mut xo = 0;
                while xo < ow {
                    let step = if ow - xo >= PIXELS { PIXELS } else { 1 };
                    let mut sums = [[0.0f32; LANES]; PIXELS];
                    for (w, &at) in weights.iter().zip(at) {
                        let base = row + at + xo * sw;
                        for (p, s) in sums.iter_mut().enumerate().take(step) {
                            // Inside the tile: `Lanes::of` made it as large as the window reads.
                            let Some(x) = tile.get(base + p * sw) else {
                                continue;
                            };
                            vector.mul_then_add(s, w, x);
                        }
                    }
                    for (p, s) in sums.iter_mut().enumerate().take(step) {
                        if d.bias.is_some() {
                            for (s, &b) in s.iter_mut().zip(&bias) {
                                *s += b;
                            }
                        }
                        d.act.apply(s);
                        let q = yo * ow + xo + p;
                        for (lane, &v) in s.iter().enumerate().take(lanes) {
                            if let Some(o) = out.get_mut(lane * d.planes.y + q) {
                                *o = v;
                            }
                        }
                    }
                    xo += step;
                }
            }
            oc0 += lanes;
        }
    }
    Ok(())
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
        ); 8] = [
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
        ];
        for (list, xs, ws, ys, with_bias) in cases {
            let attrs = Attrs::new(list);
            let geo = ConvGeometry::new(&attrs, &xs, &ws, &ys).unwrap();
            let Some(tile) = Lanes::of(&geo) else {
                panic!("{xs:?} {ws:?} does not take the channel-lanes method");
            };
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
                    dispatch!(
                        lanes_portable,
                        lanes_avx2,
                        lanes_avx512,
                        (&d, &tile, &mut scratch, &mut over)
                    )
                    .unwrap();
                    assert_eq!(bits(&over), bits(&direct), "in place {xs:?} at {level:?}");
                }
            }
            limit(Level::Avx512);
        }
    }
}
