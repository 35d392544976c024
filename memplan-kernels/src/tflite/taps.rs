//! The filter taps of a sliding window that fall inside the input, along one axis: worked out
//! once per output row or column, so a kernel's inner loops never test for the padding; and the
//! check that the index arithmetic of those taps cannot overflow.

use crate::error::{KernelError, bail};
use crate::tensor::numel;

/// The filter taps along one axis that fall inside the input for output position `o`:
/// `start..end`.
#[inline(always)]
pub(crate) fn taps(
    o: usize,
    stride: usize,
    dilation: usize,
    pad: usize,
    kernel: usize,
    len: usize,
) -> (usize, usize) {
    let origin = o * stride;
    // First tap with origin + k * dilation >= pad.
    let start = pad.saturating_sub(origin).div_ceil(dilation).min(kernel);
    // Taps with origin + k * dilation < pad + len.
    let end = (pad + len)
        .saturating_sub(origin)
        .div_ceil(dilation)
        .min(kernel);
    (start, end.max(start))
}

/// Whether a window of `kernel`, `stride` and `pad` (each `[vertical, horizontal]`) from an
/// input of `[height, width]` `input` to `output` is pointwise: 1 x 1, stride 1, no padding,
/// the output the input's size.
#[must_use]
pub(crate) const fn pointwise(
    kernel: [usize; 2],
    stride: [usize; 2],
    pad: [usize; 2],
    input: [usize; 2],
    output: [usize; 2],
) -> bool {
    kernel[0] == 1
        && kernel[1] == 1
        && stride[0] == 1
        && stride[1] == 1
        && pad[0] == 0
        && pad[1] == 0
        && input[0] == output[0]
        && input[1] == output[1]
}

/// Refuses a window whose farthest position (`output x stride + kernel x dilation`) or padded
/// input (`pad + input`) overflows along either axis: with these in range, [`taps`] and the
/// kernels' index arithmetic cannot overflow.
///
/// # Errors
/// The axis that overflows.
pub(crate) fn check_reach(
    input: [usize; 2],
    output: [usize; 2],
    kernel: [usize; 2],
    stride: [usize; 2],
    dilation: [usize; 2],
    pad: [usize; 2],
) -> Result<(), KernelError> {
    for a in 0..2 {
        let reach = numel(&[output[a], stride[a]])?.checked_add(numel(&[kernel[a], dilation[a]])?);
        if reach.is_none() || pad[a].checked_add(input[a]).is_none() {
            bail!("the window's reach along axis {a} overflows");
        }
    }
    Ok(())
}
