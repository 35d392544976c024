//! Elementwise operators of several tensors, with numpy broadcasting: arithmetic (Add, Sub, Mul,
//! Div, Pow), variadic Min/Max/Sum/Mean, comparisons (Equal, Less, ...; bool out), logic
//! (And, Or, Xor) and Where.
//!
//! An input may run in place on the output only if it has as many elements as the output; its
//! broadcast strides are then the output's own, so input element `i` is output element `i`: each
//! element is read (from every input) before it is written, and in place or not the same
//! function sees the same values.

use core::cmp::Ordering;

use arrayvec::ArrayVec;

use super::attrs::Attrs;
use super::broadcast::{MAX_OPERANDS, broadcast_shapes, broadcast_strides, for_each};
use super::error::{KernelError, bail};
use super::tensor::{
    DType, Data, Dims, Elem, Input, Operand, Output, expect_shape, operand, out_dtype, output,
    present, push, try_collect, typed,
};

/// Reads element `offset` of `src`, or element `i` of `out` for an in-place operand.
#[inline]
fn read<T: Copy>(src: Operand<'_, T>, offset: usize, out: &[T], i: usize) -> T {
    match src {
        Operand::Slice(s) => s[offset],
        Operand::Out => out[i],
    }
}

/// Output = finish(f(...f(f(x0, x1), x2)..., xn)) elementwise over all inputs, broadcast.
/// `f` returning `None` (an integer division by zero) is an error.
pub(crate) fn fold<T: Elem>(
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    f: impl Fn(T, T) -> Option<T>,
    finish: impl Fn(T) -> T,
) -> Result<(), KernelError> {
    if inputs.is_empty() {
        bail!("at least one input is required");
    }
    if inputs.len() > MAX_OPERANDS {
        bail!(
            "{} inputs, more than the kernels' limit of {MAX_OPERANDS}",
            inputs.len()
        );
    }
    let mut shapes: ArrayVec<&[usize], MAX_OPERANDS> = ArrayVec::new();
    let mut srcs: ArrayVec<Operand<'_, T>, MAX_OPERANDS> = ArrayVec::new();
    for i in 0..inputs.len() {
        let (shape, src) = operand::<T>(inputs, i, 0)?;
        push(&mut shapes, shape)?;
        push(&mut srcs, src)?;
    }
    let (out_shape, out) = output::<T>(outputs, 0)?;
    expect_shape(0, out_shape, &broadcast_shapes(&shapes)?)?;
    if let ([a, b], [sa, sb]) = (&srcs[..], &shapes[..])
        && let (Some(pa), Some(pb)) = (period(sa, out_shape), period(sb, out_shape))
    {
        if fold2([*a, *b], [pa, pb], out, &f, &finish) {
            bail!("integer division by zero");
        }
        return Ok(());
    }
    if let ([a, b], [sa, sb]) = (&srcs[..], &shapes[..]) {
        let total = out.len();
        let whole = |s: &[usize]| period(s, out_shape) == Some(total);
        let rows = match (row_period(sa, out_shape), row_period(sb, out_shape)) {
            (_, Some(row)) if whole(sa) => Some((*a, row, *b, false)),
            (Some(row), _) if whole(sb) => Some((*b, row, *a, true)),
            _ => None,
        };
        if let Some((full, (p, inner), Operand::Slice(values), row_first)) = rows {
            if fold_rows(full, values, p, inner, row_first, out, &f, &finish) {
                bail!("integer division by zero");
            }
            return Ok(());
        }
    }
    let strides: ArrayVec<Dims, MAX_OPERANDS> =
        try_collect(shapes.iter().map(|s| broadcast_strides(s, out_shape)))?;
    let mut failed = false;
    for_each(out_shape, &strides, |i, offsets| {
        let mut acc = read(srcs[0], offsets[0], out, i);
        for k in 1..srcs.len() {
            match f(acc, read(srcs[k], offsets[k], out, i)) {
                Some(v) => acc = v,
                None => failed = true,
            }
        }
        out[i] = finish(acc);
    })?;
    if failed {
        bail!("integer division by zero");
    }
    Ok(())
}

/// The period of an operand of `shape` broadcast to `out`, when it is the output's trailing
/// dimensions (leading 1s aside): element `i` of the output reads element `i % period`. A
/// scalar has period 1, an operand of the output's shape the output's length.
fn period(shape: &[usize], out: &[usize]) -> Option<usize> {
    let first = shape.iter().position(|&d| d != 1).unwrap_or(shape.len());
    let dims = &shape[first..];
    (dims.len() <= out.len() && out[out.len() - dims.len()..] == *dims)
        .then(|| dims.iter().product())
}

