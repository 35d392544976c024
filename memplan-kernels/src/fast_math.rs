//! Branch-free f32 approximations of `exp`, `tanh`, `erf` and the logistic function, for the
//! elementwise kernels whose run time they dominate (Erf in GELU, Exp in Softmax, Tanh, Sigmoid).
//!
//! Each function is a straight line of f32 multiplies and adds, integer operations on the bits,
//! and selects (`if c { a } else { b }` of two values already computed, which the compiler turns
//! into a compare and a blend). There is no branch, no table and no call, so a loop that applies
//! one of them to a slice is vectorised by the compiler: four lanes on x86-64's baseline SSE2,
//! eight with AVX2, sixteen with AVX-512, one on a Cortex-M4F.
//!
//! ## exp: range reduction
//!
//! `e^x = 2^n e^r` with `n = round(x / ln 2)` and `r = x - n ln 2`, so `|r| <= ln 2 / 2`:
//!
//! - `n`: adding [`ROUNDING_MAGIC`] (1.5 * 2^23) to `x log2(e)` pushes its fraction bits out of
//!   the mantissa, so the sum is rounded to an integer (to nearest, ties to even, as every f32
//!   add rounds); subtracting it again gives `n` as a float, and the sum's low mantissa bits
//!   minus the magic's give `n` as an integer.
//! - `r` (Cody and Waite): ln 2 is split into [`LN2_HI`], ln 2 rounded to 12 significant bits,
//!   and [`LN2_LO`], the rest. `n * LN2_HI` is exact (|n| <= 150 needs 8 bits), so is
//!   `x - n * LN2_HI` (the two are within a factor 2 of each other, or `n` is 0); only the tiny
//!   `n * LN2_LO` is rounded. One product `n * ln2` would lose up to 2^-17 of `r`.
//! - `e^r = 1 + (r + r^2 q(r))`, `q` a degree-4 polynomial fitted (minimax, relative error
//!   3e-9) on `[-ln 2 / 2, ln 2 / 2]`. Adding the 1 last keeps the bits of `r`.
//! - `2^n` is built from bits (exponent field `n + 127`). It is applied in two halves,
//!   `(e^r 2^(n/2)) 2^(n - n/2)`, so both factors are normal floats over the whole range: the
//!   result overflows to infinity and rounds into the subnormals exactly once, as a correctly
//!   computed product would. Subnormal results are kept, not flushed to 0.
//! - The argument is first clamped to [[`EXP_MIN_ARG`], [`EXP_MAX_ARG`]] = [-104, 89], past
//!   which `e^x` rounds to 0 (below ln 2^-150 = -103.97) or overflows (above ln `f32::MAX` =
//!   88.72): the clamps keep `n` small and give `exp(-inf) = 0`, `exp(inf) = inf`. They are
//!   selects on `x > limit` / `x < limit`, false for NaN, so NaN passes through (`f32::max`
//!   would replace it).
//!
//! ## tanh, erf, the logistic function
//!
//! All three are computed for `|x|` and given the sign of `x` by `copysign`, so `f(-x) == -f(x)`
//! bit for bit and `f(-0) = -0` for the odd ones. Near 0 an odd polynomial `a + a s q(s)`,
//! `s = a^2`, keeps the result accurate relative to `a` (down to the subnormals, where it is
//! `a`); farther out a formula from `exp`:
//!
//! - `tanh(a) = 1 - 2 / (e^(2a) + 1)` for `a >= 0.625` (`tanh >= 0.55`, so the subtraction loses
//!   at most one bit); `e^(2a) = inf` gives exactly 1.
//! - `erf(a) = 1 - e^(P(a - 0.875))` for `a >= 0.875`, `P` a degree-6 polynomial fitted to
//!   `ln erfc` on `[0.875, 4]` (weighted by `erfc`, so its error is an absolute error of `erf`,
//!   2e-9). `a` is clamped to 4, where `1 - erfc(4)` already rounds to 1.
//! - `logistic(x) = 1 / (1 + e^-x)`: `exp`, an add and a divide, each monotonic, so the
//!   logistic function is monotonic too (`e^x / (1 + e^x)` for negative `x` is not: numerator
//!   and rounded denominator step at different points). The results down to the subnormals
//!   (below -87.3) are kept; below -88.72, where `e^-x` overflows, it is 0 (the exact value is
//!   below 3e-39 there). One `exp` an element: a select of `e^x` below -88, which kept the
//!   subnormal results down to -103.97, made the compiler compute both `exp`s for every
//!   element (Sigmoid ran 1.7x slower).
//!
//! Both sides of a select are computed for every element; that costs less than a branch that
//! stops the vectorisation. The polynomials were fitted with numpy (`tools/fit_fast_math.py`)
//! and rounded to f32; the tests below measure the error of the f32 evaluation.
//!
//! ## Accuracy (measured by the tests, against f64 references)
//!
//! | function | relative (in f32 ulps of the result) | absolute |
//! |---|---|---|
//! | [`exp`] | 1 ulp over [-104, 88.72] (subnormal results: 1 ulp = 2^-149) | |
//! | [`logistic`] | 3 ulps over [-88.72, 89] (0 below) | |
//! | [`tanh`] | 2 ulps | 1e-7 |
//! | [`erf`] | 2 ulps | 1.2e-7 |
//!
//! (The largest errors the tests find are 0.96, 2.26, 1.24 and 1.05 ulps; the bounds leave a
//! margin.) NaN gives NaN; `exp(-inf) = 0`, `exp(inf) = inf`, `tanh(+-inf) = erf(+-inf) = +-1`,
//! `logistic(-inf) = 0`, `logistic(inf) = 1`. All four are monotonic (never decrease) on every
//! f32 of [-104, 88] (exp, logistic), [-10, 10] (tanh) and [-4.5, 4.5] (erf), the switch points
//! included (an ignored test scans every float: `cargo test --release -- --ignored`).
//!
//! ## Determinism
//!
//! Only f32 `+ - * /`, bit casts, integer adds and shifts and compares: no fused multiply-add
//! (Rust never contracts `a * b + c`, and `mul_add` is not used), no `libm` call, no table.
//! Each operation is correctly rounded by IEEE 754, so the results are the same bits on every
//! target and at every SIMD width: x86-64 (SSE2, AVX2, AVX-512 builds), i686 and thumbv7em.

