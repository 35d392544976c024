//! FULLY_CONNECTED, int8 with symmetric weights (zero point 0, as TFLite's int8 weights are):
//! each batch's row against each unit's weights, four units at a time, requantised once as
//! LiteRT's reference kernel does.

use super::dot::{Best, Dot};
use super::{Requantize, activation, check_input_offset, expect_len};
use crate::error::KernelError;
use crate::tensor::numel;

/// A FULLY_CONNECTED over int8 tensors, every parameter fixed at build time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FullyConnected {
    /// Rows of the input.
    pub batches: usize,
    /// Values of a row (and of a unit's weights).
    pub depth: usize,
    /// Output values of a row.
    pub units: usize,
    /// Minus the input's zero point, in [`super::INPUT_OFFSETS`].
    pub input_offset: i32,
    /// The output's zero point.
    pub output_offset: i32,
    /// The fused activation's `[min, max]`, as output values.
    pub act: [i32; 2],
}

impl FullyConnected {
    /// Whether [`fully_connected`] runs with these parameters.
    ///
    /// # Errors
    /// What is wrong with the parameters.
    pub fn check(&self) -> Result<(), KernelError> {
        check_input_offset(self.input_offset)?;
        activation(self.act)?;
        numel(&[self.batches, self.depth])?;
        numel(&[self.batches, self.units])?;
        numel(&[self.units, self.depth])?;
        Ok(())
    }
}

/// Runs FULLY_CONNECTED: `x` the input rows, `filter` `[units, depth]`, `bias`
/// [`super::fold_input_offset`]'s folded bias, `multiplier` and `shift` one per unit, `out`
/// `[batches, units]`.
///
/// # Errors
/// Parameters [`FullyConnected::check`] refuses, or slices whose lengths do not fit them.
pub fn fully_connected(
    p: &FullyConnected,
    x: &[i8],
    filter: &[i8],
    bias: &[i32],
    multiplier: &[i32],
    shift: &[i32],
    out: &mut [i8],
) -> Result<(), KernelError> {
    fully_connected_with::<Best>(p, x, filter, bias, multiplier, shift, out)
}

pub(super) fn fully_connected_with<M: Dot>(
    p: &FullyConnected,
    x: &[i8],
    filter: &[i8],
    bias: &[i32],
    multiplier: &[i32],
    shift: &[i32],
    out: &mut [i8],
) -> Result<(), KernelError> {
    p.check()?;
    let (d, units) = (p.depth, p.units);
    expect_len("the input", x.len(), p.batches * d)?;
    expect_len("the weights", filter.len(), units * d)?;
    expect_len("the bias", bias.len(), units)?;
    expect_len("the output", out.len(), p.batches * units)?;
    let rq = Requantize::<true>::new(multiplier, shift, units, p.output_offset, p.act)?;
    if units == 0 {
        return Ok(());
    }
    for (b, row_out) in out.chunks_exact_mut(units).enumerate() {
        let row = &x[b * d..(b + 1) * d];
        let mut u = 0;
        while u + 3 < units {
            let s = M::dot_1x4(row, &filter[u * d..(u + 4) * d], d);
            for (k, s) in s.into_iter().enumerate() {
                row_out[u + k] = rq.apply(s.wrapping_add(bias[u + k]), u + k);
            }
            u += 4;
        }
        while u + 1 < units {
            let (f, g) = (
                &filter[u * d..(u + 1) * d],
                &filter[(u + 1) * d..(u + 2) * d],
            );
            let s = M::dot_1x2(row, f, g);
            row_out[u] = rq.apply(s[0].wrapping_add(bias[u]), u);
            row_out[u + 1] = rq.apply(s[1].wrapping_add(bias[u + 1]), u + 1);
            u += 2;
        }
        if u < units {
            let f = &filter[u * d..(u + 1) * d];
            row_out[u] = rq.apply(M::dot_1x1(row, f).wrapping_add(bias[u]), u);
        }
    }
    Ok(())
}
