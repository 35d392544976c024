//! ONNX's integer operators in their QOperator form, on int8 and uint8, as ONNX Runtime's CPU
//! kernels compute them:
//!
//! - `MatMulInteger`, `ConvInteger`: `sum (x - x_zero_point) (w - w_zero_point)` in int32, the
//!   output int32 (exact; wrapping past the int32 range, as the C++ int adds do).
//! - `QLinearMatMul`, `QLinearConv`: the same int32 sum (plus `QLinearConv`'s int32 bias), then
//!   requantised in float32 as MLAS's `MlasRequantizeOutput` does: `acc as f32 * scale` with
//!   `scale = x_scale * w_scale[c] / y_scale` (float32, in that order), clamped to the output's
//!   range less the zero point, rounded half to even, plus the zero point.
//! - `QLinearAdd`, `QLinearMul` (domain `com.microsoft`): MLAS's float32 formulas as its x86
//!   AVX2 kernels evaluate them: `Add` is `fma(a, ra, fma(b, rb, fixed))` with `ra = a_scale /
//!   c_scale`, `rb = b_scale / c_scale`, `fixed = zc - (ra za + rb zb)` (the operands swapped
//!   when only A is one value per span of the broadcast's innermost dimension); `Mul` is
//!   `(a - za)(b - zb) as f32 * (a_scale * b_scale / c_scale) + zc`; each rounded half to even
//!   and saturated. ONNX Runtime's other builds differ in the last bit before rounding (its SSE2
//!   kernel adds without fusing, its Arm kernel uses fixed-point multipliers), so there its
//!   results can be 1 off ours where a value falls next to a tie.
//! - `QGemm`, `QLinearGlobalAveragePool` (domain `com.microsoft`): the int32 sums (plus QGemm's
//!   int32 bias), requantised as above with `alpha * a_scale * b_scale[j] / y_scale` (QGemm;
//!   without `y_scale` the float32 `acc * alpha * a_scale * b_scale[j]`) and `x_scale / (y_scale
//!   * pixels)` of the sum of `x - x_zero_point` (the pool).
//! - `MaxPool` of int8 or uint8: the window's largest element (padding takes no part).
//! - `DynamicQuantizeLinear`: uint8 with the scale `(max(x, 0) - min(x, 0)) / 255` and the zero
//!   point `round(-min / scale)` saturated, ONNX's definition, as ONNX Runtime computes it.
//!
//! Weight zero points and scales may be per output channel (`QLinearConv`, `ConvInteger`) or per
//! column (`QLinearMatMul`, `MatMulInteger` with a 2-D `B`). The sums are exact, so the results
//! equal ONNX Runtime's wherever ONNX Runtime computes the exact sum: on x86 without VNNI, its
//! uint8 x int8 kernels (`vpmaddubsw`) saturate pairs of products at int16 unless the model was
//! quantised with `reduce_range`; the recorded cases were made on a CPU with VNNI, where they
//! do not.

use crate::attrs::Attrs;
use crate::broadcast::{broadcast_shapes, broadcast_strides, for_each};
use crate::error::{KernelError, bail};
use crate::spatial::{ConvGeometry, pool_window};
use crate::tensor::{
    Data, DataMut, Dims, Input, Output, collect, expect_shape, numel, opt_value, output, typed,
    value,
};

/// An element of an 8-bit operand.
trait Byte: Copy {
    fn wide(self) -> i32;
}

impl Byte for i8 {
    #[inline]
    fn wide(self) -> i32 {
        i32::from(self)
    }
}

impl Byte for u8 {
    #[inline]
    fn wide(self) -> i32 {
        i32::from(self)
    }
}

