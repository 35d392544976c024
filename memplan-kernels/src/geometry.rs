//! The geometry of a sliding window along one axis: how many outputs a convolution or pool
//! computes, and the padding before and after the input, for every padding rule memplan's
//! formats have. One function ([`axis`]) that ONNX shape inference, the ONNX kernels' window
//! ([`crate::spatial`]) and the TFLite lowering all call, so the three cannot disagree.
//!
//! Along an axis of `input` elements, a kernel of `kernel` taps spaced by `dilation` spans
//! `(kernel - 1) dilation + 1` elements. With `begin` and `end` elements of padding and a
//! stride `stride`, output `o` reads inputs `o stride - begin + t dilation` for taps `t`:
//! - explicit padding (ONNX `pads`, `auto_pad = VALID`, TFLite `VALID`): `(padded - span) /
//!   stride + 1` outputs, where `padded = begin + input + end`; with ONNX's `ceil_mode` the
//!   division rounds up, but a last window starting past the input and its leading padding is
//!   dropped, as ONNX Runtime drops it;
//! - "same" padding (ONNX `SAME_UPPER`/`SAME_LOWER`, TFLite `SAME`): `ceil(input / stride)`
//!   outputs and just enough padding for the last window, split in two with the odd element at
//!   the end (`SAME_UPPER`, TFLite) or at the beginning (`SAME_LOWER`).
//!
//! Every product and sum is checked: the numbers may come from a hostile file.

/// How an axis is padded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding {
    /// Given pads (`VALID` is zero of each).
    Explicit {
        /// Elements before the first input.
        begin: u64,
        /// Elements after the last input.
        end: u64,
    },
    /// Outputs `ceil(input / stride)`, the odd padding element at the end (ONNX `SAME_UPPER`,
    /// TFLite `SAME`).
    SameUpper,
    /// As [`Padding::SameUpper`], the odd padding element at the beginning.
    SameLower,
}

/// One axis of a window: its output size and its padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Axis {
    /// Outputs along the axis.
    pub output: u64,
    /// Padding before the first input.
    pub begin: u64,
    /// Padding after the last input.
    pub end: u64,
    /// Elements one window spans: `(kernel - 1) dilation + 1`.
    pub span: u64,
    /// With `ceil_mode`, whether a last window starting past the input was dropped (ONNX shape
    /// inference keeps it, ONNX Runtime does not).
    pub dropped_last: bool,
}

/// Why an axis has no window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxisError {
    /// A kernel size, stride or dilation of zero.
    NotPositive,
    /// The window or the padded input does not fit in 64 bits.
    Overflow,
    /// The window spans more elements than the padded input has.
    SpanExceedsInput {
        /// Elements the window spans.
        span: u64,
        /// Elements of the padded input.
        padded: u64,
    },
}

impl core::fmt::Display for AxisError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            AxisError::NotPositive => {
                f.write_str("strides, dilations and kernel sizes must be positive")
            }
            AxisError::Overflow => f.write_str("the window spans more elements than memory holds"),
            AxisError::SpanExceedsInput { span, padded } => write!(
                f,
                "the kernel spans {span} elements, more than the padded input {padded}"
            ),
        }
    }
}

