//! Constants that the importer folds but does not compute (a `Gather` from a constant table,
//! shape arithmetic, a `DequantizeLinear` of int8 weights): evaluated here, at build time, so
//! the network gets them as ordinary float32 or integer constants and never computes them at
//! run time.
//!
//! Most operators are evaluated with the network's own kernels (`memplan-kernels`), so a folded
//! value is exactly what the kernel would compute at run time. `DequantizeLinear` is done here,
//! as ONNX Runtime does it (`(x - zero_point)` in integers, then a float32 multiply by the scale),
//! because its int8 inputs exist only at build time.
//!
//! Every folded value is bounded by [`MAX_FOLDED_BYTES`]: a `ConstantOfShape` of a huge shape is
//! a message naming the node, not an allocation failure of the build. What the constants of a
//! network take together, each use counted (every constant loaded, every folded node's inputs,
//! outputs and scratch), is bounded by [`Held`]: a small multiple of the ONNX file and the
//! external data it names, as the TFLite reader bounds what it holds (its
//! `BUDGET_PER_FILE_BYTE` and `BUDGET_SLACK`), so that a file of a few kilobytes with twenty
//! `ConstantOfShape` nodes of 256 MiB each cannot make a build script hold gigabytes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use memplan_core::DType;
use memplan_kernels::{Attr, Attrs, Input, Output, OwnedData};
use memplan_onnx::{BUDGET_PER_FILE_BYTE, BUDGET_SLACK, FoldedNode, WeightData, WeightValue};

use crate::graph::AttrValue;

/// The most bytes one folded value may have (256 MiB).
pub const MAX_FOLDED_BYTES: u64 = 256 << 20;

/// What the constants of one ONNX network take at build time, each use counted: every weight
/// loaded, and every folded node's inputs, outputs and scratch. The most is
/// `BUDGET_PER_FILE_BYTE` (16) times the bytes of the ONNX file and of the external data files
/// its weights name, plus `BUDGET_SLACK` (16 MiB); an exporter writes each constant once, and
/// what folding derives from them (a float32 weight from its int8 one, shape arithmetic) is a
/// few times that.
pub(crate) struct Held {
    /// The ONNX file's bytes and the external data files' ...
    files_len: u64,
    /// ... (each counted once) ...
    files: BTreeSet<PathBuf>,
    /// ... and the bytes taken so far.
    used: u64,
}

impl Held {
    /// The budget of the network in the ONNX file at `path`.
    pub(crate) fn new(path: &Path) -> Self {
        Self {
            files_len: std::fs::metadata(path).map_or(0, |m| m.len()),
            files: BTreeSet::new(),
            used: 0,
        }
    }

    fn limit(&self) -> u64 {
        self.files_len
            .saturating_mul(BUDGET_PER_FILE_BYTE)
            .saturating_add(BUDGET_SLACK)
    }

    /// Takes what `value` holds once loaded (its external data file, when it has one, adds to
    /// the budget first), for `what` (`folded node `x` (Add)'s input 0`).
    fn load(&mut self, value: &WeightValue, what: &dyn Fn() -> String) -> Result<(), String> {
        if let WeightData::External { path, .. } = &value.data
            && self.files.insert(path.clone())
        {
            let len = std::fs::metadata(path).map_or(0, |m| m.len());
            self.files_len = self.files_len.saturating_add(len);
        }
        let bytes = value
            .shape
            .iter()
            .try_fold(value.dtype.size(), |n, &d| n.checked_mul(d))
            .unwrap_or(u64::MAX);
        self.take(bytes, what)
    }

    /// Takes `bytes` for `what`; why not, when the constants would hold more than the budget.
    fn take(&mut self, bytes: u64, what: &dyn Fn() -> String) -> Result<(), String> {
        match self.used.checked_add(bytes) {
            Some(used) if used <= self.limit() => {
                self.used = used;
                Ok(())
            }
            _ => Err(format!(
                "the constants would take more than {} bytes at build time when it comes to {} \
                 ({BUDGET_PER_FILE_BYTE} times the {} bytes of the ONNX file and its external \
                 data, plus {} MiB; each use of a constant counted)\n  = help: an exporter \
                 writes each constant once; this file makes its nodes read or compute far more \
                 constant data than it holds, which is almost certainly a malformed graph. \
                 Fold it offline (onnx-simplifier) or compute the value at run time",
                self.limit(),
                what(),
                self.files_len,
                BUDGET_SLACK >> 20
            )),
        }
    }
}

/// Folded nodes may feed each other; a chain longer than this is refused.
const MAX_DEPTH: usize = 64;

