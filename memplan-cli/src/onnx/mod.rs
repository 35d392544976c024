//! `memplan import`: an ONNX model's activation tensors and ops as a model TOML.
//!
//! An ONNX file is a protobuf `ModelProto` whose graph lists nodes in topological order, weights
//! as initializers, and the type and shape of values in `input`, `output` and `value_info`. The
//! importer turns it into a model file:
//!
//! - **ops**: the nodes in file order, except those whose value is known before inference, which
//!   are folded away: a node all of whose non-empty inputs are initializers or outputs of folded
//!   nodes (`Constant`, a weight's `Identity`, shape arithmetic on constants, ...), and a `Shape`
//!   node whose input has a fully static shape. Each op keeps the node's `op_type` as `kind` and
//!   its name as `source`.
//! - **tensors**: the graph inputs that are not initializers, then the outputs of the remaining
//!   nodes, with dtype and static shape from the graph's type information. ONNX names become
//!   unique snake_case identifiers (the generated code names accessors after them); the original
//!   name is kept as `source`.
//! - `[model] inputs` / `outputs`: the graph's inputs (without initializers) and outputs.
//!
//! Weights are never read: initializers with external data (`data_location = EXTERNAL`) work
//! without their `.bin` file. Symbolic dimensions (`batch`, `seq_len`) need `--dim NAME=VALUE`.
//!
//! The reader is a handful of hand-written prost messages ([`proto`]) rather than a generated
//! `onnx.proto` (which needs `protoc` at build time) or an ONNX runtime crate (large, slow to
//! build): the importer reads nine messages, and everything else in the file is skipped by
//! protobuf. prost is Apache-2.0, like the ONNX schema. All of it stays in the CLI, out of the
//! proc macro's build.
//!
//! Limits: nodes inside control-flow subgraphs (`If`, `Loop`, `Scan`) are not looked into, so
//! values they capture from the outer graph are not counted as read by them.

mod names;
mod proto;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use memplan_core::model_file::{DEFAULT_ALIGNMENT, Location, ModelLocations, TensorMemory};
use memplan_core::{DType, Layout, Lifetime, Model, Op, Tensor, parse_model};
use prost::Message;

use names::{UniqueNames, snake_case};
use proto::type_proto;

/// How to import.
#[derive(Clone, Debug)]
pub(crate) struct ImportOptions {
    /// The model's name; default: the file name up to its first `.`, in snake_case.
    pub(crate) name: Option<String>,
    /// Values of symbolic dimensions (`--dim batch=1`).
    pub(crate) dims: BTreeMap<String, u64>,
    /// `[model] alignment` of the written model.
    pub(crate) alignment: u64,
}

impl Default for ImportOptions {
    fn default() -> Self {
        Self {
            name: None,
            dims: BTreeMap::new(),
            alignment: DEFAULT_ALIGNMENT,
        }
    }
}

/// An imported model: the TOML text and the model it parses to.
#[derive(Debug)]
pub(crate) struct Imported {
    /// The model file's text.
    pub(crate) toml: String,
    /// The same text parsed and checked by `memplan-core` (lifetimes derived).
    pub(crate) model: Model,
    /// Nodes in the ONNX graph.
    pub(crate) nodes: usize,
    /// Nodes folded away as constants.
    pub(crate) folded: usize,
    /// Things the user may want to know (graph outputs that are constants, unused inputs).
    pub(crate) notes: Vec<String>,
}

/// Why a file could not be imported. The message names the file, what is wrong, and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ImportError {
    /// The whole message.
    pub(crate) message: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ImportError {}

fn fail<T>(message: String) -> Result<T, ImportError> {
    Err(ImportError { message })
}

/// Imports the ONNX model in `bytes`; `file_name` names it in messages and gives the default
/// model name; `toml_name` names the written model file in messages of the final check.
pub(crate) fn import(
    file_name: &str,
    toml_name: &str,
    bytes: &[u8],
    options: &ImportOptions,
) -> Result<Imported, ImportError> {
    let model = decode(file_name, bytes)?;
    let graph = model
        .graph
        .as_ref()
        .expect("decode checks the graph exists");
    let importer = Importer::new(file_name, graph, options);
    importer.run(toml_name)
}

