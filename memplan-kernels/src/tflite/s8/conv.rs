//! CONV_2D, int8 per channel: a matrix product of the filter (`[out_channels, K]`, `K =
//! kernel_h x kernel_w x in_channels`, TFLite's `OHWI` layout read as rows) with im2col
//! columns of the input, two output pixels at a time. The two columns are written once,
//! widened to int16 and interleaved ([`Quad`]), into scratch; each pair of filter rows then
//! reads them with its int8 weights widened on the fly (CMSIS-NN's `s8 x s16` product).

use super::dot::{Best, Dot, Quad, half_quad};
use super::dsp::pair;
use super::{Requantize, activation, check_input_offset, expect_len};
use crate::error::{KernelError, bail};
use crate::tensor::numel;

/// A CONV_2D over int8 NHWC tensors (one group), every parameter fixed at build time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv {
    /// Batches of the input and output.
    pub batches: usize,
    /// The input's `[height, width, channels]`.
    pub input: [usize; 3],
    /// The output's `[height, width, channels]`.
    pub output: [usize; 3],
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

impl Conv {
    /// `K`: the values of one filter row, `kernel_h x kernel_w x in_channels`.
    #[must_use]
    pub const fn depth(&self) -> usize {
        self.kernel[0] * self.kernel[1] * self.input[2]
    }

    /// A 1 x 1 convolution with stride 1 and no padding: its im2col columns are the input's
    /// own rows, widened.
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

    /// Whether [`conv_in_place`] runs it: pointwise, with no more output than input channels
    /// (so an output pixel never reaches past the input pixels already read).
    #[must_use]
    pub const fn in_place(&self) -> bool {
        self.pointwise() && self.output[2] <= self.input[2]
    }

    /// Bytes of scratch [`conv`] needs: two im2col columns of int16, `K` rounded up to a
    /// multiple of 4.
    #[must_use]
    pub const fn scratch_bytes(&self) -> usize {
        self.depth().div_ceil(4) * core::mem::size_of::<Quad>()
    }

    /// Whether [`conv`] runs with these parameters: strides and dilations of at least 1, an
    /// input offset in range, a non-empty activation range, sizes that fit in memory.
    ///
    /// # Errors
    /// What is wrong with the parameters.
    pub fn check(&self) -> Result<(), KernelError> {
        if self.stride.contains(&0) || self.dilation.contains(&0) {
            bail!("strides and dilations must be at least 1");
        }
        check_input_offset(self.input_offset)?;
        activation(self.act)?;
        numel(&[self.batches, self.input[0], self.input[1], self.input[2]])?;
        numel(&[self.batches, self.output[0], self.output[1], self.output[2]])?;
        numel(&[
            self.output[2],
            self.kernel[0],
            self.kernel[1],
            self.input[2],
            2,
        ])?;
        Ok(())
    }
}

