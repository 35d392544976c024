//! From an ONNX file to a checked, planned network: import it (`memplan-onnx`), check every node
//! against the kernels, give the graph's inputs and outputs to the caller (`external`), declare
//! each node's scratch as a tensor of its own, load every constant, and plan the arena.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use memplan_core::model_file::Layout;
use memplan_core::model_file::names::UniqueNames;
use memplan_core::model_plan::ModelPlan;
use memplan_core::{DType, Model, Tensor, lower_bound};
use memplan_onnx::{AttrValue, ImportOptions, OpInput, WeightValue};

use crate::dry_run::{MAX_DRY_RUN_TOTAL, dry_run};
use crate::fold;
use crate::fuse;
use crate::graph::{Constant, FuseReport, Node, Prepared, kernel_dtype};
use crate::options::Options;
use crate::patches;
use crate::ram_budget;
use crate::specialise;

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
        let mut attrs = op.attrs.clone();
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

    let planned = finish(path, options, model, shapes, nodes, &constants)?;
    Ok(planned.with(constants, files, fused))
}

/// A network checked and planned, before its constants are attached.
pub(crate) struct Planned {
    pub(crate) model: Model,
    pub(crate) plan: ModelPlan,
    toml: String,
    shapes: Vec<Vec<u64>>,
    values: usize,
    pub(crate) nodes: Vec<Node>,
    pub(crate) table_nodes: Vec<Node>,
    pub(crate) bound_without_sharing: u64,
    sum_of_sizes: u64,
}

impl Planned {
    /// The prepared network with its `constants` (what `OpInput::Weight` indexes) and the
    /// `files` read besides the model.
    pub(crate) fn with(
        self,
        constants: Vec<Constant>,
        files: Vec<PathBuf>,
        fused: FuseReport,
    ) -> Prepared {
        Prepared {
            fused,
            model: self.model,
            plan: self.plan,
            toml: self.toml,
            shapes: self.shapes,
            values: self.values,
            nodes: self.nodes,
            table_nodes: self.table_nodes,
            constants,
            files,
            bound_without_sharing: self.bound_without_sharing,
            sum_of_sizes: self.sum_of_sizes,
        }
    }
}

/// The steps every format shares once its graph is a memplan model and nodes the kernels run:
/// the tensors' dtypes, the graph inputs and outputs given to the caller, each node's scratch,
/// the solver options, the model file written and read back, and the plan. `shapes` are the
/// model tensors' shapes as the format gives them (`[]` for a scalar), `constants` what
/// `OpInput::Weight` indexes.
pub(crate) fn finish(
    path: &Path,
    options: &Options,
    mut model: Model,
    shapes: Vec<Vec<u64>>,
    nodes: Vec<Node>,
    constants: &[Constant],
) -> Result<Planned, String> {
    // Tensors the kernels can hold; graph inputs and outputs.
    for tensor in &model.tensors {
        let Layout::Typed { dtype, .. } = &tensor.layout else {
            return Err(format!("tensor `{}` is untyped", tensor.name));
        };
        let onnx = tensor.source.as_deref().unwrap_or(&tensor.name);
        kernel_dtype(*dtype).map_err(|why| {
            format!(
                "value `{onnx}`: {why}\n  = help: convert or export the model with tensors of those types (float16 and float64 ones as float32)"
            )
        })?;
    }
    if model.inputs.is_empty() {
        return Err("the graph has no input that is not a weight\n  = help: a network with no run-time input computes a constant; there is nothing to run".to_owned());
    }
    if model.outputs.is_empty() {
        return Err("the graph has no output computed at run time\n  = help: every graph output is a constant or an input; a network with nothing to compute cannot be run".to_owned());
    }
    for &o in &model.outputs {
        if model.inputs.contains(&o) {
            let t = &model.tensors[o];
            return Err(format!(
                "value `{}` is both a graph input and a graph output\n  = help: the caller owns both buffers; copy the input instead of running the network for it",
                t.source.as_deref().unwrap_or(&t.name)
            ));
        }
    }
    if !options.io_in_arena {
        let io: Vec<usize> = model.inputs.iter().chain(&model.outputs).copied().collect();
        for t in io {
            model.tensors[t].memory.external = true;
        }
    }
    let planned = schedule(
        path,
        options,
        model.clone(),
        shapes.clone(),
        nodes.clone(),
        constants,
        (&BTreeSet::new(), &[]),
    )?;
    match options.ram_budget {
        Some(budget) if planned.plan.total_arena_size() > budget => {
            let plan_with = |overwrite: &BTreeSet<usize>, stages: &[patches::Stage]| {
                schedule(
                    path,
                    options,
                    model.clone(),
                    shapes.clone(),
                    nodes.clone(),
                    constants,
                    (overwrite, stages),
                )
            };
            ram_budget::meet(
                budget,
                &planned,
                &ram_budget::candidates(&model, &shapes, &nodes, constants, options),
                &patches::chains(&model, &shapes, &nodes, constants),
                plan_with,
            )
        }
        _ => Ok(planned),
    }
}

