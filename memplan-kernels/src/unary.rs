//! Elementwise operators of one tensor: activations (Relu, Sigmoid, HardSwish, ...), math
//! functions (Sqrt, Exp, Erf, ...) and Clip.
//!
//! Output element `i` depends on input element `i` only, so every one of them can run in place:
//! the element is read, then overwritten. The in-place and separate-buffer paths apply the very
//! same function to the very same value, so their results are bit-identical.

use super::attrs::Attrs;
use super::error::{KernelError, bail};
use super::fast_math;
use super::simd::dispatch;
use super::tensor::{
    DType, Elem, Input, Operand, Output, expect_shape, operand, opt_scalar_f32, out_dtype, output,
};

/// Applies `f` to every element of input 0, writing output 0 (in place or not).
pub(crate) fn map<T: Elem>(
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    f: impl Fn(T) -> T,
) -> Result<(), KernelError> {
    let (in_shape, src) = operand::<T>(inputs, 0, 0)?;
    let (out_shape, out) = output::<T>(outputs, 0)?;
    expect_shape(0, out_shape, in_shape)?;
    let src = match src {
        Operand::Slice(s) => Some(s),
        Operand::Out => None,
    };
    dispatch!(
        each::<T, _>,
        each_avx2::<T, _>,
        each_avx512::<T, _>,
        (&f, src, out)
    );
    Ok(())
}