/// An int8 or uint8 operand.
#[derive(Clone, Copy)]
enum Q8<'a> {
    I8(&'a [i8]),
    U8(&'a [u8]),
}

impl Q8<'_> {
    fn len(&self) -> usize {
        match self {
            Q8::I8(d) => d.len(),
            Q8::U8(d) => d.len(),
        }
    }

    #[inline]
    fn at(&self, i: usize) -> i32 {
        match self {
            Q8::I8(d) => i32::from(d[i]),
            Q8::U8(d) => i32::from(d[i]),
        }
    }

    fn is_signed(&self) -> bool {
        matches!(self, Q8::I8(_))
    }
}

/// Input `i`'s elements, int8 or uint8.
fn q8(data: Data<'_>, i: usize) -> Result<Q8<'_>, KernelError> {
    match data {
        Data::I8(d) => Ok(Q8::I8(d)),
        Data::U8(d) => Ok(Q8::U8(d)),
        other => bail!(
            "input {i} is {}, expected int8 or uint8",
            other.dtype().name()
        ),
    }
}

/// Input `i`, int8 or uint8.
fn q8_input<'a>(inputs: &[Input<'a>], i: usize) -> Result<(&'a [usize], Q8<'a>), KernelError> {
    let (shape, data) = value(inputs, i)?;
    Ok((shape, q8(data, i)?))
}

/// A zero point: absent (0), one value, or one per channel.
#[derive(Clone, Copy)]
struct Zp<'a>(Option<Q8<'a>>);

impl Zp<'_> {
    #[inline]
    fn at(&self, c: usize) -> i32 {
        match self.0 {
            None => 0,
            Some(z) if z.len() == 1 => z.at(0),
            Some(z) => z.at(c),
        }
    }
}

/// The zero point at input `i`: absent, one value, or `channels` values; of the signedness of
/// `like` when given.
fn zero_point<'a>(
    inputs: &[Input<'a>],
    i: usize,
    channels: usize,
    like: Option<Q8<'_>>,
) -> Result<Zp<'a>, KernelError> {
    let Some((_, data)) = opt_value(inputs, i)? else {
        return Ok(Zp(None));
    };
    let z = q8(data, i)?;
    if z.len() != 1 && z.len() != channels {
        bail!("input {i}: {} zero points for {channels} channels", z.len());
    }
    if let Some(l) = like
        && l.is_signed() != z.is_signed()
    {
        bail!("input {i}: the zero point's type differs from its tensor's");
    }
    Ok(Zp(Some(z)))
}

/// The float32 scales at input `i`: one, or `channels`.
fn scales<'a>(inputs: &[Input<'a>], i: usize, channels: usize) -> Result<&'a [f32], KernelError> {
    let (_, s) = typed::<f32>(inputs, i)?;
    if s.len() != 1 && s.len() != channels {
        bail!("input {i}: {} scales for {channels} channels", s.len());
    }
    Ok(s)
}

#[inline]
fn scale_at(s: &[f32], c: usize) -> f32 {
    if s.len() == 1 { s[0] } else { s[c] }
}

/// An int8 or uint8 output.
enum QOut<'o> {
    I8(&'o mut [i8]),
    U8(&'o mut [u8]),
}

impl QOut<'_> {
    fn len(&self) -> usize {
        match self {
            QOut::I8(d) => d.len(),
            QOut::U8(d) => d.len(),
        }
    }

    /// The range of the element type.
    fn range(&self) -> (i32, i32) {
        match self {
            QOut::I8(_) => (-128, 127),
            QOut::U8(_) => (0, 255),
        }
    }

    fn is_signed(&self) -> bool {
        matches!(self, QOut::I8(_))
    }

    /// Writes `v`, already in range.
    #[inline]
    // in range
    fn set(&mut self, i: usize, v: i32) {
        match self {
            QOut::I8(d) => d[i] = v as i8,
            QOut::U8(d) => d[i] = v as u8,
        }
    }
}

fn q_out<'o>(
    outputs: &'o mut [Output<'_>],
    o: usize,
) -> Result<(&'o [usize], QOut<'o>), KernelError> {
    let Some(out) = outputs.get_mut(o) else {
        bail!("output {o} is required");
    };
    let shape = out.shape;
    match &mut out.data {
        DataMut::I8(d) => Ok((shape, QOut::I8(d))),
        DataMut::U8(d) => Ok((shape, QOut::U8(d))),
        other => bail!(
            "output {o} is {}, expected int8 or uint8",
            other.dtype().name()
        ),
    }
}

