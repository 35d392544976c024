//! The direct method of a 2-D Conv with packed weights on narrow output rows or a strided
//! window (a ResNet's 3x3 Convs at 8 x 8 or 7 x 7, its stride-2 ones, its 1x1 stride-2
//! shortcuts): output channels across the vector lanes, output pixels broadcast. No im2col
//! panel is packed, and no vector lane computes a column that is thrown away.
//!
//! The packed weights are already what the method needs: a panel holds, for each step of `k`
//! (input channel, kh, kw), the weights of 16 output channels, one vector. A tile is `H`
//! consecutive output pixels of one output row by one or two panels of output channels, its
//! sums in registers; per step of `k` it loads the panels' weight vectors, and for each pixel
//! broadcasts the one input element that step reads for it and adds its product to the pixel's
//! sums (`fma`). The inputs are read from a copy of the band's input rows with their padding
//! (every input channel's rows under a band of output rows, each row `width` words: the left
//! padding's zeros, the row, the right padding's zeros), where step `(ic, kh, kw)` of pixel `x`
//! of output row `r` lies at `ic channel + (r sh + kh dh) width + x sw + kw dw`: one table of
//! `k` offsets for the whole Conv, and the pixels of a tile a constant stride apart. A row's
//! tiles are of equal width but the last, which may be narrower (tiles never overlap: a pass's
//! sums go through the output, and a pixel computed twice would be summed twice).
//!
//! Each output element sums its products in increasing `(input channel, kh, kw)`, the padding's
//! zeros included, from zero, one rounding per step (`fma`), then adds the bias and applies the
//! activation: the im2col method's bits. The finished tile is turned around (pixels become each
//! output channel's run of consecutive outputs) on the stack and written out.

use super::*;
use crate::simd::{Level, MulAdd, Transpose};

/// The most output pixels of a tile at AVX-512 (two panels: 28 sums, two weight vectors and a
/// broadcast in the 32 vector registers).
#[cfg(target_arch = "x86_64")]
const MOST_PIXELS: usize = 14;
/// The most output pixels of a tile at AVX2 (one panel, two vectors of 8 lanes: 12 sums, two
/// weight vectors and a broadcast in the 16 vector registers) and in the portable build.
const MOST_PIXELS_NARROW: usize = 6;

/// The most steps of `k` whose offsets a Conv read in place keeps on the stack (8 KiB).
const STACK_STEPS: usize = 2048;

/// Output columns of a segment are a multiple of this: whole tiles at AVX-512.
const SEGMENT_COLUMNS: usize = 14;

/// The method's layout for a Conv: how many output rows a band holds, how many input channels
/// a pass over it sums, and where their input rows lie in scratch.
pub(super) struct Direct {
    /// Output rows of a band (the last band may hold fewer).
    rows: usize,
    /// Input channels of a pass (the last may hold fewer): a pass copies their rows under the
    /// band and adds their steps to the band's sums, which go through the output in between
    /// (exactly: the next pass picks them up), so that many input channels need not fit the
    /// scratch at once.
    chunk: usize,
    /// Output columns of a segment (the last may hold fewer): the whole row, or, where the
    /// scratch cannot hold every input channel's padded rows under a band of one row (a 1-D
    /// Conv of 64 channels on 200 steps), a part of it whose input columns it can, so that
    /// one pass sums every channel (passes of 14 channels ran 1.4x slower).
    cols: usize,
    /// Words of a padded input row: the left padding, the input row, the right padding (as many
    /// columns as the last output reads), or a segment's input columns.
    width: usize,
    /// Words from one input channel's rows to the next's: a whole band's padded input rows.
    channel: usize,
    /// Steps of `k` per input channel: `KH x KW`.
    taps: usize,
    /// No padding: the inputs are read in place, not copied (`width` and `channel` are the
    /// input's own, one pass sums every input channel).
    in_place: bool,
}

