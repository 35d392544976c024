//! The ONNX front end: from an ONNX file to a checked, planned network. Import it
//! (`memplan-onnx`), turn its nodes into memplan's own ([`crate::graph::Node`]: the ONNX types
//! stop here), check every node against the kernels, load every constant, then plan it as every
//! format is planned ([`prepare::finish`]).

use std::path::Path;

use memplan_core::DType;
use memplan_core::model_file::Layout;
use memplan_onnx::{ImportOptions, WeightValue};

use crate::dry_run::{MAX_DRY_RUN_TOTAL, dry_run};
use crate::fold;
use crate::fuse;
use crate::graph::{AttrValue, Constant, FuseReport, Node, OpInput, Prepared, kernel_dtype};
use crate::options::Options;
use crate::prepare;

/// An ONNX attribute as memplan's own.
pub(crate) fn attr(value: memplan_onnx::AttrValue) -> AttrValue {
    use memplan_onnx::AttrValue as Onnx;
    match value {
        Onnx::Int(i) => AttrValue::Int(i),
        Onnx::Float(f) => AttrValue::Float(f),
        Onnx::Str(s) => AttrValue::Str(s),
        Onnx::Ints(v) => AttrValue::Ints(v),
        Onnx::Floats(v) => AttrValue::Floats(v),
        Onnx::Strs(v) => AttrValue::Strs(v),
    }
}

/// The value of a one-element tensor attribute (`ConstantOfShape`'s `value`).
fn tensor_attr(value: &WeightValue) -> Result<AttrValue, String> {
    let bytes = value.load()?;
    if value.elements() != 1 {
        return Err(format!(
            "it has {} elements; the kernels take one-element tensor attributes only",
            value.elements()
        ));
    }
    let word4 = [bytes[0], bytes[1], bytes[2], bytes[3]];
    Ok(match value.dtype {
        DType::F32 => AttrValue::Float(f32::from_le_bytes(word4)),
        DType::I64 => AttrValue::Int(i64::from_le_bytes(
            bytes[..8]
                .try_into()
                .map_err(|_| "it is truncated".to_owned())?,
        )),
        DType::I32 => AttrValue::Int(i64::from(i32::from_le_bytes(word4))),
        DType::Bool | DType::U8 => AttrValue::Int(i64::from(bytes[0])),
        other => {
            return Err(format!(
                "its element type {} is not supported",
                other.name()
            ));
        }
    })
}

/// The sliding-window operators, whose `strides`, `dilations` and `kernel_shape` the kernels
/// check only when they run.
const WINDOWED: &[&str] = &[
    "AveragePool",
    "Conv",
    "ConvInteger",
    "ConvTranspose",
    "LpPool",
    "MaxPool",
    "QLinearConv",
];

/// Refuses a window of `op_type` whose `strides`, `dilations` or `kernel_shape` has a value
/// below 1, which every run would refuse (`supported::check_node` sees scalar attributes only).
fn check_window(op_type: &str, attrs: &[(String, AttrValue)]) -> Result<(), String> {
    if !WINDOWED.contains(&op_type) {
        return Ok(());
    }
    for (name, value) in attrs {
        if let ("strides" | "dilations" | "kernel_shape", AttrValue::Ints(values)) =
            (name.as_str(), value)
            && values.iter().any(|&v| v < 1)
        {
            return Err(format!(
                "attribute `{name}` is {values:?}: each value must be at least 1\n  = help: the file is corrupt; export the model again"
            ));
        }
    }
    Ok(())
}

/// Operators some of whose inputs are parameters read by value (scales, zero points, sizes, a
/// range's bounds, a ratio) even when they are not integers: zeros there may be refused where
/// the real values are not (a scale computed by DynamicQuantizeLinear, a Resize's scales).
const VALUE_PARAMETERS: &[&str] = &[
    "DequantizeLinear",
    "Dropout",
    "DynamicQuantizeLinear",
    "OneHot",
    "QGemm",
    "QLinearAdd",
    "QLinearConv",
    "QLinearGlobalAveragePool",
    "QLinearMatMul",
    "QLinearMul",
    "QuantizeLinear",
    "Range",
    "Resize",
    "Upsample",
];

