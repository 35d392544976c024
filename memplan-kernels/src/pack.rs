//! Weights packed ahead of time in the layout the matrix product reads (`gemm.rs`), so
//! that it reads them in place instead of copying them at run time. `memplan-build` packs a
//! Conv's weights and a MatMul's or Gemm's constant right operand when it generates a network,
//! and marks the node with the attribute `packed = 16` ([`PANEL`]); the constant is then stored
//! packed (in `.rodata`, flash on a microcontroller) and the node reads it as it is.
//!
//! The layout does not depend on the target or its vector width: panels of [`PANEL`] (16)
//! rows of `A` or columns of `B`, one after the other, each panel `k` rows of 16 floats, the
//! rows or columns past the matrix zero. Every micro-kernel tile (1 to 16 rows, 4 to 16
//! columns) is a part of one panel.
//!
//! - A Conv's weights `[m, c/group, k1, ..]` become `[group, ceil(mg / 16), k, 16]` with
//!   `mg = m / group` and `k = c/group x k1 x ..`: element `[g][q][p][i]` is output channel
//!   `g mg + 16 q + i` at position `p` of its `k` weights. The node must also have its
//!   `kernel_shape` attribute (the packed shape no longer says it).
//! - A ConvTranspose's weights `[c, m/group, k1, ..]` become `[group, ceil(rows / 16), c/group,
//!   16]` with `rows = m/group x k1 x ..`: each group's `A` of the product that spreads the
//!   input (output channel and tap by input channel); the node also gets its `kernel_shape`.
//! - A matrix `B` (`k x n`, or `n x k` for Gemm's `transB`) becomes `[ceil(n / 16), k, 16]`:
//!   element `[q][p][j]` is `B[p][16 q + j]`. A packed Gemm has `transB = 0`.

use crate::attrs::Attrs;
use crate::error::{KernelError, bail};
pub use crate::gemm::PANEL;

/// Whether a node's constant operand is stored packed: its attribute `packed` is [`PANEL`]
/// (absent or 0: as in the ONNX file; any other width is an error).
pub(crate) fn is_packed(attrs: &Attrs<'_>) -> Result<bool, KernelError> {
    match attrs.int("packed", 0)? {
        0 => Ok(false),
        p if p == PANEL as i64 => Ok(true),
        p => bail!("packed = {p} is not supported (the panels are {PANEL} wide)"),
    }
}

/// The packed shape of a Conv weight of `shape` (`[m, c/group, k1, ..]`) in `group` groups,
/// or `None` when the shape does not split into the groups.
pub fn conv_weights_shape(shape: &[usize], group: usize) -> Option<[usize; 4]> {
    let (&m, rest) = shape.split_first()?;
    if rest.is_empty() || group == 0 || m % group != 0 {
        return None;
    }
    let k = rest.iter().try_fold(1usize, |a, &d| a.checked_mul(d))?;
    let panels = (m / group).div_ceil(PANEL);
    group
        .checked_mul(panels)?
        .checked_mul(k)?
        .checked_mul(PANEL)?;
    Some([group, panels, k, PANEL])
}

/// Packs the Conv weight `w` of `shape` in `group` groups into `out`, which holds the elements
/// of [`conv_weights_shape`].
///
/// # Errors
/// Lengths that do not fit the shape.
pub fn conv_weights(
    w: &[f32],
    shape: &[usize],
    group: usize,
    out: &mut [f32],
) -> Result<(), KernelError> {
    let Some([_, panels, k, _]) = conv_weights_shape(shape, group) else {
        bail!("weight {shape:?} does not split into {group} groups");
    };
    let m = shape[0];
    if w.len() != m * k || out.len() != group * panels * k * PANEL {
        bail!("the weight or the packed buffer does not fit {shape:?}");
    }
    let mg = m / group;
    for g in 0..group {
        for q in 0..panels {
            let panel = &mut out[(g * panels + q) * k * PANEL..][..k * PANEL];
            for i in 0..PANEL {
                let row = q * PANEL + i;
                for p in 0..k {
                    panel[p * PANEL + i] = if row < mg {
                        w[(g * mg + row) * k + p]
                    } else {
                        0.0
                    };
                }
            }
        }
    }
    Ok(())
}

/// The packed shape of a ConvTranspose weight of `shape` (`[c, m/group, k1, ..]`) in `group`
/// groups, or `None` when the shape does not split into the groups.
pub fn conv_transpose_weights_shape(shape: &[usize], group: usize) -> Option<[usize; 4]> {
    let (&c, rest) = shape.split_first()?;
    let (&mg, kernel) = rest.split_first()?;
    if kernel.is_empty() || group == 0 || c % group != 0 {
        return None;
    }
    let rows = kernel.iter().try_fold(mg, |a, &d| a.checked_mul(d))?;
    let panels = rows.div_ceil(PANEL);
    group
        .checked_mul(panels)?
        .checked_mul(c / group)?
        .checked_mul(PANEL)?;
    Some([group, panels, c / group, PANEL])
}