/// The window of `kernel` taps, `stride` and `dilation` over `input` elements padded by
/// `padding`; `ceil` rounds the output count up (ONNX pools' `ceil_mode`, explicit padding only).
///
/// # Errors
/// A zero kernel, stride or dilation; numbers whose products overflow; a window wider than the
/// padded input.
pub fn axis(
    input: u64,
    kernel: u64,
    stride: u64,
    dilation: u64,
    padding: Padding,
    ceil: bool,
) -> Result<Axis, AxisError> {
    if kernel == 0 || stride == 0 || dilation == 0 {
        return Err(AxisError::NotPositive);
    }
    let span = (kernel - 1)
        .checked_mul(dilation)
        .and_then(|s| s.checked_add(1))
        .ok_or(AxisError::Overflow)?;
    match padding {
        Padding::Explicit { begin, end } => {
            let padded = input
                .checked_add(begin)
                .and_then(|p| p.checked_add(end))
                .ok_or(AxisError::Overflow)?;
            let Some(room) = padded.checked_sub(span) else {
                return Err(AxisError::SpanExceedsInput { span, padded });
            };
            let (mut output, mut dropped_last) = (room / stride + 1, false);
            if ceil {
                output = room.div_ceil(stride) + 1;
                // The last window starts at `(output - 1) stride`, at or past `input + begin`
                // (which fits: it is at most `padded`) exactly when `output - 1` reaches
                // `ceil((input + begin) / stride)`; compared so, no product can overflow.
                if output > (input + begin).div_ceil(stride) {
                    output -= 1;
                    dropped_last = true;
                }
            }
            Ok(Axis {
                output,
                begin,
                end,
                span,
                dropped_last,
            })
        }
        Padding::SameUpper | Padding::SameLower => {
            let output = input.div_ceil(stride);
            let total = (output.max(1) - 1)
                .checked_mul(stride)
                .and_then(|reach| reach.checked_add(span))
                .ok_or(AxisError::Overflow)?
                .saturating_sub(input);
            let (small, large) = (total / 2, total - total / 2);
            let (begin, end) = if padding == Padding::SameUpper {
                (small, large)
            } else {
                (large, small)
            };
            Ok(Axis {
                output,
                begin,
                end,
                span,
                dropped_last: false,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn explicit(begin: u64, end: u64) -> Padding {
        Padding::Explicit { begin, end }
    }

    #[test]
    fn explicit_padding_counts_whole_windows() {
        // 7 inputs, 3 taps, stride 2, one pad each side: windows at -1, 1, 3, 5.
        let a = axis(7, 3, 2, 1, explicit(1, 1), false).unwrap();
        assert_eq!((a.output, a.begin, a.end, a.span), (4, 1, 1, 3));
        // Dilation 2 spans 5: windows at 0 and 2 of 7.
        assert_eq!(axis(7, 3, 2, 2, explicit(0, 0), false).unwrap().output, 2);
        assert_eq!(
            axis(2, 3, 1, 1, explicit(0, 0), false),
            Err(AxisError::SpanExceedsInput { span: 3, padded: 2 })
        );
    }

    #[test]
    fn ceil_mode_rounds_up_and_drops_a_window_past_the_input() {
        // 6 inputs, 2 taps, stride 2: 3 windows; 5 inputs: ceil gives the window at 4.
        assert_eq!(axis(5, 2, 2, 1, explicit(0, 0), false).unwrap().output, 2);
        let a = axis(5, 2, 2, 1, explicit(0, 0), true).unwrap();
        assert_eq!((a.output, a.dropped_last), (3, false));
        // 4 inputs and 1 pad at the end, kernel 1, stride 2: ceil would start a window at 4,
        // past the input: dropped.
        let a = axis(4, 1, 2, 1, explicit(0, 1), true).unwrap();
        assert_eq!((a.output, a.dropped_last), (2, true));
    }

    #[test]
    fn same_padding_puts_the_odd_element_where_its_rule_says() {
        // 7 inputs, 4 taps, stride 2: 4 outputs, total padding 3.
        let upper = axis(7, 4, 2, 1, Padding::SameUpper, false).unwrap();
        assert_eq!((upper.output, upper.begin, upper.end), (4, 1, 2));
        let lower = axis(7, 4, 2, 1, Padding::SameLower, false).unwrap();
        assert_eq!((lower.output, lower.begin, lower.end), (4, 2, 1));
        // A stride wider than the kernel needs no padding.
        let a = axis(8, 1, 2, 1, Padding::SameUpper, false).unwrap();
        assert_eq!((a.output, a.begin, a.end), (4, 0, 0));
    }

    #[test]
    fn hostile_numbers_are_errors_not_overflows() {
        // ceil_mode over the largest axis: rounding up gives a third window, starting at
        // 2 (2^63 + 1), past 2^64 (and past the input): dropped, without computing its start.
        let a = axis(u64::MAX - 2, 1, u64::MAX / 2 + 2, 1, explicit(0, 1), true).unwrap();
        assert_eq!((a.output, a.dropped_last), (2, true));
        assert_eq!(
            axis(8, 0, 1, 1, explicit(0, 0), false),
            Err(AxisError::NotPositive)
        );
        assert_eq!(
            axis(8, 3, 0, 1, explicit(0, 0), false),
            Err(AxisError::NotPositive)
        );
        assert_eq!(
            axis(8, u64::MAX, 1, 2, explicit(0, 0), false),
            Err(AxisError::Overflow)
        );
        assert_eq!(
            axis(u64::MAX, 1, 1, 1, explicit(1, 0), false),
            Err(AxisError::Overflow)
        );
        assert_eq!(
            axis(u64::MAX, 3, 1, 1, Padding::SameUpper, false),
            Err(AxisError::Overflow)
        );
    }

    #[test]
    fn every_output_window_starts_inside_the_padded_input() {
        // Brute force over small axes: the last window ends inside the padded input, and one
        // more would not (without ceil_mode); "same" gives ceil(input / stride) and the least
        // padding that fits the last window.
        for input in 1..12u64 {
            for kernel in 1..5 {
                for stride in 1..4 {
                    for dilation in 1..3 {
                        for (b, e) in [(0, 0), (1, 0), (0, 2), (2, 1)] {
                            let Ok(a) =
                                axis(input, kernel, stride, dilation, explicit(b, e), false)
                            else {
                                assert!((kernel - 1) * dilation + 1 > input + b + e);
                                continue;
                            };
                            let last_end = (a.output - 1) * stride + a.span;
                            assert!(last_end <= input + b + e);
                            assert!(last_end + stride > input + b + e);
                        }
                        let a = axis(input, kernel, stride, dilation, Padding::SameUpper, false)
                            .unwrap();
                        assert_eq!(a.output, input.div_ceil(stride));
                        let needed = ((a.output - 1) * stride + a.span).saturating_sub(input);
                        assert_eq!(a.begin + a.end, needed);
                        assert!(a.end >= a.begin && a.end - a.begin <= 1);
                    }
                }
            }
        }
    }
}
