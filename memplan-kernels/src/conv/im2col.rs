//! The input of a Conv seen through its window as the `B` of a matrix product (im2col), one
//! panel of `k` rows x a few output pixels at a time, copied into the scratch the product packs
//! into anyway: no im2col matrix is ever built.

use super::*;

/// `B` of a Conv as a product: row `(input channel, kd, kh, kw)`, column = output pixel, the
/// input element that tap reads for that pixel (zero in the padding).
pub(super) struct Im2col<'a> {
    /// The group's input channels, `stride` words from one plane to the next.
    pub(super) x: &'a [f32],
    pub(super) stride: usize,
    pub(super) win: &'a Window,
}

/// One run of a panel's columns (consecutive outputs along one output row) as one tap sees
/// them: `before` zeros (the tap lies in the padding left of the input), `copied` inputs from
/// `src` (an index into the input channel's plane) on, then zeros up to `len`.
#[derive(Clone, Copy, Default)]
pub(super) struct Gather {
    /// The run's first column in the panel.
    pub(super) j: usize,
    pub(super) before: usize,
    pub(super) copied: usize,
    pub(super) len: usize,
    pub(super) src: usize,
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
            let mut plane_at = first_ci * self.stride;
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
                        copy_words(copied, &plane[g.src..][..g.copied]);
                    } else {
                        let from = plane[g.src..].iter().step_by(sw);
                        for (o, &v) in copied.iter_mut().zip(from) {
                            *o = v;
                        }
                    }
                }
                r += taps;
                plane_at += self.stride;
            }
        }
    }
}

/// `dst.copy_from_slice(src)` for a run of any length as fixed-size (overlapping) copies the
/// compiler inlines as vector moves, where `copy_from_slice` of a length it does not know calls
/// `memmove` (a call per row of a plane: a third of a depthwise Conv's time at 112 x 112).
#[inline(always)]
pub(super) fn copy_words(dst: &mut [f32], src: &[f32]) {
    let n = dst.len();
    if n > 16 {
        let src = &src[..n];
        let (blocks, _) = dst.as_chunks_mut::<16>();
        let (from, _) = src.as_chunks::<16>();
        for (d, s) in blocks.iter_mut().zip(from) {
            *d = *s;
        }
        // The last 16 words again, the rest among them.
        dst[n - 16..].copy_from_slice(&src[n - 16..]);
    } else if n >= 8 {
        dst[..8].copy_from_slice(&src[..8]);
        dst[n - 8..].copy_from_slice(&src[n - 8..n]);
    } else if n >= 4 {
        dst[..4].copy_from_slice(&src[..4]);
        dst[n - 4..].copy_from_slice(&src[n - 4..n]);
    } else {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = s;
        }
    }
}

/// `row` as a padded input row: zeros, the input row `src` from column `left` on (as much of it
/// as `row` holds), zeros after it; all zeros for a row of the padding (`None`).
#[inline(always)]
pub(super) fn pad_row(row: &mut [f32], src: Option<&[f32]>, left: usize) {
    let Some(src) = src else {
        row.fill(0.0);
        return;
    };
    let (lo, hi) = (left.min(row.len()), (left + src.len()).min(row.len()));
    zero_short(&mut row[..lo]);
    copy_words(&mut row[lo..hi], &src[..hi - lo]);
    zero_short(&mut row[hi..]);
}

/// `dst.fill(0.0)` for a few words (the padding of a panel's row), without a call.
#[inline(always)]
pub(super) fn zero_short(dst: &mut [f32]) {
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