impl Direct {
    /// The method's layout for `geo` in at most `most` words of scratch, if it applies: a 2-D
    /// window of horizontal stride 1 or 2, not depthwise, and a band of at least one output
    /// row and one input channel whose rows and offsets fit. Bands as tall as fit with every
    /// input channel in one pass, else bands of one row: cut into segments of the row whose
    /// input columns every channel's fit, or in passes of as many channels as fit.
    pub(super) fn of(geo: &ConvGeometry, most: usize) -> Option<Direct> {
        let w = &geo.win;
        if w.input[0] != 1
            || w.kernel[0] != 1
            || w.output[0] != 1
            || !(1..=2).contains(&w.strides[2])
            || geo.depthwise()
            || w.output.contains(&0)
            || w.input.contains(&0)
        {
            return None;
        }
        let cg = geo.c / geo.group;
        let taps = geo.taps();
        if w.pad_begin.iter().chain(&w.pad_end).all(|&p| p == 0) {
            let layout = Direct {
                rows: w.output[1],
                chunk: cg,
                cols: w.output[2],
                width: w.input[2],
                channel: w.input[1].checked_mul(w.input[2])?,
                taps,
                in_place: true,
            };
            return (layout.words() <= most || layout.steps_on_stack()).then_some(layout);
        }
        let reach = (w.output[2] - 1)
            .checked_mul(w.strides[2])?
            .checked_add((w.kernel[2] - 1).checked_mul(w.dilations[2])?)?
            .checked_add(1)?;
        let width = reach.max(w.pad_begin[2].checked_add(w.input[2])?);
        let mut layout = Direct {
            rows: w.output[1],
            chunk: cg,
            cols: w.output[2],
            width,
            channel: 0,
            taps,
            in_place: false,
        };
        loop {
            layout.channel = band_height(w, layout.rows)?.checked_mul(width)?;
            if layout.words() <= most || layout.rows == 1 {
                break;
            }
            layout.rows = layout.rows.div_ceil(2);
        }
        // Floats per input channel of a pass: its rows and its offsets.
        let per_channel = layout.channel.checked_add(taps)?;
        layout.chunk = cg.min(most.saturating_mul(2) / per_channel);
        if layout.chunk < cg && layout.rows == 1 {
            // Segments of the row whose input columns every channel's fit.
            let height = band_height(w, 1)?;
            let room = (most.saturating_mul(2) / cg).saturating_sub(taps) / height;
            let span = (w.kernel[2] - 1).checked_mul(w.dilations[2])?;
            let cols = (room.saturating_sub(span + 1) / w.strides[2] + 1) / SEGMENT_COLUMNS
                * SEGMENT_COLUMNS;
            if room > span && cols > 0 && cols < w.output[2] {
                layout.cols = cols;
                layout.width = (cols - 1) * w.strides[2] + span + 1;
                layout.channel = height * layout.width;
                layout.chunk = cg;
            }
        }
        // Every offset fits the `u32` table.
        let all = u32::try_from(layout.channel.checked_mul(layout.chunk)?).is_ok();
        (layout.chunk > 0 && all).then_some(layout)
    }

    /// Whether the method can run on input planes `planes.x` words apart: every offset fits
    /// the `u32` table (read in place, a step's offset is counted in the input's planes).
    pub(super) fn fits(&self, planes: Planes) -> bool {
        let channel = if self.in_place {
            planes.x
        } else {
            self.channel
        };
        channel
            .checked_mul(self.chunk)
            .and_then(|all| u32::try_from(all).ok())
            .is_some()
    }

    /// Whether the offsets of the steps live on the stack, not in scratch: read in place (one
    /// pass), at most [`STACK_STEPS`] of them. A pointwise Conv has no scratch of its own (the
    /// product reads its input in place); this way the method needs none either.
    fn steps_on_stack(&self) -> bool {
        self.in_place && self.chunk.saturating_mul(self.taps) <= STACK_STEPS
    }

    /// Scratch words: a pass's padded rows (`f32`, none when read in place), the offset of each
    /// of its steps (`u32`).
    pub(super) fn words(&self) -> usize {
        let rows = if self.in_place { 0 } else { self.channel };
        rows.saturating_add(self.taps)
            .saturating_mul(self.chunk)
            .div_ceil(2)
    }
}

