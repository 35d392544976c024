//! DEPTHWISE_CONV_2D, int8 per channel, depth multiplier 1: for each output pixel, the filter
//! taps that fall inside the input as a list of offsets (worked out once per clipping of the
//! window, so the padding costs nothing; [`super::window`]), walked for four channels at a time
//! with their sums in registers (four a word of the NHWC input and of the `[1, H, W, C]`
//! filter), a block of up to [`BLOCK`] channels' sums then requantised in a loop of its own.
//! Windows of more than [`super::window::MAX_TAPS`] taps, and the channels past the last whole
//! quad, take a loop over the taps with a block of sums on the stack.

use super::dot::{Best, Dot};
use super::window::{Layout, Taps};
use super::{Requantize, activation, check_input_offset, expect_len};
use crate::error::{KernelError, bail};
use crate::tensor::numel;
use crate::tflite::band;
use crate::tflite::overwrite::Overwrite;
use crate::tflite::taps::{check_reach, taps};

/// Channels whose accumulators a pixel keeps at once (on the stack: 256 bytes).
const BLOCK: usize = 64;

/// A DEPTHWISE_CONV_2D over int8 NHWC tensors with a depth multiplier of 1, every parameter
/// fixed at build time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Depthwise {
    /// Batches of the input and output.
    pub batches: usize,
    /// The input's `[height, width]`.
    pub input: [usize; 2],
    /// The output's `[height, width]`.
    pub output: [usize; 2],
    /// Channels of the input and the output.
    pub channels: usize,
    /// The filter's `[height, width]`.
    pub kernel: [usize; 2],
    /// `[vertical, horizontal]` strides, at least 1.
    pub stride: [usize; 2],
    /// `[vertical, horizontal]` dilations, at least 1.
    pub dilation: [usize; 2],
    /// The padding `[above, left of]` the input.
    pub pad: [usize; 2],
    /// Minus the input's zero point, in [`super::INPUT_OFFSETS`].
    pub input_offset: i32,
    /// The output's zero point.
    pub output_offset: i32,
    /// The fused activation's `[min, max]`, as output values.
    pub act: [i32; 2],
}

impl Depthwise {
    /// Whether [`depthwise`] runs with these parameters.
    ///
    /// # Errors
    /// What is wrong with the parameters.
    pub fn check(&self) -> Result<(), KernelError> {
        if self.stride.contains(&0) || self.dilation.contains(&0) {
            bail!("strides and dilations must be at least 1");
        }
        check_input_offset(self.input_offset)?;
        activation(self.act)?;
        let [ih, iw] = self.input;
        let [oh, ow] = self.output;
        numel(&[self.batches, ih, iw, self.channels])?;
        numel(&[self.batches, oh, ow, self.channels])?;
        numel(&[self.kernel[0], self.kernel[1], self.channels])?;
        // The index arithmetic along each axis cannot overflow.
        check_reach(
            self.input,
            self.output,
            self.kernel,
            self.stride,
            self.dilation,
            self.pad,
        )?;
        Ok(())
    }
}

/// Runs DEPTHWISE_CONV_2D: `x` the input (NHWC), `filter` `[1, kernel_h, kernel_w, channels]`,
/// `bias` one per channel (the file's, not folded: the input offset is added per tap, as taps
/// in the padding are left out), `multiplier` and `shift` one per channel, `out` the output.
///
/// # Errors
/// Parameters [`Depthwise::check`] refuses, or slices whose lengths do not fit them.
pub fn depthwise(
    p: &Depthwise,
    x: &[i8],
    filter: &[i8],
    bias: &[i32],
    multiplier: &[i32],
    shift: &[i32],
    out: &mut [i8],
) -> Result<(), KernelError> {
    depthwise_with::<Best>(p, x, filter, bias, multiplier, shift, out)
}

