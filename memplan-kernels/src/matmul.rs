//! MatMul (numpy `matmul`: batch broadcasting, 1-D operands) and Gemm
//! (`alpha * op(A) * op(B) + beta * C`, C broadcast to the result), each with an optional fused
//! activation ([`crate::activation`]). MatMul also takes an optional third input, a bias of `n`
//! elements added to every row (the `Add` of a constant that `memplan-build` fuses into it:
//! `sum + bias[j]`, the bits of the two nodes).
//!
//! Both are matrix products of [`crate::gemm`]. A constant right operand is usually packed at
//! build time (attribute `packed = 16`, see [`crate::pack`]) and read in place; otherwise it is
//! packed a panel at a time into the node's scratch. A single row times an unpacked matrix (`m =
//! 1`) adds a row of B at a time into the output, with no packing. Every output element sums its
//! products in increasing `k`, starting from zero, a fused multiply-add per term (the same bits
//! on every target, see [`crate::simd`]), then Gemm scales by `alpha` and adds `beta * C`.

use crate::activation::Activation;
use crate::attrs::Attrs;
use crate::broadcast::{broadcast_shapes, broadcast_strides, for_each};
use crate::error::{KernelError, bail};
use crate::gemm::{self, A, B, Bias, PANEL, Product, Row, RowMajor, Transposed};
use crate::pack;
use crate::simd::{MulAdd, ScalarFma, dispatch, fused};
use crate::tensor::{Dims, Input, Output, collect, expect_shape, opt_value, output, push, typed};

/// `c = a b` for one row `a` (`k`) and a row-major `b` (`k x n`, row stride `ld`): every element
/// `fma(a_k, b_k, ... fma(a_0, b_0, 0))`, as the product computes it (see [`crate::simd`]).
/// Blocks of `G` vectors of 16 columns keep their sums in registers through the whole `k` (one
/// load of `b` per vector and step, no load or store of `c`), the last columns a row of `b` at
/// a time into `c`. `G` as many as the level's registers hold: 8 zmm at AVX-512, 4 x 2 ymm at
/// AVX2 (0: no blocks).
#[inline(always)]
pub(crate) fn row_times_with<F: MulAdd, const G: usize>(
    fma: F,
    a: &[f32],
    b: &[f32],
    ld: usize,
    c: &mut [f32],
) {
    let blocked = row_times_blocks::<F, G>(fma, a, b, ld, c);
    let c = &mut c[blocked..];
    c.fill(0.0);
    let n = c.len();
    for (p, &av) in a.iter().enumerate() {
        let row = &b[p * ld + blocked..][..n];
        let (sums, sums_rest) = c.as_chunks_mut::<PANEL>();
        let (bs, bs_rest) = row.as_chunks::<PANEL>();
        for (s, bv) in sums.iter_mut().zip(bs) {
            fma.mul_add(s, av, bv);
        }
        for (s, &bv) in sums_rest.iter_mut().zip(bs_rest) {
            fma.mul_add::<1>(core::array::from_mut(s), av, &[bv]);
        }
    }
}

/// [`row_times_with`]'s whole blocks of `G * 16` columns; returns the columns done.
#[inline(always)]
fn row_times_blocks<F: MulAdd, const G: usize>(
    fma: F,
    a: &[f32],
    b: &[f32],
    ld: usize,
    c: &mut [f32],
) -> usize {
    let width = G * PANEL;
    if width == 0 {
        return 0;
    }
    let mut j0 = 0;
    while j0 + width <= c.len() {
        let mut sums = [[0.0f32; PANEL]; G];
        for (p, &av) in a.iter().enumerate() {
            let (vectors, _) = b[p * ld + j0..][..width].as_chunks::<PANEL>();
            for (s, bv) in sums.iter_mut().zip(vectors) {
                fma.mul_add(s, av, bv);
            }
        }
        c[j0..j0 + width].copy_from_slice(sums.as_flattened());
        j0 += width;
    }
    j0
}

