//! The reference BATCH_MATMUL, float32 or int8.

use super::*;

/// BATCH_MATMUL: `x [.., M, K] * y [.., K, N]` with broadcast batch axes, `adj_x`/`adj_y`
/// reading the operand with its last two axes swapped. Float32 sums in `k` order; int8 sums
/// `(x + input_offset) (y + filter_offset)` in int32 and requantises as LiteRT's reference
/// kernel does.
pub(super) fn batch_matmul(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (xs, x) = value(inputs, 0)?;
    let (ws, w) = value(inputs, 1)?;
    let adj_x = attrs.int("adj_x", 0)? != 0;
    let adj_y = attrs.int("adj_y", 0)? != 0;
    if xs.len() < 2 || ws.len() < 2 {
        bail!("BATCH_MATMUL needs operands of rank 2 or more, found {xs:?} and {ws:?}");
    }
    let (xr, wr) = (xs.len(), ws.len());
    let (m, k) = if adj_x {
        (xs[xr - 1], xs[xr - 2])
    } else {
        (xs[xr - 2], xs[xr - 1])
    };
    let (k2, n) = if adj_y {
        (ws[wr - 1], ws[wr - 2])
    } else {
        (ws[wr - 2], ws[wr - 1])
    };
    if k != k2 {
        bail!("{xs:?} and {ws:?} do not multiply");
    }
    let batch = crate::broadcast::broadcast_shapes(&[&xs[..xr - 2], &ws[..wr - 2]])?;
    let bx = crate::broadcast::broadcast_strides(&xs[..xr - 2], &batch)?;
    let bw = crate::broadcast::broadcast_strides(&ws[..wr - 2], &batch)?;
    let out_len = outputs.first().map_or(0, |o| o.data.len());
    let product = numel(&batch)?.checked_mul(m).and_then(|p| p.checked_mul(n));
    match product {
        Some(p) if p == out_len => {}
        Some(p) => bail!("the output has {out_len} elements, the product {p}"),
        None => bail!("the product of {xs:?} and {ws:?} has more elements than fit in memory"),
    }
    // Element (i, p) of x and (p, j) of y within one matrix.
    let xi = move |i: usize, p: usize| if adj_x { p * m + i } else { i * k + p };
    let wi = move |p: usize, j: usize| if adj_y { j * k + p } else { p * n + j };
    match (x, w, out_dtype(outputs, 0)?) {
        (Data::F32(x), Data::F32(w), DType::F32) => {
            let (_, out) = output::<f32>(outputs, 0)?;
            crate::broadcast::for_each(&batch, &[bx, bw], |b, off| {
                let (x, w) = (&x[off[0] * m * k..], &w[off[1] * k * n..]);
                for i in 0..m {
                    for j in 0..n {
                        let mut acc = 0.0f32;
                        for p in 0..k {
                            acc += x[xi(i, p)] * w[wi(p, j)];
                        }
                        out[(b * m + i) * n + j] = acc;
                    }
                }
            })
        }
        (Data::I8(x), Data::I8(w), DType::I8) => {
            let (lo, hi) = int_range(attrs)?;
            let x_off = int(attrs, "input_offset")?;
            let w_off = int(attrs, "filter_offset")?;
            let out_off = int(attrs, "output_offset")?;
            let (mult, sh) = (int(attrs, "multiplier")?, int(attrs, "shift")?);
            let (_, out) = output::<i8>(outputs, 0)?;
            crate::broadcast::for_each(&batch, &[bx, bw], |b, off| {
                let (x, w) = (&x[off[0] * m * k..], &w[off[1] * k * n..]);
                for i in 0..m {
                    for j in 0..n {
                        let mut acc = 0i32;
                        for p in 0..k {
                            acc = acc.wrapping_add(
                                i32::from(x[xi(i, p)])
                                    .wrapping_add(x_off)
                                    .wrapping_mul(i32::from(w[wi(p, j)]).wrapping_add(w_off)),
                            );
                        }
                        let v = mbqm(acc, mult, sh).saturating_add(out_off);
                        out[(b * m + i) * n + j] = to_i8(v, lo, hi);
                    }
                }
            })
        }
        (x, w, o) => bail!(
            "inputs {} and {} and output {} is not a supported combination",
            x.dtype().name(),
            w.dtype().name(),
            o.name()
        ),
    }
}