/// Adding 1.5 * 2^23 to a float of magnitude below 2^22 rounds it to an integer (the sum's ulp
/// is 1) and leaves that integer in the low bits of the sum's mantissa.
const ROUNDING_MAGIC: f32 = 12_582_912.0;
/// ln 2 = 0.693147... cut to 12 significant bits, 0.693115234375: `n * LN2_HI` is exact for
/// |n| < 2^12.
const LN2_HI: f32 = f32::from_bits(0x3f31_7000);
/// ln 2 - [`LN2_HI`], rounded to f32.
const LN2_LO: f32 = 3.194_618_3e-5;
/// `e^x` overflows f32 above ln(`f32::MAX`) = 88.7228; 89 keeps `n` at most 129.
const EXP_MAX_ARG: f32 = 89.0;
/// `e^x` rounds to 0 below ln(2^-150) = -103.972; -104 keeps `n` at least -150.
const EXP_MIN_ARG: f32 = -104.0;
/// `q` of `e^r = 1 + (r + r^2 q(r))`, lowest degree first.
const EXP_Q: [f32; 5] = [
    0.499_999_94,
    0.166_665_21,
    0.041_668_39,
    0.008_368_745,
    0.001_381_453_9,
];

/// Below this |x|, tanh is the odd polynomial; from it on, `1 - 2 / (e^(2|x|) + 1)`.
const TANH_POLY_LIMIT: f32 = 0.625;
/// `q` of `tanh(a) = a + a (s q(s))`, `s = a^2`, lowest degree first.
const TANH_Q: [f32; 5] = [
    -0.333_332_8,
    0.133_314_28,
    -0.053_738_516,
    0.020_634_998,
    -0.005_700_231_5,
];

/// Below this |x|, erf is the odd polynomial; from it on, `1 - e^P(|x| - ERF_POLY_LIMIT)`.
const ERF_POLY_LIMIT: f32 = 0.875;
/// From this |x| on, erf(x) rounds to +-1 in f32 (1 - erf(4) = 1.5e-8 < 2^-25).
const ERF_ONE_FROM: f32 = 4.0;
/// `q` of `erf(a) = a + a q(s)`, `s = a^2`, lowest degree first (`q(0) = 2 / sqrt(pi) - 1`).
const ERF_Q: [f32; 6] = [
    0.128_379_15,
    -0.376_125_48,
    0.112_824_455,
    -0.026_791_05,
    0.005_031_495,
    -0.000_619_931_5,
];
/// `P` of `ln erfc(a) = P(a - ERF_POLY_LIMIT)` on [0.875, 4], lowest degree first.
const LN_ERFC_P: [f32; 7] = [
    -1.532_824_4,
    -2.430_219,
    -0.826_553_9,
    -0.046_834_763,
    0.011_193_041,
    -0.002_032_514,
    0.000_199_901_43,
];