/// The output zero point at input `i` (one value), of the output's type.
fn out_zero_point(inputs: &[Input<'_>], i: usize, out: &QOut<'_>) -> Result<i32, KernelError> {
    match opt_value(inputs, i)? {
        None => Ok(0),
        Some((_, data)) => {
            let z = q8(data, i)?;
            if z.len() != 1 {
                bail!("input {i}: the output zero point must be one value");
            }
            if z.is_signed() != out.is_signed() {
                bail!("input {i}: the output zero point's type differs from the output's");
            }
            Ok(z.at(0))
        }
    }
}

/// MLAS's `MlasRequantizeOutput` for one value: `acc * scale` in float32, clamped to
/// `[lo - zp, hi - zp]`, rounded half to even, plus `zp`.
#[inline]
fn requantize(acc: i32, scale: f32, zp: i32, lo: i32, hi: i32) -> i32 {
    let v = (acc as f32 * scale).clamp((lo - zp) as f32, (hi - zp) as f32);
    if v.is_nan() {
        return zp.clamp(lo, hi);
    }
    libm::rintf(v) as i32 + zp
}

/// Rounds half to even and saturates a float32 value to `[lo, hi]` (`cvtps2dq`, then packing
/// with saturation).
#[inline]
fn saturate(v: f32, lo: i32, hi: i32) -> i32 {
    if v.is_nan() {
        // cvtps2dq gives i32::MIN, which saturates to the low end.
        return lo;
    }
    (libm::rintf(v.clamp(lo as f32 - 1.0, hi as f32 + 1.0)) as i32).clamp(lo, hi)
}

// ---------------------------------------------------------------------------------------------
// MatMul.

/// The geometry of a batched `[.., M, K] x [.., K, N]` product.
struct Product {
    m: usize,
    k: usize,
    n: usize,
    /// The broadcast batch shape, and per batch element the offsets of A and B.
    batch: Dims,
    a_strides: Dims,
    b_strides: Dims,
}

fn product(a: &[usize], b: &[usize], y: &[usize]) -> Result<Product, KernelError> {
    if a.is_empty() || b.is_empty() {
        bail!("MatMul of scalars is not defined");
    }
    let a2: Dims = if a.len() == 1 {
        collect([1, a[0]])?
    } else {
        collect(a.iter().copied())?
    };
    let b2: Dims = if b.len() == 1 {
        collect([b[0], 1])?
    } else {
        collect(b.iter().copied())?
    };
    let (m, k) = (a2[a2.len() - 2], a2[a2.len() - 1]);
    let (kb, n) = (b2[b2.len() - 2], b2[b2.len() - 1]);
    if k != kb {
        bail!("A {a:?} and B {b:?} do not multiply");
    }
    let (ab, bb) = (&a2[..a2.len() - 2], &b2[..b2.len() - 2]);
    let batch = broadcast_shapes(&[ab, bb])?;
    // Batch strides in units of whole matrices.
    let a_strides = broadcast_strides(ab, &batch)?;
    let b_strides = broadcast_strides(bb, &batch)?;
    let mut expected: Dims = batch.clone();
    if a.len() > 1 {
        crate::tensor::push(&mut expected, m)?;
    }
    if b.len() > 1 {
        crate::tensor::push(&mut expected, n)?;
    }
    expect_shape(0, y, &expected)?;
    Ok(Product {
        m,
        k,
        n,
        batch,
        a_strides,
        b_strides,
    })
}

impl Product {
    /// Calls `f(y index, row, column, sum)` for every output element, the sum being
    /// `sum_k (a - za(row)) (b - zb(column))` in wrapping int32.
    fn run<A: Byte, B: Byte>(
        &self,
        a: &[A],
        b: &[B],
        za: &dyn Fn(usize) -> i32,
        zb: &dyn Fn(usize) -> i32,
        f: &mut dyn FnMut(usize, usize, i32),
    ) -> Result<(), KernelError> {
        let (m, k, n) = (self.m, self.k, self.n);
        for_each(
            &self.batch,
            &[self.a_strides.clone(), self.b_strides.clone()],
            |bi, off| {
                let a = &a[off[0] * m * k..(off[0] + 1) * m * k];
                let b = &b[off[1] * k * n..(off[1] + 1) * k * n];
                for i in 0..m {
                    let zai = za(i);
                    let row = &a[i * k..(i + 1) * k];
                    for j in 0..n {
                        let zbj = zb(j);
                        let mut acc = 0i32;
                        for (p, &x) in row.iter().enumerate() {
                            acc = acc.wrapping_add((x.wide() - zai) * (b[p * n + j].wide() - zbj));
                        }
                        f((bi * m + i) * n + j, j, acc);
                    }
                }
            },
        )
    }
}

/// Runs `$body` with `$a` and `$b` the typed slices of two `Q8`s.
macro_rules! with_q8 {
    ($x:expr, $y:expr, |$a:ident, $b:ident| $body:expr) => {
        match ($x, $y) {
            (Q8::I8($a), Q8::I8($b)) => $body,
            (Q8::I8($a), Q8::U8($b)) => $body,
            (Q8::U8($a), Q8::I8($b)) => $body,
            (Q8::U8($a), Q8::U8($b)) => $body,
        }
    };
}

/// Per-row zero points of A must be one value for a batched or broadcast A (ONNX allows `[M]`).
fn a_zero_point<'a>(
    inputs: &[Input<'a>],
    i: usize,
    m: usize,
    a: Q8<'_>,
) -> Result<Zp<'a>, KernelError> {
    zero_point(inputs, i, m, Some(a))
}

