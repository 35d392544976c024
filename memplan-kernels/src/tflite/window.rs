//! The window of the reference convolutions and pools: strides, dilations, padding before,
//! read from a node's attributes.

use super::*;

/// The window of a convolution or pool: strides, dilations, padding before.
pub(super) struct Window {
    pub(super) stride: [usize; 2],
    pub(super) dilation: [usize; 2],
    pub(super) pad: [usize; 2],
}

impl Window {
    pub(super) fn of(attrs: &Attrs<'_>) -> Result<Self, KernelError> {
        let w = Window {
            stride: [size(attrs, "stride_h", 1)?, size(attrs, "stride_w", 1)?],
            dilation: [size(attrs, "dilation_h", 1)?, size(attrs, "dilation_w", 1)?],
            pad: [size(attrs, "pad_top", 0)?, size(attrs, "pad_left", 0)?],
        };
        if w.stride.contains(&0) || w.dilation.contains(&0) {
            bail!("strides and dilations must be at least 1");
        }
        Ok(w)
    }

    /// Refuses a window whose farthest position, `(out - 1) stride + (taps - 1) dilation` on
    /// either axis, is past `usize`: [`Self::at`] computes positions unchecked.
    pub(super) fn check_reach(&self, out: [usize; 2], taps: [usize; 2]) -> Result<(), KernelError> {
        for a in 0..2 {
            let reach = out[a]
                .saturating_sub(1)
                .checked_mul(self.stride[a])
                .zip(taps[a].saturating_sub(1).checked_mul(self.dilation[a]))
                .and_then(|(o, k)| o.checked_add(k));
            if reach.is_none() {
                bail!(
                    "the window reaches past the largest index (strides {:?}, dilations {:?})",
                    self.stride,
                    self.dilation
                );
            }
        }
        Ok(())
    }

    /// The input row (or column) of output `o` and filter tap `k` on axis `a`, if inside `len`
    /// (within the reach [`Self::check_reach`] checked).
    #[inline]
    pub(super) fn at(&self, a: usize, o: usize, k: usize, len: usize) -> Option<usize> {
        let p = o * self.stride[a] + k * self.dilation[a];
        p.checked_sub(self.pad[a]).filter(|&p| p < len)
    }
}