/// `c[0] + c[1] v + c[2] v^2 + ...` by Horner's rule (the loop is unrolled: `N` is a constant).
#[inline(always)]
fn polynomial<const N: usize>(c: &[f32; N], v: f32) -> f32 {
    let mut acc = c[N - 1];
    for &k in c[..N - 1].iter().rev() {
        acc = acc * v + k;
    }
    acc
}

/// 2^k for -126 <= k <= 127, from its bits. Outside that range (only for a NaN argument of
/// [`exp`], whose result is NaN anyway) the bits are garbage, without overflow checks.
#[inline(always)]
fn power_of_two(k: i32) -> f32 {
    // k + 127 is a biased exponent in 1..=254
    let bits = (k.wrapping_add(127) << 23) as u32;
    f32::from_bits(bits)
}

/// `sqrt(x)`, correctly rounded (IEEE 754): `libm::sqrtf`'s bits. On x86-64 the `sqrtss`
/// intrinsic, which the compiler encodes as `vsqrtss` inside a function built for AVX2 or
/// AVX-512; `libm::sqrtf` writes it as inline assembly in the legacy SSE encoding, and on Intel
/// cores each legacy SSE instruction run with the upper halves of the vector registers in use
/// costs a state transition (a LayerNormalization of 16-element rows ran 10x slower at AVX2
/// than in the portable build).
#[inline(always)]
pub(crate) fn sqrt(x: f32) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_cvtss_f32, _mm_set_ss, _mm_sqrt_ss};
        // SAFETY: SSE is part of x86-64 itself (every x86-64 CPU has it, and the target enables
        // it), so these SSE intrinsics can run wherever this code runs; they touch no memory.
        #[allow(unsafe_code)]
        unsafe {
            _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(x)))
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        libm::sqrtf(x)
    }
}

/// `e^x`, within 1 ulp (subnormal results included); 0 below -103.97, infinity above 88.72,
/// NaN for NaN.
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    let x = if x > EXP_MAX_ARG { EXP_MAX_ARG } else { x };
    let x = if x < EXP_MIN_ARG { EXP_MIN_ARG } else { x };
    let shifted = x * core::f32::consts::LOG2_E + ROUNDING_MAGIC;
    let n = shifted - ROUNDING_MAGIC;
    let r = (x - n * LN2_HI) - n * LN2_LO;
    let e_r = 1.0 + (r + r * r * polynomial(&EXP_Q, r));
    // Both are in [2^23, 2^24), where the ulp is 1: the bit difference is n (-150..=129).
    // two's complement: a negative n wraps to its i32
    let n_bits = shifted.to_bits().wrapping_sub(ROUNDING_MAGIC.to_bits()) as i32;
    let half = n_bits >> 1;
    e_r * power_of_two(half) * power_of_two(n_bits.wrapping_sub(half))
}

/// `tanh(x)`, within 2 ulps and 1e-7; odd (`tanh(-x) == -tanh(x)`, `tanh(-0) = -0`),
/// +-1 for +-infinity, NaN for NaN.
#[inline(always)]
pub(crate) fn tanh(x: f32) -> f32 {
    let a = x.abs();
    let s = a * a;
    let near_zero = a + a * (s * polynomial(&TANH_Q, s));
    let far = 1.0 - 2.0 / (exp(2.0 * a) + 1.0);
    let t = if a < TANH_POLY_LIMIT { near_zero } else { far };
    t.copysign(x)
}

/// `erf(x)`, within 2 ulps and 1.2e-7; odd (`erf(-x) == -erf(x)`, `erf(-0) = -0`),
/// +-1 from |x| = 4 on, NaN for NaN.
#[inline(always)]
pub(crate) fn erf(x: f32) -> f32 {
    let a = x.abs();
    let near_zero = a + a * polynomial(&ERF_Q, a * a);
    let clamped = if a > ERF_ONE_FROM { ERF_ONE_FROM } else { a };
    let far = 1.0 - exp(polynomial(&LN_ERFC_P, clamped - ERF_POLY_LIMIT));
    let y = if a < ERF_POLY_LIMIT { near_zero } else { far };
    y.copysign(x)
}