/// `MatMulInteger(A, B, a_zero_point, b_zero_point)`: int32.
pub(crate) fn matmul_integer(
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (as_, a) = q8_input(inputs, 0)?;
    let (bs, b) = q8_input(inputs, 1)?;
    let (ys, y) = output::<i32>(outputs, 0)?;
    let p = product(as_, bs, ys)?;
    let za = a_zero_point(inputs, 2, p.m, a)?;
    let zb = zero_point(inputs, 3, p.n, Some(b))?;
    let (za, zb) = (|i| za.at(i), |j| zb.at(j));
    with_q8!(a, b, |a, b| p
        .run(a, b, &za, &zb, &mut |o, _, acc| y[o] = acc))
}

/// `QLinearMatMul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point)`.
pub(crate) fn qlinear_matmul(
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (as_, a) = q8_input(inputs, 0)?;
    let (bs, b) = q8_input(inputs, 3)?;
    let (ys, mut y) = q_out(outputs, 0)?;
    let p = product(as_, bs, ys)?;
    let a_scale = scales(inputs, 1, 1)?[0];
    let za = zero_point(inputs, 2, 1, Some(a))?;
    let b_scale = scales(inputs, 4, p.n)?;
    let zb = zero_point(inputs, 5, p.n, Some(b))?;
    let y_scale = scales(inputs, 6, 1)?[0];
    let zy = out_zero_point(inputs, 7, &y)?;
    let (lo, hi) = y.range();
    let (za, zb) = (|i| za.at(i), |j| zb.at(j));
    let scale = |j: usize| a_scale * scale_at(b_scale, j) / y_scale;
    with_q8!(a, b, |a, b| p.run(a, b, &za, &zb, &mut |o, j, acc| {
        y.set(o, requantize(acc, scale(j), zy, lo, hi));
    }))
}

// ---------------------------------------------------------------------------------------------
// Conv.

