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