fn row_times_portable(a: &[f32], b: &[f32], ld: usize, c: &mut [f32]) {
    // No blocks on a Cortex-M4F: 16 sums and their operands would not fit its 32 single
    // registers, and the blocks' loop cost flash for the network's one-row Gemm.
    const G: usize = if cfg!(target_arch = "arm") { 0 } else { 1 };
    row_times_with::<_, G>(ScalarFma, a, b, ld, c);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn row_times_avx2(a: &[f32], b: &[f32], ld: usize, c: &mut [f32]) {
    row_times_with::<_, 4>(crate::simd::Avx2Fma::new(), a, b, ld, c);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn row_times_avx512(a: &[f32], b: &[f32], ld: usize, c: &mut [f32]) {
    row_times_with::<_, 8>(crate::simd::Avx512Fma::new(), a, b, ld, c);
}

fn row_times(a: &[f32], b: &[f32], ld: usize, c: &mut [f32]) {
    dispatch!(
        row_times_portable,
        row_times_avx2,
        row_times_avx512,
        (a, b, ld, c)
    );
}

/// A packed operand's elements as panel rows.
fn rows(data: &[f32]) -> &[Row] {
    data.as_chunks::<PANEL>().0
}

/// Scratch words of MatMul: a panel of B unless it is packed.
pub(crate) fn matmul_scratch_len(
    attrs: &Attrs<'_>,
    input_shapes: &[Option<&[usize]>],
) -> Result<usize, KernelError> {
    let packed = pack::is_packed(attrs)?;
    Ok(match input_shapes.first() {
        Some(Some(sa)) if !sa.is_empty() => gemm::scratch_words(sa[sa.len() - 1], !packed),
        _ => 0,
    })
}

/// Scratch words of Gemm: a panel of B unless it is packed.
pub(crate) fn gemm_scratch_len(
    attrs: &Attrs<'_>,
    input_shapes: &[Option<&[usize]>],
) -> Result<usize, KernelError> {
    let trans_a = attrs.int("transA", 0)? != 0;
    let packed = pack::is_packed(attrs)?;
    Ok(match input_shapes.first() {
        Some(Some(sa)) if sa.len() == 2 => gemm::scratch_words(sa[usize::from(!trans_a)], !packed),
        _ => 0,
    })
}

/// MatMul.
pub(crate) fn matmul(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    let (sa, a) = typed::<f32>(inputs, 0)?;
    let (sb, b) = typed::<f32>(inputs, 1)?;
    let bias = match opt_value(inputs, 2)? {
        None => None,
        Some(_) => Some(typed::<f32>(inputs, 2)?.1),
    };
    let act = Activation::from_attrs(attrs)?;
    let (sy, y) = output::<f32>(outputs, 0)?;
    if let Some(bias) = bias
        && Some(&bias.len()) != sy.last()
    {
        bail!(
            "a MatMul bias has one element per output column; found {} for the output {sy:?}",
            bias.len()
        );
    }
    let bias = bias.map_or(Bias::None, Bias::Col);
    if sa.is_empty() || sb.is_empty() {
        bail!("MatMul operands must have rank >= 1, found {sa:?} and {sb:?}");
    }
    // Promote 1-D operands to matrices: [K] -> [1, K] on the left, [K, 1] on the right.
    let ma: Dims = if sa.len() == 1 {
        collect([1, sa[0]])?
    } else {
        collect(sa.iter().copied())?
    };
    let (m, k) = (ma[ma.len() - 2], ma[ma.len() - 1]);
    let batch_a = &ma[..ma.len() - 2];
    let buf = gemm::panel_buffer(scratch);
    if pack::is_packed(attrs)? {
        // B is a packed k x n matrix, n the output's last dimension.
        let n = sy.last().copied().unwrap_or(0);
        if pack::matrix_shape(k, n).as_ref().map(|s| &s[..]) != Some(sb) {
            bail!("packed operand {sb:?} does not fit {sa:?} and the output {sy:?}");
        }
        let mut want: Dims = collect(batch_a.iter().copied())?;
        if sa.len() > 1 {
            push(&mut want, m)?;
        }
        push(&mut want, n)?;
        expect_shape(0, sy, &want)?;
        // One B for every batch: the batches' rows are one tall A (each element is still its
        // own sum).
        let rows_a = batch_a.iter().product::<usize>() * m;
        let mut p = Product {
            m: rows_a,
            n,
            k,
            c: &mut y[..rows_a * n],
            ldc: n,
            bias,
            act,
        };
        let a = A::Rows {
            a: &a[..rows_a * k],
            lda: k,
        };
        return gemm::product::<RowMajor<'_>>(&mut p, a, B::Packed(rows(b)), buf);
    }
    let mb: Dims = if sb.len() == 1 {
        collect([sb[0], 1])?
    } else {
        collect(sb.iter().copied())?
    };
    let (k2, n) = (mb[mb.len() - 2], mb[mb.len() - 1]);
    if k != k2 {
        bail!("cannot multiply {sa:?} by {sb:?}: inner dimensions {k} and {k2} differ");
    }
    let batch_b = &mb[..mb.len() - 2];
    let batch = broadcast_shapes(&[batch_a, batch_b])?;
    let mut want = batch.clone();
    if sa.len() > 1 {
        push(&mut want, m)?;
    }
    if sb.len() > 1 {
        push(&mut want, n)?;
    }
    expect_shape(0, sy, &want)?;
    let strides = [
        broadcast_strides(batch_a, &batch)?,
        broadcast_strides(batch_b, &batch)?,
    ];
    let mut result = Ok(());
    for_each(&batch, &strides, |i, o| {
        if result.is_err() {
            return;
        }
        let a = &a[o[0] * m * k..][..m * k];
        let b = &b[o[1] * k * n..][..k * n];
        let c = &mut y[i * m * n..][..m * n];
        let mut p = Product {
            m,
            n,
            k,
            c,
            ldc: n,
            bias,
            act,
        };
        if m == 1 {
            row_times(a, b, n, p.c);
            p.finish_all();
            return;
        }
        let rm = RowMajor { b, ld: n };
        result = gemm::product(&mut p, A::Rows { a, lda: k }, B::Pack(&rm), buf);
    })?;
    result
}

/// Gemm.
pub(crate) fn gemm(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    let alpha = attrs.float("alpha", 1.0)?;
    let beta = attrs.float("beta", 1.0)?;
    let trans_a = attrs.int("transA", 0)? != 0;
    let trans_b = attrs.int("transB", 0)? != 0;
    let packed = pack::is_packed(attrs)?;
    let act = Activation::from_attrs(attrs)?;
    let (sa, a) = typed::<f32>(inputs, 0)?;
    let (sb, b) = typed::<f32>(inputs, 1)?;
    let (sy, y) = output::<f32>(outputs, 0)?;
    if sa.len() != 2 || sy.len() != 2 || (sb.len() != 2 && !packed) {
        bail!("Gemm operands must be matrices, found {sa:?} and {sb:?}");
    }
    let (m, k) = if trans_a {
        (sa[1], sa[0])
    } else {
        (sa[0], sa[1])
    };
    let n = if packed {
        if trans_a || trans_b {
            bail!("a packed Gemm has transA = 0 and transB = 0");
        }
        let n = sy[1];
        if pack::matrix_shape(k, n).as_ref().map(|s| &s[..]) != Some(sb) {
            bail!("packed operand {sb:?} does not fit {sa:?} and the output {sy:?}");
        }
        n
    } else {
        let (k2, n) = if trans_b {
            (sb[1], sb[0])
        } else {
            (sb[0], sb[1])
        };
        if k != k2 {
            bail!("cannot multiply {sa:?} by {sb:?} (transA {trans_a}, transB {trans_b})");
        }
        n
    };
    let c = match opt_value(inputs, 2)? {
        None => None,
        Some(_) => {
            let (sc, c) = typed::<f32>(inputs, 2)?;
            let cs = broadcast_strides(sc, &[m, n])?;
            Some((c, cs))
        }
    };
    expect_shape(0, sy, &[m, n])?;
    if !trans_a {
        let bias = Bias::Gemm {
            alpha,
            beta,
            c: c.as_ref().map(|(c, cs)| (*c, cs[0], cs[1])),
        };
        let mut p = Product {
            m,
            n,
            k,
            c: y,
            ldc: n,
            bias,
            act,
        };
        let a = A::Rows { a, lda: k };
        let buf = gemm::panel_buffer(scratch);
        return if packed {
            gemm::product::<RowMajor<'_>>(&mut p, a, B::Packed(rows(b)), buf)
        } else if trans_b {
            gemm::product(&mut p, a, B::Pack(&Transposed { b, ld: k }), buf)
        } else if m == 1 {
            row_times(&p_a(a)[..k], b, n, &mut p.c[..n]);
            p.finish_all();
            Ok(())
        } else {
            gemm::product(&mut p, a, B::Pack(&RowMajor { b, ld: n }), buf)
        };
    }
    // transA: A column by column, the plain loop (exported networks do not use it).
    let (a_row, a_col) = if trans_a { (1, m) } else { (k, 1) };
    let (b_row, b_col) = if trans_b { (1, k) } else { (n, 1) };
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0.0f32;
            for kk in 0..k {
                acc = fused(a[i * a_row + kk * a_col], b[kk * b_row + j * b_col], acc);
            }
            let mut v = alpha * acc;
            if let Some((c, cs)) = &c {
                v += beta * c[i * cs[0] + j * cs[1]];
            }
            y[i * n + j] = v;
        }
        act.apply(&mut y[i * n..][..n]);
    }
    Ok(())
}