impl ConvGeometry {
    /// Calls `f(y index, output channel, sum)` for every output element: the sum over the
    /// window of `(x - zx) (w - zw(channel))` in wrapping int32, padding contributing nothing
    /// (a padded `x` equals its zero point, as ONNX Runtime pads).
    fn run<X: Byte, W: Byte>(
        &self,
        x: &[X],
        w: &[W],
        zx: i32,
        zw: &dyn Fn(usize) -> i32,
        f: &mut dyn FnMut(usize, usize, i32),
    ) {
        let win = &self.win;
        let (od, oh, ow) = (win.output[0], win.output[1], win.output[2]);
        let cg = self.c / self.group;
        let mg = self.m / self.group;
        let plane: usize = win.input.iter().product();
        let taps = self.taps();
        let mut o = 0;
        for b in 0..self.n {
            for oc in 0..self.m {
                let g = oc / mg;
                let zwc = zw(oc);
                let wk = &w[oc * cg * taps..(oc + 1) * cg * taps];
                for z in 0..od {
                    for yy in 0..oh {
                        for xx in 0..ow {
                            let mut acc = 0i32;
                            for ci in 0..cg {
                                let xc = &x[(b * self.c + g * cg + ci) * plane..][..plane];
                                let wc = &wk[ci * taps..(ci + 1) * taps];
                                win.for_each_tap([z, yy, xx], |source, tap| {
                                    let xv = xc[source].wide() - zx;
                                    let wv = wc[tap].wide() - zwc;
                                    acc = acc.wrapping_add(xv * wv);
                                });
                            }
                            f(o, oc, acc);
                            o += 1;
                        }
                    }
                }
            }
        }
    }
}

/// Checks the input and weight sizes against the geometry (the views were checked against
/// their shapes).
fn conv_sizes(g: &ConvGeometry, x: Q8<'_>, w: Q8<'_>, y: usize) -> Result<(), KernelError> {
    let win = &g.win;
    let plane: usize = win.input.iter().product();
    let out: usize = win.output.iter().product();
    if x.len() != g.n * g.c * plane
        || w.len() != g.m * (g.c / g.group) * g.taps()
        || y != g.n * g.m * out
    {
        bail!("the input, weight and output sizes do not fit the convolution");
    }
    Ok(())
}

/// `ConvInteger(x, w, x_zero_point, w_zero_point)`: int32.
pub(crate) fn conv_integer(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (xs, x) = q8_input(inputs, 0)?;
    let (ws, w) = q8_input(inputs, 1)?;
    let (ys, y) = output::<i32>(outputs, 0)?;
    let g = ConvGeometry::new(attrs, xs, ws, ys)?;
    conv_sizes(&g, x, w, y.len())?;
    let zx = zero_point(inputs, 2, 1, Some(x))?.at(0);
    let zw = zero_point(inputs, 3, g.m, Some(w))?;
    let zw = |c| zw.at(c);
    with_q8!(x, w, |x, w| g
        .run(x, w, zx, &zw, &mut |o, _, acc| y[o] = acc));
    Ok(())
}