/// The logistic function `1 / (1 + e^-x)` (ONNX Sigmoid), within 3 ulps from x = -88.7 on
/// (subnormal below -87.3), 0 below -88.73 (where it is below 3e-39); 0 for -infinity, 1 for
/// infinity, NaN for NaN.
#[inline(always)]
pub(crate) fn logistic(x: f32) -> f32 {
    1.0 / (1.0 + exp(-x))
}

#[cfg(test)]
mod tests {
    use super::{
        ERF_ONE_FROM, ERF_POLY_LIMIT, LN2_HI, LN2_LO, ROUNDING_MAGIC, TANH_POLY_LIMIT, erf, exp,
        logistic, tanh,
    };

    /// `sqrt` is `libm::sqrtf` bit for bit: zeros, subnormals, normals, the largest, infinity,
    /// negatives and NaN, and a sweep of bit patterns.
    #[test]
    fn sqrt_is_libm_bit_for_bit() {
        let special = [
            0.0f32,
            -0.0,
            f32::MIN_POSITIVE,
            1e-45,
            1.0,
            2.0,
            f32::MAX,
            f32::INFINITY,
            -1.0,
            f32::NEG_INFINITY,
            f32::NAN,
        ];
        let sweep = (0..1u32 << 16).map(|i| f32::from_bits(i.wrapping_mul(65_537).wrapping_add(i)));
        for x in special.into_iter().chain(sweep) {
            let (ours, theirs) = (super::sqrt(x), libm::sqrtf(x));
            assert!(
                ours.to_bits() == theirs.to_bits() || (ours.is_nan() && theirs.is_nan()),
                "sqrt({x:e}) = {ours:e}, libm {theirs:e}"
            );
        }
    }
    use std::vec::Vec;

    /// erf(x) in f64, from the series erf(x) = 2/sqrt(pi) e^(-x^2) sum_n 2^n x^(2n+1) /
    /// (1 * 3 * ... * (2n+1)): every term is positive (for x > 0), so the f64 sum loses nothing
    /// to cancellation and is within a few f64 ulps of erf(x), far below an f32 ulp. About
    /// 2x^2 + 20 terms; for |x| >= 6, erf(x) is 1 in f64 to 1e-17.
    fn erf_reference(x: f64) -> f64 {
        if x.is_nan() {
            return x;
        }
        let a = x.abs();
        if a >= 6.0 {
            return 1.0f64.copysign(x);
        }
        let x2 = a * a;
        let mut term = a;
        let mut sum = a;
        let mut n = 0.0f64;
        for _ in 0..300 {
            n += 1.0;
            term *= 2.0 * x2 / (2.0 * n + 1.0);
            sum += term;
            if term < sum * 1e-17 {
                break;
            }
        }
        (core::f64::consts::FRAC_2_SQRT_PI * libm::exp(-x2) * sum).copysign(x)
    }

    fn logistic_reference(x: f64) -> f64 {
        1.0 / (1.0 + libm::exp(-x))
    }

    /// The distance from `got` to the exact `want`, in ulps of `want` rounded to f32 (for a
    /// subnormal, 2^-149).
    fn ulps(got: f32, want: f64) -> f64 {
        let rounded = (want as f32).abs();
        let ulp = f64::from(f32::from_bits(rounded.to_bits() + 1) - rounded);
        (f64::from(got) - want).abs() / ulp
    }

    /// Every `step`-th f32 bit pattern in `[lo, hi]` (both of the same sign), then `hi`.
    fn bit_grid(lo: f32, hi: f32, step: u32) -> Vec<f32> {
        let (a, b) = if lo.to_bits() <= hi.to_bits() {
            (lo.to_bits(), hi.to_bits())
        } else {
            (hi.to_bits(), lo.to_bits())
        };
        let mut v: Vec<f32> = (a..=b).step_by(step as usize).map(f32::from_bits).collect();
        v.push(hi);
        v
    }

