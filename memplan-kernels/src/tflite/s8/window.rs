//! The taps of one depthwise window inside the input, as a list of offsets worked out once per
//! clipping of the window (the interior pixels of an image all share one), so the inner loop of
//! [`super::depthwise`] keeps four channels' sums in registers while it walks the taps, instead
//! of walking the channels with the sums in memory.
//!
//! ```text
//!  window clipped by the top padding: taps (1,0) (1,1) (1,2) (2,0) (2,1) (2,2)
//!  input offset of tap (ky, kx), from the first tap's pixel:  ((ky - y0) dh iw + (kx - x0) dw) c
//!  filter offset of tap (ky, kx):                             (ky kw + kx) c
//! ```

/// The most taps a list holds (an 8 x 8 window); wider windows take the channel-block loop.
pub(crate) const MAX_TAPS: usize = 64;

/// The mark after the last tap: an input offset no tap has.
const END: [u32; 2] = [u32::MAX, 0];

/// The taps of one clipping of a window: each tap's input and filter offsets (in bytes, from the
/// window's first tap inside the input and from the filter's start), and the largest of each.
/// Built only by [`Taps::clip`], so the largest offsets bound every tap's: what lets
/// [`super::dot::Dot::window_quad`] check its slices once rather than per tap.
pub(crate) struct Taps {
    /// The taps, then an end mark (an input offset of `u32::MAX`, which no tap has).
    list: [[u32; 2]; MAX_TAPS + 1],
    len: usize,
    max: [usize; 2],
}

/// The geometry a window's taps are laid out by: the input's width and channels, the filter's
/// width, the dilations.
#[derive(Clone, Copy)]
pub(crate) struct Layout {
    pub(crate) input_width: usize,
    pub(crate) channels: usize,
    pub(crate) kernel_width: usize,
    pub(crate) dilation: [usize; 2],
}

impl Taps {
    /// No taps.
    pub(crate) const fn empty() -> Self {
        Self {
            list: [[u32::MAX, 0]; MAX_TAPS + 1],
            len: 0,
            max: [0; 2],
        }
    }

    /// The taps `rows x cols` (filter rows `rows`, columns `cols`) of a window laid out by
    /// `layout`; `None` when there are more than [`MAX_TAPS`] or an offset passes `u32`.
    #[cfg(test)]
    pub(crate) fn clipped(
        rows: core::ops::Range<usize>,
        cols: core::ops::Range<usize>,
        layout: Layout,
    ) -> Option<Self> {
        let mut taps = Self::empty();
        taps.clip(rows, cols, layout).then_some(taps)
    }

    /// Makes these the taps `rows x cols` (filter rows `rows`, columns `cols`) of a window laid
    /// out by `layout`; `false` (and no taps) when there are more than [`MAX_TAPS`] or an
    /// offset passes `u32`.
    pub(crate) fn clip(
        &mut self,
        rows: core::ops::Range<usize>,
        cols: core::ops::Range<usize>,
        layout: Layout,
    ) -> bool {
        self.len = 0;
        self.max = [0; 2];
        self.list[0] = END;
        let c = layout.channels;
        for (i, ky) in rows.enumerate() {
            for (j, kx) in cols.clone().enumerate() {
                let input = (i * layout.dilation[0] * layout.input_width + j * layout.dilation[1])
                    .checked_mul(c);
                let filter = (ky * layout.kernel_width + kx).checked_mul(c);
                let words = input
                    .zip(filter)
                    .and_then(|(i, f)| Some([u32::try_from(i).ok()?, u32::try_from(f).ok()?]))
                    .filter(|&[i, _]| i != END[0]);
                let (Some(words), true) = (words, self.len < MAX_TAPS) else {
                    self.len = 0;
                    self.list[0] = END;
                    return false;
                };
                self.list[self.len] = words;
                self.len += 1;
                self.list[self.len] = END;
                self.max = [
                    self.max[0].max(words[0] as usize),
                    self.max[1].max(words[1] as usize),
                ];
            }
        }
        true
    }

    /// The taps, `[input offset, filter offset]` each.
    pub(crate) fn list(&self) -> &[[u32; 2]] {
        &self.list[..self.len]
    }

    /// The taps followed by their end mark `[u32::MAX, 0]`.
    #[cfg_attr(not(memplan_dsp), allow(dead_code))]
    pub(crate) fn marked(&self) -> &[[u32; 2]] {
        &self.list[..=self.len]
    }

    /// Whether four bytes at every tap's offsets lie within `x` and `w`.
    pub(crate) fn fit(&self, x: &[i8], w: &[i8]) -> bool {
        self.fit_channels(x, w, 4)
    }

    /// Whether `channels` bytes from every tap's offsets lie within `x` and `w`: the taps of
    /// every quad of channels below `channels`.
    pub(crate) fn fit_channels(&self, x: &[i8], w: &[i8], channels: usize) -> bool {
        self.len > 0
            && channels >= 4
            && self.max[0] + channels <= x.len()
            && self.max[1] + channels <= w.len()
    }
}

/// `quad` on every whole quad of channels of `sums` (at most `bias`'s): from the quad's
/// biases, on `x` and `w` from the quad's first channel, its sums into `sums`; `false` (and
/// `sums` as it was) when the taps of those channels do not fit `x` and `w`. The portable loop
/// of the kernels' `window_sums`.
#[inline(always)]
pub(crate) fn each_quad(
    x: &[i8],
    w: &[i8],
    taps: &Taps,
    bias: &[i32],
    sums: &mut [i32],
    quad: impl Fn([i32; 4], &[i8], &[i8]) -> Option<[i32; 4]>,
) -> bool {
    let n = sums.len().min(bias.len()) / 4 * 4;
    if !taps.fit_channels(x, w, n) {
        return false;
    }
    for (ch, (b, s)) in (0..n)
        .step_by(4)
        .zip(bias.chunks_exact(4).zip(sums.chunks_exact_mut(4)))
    {
        if let Some(acc) = quad([b[0], b[1], b[2], b[3]], &x[ch..], &w[ch..]) {
            s.copy_from_slice(&acc);
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clipped_window_lists_its_taps_inside_the_input() {
        let layout = Layout {
            input_width: 10,
            channels: 8,
            kernel_width: 3,
            dilation: [1, 1],
        };
        // Clipped by the top padding: filter rows 1 and 2.
        let taps = Taps::clipped(1..3, 0..3, layout).unwrap();
        assert_eq!(
            taps.list(),
            [[0, 24], [8, 32], [16, 40], [80, 48], [88, 56], [96, 64]]
        );
        assert!(taps.fit(&[0; 100], &[0; 68]));
        assert!(!taps.fit(&[0; 99], &[0; 68]));
        assert!(!taps.fit(&[0; 100], &[0; 67]));
        // Dilated: every other row and column.
        let dilated = Layout {
            dilation: [2, 2],
            ..layout
        };
        let taps = Taps::clipped(0..2, 0..2, dilated).unwrap();
        assert_eq!(taps.list(), [[0, 0], [16, 8], [160, 24], [176, 32]]);
        // Too many taps, or none.
        assert!(Taps::clipped(0..9, 0..9, layout).is_none());
        assert!(
            !Taps::clipped(0..0, 0..3, layout)
                .unwrap()
                .fit(&[0; 8], &[0; 8])
        );
    }
}