/// [`finish`]'s planning of one schedule: the nodes of `overwrite` write their output over
/// their input 0 (an in-place pair each), the nodes of each of `stages` run band by band as one,
/// each node gets its scratch, then the model is written, read back and planned.
fn schedule(
    path: &Path,
    options: &Options,
    mut model: Model,
    shapes: Vec<Vec<u64>>,
    mut nodes: Vec<Node>,
    constants: &[Constant],
    (overwrite, stages): (&BTreeSet<usize>, &[patches::Stage]),
) -> Result<Planned, String> {
    for &k in overwrite {
        let (Some(OpInput::Tensor(input)), Some(&output)) =
            (nodes[k].inputs.first(), nodes[k].outputs.first())
        else {
            return Err(
                "internal error: a node written in place has no input value; please report this"
                    .to_owned(),
            );
        };
        model.ops[k].inplace = Some(vec![(output, *input)]);
        nodes[k].overwrites = true;
    }
    // The stages, last first: merging one leaves the nodes before it where they are.
    let mut stages = stages.to_vec();
    stages.sort_by_key(|s| std::cmp::Reverse(s.nodes.start));
    for stage in &stages {
        merge_stage(&mut model, &shapes, &mut nodes, constants, stage)?;
    }

    // Scratch: a `u64` tensor per node that needs one, live while the node runs.
    let mut shapes = shapes;
    let values = model.tensors.len();
    let existing: Vec<&str> = model.tensors.iter().map(|t| t.name.as_str()).collect();
    let mut taken = UniqueNames::reserving(&existing);
    for (k, node) in nodes.iter_mut().enumerate() {
        let input_shapes: Vec<Option<Vec<usize>>> = node
            .inputs
            .iter()
            .map(|input| match *input {
                OpInput::Absent => None,
                OpInput::Tensor(t) => Some(shapes[t].iter().map(|&d| d as usize).collect()),
                OpInput::Weight(w) => constants
                    .get(w)
                    .map(|c| c.shape.iter().map(|&d| d as usize).collect()),
            })
            .collect();
        let output_shapes: Vec<Vec<usize>> = node
            .outputs
            .iter()
            .map(|&t| shapes[t].iter().map(|&d| d as usize).collect())
            .collect();
        let input_refs: Vec<Option<&[usize]>> = input_shapes.iter().map(|s| s.as_deref()).collect();
        let output_refs: Vec<&[usize]> = output_shapes.iter().map(Vec::as_slice).collect();
        let operands = specialise::operands(&model, &shapes, constants);
        // A specialised kernel's own scratch (the int8 convolution's im2col columns); a
        // stage's, the most any of its kernels needs.
        let specialised = |node: &Node| {
            specialise::plan(node, &operands).map_or(0, |kernel| {
                kernel.scratch_bytes(node.overwrites).div_ceil(8)
            })
        };
        let words = match &node.stage {
            Some(stage) => stage.nodes.iter().map(specialised).max().unwrap_or(0),
            None => fold::with_attrs(&node.attrs, |attrs| {
                memplan_kernels::scratch_len(&node.op_type, attrs, &input_refs, &output_refs)
                    .map_err(|e| e.to_string())
            })
            .map_err(|e| format!("node `{}` ({}): {e}", node.label, node.op_type))?
            .max(specialised(node)),
        };
        if words == 0 {
            continue;
        }
        let name = taken.claim(&format!("scratch_{}", model.ops[k].name));
        let index = model.tensors.len();
        model.tensors.push(Tensor {
            name,
            layout: Layout::Typed {
                dtype: DType::U64,
                shape: vec![words as u64],
            },
            size: words as u64 * 8,
            alignment: options.alignment.max(8),
            source: None,
            lifetime: memplan_core::Lifetime::new(0, 1),
            location: Default::default(),
            memory: Default::default(),
        });
        model.ops[k].scratch.push(index);
        shapes.push(vec![words as u64]);
        node.scratch = Some((index, words));
    }

    // The nodes as the file has them, for the tables.
    let table_nodes: Vec<Node> = nodes
        .iter()
        .flat_map(|node| match &node.stage {
            Some(stage) => stage.nodes.clone(),
            None => vec![node.clone()],
        })
        .collect();

    // Solver settings, then the model written and read back: lifetimes, in-place pairs and
    // every check of a model file derived exactly as `memplan!` derives them.
    if let Some(solver) = &options.solver {
        model.solver = Some(
            solver
                .parse()
                .map_err(|e| format!("solver `{solver}`: {e}"))?,
        );
    }
    model.nodes = options.nodes.or(model.nodes);
    model.budget = options.budget;
    model.pools = options
        .pools
        .iter()
        .map(
            |(name, capacity, link_section)| memplan_core::model_file::PoolDecl {
                name: name.clone(),
                capacity: *capacity,
                link_section: link_section.clone(),
                location: Default::default(),
                size_location: None,
            },
        )
        .collect();
    let file = format!("{}.toml", model.name);
    let toml = format!(
        "# Written by memplan-build from {}: the model `{}.rs` is planned from.\n\n{}",
        path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned()
        ),
        model.name,
        model.to_toml()
    );
    let reread = memplan_core::parse_model(&file, &toml).map_err(|e| {
        format!(
            "the network cannot be planned: {}\n  = help: {}",
            e.message, e.help
        )
    })?;
    if reread.tensors.len() != model.tensors.len()
        || reread
            .tensors
            .iter()
            .zip(&model.tensors)
            .any(|(a, b)| a.name != b.name)
    {
        return Err("internal error: the model file does not read back tensor for tensor; please report this".to_owned());
    }
    let model = reread;
    // The arena's tensors (external ones are the caller's): their sum and the most bytes live
    // at one step when none shares another's memory.
    let arena_tensors: Vec<&Tensor> = model
        .tensors
        .iter()
        .filter(|t| !t.memory.external)
        .collect();
    let sum_of_sizes = arena_tensors.iter().map(|t| t.size).sum();
    let buffers: Vec<memplan_core::Buffer> = arena_tensors
        .iter()
        .map(|t| {
            memplan_core::Buffer::new(t.name.clone(), t.size, t.lifetime.start, t.lifetime.end)
        })
        .collect();
    let bound_without_sharing = memplan_core::Problem::new(buffers)
        .map(|p| lower_bound(&p))
        .unwrap_or(0);
    let plan = memplan_core::model_plan::plan_model(&model).map_err(|e| e.to_string())?;

    Ok(Planned {
        model,
        plan,
        toml,
        shapes,
        values,
        nodes,
        table_nodes,
        bound_without_sharing,
        sum_of_sizes,
    })
}