/// Whether the direct method, laid out as `layout`, is the one to take for `geo`: on x86-64,
/// not for a Conv the padded-rows method takes (stride 1, output rows a multiple of 16: its
/// tiles of 16 output columns waste nothing there, and it ran 1.0-1.4x faster) unless its `k`
/// is deep ([`deep_enough_for_direct`]), nor for the pointwise product (the input read in
/// place, no window). Measured alone against the method each Conv took before (padded planes
/// or im2col), side by side, the same bits:
///
/// - at AVX-512 it takes every other Conv: a 3x3 stride-2 Conv of 32 -> 64 channels at 16 x 16
///   2.0-3.1x, of 64 -> 128 at 56 x 56 1.7x, 1x1 stride-2 shortcuts 1.7x (16 -> 32 at 32 x 32)
///   to 4.9x (128 -> 256 at 28 x 28), 3x3 Convs at 8 x 8, 13 x 13, 28 x 28 and 55 x 55
///   1.1-1.5x, stems of stride 2 at 96 x 96 and 224 x 224 0.91-1.11x, 512 channels at 7 x 7
///   (input channels in passes) 0.94x;
/// - at AVX2 (one panel, 6 pixels a tile) only Convs of at least 64 steps of `k` in one pass:
///   there a 3x3 stride-2 Conv 1.7-1.8x, 1x1 stride-2 128 -> 256 2.4x, 3x3 Convs at 55 x 55,
///   28 x 28, 12 x 12 and 7 x 7 1.1-1.6x; a 3-channel stem ran 0.5x, a 32 -> 64 shortcut 0.5x
///   and 512 channels at 7 x 7 in passes 0.8x.
///
/// A pointwise Conv ([`pointwise_as_row`]) takes it where the product's tiles of 16 output
/// pixels waste lanes: a plane of at least 2 pixels, not a multiple of 16, with a fifth or more
/// of the last tile's lanes empty, or with at least 192 input channels. (A single pixel, a
/// squeeze-and-excitation block's, ran 0.83-1.1x by the direct method: each tile of one pixel
/// is turned around whole.) Measured alone against the product, the same bits, at AVX-512:
/// 256 -> 256 at 2 x 2 2.4x and at 3 x 3 2.9-3.0x, 64 -> 64 at 5 x 5 1.46x, 128 -> 128 at
/// 6 x 6 1.18x, 576 -> 96, 960 -> 160 and 320 -> 1280 at 7 x 7 1.25-1.30x, 256 -> 256 at
/// 10 x 10 1.14x, 512 -> 64 and 512 -> 1000 at 13 x 13 1.31-1.37x, 576 -> 96 at 14 x 14 1.21x,
/// 256 -> 32 at 27 x 27 1.02x; left to the product: 96 -> 576 at 14 x 14 0.93x, 64 -> 256 and
/// 48 -> 192 at 13 x 13 0.86-0.91x, 128 -> 16 at 55 x 55 0.58x, and planes of 64, 144 or 256
/// pixels 0.77-0.90x. At AVX2 the same rule's Convs ran 1.02-2.6x.
pub(super) fn direct_pays(geo: &ConvGeometry, layout: &Direct) -> bool {
    let k = (geo.c / geo.group).saturating_mul(geo.taps());
    let taken_before = if geo.pointwise() {
        let pixels: usize = geo.win.output.iter().product();
        let tiles = pixels.next_multiple_of(PANEL);
        let empty = tiles - pixels;
        empty == 0 || pixels < 2 || (5 * empty < tiles && k < 192)
    } else {
        PaddedRows::of(geo).is_some()
            && !(crate::simd::level() == Level::Avx512 && deep_enough_for_direct(geo, layout))
    };
    cfg!(target_arch = "x86_64")
        && !taken_before
        && match crate::simd::level() {
            Level::Avx512 => true,
            _ => k >= 64 && layout.chunk * layout.taps >= k,
        }
}

/// Whether a Conv the padded-rows method takes runs faster by the direct method (at AVX-512):
/// a deep `k` (at least 64 input channels of a 3x3 window) in one pass, into whole panels of at
/// least 32 output channels. There the padded-rows method's tiles of 16 x 16 (one vector of
/// `B`, 16 broadcasts of `A` a step) wait on loads, where the direct method's (a few pixels by
/// several panels of output channels) do not. Alone, the same bits: 64 -> 64 at 16 x 16 to
/// 64 x 64 1.07-1.16x, 96 -> 32 and 128 -> 32 at 32 x 32 1.17x, 128 -> 128 at 16 x 16 1.17x,
/// 256 -> 256 at 16 x 16 1.13x, 64 -> 128 at 32 x 32 1.15x; left to padded rows: fewer input
/// channels (16 -> 16 0.75-0.87x, 32 -> 32 0.95x, 48 -> 48 0.96x), 16 output channels (64 -> 16
/// 0.79x), 40 output channels (0.84x), 512 -> 512 at 16 x 16 (0.96x).
fn deep_enough_for_direct(geo: &ConvGeometry, layout: &Direct) -> bool {
    let k = (geo.c / geo.group).saturating_mul(geo.taps());
    let mg = geo.m / geo.group;
    (576..=2304).contains(&k)
        && mg >= 2 * PANEL
        && mg.is_multiple_of(PANEL)
        && layout.chunk * layout.taps >= k
}

/// A pointwise Conv's geometry with its output plane as one row (its input's too: a 1x1
/// window of stride 1 reads pixel `i` for output `i`), so that the direct method's tiles run on
/// across the plane's rows.
pub(super) fn pointwise_as_row(geo: &ConvGeometry) -> ConvGeometry {
    let mut row = geo.clone();
    for dims in [&mut row.win.input, &mut row.win.output] {
        let pixels: usize = dims.iter().product();
        dims.fill(1);
        if let Some(last) = dims.last_mut() {
            *last = pixels;
        }
    }
    row
}

/// Padded input rows a band of `rows` output rows reads.
fn band_height(w: &Window, rows: usize) -> Option<usize> {
    (rows - 1)
        .checked_mul(w.strides[1])?
        .checked_add((w.kernel[1] - 1).checked_mul(w.dilations[1])?)?
        .checked_add(1)
}

/// Everything a Conv by the direct method reads and writes.
pub(super) struct DirectArgs<'a, 'y> {
    pub(super) geo: &'a ConvGeometry,
    pub(super) layout: &'a Direct,
    pub(super) planes: Planes,
    /// The packed weights: each group's `ceil(mg / 16) x k` rows.
    pub(super) panels: &'a [Row],
    pub(super) x: &'a [f32],
    pub(super) bias: Option<&'a [f32]>,
    pub(super) act: Activation,
    pub(super) y: &'y mut [f32],
}

