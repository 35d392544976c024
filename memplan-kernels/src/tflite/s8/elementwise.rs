//! ADD, SUB and MUL of two int8 tensors of one shape (no broadcasting), with TFLite's
//! rescaling: each operand offset, shifted left and brought to a common scale by its own
//! multiplier, summed (or multiplied), then requantised onto the output's scale.

use super::{activation, multiply_by_quantized_multiplier as requantise};
use crate::error::{KernelError, bail};

/// Which elementwise operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
}

/// An int8 ADD, SUB or MUL of operands of one shape, every parameter fixed at build time
/// (LiteRT's `Prepare`: for MUL only the offsets and the output's multiplier and shift count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Elementwise {
    /// The operator.
    pub op: Operator,
    /// Elements of each operand and of the output.
    pub len: usize,
    /// Minus the first operand's zero point.
    pub input1_offset: i32,
    /// Minus the second operand's zero point.
    pub input2_offset: i32,
    /// ADD and SUB: the left shift applied to both operands first (0..=30).
    pub left_shift: i32,
    /// ADD and SUB: the first operand's multiplier and shift onto the common scale.
    pub input1: [i32; 2],
    /// ADD and SUB: the second operand's multiplier and shift.
    pub input2: [i32; 2],
    /// The output's multiplier and shift.
    pub output: [i32; 2],
    /// The output's zero point.
    pub output_offset: i32,
    /// The fused activation's `[min, max]`, as output values.
    pub act: [i32; 2],
}

impl Elementwise {
    /// Whether [`elementwise`] runs with these parameters: offsets of int8 zero points, a left
    /// shift in `0..=30`, no multiplier of `i32::MIN`, a non-empty activation range.
    ///
    /// # Errors
    /// What is wrong with the parameters.
    pub fn check(&self) -> Result<(), KernelError> {
        for offset in [self.input1_offset, self.input2_offset] {
            if !super::INPUT_OFFSETS.contains(&offset) {
                bail!("the input offset {offset} is not minus an int8 zero point");
            }
        }
        if !(0..=30).contains(&self.left_shift) {
            bail!("the left shift {} is outside 0..=30", self.left_shift);
        }
        if [self.input1[0], self.input2[0], self.output[0]].contains(&i32::MIN) {
            bail!("a multiplier is -2^31, which is no Q31 multiplier");
        }
        activation(self.act)?;
        Ok(())
    }
}

/// Runs the operator on `a` and `b` into `out`, all of `p.len` elements.
///
/// # Errors
/// Parameters [`Elementwise::check`] refuses, or slices of other lengths.
pub fn elementwise(p: &Elementwise, a: &[i8], b: &[i8], out: &mut [i8]) -> Result<(), KernelError> {
    p.check()?;
    if a.len() != p.len || b.len() != p.len || out.len() != p.len {
        bail!(
            "operands of {} and {} and an output of {} elements, the node's parameters say {}",
            a.len(),
            b.len(),
            out.len(),
            p.len
        );
    }
    apply(
        p,
        a.iter()
            .zip(b)
            .zip(out.iter_mut())
            .map(|((&x, &y), o)| (x, y, o)),
    )
}

/// Runs the operator with its output written over its first operand: `data` holds `a` and,
/// when it returns, the output (each element is read before it is written, so the bytes are
/// [`elementwise`]'s).
///
/// # Errors
/// Parameters [`Elementwise::check`] refuses, or slices of other lengths.
pub fn elementwise_in_place(p: &Elementwise, data: &mut [i8], b: &[i8]) -> Result<(), KernelError> {
    p.check()?;
    if data.len() != p.len || b.len() != p.len {
        bail!(
            "operands of {} and {} elements, the node's parameters say {}",
            data.len(),
            b.len(),
            p.len
        );
    }
    apply(
        p,
        data.iter_mut().zip(b).map(|(d, &y)| {
            let x = *d;
            (x, y, d)
        }),
    )
}

/// The operator on each `(x, y, out)`.
#[inline(always)]
fn apply<'o>(
    p: &Elementwise,
    pairs: impl Iterator<Item = (i8, i8, &'o mut i8)>,
) -> Result<(), KernelError> {
    let (lo, hi) = activation(p.act)?;
    let finish = |raw: i32| -> i8 {
        let v = requantise(raw, p.output[0], p.output[1]).saturating_add(p.output_offset);
        // In -128..=127 after the clamp.
        v.max(lo).min(hi) as i8
    };
    match p.op {
        Operator::Add | Operator::Sub => {
            let left = p.left_shift.cast_unsigned();
            for (x, y, o) in pairs {
                let x = (i32::from(x) + p.input1_offset) << left;
                let y = (i32::from(y) + p.input2_offset) << left;
                let (x, y) = (
                    requantise(x, p.input1[0], p.input1[1]),
                    requantise(y, p.input2[0], p.input2[1]),
                );
                *o = finish(if p.op == Operator::Sub {
                    x.wrapping_sub(y)
                } else {
                    x.wrapping_add(y)
                });
            }
        }
        Operator::Mul => {
            for (x, y, o) in pairs {
                let (x, y) = (
                    i32::from(x) + p.input1_offset,
                    i32::from(y) + p.input2_offset,
                );
                *o = finish(x * y);
            }
        }
    }
    Ok(())
}