/// Packs the ConvTranspose weight `w` of `shape` in `group` groups into `out`, which holds the
/// elements of [`conv_transpose_weights_shape`]: each group's `A` of the product that spreads
/// the input, row `ml x taps + t` (output channel `ml` of the group, tap `t`) by column `p`
/// (input channel `p` of the group), `W[g c/group + p, ml, t]`.
///
/// # Errors
/// Lengths that do not fit the shape.
pub fn conv_transpose_weights(
    w: &[f32],
    shape: &[usize],
    group: usize,
    out: &mut [f32],
) -> Result<(), KernelError> {
    let Some([_, panels, cg, _]) = conv_transpose_weights_shape(shape, group) else {
        bail!("weight {shape:?} does not split into {group} groups");
    };
    let rows: usize = shape[1..].iter().product();
    if w.len() != shape[0] * rows || out.len() != group * panels * cg * PANEL {
        bail!("the weight or the packed buffer does not fit {shape:?}");
    }
    for g in 0..group {
        for q in 0..panels {
            let panel = &mut out[(g * panels + q) * cg * PANEL..][..cg * PANEL];
            for p in 0..cg {
                for i in 0..PANEL {
                    let row = q * PANEL + i;
                    panel[p * PANEL + i] = if row < rows {
                        w[(g * cg + p) * rows + row]
                    } else {
                        0.0
                    };
                }
            }
        }
    }
    Ok(())
}

/// The packed shape of a matrix `B` of `k x n`.
pub fn matrix_shape(k: usize, n: usize) -> Option<[usize; 3]> {
    let panels = n.div_ceil(PANEL);
    panels.checked_mul(k)?.checked_mul(PANEL)?;
    Some([panels, k, PANEL])
}

/// Packs the matrix `B` (`k x n` row-major, or stored `n x k` when `transposed`) into `out`,
/// which holds the elements of [`matrix_shape`].
///
/// # Errors
/// Lengths that do not fit the shape.
pub fn matrix(
    b: &[f32],
    k: usize,
    n: usize,
    transposed: bool,
    out: &mut [f32],
) -> Result<(), KernelError> {
    let Some([panels, _, _]) = matrix_shape(k, n) else {
        bail!("a {k} x {n} matrix is too large");
    };
    if b.len() != k * n || out.len() != panels * k * PANEL {
        bail!("the matrix or the packed buffer does not fit {k} x {n}");
    }
    for q in 0..panels {
        let panel = &mut out[q * k * PANEL..][..k * PANEL];
        for p in 0..k {
            for j in 0..PANEL {
                let col = q * PANEL + j;
                panel[p * PANEL + j] = match (col < n, transposed) {
                    (false, _) => 0.0,
                    (true, false) => b[p * n + col],
                    (true, true) => b[col * k + p],
                };
            }
        }
    }
    Ok(())
}

/// The packed shapes of a recurrent node's (`LSTM`, `GRU`, `RNN`) weights `W` (`[dirs, width,
/// input]`) and `R` (`[dirs, width, hidden]`): `W` as one packed matrix `B = W^T` per direction
/// (`[dirs, panels, input, 16]`, what the whole sequence's input product reads), `R` turned
/// (`[dirs, hidden, width]`, row `k` the `k`-th column of every gate row: what each step's row
/// product reads). `None` for shapes that do not fit each other.
pub fn recurrent_weights_shape(w: &[usize], r: &[usize]) -> Option<([usize; 4], [usize; 3])> {
    let (&[dirs, width, input], &[dirs_r, width_r, hidden]) = (w, r) else {
        return None;
    };
    if dirs != dirs_r || width != width_r {
        return None;
    }
    let [panels, _, _] = matrix_shape(input, width)?;
    dirs.checked_mul(hidden)?.checked_mul(width)?;
    dirs.checked_mul(panels)?
        .checked_mul(input)?
        .checked_mul(PANEL)?;
    Some(([dirs, panels, input, PANEL], [dirs, hidden, width]))
}

/// Packs a recurrent node's `W` and `R` (of `w_shape` and `r_shape`) into `w_out` and `r_out`,
/// which hold the elements of [`recurrent_weights_shape`].
///
/// # Errors
/// Lengths that do not fit the shapes.
pub fn recurrent_weights(
    w: &[f32],
    w_shape: &[usize],
    r: &[f32],
    r_shape: &[usize],
    w_out: &mut [f32],
    r_out: &mut [f32],
) -> Result<(), KernelError> {
    let Some((pw, _)) = recurrent_weights_shape(w_shape, r_shape) else {
        bail!("recurrent weights {w_shape:?} and {r_shape:?} do not fit each other");
    };
    let [dirs, width, input] = [w_shape[0], w_shape[1], w_shape[2]];
    let hidden = r_shape[2];
    let (per_w, per_r) = (pw[1] * pw[2] * PANEL, hidden * width);
    if w.len() != dirs * width * input
        || r.len() != dirs * per_r
        || w_out.len() != dirs * per_w
        || r_out.len() != dirs * per_r
    {
        bail!("the weights or the packed buffers do not fit {w_shape:?} and {r_shape:?}");
    }
    for d in 0..dirs {
        matrix(
            &w[d * width * input..][..width * input],
            input,
            width,
            true,
            &mut w_out[d * per_w..][..per_w],
        )?;
        let (from, to) = (&r[d * per_r..][..per_r], &mut r_out[d * per_r..][..per_r]);
        for g in 0..width {
            for k in 0..hidden {
                to[k * width + g] = from[g * hidden + k];
            }
        }
    }
    Ok(())
}
