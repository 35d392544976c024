//! AVERAGE_POOL_2D and MAX_POOL_2D over int8 NHWC: for each output pixel, the window clipped
//! to the input (worked out once per row and column; padding takes no part), a block of
//! channels at a time, summed or maxed into accumulators on the stack; the average rounded half
//! away from zero, as LiteRT's reference kernel does.

use super::activation;
use crate::error::{KernelError, bail};

/// Channels whose accumulators a pixel keeps at once (on the stack: 256 bytes).
const BLOCK: usize = 64;

/// An int8 AVERAGE_POOL_2D or MAX_POOL_2D, every parameter fixed at build time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pool {
    /// MAX_POOL_2D rather than AVERAGE_POOL_2D.
    pub max: bool,
    /// Batches of the input and output.
    pub batches: usize,
    /// The input's `[height, width]`.
    pub input: [usize; 2],
    /// The output's `[height, width]`.
    pub output: [usize; 2],
    /// Channels of the input and the output.
    pub channels: usize,
    /// The window's `[height, width]`.
    pub filter: [usize; 2],
    /// `[vertical, horizontal]` strides, at least 1.
    pub stride: [usize; 2],
    /// The padding `[above, left of]` the input.
    pub pad: [usize; 2],
    /// The fused activation's `[min, max]`, as output values.
    pub act: [i32; 2],
}

impl Pool {
    /// Whether [`pool`] runs with these parameters: strides of at least 1, every window
    /// meeting the input, index arithmetic that cannot overflow, a non-empty activation range.
    ///
    /// # Errors
    /// What is wrong with the parameters.
    pub fn check(&self) -> Result<(), KernelError> {
        if self.stride.contains(&0) || self.filter.contains(&0) {
            bail!("strides and the window must be at least 1");
        }
        activation(self.act)?;
        crate::tensor::numel(&[self.batches, self.input[0], self.input[1], self.channels])?;
        crate::tensor::numel(&[self.batches, self.output[0], self.output[1], self.channels])?;
        for a in 0..2 {
            let last = self.output[a].saturating_sub(1).checked_mul(self.stride[a]);
            let reach = last.and_then(|l| l.checked_add(self.filter[a]));
            if reach.is_none() || self.pad[a].checked_add(self.input[a]).is_none() {
                bail!("the window's reach along axis {a} overflows");
            }
            // Every window meets the input: the first and the last.
            if self.output[a] > 0 {
                let (start, end) = window(
                    0,
                    self.stride[a],
                    self.pad[a],
                    self.filter[a],
                    self.input[a],
                );
                let (s2, e2) = window(
                    self.output[a] - 1,
                    self.stride[a],
                    self.pad[a],
                    self.filter[a],
                    self.input[a],
                );
                if start >= end || s2 >= e2 {
                    bail!("a pooling window lies wholly in the padding");
                }
            }
        }
        // An average sums a window of int8 values in int32 and rounds with half its count.
        let taps = self.filter[0].min(self.input[0]) * self.filter[1].min(self.input[1]);
        if !self.max && taps > MAX_AVERAGE_TAPS {
            bail!(
                "an average window of {taps} inputs is past what an int32 sum of int8 values holds ({MAX_AVERAGE_TAPS})"
            );
        }
        Ok(())
    }
}

/// The most inputs an average window may read: `(2^32 - 1) / 257`, so that a sum of int8 values
/// and half the count stay within int32.
pub const MAX_AVERAGE_TAPS: usize = 16_711_935;

/// The input positions `start..end` under output position `o`'s window along one axis.
#[inline(always)]
fn window(o: usize, stride: usize, pad: usize, filter: usize, len: usize) -> (usize, usize) {
    let origin = o * stride;
    let start = origin.saturating_sub(pad).min(len);
    let end = (origin + filter).saturating_sub(pad).min(len);
    (start, end.max(start))
}

/// Runs the pool: `x` the input (NHWC), `out` the output.
///
/// # Errors
/// Parameters [`Pool::check`] refuses, or slices whose lengths do not fit them.
pub fn pool(p: &Pool, x: &[i8], out: &mut [i8]) -> Result<(), KernelError> {
    p.check()?;
    let [ih, iw] = p.input;
    let [oh, ow] = p.output;
    let c = p.channels;
    super::expect_len("the input", x.len(), p.batches * ih * iw * c)?;
    super::expect_len("the output", out.len(), p.batches * oh * ow * c)?;
    let (lo, hi) = activation(p.act)?;
    let mut block = [0i32; BLOCK];
    let mut at = 0;
    for b in 0..p.batches {
        let image = &x[b * ih * iw * c..(b + 1) * ih * iw * c];
        for oy in 0..oh {
            let (y0, y1) = window(oy, p.stride[0], p.pad[0], p.filter[0], ih);
            for ox in 0..ow {
                let (x0, x1) = window(ox, p.stride[1], p.pad[1], p.filter[1], iw);
                let count = i32::try_from((y1 - y0) * (x1 - x0))
                    .unwrap_or(i32::MAX)
                    .max(1);
                let pixel = &mut out[at..at + c];
                at += c;
                let mut ch = 0;
                while ch < c {
                    let len = (c - ch).min(BLOCK);
                    let acc = &mut block[..len];
                    acc.fill(if p.max { -128 } else { 0 });
                    for iy in y0..y1 {
                        for ix in x0..x1 {
                            let xs = &image[(iy * iw + ix) * c + ch..][..len];
                            if p.max {
                                for (a, &v) in acc.iter_mut().zip(xs) {
                                    *a = (*a).max(i32::from(v));
                                }
                            } else {
                                for (a, &v) in acc.iter_mut().zip(xs) {
                                    *a += i32::from(v);
                                }
                            }
                        }
                    }
                    for (y, &a) in pixel[ch..ch + len].iter_mut().zip(acc.iter()) {
                        let v = if p.max {
                            a
                        } else if a > 0 {
                            (a + count / 2) / count
                        } else {
                            (a - count / 2) / count
                        };
                        // In -128..=127 after the clamp.
                        let v = v.max(lo).min(hi) as i8;
                        *y = v;
                    }
                    ch += len;
                }
            }
        }
    }
    Ok(())
}