    /// A dense grid over [lo, hi] (by bits, both signs; 0 included): every float's spacing is
    /// sampled, from the subnormals near 0 to the ends.
    fn grid(lo: f32, hi: f32, points_per_side: u32) -> Vec<f32> {
        let mut v = Vec::new();
        for (end, sign_of) in [(lo, -1.0f32), (hi, 1.0)] {
            if end * sign_of > 0.0 {
                let step = (end.abs().to_bits() / points_per_side).max(1);
                v.extend(
                    bit_grid(0.0, end.abs(), step)
                        .into_iter()
                        .map(|x| x * sign_of),
                );
            }
        }
        v
    }

    struct Worst {
        ulps: f64,
        ulps_at: f32,
        abs: f64,
        abs_at: f32,
    }

    fn worst(xs: &[f32], f: impl Fn(f32) -> f32, reference: impl Fn(f64) -> f64) -> Worst {
        let mut w = Worst {
            ulps: 0.0,
            ulps_at: 0.0,
            abs: 0.0,
            abs_at: 0.0,
        };
        for &x in xs {
            let want = reference(f64::from(x));
            let got = f(x);
            let u = ulps(got, want);
            let d = (f64::from(got) - want).abs();
            assert!(u.is_finite(), "f({x:e}) = {got:e}, want {want:e}");
            if u > w.ulps {
                (w.ulps, w.ulps_at) = (u, x);
            }
            if d > w.abs {
                (w.abs, w.abs_at) = (d, x);
            }
        }
        w
    }

    fn check(
        name: &str,
        xs: &[f32],
        f: impl Fn(f32) -> f32,
        reference: impl Fn(f64) -> f64,
        max_ulps: f64,
        max_abs: f64,
    ) {
        let w = worst(xs, f, reference);
        std::println!(
            "{name}: {} points, max {:.3} ulps at {:e}, max abs {:.3e} at {:e}",
            xs.len(),
            w.ulps,
            w.ulps_at,
            w.abs,
            w.abs_at
        );
        assert!(
            w.ulps <= max_ulps,
            "{name}: {:.3} ulps at {:e} (bound {max_ulps})",
            w.ulps,
            w.ulps_at
        );
        assert!(
            w.abs <= max_abs,
            "{name}: abs error {:e} at {:e} (bound {max_abs:e})",
            w.abs,
            w.abs_at
        );
    }

    /// The largest f32 whose e^x is finite.
    const EXP_LARGEST_FINITE: f32 = 88.722_83;

    #[test]
    fn exp_is_within_1_ulp() {
        let xs = grid(-104.0, EXP_LARGEST_FINITE, 3_000_000);
        check("exp", &xs, exp, libm::exp, 1.0, f64::INFINITY);
        // Around every switch of n (r = +-ln2/2), every float of a neighbourhood.
        let mut near_switches = Vec::new();
        for n in -150..=127 {
            let x = (f64::from(n) + 0.5) * core::f64::consts::LN_2;
            let x = x as f32;
            let b = x.to_bits();
            near_switches.extend((b - 64..b + 64).map(f32::from_bits));
        }
        near_switches.retain(|&x| (-104.0..=EXP_LARGEST_FINITE).contains(&x));
        check(
            "exp n switches",
            &near_switches,
            exp,
            libm::exp,
            1.0,
            f64::INFINITY,
        );
    }

    #[test]
    fn logistic_is_within_3_ulps() {
        let xs = grid(-EXP_LARGEST_FINITE, 89.0, 3_000_000);
        check(
            "logistic",
            &xs,
            logistic,
            logistic_reference,
            3.0,
            f64::INFINITY,
        );
    }

    /// Below -88.72 (where `e^-x` overflows) the logistic function is 0 (the exact one is
    /// below 3e-39 there), and from there on positive.
    #[test]
    fn logistic_is_0_where_e_to_minus_x_overflows() {
        for i in 0..200_000u32 {
            let x = -110.0 + (110.0 - EXP_LARGEST_FINITE) * (i as f32 / 200_000.0);
            if x < -EXP_LARGEST_FINITE {
                assert_eq!(logistic(x).to_bits(), 0, "logistic({x:e})");
                assert!(logistic_reference(f64::from(x)) < 3e-39, "{x:e}");
            }
        }
        assert!(logistic(-EXP_LARGEST_FINITE) > 0.0);
    }

    #[test]
    fn tanh_is_within_2_ulps_and_1e_7() {
        let xs = grid(-10.0, 10.0, 3_000_000);
        check("tanh", &xs, tanh, libm::tanh, 2.0, 1e-7);
    }

