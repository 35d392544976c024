//! Operators that change only the shape, not the elements: Reshape, Flatten, Squeeze,
//! Unsqueeze, Identity and Dropout (inference: the identity).
//!
//! The elements are copied unchanged; in place there is nothing to do. Each kernel still
//! recomputes the output shape from the input shape and attributes and checks it against the
//! caller's, so a wrong static shape is an error, not a silent reinterpretation.

use super::attrs::Attrs;
use super::error::{KernelError, bail};
use super::tensor::{
    Data, Dims, Input, Ints, Output, axis, collect, copy_input, dispatch, expect_shape, numel,
    opt_ints, opt_value, out_dtype, output, present, push, try_collect,
};

/// The shape of input `i` (value or in place).
pub(crate) fn input_shape<'a>(inputs: &[Input<'a>], i: usize) -> Result<&'a [usize], KernelError> {
    match present(inputs, i) {
        Some(Input::Value { shape, .. } | Input::InPlace { shape, .. }) => Ok(shape),
        _ => bail!("input {i} is required"),
    }
}

/// Copies input 0 to output 0 (unless in place), after checking the computed shape.
fn reshaped(
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    computed: &[usize],
) -> Result<(), KernelError> {
    let Some(out) = outputs.first() else {
        bail!("output 0 is required");
    };
    expect_shape(0, out.shape, computed)?;
    dispatch!(out_dtype(outputs, 0)?, copy_input(inputs, 0, outputs, 0))
}

/// Runs the operator `op` of this family, if it is one.
pub(crate) fn run(
    op: &str,
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Option<Result<(), KernelError>> {
    let shape = match op {
        "Reshape" => reshape_shape(attrs, inputs),
        "Flatten" => flatten_shape(attrs, inputs),
        "Squeeze" => squeeze_shape(attrs, inputs),
        "Unsqueeze" => unsqueeze_shape(attrs, inputs),
        "Identity" => input_shape(inputs, 0).and_then(|s| collect(s.iter().copied())),
        "Dropout" => return Some(dropout(inputs, outputs)),
        _ => return None,
    };
    Some(shape.and_then(|s| reshaped(inputs, outputs, &s)))
}

/// Reshape: the `shape` input, 0 copying the input dimension (unless `allowzero`), one -1
/// inferred from the element count.
fn reshape_shape(attrs: &Attrs<'_>, inputs: &[Input<'_>]) -> Result<Dims, KernelError> {
    let in_shape = input_shape(inputs, 0)?;
    let Some(target) = opt_ints(inputs, 1)? else {
        bail!("input 1 (shape) is required");
    };
    let allow_zero = attrs.int("allowzero", 0)? != 0;
    let mut out = Dims::new();
    let mut infer = None;
    for (d, &t) in target.iter().enumerate() {
        let n = match t {
            -1 if infer.is_none() => {
                infer = Some(d);
                1
            }
            0 if !allow_zero => match in_shape.get(d) {
                Some(&n) => n,
                None => bail!(
                    "shape {target:?} copies dimension {d}, the input has rank {}",
                    in_shape.len()
                ),
            },
            t => match usize::try_from(t) {
                Ok(n) => n,
                Err(_) => bail!("shape {target:?} has an invalid dimension {t}"),
            },
        };
        push(&mut out, n)?;
    }
    let total = numel(in_shape)?;
    if let Some(d) = infer {
        let known = numel(&out)?;
        if known == 0 || total % known != 0 {
            bail!("cannot reshape {in_shape:?} to {target:?}");
        }
        out[d] = total / known;
    }
    if numel(&out)? != total {
        bail!("cannot reshape {in_shape:?} to {target:?}");
    }
    Ok(out)
}

