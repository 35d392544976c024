//! Slice: per axis a start, end and step (inputs since opset 10, attributes before), negative
//! values counting from the end, clamped to the dimension as the ONNX spec says.

use super::attrs::Attrs;
use super::error::{KernelError, bail};
use super::reshape::resolve_axes;
use super::tensor::{
    Dims, Elem, Input, Ints, MAX_RANK, Output, collect, dims_filled, dispatch, expect_shape,
    opt_ints, out_dtype, output, strides, typed,
};

/// The first index and the output size along one dimension of size `dim`.
fn clamp(start: i64, end: i64, step: i64, dim: usize) -> (i64, usize) {
    if dim == 0 {
        return (0, 0);
    }
    // i128: no overflow for any i64 start, end or step.
    let d = i128::try_from(dim).unwrap_or(i128::MAX);
    let fix = |v: i64| {
        let v = i128::from(v);
        if v < 0 { v + d } else { v }
    };
    let (s, e, step) = (fix(start), fix(end), i128::from(step));
    let (s, e) = if step > 0 {
        (s.clamp(0, d), e.clamp(0, d))
    } else {
        (s.clamp(0, d - 1), e.clamp(-1, d - 1))
    };
    let len = if step > 0 {
        ceil_div((e - s).max(0), step)
    } else {
        ceil_div((s - e).max(0), -step)
    };
    (
        i64::try_from(s).unwrap_or(0),
        usize::try_from(len).unwrap_or(0),
    )
}

/// Ceiling division of a non-negative numerator by a positive divisor.
fn ceil_div(a: i128, b: i128) -> i128 {
    (a + b - 1) / b
}

/// Slice.
pub(crate) fn slice(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    fn typed_slice<T: Elem>(
        attrs: &Attrs<'_>,
        inputs: &[Input<'_>],
        outputs: &mut [Output<'_>],
    ) -> Result<(), KernelError> {
        let (xs, x) = typed::<T>(inputs, 0)?;
        let (starts, ends, axes, steps) = match opt_ints(inputs, 1)? {
            Some(s) => {
                let Some(e) = opt_ints(inputs, 2)? else {
                    bail!("input 2 (ends) is required");
                };
                (s, e, opt_ints(inputs, 3)?, opt_ints(inputs, 4)?)
            }
            None => {
                let (Some(s), Some(e)) = (attrs.ints("starts")?, attrs.ints("ends")?) else {
                    bail!("starts and ends are required");
                };
                let axes: Option<Ints> = match attrs.ints("axes")? {
                    Some(a) => Some(collect(a.iter().copied())?),
                    None => None,
                };
                (
                    collect(s.iter().copied())?,
                    collect(e.iter().copied())?,
                    axes,
                    None,
                )
            }
        };
        let n = starts.len();
        let axes: Ints = match axes {
            Some(a) => a,
            None => collect((0..n).map(|a| i64::try_from(a).unwrap_or(0)))?,
        };
        let steps: Ints = match steps {
            Some(s) => s,
            None => collect((0..n).map(|_| 1))?,
        };
        if ends.len() != n || axes.len() != n || steps.len() != n {
            bail!("starts, ends, axes and steps must have the same length");
        }
        let resolved = resolve_axes(&axes, xs.len())?;
        let rank = xs.len();
        let mut first = [0i64; MAX_RANK];
        let mut step = [1i64; MAX_RANK];
        let mut want: Dims = collect(xs.iter().copied())?;
        for k in 0..n {
            let a = super::tensor::axis(axes[k], rank)?;
            debug_assert!(resolved.contains(&a));
            if steps[k] == 0 {
                bail!("step 0 on axis {a}");
            }
            let (s, len) = clamp(starts[k], ends[k], steps[k], xs[a]);
            first[a] = s;
            step[a] = steps[k];
            want[a] = len;
        }
        let (ys, y) = output::<T>(outputs, 0)?;
        expect_shape(0, ys, &want)?;
        if y.is_empty() {
            return Ok(());
        }
        // Offsets in i128: a step may be any i64 (only the elements read are in range).
        let own = strides(xs)?;
        let mut xst = [0i128; MAX_RANK];
        for (t, &s) in xst.iter_mut().zip(&own) {
            *t = s as i128;
        }
        let base: i128 = (0..rank).map(|d| i128::from(first[d]) * xst[d]).sum();
        let mut jump = [0i128; MAX_RANK];
        for d in 0..rank {
            jump[d] = i128::from(step[d]) * xst[d];
        }
        let mut index = dims_filled(0, rank)?;
        let mut off = base;
        for v in y.iter_mut() {
            let Some(&e) = usize::try_from(off).ok().and_then(|o| x.get(o)) else {
                bail!("slice offset {off} is outside the input");
            };
            *v = e;
            for d in (0..rank).rev() {
                index[d] += 1;
                off += jump[d];
                if index[d] < ys[d] {
                    break;
                }
                off -= jump[d] * ys[d] as i128;
                index[d] = 0;
            }
        }
        Ok(())
    }
    dispatch!(out_dtype(outputs, 0)?, typed_slice(attrs, inputs, outputs))
}

#[cfg(test)]
mod tests {
    use super::clamp;

    #[test]
    fn clamp_follows_the_spec() {
        assert_eq!(clamp(1, 3, 1, 5), (1, 2));
        assert_eq!(clamp(-2, i64::MAX, 1, 5), (3, 2));
        assert_eq!(clamp(0, -1, 2, 5), (0, 2));
        assert_eq!(clamp(-1, i64::MIN, -1, 5), (4, 5));
        assert_eq!(clamp(4, 0, -2, 5), (4, 2));
        assert_eq!(clamp(10, 20, 1, 5), (5, 0));
        assert_eq!(clamp(3, 1, 1, 5), (3, 0));
    }
}