/// The method in the portable build (x86-64 without AVX2 takes it too: [`direct_pays`]).
pub(super) fn direct_portable(args: &mut DirectArgs<'_, '_>, scratch: &mut [u64]) {
    direct::<ScalarFma, MOST_PIXELS_NARROW, false>(ScalarFma, args, scratch);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(super) fn direct_avx2(args: &mut DirectArgs<'_, '_>, scratch: &mut [u64]) {
    direct::<Avx2Fma, MOST_PIXELS_NARROW, false>(Avx2Fma::new(), args, scratch);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
pub(super) fn direct_avx512(args: &mut DirectArgs<'_, '_>, scratch: &mut [u64]) {
    direct::<Avx512Fma, MOST_PIXELS, true>(Avx512Fma::new(), args, scratch);
}

/// The method at one level: tiles of at most `MOST` pixels, of two panels when `PAIRS`.
/// The caller checked the operands' lengths ([`compute`]) and that `scratch` holds
/// [`Direct::words`].
#[inline(always)]
fn direct<F: MulAdd + Transpose, const MOST: usize, const PAIRS: bool>(
    fma: F,
    args: &mut DirectArgs<'_, '_>,
    scratch: &mut [u64],
) {
    let DirectArgs {
        geo,
        layout,
        planes,
        panels,
        x,
        bias,
        act,
        ref mut y,
    } = *args;
    let win = &geo.win;
    let (c, m, group) = (geo.c, geo.m, geo.group);
    let (cg, mg, taps, chunk) = (c / group, m / group, layout.taps, layout.chunk);
    let k = cg * taps;
    let [ih, iw] = [win.input[1], win.input[2]];
    let [oh, ow] = [win.output[1], win.output[2]];
    let [sh, sw] = [win.strides[1], win.strides[2]];
    let (kh, kw) = (win.kernel[1], win.kernel[2]);
    let (dh, dw) = (win.dilations[1], win.dilations[2]);
    let (top, left) = (win.pad_begin[1], win.pad_begin[2]);
    let (width, channel) = match layout.in_place {
        true => (iw, planes.x),
        false => (layout.width, layout.channel),
    };
    let floats: &mut [f32] = bytemuck::cast_slice_mut(scratch);
    let copied = if layout.in_place { 0 } else { chunk * channel };
    let Some((buf, rest)) = floats.split_at_mut_checked(copied) else {
        return;
    };
    let mut on_stack;
    let offsets: &mut [u32] = if layout.steps_on_stack() {
        on_stack = [0u32; STACK_STEPS];
        &mut on_stack[..chunk * taps]
    } else {
        let Some(offsets) = rest.get_mut(..chunk * taps) else {
            return;
        };
        bytemuck::cast_slice_mut(offsets)
    };
    // Step `(ic, kh, kw)`'s input for a tile's first pixel, from the pixel's top-left corner
    // in the pass's first channel.
    let mut at = offsets.iter_mut();
    for ic in 0..chunk {
        for r in 0..kh {
            for s in 0..kw {
                if let Some(o) = at.next() {
                    // `Direct::fits` checked that `chunk * channel` fits a `u32`.
                    *o = u32::try_from(ic * channel + r * dh * width + s * dw).unwrap_or(0);
                }
            }
        }
    }
    let offsets: &[u32] = offsets;
    let panels_per_group = mg.div_ceil(PANEL);
    for b in 0..geo.n {
        for g in 0..group {
            let xg = &x[(b * c + g * cg) * planes.x..];
            let mut y0 = 0;
            while y0 < oh {
                let rows = layout.rows.min(oh - y0);
                // The row's segments (one, the whole row, unless the layout cuts it).
                let mut xs0 = 0;
                while xs0 < ow {
                    let seg = layout.cols.min(ow - xs0);
                    // A segment's tiles: as few as `MOST` allows, of equal width `wide` but the last.
                    let tiles = seg.div_ceil(MOST);
                    let wide = seg.div_ceil(tiles);
                    let mut ic0 = 0;
                    while ic0 < cg {
                        let cc = chunk.min(cg - ic0);
                        let pass = Pass {
                            first: ic0 == 0,
                            last: ic0 + cc == cg,
                        };
                        // The pass's padded input rows under the band, `y0 sh` on (read in place:
                        // the input's rows).
                        let band: &[f32] = if layout.in_place {
                            &xg[ic0 * planes.x + y0 * sh * iw..]
                        } else {
                            let height = (rows - 1) * sh + (kh - 1) * dh + 1;
                            for ic in 0..cc {
                                let plane = &xg[(ic0 + ic) * planes.x..][..ih * iw];
                                for r in 0..height {
                                    let dst = &mut buf[ic * channel + r * width..][..width];
                                    let src = (y0 * sh + r)
                                        .checked_sub(top)
                                        .filter(|&i| i < ih)
                                        .map(|i| &plane[i * iw..][..iw]);
                                    // The segment's padded columns from `xs0 sw` on.
                                    let start = xs0 * sw;
                                    let src =
                                        src.map(|row| &row[start.saturating_sub(left).min(iw)..]);
                                    pad_row(dst, src, left.saturating_sub(start));
                                }
                            }
                            buf
                        };
                        let steps = &offsets[..cc * taps];
                        for r in 0..rows {
                            // A pair of panels along the whole segment, then the next: the
                            // tiles of a segment write each output channel's run of it in order
                            // (32 runs at a time, not every channel's).
                            let mut panel = 0;
                            while panel < panels_per_group {
                                let pair = PAIRS && panel + 1 < panels_per_group;
                                let count = if pair { 2 } else { 1 };
                                let m0 = panel * PANEL;
                                let first = (g * panels_per_group + panel) * k + ic0 * taps;
                                let w0 = &panels[first..][..cc * taps];
                                let w1 = match pair {
                                    true => &panels[first + k..][..cc * taps],
                                    false => w0,
                                };
                                // Panel `v`'s first output channel and its lanes in use.
                                let part = |v: usize| {
                                    let oc0 = g * mg + m0 + v * PANEL;
                                    (oc0, PANEL.min(mg - m0 - v * PANEL))
                                };
                                // The panels' biases, one lane per output channel (zero past the
                                // last channel: those lanes are never written out).
                                let mut lane_bias = [[0.0f32; PANEL]; 2];
                                if let Some(bias) = bias {
                                    for (v, lb) in lane_bias.iter_mut().enumerate().take(count) {
                                        let (oc0, lanes) = part(v);
                                        lb[..lanes].copy_from_slice(&bias[oc0..][..lanes]);
                                    }
                                }
                                for t in 0..tiles {
                                    let x0 = xs0 + t * wide;
                                    let h = wide.min(xs0 + seg - x0);
                                    let from = &band[r * sh * width + (x0 - xs0) * sw..];
                                    let out = (y0 + r) * ow + x0;
                                    let mut sums = [[[0.0f32; PANEL]; 2]; MOST];
                                    let sums = &mut sums[..h];
                                    let mut block = [[0.0f32; PANEL]; PANEL];
                                    if !pass.first {
                                        for v in 0..count {
                                            let (oc0, lanes) = part(v);
                                            for (j, row) in block.iter_mut().take(lanes).enumerate()
                                            {
                                                let at = (b * m + oc0 + j) * planes.y + out;
                                                copy_words(&mut row[..h], &y[at..][..h]);
                                            }
                                            fma.transpose16(&mut block);
                                            for (s, row) in sums.iter_mut().zip(&block) {
                                                s[v] = *row;
                                            }
                                        }
                                    }
                                    let ends = Ends {
                                        resume: !pass.first,
                                        bias: (pass.last && bias.is_some()).then_some(&lane_bias),
                                    };
                                    tile::<F, MOST>(
                                        fma,
                                        sw,
                                        pair,
                                        sums,
                                        [w0, w1],
                                        from,
                                        steps,
                                        ends,
                                    );
                                    if pass.last {
                                        // The panels in use only: a tile of one panel leaves the
                                        // second's lanes empty (as costly as the first's for a
                                        // Sigmoid or a SiLU).
                                        if pair {
                                            act.apply(sums.as_flattened_mut().as_flattened_mut());
                                        } else {
                                            for s in sums.iter_mut() {
                                                act.apply(&mut s[0]);
                                            }
                                        }
                                    }
                                    for v in 0..count {
                                        let (oc0, lanes) = part(v);
                                        for (row, s) in block.iter_mut().zip(sums.iter()) {
                                            *row = s[v];
                                        }
                                        fma.transpose16(&mut block);
                                        for (j, row) in block.iter().take(lanes).enumerate() {
                                            let at = (b * m + oc0 + j) * planes.y + out;
                                            copy_words(&mut y[at..][..h], &row[..h]);
                                        }
                                    }
                                }
                                panel += count;
                            }
                        }
                        ic0 += cc;
                    }
                    xs0 += seg;
                }
                y0 += rows;
            }
        }
    }
}

/// Where a pass over a band's input channels stands: its sums start from zero (`first`) or
/// from the previous pass's in the output; they are finished (`last`: bias and activation) or
/// left for the next.
struct Pass {
    first: bool,
    last: bool,
}

/// Where a tile's sums start and what is added when they end.
#[derive(Clone, Copy)]
struct Ends<'a> {
    /// The sums start from `sums` (a previous pass's), else from zero.
    resume: bool,
    /// The panels' biases, one lane per output channel, added to the finished sums (in the
    /// last pass), `sum + bias` as the other methods add it.
    bias: Option<&'a [Row; 2]>,
}

/// `s[j] += b[j]`: the bias on a pixel's sums while they are in a register.
#[inline(always)]
fn add_lanes(s: &mut Row, b: &Row) {
    for (e, &add) in s.iter_mut().zip(b) {
        *e += add;
    }
}

/// A tile of one panel (`w[0]`, sums `[p][0]`) or, when `pair`, two (`w[1]` too, sums
/// `[p][1]`): `sums[p][v][j] = fma(x_p(step), w[v][step][j], ...)` over every step, in order,
/// for the tile's `sums.len()` pixels (`sw` words apart in `x`, pixel 0's input of step `s` at
/// `x[offsets[s]]`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn tile<F: MulAdd, const MOST: usize>(
    fma: F,
    sw: usize,
    pair: bool,
    sums: &mut [[Row; 2]],
    w: [&[Row]; 2],
    x: &[f32],
    offsets: &[u32],
    ends: Ends<'_>,
) {
    macro_rules! go {
        ($($h:literal $one:ident $two:ident),+) => {
            match (sums.len(), sw, pair) {
                $(
                    ($h, 1, false) if $h <= MOST => $one::<F, 1>(fma, sums, w[0], x, offsets, ends),
                    ($h, _, false) if $h <= MOST => $one::<F, 2>(fma, sums, w[0], x, offsets, ends),
                    ($h, 1, true) if $h <= MOST => $two::<F, 1>(fma, sums, w, x, offsets, ends),
                    ($h, _, true) if $h <= MOST => $two::<F, 2>(fma, sums, w, x, offsets, ends),
                )+
                _ => {}
            }
        };
    }
    go!(1 one1 two1, 2 one2 two2, 3 one3 two3, 4 one4 two4, 5 one5 two5, 6 one6 two6,
        7 one7 two7, 8 one8 two8, 9 one9 two9, 10 one10 two10, 11 one11 two11, 12 one12 two12,
        13 one13 two13, 14 one14 two14);
}

