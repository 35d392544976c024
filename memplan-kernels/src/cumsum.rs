//! CumSum: running sums along one axis (a scalar int input), optionally `exclusive` (each
//! element left out of its own sum) and `reverse` (summing from the end).
//!
//! A float32 running sum starts from -0, the identity of IEEE addition, so that it is its first
//! element (a -0 stays -0) as in ONNX Runtime; an exclusive one starts from the +0 it writes
//! first, as ONNX Runtime does.

use super::attrs::Attrs;
use super::error::{KernelError, bail};
use super::tensor::{
    DType, Elem, Input, Output, axis, expect_shape, numel, opt_ints, out_dtype, output, typed,
};

/// CumSum.
pub(crate) fn cumsum(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    fn typed_cumsum<T: Elem + core::ops::Add<Output = T>>(
        attrs: &Attrs<'_>,
        inputs: &[Input<'_>],
        outputs: &mut [Output<'_>],
        add: fn(T, T) -> T,
        zero: [T; 2],
    ) -> Result<(), KernelError> {
        let (xs, x) = typed::<T>(inputs, 0)?;
        let ax = match opt_ints(inputs, 1)? {
            Some(a) if a.len() == 1 => axis(a[0], xs.len())?,
            _ => bail!("input 1 (axis) must be a single integer"),
        };
        let exclusive = attrs.int("exclusive", 0)? != 0;
        let reverse = attrs.int("reverse", 0)? != 0;
        let (ys, y) = output::<T>(outputs, 0)?;
        expect_shape(0, ys, xs)?;
        let len = xs[ax];
        let inner = numel(&xs[ax + 1..])?;
        let outer = numel(&xs[..ax])?;
        for o in 0..outer {
            for i in 0..inner {
                let at = |j: usize| (o * len + j) * inner + i;
                // zero[0] starts an inclusive sum, zero[1] an exclusive one.
                let mut acc = zero[usize::from(exclusive)];
                for step in 0..len {
                    let j = if reverse { len - 1 - step } else { step };
                    if exclusive {
                        y[at(j)] = acc;
                        acc = add(acc, x[at(j)]);
                    } else {
                        acc = add(acc, x[at(j)]);
                        y[at(j)] = acc;
                    }
                }
            }
        }
        Ok(())
    }
    match out_dtype(outputs, 0)? {
        DType::F32 => typed_cumsum::<f32>(attrs, inputs, outputs, |a, b| a + b, [-0.0, 0.0]),
        DType::I64 => typed_cumsum::<i64>(attrs, inputs, outputs, i64::wrapping_add, [0, 0]),
        DType::I32 => typed_cumsum::<i32>(attrs, inputs, outputs, i32::wrapping_add, [0, 0]),
        DType::Bool => bail!("CumSum of bools is not supported"),
        DType::I8 | DType::U8 => bail!("CumSum of 8-bit integers is not supported"),
    }
}