/// Runs CONV_2D: `x` is the input (NHWC), `filter` the filter (`[out_channels, kernel_h,
/// kernel_w, in_channels]`), `bias` [`super::fold_input_offset`]'s folded bias, `multiplier`
/// and `shift` one per output channel, `out` the output (NHWC), `scratch` at least
/// [`Conv::scratch_bytes`] bytes.
///
/// # Errors
/// Parameters [`Conv::check`] refuses, or slices whose lengths do not fit them.
#[allow(clippy::too_many_arguments)] // one slice per operand of the node
pub fn conv(
    p: &Conv,
    x: &[i8],
    filter: &[i8],
    bias: &[i32],
    multiplier: &[i32],
    shift: &[i32],
    out: &mut [i8],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    conv_with::<Best>(p, x, filter, bias, multiplier, shift, out, scratch)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn conv_with<M: Dot>(
    p: &Conv,
    x: &[i8],
    filter: &[i8],
    bias: &[i32],
    multiplier: &[i32],
    shift: &[i32],
    out: &mut [i8],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    p.check()?;
    let [ih, iw, ic] = p.input;
    let [oh, ow, oc] = p.output;
    let k = p.depth();
    expect_len("the input", x.len(), p.batches * ih * iw * ic)?;
    expect_len("the filter", filter.len(), oc * k)?;
    expect_len("the bias", bias.len(), oc)?;
    expect_len("the output", out.len(), p.batches * oh * ow * oc)?;
    let rq = Requantize::<false>::new(multiplier, shift, oc, p.output_offset, p.act)?;
    let gemm = Gemm {
        filter,
        bias,
        rq,
        k,
    };
    if oc == 0 || out.is_empty() {
        return Ok(());
    }
    if k == 0 {
        // No filter taps (no input channels): every output is its bias, requantised.
        for pixel in out.chunks_exact_mut(oc) {
            for (o, y) in pixel.iter_mut().enumerate() {
                *y = gemm.rq.apply(bias[o], o);
            }
        }
        return Ok(());
    }
    let columns = columns(p, scratch)?;
    let mut sums: Sums = [[0; RUN]; 2];
    let pixels = p.output[0] * p.output[1];
    let image = ih * iw * ic;
    let pointwise = p.pointwise();
    for b in 0..p.batches {
        let xb = &x[b * image..(b + 1) * image];
        let ob = &mut out[b * pixels * oc..(b + 1) * pixels * oc];
        let mut outs = ob.chunks_exact_mut(oc);
        let mut pixel = 0;
        while pixel < pixels {
            let Some(oa) = outs.next() else { break };
            for slot in 0..2 {
                let at = pixel + slot;
                if at == pixels {
                    break;
                }
                if pointwise {
                    widen::<M>(&xb[at * ic..(at + 1) * ic], columns, slot);
                } else {
                    im2col::<M>(p, xb, at, columns, slot);
                }
            }
            if pixel + 1 < pixels {
                let Some(obb) = outs.next() else { break };
                gemm.two::<M>(columns, oa, Some(obb), &mut sums);
            } else {
                gemm.two::<M>(columns, oa, None, &mut sums);
            }
            pixel += 2;
        }
    }
    Ok(())
}

/// Runs a pointwise CONV_2D ([`Conv::pointwise`]) as [`conv`] does, with its output written
/// over its own input: `data` holds the input (NHWC) and, when the kernel returns, the output
/// from its start. Two pixels at a time are widened into `scratch` before their outputs are
/// written, and an output pixel takes no more bytes than an input pixel, so the outputs of a
/// pair land on input pixels already read; the bytes are those of [`conv`].
///
/// # Errors
/// Parameters [`Conv::check`] refuses, a convolution that is not pointwise or has more output
/// than input channels ([`Conv::in_place`]), or slices whose lengths do not fit them.
#[allow(clippy::too_many_arguments)] // one slice per operand of the node
pub fn conv_in_place(
    p: &Conv,
    data: &mut [i8],
    filter: &[i8],
    bias: &[i32],
    multiplier: &[i32],
    shift: &[i32],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    conv_in_place_with::<Best>(p, data, filter, bias, multiplier, shift, scratch)
}

pub(super) fn conv_in_place_with<M: Dot>(
    p: &Conv,
    data: &mut [i8],
    filter: &[i8],
    bias: &[i32],
    multiplier: &[i32],
    shift: &[i32],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    p.check()?;
    if !p.in_place() {
        bail!("only a pointwise convolution with no more output than input channels runs in place");
    }
    let [ih, iw, ic] = p.input;
    let oc = p.output[2];
    let k = p.depth();
    let pixels = p.batches * ih * iw;
    expect_len("the tensor", data.len(), pixels * ic)?;
    expect_len("the filter", filter.len(), oc * k)?;
    expect_len("the bias", bias.len(), oc)?;
    let rq = Requantize::<false>::new(multiplier, shift, oc, p.output_offset, p.act)?;
    let gemm = Gemm {
        filter,
        bias,
        rq,
        k,
    };
    if oc == 0 {
        return Ok(());
    }
    let columns = columns(p, scratch)?;
    let mut sums: Sums = [[0; RUN]; 2];
    let mut pixel = 0;
    while pixel < pixels {
        let second = pixel + 1 < pixels;
        widen::<M>(&data[pixel * ic..(pixel + 1) * ic], columns, 0);
        if second {
            widen::<M>(&data[(pixel + 1) * ic..(pixel + 2) * ic], columns, 1);
        }
        let outs = &mut data[pixel * oc..(pixel + 1 + usize::from(second)) * oc];
        let (a, b) = outs.split_at_mut(oc);
        gemm.two::<M>(columns, a, second.then_some(b), &mut sums);
        pixel += 2;
    }
    Ok(())
}

/// The two int16 columns in `scratch`, or an error if it is too short.
#[inline(always)]
fn columns<'s>(p: &Conv, scratch: &'s mut [u64]) -> Result<&'s mut [Quad], KernelError> {
    let words: &mut [u8] = bytemuck::cast_slice_mut(scratch);
    let available = words.len();
    let Some(columns) = words.get_mut(..p.depth().div_ceil(4) * core::mem::size_of::<Quad>())
    else {
        bail!(
            "the scratch has {available} bytes, the convolution needs {}",
            p.scratch_bytes()
        );
    };
    Ok(bytemuck::cast_slice_mut(columns))
}