/// `QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B)`.
pub(crate) fn qlinear_conv(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (xs, x) = q8_input(inputs, 0)?;
    let (ws, w) = q8_input(inputs, 3)?;
    let (ys, mut y) = q_out(outputs, 0)?;
    let g = ConvGeometry::new(attrs, xs, ws, ys)?;
    conv_sizes(&g, x, w, y.len())?;
    let x_scale = scales(inputs, 1, 1)?[0];
    let zx = zero_point(inputs, 2, 1, Some(x))?.at(0);
    let w_scale = scales(inputs, 4, g.m)?;
    let zw = zero_point(inputs, 5, g.m, Some(w))?;
    let y_scale = scales(inputs, 6, 1)?[0];
    let zy = out_zero_point(inputs, 7, &y)?;
    let bias = match opt_value(inputs, 8)? {
        None => None,
        Some((_, Data::I32(b))) if b.len() == g.m => Some(b),
        Some(_) => bail!("the bias must be int32 [{}]", g.m),
    };
    let (lo, hi) = y.range();
    let zw = |c| zw.at(c);
    with_q8!(x, w, |x, w| g.run(x, w, zx, &zw, &mut |o, c, acc| {
        let acc = acc.wrapping_add(bias.map_or(0, |b| b[c]));
        let scale = x_scale * scale_at(w_scale, c) / y_scale;
        y.set(o, requantize(acc, scale, zy, lo, hi));
    }));
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Elementwise (com.microsoft).

/// `QLinearAdd` and `QLinearMul`: `(A, A_scale, A_zero_point, B, B_scale, B_zero_point,
/// C_scale, C_zero_point)`.
pub(crate) fn qlinear_binary(
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    mul: bool,
) -> Result<(), KernelError> {
    let (as_, a) = q8_input(inputs, 0)?;
    let (bs, b) = q8_input(inputs, 3)?;
    let (ys, mut y) = q_out(outputs, 0)?;
    if a.is_signed() != b.is_signed() || a.is_signed() != y.is_signed() {
        bail!("A, B and C must have one element type");
    }
    let out_shape = broadcast_shapes(&[as_, bs])?;
    expect_shape(0, ys, &out_shape)?;
    if y.len() != numel(&out_shape)? {
        bail!("the output does not have the broadcast's size");
    }
    let sa = scales(inputs, 1, 1)?[0];
    let za = zero_point(inputs, 2, 1, Some(a))?.at(0);
    let sb = scales(inputs, 4, 1)?[0];
    let zb = zero_point(inputs, 5, 1, Some(b))?.at(0);
    let sc = scales(inputs, 6, 1)?[0];
    let zc = out_zero_point(inputs, 7, &y)?;
    let (lo, hi) = y.range();
    let strides = [
        broadcast_strides(as_, &out_shape)?,
        broadcast_strides(bs, &out_shape)?,
    ];
    // 8-bit values and zero points are exact in f32
    let f = |v: i32| v as f32;
    if mul {
        let ratio = sa * sb / sc;
        for_each(&out_shape, &strides, |i, off| {
            let p = (a.at(off[0]) - za) * (b.at(off[1]) - zb);
            y.set(i, saturate(f(p) * ratio + f(zc), lo, hi));
        })
    } else {
        // MLAS's AVX2 kernel (the x86 reference) computes `fma(a, a_ratio, fma(b, b_ratio,
        // fixed))`, B being the operand that is one value per span of the broadcast's innermost
        // dimension when there is one; when only A is, it swaps the operands.
        let last = out_shape.iter().rposition(|&d| d != 1);
        let scalar_of = |s: &Dims| last.is_none_or(|d| s[d] == 0);
        let swap = scalar_of(&strides[0]) && !scalar_of(&strides[1]);
        let (rac, rbc) = (sa / sc, sb / sc);
        let fixed = f(zc) - (rac * f(za) + rbc * f(zb));
        for_each(&out_shape, &strides, |i, off| {
            let (va, vb) = (f(a.at(off[0])), f(b.at(off[1])));
            let v = if swap {
                libm::fmaf(vb, rbc, libm::fmaf(va, rac, fixed))
            } else {
                libm::fmaf(va, rac, libm::fmaf(vb, rbc, fixed))
            };
            y.set(i, saturate(v, lo, hi));
        })
    }
}

// ---------------------------------------------------------------------------------------------
// DynamicQuantizeLinear.

/// `DynamicQuantizeLinear(x) -> (y uint8, y_scale, y_zero_point)`.
pub(crate) fn dynamic_quantize(
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (_, x) = typed::<f32>(inputs, 0)?;
    let (mut lo, mut hi) = (0f32, 0f32);
    for &v in x {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    let scale = (hi - lo) / 255.0;
    let zp = if scale == 0.0 {
        0
    } else {
        (libm::rintf((0.0 - lo / scale).clamp(0.0, 255.0)) as i32).clamp(0, 255)
    };
    {
        let (_, y) = output::<u8>(outputs, 0)?;
        if y.len() != x.len() {
            bail!("the output does not have the input's size");
        }
        let (zl, zh) = (-(zp as f32), 255.0 - zp as f32);
        for (o, &v) in y.iter_mut().zip(x) {
            let q = if scale == 0.0 { 0.0 } else { v / scale };
            let q = if q.is_nan() { zl } else { q.clamp(zl, zh) };
            let r = (libm::rintf(q) as i32 + zp).clamp(0, 255) as u8;
            *o = r;
        }
    }
    let (_, s) = output::<f32>(outputs, 1)?;
    let Some(s0) = s.first_mut() else {
        bail!("y_scale must hold one value");
    };
    *s0 = scale;
    let (_, z) = output::<u8>(outputs, 2)?;
    let Some(z0) = z.first_mut() else {
        bail!("y_zero_point must hold one value");
    };
    {
        *z0 = zp as u8;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// QGemm and QLinearGlobalAveragePool (com.microsoft).

/// `QGemm(A, a_scale, a_zero_point, B, b_scale, b_zero_point, C?, y_scale?, y_zero_point?)`:
/// `alpha A' B' + C` with `'` the optional transposes, C an int32 bias `[N]` (or one value);
/// with `y_scale`, requantised as QLinearMatMul with `scale = alpha * a_scale * b_scale[j] /
/// y_scale`; without it, float32 `acc * (alpha * a_scale * b_scale[j])`.
pub(crate) fn qgemm(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (as_, a) = q8_input(inputs, 0)?;
    let (bs, b) = q8_input(inputs, 3)?;
    let trans_a = attrs.int("transA", 0)? != 0;
    let trans_b = attrs.int("transB", 0)? != 0;
    let alpha = attrs.float("alpha", 1.0)?;
    if as_.len() != 2 || bs.len() != 2 {
        bail!("A {as_:?} and B {bs:?} must be matrices");
    }
    let (m, k) = if trans_a {
        (as_[1], as_[0])
    } else {
        (as_[0], as_[1])
    };
    let (kb, n) = if trans_b {
        (bs[1], bs[0])
    } else {
        (bs[0], bs[1])
    };
    if k != kb {
        bail!("A {as_:?} and B {bs:?} do not multiply");
    }
    let a_scale = scales(inputs, 1, 1)?[0];
    let za = zero_point(inputs, 2, 1, Some(a))?.at(0);
    let b_scale = scales(inputs, 4, n)?;
    let zb = zero_point(inputs, 5, n, Some(b))?;
    let bias = match opt_value(inputs, 6)? {
        None => None,
        Some((_, Data::I32(c))) if c.len() == n || c.len() == 1 => Some(c),
        Some(_) => bail!("C must be int32 [{n}]"),
    };
    let ai = move |i: usize, p: usize| if trans_a { p * m + i } else { i * k + p };
    let bi = move |p: usize, j: usize| if trans_b { j * k + p } else { p * n + j };
    let sum = |i: usize, j: usize| -> i32 {
        let zbj = zb.at(j);
        let mut acc = bias.map_or(0, |c| if c.len() == 1 { c[0] } else { c[j] });
        for p in 0..k {
            acc = acc.wrapping_add((a.at(ai(i, p)) - za) * (b.at(bi(p, j)) - zbj));
        }
        acc
    };
    let scale = |j: usize| alpha * a_scale * scale_at(b_scale, j);
    if opt_value(inputs, 7)?.is_none() {
        let (ys, y) = output::<f32>(outputs, 0)?;
        expect_shape(0, ys, &[m, n])?;
        for i in 0..m {
            for j in 0..n {
                // as MLAS converts the sum
                let v = sum(i, j) as f32 * scale(j);
                y[i * n + j] = v;
            }
        }
        return Ok(());
    }
    let y_scale = scales(inputs, 7, 1)?[0];
    let (ys, mut y) = q_out(outputs, 0)?;
    expect_shape(0, ys, &[m, n])?;
    let zy = out_zero_point(inputs, 8, &y)?;
    let (lo, hi) = y.range();
    for i in 0..m {
        for j in 0..n {
            y.set(
                i * n + j,
                requantize(sum(i, j), scale(j) / y_scale, zy, lo, hi),
            );
        }
    }
    Ok(())
}

/// `QLinearGlobalAveragePool(X, x_scale, x_zero_point, y_scale, y_zero_point)`, `channels_last`
/// 0 (NCHW...) or 1 (NHWC...): per image and channel the int32 sum of `x - x_zero_point`,
/// requantised with `scale = x_scale / (y_scale * pixels)` as MLAS does.
pub(crate) fn qlinear_global_average_pool(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (xs, x) = q8_input(inputs, 0)?;
    let last = attrs.int("channels_last", 0)? != 0;
    if xs.len() < 3 {
        bail!("input {xs:?} must be [N, C, spatial...] or [N, spatial..., C]");
    }
    let (batch, channels) = (xs[0], if last { xs[xs.len() - 1] } else { xs[1] });
    let spatial: usize = if last {
        xs[1..xs.len() - 1].iter().product()
    } else {
        xs[2..].iter().product()
    };
    let x_scale = scales(inputs, 1, 1)?[0];
    let zx = zero_point(inputs, 2, 1, Some(x))?.at(0);
    let y_scale = scales(inputs, 3, 1)?[0];
    let (ys, mut y) = q_out(outputs, 0)?;
    if y.len() != batch * channels || ys.len() != xs.len() {
        bail!("output {ys:?} must hold one value per image and channel of {xs:?}");
    }
    let zy = out_zero_point(inputs, 4, &y)?;
    let (lo, hi) = y.range();
    // a pixel count
    let scale = x_scale / (y_scale * spatial as f32);
    let n = i32::try_from(spatial).map_err(|_| crate::error::error!("too many pixels"))?;
    for b in 0..batch {
        for c in 0..channels {
            let mut acc = (-zx).wrapping_mul(n);
            for p in 0..spatial {
                let at = if last {
                    (b * spatial + p) * channels + c
                } else {
                    (b * channels + c) * spatial + p
                };
                acc = acc.wrapping_add(x.at(at));
            }
            y.set(b * channels + c, requantize(acc, scale, zy, lo, hi));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// MaxPool on 8-bit tensors.

/// `MaxPool` of an int8 or uint8 tensor (ONNX opset 12 on, as ONNX Runtime runs the QOperator
/// form's pools): the largest element of each window; padding takes no part. No Indices output.
pub(crate) fn max_pool(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    if outputs.len() > 1 {
        bail!("the Indices output is not supported");
    }
    if attrs.int("storage_order", 0)? != 0 {
        bail!("storage_order 1 is not supported");
    }
    let (xs, x) = q8_input(inputs, 0)?;
    let (ys, mut y) = q_out(outputs, 0)?;
    if x.is_signed() != y.is_signed() {
        bail!("the output's type differs from the input's");
    }
    let win = pool_window(attrs, xs, ys)?;
    let planes = xs[0] * xs[1];
    let in_plane: usize = win.input.iter().product();
    let out_plane: usize = win.output.iter().product();
    if x.len() != planes * in_plane || y.len() != planes * out_plane {
        bail!("the input and output sizes do not fit the window");
    }
    let (od, oh, ow) = (win.output[0], win.output[1], win.output[2]);
    let mut o = 0;
    for p in 0..planes {
        for zo in 0..od {
            for yo in 0..oh {
                for xo in 0..ow {
                    let mut best = i32::MIN;
                    win.for_each_tap([zo, yo, xo], |source, _| {
                        best = best.max(x.at(p * in_plane + source));
                    });
                    let (lo, hi) = y.range();
                    y.set(o, best.clamp(lo, hi));
                    o += 1;
                }
            }
        }
    }
    Ok(())
}
