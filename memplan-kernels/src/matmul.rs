//! MatMul (numpy `matmul`: batch broadcasting, 1-D operands) and Gemm
//! (`alpha * op(A) * op(B) + beta * C`, C broadcast to the result).
//!
//! Every output element sums its products in increasing `k`, starting from zero. MatMul walks
//! `i, k, j` so that the inner loop streams a row of B into a row of the output.

use crate::attrs::Attrs;
use crate::broadcast::{broadcast_shapes, broadcast_strides, for_each};
use crate::error::{KernelError, bail};
use crate::tensor::{Dims, Input, Output, collect, expect_shape, opt_value, output, push, typed};

/// `c[m x n] = a[m x k] * b[k x n]`, summing over `k` in increasing order.
fn matmul_block(a: &[f32], b: &[f32], c: &mut [f32], m: usize, k: usize, n: usize) {
    for i in 0..m {
        let row = &mut c[i * n..][..n];
        row.fill(0.0);
        for (kk, &av) in a[i * k..][..k].iter().enumerate() {
            let brow = &b[kk * n..][..n];
            for (o, &bv) in row.iter_mut().zip(brow) {
                *o += av * bv;
            }
        }
    }
}

/// MatMul.
pub(crate) fn matmul(inputs: &[Input<'_>], outputs: &mut [Output<'_>]) -> Result<(), KernelError> {
    let (sa, a) = typed::<f32>(inputs, 0)?;
    let (sb, b) = typed::<f32>(inputs, 1)?;
    let (sy, y) = output::<f32>(outputs, 0)?;
    if sa.is_empty() || sb.is_empty() {
        bail!("MatMul operands must have rank >= 1, found {sa:?} and {sb:?}");
    }
    // Promote 1-D operands to matrices: [K] -> [1, K] on the left, [K, 1] on the right.
    let ma: Dims = if sa.len() == 1 {
        collect([1, sa[0]])?
    } else {
        collect(sa.iter().copied())?
    };
    let mb: Dims = if sb.len() == 1 {
        collect([sb[0], 1])?
    } else {
        collect(sb.iter().copied())?
    };
    let (m, k) = (ma[ma.len() - 2], ma[ma.len() - 1]);
    let (k2, n) = (mb[mb.len() - 2], mb[mb.len() - 1]);
    if k != k2 {
        bail!("cannot multiply {sa:?} by {sb:?}: inner dimensions {k} and {k2} differ");
    }
    let batch_a = &ma[..ma.len() - 2];
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
    for_each(&batch, &strides, |i, o| {
        matmul_block(
            &a[o[0] * m * k..][..m * k],
            &b[o[1] * k * n..][..k * n],
            &mut y[i * m * n..][..m * n],
            m,
            k,
            n,
        );
    })?;
    Ok(())
}

/// Gemm.
pub(crate) fn gemm(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let alpha = attrs.float("alpha", 1.0)?;
    let beta = attrs.float("beta", 1.0)?;
    let trans_a = attrs.int("transA", 0)? != 0;
    let trans_b = attrs.int("transB", 0)? != 0;
    let (sa, a) = typed::<f32>(inputs, 0)?;
    let (sb, b) = typed::<f32>(inputs, 1)?;
    if sa.len() != 2 || sb.len() != 2 {
        bail!("Gemm operands must be matrices, found {sa:?} and {sb:?}");
    }
    let (m, k) = if trans_a {
        (sa[1], sa[0])
    } else {
        (sa[0], sa[1])
    };
    let (k2, n) = if trans_b {
        (sb[1], sb[0])
    } else {
        (sb[0], sb[1])
    };
    if k != k2 {
        bail!("cannot multiply {sa:?} by {sb:?} (transA {trans_a}, transB {trans_b})");
    }
    let c = match opt_value(inputs, 2)? {
        None => None,
        Some(_) => {
            let (sc, c) = typed::<f32>(inputs, 2)?;
            let cs = broadcast_strides(sc, &[m, n])?;
            Some((c, cs))
        }
    };
    let (sy, y) = output::<f32>(outputs, 0)?;
    expect_shape(0, sy, &[m, n])?;
    let (a_row, a_col) = if trans_a { (1, m) } else { (k, 1) };
    let (b_row, b_col) = if trans_b { (1, k) } else { (n, 1) };
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0.0f32;
            for kk in 0..k {
                acc += a[i * a_row + kk * a_col] * b[kk * b_row + j * b_col];
            }
            let mut v = alpha * acc;
            if let Some((c, cs)) = &c {
                v += beta * c[i * cs[0] + j * cs[1]];
            }
            y[i * n + j] = v;
        }
    }
    Ok(())
}
