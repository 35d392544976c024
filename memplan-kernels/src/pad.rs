//! Pad: each dimension grown by `pads[d]` elements at its start and `pads[d + rank]` at its end
//! (negative values crop), the new elements a constant (`mode = constant`, the optional
//! `constant_value` input, default 0), the nearest edge element (`edge`), the mirror image
//! without repeating the edge (`reflect`) or the other end of the tensor (`wrap`).
//!
//! Pads and axes come from inputs (opset 11+, axes 18+) or the `pads`/`value` attributes (opset 2).

use super::attrs::Attrs;
use super::error::{KernelError, bail};
use super::reshape::resolve_axes;
use super::tensor::{
    Data, Dims, Elem, Input, MAX_RANK, Output, collect, dims_filled, dispatch, expect_shape,
    opt_ints, opt_value, out_dtype, output, push, strides, typed,
};

/// How positions outside the input are filled.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Constant,
    Edge,
    Reflect,
    Wrap,
}

/// The input position read for position `i` (relative to the input start) along a dimension of
/// size `n`, `None` for the constant.
fn source(mode: Mode, i: i64, n: i64) -> Option<i64> {
    if (0..n).contains(&i) {
        return Some(i);
    }
    match mode {
        Mode::Constant => None,
        Mode::Edge => Some(i.clamp(0, n - 1)),
        Mode::Wrap => Some(i.rem_euclid(n)),
        Mode::Reflect => {
            if n == 1 {
                return Some(0);
            }
            // Reflection has period 2 (n - 1).
            let p = 2 * (n - 1);
            let r = i.rem_euclid(p);
            Some(if r < n { r } else { p - r })
        }
    }
}

/// Pad.
pub(crate) fn pad(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    fn typed_pad<T: Elem>(
        attrs: &Attrs<'_>,
        inputs: &[Input<'_>],
        outputs: &mut [Output<'_>],
        mode: Mode,
    ) -> Result<(), KernelError> {
        let (xs, x) = typed::<T>(inputs, 0)?;
        let rank = xs.len();
        let pads = match opt_ints(inputs, 1)? {
            Some(p) => p,
            None => collect(attrs.ints("pads")?.unwrap_or(&[]).iter().copied())?,
        };
        let axes: Dims = match opt_ints(inputs, 3)? {
            Some(a) => resolve_axes(&a, rank)?,
            None => collect(0..rank)?,
        };
        if pads.len() != 2 * axes.len() {
            bail!("{} pads for {} axes", pads.len(), axes.len());
        }
        if pads.iter().any(|p| p.unsigned_abs() > 1 << 24) {
            bail!("pads {pads:?} are too large");
        }
        let mut begin = [0i64; MAX_RANK];
        let mut end = [0i64; MAX_RANK];
        for (k, &a) in axes.iter().enumerate() {
            begin[a] = pads[k];
            end[a] = pads[k + axes.len()];
        }
        let constant = match opt_value(inputs, 2)? {
            None => None,
            Some((_, d)) if d.is_empty() => None,
            Some((_, d)) => match T::slice(d) {
                Some(v) => Some(v[0]),
                None => bail!(
                    "constant_value is {}, expected {}",
                    d.dtype().name(),
                    T::DTYPE.name()
                ),
            },
        };
        // the opset-2 float `value` of a float tensor
        let constant = match (constant, attrs.opt_float("value")?) {
            (Some(c), _) => c,
            (None, Some(v)) => match T::slice(Data::F32(&[v])) {
                Some(s) => s[0],
                None => T::default(),
            },
            (None, None) => T::default(),
        };
        let mut want = Dims::new();
        for d in 0..rank {
            let n = i64::try_from(xs[d]).unwrap_or(i64::MAX) + begin[d] + end[d];
            match usize::try_from(n) {
                Ok(n) => push(&mut want, n)?,
                Err(_) => bail!("pads {pads:?} crop dimension {d} of {xs:?} below zero"),
            }
        }
        let (ys, y) = output::<T>(outputs, 0)?;
        expect_shape(0, ys, &want)?;
        if y.is_empty() {
            return Ok(());
        }
        if mode != Mode::Constant && xs.contains(&0) {
            bail!(
                "cannot {} an empty input",
                if mode == Mode::Edge {
                    "edge-pad"
                } else {
                    "reflect"
                }
            );
        }
        // Per dimension, the input offset of the output index (None: the constant), computed
        // on the fly.
        let xst = strides(xs)?;
        let offset = |d: usize, o: usize| -> Option<usize> {
            let n = i64::try_from(xs[d]).unwrap_or(i64::MAX);
            let i = i64::try_from(o).unwrap_or(i64::MAX) - begin[d];
            source(mode, i, n)
                .and_then(|s| usize::try_from(s).ok())
                .map(|s| s * xst[d])
        };
        let mut index = dims_filled(0, rank)?;
        for v in y.iter_mut() {
            let mut off = Some(0usize);
            for d in 0..rank {
                off = off.and_then(|o| offset(d, index[d]).map(|m| o + m));
            }
            *v = match off {
                Some(o) => match x.get(o) {
                    Some(&e) => e,
                    None => bail!("pad offset {o} is outside the input"),
                },
                None => constant,
            };
            for d in (0..rank).rev() {
                index[d] += 1;
                if index[d] < ys[d] {
                    break;
                }
                index[d] = 0;
            }
        }
        Ok(())
    }
    let mode = match attrs.str("mode", "constant")? {
        "constant" => Mode::Constant,
        "edge" => Mode::Edge,
        "reflect" => Mode::Reflect,
        "wrap" => Mode::Wrap,
        other => bail!("mode {other:?} is not supported"),
    };
    dispatch!(
        out_dtype(outputs, 0)?,
        typed_pad(attrs, inputs, outputs, mode)
    )
}

#[cfg(test)]
mod tests {
    use super::{Mode, source};
    use std::vec::Vec;

    #[test]
    fn sources_per_mode() {
        // n = 3: positions -2..5.
        let reflect: Vec<_> = (-2..5).map(|i| source(Mode::Reflect, i, 3)).collect();
        assert_eq!(reflect, [2, 1, 0, 1, 2, 1, 0].map(Some));
        let edge: Vec<_> = (-2..5).map(|i| source(Mode::Edge, i, 3)).collect();
        assert_eq!(edge, [0, 0, 0, 1, 2, 2, 2].map(Some));
        let wrap: Vec<_> = (-2..5).map(|i| source(Mode::Wrap, i, 3)).collect();
        assert_eq!(wrap, [1, 2, 0, 1, 2, 0, 1].map(Some));
        assert_eq!(source(Mode::Constant, -1, 3), None);
        assert_eq!(source(Mode::Constant, 2, 3), Some(2));
    }
}
