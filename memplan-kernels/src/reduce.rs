//! Reductions over a set of axes: ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd,
//! ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp (float32), and ArgMax / ArgMin (int64 indices).
//!
//! The axes come from the `axes` attribute (before opset 18; ReduceSum before 13) or the
//! optional second input. With no axes, everything is reduced, unless `noop_with_empty_axes` is
//! set, which makes the operator the identity. Each output element accumulates its inputs in
//! row-major input order.

use crate::attrs::Attrs;
use crate::broadcast::for_each;
use crate::error::{KernelError, bail};
use crate::reshape::resolve_axes;
use crate::tensor::{
    Dims, Input, Ints, Output, axis, collect, expect_shape, opt_ints, output, strides, typed,
};

/// How a reduction starts, accumulates and finishes.
#[derive(Clone, Copy)]
enum Kind {
    Mean,
    Sum,
    Max,
    Min,
    Prod,
    SumSquare,
    L1,
    L2,
    LogSum,
    LogSumExp,
}

/// Runs the reduction `op`, if it is one.
pub(crate) fn run(
    op: &str,
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Option<Result<(), KernelError>> {
    let kind = match op {
        "ReduceMean" => Kind::Mean,
        "ReduceSum" => Kind::Sum,
        "ReduceMax" => Kind::Max,
        "ReduceMin" => Kind::Min,
        "ReduceProd" => Kind::Prod,
        "ReduceSumSquare" => Kind::SumSquare,
        "ReduceL1" => Kind::L1,
        "ReduceL2" => Kind::L2,
        "ReduceLogSum" => Kind::LogSum,
        "ReduceLogSumExp" => Kind::LogSumExp,
        "ArgMax" => return Some(arg(attrs, inputs, outputs, true)),
        "ArgMin" => return Some(arg(attrs, inputs, outputs, false)),
        _ => return None,
    };
    Some(reduce(kind, attrs, inputs, outputs))
}

fn reduce(
    kind: Kind,
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let (xs, x) = typed::<f32>(inputs, 0)?;
    let axes = match opt_ints(inputs, 1)? {
        Some(a) => a,
        None => match attrs.ints("axes")? {
            Some(a) => collect(a.iter().copied())?,
            None => Ints::new(),
        },
    };
    let keep = attrs.int("keepdims", 1)? != 0;
    let (ys, y) = output::<f32>(outputs, 0)?;
    if axes.is_empty() && attrs.int("noop_with_empty_axes", 0)? != 0 {
        expect_shape(0, ys, xs)?;
        y.copy_from_slice(x);
        return Ok(());
    }
    let axes: Dims = if axes.is_empty() {
        collect(0..xs.len())?
    } else {
        resolve_axes(&axes, xs.len())?
    };
    let kept: Dims = collect((0..xs.len()).map(|d| if axes.contains(&d) { 1 } else { xs[d] }))?;
    let want: Dims = if keep {
        kept.clone()
    } else {
        collect((0..xs.len()).filter(|d| !axes.contains(d)).map(|d| xs[d]))?
    };
    expect_shape(0, ys, &want)?;
    let count: usize = axes.iter().map(|&a| xs[a]).product();
    if count == 0 {
        bail!("reducing over an empty axis is not supported");
    }
    let init = match kind {
        Kind::Max => f32::NEG_INFINITY,
        Kind::Min => f32::INFINITY,
        Kind::Prod => 1.0,
        _ => 0.0,
    };
    y.fill(init);
    let ks = strides(&kept)?;
    let out_strides: Dims =
        collect((0..xs.len()).map(|d| if axes.contains(&d) { 0 } else { ks[d] }))?;
    for_each(xs, &[out_strides], |i, o| {
        let acc = &mut y[o[0]];
        let v = x[i];
        *acc = match kind {
            Kind::Mean | Kind::Sum | Kind::LogSum => *acc + v,
            Kind::LogSumExp => *acc + libm::expf(v),
            Kind::Max => {
                if v > *acc || v.is_nan() {
                    v
                } else {
                    *acc
                }
            }
            Kind::Min => {
                if v < *acc || v.is_nan() {
                    v
                } else {
                    *acc
                }
            }
            Kind::Prod => *acc * v,
            Kind::SumSquare | Kind::L2 => *acc + v * v,
            Kind::L1 => *acc + v.abs(),
        };
    })?;
    #[allow(clippy::cast_precision_loss)] // reduced counts are far below 2^24
    let n = count as f32;
    match kind {
        Kind::Mean => y.iter_mut().for_each(|v| *v /= n),
        Kind::L2 => y.iter_mut().for_each(|v| *v = libm::sqrtf(*v)),
        Kind::LogSum | Kind::LogSumExp => y.iter_mut().for_each(|v| *v = libm::logf(*v)),
        _ => {}
    }
    Ok(())
}

/// ArgMax / ArgMin along `axis` (first occurrence, or last with `select_last_index`).
fn arg(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    max: bool,
) -> Result<(), KernelError> {
    let (xs, x) = typed::<f32>(inputs, 0)?;
    let ax = axis(attrs.int("axis", 0)?, xs.len())?;
    let keep = attrs.int("keepdims", 1)? != 0;
    let last = attrs.int("select_last_index", 0)? != 0;
    let mut want: Dims = collect(xs.iter().copied())?;
    if keep {
        want[ax] = 1;
    } else {
        want.remove(ax);
    }
    let (ys, y) = output::<i64>(outputs, 0)?;
    expect_shape(0, ys, &want)?;
    let len = xs[ax];
    if len == 0 {
        bail!("ArgMax/ArgMin over an empty axis");
    }
    let inner: usize = xs[ax + 1..].iter().product();
    let outer: usize = xs[..ax].iter().product();
    for o in 0..outer {
        for i in 0..inner {
            let at = |j: usize| x[(o * len + j) * inner + i];
            let mut best = 0;
            for j in 1..len {
                let (v, b) = (at(j), at(best));
                let better = if max { v > b } else { v < b };
                if better || (last && v == b) {
                    best = j;
                }
            }
            y[o * inner + i] = i64::try_from(best).unwrap_or(i64::MAX);
        }
    }
    Ok(())
}