/// A tile of `$h` pixels by one panel, each pixel's sums a variable of its own (so that each
/// is a vector register, as in [`gemm`]'s micro-kernels); `S` is the pixels' stride in `x`.
macro_rules! one_fn {
    ($name:ident, $h:literal, [$($s:ident $i:literal),+]) => {
        #[inline(always)]
        fn $name<F: MulAdd, const S: usize>(
            fma: F,
            sums: &mut [[Row; 2]],
            w: &[Row],
            x: &[f32],
            offsets: &[u32],
            ends: Ends<'_>,
        ) {
            let (Ok(tile), Some(w)) = (
                <&mut [[Row; 2]; $h]>::try_from(sums),
                w.get(..offsets.len()),
            ) else {
                return;
            };
            $(let mut $s = if ends.resume { tile[$i][0] } else { [0.0; PANEL] };)+
            // The inputs a step reads: `$h` pixels `S` words apart.
            let span = ($h - 1) * S + 1;
            for (&o, wv) in offsets.iter().zip(w) {
                let Some(xs) = x.get(o as usize..).and_then(|r| r.get(..span)) else {
                    return;
                };
                $(fma.mul_add(&mut $s, xs[$i * S], wv);)+
            }
            if let Some(bias) = ends.bias {
                $(add_lanes(&mut $s, &bias[0]);)+
            }
            $(tile[$i][0] = $s;)+
        }
    };
}

