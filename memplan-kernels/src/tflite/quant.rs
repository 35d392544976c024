//! TFLite's fixed-point arithmetic, bit for bit: the multipliers a build step computes once
//! ([`quantize_multiplier`]) and the integer operations the int8 kernels apply at run time
//! ([`multiply_by_quantized_multiplier`] and its parts).
//!
//! A real multiplier `m` (for example `input_scale * filter_scale / output_scale`) is stored as a
//! Q31 significand in `[2^30, 2^31)` and a power-of-two exponent, `m ~ q / 2^31 * 2^shift`.
//! Applying it to an int32 accumulator is a saturating rounding doubling high multiply by the
//! significand (gemmlowp's `SaturatingRoundingDoublingHighMul`) followed by a rounding right
//! shift (`RoundingDivideByPOT`, ties away from zero), with a left shift first when the exponent
//! is positive: TFLite's `MultiplyByQuantizedMultiplier` without `TFLITE_SINGLE_ROUNDING` (the
//! default build, which the LiteRT interpreter uses). No float is involved at run time.

/// `QuantizeMultiplier`: the Q31 significand and the exponent of `real` (`real ~ q * 2^(shift -
/// 31)`), computed in f64 exactly as TFLite does (`frexp`, round half away from zero, the
/// significand `2^31` folded into the exponent, exponents below -31 flushed to zero).
pub fn quantize_multiplier(real: f64) -> (i32, i32) {
    if real == 0.0 {
        return (0, 0);
    }
    let (q, mut shift) = libm::frexp(real);
    // |q| < 1, so |q| * 2^31 fits in an i64
    let mut q_fixed = libm::round(q * (1u64 << 31) as f64) as i64;
    if q_fixed == 1i64 << 31 {
        q_fixed /= 2;
        shift += 1;
    }
    if shift < -31 {
        shift = 0;
        q_fixed = 0;
    }
    // |q_fixed| <= 2^31 - 1 after the fold
    (q_fixed as i32, shift)
}

/// gemmlowp's `SaturatingRoundingDoublingHighMul`: the high 32 bits of `2 a b`, rounded to
/// nearest (the nudge is `2^30` for a non-negative product, `1 - 2^30` otherwise, and the
/// division truncates toward zero, as C++'s does); `i32::MIN * i32::MIN` saturates.
#[inline]
pub fn saturating_rounding_doubling_high_mul(a: i32, b: i32) -> i32 {
    if a == i32::MIN && b == i32::MIN {
        return i32::MAX;
    }
    let ab = i64::from(a) * i64::from(b);
    let nudge: i64 = if ab >= 0 { 1 << 30 } else { 1 - (1 << 30) };
    // |ab + nudge| / 2^31 < 2^31 unless saturated
    ((ab + nudge) / (1i64 << 31)) as i32
}

/// gemmlowp's `RoundingDivideByPOT`: `x / 2^exponent` rounded to nearest, ties away from zero
/// (`exponent` in `0..=31`).
#[inline]
pub fn rounding_divide_by_pot(x: i32, exponent: i32) -> i32 {
    let exponent = exponent.clamp(0, 31);
    let mask: i32 = ((1i64 << exponent) - 1) as i32;
    let remainder = x & mask;
    let threshold = (mask >> 1) + i32::from(x < 0);
    (x >> exponent) + i32::from(remainder > threshold)
}

/// TFLite's `MultiplyByQuantizedMultiplier(x, multiplier, shift)`: `x * multiplier * 2^(shift -
/// 31)`, rounded as TFLite's double-rounding form does. A positive `shift` multiplies first
/// (wrapping on overflow, as the C++ int multiply does in practice), a negative one divides last.
#[inline]
pub fn multiply_by_quantized_multiplier(x: i32, multiplier: i32, shift: i32) -> i32 {
    let left = shift.max(0);
    let right = (-shift).max(0);
    let shifted = x.wrapping_mul(1i32.wrapping_shl(left.clamp(0, 31) as u32));
    rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(shifted, multiplier),
        right,
    )
}