/// `out[i] = f(src[i])` (or `f(out[i])` in place), the loop the compiler vectorises: `f` is
/// branch-free arithmetic (selects, not jumps), so a wider instruction set runs more lanes of
/// the same operations. Rust never fuses a multiply and an add on its own, so every level
/// computes the same bits.
#[inline(always)]
fn each<T: Copy, F: Fn(T) -> T>(f: &F, src: Option<&[T]>, out: &mut [T]) {
    match src {
        Some(s) => {
            for (o, &x) in out.iter_mut().zip(s) {
                *o = f(x);
            }
        }
        None => {
            for o in out.iter_mut() {
                *o = f(*o);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn each_avx2<T: Copy, F: Fn(T) -> T>(f: &F, src: Option<&[T]>, out: &mut [T]) {
    each(f, src, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn each_avx512<T: Copy, F: Fn(T) -> T>(f: &F, src: Option<&[T]>, out: &mut [T]) {
    each(f, src, out);
}

/// Runs the f32 unary operator `op`, if it is one.
pub(crate) fn run(
    op: &str,
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Option<Result<(), KernelError>> {
    Some(match op {
        // max(x, 0) with the first operand kept unless the second is greater: NaN stays NaN
        // and -0 stays -0, as in ONNX Runtime.
        "Relu" => map(inputs, outputs, |x: f32| if x < 0.0 { 0.0 } else { x }),
        // Sigmoid, Tanh, Exp, Erf (and Gelu, Mish, Softplus, Selu below): the branch-free
        // approximations of `fast_math`, within a few ulps, which the loop of `map` vectorises.
        "Sigmoid" => map(inputs, outputs, fast_math::logistic),
        "Tanh" => map(inputs, outputs, fast_math::tanh),
        "Sqrt" => map(inputs, outputs, crate::fast_math::sqrt),
        "Exp" => map(inputs, outputs, fast_math::exp),
        "Log" => map(inputs, outputs, libm::logf),
        "Erf" => map(inputs, outputs, fast_math::erf),
        "Reciprocal" => map(inputs, outputs, |x: f32| 1.0 / x),
        "Floor" => map(inputs, outputs, libm::floorf),
        "Ceil" => map(inputs, outputs, libm::ceilf),
        "Round" => map(inputs, outputs, libm::roundevenf),
        "Sin" => map(inputs, outputs, libm::sinf),
        "Cos" => map(inputs, outputs, libm::cosf),
        "Tan" => map(inputs, outputs, libm::tanf),
        "Asin" => map(inputs, outputs, libm::asinf),
        "Acos" => map(inputs, outputs, libm::acosf),
        "Atan" => map(inputs, outputs, libm::atanf),
        "Sinh" => map(inputs, outputs, libm::sinhf),
        "Cosh" => map(inputs, outputs, libm::coshf),
        "Asinh" => map(inputs, outputs, libm::asinhf),
        // libm's acoshf is undefined below 1 (it returns finite values for x <= -2).
        "Acosh" => map(inputs, outputs, |x: f32| {
            if x < 1.0 { f32::NAN } else { libm::acoshf(x) }
        }),
        "Atanh" => map(inputs, outputs, libm::atanhf),
        "Softplus" => map(inputs, outputs, softplus),
        "Neg" => signed(
            inputs,
            outputs,
            |x| -x,
            i64::wrapping_neg,
            i32::wrapping_neg,
        ),
        "Abs" => signed(
            inputs,
            outputs,
            f32::abs,
            i64::wrapping_abs,
            i32::wrapping_abs,
        ),
        "Sign" => signed(inputs, outputs, sign, i64::signum, i32::signum),
        "Not" => map(inputs, outputs, |x: u8| u8::from(x == 0)),
        "HardSigmoid" => hard_sigmoid(attrs, inputs, outputs, false),
        "HardSwish" => hard_sigmoid(attrs, inputs, outputs, true),
        "LeakyRelu" => match attrs.float("alpha", 0.01) {
            Ok(alpha) => map(
                inputs,
                outputs,
                move |x: f32| if x < 0.0 { alpha * x } else { x },
            ),
            Err(e) => Err(e),
        },
        "Elu" => match attrs.float("alpha", 1.0) {
            Ok(alpha) => map(inputs, outputs, move |x: f32| {
                if x < 0.0 { alpha * libm::expm1f(x) } else { x }
            }),
            Err(e) => Err(e),
        },
        "Clip" => clip(attrs, inputs, outputs),
        "Softsign" => map(inputs, outputs, |x: f32| x / (1.0 + x.abs())),
        "Mish" => map(inputs, outputs, |x: f32| x * fast_math::tanh(softplus(x))),
        "Selu" => selu(attrs, inputs, outputs),
        "Celu" => match attrs.float("alpha", 1.0) {
            // max(0, x) + min(0, alpha (e^(x/alpha) - 1)), NaN propagating; `+ 0.0` makes
            // e^-0 - 1 the +0 that ONNX Runtime's exp(x) - 1 gives (Celu(-0) is +0).
            Ok(alpha) => map(inputs, outputs, move |x: f32| {
                let neg = alpha * (libm::expm1f(x / alpha) + 0.0);
                keep_unless_greater(x, 0.0) + keep_unless_less(neg, 0.0)
            }),
            Err(e) => Err(e),
        },
        "ThresholdedRelu" => match attrs.float("alpha", 1.0) {
            Ok(alpha) => map(
                inputs,
                outputs,
                move |x: f32| if x > alpha { x } else { 0.0 },
            ),
            Err(e) => Err(e),
        },
        "Gelu" => gelu(attrs, inputs, outputs),
        _ => return None,
    })
}

/// ln(1 + e^x), without overflow for large x.
pub(crate) fn softplus(x: f32) -> f32 {
    if x > 0.0 {
        x + libm::log1pf(fast_math::exp(-x))
    } else {
        libm::log1pf(fast_math::exp(x))
    }
}

/// Selu: `gamma x` for x > 0, `gamma alpha (e^x - 1)` otherwise.
fn selu(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let alpha = attrs.float("alpha", 1.673_263_2)?;
    let gamma = attrs.float("gamma", 1.050_701)?;
    map(inputs, outputs, move |x: f32| {
        if x > 0.0 {
            gamma * x
        } else {
            gamma * (alpha * fast_math::exp(x) - alpha)
        }
    })
}

/// Gelu (opset 20): `x/2 (1 + erf(x / sqrt 2))`, or with `approximate = "tanh"`
/// `x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`.
fn gelu(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    match attrs.str("approximate", "none")? {
        "none" => map(inputs, outputs, |x: f32| {
            0.5 * x * (1.0 + fast_math::erf(x * core::f32::consts::FRAC_1_SQRT_2))
        }),
        "tanh" => map(inputs, outputs, |x: f32| {
            let k = crate::fast_math::sqrt(2.0 / core::f32::consts::PI);
            0.5 * x * (1.0 + fast_math::tanh(k * (x + 0.044_715 * x * x * x)))
        }),
        other => bail!("approximate {other:?} is not supported (none and tanh are)"),
    }
}

/// ONNX Sign: -1, 0 or 1 (+0 for either zero, as ONNX Runtime gives), NaN stays NaN.
fn sign(x: f32) -> f32 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else if x == 0.0 {
        0.0
    } else {
        x
    }
}

/// `max(a, b)` as C++'s `std::max` (and Eigen's `cwiseMax`, which ONNX Runtime's activations
/// use): `a` unless `b` is greater, so a NaN `a` stays NaN and a NaN `b` is ignored.
fn keep_unless_greater(a: f32, b: f32) -> f32 {
    if a < b { b } else { a }
}

/// `min(a, b)` as C++'s `std::min`: `a` unless `b` is less.
fn keep_unless_less(a: f32, b: f32) -> f32 {
    if b < a { b } else { a }
}

/// A unary operator defined for f32, int64 and int32.
fn signed(
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    f: impl Fn(f32) -> f32,
    g: impl Fn(i64) -> i64,
    h: impl Fn(i32) -> i32,
) -> Result<(), KernelError> {
    match out_dtype(outputs, 0)? {
        DType::F32 => map(inputs, outputs, f),
        DType::I64 => map(inputs, outputs, g),
        DType::I32 => map(inputs, outputs, h),
        DType::Bool => bail!("bool tensors are not supported"),
        DType::I8 | DType::U8 => {
            bail!(
                "8-bit integer tensors are not supported (quantized networks run QLinear* or tflite.* kernels)"
            )
        }
    }
}

/// HardSigmoid: max(0, min(1, alpha x + beta)); HardSwish: x times that, alpha 1/6, beta 1/2.
fn hard_sigmoid(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    swish: bool,
) -> Result<(), KernelError> {
    let (alpha, beta) = if swish {
        (1.0 / 6.0, 0.5)
    } else {
        (attrs.float("alpha", 0.2)?, attrs.float("beta", 0.5)?)
    };
    if swish {
        map(inputs, outputs, |x: f32| {
            x * (alpha * x + beta).clamp(0.0, 1.0)
        })
    } else {
        map(inputs, outputs, |x: f32| (alpha * x + beta).clamp(0.0, 1.0))
    }
}

/// Clip: min and max as optional inputs 1 and 2 (opset 11+) or attributes (opset 6), by default
/// the lowest and highest finite float32 (as the ONNX spec says: an absent bound still clips an
/// infinity to +-3.4028235e38). NaN stays NaN; a NaN bound clips nothing.
fn clip(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let lo = match opt_scalar_f32(inputs, 1)? {
        Some(v) => v,
        None => attrs.float("min", f32::MIN)?,
    };
    let hi = match opt_scalar_f32(inputs, 2)? {
        Some(v) => v,
        None => attrs.float("max", f32::MAX)?,
    };
    // max then min: when min > max every element becomes max, as the spec says.
    map(inputs, outputs, move |x: f32| {
        let y = if x < lo { lo } else { x };
        if y > hi { hi } else { y }
    })
}

/// IsNaN, or IsInf (`detect_positive` / `detect_negative`, default both): float32 in, bool out.
pub(crate) fn classify(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    nan: bool,
) -> Result<(), KernelError> {
    let (xs, x) = super::tensor::typed::<f32>(inputs, 0)?;
    let pos = attrs.int("detect_positive", 1)? != 0;
    let neg = attrs.int("detect_negative", 1)? != 0;
    let (ys, y) = output::<u8>(outputs, 0)?;
    expect_shape(0, ys, xs)?;
    for (o, &v) in y.iter_mut().zip(x) {
        let hit = if nan {
            v.is_nan()
        } else {
            v.is_infinite() && if v > 0.0 { pos } else { neg }
        };
        *o = u8::from(hit);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::{Level, detected, limit};
    use crate::tensor::{Data, DataMut};
    use std::vec::Vec;

    /// Every unary operator gives the same bits at every SIMD level (the loop compiled for
    /// AVX2 or AVX-512 runs the same operations on more lanes), in place or not, over values
    /// around every switch point of the approximations, infinities and NaN included.
    #[test]
    fn every_level_gives_the_portable_bits() {
        let mut xs: Vec<f32> = (-4000..4000).map(|i| i as f32 * 0.0031).collect();
        xs.extend([
            0.0, -0.0, 0.875, -0.875, 4.0, 9.0, 89.0, -104.0, 1e-30, -1e-30,
        ]);
        xs.extend([
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MAX,
            f32::MIN,
        ]);
        let shape = [xs.len()];
        let approximate = [("approximate", crate::Attr::Str("tanh"))];
        for (op, attrs) in [
            ("Erf", Attrs::default()),
            ("Tanh", Attrs::default()),
            ("Exp", Attrs::default()),
            ("Sigmoid", Attrs::default()),
            ("Sqrt", Attrs::default()),
            ("Gelu", Attrs::default()),
            ("Gelu", Attrs::new(&approximate)),
        ] {
            let mut results: Vec<Vec<u32>> = Vec::new();
            for level in [Level::Portable, Level::Avx2, Level::Avx512] {
                if level > detected() {
                    continue;
                }
                limit(level);
                let mut out = xs.clone();
                let inputs = [Input::Value {
                    shape: &shape,
                    data: Data::F32(&xs),
                }];
                let mut outputs = [Output {
                    shape: &shape,
                    data: DataMut::F32(&mut out),
                }];
                run(op, &attrs, &inputs, &mut outputs).unwrap().unwrap();
                let mut in_place = xs.clone();
                let inputs = [Input::InPlace {
                    output: 0,
                    shape: &shape,
                }];
                let mut outputs = [Output {
                    shape: &shape,
                    data: DataMut::F32(&mut in_place),
                }];
                run(op, &attrs, &inputs, &mut outputs).unwrap().unwrap();
                // Any NaN is NaN (its payload is not a result).
                let bits_of = |v: &f32| if v.is_nan() { u32::MAX } else { v.to_bits() };
                let bits: Vec<u32> = out.iter().map(bits_of).collect();
                let bits_in_place: Vec<u32> = in_place.iter().map(bits_of).collect();
                assert_eq!(bits, bits_in_place, "{op} in place at {level:?}");
                results.push(bits);
            }
            limit(Level::Avx512);
            assert!(
                results.windows(2).all(|w| w[0] == w[1]),
                "{op} differs between levels"
            );
        }
    }
}