/// A tile of `$h` pixels by two panels (sums `$s` and `$t` of pixel `$i`).
macro_rules! two_fn {
    ($name:ident, $h:literal, [$($s:ident $t:ident $i:literal),+]) => {
        #[inline(always)]
        fn $name<F: MulAdd, const S: usize>(
            fma: F,
            sums: &mut [[Row; 2]],
            w: [&[Row]; 2],
            x: &[f32],
            offsets: &[u32],
            ends: Ends<'_>,
        ) {
            let k = offsets.len();
            let (Ok(tile), Some(w0), Some(w1)) = (
                <&mut [[Row; 2]; $h]>::try_from(sums),
                w[0].get(..k),
                w[1].get(..k),
            ) else {
                return;
            };
            $(let [mut $s, mut $t] = if ends.resume { tile[$i] } else { [[0.0; PANEL]; 2] };)+
            let span = ($h - 1) * S + 1;
            for ((&o, a), b) in offsets.iter().zip(w0).zip(w1) {
                let Some(xs) = x.get(o as usize..).and_then(|r| r.get(..span)) else {
                    return;
                };
                $(
                    let v = xs[$i * S];
                    fma.mul_add(&mut $s, v, a);
                    fma.mul_add(&mut $t, v, b);
                )+
            }
            if let Some(bias) = ends.bias {
                $(
                    add_lanes(&mut $s, &bias[0]);
                    add_lanes(&mut $t, &bias[1]);
                )+
            }
            $(tile[$i] = [$s, $t];)+
        }
    };
}

