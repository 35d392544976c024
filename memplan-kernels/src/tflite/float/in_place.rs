//! float32 DEPTHWISE_CONV_2D and pointwise CONV_2D written over their own input, as the int8
//! kernels of [`crate::tflite::s8`] are: the output shares the input's memory, so the planner
//! needs one tensor where the whole-tensor plan needs two.
//!
//! A depthwise convolution computes each output row as a band of its own
//! ([`crate::tflite::band_input_rows`]) into a small ring, and copies it over the input once no
//! later row reads the input under it ([`crate::tflite::overwrite`]). A pointwise convolution
//! with no more output than input channels copies a few pixels into scratch and writes their
//! outputs where they were: an output pixel never reaches past the input pixels already read.
//! Both call [`depthwise`] and [`conv`] on those rows and pixels, so every output is computed
//! by the same loop with the same sums: the bits are the whole-tensor kernels'.

use super::{Window, conv, depthwise};
use crate::error::{KernelError, bail};
use crate::tflite::band;
use crate::tflite::expect_len;
use crate::tflite::overwrite::Overwrite;

/// Pixels [`conv_in_place`] copies aside at once when its scratch holds them: four pixels a
/// call pay for the call.
const POINTWISE_PIXELS: usize = 4;

impl Window {
    /// How the output goes over the input row by row, if it is no larger.
    fn overwrite(&self) -> Option<Overwrite> {
        Overwrite::new(
            [self.input[0], self.input[1].checked_mul(self.input[2])?],
            [self.output[0], self.output[1].checked_mul(self.output[2])?],
            self.stride[0],
            self.pad[0],
        )
    }

    /// Bytes of scratch [`depthwise_in_place`] needs (its held-back output rows), or `None`
    /// when the output is larger than the input and cannot go over it.
    #[must_use]
    pub fn depthwise_in_place_scratch_bytes(&self) -> Option<usize> {
        let rows = self.overwrite()?.held_rows();
        rows.checked_mul(self.output[1])?
            .checked_mul(self.output[2])?
            .checked_mul(4)
    }

    /// A 1 x 1 convolution with stride 1 and no padding over an image of the output's size.
    #[must_use]
    pub const fn pointwise(&self) -> bool {
        crate::tflite::taps::pointwise(
            self.kernel,
            self.stride,
            self.pad,
            [self.input[0], self.input[1]],
            [self.output[0], self.output[1]],
        )
    }

    /// Bytes of scratch [`conv_in_place`] needs (a few input pixels), or `None` unless the
    /// convolution is [`Window::pointwise`] with no more output than input channels.
    #[must_use]
    pub fn conv_in_place_scratch_bytes(&self) -> Option<usize> {
        if !self.pointwise() || self.output[2] > self.input[2] {
            return None;
        }
        let pixels = self
            .batches
            .checked_mul(self.input[0])?
            .checked_mul(self.input[1])?;
        pixels
            .clamp(1, POINTWISE_PIXELS)
            .checked_mul(self.input[2])?
            .checked_mul(4)
    }
}

/// `scratch` as floats.
fn floats(scratch: &mut [u64]) -> &mut [f32] {
    bytemuck::cast_slice_mut(scratch)
}

/// Runs DEPTHWISE_CONV_2D as [`depthwise`] does, with its output written over its own input:
/// `data` holds the input (NHWC) and, when the kernel returns, the output from its start.
///
/// # Errors
/// Parameters [`depthwise`] refuses, an output larger than the input, or slices whose lengths
/// do not fit them (`scratch` at least [`Window::depthwise_in_place_scratch_bytes`] bytes).
pub fn depthwise_in_place(
    p: &Window,
    data: &mut [f32],
    filter: &[f32],
    bias: &[f32],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    p.check()?;
    let Some(rows) = p.overwrite() else {
        bail!("the output is larger than the input, so it cannot be written over it");
    };
    let [ih, iw, c] = p.input;
    let [oh, ow, _] = p.output;
    expect_len("the tensor", data.len(), p.batches * ih * iw * c)?;
    let (image, row) = (ih * iw * c, ow * c);
    let held = rows.held_rows();
    let ring = floats(scratch);
    let available = ring.len() * 4;
    let Some(ring) = ring.get_mut(..held * row) else {
        bail!(
            "the scratch has {available} bytes, writing in place needs {}",
            held * row * 4
        );
    };
    let window = [p.kernel[0], p.stride[0], p.dilation[0], p.pad[0]];
    for b in 0..p.batches {
        rows.rows_over(data, [b * image, b * oh * row], ring, |oy, image, slot| {
            // The row as a band of its own: the input rows under it, the padding above them.
            let Some((under, above)) = band::input_rows(oy..oy + 1, window, ih) else {
                bail!("the window's reach overflows");
            };
            let one = Window {
                batches: 1,
                input: [under.len(), iw, c],
                output: [1, ow, c],
                pad: [above, p.pad[1]],
                ..*p
            };
            let x = &image[under.start * iw * c..under.end * iw * c];
            depthwise(&one, x, filter, bias, slot)
        })?;
    }
    Ok(())
}