pub(super) fn depthwise_with<M: Dot>(
    p: &Depthwise,
    x: &[i8],
    filter: &[i8],
    bias: &[i32],
    multiplier: &[i32],
    shift: &[i32],
    out: &mut [i8],
) -> Result<(), KernelError> {
    p.check()?;
    let [ih, iw] = p.input;
    let [oh, ow] = p.output;
    let c = p.channels;
    expect_len("the input", x.len(), p.batches * ih * iw * c)?;
    expect_len("the filter", filter.len(), p.kernel[0] * p.kernel[1] * c)?;
    expect_len("the bias", bias.len(), c)?;
    expect_len("the output", out.len(), p.batches * oh * ow * c)?;
    let rq = Requantize::<false>::new(multiplier, shift, c, p.output_offset, p.act)?;
    let offset = p.input_offset;
    let kw = p.kernel[1];
    let quads = c / 4 * 4;
    // Accumulators for a block of channels, on the stack.
    let mut block = [0i32; BLOCK];
    let layout = Layout {
        input_width: iw,
        channels: c,
        kernel_width: kw,
        dilation: p.dilation,
    };
    // The taps of the last clipping of the window seen (the interior pixels share one), and
    // whether the list holds them.
    let mut window = Taps::empty();
    let (mut clipped, mut listed) = ((usize::MAX, usize::MAX, usize::MAX, usize::MAX), false);
    let mut at = 0;
    for b in 0..p.batches {
        let image = &x[b * ih * iw * c..(b + 1) * ih * iw * c];
        for oy in 0..oh {
            let (y0, y1) = taps(oy, p.stride[0], p.dilation[0], p.pad[0], p.kernel[0], ih);
            for ox in 0..ow {
                let (x0, x1) = taps(ox, p.stride[1], p.dilation[1], p.pad[1], kw, iw);
                let pixel = &mut out[at..at + c];
                at += c;
                let mut ch = 0;
                if clipped != (y0, y1, x0, x1) {
                    clipped = (y0, y1, x0, x1);
                    listed = y0 < y1 && x0 < x1 && window.clip(y0..y1, x0..x1, layout);
                }
                if listed {
                    // Four channels at a time, their sums in registers over the taps.
                    let iy = oy * p.stride[0] + y0 * p.dilation[0] - p.pad[0];
                    let ix = ox * p.stride[1] + x0 * p.dilation[1] - p.pad[1];
                    let first = (iy * iw + ix) * c;
                    // A block of channels at a time: their sums (never `false`: the taps lie
                    // in the image and the filter; if not, the loop below takes the rest),
                    // then their outputs.
                    while ch < quads {
                        let len = (quads - ch).min(BLOCK);
                        let sums = &mut block[..len];
                        let (x, w, b) = (&image[first + ch..], &filter[ch..], &bias[ch..]);
                        if !M::window_sums(x, w, &window, offset, b, sums) {
                            break;
                        }
                        rq.apply_run(sums, ch, &mut pixel[ch..ch + len]);
                        ch += len;
                    }
                }
                while ch < quads {
                    let len = (quads - ch).min(BLOCK);
                    let acc = &mut block[..len];
                    acc.copy_from_slice(&bias[ch..ch + len]);
                    for ky in y0..y1 {
                        let iy = oy * p.stride[0] + ky * p.dilation[0] - p.pad[0];
                        for kx in x0..x1 {
                            let ix = ox * p.stride[1] + kx * p.dilation[1] - p.pad[1];
                            let xs = &image[(iy * iw + ix) * c + ch..][..len];
                            let ws = &filter[(ky * kw + kx) * c + ch..][..len];
                            M::channels(acc, xs, ws, offset);
                        }
                    }
                    for (j, &a) in acc.iter().enumerate() {
                        pixel[ch + j] = rq.apply(a, ch + j);
                    }
                    ch += len;
                }
                while ch < c {
                    let mut acc = bias[ch];
                    for ky in y0..y1 {
                        let iy = oy * p.stride[0] + ky * p.dilation[0] - p.pad[0];
                        for kx in x0..x1 {
                            let ix = ox * p.stride[1] + kx * p.dilation[1] - p.pad[1];
                            let xv = i32::from(image[(iy * iw + ix) * c + ch]) + offset;
                            let wv = i32::from(filter[(ky * kw + kx) * c + ch]);
                            acc = acc.wrapping_add(wv.wrapping_mul(xv));
                        }
                    }
                    pixel[ch] = rq.apply(acc, ch);
                    ch += 1;
                }
            }
        }
    }
    Ok(())
}