/// `MultiplyByQuantizedMultiplier` with one rounding (TFLite's `TFLITE_SINGLE_ROUNDING` form):
/// `(x * multiplier + 2^(30 - shift)) >> (31 - shift)` in 64 bits, rounding half up. LiteRT's
/// reference FULLY_CONNECTED rounds this way (its CONV_2D and the others round twice, as
/// [`multiply_by_quantized_multiplier`]); `shift` in `-31..=30`.
#[inline]
pub fn multiply_by_quantized_multiplier_single(x: i32, multiplier: i32, shift: i32) -> i32 {
    let total = i64::from(31 - shift.clamp(-31, 30));
    let round = 1i64 << (total - 1);
    let result = (i64::from(x) * i64::from(multiplier) + round) >> total;
    // clamped to the int32 range
    result.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multipliers_are_tflites() {
        // 0.5 = 2^30 / 2^31 * 2^0; 1.0 folds 2^31 into the exponent.
        assert_eq!(quantize_multiplier(0.5), (1 << 30, 0));
        assert_eq!(quantize_multiplier(1.0), (1 << 30, 1));
        assert_eq!(quantize_multiplier(0.0), (0, 0));
        assert_eq!(quantize_multiplier(1e-12), (0, 0));
        let (q, shift) = quantize_multiplier(0.001_234_5);
        assert!((q as f64 / 2f64.powi(31) * 2f64.powi(shift) - 0.001_234_5).abs() < 1e-12);
        assert!((1 << 30..i32::MAX).contains(&q));
    }

    #[test]
    fn fixed_point_ops_round_as_gemmlowp() {
        assert_eq!(rounding_divide_by_pot(5, 1), 3);
        assert_eq!(rounding_divide_by_pot(-5, 1), -3);
        assert_eq!(rounding_divide_by_pot(4, 1), 2);
        assert_eq!(rounding_divide_by_pot(-7, 2), -2);
        assert_eq!(rounding_divide_by_pot(7, 0), 7);
        assert_eq!(
            saturating_rounding_doubling_high_mul(i32::MIN, i32::MIN),
            i32::MAX
        );
        assert_eq!(
            saturating_rounding_doubling_high_mul(1 << 30, 1 << 30),
            1 << 29
        );
        // A tie: 2 * 1 * 2^30 / 2^32 = 0.5 rounds up for a positive product, down (toward zero
        // after the nudge) for a negative one.
        assert_eq!(saturating_rounding_doubling_high_mul(1, 1 << 30), 1);
        assert_eq!(saturating_rounding_doubling_high_mul(-1, 1 << 30), 0);
        // 100 * 0.5 = 50; 100 * 0.25 (shift -1) = 25; 3 * 2 (shift 2, multiplier 0.5) = 6.
        assert_eq!(multiply_by_quantized_multiplier(100, 1 << 30, 0), 50);
        assert_eq!(multiply_by_quantized_multiplier(100, 1 << 30, -1), 25);
        assert_eq!(multiply_by_quantized_multiplier(3, 1 << 30, 2), 6);
    }

    #[test]
    fn single_rounding_rounds_once() {
        // 31944 * 1316544777 * 2^-39 = 76.4999: twice rounded 77, once 76.
        assert_eq!(
            multiply_by_quantized_multiplier(31944, 1_316_544_777, -8),
            77
        );
        assert_eq!(
            multiply_by_quantized_multiplier_single(31944, 1_316_544_777, -8),
            76
        );
        assert_eq!(multiply_by_quantized_multiplier_single(100, 1 << 30, 0), 50);
        assert_eq!(multiply_by_quantized_multiplier_single(3, 1 << 30, 2), 6);
        // Half up: -2.5 -> -2, 2.5 -> 3.
        assert_eq!(multiply_by_quantized_multiplier_single(-5, 1 << 30, 0), -2);
        assert_eq!(multiply_by_quantized_multiplier_single(5, 1 << 30, 0), 3);
    }
}