/// When an operand of `shape` broadcast to `out` is constant along the output's last dimensions
/// (its own are 1 there) and has the output's dimensions before them (leading 1s aside):
/// `(period, inner)`, so that element `i` of the output reads element `(i / inner) % period`.
/// A per-channel `[C, 1, 1]` against `[N, C, H, W]` (a squeeze-and-excitation scale, a bias) has
/// period C and inner H W. `None` when no trailing dimension is broadcast (see [`period`]).
fn row_period(shape: &[usize], out: &[usize]) -> Option<(usize, usize)> {
    let pad = out.len().checked_sub(shape.len())?;
    let last = shape.iter().rposition(|&d| d != 1)?;
    let first = shape.iter().position(|&d| d != 1)?;
    let dims = &shape[first..=last];
    let inner: usize = out[pad + last + 1..].iter().product();
    (inner > 1 && out[pad + first..=pad + last] == *dims).then(|| (dims.iter().product(), inner))
}

/// [`fold`] of an operand of the output's shape (`full`) and one constant along runs of `inner`
/// elements (`values`, element `(i / inner) % period` for output `i`, see [`row_period`]): one
/// value per run, the run a vectorisable loop. `row_first`: the row operand is `f`'s first
/// argument. Returns whether `f` failed.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn fold_rows<T: Elem>(
    full: Operand<'_, T>,
    values: &[T],
    period: usize,
    inner: usize,
    row_first: bool,
    out: &mut [T],
    f: &impl Fn(T, T) -> Option<T>,
    finish: &impl Fn(T) -> T,
) -> bool {
    let mut failed = false;
    let mut step = |x: T, y: T| match f(x, y) {
        Some(v) => finish(v),
        None => {
            failed = true;
            finish(x)
        }
    };
    if period == 0 || values.len() < period {
        return !out.is_empty();
    }
    for (r, o) in out.chunks_exact_mut(inner).enumerate() {
        let v = values[r % period];
        match (full, row_first) {
            (Operand::Slice(a), false) => {
                for (o, &x) in o.iter_mut().zip(&a[r * inner..][..inner]) {
                    *o = step(x, v);
                }
            }
            (Operand::Slice(a), true) => {
                for (o, &x) in o.iter_mut().zip(&a[r * inner..][..inner]) {
                    *o = step(v, x);
                }
            }
            (Operand::Out, false) => o.iter_mut().for_each(|o| *o = step(*o, v)),
            (Operand::Out, true) => o.iter_mut().for_each(|o| *o = step(v, *o)),
        }
    }
    failed
}

