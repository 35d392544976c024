//! Slice: per axis a start, end and step (inputs since opset 10, attributes before), negative
//! values counting from the end, clamped to the dimension as the ONNX spec says.

use super::attrs::Attrs;
use super::error::{KernelError, bail};
use super::reshape::resolve_axes;
use super::tensor::{
    Elem, Input, Output, dispatch, expect_shape, opt_ints, out_dtype, output, strides, typed,
};

/// The first index and the output size along one dimension of size `dim`.
fn clamp(start: i64, end: i64, step: i64, dim: usize) -> (i64, usize) {
    let d = i64::try_from(dim).unwrap_or(i64::MAX);
    let fix = |v: i64| if v < 0 { v.saturating_add(d) } else { v };
    let (s, e) = (fix(start), fix(end));
    let (s, e) = if step > 0 {
        (s.clamp(0, d), e.clamp(0, d))
    } else {
        (s.clamp(0, d - 1), e.clamp(-1, d - 1))
    };
    let len = if step > 0 {
        (e - s).max(0).div_euclid(step) + i64::from((e - s).max(0) % step != 0)
    } else {
        (s - e).max(0).div_euclid(-step) + i64::from((s - e).max(0) % (-step) != 0)
    };
    (s, usize::try_from(len).unwrap_or(0))
}

/// Slice.
pub(crate) fn slice(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    fn typed_slice<T: Elem>(
        attrs: &Attrs,
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
                (
                    s.to_vec(),
                    e.to_vec(),
                    attrs.ints("axes")?.map(<[i64]>::to_vec),
                    None,
                )
            }
        };
        let n = starts.len();
        let axes: Vec<i64> =
            axes.unwrap_or_else(|| (0..n).map(|a| i64::try_from(a).unwrap_or(0)).collect());
        let steps = steps.unwrap_or_else(|| vec![1; n]);
        if ends.len() != n || axes.len() != n || steps.len() != n {
            bail!("starts, ends, axes and steps must have the same length");
        }
        let resolved = resolve_axes(&axes, xs.len())?;
        let rank = xs.len();
        let mut first = vec![0i64; rank];
        let mut step = vec![1i64; rank];
        let mut want = xs.to_vec();
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
        let xst: Vec<i64> = strides(xs)
            .iter()
            .map(|&s| i64::try_from(s).unwrap_or(0))
            .collect();
        let base: i64 = (0..rank).map(|d| first[d] * xst[d]).sum();
        let jump: Vec<i64> = (0..rank).map(|d| step[d] * xst[d]).collect();
        let mut index = vec![0usize; rank];
        let mut off = base;
        for v in y.iter_mut() {
            *v = x[usize::try_from(off).expect("clamped slice offsets are in range")];
            for d in (0..rank).rev() {
                index[d] += 1;
                off += jump[d];
                if index[d] < ys[d] {
                    break;
                }
                off -= jump[d] * i64::try_from(ys[d]).unwrap_or(0);
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