/// The filter side of the product and its output stage.
struct Gemm<'a> {
    filter: &'a [i8],
    bias: &'a [i32],
    rq: Requantize<'a, false>,
    k: usize,
}

impl Gemm<'_> {
    /// Every output channel of the two pixels whose columns are in `quads` (the second's
    /// outputs dropped when `out_b` is `None`): a run of channels at a time, their sums first
    /// (two filter rows by both columns at once), then their output stage in a loop of its own
    /// ([`Requantize::apply_run`]). Not inlined: on its own, the loop over channel pairs keeps
    /// its pointers in registers (inlined into [`conv_with`], LLVM spilled them).
    #[inline(never)]
    fn two<M: Dot>(
        &self,
        quads: &[Quad],
        out_a: &mut [i8],
        mut out_b: Option<&mut [i8]>,
        sums: &mut Sums,
    ) {
        let k = self.k;
        let channels = self.bias.len();
        let mut start = 0;
        while start < channels {
            let len = RUN.min(channels - start);
            let (Some(rows), Some(bias)) = (
                self.filter.get(start * k..(start + len) * k),
                self.bias.get(start..start + len),
            ) else {
                return;
            };
            let [sa, sb] = sums;
            let pairs = rows
                .chunks_exact(2 * k)
                .zip(bias.chunks_exact(2))
                .zip(sa.chunks_exact_mut(2).zip(sb.chunks_exact_mut(2)));
            for ((fg, b), (ya, yb)) in pairs {
                let (f, g) = fg.split_at(k);
                let s = M::quads_2x2(quads, f, g);
                ya[0] = s[0].wrapping_add(b[0]);
                ya[1] = s[1].wrapping_add(b[1]);
                yb[0] = s[2].wrapping_add(b[0]);
                yb[1] = s[3].wrapping_add(b[1]);
            }
            // An odd last channel.
            if len % 2 == 1 {
                let s = M::quads_2x1(quads, &rows[(len - 1) * k..]);
                sa[len - 1] = s[0].wrapping_add(bias[len - 1]);
                sb[len - 1] = s[1].wrapping_add(bias[len - 1]);
            }
            if let Some(ya) = out_a.get_mut(start..start + len) {
                self.rq.apply_run(&sa[..len], start, ya);
            }
            if let Some(yb) = out_b
                .as_deref_mut()
                .and_then(|o| o.get_mut(start..start + len))
            {
                self.rq.apply_run(&sb[..len], start, yb);
            }
            start += len;
        }
    }
}