    #[test]
    fn erf_is_within_2_ulps_and_1_2e_7() {
        let xs = grid(-4.5, 4.5, 3_000_000);
        check("erf", &xs, erf, erf_reference, 2.0, 1.2e-7);
    }

    /// The results' bits over a grid, hashed (FNV-1a): the same on every target.
    fn bits_hash(f: impl Fn(f32) -> f32) -> u64 {
        grid(-110.0, 110.0, 200_000)
            .into_iter()
            .fold(0xcbf2_9ce4_8422_2325, |h, x| {
                (h ^ u64::from(f(x).to_bits())).wrapping_mul(0x0100_0000_01b3)
            })
    }

    #[test]
    fn same_bits_on_every_target() {
        // Recorded on x86-64; a target whose arithmetic differed (a fused multiply-add, x87
        // excess precision, flushed subnormals) would change them.
        let hashes = [exp, tanh, erf, logistic].map(bits_hash);
        let recorded = [
            0xa6b9_1dcd_cf1a_b932,
            0x1fe0_dd3b_f969_83b5,
            0xd4ae_864d_8d1b_1da5,
            0x0bee_9fb6_cac8_896c,
        ];
        assert_eq!(hashes, recorded, "{hashes:#x?}");
    }

    #[test]
    fn ln2_is_split_as_documented() {
        // 12 significant bits: the low 11 of the 23 stored mantissa bits are 0.
        assert_eq!(LN2_HI.to_bits() & 0x7ff, 0);
        assert!((f64::from(LN2_HI) - core::f64::consts::LN_2).abs() < 2e-4);
        let lo = (core::f64::consts::LN_2 - f64::from(LN2_HI)) as f32;
        assert_eq!(LN2_LO, lo);
        assert_eq!(ROUNDING_MAGIC, 1.5 * 8_388_608.0);
    }

    #[test]
    fn erf_reference_matches_known_values() {
        // erf to 15 digits (Abramowitz & Stegun table 7.1 / high-precision references).
        let cases: [(f64, f64); 8] = [
            (0.1, 0.112_462_916_018_285),
            (0.5, 0.520_499_877_813_047),
            (1.0, 0.842_700_792_949_715),
            (1.5, 0.966_105_146_475_311),
            (2.0, 0.995_322_265_018_953),
            (2.5, 0.999_593_047_982_555),
            (3.0, 0.999_977_909_503_001),
            (3.5, 0.999_999_256_901_628),
        ];
        for (x, want) in cases {
            assert!((erf_reference(x) - want).abs() < 1e-14, "erf({x})");
            assert!((erf_reference(-x) + want).abs() < 1e-14, "erf(-{x})");
        }
    }