/// Decodes the protobuf and checks that it looks like an ONNX model.
fn decode(file_name: &str, bytes: &[u8]) -> Result<proto::ModelProto, ImportError> {
    let not_onnx = |why: &str, help: &str| {
        fail(format!(
            "`{file_name}` is not an ONNX model: {why}\n  = help: {help}"
        ))
    };
    if bytes.is_empty() {
        return not_onnx("the file is empty", "export the model again");
    }
    for (magic, what) in [
        (&b"PK\x03\x04"[..], "a zip archive (a PyTorch checkpoint?)"),
        (&b"\x89HDF"[..], "an HDF5 file (a Keras model?)"),
        (&b"[model]"[..], "a memplan model TOML"),
        (&b"id,"[..], "a CSV file"),
        (&b"{"[..], "a JSON file"),
    ] {
        if bytes.starts_with(magic) {
            return not_onnx(
                &format!("it is {what}"),
                "export the network to ONNX first (for PyTorch: `torch.onnx.export`)",
            );
        }
    }
    if bytes.get(4..8) == Some(b"TFL3") {
        return not_onnx(
            "it is a TensorFlow Lite flatbuffer",
            "convert it to ONNX first (for example with tf2onnx)",
        );
    }
    let model = match proto::ModelProto::decode(bytes) {
        Ok(model) => model,
        Err(e) => {
            return not_onnx(
                &format!("it is not a valid protobuf message ({e})"),
                "the file may be truncated or not ONNX at all; export or download it again",
            );
        }
    };
    match &model.graph {
        Some(graph) if model.ir_version > 0 && !graph.node.is_empty() => Ok(model),
        Some(_) if model.ir_version > 0 => not_onnx(
            "its graph has no nodes",
            "export the model again; memplan needs the nodes to order the tensors",
        ),
        _ => not_onnx(
            "it has no IR version or no graph (it decodes as protobuf, but not as an ONNX ModelProto)",
            "the file may be truncated or in another format; export the model to ONNX again",
        ),
    }
}

/// ONNX `TensorProto.DataType` to memplan's dtype.
fn dtype_of(code: i32) -> Result<DType, &'static str> {
    Ok(match code {
        1 => DType::F32,
        2 => DType::U8,
        3 => DType::I8,
        4 => DType::U16,
        5 => DType::I16,
        6 => DType::I32,
        7 => DType::I64,
        9 => DType::Bool,
        10 => DType::F16,
        11 => DType::F64,
        12 => DType::U32,
        13 => DType::U64,
        16 => DType::Bf16,
        0 => return Err("UNDEFINED"),
        8 => return Err("STRING"),
        14 => return Err("COMPLEX64"),
        15 => return Err("COMPLEX128"),
        17..=20 => return Err("FLOAT8"),
        21 => return Err("UINT4"),
        22 => return Err("INT4"),
        23 => return Err("FLOAT4E2M1"),
        _ => return Err("an element type this importer does not know"),
    })
}

struct Importer<'g> {
    file: &'g str,
    graph: &'g proto::GraphProto,
    options: &'g ImportOptions,
    /// Type information by value name: graph inputs first, then outputs, then `value_info`.
    types: BTreeMap<&'g str, &'g proto::ValueInfoProto>,
    initializers: BTreeSet<&'g str>,
    /// The `--dim` names that some dimension used.
    used_dims: std::cell::RefCell<BTreeSet<String>>,
}

/// What a node became.
enum NodeFate {
    Folded,
    Op,
}

impl<'g> Importer<'g> {
    fn new(file: &'g str, graph: &'g proto::GraphProto, options: &'g ImportOptions) -> Self {
        let mut types = BTreeMap::new();
        for info in graph
            .input
            .iter()
            .chain(&graph.output)
            .chain(&graph.value_info)
        {
            types.entry(info.name.as_str()).or_insert(info);
        }
        let mut initializers: BTreeSet<&str> =
            graph.initializer.iter().map(|t| t.name.as_str()).collect();
        initializers.extend(
            graph
                .sparse_initializer
                .iter()
                .filter_map(|s| s.values.as_ref().map(|v| v.name.as_str())),
        );
        Self {
            file,
            graph,
            options,
            types,
            initializers,
            used_dims: std::cell::RefCell::default(),
        }
    }