/// Output channels [`Gemm::two`] sums before it requantises them (an even number: channel
/// pairs).
const RUN: usize = 32;

/// The sums of a run of channels of two pixels (256 bytes on the stack of the kernel, made
/// once a call: zeroing them for every pair of pixels would cost more than the sums).
type Sums = [[i32; RUN]; 2];

/// Widens one pixel's values `row` into half `slot` (0 or 1) of `quads`, zeros after its end.
#[inline(always)]
fn widen<M: Dot>(row: &[i8], quads: &mut [Quad], slot: usize) {
    let half = 2 * slot;
    let (whole, tail) = row.as_chunks::<4>();
    for (q, &v) in quads.iter_mut().zip(whole) {
        let [even, odd] = M::widen(v);
        q[half] = even;
        q[half + 1] = odd;
    }
    if let Some(q) = quads.get_mut(whole.len()) {
        let [even, odd] = half_quad([0, 1, 2, 3].map(|j| tail.get(j).map_or(0, |&v| v.into())));
        q[half] = even;
        q[half + 1] = odd;
    }
}

/// Writes output pixel `pixel`'s im2col column of one image `x` into half `slot` of `quads`:
/// for each filter tap in `OHWI` order, the input's channels under it, or the input's zero
/// point (`-input_offset`) where the tap lies in the padding; zeros after the column's end.
fn im2col<M: Dot>(p: &Conv, x: &[i8], pixel: usize, quads: &mut [Quad], slot: usize) {
    let [ih, iw, ic] = p.input;
    let ow = p.output[1];
    let (oy, ox) = (pixel / ow, pixel % ow);
    if ic % 4 == 0 {
        // Each tap's channels fill whole quads: widened a word at a time.
        let zero = pair(-p.input_offset, -p.input_offset);
        let mut taps = quads.chunks_exact_mut(ic / 4);
        for ky in 0..p.kernel[0] {
            let iy = (oy * p.stride[0] + ky * p.dilation[0]).wrapping_sub(p.pad[0]);
            for kx in 0..p.kernel[1] {
                let ix = (ox * p.stride[1] + kx * p.dilation[1]).wrapping_sub(p.pad[1]);
                let Some(tap) = taps.next() else { return };
                if iy < ih && ix < iw {
                    let at = (iy * iw + ix) * ic;
                    widen::<M>(&x[at..at + ic], tap, slot);
                } else {
                    for q in tap {
                        q[2 * slot] = zero;
                        q[2 * slot + 1] = zero;
                    }
                }
            }
        }
        return;
    }
    let zero = -p.input_offset;
    let half = 2 * slot;
    // Values gathered four at a time, then written as the two pairs of their quad.
    let mut four = [0i32; 4];
    let mut j = 0;
    let mut put = |j: &mut usize, v: i32| {
        four[*j % 4] = v;
        *j += 1;
        if (*j).is_multiple_of(4) {
            let [even, odd] = half_quad(four);
            let q = &mut quads[*j / 4 - 1];
            q[half] = even;
            q[half + 1] = odd;
        }
    };
    for ky in 0..p.kernel[0] {
        let iy = (oy * p.stride[0] + ky * p.dilation[0]).wrapping_sub(p.pad[0]);
        for kx in 0..p.kernel[1] {
            let ix = (ox * p.stride[1] + kx * p.dilation[1]).wrapping_sub(p.pad[1]);
            if iy < ih && ix < iw {
                let at = (iy * iw + ix) * ic;
                for &v in &x[at..at + ic] {
                    put(&mut j, v.into());
                }
            } else {
                for _ in 0..ic {
                    put(&mut j, zero);
                }
            }
        }
    }
    while j % 4 != 0 {
        put(&mut j, 0);
    }
}