/// The elements of a row-major `A`.
fn p_a<'a>(a: A<'a>) -> &'a [f32] {
    match a {
        A::Rows { a, .. } => a,
        A::Packed(_) => &[],
    }
}

#[cfg(test)]
mod tests {
    use crate::test_values::values;
    use crate::{Attr, Attrs, Data, DataMut, Input, Output, pack, run, scratch_len};
    use std::vec;
    use std::vec::Vec;

    fn node(
        op: &str,
        attrs: &[(&str, Attr<'_>)],
        ins: &[(&[usize], &[f32])],
        ys: &[usize],
    ) -> Vec<f32> {
        let attrs = Attrs::new(attrs);
        let shapes: Vec<Option<&[usize]>> = ins.iter().map(|(s, _)| Some(*s)).collect();
        let words = scratch_len(op, &attrs, &shapes, &[ys]).unwrap();
        let mut scratch = vec![0u64; words];
        let inputs: Vec<Input<'_>> = ins
            .iter()
            .map(|(shape, data)| Input::Value {
                shape,
                data: Data::F32(data),
            })
            .collect();
        let mut y = vec![f32::NAN; ys.iter().product()];
        let mut outputs = [Output {
            shape: ys,
            data: DataMut::F32(&mut y),
        }];
        run(op, &attrs, &inputs, &mut outputs, &mut scratch).unwrap();
        y
    }

    /// MatMul with a bias and a fused activation, its right operand packed or not, computes the
    /// bits of MatMul, then Add, then the activation.
    #[test]
    fn a_fused_bias_and_activation_give_the_bits_of_the_three_nodes() {
        for (batch, m, k, n) in [(1, 1, 7, 5), (2, 3, 19, 21), (1, 17, 64, 40)] {
            let sa = [batch, m, k];
            let (sb, sy, sbias) = ([k, n], [batch, m, n], [n]);
            let (a, b, bias) = (values(batch * m * k, 1), values(k * n, 2), values(n, 3));
            let product = node("MatMul", &[], &[(&sa, &a), (&sb, &b)], &sy);
            let added = node("Add", &[], &[(&sy, &product), (&sbias, &bias)], &sy);
            let want = node("Relu", &[], &[(&sy, &added)], &sy);
            let relu = [("activation", Attr::Str("Relu"))];
            let fused = node(
                "MatMul",
                &relu,
                &[(&sa, &a), (&sb, &b), (&sbias, &bias)],
                &sy,
            );
            let ps = pack::matrix_shape(k, n).unwrap();
            let mut packed = vec![0.0f32; ps.iter().product()];
            pack::matrix(&b, k, n, false, &mut packed).unwrap();
            let attrs = [("activation", Attr::Str("Relu")), ("packed", Attr::Int(16))];
            let both = node(
                "MatMul",
                &attrs,
                &[(&sa, &a), (&ps, &packed), (&sbias, &bias)],
                &sy,
            );
            for (i, w) in want.iter().enumerate() {
                assert_eq!(fused[i].to_bits(), w.to_bits(), "{batch}x{m}x{k}x{n}");
                assert_eq!(both[i].to_bits(), w.to_bits(), "{batch}x{m}x{k}x{n} packed");
            }
        }
    }
}