/// The kernels' dtype of a value folding evaluates with the kernels, or why it cannot: only
/// float32, int64, int32 and bool (int8 and uint8 are `DequantizeLinear`'s, decoded there).
fn folded_dtype(dtype: DType) -> Result<memplan_kernels::DType, String> {
    match dtype {
        DType::F32 => Ok(memplan_kernels::DType::F32),
        DType::I64 => Ok(memplan_kernels::DType::I64),
        DType::I32 => Ok(memplan_kernels::DType::I32),
        DType::Bool => Ok(memplan_kernels::DType::Bool),
        other => Err(format!("element type {} is not supported", other.name())),
    }
}

/// A folded node's input: its shape, dtype and little-endian bytes (`None` when absent).
type Loaded = Option<(Vec<usize>, DType, Vec<u8>)>;

/// Calls `f` with `attrs` in the kernels' borrowed form.
pub(crate) fn with_attrs<R>(attrs: &[(String, AttrValue)], f: impl FnOnce(&Attrs<'_>) -> R) -> R {
    let strs: Vec<Vec<&str>> = attrs
        .iter()
        .map(|(_, v)| match v {
            AttrValue::Strs(s) => s.iter().map(String::as_str).collect(),
            _ => Vec::new(),
        })
        .collect();
    let list: Vec<(&str, Attr<'_>)> = attrs
        .iter()
        .zip(&strs)
        .map(|((name, value), strs)| {
            let attr = match value {
                AttrValue::Int(i) => Attr::Int(*i),
                AttrValue::Float(x) => Attr::Float(*x),
                AttrValue::Str(s) => Attr::Str(s),
                AttrValue::Ints(v) => Attr::Ints(v),
                AttrValue::Floats(v) => Attr::Floats(v),
                AttrValue::Strs(_) => Attr::Strs(strs),
            };
            (name.as_str(), attr)
        })
        .collect();
    f(&Attrs::new(&list))
}

fn usizes(shape: &[u64]) -> Result<Vec<usize>, String> {
    shape
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| format!("dimension {d} does not fit in memory")))
        .collect()
}

/// The bytes of `(dtype, shape)`, or why they are too many to fold.
fn folded_bytes(what: &str, dtype: DType, shape: &[u64]) -> Result<u64, String> {
    let bytes = shape
        .iter()
        .try_fold(dtype.size(), |n, &d| n.checked_mul(d))
        .filter(|&n| n <= MAX_FOLDED_BYTES);
    bytes.ok_or_else(|| {
        format!(
            "{what}: its output {} {shape:?} is larger than the {} MiB a folded constant may have\n  = help: this value is computed from constants at build time; a constant this large is almost certainly a wrong shape in the model",
            dtype.name(),
            MAX_FOLDED_BYTES >> 20
        )
    })
}

/// A weight's bytes: read from the file, or computed by its folded node; what it takes (and,
/// for a folded one, what computing it takes) is taken from `held` first.
pub(crate) fn load(value: &WeightValue, held: &mut Held) -> Result<Vec<u8>, String> {
    match &value.data {
        WeightData::Computed(folded) => evaluate(folded, 0, held),
        _ => {
            held.load(value, &|| "its data".to_owned())?;
            value.load()
        }
    }
}