one_fn!(one1, 1, [s0 0]);
one_fn!(one2, 2, [s0 0, s1 1]);
one_fn!(one3, 3, [s0 0, s1 1, s2 2]);
one_fn!(one4, 4, [s0 0, s1 1, s2 2, s3 3]);
one_fn!(one5, 5, [s0 0, s1 1, s2 2, s3 3, s4 4]);
one_fn!(one6, 6, [s0 0, s1 1, s2 2, s3 3, s4 4, s5 5]);
one_fn!(one7, 7, [s0 0, s1 1, s2 2, s3 3, s4 4, s5 5, s6 6]);
one_fn!(one8, 8, [s0 0, s1 1, s2 2, s3 3, s4 4, s5 5, s6 6, s7 7]);
one_fn!(one9, 9, [s0 0, s1 1, s2 2, s3 3, s4 4, s5 5, s6 6, s7 7, s8 8]);
one_fn!(one10, 10, [s0 0, s1 1, s2 2, s3 3, s4 4, s5 5, s6 6, s7 7, s8 8, s9 9]);
one_fn!(one11, 11, [s0 0, s1 1, s2 2, s3 3, s4 4, s5 5, s6 6, s7 7, s8 8, s9 9, s10 10]);
one_fn!(one12, 12, [s0 0, s1 1, s2 2, s3 3, s4 4, s5 5, s6 6, s7 7, s8 8, s9 9, s10 10, s11 11]);
one_fn!(one13, 13, [s0 0, s1 1, s2 2, s3 3, s4 4, s5 5, s6 6, s7 7, s8 8, s9 9, s10 10, s11 11, s12 12]);
one_fn!(one14, 14, [s0 0, s1 1, s2 2, s3 3, s4 4, s5 5, s6 6, s7 7, s8 8, s9 9, s10 10, s11 11, s12 12, s13 13]);

two_fn!(two1, 1, [s0 t0 0]);
two_fn!(two2, 2, [s0 t0 0, s1 t1 1]);
two_fn!(two3, 3, [s0 t0 0, s1 t1 1, s2 t2 2]);
two_fn!(two4, 4, [s0 t0 0, s1 t1 1, s2 t2 2, s3 t3 3]);
two_fn!(two5, 5, [s0 t0 0, s1 t1 1, s2 t2 2, s3 t3 3, s4 t4 4]);
two_fn!(two6, 6, [s0 t0 0, s1 t1 1, s2 t2 2, s3 t3 3, s4 t4 4, s5 t5 5]);
two_fn!(two7, 7, [s0 t0 0, s1 t1 1, s2 t2 2, s3 t3 3, s4 t4 4, s5 t5 5, s6 t6 6]);
two_fn!(two8, 8, [s0 t0 0, s1 t1 1, s2 t2 2, s3 t3 3, s4 t4 4, s5 t5 5, s6 t6 6, s7 t7 7]);
two_fn!(two9, 9, [s0 t0 0, s1 t1 1, s2 t2 2, s3 t3 3, s4 t4 4, s5 t5 5, s6 t6 6, s7 t7 7, s8 t8 8]);
two_fn!(two10, 10, [s0 t0 0, s1 t1 1, s2 t2 2, s3 t3 3, s4 t4 4, s5 t5 5, s6 t6 6, s7 t7 7, s8 t8 8, s9 t9 9]);
two_fn!(two11, 11, [s0 t0 0, s1 t1 1, s2 t2 2, s3 t3 3, s4 t4 4, s5 t5 5, s6 t6 6, s7 t7 7, s8 t8 8, s9 t9 9, s10 t10 10]);
two_fn!(two12, 12, [s0 t0 0, s1 t1 1, s2 t2 2, s3 t3 3, s4 t4 4, s5 t5 5, s6 t6 6, s7 t7 7, s8 t8 8, s9 t9 9, s10 t10 10, s11 t11 11]);
two_fn!(two13, 13, [s0 t0 0, s1 t1 1, s2 t2 2, s3 t3 3, s4 t4 4, s5 t5 5, s6 t6 6, s7 t7 7, s8 t8 8, s9 t9 9, s10 t10 10, s11 t11 11, s12 t12 12]);
two_fn!(two14, 14, [s0 t0 0, s1 t1 1, s2 t2 2, s3 t3 3, s4 t4 4, s5 t5 5, s6 t6 6, s7 t7 7, s8 t8 8, s9 t9 9, s10 t10 10, s11 t11 11, s12 t12 12, s13 t13 13]);

#[cfg(test)]
mod tests {
    use super::{Direct, direct_pays};
    use crate::conv::rows::tests::packed_gives_the_im2col_bits;
    use crate::simd::{Level, level};
    use crate::spatial::ConvGeometry;
    use crate::{Attr, Attrs};