    #[test]
    fn special_values() {
        for f in [exp, tanh, erf, logistic] {
            assert!(f(f32::NAN).is_nan());
            assert!(f(-f32::NAN).is_nan());
        }
        assert_eq!(exp(f32::NEG_INFINITY).to_bits(), 0);
        assert_eq!(exp(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp(88.73), f32::INFINITY);
        assert_eq!(exp(f32::MAX), f32::INFINITY);
        assert!(exp(EXP_LARGEST_FINITE).is_finite());
        assert_eq!(exp(-103.98).to_bits(), 0);
        assert_eq!(exp(-f32::MAX).to_bits(), 0);
        // The smallest subnormal, and a subnormal of the special_exp case (e^-100 = 3.72e-44).
        assert_eq!(exp(-103.9).to_bits(), 1);
        assert!(ulps(exp(-100.0), libm::exp(-100.0)) <= 1.0);
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-0.0), 1.0);
        assert_eq!(exp(1.0), core::f32::consts::E);
        for f in [tanh, erf] {
            assert_eq!(f(f32::INFINITY), 1.0);
            assert_eq!(f(f32::NEG_INFINITY), -1.0);
            assert_eq!(f(f32::MAX), 1.0);
            assert_eq!(f(-100.0), -1.0);
            assert_eq!(f(0.0).to_bits(), 0.0f32.to_bits());
            assert_eq!(f(-0.0).to_bits(), (-0.0f32).to_bits());
        }
        assert_eq!(erf(ERF_ONE_FROM), 1.0);
        // Subnormal arguments: tanh(x) = x, erf(x) = 2x / sqrt(pi) (rounded to a subnormal).
        let tiny = 1e-40f32;
        assert_eq!(tanh(tiny), tiny);
        assert_eq!(tanh(-tiny), -tiny);
        assert!(
            ulps(
                erf(tiny),
                core::f64::consts::FRAC_2_SQRT_PI * f64::from(tiny)
            ) <= 1.0
        );
        assert_eq!(logistic(f32::NEG_INFINITY).to_bits(), 0);
        assert_eq!(logistic(f32::INFINITY), 1.0);
        assert_eq!(logistic(0.0), 0.5);
        assert_eq!(logistic(-0.0), 0.5);
        assert_eq!(logistic(-f32::MAX).to_bits(), 0);
        assert!(
            logistic(-88.0) > 0.0,
            "1 / (1 + e^88) is a subnormal, not 0"
        );
    }

    #[test]
    fn tanh_and_erf_are_odd_bit_for_bit() {
        for x in grid(0.0, 20.0, 1_000_000) {
            assert_eq!(tanh(-x).to_bits(), (-tanh(x)).to_bits(), "tanh({x:e})");
            assert_eq!(erf(-x).to_bits(), (-erf(x)).to_bits(), "erf({x:e})");
        }
    }

    /// `f` never decreases along `xs` (ascending).
    fn assert_monotonic(name: &str, xs: &[f32], f: impl Fn(f32) -> f32) {
        for pair in xs.windows(2) {
            assert!(pair[0].total_cmp(&pair[1]).is_lt());
            let (a, b) = (f(pair[0]), f(pair[1]));
            assert!(
                a <= b,
                "{name}({:e}) = {a:e} > {name}({:e}) = {b:e}",
                pair[0],
                pair[1]
            );
        }
    }

    /// An ascending grid of step `step` over [lo, hi], plus every float within 2^12 ulps of each
    /// point of `switches` (where an approximation hands over to another).
    fn fine_grid(lo: f32, hi: f32, step: f32, switches: &[f32]) -> Vec<f32> {
        let mut v = Vec::new();
        let mut i = 0u32;
        loop {
            let x = (f64::from(lo) + f64::from(i) * f64::from(step)) as f32;
            if x > hi {
                break;
            }
            v.push(x);
            i += 1;
        }
        for &s in switches {
            let b = s.to_bits();
            v.extend((b - 4096..b + 4096).map(f32::from_bits));
            v.extend((b - 4096..b + 4096).map(|b| -f32::from_bits(b)));
        }
        v.sort_by(f32::total_cmp);
        v.dedup();
        v
    }

    #[test]
    fn tanh_erf_and_logistic_are_monotonic() {
        let tanh_xs = fine_grid(-10.0, 10.0, 1e-5, &[TANH_POLY_LIMIT]);
        assert_monotonic("tanh", &tanh_xs, tanh);
        let erf_xs = fine_grid(-4.5, 4.5, 1e-5, &[ERF_POLY_LIMIT, ERF_ONE_FROM]);
        assert_monotonic("erf", &erf_xs, erf);
        // Where e^-|x| switches n (|x| = (k + 1/2) ln 2), the logistic function could step back.
        let switches: Vec<f32> = (0..30)
            .map(|k| ((f64::from(k) + 0.5) * core::f64::consts::LN_2) as f32)
            .collect();
        let logistic_xs = fine_grid(-104.0, 89.0, 1e-4, &switches);
        assert_monotonic("logistic", &logistic_xs, logistic);
    }

    /// How often `f` decreases from one f32 to the next over [lo, hi], every float visited.
    fn decreases_on_every_float(lo: f32, hi: f32, f: impl Fn(f32) -> f32) -> u64 {
        let mut decreases = 0;
        let mut x = lo;
        let mut y = f(x);
        while x < hi {
            x = x.next_up();
            let next = f(x);
            decreases += u64::from(next < y);
            y = next;
        }
        decreases
    }

    #[test]
    #[ignore = "visits 2^33 floats, about 10 minutes in release"]
    fn monotonic_on_every_float() {
        assert_eq!(decreases_on_every_float(-104.0, 88.0, exp), 0, "exp");
        assert_eq!(
            decreases_on_every_float(-104.0, 88.0, logistic),
            0,
            "logistic"
        );
        assert_eq!(decreases_on_every_float(-10.0, 10.0, tanh), 0, "tanh");
        assert_eq!(decreases_on_every_float(-4.5, 4.5, erf), 0, "erf");
    }
}