/// The little-endian bytes of `folded`'s output, each buffer taken from `held` before it is
/// allocated.
fn evaluate(folded: &FoldedNode, depth: usize, held: &mut Held) -> Result<Vec<u8>, String> {
    // The node's attributes as memplan's own, as the kernels' `Attrs` are made from them.
    let attrs: Vec<(String, AttrValue)> = folded
        .attrs
        .iter()
        .map(|(n, v)| (n.clone(), crate::onnx::attr(v.clone())))
        .collect();
    let what = format!("folded node `{}` ({})", folded.node, folded.op_type);
    if depth > MAX_DEPTH {
        return Err(format!(
            "{what}: more than {MAX_DEPTH} folded nodes in a chain"
        ));
    }
    // The outputs first: a node whose output is too large is refused before its inputs are
    // loaded.
    let mut outputs = Vec::new();
    for output in &folded.outputs {
        match output {
            Some(Ok((dtype, shape))) => {
                let bytes = folded_bytes(&what, *dtype, shape)?;
                held.take(bytes, &|| format!("{what}'s output"))?;
                outputs.push((usizes(shape)?, *dtype));
            }
            Some(Err(why)) => return Err(format!("{what}: an output is unknown: {why}")),
            None => break,
        }
    }
    let Some((out_shape, out_dtype)) = outputs.get(folded.output).cloned() else {
        return Err(format!("{what}: its output {} is unknown", folded.output));
    };
    // Every input's value (computed first if it is itself folded).
    let mut inputs: Vec<Loaded> = Vec::new();
    for (k, input) in folded.inputs.iter().enumerate() {
        inputs.push(match input {
            None => None,
            Some(Err(why)) => return Err(format!("{what}: an input is unknown: {why}")),
            Some(Ok(value)) => {
                let bytes = match &value.data {
                    WeightData::Computed(inner) => evaluate(inner, depth + 1, held)?,
                    _ => {
                        held.load(value, &|| format!("{what}'s input {k}"))?;
                        value
                            .load()
                            .map_err(|why| format!("{what}: an input: {why}"))?
                    }
                };
                Some((usizes(&value.shape)?, value.dtype, bytes))
            }
        });
    }
    if folded.op_type == "DequantizeLinear" {
        return dequantize(&what, &attrs, &inputs, &out_shape, out_dtype);
    }
    let ints: Vec<(&str, i64)> = attrs
        .iter()
        .filter_map(|(n, v)| match v {
            AttrValue::Int(i) => Some((n.as_str(), *i)),
            _ => None,
        })
        .collect();
    let strs: Vec<(&str, &str)> = attrs
        .iter()
        .filter_map(|(n, v)| match v {
            AttrValue::Str(s) => Some((n.as_str(), s.as_str())),
            _ => None,
        })
        .collect();
    memplan_kernels::supported::check_node(&folded.op_type, &ints, &strs)
        .map_err(|why| format!("{what} cannot be evaluated: {why}"))?;
    let typed: Vec<Option<(Vec<usize>, OwnedData)>> = inputs
        .iter()
        .map(|input| match input {
            None => Ok(None),
            Some((shape, dtype, bytes)) => OwnedData::from_le_bytes(folded_dtype(*dtype)?, bytes)
                .map(|b| Some((shape.clone(), b)))
                .map_err(|e| e.to_string()),
        })
        .collect::<Result<_, String>>()
        .map_err(|why| format!("{what}: an input: {why}"))?;
    let mut buffers: Vec<(Vec<usize>, OwnedData)> = Vec::new();
    for (shape, dtype) in &outputs {
        let n = shape.iter().product();
        buffers.push((shape.clone(), OwnedData::zeroed(folded_dtype(*dtype)?, n)));
    }
    let input_views: Vec<Input<'_>> = typed
        .iter()
        .map(|input| match input {
            None => Input::Absent,
            Some((shape, buffer)) => buffer.input(shape),
        })
        .collect();
    let input_shapes: Vec<Option<&[usize]>> = typed
        .iter()
        .map(|i| i.as_ref().map(|(s, _)| s.as_slice()))
        .collect();
    let output_shapes: Vec<&[usize]> = outputs.iter().map(|(s, _)| s.as_slice()).collect();
    with_attrs(&attrs, |attrs| {
        let words =
            memplan_kernels::scratch_len(&folded.op_type, attrs, &input_shapes, &output_shapes)
                .map_err(|e| format!("{what} cannot be evaluated: {e}"))?;
        held.take((words as u64).saturating_mul(8), &|| {
            format!("{what}'s scratch")
        })?;
        let mut scratch = vec![0u64; words];
        let mut output_views: Vec<Output<'_>> = buffers
            .iter_mut()
            .map(|(shape, buffer)| buffer.output(shape))
            .collect();
        memplan_kernels::run(
            &folded.op_type,
            attrs,
            &input_views,
            &mut output_views,
            &mut scratch,
        )
        .map_err(|e| format!("{what} cannot be evaluated: {e}"))
    })?;
    let _ = out_dtype;
    Ok(buffers[folded.output].1.to_le_bytes())
}