    /// Dtype and static shape of value `name`; `what` says where it comes from, for messages.
    fn shape_of(&self, name: &str, what: &str) -> Result<(DType, Vec<u64>), ImportError> {
        let file = self.file;
        let Some(info) = self.types.get(name) else {
            return fail(format!(
                "`{file}`: {what} `{name}` has no type or shape information\n  = help: run ONNX shape inference and save the model again (python: `onnx.save(onnx.shape_inference.infer_shapes(onnx.load(path)), path)`)"
            ));
        };
        let tensor = match info.r#type.as_ref().and_then(|t| t.value.as_ref()) {
            Some(type_proto::Value::TensorType(tensor)) => tensor,
            Some(_) => {
                return fail(format!(
                    "`{file}`: {what} `{name}` is not a tensor (a sequence, map, sparse or optional value)\n  = help: memplan plans dense tensors only; rewrite this part of the graph with tensors"
                ));
            }
            None => {
                return fail(format!(
                    "`{file}`: {what} `{name}` has no type\n  = help: run ONNX shape inference and save the model again"
                ));
            }
        };
        let dtype = dtype_of(tensor.elem_type).or_else(|kind| {
            fail(format!(
                "`{file}`: {what} `{name}` has element type {kind} (ONNX data type {}), which memplan does not support\n  = help: supported: float, double, float16, bfloat16, int8/16/32/64, uint8/16/32/64, bool",
                tensor.elem_type
            ))
        })?;
        let Some(shape) = &tensor.shape else {
            return fail(format!(
                "`{file}`: {what} `{name}` has an unknown rank\n  = help: run ONNX shape inference, or export the model with static input shapes"
            ));
        };
        let mut dims = Vec::with_capacity(shape.dim.len());
        for (axis, dim) in shape.dim.iter().enumerate() {
            let value = match &dim.value {
                Some(proto::DimensionValue::DimValue(v)) if *v > 0 => *v as u64,
                Some(proto::DimensionValue::DimValue(v)) => {
                    return fail(format!(
                        "`{file}`: {what} `{name}` has size {v} on axis {axis}\n  = help: memplan plans tensors of at least one element; remove this value from the graph"
                    ));
                }
                Some(proto::DimensionValue::DimParam(param)) if !param.is_empty() => {
                    match self.options.dims.get(param) {
                        Some(&v) if v > 0 => {
                            self.used_dims.borrow_mut().insert(param.clone());
                            v
                        }
                        _ => {
                            return fail(format!(
                                "`{file}`: {what} `{name}` has dynamic dimension `{param}` (axis {axis})\n  = help: give it a value with `--dim {param}=N`, for example `--dim {param}=1`"
                            ));
                        }
                    }
                }
                _ => {
                    return fail(format!(
                        "`{file}`: {what} `{name}` has an unknown size on axis {axis} (no value and no name)\n  = help: run ONNX shape inference after fixing the input shapes, or export with static shapes"
                    ));
                }
            };
            dims.push(value);
        }
        if dims.is_empty() {
            // A scalar: one element, written as shape [1] (the model file has no rank 0).
            dims.push(1);
        }
        let elements = dims
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d))
            .and_then(|n| n.checked_mul(dtype.size()))
            .filter(|&bytes| bytes <= memplan_core::model_file::MAX_TENSOR_BYTES);
        if elements.is_none() {
            return fail(format!(
                "`{file}`: {what} `{name}` is too large ({dims:?} of {dtype})\n  = help: check the shape; memplan plans tensors below 2^48 bytes"
            ));
        }
        Ok((dtype, dims))
    }

    /// Whether `name` has a fully static shape (after `--dim`).
    fn is_static(&self, name: &str) -> bool {
        self.shape_of(name, "value").is_ok()
    }

    fn run(&self, toml_name: &str) -> Result<Imported, ImportError> {
        let file = self.file;
        let graph = self.graph;
        let is_onnx_domain = |d: &str| d.is_empty() || d == "ai.onnx";

        // 1. Fold what is known before inference.
        let mut constant: BTreeSet<&str> = self.initializers.clone();
        let mut fates = Vec::with_capacity(graph.node.len());
        for node in &graph.node {
            let inputs = node.input.iter().filter(|i| !i.is_empty());
            let fate = if inputs.clone().all(|i| constant.contains(i.as_str()))
                || (node.op_type == "Shape"
                    && is_onnx_domain(&node.domain)
                    && node.input.first().is_some_and(|i| self.is_static(i)))
            {
                constant.extend(node.output.iter().map(String::as_str));
                NodeFate::Folded
            } else {
                NodeFate::Op
            };
            fates.push(fate);
        }

        // 2. Tensors: graph inputs that are not weights, then every remaining node's outputs.
        let mut onnx_names: Vec<&str> = Vec::new();
        let mut index_of: BTreeMap<&str, usize> = BTreeMap::new();
        let mut notes = Vec::new();
        let graph_inputs: Vec<&str> = graph
            .input
            .iter()
            .map(|i| i.name.as_str())
            .filter(|n| !self.initializers.contains(n))
            .collect();
        let read: BTreeSet<&str> = graph
            .node
            .iter()
            .zip(&fates)
            .filter(|(_, f)| matches!(f, NodeFate::Op))
            .flat_map(|(n, _)| n.input.iter().map(String::as_str))
            .chain(graph.output.iter().map(|o| o.name.as_str()))
            .collect();
        for &name in &graph_inputs {
            if !read.contains(name) {
                notes.push(format!(
                    "graph input `{name}` is not read by any op; left out"
                ));
                continue;
            }
            if index_of.insert(name, onnx_names.len()).is_some() {
                return fail(format!(
                    "`{file}`: graph input `{name}` is listed twice\n  = help: the file is malformed; export it again"
                ));
            }
            onnx_names.push(name);
        }
        for (node, fate) in graph.node.iter().zip(&fates) {
            if matches!(fate, NodeFate::Folded) {
                continue;
            }
            for output in node.output.iter().filter(|o| !o.is_empty()) {
                if index_of.insert(output, onnx_names.len()).is_some() {
                    return fail(format!(
                        "`{file}`: value `{output}` is produced twice (again by node `{}`)\n  = help: every ONNX value has one producer; the file is malformed",
                        node_label(node)
                    ));
                }
                onnx_names.push(output);
            }
        }

        // Structure before types: every value read is known, every graph output is made.
        for (node, fate) in graph.node.iter().zip(&fates) {
            if matches!(fate, NodeFate::Folded) {
                continue;
            }
            for input in node.input.iter().filter(|i| !i.is_empty()) {
                if !constant.contains(input.as_str()) && !index_of.contains_key(input.as_str()) {
                    return fail(format!(
                        "`{file}`: node `{}` reads `{input}`, which is not a graph input, a weight, or the output of any node\n  = help: the file is malformed or its nodes are not in topological order; check it with `onnx.checker.check_model`",
                        node_label(node)
                    ));
                }
            }
        }
        for output in &graph.output {
            let name = output.name.as_str();
            if !index_of.contains_key(name) && !constant.contains(name) {
                return fail(format!(
                    "`{file}`: graph output `{name}` is not produced by any node\n  = help: the file is malformed; check it with `onnx.checker.check_model`"
                ));
            }
        }

        // 3. Names, dtypes, shapes.
        let mut tensor_names = UniqueNames::reserving(&["new"]);
        let mut tensors = Vec::with_capacity(onnx_names.len());
        for &onnx_name in &onnx_names {
            let what = if graph_inputs.contains(&onnx_name) {
                "graph input"
            } else {
                "tensor"
            };
            let (dtype, shape) = self.shape_of(onnx_name, what)?;
            let size = shape.iter().product::<u64>() * dtype.size();
            let name = tensor_names.claim(&snake_case(onnx_name, "tensor"));
            tensors.push(Tensor {
                source: (name != onnx_name).then(|| onnx_name.to_string()),
                name,
                layout: Layout::Typed { dtype, shape },
                size,
                alignment: self.options.alignment.max(dtype.alignment()),
                lifetime: Lifetime::new(0, 1),
                location: Location::default(),
                memory: TensorMemory::default(),
            });
        }

        // 4. Ops.
        let mut op_names = UniqueNames::default();
        let mut ops = Vec::new();
        for (k, (node, fate)) in graph.node.iter().zip(&fates).enumerate() {
            if matches!(fate, NodeFate::Folded) {
                continue;
            }
            let mut inputs = Vec::new();
            for input in node.input.iter().filter(|i| !i.is_empty()) {
                if constant.contains(input.as_str()) {
                    continue;
                }
                let t = index_of[input.as_str()]; // checked above
                inputs.push(t);
            }
            let outputs = node
                .output
                .iter()
                .filter(|o| !o.is_empty())
                .map(|o| index_of[o.as_str()])
                .collect();
            let fallback = format!("{}_{k}", node.op_type);
            let base = if node.name.is_empty() {
                snake_case(&fallback, "op")
            } else {
                snake_case(&node.name, "op")
            };
            let mut name = op_names.claim(&base);
            // The op's view method `op_<name>` must not be a tensor's accessor.
            while tensor_names.contains(&format!("op_{name}")) {
                name = op_names.claim(&base);
            }
            ops.push(Op {
                source: (!node.name.is_empty() && node.name != name).then(|| node.name.clone()),
                name,
                kind: (!node.op_type.is_empty()).then(|| node.op_type.clone()),
                inputs,
                outputs,
                scratch: Vec::new(),
                // Left to the op's kind: the planner knows which kinds may run in place.
                inplace: None,
                location: Location::default(),
                ..Op::default()
            });
        }

        // 5. Graph inputs and outputs.
        let inputs = graph_inputs
            .iter()
            .filter_map(|n| index_of.get(n).copied())
            .collect();
        let mut outputs = Vec::new();
        for output in &graph.output {
            match index_of.get(output.name.as_str()) {
                Some(&t) => outputs.push(t),
                // Checked above: not a tensor, so a constant.
                None => notes.push(format!(
                    "graph output `{}` is a constant (known before inference); left out",
                    output.name
                )),
            }
        }
        if ops.is_empty() {
            return fail(format!(
                "`{file}`: every node is a constant (folded away), so there is nothing to plan\n  = help: memplan plans the tensors computed at inference time; check the graph's inputs"
            ));
        }

        let stem = file
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or(file)
            .split('.')
            .next()
            .unwrap_or("model");
        let name = match &self.options.name {
            Some(name) => name.clone(),
            None => snake_case(stem, "model"),
        };
        let model = Model {
            file: toml_name.to_string(),
            name,
            alignment: self.options.alignment,
            budget: None,
            solver: None,
            inputs,
            outputs,
            tensors,
            ops,
            weights: Vec::new(),
            pools: Vec::new(),
            inplace: true,
            // Derived from the kinds when the written file is parsed back below.
            aliases: Vec::new(),
            locations: ModelLocations::default(),
        };
        for name in self.options.dims.keys() {
            if !self.used_dims.borrow().contains(name) {
                notes.push(format!(
                    "`--dim {name}=...` matches no dimension of the model (names are case-sensitive)"
                ));
            }
        }
        let folded = fates
            .iter()
            .filter(|f| matches!(f, NodeFate::Folded))
            .count();
        let header = format!(
            "# Imported by `memplan import` from {}: {} nodes, {} folded as constants,\n# {} ops and {} activation tensors. Tensor and op names are snake_case; `source` keeps the ONNX name.\n\n",
            stem_file(file),
            graph.node.len(),
            folded,
            model.ops.len(),
            model.tensors.len()
        );
        let toml = header + &model.to_toml();
        // The written file must read back; if it does not, say so rather than write it.
        let model = parse_model(toml_name, &toml).or_else(|e| {
            fail(format!(
                "`{file}` imported, but the model file does not check: {e}\n  = help: pass `--name` if the model name is the problem; otherwise this is a bug in the importer"
            ))
        })?;
        Ok(Imported {
            toml,
            model,
            nodes: graph.node.len(),
            folded,
            notes,
        })
    }
}

fn node_label(node: &proto::NodeProto) -> String {
    if node.name.is_empty() {
        format!("({} node)", node.op_type)
    } else {
        node.name.clone()
    }
}

fn stem_file(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

#[cfg(test)]
mod tests;