/// [`fold`] of two operands that repeat with `periods` (see [`period`]): the output in blocks
/// over which each operand is a slice (or one value), so the loops vectorise; each element is
/// `finish(f(a, b))` as in the general loop. Returns whether `f` failed.
#[inline(always)]
fn fold2<T: Elem>(
    srcs: [Operand<'_, T>; 2],
    periods: [usize; 2],
    out: &mut [T],
    f: &impl Fn(T, T) -> Option<T>,
    finish: &impl Fn(T) -> T,
) -> bool {
    let total = out.len();
    let [pa, pb] = periods;
    if pa == 0 || pb == 0 || !total.is_multiple_of(pa) || !total.is_multiple_of(pb) {
        return total != 0;
    }
    let mut failed = false;
    let mut step = |x: T, y: T| match f(x, y) {
        Some(v) => finish(v),
        None => {
            failed = true;
            finish(x)
        }
    };
    let block = match (pa, pb) {
        (1, p) | (p, 1) => p,
        _ => pa.min(pb),
    };
    let mut s = 0;
    while s < total {
        let (ao, bo) = (s % pa, s % pb);
        let o = &mut out[s..s + block];
        match srcs {
            [Operand::Slice(a), Operand::Slice(b)] => match (pa, pb) {
                (1, _) => {
                    let x = a[0];
                    for (o, &y) in o.iter_mut().zip(&b[bo..bo + block]) {
                        *o = step(x, y);
                    }
                }
                (_, 1) => {
                    let y = b[0];
                    for (o, &x) in o.iter_mut().zip(&a[ao..ao + block]) {
                        *o = step(x, y);
                    }
                }
                _ => {
                    for ((o, &x), &y) in
                        o.iter_mut().zip(&a[ao..ao + block]).zip(&b[bo..bo + block])
                    {
                        *o = step(x, y);
                    }
                }
            },
            // In place: the operand is the output (its period the output's length).
            [Operand::Out, Operand::Slice(b)] => {
                for (j, o) in o.iter_mut().enumerate() {
                    let y = if pb == 1 { b[0] } else { b[bo + j] };
                    *o = step(*o, y);
                }
            }
            [Operand::Slice(a), Operand::Out] => {
                for (j, o) in o.iter_mut().enumerate() {
                    let x = if pa == 1 { a[0] } else { a[ao + j] };
                    *o = step(x, *o);
                }
            }
            [Operand::Out, Operand::Out] => {
                for o in o.iter_mut() {
                    *o = step(*o, *o);
                }
            }
        }
        s += block;
    }
    failed
}

/// A binary or variadic arithmetic operator over f32, int64 and int32 (each function inlined
/// into its loop).
fn arithmetic(
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    f: impl Fn(f32, f32) -> f32,
    g: impl Fn(i64, i64) -> Option<i64>,
    h: impl Fn(i32, i32) -> Option<i32>,
) -> Result<(), KernelError> {
    match out_dtype(outputs, 0)? {
        DType::F32 => fold(inputs, outputs, |a, b| Some(f(a, b)), |x| x),
        DType::I64 => fold(inputs, outputs, g, |x| x),
        DType::I32 => fold(inputs, outputs, h, |x| x),
        DType::Bool => bail!("arithmetic on bool tensors is not supported"),
        DType::I8 | DType::U8 => bail!(
            "ONNX arithmetic on 8-bit integer tensors is not supported (quantized networks run QLinear* or tflite.* kernels)"
        ),
    }
}

/// The larger, NaN if either is NaN.
fn max<T: PartialOrd>(a: T, b: T) -> T {
    #[allow(clippy::eq_op)] // b != b: NaN
    if b > a || b != b { b } else { a }
}

/// The smaller, NaN if either is NaN.
fn min<T: PartialOrd>(a: T, b: T) -> T {
    #[allow(clippy::eq_op)] // b != b: NaN
    if b < a || b != b { b } else { a }
}

/// Runs the operator `op` of this family, if it is one.
pub(crate) fn run(
    op: &str,
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Option<Result<(), KernelError>> {
    Some(match op {
        "Add" | "Sum" => arithmetic(
            inputs,
            outputs,
            |a, b| a + b,
            |a, b| Some(a.wrapping_add(b)),
            |a, b| Some(a.wrapping_add(b)),
        ),
        "Sub" => arithmetic(
            inputs,
            outputs,
            |a, b| a - b,
            |a, b| Some(a.wrapping_sub(b)),
            |a, b| Some(a.wrapping_sub(b)),
        ),
        "Mul" => arithmetic(
            inputs,
            outputs,
            |a, b| a * b,
            |a, b| Some(a.wrapping_mul(b)),
            |a, b| Some(a.wrapping_mul(b)),
        ),
        "Div" => arithmetic(
            inputs,
            outputs,
            |a, b| a / b,
            i64::checked_div,
            i32::checked_div,
        ),
        "Max" => arithmetic(
            inputs,
            outputs,
            max,
            |a, b| Some(max(a, b)),
            |a, b| Some(max(a, b)),
        ),
        "Min" => arithmetic(
            inputs,
            outputs,
            min,
            |a, b| Some(min(a, b)),
            |a, b| Some(min(a, b)),
        ),
        "Mean" => mean(inputs, outputs),
        "PRelu" => fold::<f32>(
            inputs,
            outputs,
            |x, slope| Some(if x < 0.0 { slope * x } else { x }),
            |x| x,
        ),
        "Pow" => pow(inputs, outputs),
        "And" => fold::<u8>(inputs, outputs, |a, b| Some(a & b), |x| x),
        "Or" => fold::<u8>(inputs, outputs, |a, b| Some(a | b), |x| x),
        "Xor" => fold::<u8>(inputs, outputs, |a, b| Some(a ^ b), |x| x),
        "Equal" => compare(inputs, outputs, |o| o == Ordering::Equal),
        "Less" => compare(inputs, outputs, |o| o == Ordering::Less),
        "LessOrEqual" => compare(inputs, outputs, |o| o != Ordering::Greater),
        "Greater" => compare(inputs, outputs, |o| o == Ordering::Greater),
        "GreaterOrEqual" => compare(inputs, outputs, |o| o != Ordering::Less),
        "Where" => where_(inputs, outputs),
        "Mod" => modulo(attrs, inputs, outputs),
        _ => return None,
    })
}

/// Mean: the sum (in input order) divided by the number of inputs; f32 only.
fn mean(inputs: &[Input<'_>], outputs: &mut [Output<'_>]) -> Result<(), KernelError> {
    // a handful of inputs
    let n = inputs.len() as f32;
    fold::<f32>(inputs, outputs, |a, b| Some(a + b), |x| x / n)
}

/// The exponent of Pow: f32 (maybe in place), or integers converted to f32 per element.
#[derive(Clone, Copy)]
enum Exponent<'a> {
    F32(Operand<'a, f32>),
    I64(&'a [i64]),
    I32(&'a [i32]),
}

/// Pow: f32 base, exponent f32 or integer (converted to f32).
fn pow(inputs: &[Input<'_>], outputs: &mut [Output<'_>]) -> Result<(), KernelError> {
    if out_dtype(outputs, 0)? != DType::F32 {
        bail!("only float32 bases are supported");
    }
    let (se, exponent) = match inputs.get(1) {
        Some(Input::Value {
            shape,
            data: Data::I64(d),
        }) => (*shape, Exponent::I64(d)),
        Some(Input::Value {
            shape,
            data: Data::I32(d),
        }) => (*shape, Exponent::I32(d)),
        Some(_) => {
            let (shape, src) = operand::<f32>(inputs, 1, 0)?;
            (shape, Exponent::F32(src))
        }
        None => bail!("input 1 is required"),
    };
    if inputs.len() > 2 {
        bail!("Pow takes two inputs, found {}", inputs.len());
    }
    let (sb, base) = operand::<f32>(inputs, 0, 0)?;
    let (out_shape, out) = output::<f32>(outputs, 0)?;
    expect_shape(0, out_shape, &broadcast_shapes(&[sb, se])?)?;
    // small integer exponents
    let scalar = match exponent {
        Exponent::F32(Operand::Slice([b])) => Some(*b),
        Exponent::I64([b]) => Some(*b as f32),
        Exponent::I32([b]) => Some(*b as f32),
        _ => None,
    };
    if let Some(b) = scalar
        && sb == out_shape
    {
        power_of_scalar(base, out, b);
        return Ok(());
    }
    let strides = [
        broadcast_strides(sb, out_shape)?,
        broadcast_strides(se, out_shape)?,
    ];
    for_each(out_shape, &strides, |i, o| {
        let a = read(base, o[0], out, i);
        // small integer exponents
        let b = match exponent {
            Exponent::F32(src) => read(src, o[1], out, i),
            Exponent::I64(d) => d[o[1]] as f32,
            Exponent::I32(d) => d[o[1]] as f32,
        };
        out[i] = libm::powf(a, b);
    })
}

/// Pow of a whole tensor by one exponent `b`. The exponents networks use most (1, 2, 3 and 0.5:
/// squares in a norm, a cube in tanh's GELU, a square root) are computed as products and a
/// square root, as ONNX Runtime does, which vectorise; any other exponent calls `powf` per
/// element. `a * a` and `sqrt` are correctly rounded (`powf` is within an ulp), `a * a * a` is
/// within 1.5 ulps; the special values are powf's: `(-0)^0.5 = +0` and `(-inf)^0.5 = +inf`.
fn power_of_scalar(base: Operand<'_, f32>, out: &mut [f32], b: f32) {
    fn apply(base: Operand<'_, f32>, out: &mut [f32], f: impl Fn(f32) -> f32) {
        match base {
            Operand::Slice(s) => {
                for (o, &a) in out.iter_mut().zip(s) {
                    *o = f(a);
                }
            }
            Operand::Out => {
                for o in out.iter_mut() {
                    *o = f(*o);
                }
            }
        }
    }
    #[allow(clippy::float_cmp)] // exact exponents select exact formulas
    if b == 1.0 {
        apply(base, out, |a| a);
    } else if b == 2.0 {
        apply(base, out, |a| a * a);
    } else if b == 3.0 {
        apply(base, out, |a| a * a * a);
    } else if b == 0.5 {
        apply(base, out, |a| {
            if a == f32::NEG_INFINITY {
                f32::INFINITY
            } else {
                crate::fast_math::sqrt(a) + 0.0
            }
        });
    } else {
        apply(base, out, |a| libm::powf(a, b));
    }
}

/// A comparison of two inputs of the same type; bool output.
fn compare(
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    f: fn(Ordering) -> bool,
) -> Result<(), KernelError> {
    fn typed_compare<T: Elem>(
        inputs: &[Input<'_>],
        outputs: &mut [Output<'_>],
        f: fn(Ordering) -> bool,
    ) -> Result<(), KernelError> {
        let (sa, a) = typed::<T>(inputs, 0)?;
        let (sb, b) = typed::<T>(inputs, 1)?;
        let (out_shape, out) = output::<u8>(outputs, 0)?;
        expect_shape(0, out_shape, &broadcast_shapes(&[sa, sb])?)?;
        let strides = [
            broadcast_strides(sa, out_shape)?,
            broadcast_strides(sb, out_shape)?,
        ];
        for_each(out_shape, &strides, |i, o| {
            // Unordered (NaN) compares false for every operator, Equal included.
            out[i] = u8::from(a[o[0]].partial_cmp(&b[o[1]]).is_some_and(f));
        })
    }
    let dtype = match present(inputs, 0) {
        Some(Input::Value { data, .. }) => data.dtype(),
        _ => bail!("input 0 must be a separate tensor"),
    };
    super::tensor::dispatch!(dtype, typed_compare(inputs, outputs, f))
}

/// Where(condition, X, Y): X where the condition holds, else Y, all three broadcast.
fn where_(inputs: &[Input<'_>], outputs: &mut [Output<'_>]) -> Result<(), KernelError> {
    fn typed_where<T: Elem>(
        inputs: &[Input<'_>],
        outputs: &mut [Output<'_>],
    ) -> Result<(), KernelError> {
        let (sc, c) = typed::<u8>(inputs, 0)?;
        let (sx, x) = operand::<T>(inputs, 1, 0)?;
        let (sy, y) = operand::<T>(inputs, 2, 0)?;
        let (out_shape, out) = output::<T>(outputs, 0)?;
        expect_shape(0, out_shape, &broadcast_shapes(&[sc, sx, sy])?)?;
        let strides = [
            broadcast_strides(sc, out_shape)?,
            broadcast_strides(sx, out_shape)?,
            broadcast_strides(sy, out_shape)?,
        ];
        for_each(out_shape, &strides, |i, o| {
            let vx = read(x, o[1], out, i);
            let vy = read(y, o[2], out, i);
            out[i] = if c[o[0]] != 0 { vx } else { vy };
        })
    }
    super::tensor::dispatch!(out_dtype(outputs, 0)?, typed_where(inputs, outputs))
}

/// Mod: `fmod = 1` the remainder of truncated division (sign of the dividend; float32, int64,
/// int32), `fmod = 0` the remainder of floored division (sign of the divisor; integers only).
fn modulo(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let fmod = attrs.int("fmod", 0)? != 0;
    match (out_dtype(outputs, 0)?, fmod) {
        (DType::F32, true) => fold::<f32>(inputs, outputs, |a, b| Some(a % b), |x| x),
        (DType::F32, false) => bail!("Mod on float32 needs fmod = 1"),
        (DType::I64, true) => fold::<i64>(inputs, outputs, i64::checked_rem, |x| x),
        (DType::I32, true) => fold::<i32>(inputs, outputs, i32::checked_rem, |x| x),
        (DType::I64, false) => fold::<i64>(inputs, outputs, floored_rem, |x| x),
        (DType::I32, false) => fold::<i32>(
            inputs,
            outputs,
            |a, b| floored_rem(i64::from(a), i64::from(b)).and_then(|r| i32::try_from(r).ok()),
            |x| x,
        ),
        (DType::Bool, _) => bail!("Mod on bool tensors is not supported"),
        (DType::I8 | DType::U8, _) => bail!("Mod on 8-bit integer tensors is not supported"),
    }
}

/// The remainder with the sign of the divisor, `None` for a zero divisor.
fn floored_rem(a: i64, b: i64) -> Option<i64> {
    let r = a.checked_rem(b)?;
    Some(if r != 0 && (r < 0) != (b < 0) {
        r + b
    } else {
        r
    })
}