/// Makes the nodes of `stage` one node that runs them band by band ([`patches`]): the first
/// node's op takes the stage's input and writes its output, the tensors between them become
/// its band buffers (scratch of a few rows each), the other ops go.
fn merge_stage(
    model: &mut Model,
    shapes: &[Vec<u64>],
    nodes: &mut Vec<Node>,
    constants: &[Constant],
    stage: &patches::Stage,
) -> Result<(), String> {
    let range = stage.nodes.clone();
    let internal = || {
        format!(
            "internal error: nodes {range:?} cannot run band by band as planned; please report this"
        )
    };
    let sub: Vec<Node> = nodes[range.clone()].to_vec();
    let operands = specialise::operands(model, shapes, constants);
    let layers: Vec<patches::Rows> = sub
        .iter()
        .map(|node| {
            specialise::plan(node, &operands)
                .as_ref()
                .and_then(patches::rows)
        })
        .collect::<Option<_>>()
        .ok_or_else(internal)?;
    let (steps, band_rows) = patches::simulate(&layers, stage.band).ok_or_else(internal)?;
    let bands: Vec<usize> = sub[..sub.len() - 1].iter().map(|n| n.outputs[0]).collect();
    for (&t, &rows) in bands.iter().zip(&band_rows) {
        let [n, _, w, c] = shapes[t][..] else {
            return Err(internal());
        };
        let tensor = &mut model.tensors[t];
        let Layout::Typed { dtype, .. } = tensor.layout else {
            return Err(internal());
        };
        let elements = n * rows as u64 * w * c;
        tensor.layout = Layout::Typed {
            dtype,
            shape: vec![n, rows as u64, w, c],
        };
        tensor.size = elements * dtype.size();
    }
    let (first, last) = (&sub[0], &sub[sub.len() - 1]);
    let Some(&OpInput::Tensor(input)) = first.inputs.first() else {
        return Err(internal());
    };
    let name = format!(
        "{}_to_{}",
        model.ops[range.start].name,
        model.ops[range.end - 1].name
    );
    let op = &mut model.ops[range.start];
    op.name = name;
    op.kind = Some("memplan.PATCHES".to_owned());
    op.inputs = vec![input];
    op.all_inputs = Vec::new();
    op.attrs = Vec::new();
    op.outputs = last.outputs.clone();
    op.scratch = bands.clone();
    op.inplace = Some(Vec::new());
    model.ops.drain(range.start + 1..range.end);
    let node = Node {
        label: format!("{}..{}", first.label, last.label),
        op_type: "memplan.PATCHES".to_owned(),
        attrs: Vec::new(),
        inputs: vec![OpInput::Tensor(input)],
        outputs: last.outputs.clone(),
        scratch: None,
        overwrites: false,
        stage: Some(Box::new(patches::Streamed {
            nodes: sub,
            bands,
            band_rows,
            steps,
        })),
    };
    nodes[range.start] = node;
    nodes.drain(range.start + 1..range.end);
    Ok(())
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