    /// The direct method (packed weights) gives the im2col method's bits (the same weights
    /// unpacked), at every level: rows of 8 and 7 (one tile), of 13 and 30 (a narrower last tile),
    /// strides 2 and a 1x1 stride-2 shortcut, output channels that are not a whole number of
    /// panels (a pair then a single panel, a panel of 8 lanes), groups, a batch, dilations,
    /// pads on any side, an activation, bands of fewer rows than the output, input channels in
    /// passes whose sums go through the output (with a narrower last tile).
    #[test]
    #[allow(clippy::type_complexity)]
    fn direct_gives_the_im2col_bits() {
        let pads = ("pads", Attr::Ints(&[1, 1, 1, 1]));
        let cases: [(&[(&str, Attr<'_>)], [usize; 4], [usize; 4], [usize; 4]); 13] = [
            (&[pads], [1, 64, 8, 8], [64, 64, 3, 3], [1, 64, 8, 8]),
            (
                &[pads, ("strides", Attr::Ints(&[2, 2]))],
                [1, 32, 16, 16],
                [64, 32, 3, 3],
                [1, 64, 8, 8],
            ),
            (
                &[("strides", Attr::Ints(&[2, 2]))],
                [1, 16, 32, 32],
                [32, 16, 1, 1],
                [1, 32, 16, 16],
            ),
            (
                &[pads, ("activation", Attr::Str("Relu"))],
                [2, 5, 7, 7],
                [40, 5, 3, 3],
                [2, 40, 7, 7],
            ),
            (
                &[("pads", Attr::Ints(&[0, 2, 1, 0]))],
                [1, 3, 9, 13],
                [24, 3, 2, 3],
                [1, 24, 9, 13],
            ),
            (
                &[
                    ("pads", Attr::Ints(&[2, 2, 2, 2])),
                    ("dilations", Attr::Ints(&[2, 2])),
                    ("strides", Attr::Ints(&[3, 1])),
                ],
                [1, 6, 20, 12],
                [48, 6, 3, 3],
                [1, 48, 7, 12],
            ),
            (
                &[
                    pads,
                    ("group", Attr::Int(2)),
                    ("strides", Attr::Ints(&[1, 2])),
                ],
                [1, 8, 11, 29],
                [64, 4, 3, 3],
                [1, 64, 11, 15],
            ),
            (
                &[pads, ("activation", Attr::Str("Relu"))],
                [1, 3, 5, 3],
                [16, 3, 3, 3],
                [1, 16, 5, 3],
            ),
            // 96 and 160 channels: bands of one row, passes of fewer channels; rows of 7 are
            // two tiles at AVX2, the second narrower.
            (&[pads], [1, 96, 12, 12], [128, 96, 3, 3], [1, 128, 12, 12]),
            (&[pads], [1, 160, 7, 7], [64, 160, 3, 3], [1, 64, 7, 7]),
            // 1-D Convs (a row of one): 64 channels on 200 and 181 steps, dilated, in
            // segments of the row with every channel in one pass; strided.
            (
                &[
                    ("pads", Attr::Ints(&[0, 8, 0, 8])),
                    ("dilations", Attr::Ints(&[1, 8])),
                ],
                [1, 64, 1, 200],
                [64, 64, 1, 3],
                [1, 64, 1, 200],
            ),
            (
                &[
                    ("pads", Attr::Ints(&[0, 1, 0, 2])),
                    ("activation", Attr::Str("Relu")),
                ],
                [1, 96, 1, 181],
                [32, 96, 1, 4],
                [1, 32, 1, 181],
            ),
            (
                &[
                    ("pads", Attr::Ints(&[0, 3, 0, 3])),
                    ("strides", Attr::Ints(&[1, 2])),
                ],
                [1, 80, 1, 301],
                [48, 80, 1, 7],
                [1, 48, 1, 151],
            ),
        ];
        for (list, xs, ws, ys) in cases {
            let attrs = Attrs::new(list);
            let geo = ConvGeometry::new(&attrs, &xs, &ws, &ys).unwrap();
            let scratch =
                crate::conv::scratch_len(&attrs, &[Some(&xs[..]), Some(&ws[..])], &[&ys[..]]);
            let Some(layout) = Direct::of(&geo, scratch.unwrap()) else {
                panic!("{xs:?} {ws:?} does not take the direct method");
            };
            if level() == Level::Avx512 {
                assert!(direct_pays(&geo, &layout), "{xs:?} {ws:?}");
            }
            if xs[2] == 1 {
                assert!(
                    layout.cols < ys[3] && layout.chunk == xs[1],
                    "segments of {} columns, passes of {} channels",
                    layout.cols,
                    layout.chunk
                );
            } else if xs[1] >= 96 {
                assert!(layout.chunk < xs[1], "passes of {} channels", layout.chunk);
            }
            packed_gives_the_im2col_bits(list, xs, ws, ys);
        }
    }
}
