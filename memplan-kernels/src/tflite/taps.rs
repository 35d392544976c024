//! The filter taps of a sliding window that fall inside the input, along one axis: worked out
//! once per output row or column, so a kernel's inner loops never test for the padding.

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