/// Runs DEPTHWISE_CONV_2D as [`depthwise`] does, with its output written over its own input:
/// `data` holds the input (NHWC) and, when the kernel returns, the output from its start.
/// Each output row is computed into `scratch` and copied over the input once no later row reads
/// the input it covers ([`Depthwise::in_place_rows`] rows held back at most), so the output
/// bytes are those of [`depthwise`].
///
/// # Errors
/// Parameters [`Depthwise::check`] refuses, an output larger than the input, or slices whose
/// lengths do not fit them (`scratch` at least [`Depthwise::in_place_scratch_bytes`] bytes).
pub fn depthwise_in_place(
    p: &Depthwise,
    data: &mut [i8],
    filter: &[i8],
    bias: &[i32],
    multiplier: &[i32],
    shift: &[i32],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    depthwise_in_place_with::<Best>(p, data, filter, bias, multiplier, shift, scratch)
}

pub(super) fn depthwise_in_place_with<M: Dot>(
    p: &Depthwise,
    data: &mut [i8],
    filter: &[i8],
    bias: &[i32],
    multiplier: &[i32],
    shift: &[i32],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    p.check()?;
    let Some(rows) = p.overwrite() else {
        bail!("the output is larger than the input, so it cannot be written over it");
    };
    let [ih, iw] = p.input;
    let [oh, ow] = p.output;
    let c = p.channels;
    expect_len("the tensor", data.len(), p.batches * ih * iw * c)?;
    let (image, row) = (ih * iw * c, ow * c);
    let held = rows.held_rows();
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(scratch);
    let available = bytes.len();
    let Some(ring) = bytes.get_mut(..held * row) else {
        bail!(
            "the scratch has {available} bytes, writing in place needs {}",
            held * row
        );
    };
    let ring: &mut [i8] = bytemuck::cast_slice_mut(ring);
    let window = [p.kernel[0], p.stride[0], p.dilation[0], p.pad[0]];
    for b in 0..p.batches {
        rows.rows_over(data, [b * image, b * oh * row], ring, |oy, image, slot| {
            // The row as a band of its own: the input rows under it, the padding above them.
            let Some((under, above)) = band::input_rows(oy..oy + 1, window, ih) else {
                bail!("the window's reach overflows");
            };
            let one = Depthwise {
                batches: 1,
                input: [under.len(), iw],
                output: [1, ow],
                pad: [above, p.pad[1]],
                ..*p
            };
            let x = &image[under.start * iw * c..under.end * iw * c];
            depthwise_with::<M>(&one, x, filter, bias, multiplier, shift, slot)
        })?;
    }
    Ok(())
}

impl Depthwise {
    /// How the output goes over the input row by row, if it is no larger.
    fn overwrite(&self) -> Option<Overwrite> {
        let c = self.channels;
        Overwrite::new(
            [self.input[0], self.input[1] * c],
            [self.output[0], self.output[1] * c],
            self.stride[0],
            self.pad[0],
        )
    }

    /// Output rows [`depthwise_in_place`] holds back at most, or `None` when the output is
    /// larger than the input and cannot go over it.
    #[must_use]
    pub fn in_place_rows(&self) -> Option<usize> {
        self.overwrite().map(|rows| rows.held_rows())
    }

    /// Bytes of scratch [`depthwise_in_place`] needs: its held-back rows of output.
    #[must_use]
    pub fn in_place_scratch_bytes(&self) -> Option<usize> {
        self.in_place_rows()
            .map(|rows| rows * self.output[1] * self.channels)
    }
}