/// Whether `node`'s kernel may refuse the values of an activation it reads, not only its shapes
/// and attributes: an integer activation (indices, shapes, divisors, a `k`) or a parameter of
/// [`VALUE_PARAMETERS`] computed at run time. Such a node is not dry-run on zeros, which its
/// real inputs need not be.
fn reads_values(node: &Node, tensors: &[(DType, Vec<usize>)]) -> bool {
    node.inputs
        .iter()
        .enumerate()
        .any(|(k, input)| match *input {
            OpInput::Tensor(t) => {
                let integer = tensors
                    .get(t)
                    .is_none_or(|(dtype, _)| matches!(dtype, DType::I64 | DType::I32));
                integer || (k > 0 && VALUE_PARAMETERS.contains(&node.op_type.as_str()))
            }
            _ => false,
        })
}

/// Imports, checks and plans the ONNX file at `path`.
pub(crate) fn prepare(path: &Path, options: &Options) -> Result<Prepared, String> {
    let import = ImportOptions {
        name: options.name.clone(),
        inplace: options.inplace,
        alignment: options.alignment,
        ..ImportOptions::default()
    };
    let imported = memplan_onnx::import_file(path, &import).map_err(|e| e.message)?;
    let graph = &imported.graph;
    let mut model = imported.model;
    for note in &imported.notes {
        if note.starts_with("graph output") {
            return Err(format!(
                "{note}\n  = help: every graph output must be computed at run time; remove constant outputs from the graph"
            ));
        }
    }

    // 1. Every node is one the kernels implement, with attributes they implement.
    let mut nodes = Vec::with_capacity(graph.ops.len());
    for (k, op) in graph.ops.iter().enumerate() {
        let label = if op.node.is_empty() {
            format!("{}_{k}", op.op_type)
        } else {
            op.node.clone()
        };
        let what = format!("node `{label}` ({})", op.op_type);
        let microsoft = op.domain == "com.microsoft"
            && memplan_kernels::supported::SUPPORTED_MICROSOFT_OPS
                .binary_search(&op.op_type.as_str())
                .is_ok();
        if !(op.domain.is_empty() || op.domain == "ai.onnx" || microsoft) {
            return Err(format!(
                "{what}: operator `{}` of domain `{}` is not supported\n  = help: the kernels implement the default ONNX domain and, of `com.microsoft`, {}; export without other custom operators",
                op.op_type,
                op.domain,
                memplan_kernels::supported::SUPPORTED_MICROSOFT_OPS.join(" ")
            ));
        }
        if op.outputs.contains(&None) {
            return Err(format!(
                "{what}: an optional output is left out before one that is used\n  = help: outputs are passed by position; export the model with every output up to the last one used"
            ));
        }
        if let Some(name) = op.other_attrs.first() {
            return Err(format!(
                "{what}: attribute `{name}` is graph- or type-valued, which the kernels do not support"
            ));
        }
        let mut attrs: Vec<(String, AttrValue)> = op
            .attrs
            .iter()
            .map(|(name, value)| (name.clone(), attr(value.clone())))
            .collect();
        for (name, value) in &op.tensor_attrs {
            let value = value
                .as_ref()
                .map_err(Clone::clone)
                .and_then(tensor_attr)
                .map_err(|why| format!("{what}: tensor attribute `{name}`: {why}"))?;
            attrs.push((name.clone(), value));
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
        memplan_kernels::supported::check_node(&op.op_type, &ints, &strs).map_err(|why| {
            format!(
                "{what}: {why}\n  = help: the kernels implement: {}",
                memplan_kernels::supported::SUPPORTED_OPS.join(" ")
            )
        })?;
        check_window(&op.op_type, &attrs).map_err(|why| format!("{what}: {why}"))?;
        nodes.push(Node {
            label,
            op_type: op.op_type.clone(),
            attrs,
            // The importer's operands are memplan's own (`memplan_core::model_file::OpInput`).
            inputs: op.inputs.clone(),
            outputs: op.outputs.iter().flatten().copied().collect(),
            scratch: None,
            overwrites: false,
            stage: None,
        });
    }

    // 2. Constants.
    let mut constants = Vec::with_capacity(graph.weights.len());
    let mut files = Vec::new();
    let mut held = fold::Held::new(path);
    for weight in &graph.weights {
        // A message with its own help (a folded value too large) keeps it; the others blame
        // the file.
        let fail = |why: &str| {
            let help = if why.contains("\n  = help:") {
                ""
            } else {
                "\n  = help: check that the ONNX file (and its external data) is complete; export it again"
            };
            format!("weight `{}`: {why}{help}", weight.source)
        };
        let value = weight.value.as_ref().map_err(|why| fail(why))?;
        if let memplan_onnx::WeightData::External { path, .. } = &value.data {
            files.push(path.clone());
        }
        kernel_dtype(value.dtype).map_err(|why| fail(&why))?;
        let bytes = fold::load(value, &mut held).map_err(|why| fail(&why))?;
        constants.push(Constant {
            onnx: weight.source.clone(),
            dtype: value.dtype,
            shape: value.shape.clone(),
            bytes,
        });
    }

    // 2b. The kernels' own checks of shapes and attributes, on zeros, now rather than in the
    // first run (as for TFLite: `dry_run.rs`).
    let tensors: Vec<(DType, Vec<usize>)> = model
        .tensors
        .iter()
        .zip(&graph.tensor_shapes)
        .map(|(t, shape)| {
            let dtype = match &t.layout {
                Layout::Typed { dtype, .. } => *dtype,
                _ => DType::U8,
            };
            (dtype, shape.iter().map(|&d| d as usize).collect())
        })
        .collect();
    let mut work = MAX_DRY_RUN_TOTAL;
    for node in &nodes {
        if reads_values(node, &tensors) {
            continue;
        }
        dry_run(node, &tensors, &constants, &mut work).map_err(|why| {
            format!(
                "node `{}` ({}): the kernel refuses it: {why}\n  = help: every run of the network would fail here: the node's shapes or attributes in the file do not fit each other; export the model again (and check it with `onnx.checker.check_model(model, full_check=True)`)",
                node.label, node.op_type
            )
        })?;
    }

    // 3. Build-time work: normalizations, biases and activations fused, weights packed.
    let mut shapes = graph.tensor_shapes.clone();
    let fused = if options.fuse {
        fuse::fuse(&mut model, &mut shapes, &mut nodes, &mut constants)
    } else {
        FuseReport::default()
    };

    let planned = prepare::finish(path, options, model, shapes, nodes, &constants)?;
    Ok(planned.with(constants, files, fused))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_36_a_window_stride_of_zero_is_refused() {
        let attrs =
            |name: &str, values: &[i64]| vec![(name.to_owned(), AttrValue::Ints(values.to_vec()))];
        assert_eq!(
            check_window("ConvTranspose", &attrs("strides", &[2, 2])),
            Ok(())
        );
        let error = check_window("ConvTranspose", &attrs("strides", &[1, 0])).unwrap_err();
        assert!(
            error.starts_with("attribute `strides` is [1, 0]: each value must be at least 1")
                && error.contains("= help:"),
            "{error}"
        );
        assert!(check_window("Conv", &attrs("dilations", &[-1, 1])).is_err());
        assert!(check_window("MaxPool", &attrs("kernel_shape", &[0, 3])).is_err());
        // Other operators' lists are theirs (`Slice`'s steps may be negative).
        assert_eq!(check_window("Slice", &attrs("strides", &[-1])), Ok(()));
    }
}