/// Runs a pointwise CONV_2D ([`Window::pointwise`]) with no more output than input channels as
/// [`conv`] does, with its output written over its own input: `data` holds the input (NHWC)
/// and, when the kernel returns, the output from its start. As many pixels as `scratch` holds
/// are copied into it and their outputs written where they were (on input pixels already
/// read, as an output pixel is no larger than an input pixel).
///
/// # Errors
/// Parameters [`conv`] refuses, a convolution that cannot go over its input, or slices whose
/// lengths do not fit them (`scratch` at least one input pixel).
pub fn conv_in_place(
    p: &Window,
    data: &mut [f32],
    filter: &[f32],
    bias: &[f32],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    p.check()?;
    if p.conv_in_place_scratch_bytes().is_none() {
        bail!("only a pointwise convolution with no more output than input channels runs in place");
    }
    let [ih, iw, ic] = p.input;
    let oc = p.output[2];
    let pixels = p.batches * ih * iw;
    expect_len("the tensor", data.len(), pixels * ic)?;
    if ic == 0 || pixels == 0 {
        return Ok(());
    }
    let aside = floats(scratch);
    let at_once = (aside.len() / ic).min(pixels);
    if at_once == 0 {
        bail!(
            "the scratch has {} bytes, writing in place needs {}",
            aside.len() * 4,
            ic * 4
        );
    }
    let mut pixel = 0;
    while pixel < pixels {
        let n = at_once.min(pixels - pixel);
        let x = &mut aside[..n * ic];
        x.copy_from_slice(&data[pixel * ic..(pixel + n) * ic]);
        // The `n` pixels as one row of an image: a pointwise convolution sees pixels only.
        let run = Window {
            batches: 1,
            input: [1, n, ic],
            output: [1, n, oc],
            ..*p
        };
        conv(
            &run,
            x,
            filter,
            bias,
            &mut data[pixel * oc..(pixel + n) * oc],
        )?;
        pixel += n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::format;
    use std::vec;
    use std::vec::Vec;

    use proptest::prelude::*;

    use super::*;

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|f| f.to_bits()).collect()
    }

    fn floats(len: usize) -> impl Strategy<Value = Vec<f32>> {
        proptest::collection::vec(-4.0f32..4.0, len)
    }

    fn scratch(bytes: usize) -> Vec<u64> {
        vec![0; bytes.div_ceil(8)]
    }

    /// A depthwise window of `[n, ih, iw, c, kh, kw, sh, sw, dh, dw, pt, pl]` over the output
    /// its padding gives (`None` when it is empty).
    fn depthwise_window(g: [usize; 12]) -> Option<Window> {
        let [n, ih, iw, c, kh, kw, sh, sw, dh, dw, pt, pl] = g;
        let out = |len: usize, k: usize, s: usize, d: usize, pad: usize| {
            let reach = (k - 1) * d + 1;
            (len + 2 * pad).checked_sub(reach).map(|v| v / s + 1)
        };
        let (oh, ow) = (out(ih, kh, sh, dh, pt)?, out(iw, kw, sw, dw, pl)?);
        Some(Window {
            batches: n,
            input: [ih, iw, c],
            output: [oh, ow, c],
            kernel: [kh, kw],
            stride: [sh, sw],
            dilation: [dh, dw],
            pad: [pt, pl],
            act: [0.0, 6.0],
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn depthwise_in_place_equals_depthwise_bit_for_bit(
            (p, x, filter, bias) in (1usize..=2, 1usize..=9, 1usize..=7, 1usize..=9, 1usize..=5, 1usize..=3, 1usize..=3, 1usize..=2, 1usize..=2, 1usize..=2, 0usize..=2, 0usize..=2)
                .prop_filter_map("an output", |(n, ih, iw, c, kh, kw, sh, sw, dh, dw, pt, pl)| {
                    depthwise_window([n, ih, iw, c, kh, kw, sh, sw, dh, dw, pt, pl])
                })
                .prop_flat_map(|p| {
                    let [ih, iw, c] = p.input;
                    (Just(p), floats(p.batches * ih * iw * c), floats(p.kernel[0] * p.kernel[1] * c), floats(c))
                }),
        ) {
            let mut want = vec![0.0f32; p.batches * p.output[0] * p.output[1] * p.output[2]];
            depthwise(&p, &x, &filter, &bias, &mut want).unwrap();
            match p.depthwise_in_place_scratch_bytes() {
                Some(bytes) => {
                    let mut data = x.clone();
                    depthwise_in_place(&p, &mut data, &filter, &bias, &mut scratch(bytes)).unwrap();
                    prop_assert_eq!(bits(&data[..want.len()]), bits(&want));
                    // One row short of the ring is refused, not overrun.
                    if bytes > 0 {
                        let short = bytes - 4 * p.output[1] * p.output[2];
                        let mut data = x.clone();
                        let mut s = vec![0u64; short / 8];
                        prop_assert!(depthwise_in_place(&p, &mut data, &filter, &bias, &mut s).is_err());
                    }
                }
                None => prop_assert!(want.len() > x.len()),
            }
        }

        #[test]
        fn pointwise_conv_in_place_equals_conv_bit_for_bit(
            ((n, h, w, ic, oc), x, filter, bias) in (1usize..=2, 1usize..=5, 1usize..=5, 1usize..=12, 1usize..=12)
                .prop_filter("no more output than input channels", |g| g.4 <= g.3)
                .prop_flat_map(|(n, h, w, ic, oc)| {
                    (Just((n, h, w, ic, oc)), floats(n * h * w * ic), floats(oc * ic), floats(oc))
                }),
            extra in 0usize..=40,
        ) {
            let p = Window {
                batches: n,
                input: [h, w, ic],
                output: [h, w, oc],
                kernel: [1, 1],
                stride: [1, 1],
                dilation: [1, 1],
                pad: [0, 0],
                act: [f32::MIN, f32::MAX],
            };
            let mut want = vec![0.0f32; n * h * w * oc];
            conv(&p, &x, &filter, &bias, &mut want).unwrap();
            let bytes = p.conv_in_place_scratch_bytes().unwrap();
            // Whatever the scratch holds, from the least it declares to more pixels than that.
            let mut data = x.clone();
            conv_in_place(&p, &mut data, &filter, &bias, &mut scratch(bytes + 4 * extra)).unwrap();
            prop_assert_eq!(bits(&data[..want.len()]), bits(&want));
        }
    }

    #[test]
    fn what_cannot_go_over_its_input_is_refused() {
        let mut p = Window {
            batches: 1,
            input: [4, 4, 2],
            output: [4, 4, 3],
            kernel: [1, 1],
            stride: [1, 1],
            dilation: [1, 1],
            pad: [0, 0],
            act: [f32::MIN, f32::MAX],
        };
        // More output than input channels.
        assert_eq!(p.conv_in_place_scratch_bytes(), None);
        let mut data = vec![0.0f32; 32];
        let err = conv_in_place(&p, &mut data, &[0.0; 6], &[0.0; 3], &mut [0; 8]).unwrap_err();
        assert!(format!("{err}").contains("pointwise"), "{err}");
        // A 3 x 3 window is not pointwise.
        p.output[2] = 2;
        p.kernel = [3, 3];
        p.pad = [1, 1];
        assert_eq!(p.conv_in_place_scratch_bytes(), None);
        // A depthwise output larger than its input.
        let grown = Window {
            output: [6, 6, 2],
            pad: [2, 2],
            ..p
        };
        assert_eq!(grown.depthwise_in_place_scratch_bytes(), None);
    }
}
