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

impl Kind {
    /// For the reductions that sum one term an element (from -0), the term.
    fn term(self) -> Option<fn(f32) -> f32> {
        match self {
            Kind::Sum | Kind::Mean | Kind::LogSum => Some(|v| v),
            Kind::SumSquare | Kind::L2 => Some(|v| v * v),
            Kind::L1 => Some(f32::abs),
            Kind::Max | Kind::Min | Kind::Prod | Kind::LogSumExp => None,
        }
    }

    /// Such a reduction's value from its sum of `n` terms.
    fn finish(self, sum: f32, n: f32) -> f32 {
        match self {
            Kind::Mean => sum / n,
            Kind::L2 => crate::fast_math::sqrt(sum),
            Kind::LogSum => libm::logf(sum),
            _ => sum,
        }
    }
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
    // reduced counts are far below 2^24
    let n = count as f32;
    // A sum over one block of adjacent axes (`x` seen as [outer, count, inner]): each output
    // adds the rows of its block in order, a whole row of `inner` outputs at a time, the same
    // additions in the same order as the walk below.
    let block_end = match (axes.first(), axes.last()) {
        (Some(&first), Some(&last)) if last + 1 == first + axes.len() => Some(last + 1),
        _ => None, // (a scalar has no axis to reduce)
    };
    if let (Some(end), Some(term)) = (block_end, kind.term()) {
        let inner: usize = xs[end..].iter().product();
        sum_blocks(x, y, count, inner, term);
        for v in y.iter_mut() {
            *v = kind.finish(*v, n);
        }
        return Ok(());
    }
    // Output element `o` reduces the input elements `base + r`: `base` walks the kept dimensions
    // (in output order), `r` the reduced ones (in row-major input order).
    let xst = strides(xs)?;
    let base_strides: Dims =
        collect((0..xs.len()).map(|d| if axes.contains(&d) { 0 } else { xst[d] }))?;
    let reduced: Dims = collect((0..xs.len()).map(|d| if axes.contains(&d) { xs[d] } else { 1 }))?;
    let reduced_strides: Dims =
        collect((0..xs.len()).map(|d| if axes.contains(&d) { xst[d] } else { 0 }))?;
    let reduced_strides = [reduced_strides];
    let mut failed = None;
    for_each(&kept, &[base_strides], |o, base| {
        let r = Reduced {
            x,
            base: base[0],
            shape: &reduced,
            strides: &reduced_strides,
        };
        let max = |a: f32, v: f32| if v > a { v } else { a };
        // Sums start from -0, the identity of IEEE addition: a sum of -0s is -0, as ONNX
        // Runtime's (which starts from the first element) is.
        let value = match (kind, kind.term()) {
            (_, Some(term)) => r.fold(-0.0, |a, v| a + term(v)).map(|s| kind.finish(s, n)),
            (Kind::Max, _) => r.fold_first(max),
            (Kind::Min, _) => r.fold_first(|a, v| if v < a { v } else { a }),
            (Kind::Prod, _) => r.fold(1.0, |a, v| a * v),
            // LogSumExp: log(sum(e^(x - m))) + m, m the maximum (0 if infinite), as ONNX Runtime
            // computes it: large x do not overflow.
            (_, None) => r.fold_first(max).and_then(|m| {
                let m = if m.is_infinite() { 0.0 } else { m };
                r.fold(0.0, |a, v| a + libm::expf(v - m))
                    .map(|s| libm::logf(s) + m)
            }),
        };
        match value {
            Ok(v) => y[o] = v,
            Err(e) => failed = Some(e),
        }
    })?;
    match failed {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// `y[o][i] = -0 + term(x[o][0][i]) + term(x[o][1][i]) + ...` for `x` as [outer, `count`,
/// `inner`] and `y` as [outer, `inner`], each sum in increasing row order (from -0, the identity
/// of IEEE addition).
fn sum_blocks(x: &[f32], y: &mut [f32], count: usize, inner: usize, term: fn(f32) -> f32) {
    if inner == 0 {
        return;
    }
    for (block, sums) in x.chunks_exact(count * inner).zip(y.chunks_exact_mut(inner)) {
        sums.fill(-0.0);
        for row in block.chunks_exact(inner) {
            for (s, &v) in sums.iter_mut().zip(row) {
                *s += term(v);
            }
        }
    }
}

/// The input elements one output element of a reduction reduces: `x[base + offset]` for the
/// offsets of `shape` (the reduced dimensions, 1 elsewhere) through `strides`.
struct Reduced<'a> {
    x: &'a [f32],
    base: usize,
    shape: &'a [usize],
    strides: &'a [Dims; 1],
}

impl Reduced<'_> {
    /// `f(...f(f(init, x0), x1)..., xn)` in row-major order.
    fn fold(&self, init: f32, f: impl Fn(f32, f32) -> f32) -> Result<f32, KernelError> {
        let mut acc = init;
        for_each(self.shape, self.strides, |_, r| {
            acc = f(acc, self.x[self.base + r[0]]);
        })?;
        Ok(acc)
    }

