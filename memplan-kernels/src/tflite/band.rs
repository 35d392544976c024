//! A band of output rows of a sliding-window operator, computed from the input rows under it.
//!
//! Output rows `r0..r1` of a window with `kernel` rows, `stride`, `dilation` and `pad` rows of
//! padding above read input rows `r0 * stride - pad ..` up to the last tap of row `r1 - 1`,
//! clipped to the input. Run on just those rows, the same operator computes the same bytes if
//! its padding above becomes the part of the window that still lies above the first row read,
//! and the rows below the band count as padding (they are either real padding or rows no output
//! of the band reads). So a convolution can be run band by band: over its own input
//! ([`super::s8::depthwise_in_place`], [`super::float::depthwise_in_place`]) or on rows that were never whole (patch by patch).

use core::ops::Range;

/// The input rows output rows `out` read, and the padding above them: the window's
/// `[kernel, stride, dilation, pad]` along the height, over an input of `height` rows. A band
/// wholly in the padding reads no rows. `None` when `out` is empty or the arithmetic overflows.
#[must_use]
pub fn input_rows(
    out: Range<usize>,
    window: [usize; 4],
    height: usize,
) -> Option<(Range<usize>, usize)> {
    let [kernel, stride, dilation, pad] = window;
    if out.is_empty() || kernel == 0 {
        return None;
    }
    let first = out.start.checked_mul(stride)?;
    let last = (out.end - 1)
        .checked_mul(stride)?
        .checked_add((kernel - 1).checked_mul(dilation)?)?;
    let start = first.saturating_sub(pad).min(height);
    let end = last.checked_add(1)?.saturating_sub(pad).min(height);
    // The window of row `out.start` starts `pad - first` rows above the input (if positive);
    // read from `start`, that many rows above `start` too.
    let above = (pad + start).saturating_sub(first);
    Some((start..end.max(start), above))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_band_reads_the_rows_under_its_windows() {
        // 3 x 3, stride 1, padding 1 over 10 rows: row 0 reads rows 0..2 with one row of padding.
        assert_eq!(input_rows(0..1, [3, 1, 1, 1], 10), Some((0..2, 1)));
        assert_eq!(input_rows(4..6, [3, 1, 1, 1], 10), Some((3..7, 0)));
        assert_eq!(input_rows(9..10, [3, 1, 1, 1], 10), Some((8..10, 0)));
        // Stride 2, padding 0: rows 2..4 read 4..9.
        assert_eq!(input_rows(2..4, [3, 2, 1, 0], 20), Some((4..9, 0)));
        // Dilation 2: row 0 of a 3-row window with padding 2 reads rows 0 and 2.
        assert_eq!(input_rows(0..1, [3, 1, 2, 2], 10), Some((0..3, 2)));
        assert_eq!(input_rows(0..0, [3, 1, 1, 1], 10), None);
        // Wholly in the padding, above or below: no rows.
        assert_eq!(input_rows(0..1, [1, 1, 1, 2], 10), Some((0..0, 2)));
        assert_eq!(input_rows(12..13, [1, 1, 1, 0], 10), Some((10..10, 0)));
    }
}