/// `DequantizeLinear(x, scale, zero_point)`: `(x - zero_point) * scale` per tensor or per axis
/// (`axis`, default 1), `x` int8, uint8 or int32, the result float32, as ONNX Runtime computes it.
fn dequantize(
    what: &str,
    attrs: &[(String, AttrValue)],
    inputs: &[Loaded],
    out_shape: &[usize],
    out_dtype: DType,
) -> Result<Vec<u8>, String> {
    let fail = |why: &str| Err(format!("{what} cannot be evaluated: {why}"));
    if out_dtype != DType::F32 {
        return fail("only a float32 output is supported");
    }
    let attr = |name: &str| attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v);
    if let Some(AttrValue::Int(b)) = attr("block_size")
        && *b != 0
    {
        return fail("blocked quantization (`block_size`) is not supported");
    }
    let (Some(Some((x_shape, x_dtype, x))), Some(Some((s_shape, s_dtype, s)))) =
        (inputs.first(), inputs.get(1))
    else {
        return fail("inputs `x` and `x_scale` are required");
    };
    if x_shape.as_slice() != out_shape {
        return fail("the output's shape is not the input's");
    }
    let values: Vec<i32> = match x_dtype {
        DType::I8 => x.iter().map(|&b| i32::from(b as i8)).collect(),
        DType::U8 => x.iter().map(|&b| i32::from(b)).collect(),
        DType::I32 => x
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        other => {
            return fail(&format!(
                "input `x` of type {} is not supported",
                other.name()
            ));
        }
    };
    if *s_dtype != DType::F32 {
        return fail("only a float32 scale is supported");
    }
    let scales: Vec<f32> = s
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let zero_points: Vec<i32> = match inputs.get(2) {
        Some(Some((_, dtype, z))) if dtype == x_dtype => match dtype {
            DType::I8 => z.iter().map(|&b| i32::from(b as i8)).collect(),
            DType::U8 => z.iter().map(|&b| i32::from(b)).collect(),
            _ => z
                .chunks_exact(4)
                .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        },
        Some(Some(_)) => return fail("the zero point's type is not the input's"),
        _ => vec![0; scales.len()],
    };
    if zero_points.len() != scales.len() {
        return fail("the zero point and the scale have different lengths");
    }
    let rank = x_shape.len();
    // Per tensor: one scale; per axis: one scale per index along `axis`.
    let (axis_len, inner) = if s_shape.iter().product::<usize>() == 1 && s_shape.len() <= 1 {
        (1, 1)
    } else {
        let axis = match attr("axis") {
            Some(AttrValue::Int(a)) => *a,
            _ => 1,
        };
        let r = i64::try_from(rank).unwrap_or(i64::MAX);
        let a = if axis < 0 { axis + r } else { axis };
        let Some(a) = usize::try_from(a).ok().filter(|&a| a < rank) else {
            return fail(&format!("axis {axis} is out of range for rank {rank}"));
        };
        if scales.len() != x_shape[a] {
            return fail("the scale's length is not the axis' size");
        }
        (x_shape[a], x_shape[a + 1..].iter().product())
    };
    let mut out = Vec::with_capacity(values.len() * 4);
    for (i, &q) in values.iter().enumerate() {
        let c = if axis_len == 1 {
            0
        } else {
            (i / inner) % axis_len
        };
        // ONNX Runtime subtracts in int32; an int32 input far from its zero point would wrap
        // there (and panic a build script here): refused instead.
        let Some(difference) = q.checked_sub(zero_points[c]) else {
            return fail(&format!(
                "element {i} minus its zero point, {q} - {}, does not fit in int32\n  = help: the zero point is out of range for these int32 values; the file is corrupt, export it again",
                zero_points[c]
            ));
        };
        // as ONNX Runtime: int32 difference to float
        let y = difference as f32 * scales[c];
        out.extend_from_slice(&y.to_le_bytes());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn constant(
        dtype: DType,
        shape: &[u64],
        bytes: Vec<u8>,
    ) -> Option<Result<WeightValue, String>> {
        Some(Ok(WeightValue {
            dtype,
            shape: shape.to_vec(),
            data: WeightData::Bytes(bytes),
        }))
    }

    /// `DequantizeLinear(x, scale 1, zero_point)` of int32 `x`, folded.
    fn dequantize_int32(x: i32, zero_point: i32) -> Result<Vec<u8>, String> {
        let folded = FoldedNode {
            node: "/dq/DequantizeLinear".to_owned(),
            op_type: "DequantizeLinear".to_owned(),
            inputs: vec![
                constant(DType::I32, &[1], x.to_le_bytes().to_vec()),
                constant(DType::F32, &[], 1f32.to_le_bytes().to_vec()),
                constant(DType::I32, &[], zero_point.to_le_bytes().to_vec()),
            ],
            attrs: Vec::new(),
            outputs: vec![Some(Ok((DType::F32, vec![1])))],
            output: 0,
        };
        evaluate(&folded, 0, &mut Held::new(Path::new("")))
    }

    #[test]
    fn issue_36_a_dequantize_folded_past_int32_is_refused_not_wrapped() {
        // In range: (5 - -3) * 1.
        assert_eq!(dequantize_int32(5, -3).unwrap(), 8f32.to_le_bytes());
        // i32::MAX - (-1) wraps in int32 (a panic with overflow checks).
        let error = dequantize_int32(i32::MAX, -1).unwrap_err();
        assert!(
            error.contains("folded node `/dq/DequantizeLinear` (DequantizeLinear)")
                && error.contains("2147483647 - -1, does not fit in int32")
                && error.contains("= help:"),
            "{error}"
        );
        let error = dequantize_int32(i32::MIN, 1).unwrap_err();
        assert!(error.contains("does not fit in int32"), "{error}");
    }
}