    /// `f(...f(x0, x1)..., xn)`: starting from the first element, as ONNX Runtime's ReduceMax
    /// and ReduceMin do, so with `v > acc` (or `v < acc`) a NaN first element is the result and
    /// a NaN later one is ignored.
    fn fold_first(&self, f: impl Fn(f32, f32) -> f32) -> Result<f32, KernelError> {
        let mut acc = None;
        for_each(self.shape, self.strides, |_, r| {
            let v = self.x[self.base + r[0]];
            acc = Some(acc.map_or(v, |a| f(a, v)));
        })?;
        Ok(acc.unwrap_or(f32::NAN))
    }
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

#[cfg(test)]
mod block_tests {
    use super::*;
    use crate::Attr;
    use crate::tensor::{Data, DataMut};
    use std::vec;
    use std::vec::Vec;

    /// A sum over adjacent axes (the row-by-row path) equals the element-by-element sums in
    /// row-major order, bit for bit, for every reduction that takes it.
    #[test]
    fn sums_over_adjacent_axes_are_the_in_order_sums() {
        let xs = [2usize, 3, 4, 5];
        let x: Vec<f32> = (0..120)
            .map(|i| ((i * 29) % 17) as f32 * 0.731 - 5.5)
            .collect();
        for axes in [&[1i64][..], &[1, 2], &[2, 3], &[3], &[0, 1, 2, 3], &[-2]] {
            let resolved: Vec<usize> = axes
                .iter()
                .map(|&a| if a < 0 { (a + 4) as usize } else { a as usize })
                .collect();
            let kept: Vec<usize> = (0..4)
                .map(|d| if resolved.contains(&d) { 1 } else { xs[d] })
                .collect();
            let outputs_len: usize = kept.iter().product();
            let count = resolved.iter().map(|&a| xs[a]).product::<usize>() as f32;
            // Each reduction: its term, and its value from the sum of `count` terms.
            type Term = fn(f32) -> f32;
            type Finish = fn(f32, f32) -> f32;
            let (same, square): (Term, Term) = (|v| v, |v| v * v);
            let sum: Finish = |s, _| s;
            for (op, term, finish) in [
                ("ReduceSum", same, sum),
                ("ReduceMean", same, |s, n| s / n),
                ("ReduceSumSquare", square, sum),
                ("ReduceL1", f32::abs, sum),
                ("ReduceL2", square, |s, _| crate::fast_math::sqrt(s)),
                ("ReduceLogSum", same, |s, _| libm::logf(s)),
            ] {
                let list = [("axes", Attr::Ints(axes))];
                let mut y = vec![0.0f32; outputs_len];
                let inputs = [Input::Value {
                    shape: &xs,
                    data: Data::F32(&x),
                }];
                let mut outputs = [Output {
                    shape: &kept,
                    data: DataMut::F32(&mut y),
                }];
                run(op, &Attrs::new(&list), &inputs, &mut outputs)
                    .unwrap()
                    .unwrap();
                // The in-order sum of each output's elements.
                let mut want = vec![-0.0f32; outputs_len];
                for (i, &v) in x.iter().enumerate() {
                    let idx = [i / 60, i / 20 % 3, i / 5 % 4, i % 5];
                    let o = (0..4).fold(0, |o, d| {
                        o * kept[d] + if resolved.contains(&d) { 0 } else { idx[d] }
                    });
                    want[o] += term(v);
                }
                for w in &mut want {
                    *w = finish(*w, count);
                }
                let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&y), bits(&want), "{op} over {axes:?}");
            }
        }
    }
}