/// Flatten: a 2-D shape, dimensions before `axis` and from `axis` on multiplied.
fn flatten_shape(attrs: &Attrs<'_>, inputs: &[Input<'_>]) -> Result<Dims, KernelError> {
    let in_shape = input_shape(inputs, 0)?;
    let a = attrs.int("axis", 1)?;
    // axis may equal the rank (everything in the first dimension).
    let split = if a == i64::try_from(in_shape.len()).unwrap_or(i64::MAX) {
        in_shape.len()
    } else {
        axis(a, in_shape.len())?
    };
    collect([numel(&in_shape[..split])?, numel(&in_shape[split..])?])
}

/// The axes of Squeeze/Unsqueeze: input 1 (opset 13+) or the `axes` attribute.
fn axes_list(attrs: &Attrs<'_>, inputs: &[Input<'_>]) -> Result<Option<Ints>, KernelError> {
    match opt_ints(inputs, 1)? {
        Some(a) => Ok(Some(a)),
        None => match attrs.ints("axes")? {
            Some(a) => collect(a.iter().copied()).map(Some),
            None => Ok(None),
        },
    }
}

/// Resolves `axes` against `rank`, sorted, rejecting repeats (so at most `rank` of them, at most
/// [`MAX_RANK`](super::tensor::MAX_RANK)).
pub(crate) fn resolve_axes(axes: &[i64], rank: usize) -> Result<Dims, KernelError> {
    if axes.len() > rank {
        // Every axis is below `rank`: some repeat.
        bail!("axes {axes:?} repeat an axis");
    }
    let mut out: Dims = try_collect(axes.iter().map(|&a| axis(a, rank)))?;
    out.sort_unstable();
    if out.windows(2).any(|w| w[0] == w[1]) {
        bail!("axes {axes:?} repeat an axis");
    }
    Ok(out)
}

/// Squeeze: the listed dimensions (which must be 1) removed, or every 1 without a list.
fn squeeze_shape(attrs: &Attrs<'_>, inputs: &[Input<'_>]) -> Result<Dims, KernelError> {
    let in_shape = input_shape(inputs, 0)?;
    match axes_list(attrs, inputs)? {
        None => collect(in_shape.iter().copied().filter(|&d| d != 1)),
        Some(axes) => {
            let axes = resolve_axes(&axes, in_shape.len())?;
            for &a in &axes {
                if in_shape[a] != 1 {
                    bail!(
                        "cannot squeeze axis {a} of size {} in {in_shape:?}",
                        in_shape[a]
                    );
                }
            }
            collect(
                in_shape
                    .iter()
                    .enumerate()
                    .filter(|(d, _)| !axes.contains(d))
                    .map(|(_, &n)| n),
            )
        }
    }
}

/// Unsqueeze: a 1 inserted at each listed axis of the output.
fn unsqueeze_shape(attrs: &Attrs<'_>, inputs: &[Input<'_>]) -> Result<Dims, KernelError> {
    let in_shape = input_shape(inputs, 0)?;
    let Some(axes) = axes_list(attrs, inputs)? else {
        bail!("axes are required");
    };
    let rank = in_shape.len() + axes.len();
    let axes = resolve_axes(&axes, rank)?;
    let mut rest = in_shape.iter();
    let mut out = Dims::new();
    for d in 0..rank {
        let n = if axes.contains(&d) {
            1
        } else {
            match rest.next() {
                Some(&n) => n,
                None => bail!("axes {axes:?} do not fit rank {rank}"),
            }
        };
        push(&mut out, n)?;
    }
    Ok(out)
}

/// Dropout at inference: output 0 is the input, the optional mask output 1 all true.
fn dropout(inputs: &[Input<'_>], outputs: &mut [Output<'_>]) -> Result<(), KernelError> {
    if let Some((_, Data::Bool(t))) = opt_value(inputs, 2)?
        && t.iter().any(|&b| b != 0)
    {
        bail!("training mode is not supported");
    }
    let shape = input_shape(inputs, 0)?;
    reshaped(inputs, outputs, shape)?;
    if outputs.len() > 1 {
        let (mask_shape, mask) = output::<u8>(outputs, 1)?;
        expect_shape(1, mask_shape, shape)?;
        mask.fill(1);
    }
    Ok(())
}
