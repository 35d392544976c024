//! Reads ONNX models for memplan: an ONNX model's activation tensors and ops as a model TOML
//! (`memplan import`), and everything a runner needs besides: each node's attributes, its inputs
//! in ONNX order (tensors, weights, absent optional inputs), and the weights' data.
//!
//! An ONNX file is a protobuf `ModelProto` whose graph lists nodes in topological order, weights
//! as initializers, and the type and shape of values in `input`, `output` and `value_info`.
//! `value_info` is optional for the operators memplan runs: the importer infers the dtype and
//! static shape of every value the file does not describe (`shapes.rs`: node by node from the
//! graph inputs, initializers and constants; the file's type wins where it gives one, and one
//! that disagrees with the inferred type is refused). It is still needed for a value made by an
//! operator the inference does not know or whose shape depends on run-time data (and for what
//! follows it). The importer turns the file into a model file:
//!
//! - **ops**: the nodes in file order, except those whose value is known before inference, which
//!   are folded away: a node all of whose non-empty inputs are initializers or outputs of folded
//!   nodes (`Constant`, a weight's `Identity`, shape arithmetic on constants, ...), and a `Shape`
//!   node whose input has a fully static shape. Each op keeps the node's `op_type` as `kind` and
//!   its name as `source`.
//! - **tensors**: the graph inputs that are not initializers, then the outputs of the remaining
//!   nodes, with dtype and static shape from the graph's type information or inferred. ONNX
//!   names become unique snake_case identifiers (the generated code names accessors after them);
//!   the original name is kept as `source`.
//! - **weights** ([`Graph::weights`]): the initializers and folded values that kept nodes read,
//!   named like tensors (in the same namespace). With [`ImportOptions::with_weights`] the model
//!   file lists them in `[weights]` (dtype, shape, source; never their data), and each op's
//!   `inputs` are the node's inputs in ONNX order (weights included, `""` for an absent optional
//!   input), with its `attrs`.
//! - `[model] inputs` / `outputs`: the graph's inputs (without initializers) and outputs.
//!
//! Weight data is read only when asked for ([`WeightValue::load`]), except small constants (at
//! most [`MAX_VALUE_ELEMENTS`] elements) that shape inference reads for shape operands:
//! initializers with external data (`data_location = EXTERNAL`) import without their `.bin`
//! file. Folded values are known for `Constant`, a weight's `Identity` and a static tensor's
//! `Shape`. Symbolic dimensions (`batch`, `seq_len`) need `--dim NAME=VALUE`.
//!
//! The reader is a handful of hand-written prost messages (`proto.rs`) rather than a generated
//! `onnx.proto` (which needs `protoc` at build time) or an ONNX runtime crate (large, slow to
//! build): the importer reads ten messages, and everything else in the file is skipped by
//! protobuf. prost is Apache-2.0, like the ONNX schema. This crate is used by the CLI and by
//! build scripts (`memplan-runner`), never by the proc macro.
//!
//! Limits: nodes inside control-flow subgraphs (`If`, `Loop`, `Scan`) are not looked into, so
//! values they capture from the outer graph are not counted as read by them.

mod attrs;
mod names;
mod proto;
mod shapes;
mod weights;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use memplan_core::model_file::{DEFAULT_ALIGNMENT, Location, ModelLocations, TensorMemory};
use memplan_core::{DType, Layout, Lifetime, Model, Op, Tensor, parse_model};
use prost::Message;

pub use attrs::AttrValue;
use names::{UniqueNames, snake_case};
use proto::type_proto;
pub use shapes::{MAX_VALUE_ELEMENTS, strip_value_info};
pub use weights::{FoldedNode, TensorType, Weight, WeightData, WeightValue};

/// How to import.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// The model's name; default: the file name up to its first `.`, in snake_case.
    pub name: Option<String>,
    /// Values of symbolic dimensions (`--dim batch=1`).
    pub dims: BTreeMap<String, u64>,
    /// `[model] alignment` of the written model.
    pub alignment: u64,
    /// Whether the model file lists `[weights]`, each op's `attrs` and its inputs in ONNX order
    /// (weights and absent inputs included); otherwise ops list their tensor inputs only.
    pub with_weights: bool,
    /// `[model] inplace`: whether ops may write outputs over their inputs.
    pub inplace: bool,
    /// Where external weight data is, relative to; default: the ONNX file's directory.
    pub base_dir: Option<PathBuf>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        Self {
            name: None,
            dims: BTreeMap::new(),
            alignment: DEFAULT_ALIGNMENT,
            with_weights: false,
            inplace: true,
            base_dir: None,
        }
    }
}

/// An imported model: the TOML text, the model it parses to, and the graph around it.
#[derive(Debug)]
pub struct Imported {
    /// The model file's text.
    pub toml: String,
    /// The activation tensors and ops parsed and checked by `memplan-core` (lifetimes derived),
    /// from the file without weights and attributes.
    pub model: Model,
    /// What the model file leaves out or only names: weights, attributes, full input lists.
    pub graph: Graph,
    /// Nodes in the ONNX graph.
    pub nodes: usize,
    /// Nodes folded away as constants.
    pub folded: usize,
    /// Things the user may want to know (graph outputs that are constants, unused inputs).
    pub notes: Vec<String>,
}

/// The parts of the ONNX graph that an interpreter needs beside the planned tensors.
#[derive(Clone, Debug, PartialEq)]
pub struct Graph {
    /// Per tensor of [`Imported::model`]: its ONNX shape (`[]` for a scalar, which the model file
    /// writes as `[1]`).
    pub tensor_shapes: Vec<Vec<u64>>,
    /// The weights kept ops read, in order of first use.
    pub weights: Vec<Weight>,
    /// Per op of [`Imported::model`]: the node behind it.
    pub ops: Vec<NodeOp>,
}

/// A kept node: what the model file's op is, for an interpreter.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeOp {
    /// ONNX `op_type`.
    pub op_type: String,
    /// ONNX `domain` (empty for the default domain).
    pub domain: String,
    /// The node's name (may be empty).
    pub node: String,
    /// Its inputs in ONNX order; trailing absent inputs omitted.
    pub inputs: Vec<OpInput>,
    /// Its outputs in ONNX order (indices into the model's tensors, `None` for a left-out
    /// optional output); trailing left-out outputs omitted.
    pub outputs: Vec<Option<usize>>,
    /// Its scalar and list attributes, in file order.
    pub attrs: Vec<(String, AttrValue)>,
    /// Its tensor-valued attributes (`ConstantOfShape`'s `value`), with their values.
    pub tensor_attrs: Vec<(String, Result<WeightValue, String>)>,
    /// The names of its other attributes, in neither list (graph-, sparse- or type-valued).
    pub other_attrs: Vec<String>,
}

/// One input of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpInput {
    /// An absent optional input (`""` in ONNX).
    Absent,
    /// An activation tensor: an index into the model's tensors.
    Tensor(usize),
    /// A constant: an index into [`Graph::weights`].
    Weight(usize),
}

/// Why a file could not be imported. The message names the file, what is wrong, and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    /// The whole message.
    pub message: String,
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

/// Reads and imports the ONNX file at `path` (external weight data relative to its directory,
/// unless [`ImportOptions::base_dir`] says otherwise).
pub fn import_file(path: &Path, options: &ImportOptions) -> Result<Imported, ImportError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).or_else(|e| {
        fail(format!(
            "cannot read `{shown}`: {e}\n  = help: check the path (it must name an ONNX file)"
        ))
    })?;
    let mut options = options.clone();
    if options.base_dir.is_none() {
        options.base_dir = Some(path.parent().map(Path::to_path_buf).unwrap_or_default());
    }
    import(&shown, "model.toml", &bytes, &options)
}

/// Imports the ONNX model in `bytes`; `file_name` names it in messages and gives the default
/// model name; `toml_name` names the model file in messages.
pub fn import(
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
    // The default domain's operator set (Resize's inputs changed at opset 11).
    let opset = model
        .opset_import
        .iter()
        .find(|o| o.domain.is_empty() || o.domain == "ai.onnx")
        .map_or(21, |o| o.version);
    let importer = Importer::new(file_name, graph, options, opset);
    importer.check_external_data()?;
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
    /// Where external weight data is relative to.
    base_dir: PathBuf,
    graph: &'g proto::GraphProto,
    options: &'g ImportOptions,
    /// Type information by value name: graph inputs first, then outputs, then `value_info`.
    types: BTreeMap<&'g str, &'g proto::ValueInfoProto>,
    initializers: BTreeSet<&'g str>,
    /// The `--dim` names that some dimension used.
    used_dims: std::cell::RefCell<BTreeSet<String>>,
    /// The inferred type of every value a node makes (`shapes.rs`).
    shapes: shapes::Shapes,
}

/// What a node became.
enum NodeFate {
    Folded,
    Op,
}

impl<'g> Importer<'g> {
    fn new(
        file: &'g str,
        graph: &'g proto::GraphProto,
        options: &'g ImportOptions,
        opset: i64,
    ) -> Self {
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
        let base_dir = options.base_dir.clone().unwrap_or_else(|| {
            Path::new(file)
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default()
        });
        // External data is read only for small initializers, and only inside the model's
        // folder (`weights::from_tensor` refuses any other location).
        let shapes = shapes::infer(graph, &types, &options.dims, opset, &base_dir);
        Self {
            file,
            base_dir,
            graph,
            options,
            types,
            initializers,
            used_dims: std::cell::RefCell::default(),
            shapes,
        }
    }

    /// Refuses the model if any tensor with external data (an initializer, or a node's tensor
    /// attribute such as `Constant`'s `value`) names a file outside the model's folder: an
    /// absolute path, or one that `..` or a symlink takes out of it. Otherwise a model could put
    /// any readable file (`/etc/passwd`, a key) into the binary; ONNX Runtime and the `onnx`
    /// package refuse these paths too (CVE-2024-27318, CVE-2024-27319).
    fn check_external_data(&self) -> Result<(), ImportError> {
        let initializers = self
            .graph
            .initializer
            .iter()
            .map(|t| (format!("initializer `{}`", t.name), t));
        let attributes = self.graph.node.iter().flat_map(|node| {
            node.attribute.iter().filter_map(move |a| {
                a.t.as_ref().map(|t| {
                    let node_name = if node.name.is_empty() {
                        node.op_type.as_str()
                    } else {
                        node.name.as_str()
                    };
                    (
                        format!("tensor attribute `{}` of node `{node_name}`", a.name),
                        t,
                    )
                })
            })
        });
        for (what, tensor) in initializers.chain(attributes) {
            if tensor.data_location != 1 {
                continue;
            }
            let location = tensor
                .external_data
                .iter()
                .find(|e| e.key == "location")
                .map(|e| e.value.as_str());
            if let Some(location) = location
                && let Err(reason) = weights::external_path(&self.base_dir, location)
            {
                return fail(format!(
                    "`{}`: {what}: {reason}\n  = help: keep external data files in the ONNX \
                         file's folder (or a subfolder of it) and write `location` relative to \
                         it, as `onnx.save(..., save_as_external_data=True)` does",
                    self.file
                ));
            }
        }
        Ok(())
    }

    /// Dtype and static shape of value `name` as the model file writes it (a scalar as `[1]`);
    /// `what` says where it comes from, for messages.
    fn shape_of(&self, name: &str, what: &str) -> Result<(DType, Vec<u64>), ImportError> {
        let (dtype, mut dims) = self.onnx_shape_of(name, what)?;
        if dims.is_empty() {
            // A scalar: one element, written as shape [1] (the model file has no rank 0).
            dims.push(1);
        }
        Ok((dtype, dims))
    }

    /// Dtype and static ONNX shape of value `name` (`[]` for a scalar): the file's type
    /// information when it gives every dimension, else what inference says (`shapes.rs`); the
    /// two must agree where both exist.
    fn onnx_shape_of(&self, name: &str, what: &str) -> Result<(DType, Vec<u64>), ImportError> {
        let file = self.file;
        let inferred = self.shapes.get(name);
        let Some(info) = self.types.get(name) else {
            return match inferred {
                Some(Ok((elem_type, dims))) => self.checked(name, what, *elem_type, dims.clone()),
                Some(Err(why)) => fail(format!(
                    "`{file}`: {what} `{name}` has no type or shape information, and memplan \
                     cannot infer it: {why}\n  = help: run ONNX shape inference and save the model again (python: `onnx.save(onnx.shape_inference.infer_shapes(onnx.load(path)), path)`)"
                )),
                None => fail(format!(
                    "`{file}`: {what} `{name}` has no type or shape information\n  = help: run ONNX shape inference and save the model again (python: `onnx.save(onnx.shape_inference.infer_shapes(onnx.load(path)), path)`)"
                )),
            };
        };
        match self.declared_shape_of(name, what, info) {
            Ok((dtype, dims)) => {
                if let Some(Ok((elem_type, inferred_dims))) = inferred {
                    let inferred_dtype = dtype_of(*elem_type).ok();
                    if inferred_dtype != Some(dtype) || *inferred_dims != dims {
                        let shown = inferred_dtype.map_or_else(
                            || format!("ONNX data type {elem_type}"),
                            |d| d.name().to_owned(),
                        );
                        let node = self
                            .graph
                            .node
                            .iter()
                            .find(|n| n.output.iter().any(|o| o == name))
                            .map(|n| format!(" by node `{}` ({})", node_label(n), n.op_type))
                            .unwrap_or_default();
                        return fail(format!(
                            "`{file}`: {what} `{name}` is declared as {dims:?} of {} in the file, but its inputs make it {inferred_dims:?} of {shown}{node}\n  = help: the file's type information is stale or wrong; remove `value_info` (memplan infers it) or run ONNX shape inference again (python: `onnx.save(onnx.shape_inference.infer_shapes(onnx.load(path)), path)`)",
                            dtype.name()
                        ));
                    }
                }
                Ok((dtype, dims))
            }
            // The file leaves something unknown: inference fills it in, or says why it cannot.
            Err((mut error, true)) => match inferred {
                Some(Ok((elem_type, dims))) => self.checked(name, what, *elem_type, dims.clone()),
                Some(Err(why)) => {
                    if let Some(at) = error.message.find("\n  = help") {
                        error
                            .message
                            .insert_str(at, &format!(", and memplan cannot infer it: {why}"));
                    }
                    Err(error)
                }
                None => Err(error),
            },
            Err((error, false)) => Err(error),
        }
    }

    /// An inferred type as [`Self::onnx_shape_of`] returns it: a dtype memplan supports, at
    /// least one element, not too large.
    fn checked(
        &self,
        name: &str,
        what: &str,
        elem_type: i32,
        dims: Vec<u64>,
    ) -> Result<(DType, Vec<u64>), ImportError> {
        let file = self.file;
        let dtype = dtype_of(elem_type).or_else(|kind| {
            fail(format!(
                "`{file}`: {what} `{name}` has element type {kind} (ONNX data type {elem_type}, inferred), which memplan does not support\n  = help: supported: float, double, float16, bfloat16, int8/16/32/64, uint8/16/32/64, bool"
            ))
        })?;
        if let Some(axis) = dims.iter().position(|&d| d == 0) {
            return fail(format!(
                "`{file}`: {what} `{name}` has size 0 on axis {axis} (inferred shape {dims:?})\n  = help: memplan plans tensors of at least one element; remove this value from the graph"
            ));
        }
        let bytes = dims
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d))
            .and_then(|n| n.checked_mul(dtype.size()))
            .filter(|&bytes| bytes <= memplan_core::model_file::MAX_TENSOR_BYTES);
        if bytes.is_none() {
            return fail(format!(
                "`{file}`: {what} `{name}` is too large ({dims:?} of {dtype}, inferred)\n  = help: check the shape; memplan plans tensors below 2^48 bytes"
            ));
        }
        Ok((dtype, dims))
    }

    /// The dtype and shape the file declares for `name`; an error says whether inference may
    /// fill in what is missing (`true`: no type, an unknown rank or dimension, a symbolic
    /// dimension without `--dim`) or not (not a tensor, an unsupported type, a size of 0).
    fn declared_shape_of(
        &self,
        name: &str,
        what: &str,
        info: &proto::ValueInfoProto,
    ) -> Result<(DType, Vec<u64>), (ImportError, bool)> {
        let file = self.file;
        fn error<T>(message: String, fillable: bool) -> Result<T, (ImportError, bool)> {
            Err((ImportError { message }, fillable))
        }
        let tensor = match info.r#type.as_ref().and_then(|t| t.value.as_ref()) {
            Some(type_proto::Value::TensorType(tensor)) => tensor,
            Some(_) => {
                return error(
                    format!(
                        "`{file}`: {what} `{name}` is not a tensor (a sequence, map, sparse or optional value)\n  = help: memplan plans dense tensors only; rewrite this part of the graph with tensors"
                    ),
                    false,
                );
            }
            None => {
                return error(
                    format!(
                        "`{file}`: {what} `{name}` has no type\n  = help: run ONNX shape inference and save the model again"
                    ),
                    true,
                );
            }
        };
        let dtype = dtype_of(tensor.elem_type).or_else(|kind| {
            error(
                format!(
                    "`{file}`: {what} `{name}` has element type {kind} (ONNX data type {}), which memplan does not support\n  = help: supported: float, double, float16, bfloat16, int8/16/32/64, uint8/16/32/64, bool",
                    tensor.elem_type
                ),
                // UNDEFINED: inference may say.
                tensor.elem_type == 0,
            )
        })?;
        let Some(shape) = &tensor.shape else {
            return error(
                format!(
                    "`{file}`: {what} `{name}` has an unknown rank\n  = help: run ONNX shape inference, or export the model with static input shapes"
                ),
                true,
            );
        };
        let mut dims = Vec::with_capacity(shape.dim.len());
        for (axis, dim) in shape.dim.iter().enumerate() {
            let value = match &dim.value {
                Some(proto::DimensionValue::DimValue(v)) if *v > 0 => *v as u64,
                Some(proto::DimensionValue::DimValue(v)) => {
                    return error(
                        format!(
                            "`{file}`: {what} `{name}` has size {v} on axis {axis}\n  = help: memplan plans tensors of at least one element; remove this value from the graph"
                        ),
                        false,
                    );
                }
                Some(proto::DimensionValue::DimParam(param)) if !param.is_empty() => {
                    match self.options.dims.get(param) {
                        Some(&v) if v > 0 => {
                            self.used_dims.borrow_mut().insert(param.clone());
                            v
                        }
                        _ => {
                            return error(
                                format!(
                                    "`{file}`: {what} `{name}` has dynamic dimension `{param}` (axis {axis})\n  = help: give it a value with `--dim {param}=N`, for example `--dim {param}=1`"
                                ),
                                true,
                            );
                        }
                    }
                }
                _ => {
                    return error(
                        format!(
                            "`{file}`: {what} `{name}` has an unknown size on axis {axis} (no value and no name)\n  = help: run ONNX shape inference after fixing the input shapes, or export with static shapes"
                        ),
                        true,
                    );
                }
            };
            dims.push(value);
        }
        let elements = dims
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d))
            .and_then(|n| n.checked_mul(dtype.size()))
            .filter(|&bytes| bytes <= memplan_core::model_file::MAX_TENSOR_BYTES);
        if elements.is_none() {
            return error(
                format!(
                    "`{file}`: {what} `{name}` is too large ({dims:?} of {dtype})\n  = help: check the shape; memplan plans tensors below 2^48 bytes"
                ),
                false,
            );
        }
        Ok((dtype, dims))
    }

    /// The options make a valid model file: an alignment that is a power of two, a name that is
    /// a Rust identifier.
    fn check_options(&self) -> Result<(), ImportError> {
        let alignment = self.options.alignment;
        if !alignment.is_power_of_two() || alignment > memplan_core::model_file::MAX_ALIGNMENT {
            return fail(format!(
                "alignment {alignment} is not a power of two between 1 and {}\n  = help: pass `--alignment 16` (the default) or `--alignment 64`",
                memplan_core::model_file::MAX_ALIGNMENT
            ));
        }
        if let Some(name) = &self.options.name
            && let Some(problem) =
                memplan_core::model_file::identifier_problem(name).or_else(|| {
                    (name.as_str() == "memplan")
                        .then_some("is the name of the crate the generated code uses")
                })
        {
            return fail(format!(
                "model name `{name}` {problem}\n  = help: pass a Rust identifier, for example `--name {}`",
                snake_case(name, "model").replace("memplan", "my_model")
            ));
        }
        Ok(())
    }

    /// The graph is well formed: nodes in topological order, none reading its own output, each
    /// graph output listed once.
    fn check_structure(&self) -> Result<(), ImportError> {
        let file = self.file;
        let graph = self.graph;
        let mut produced_at: BTreeMap<&str, usize> = BTreeMap::new();
        for (k, node) in graph.node.iter().enumerate() {
            for output in node.output.iter().filter(|o| !o.is_empty()) {
                produced_at.entry(output.as_str()).or_insert(k);
            }
        }
        for (k, node) in graph.node.iter().enumerate() {
            for input in node.input.iter().filter(|i| !i.is_empty()) {
                if self.initializers.contains(input.as_str()) {
                    continue;
                }
                let is_graph_input = graph.input.iter().any(|i| &i.name == input);
                match produced_at.get(input.as_str()) {
                    Some(&j) if j == k => {
                        return fail(format!(
                            "`{file}`: node `{}` (node {k}, {}) reads its own output `{input}`\n  = help: a node's inputs must be computed before it runs; the file is malformed (check it with `onnx.checker.check_model`)",
                            node_label(node),
                            node.op_type
                        ));
                    }
                    Some(&j) if j > k && !is_graph_input => {
                        return fail(format!(
                            "`{file}`: node `{}` (node {k}) reads `{input}`, which node `{}` (node {j}) produces later: the nodes are not in topological order\n  = help: sort the graph's nodes (for example with `onnx.utils` or by re-exporting the model)",
                            node_label(node),
                            node_label(&graph.node[j])
                        ));
                    }
                    _ => {}
                }
            }
        }
        let mut seen = BTreeSet::new();
        for output in &graph.output {
            if !seen.insert(output.name.as_str()) {
                return fail(format!(
                    "`{file}`: graph output `{}` is listed twice\n  = help: every graph output is listed once; remove the duplicate from the graph's outputs",
                    output.name
                ));
            }
        }
        Ok(())
    }

    /// The value of the constant `name` (an initializer or a folded node's output).
    fn constant_value(
        &self,
        name: &str,
        folded_by: &BTreeMap<&str, usize>,
    ) -> Result<WeightValue, String> {
        self.constant_value_in(name, folded_by, 0, None)
    }

    /// [`Self::constant_value`] within a folded value: `depth` bounds the chain of nodes
    /// followed, `budget` (`None` outside a folded node) what the folded value may expand to.
    fn constant_value_in(
        &self,
        name: &str,
        folded_by: &BTreeMap<&str, usize>,
        depth: usize,
        budget: Option<&FoldBudget>,
    ) -> Result<WeightValue, String> {
        let graph = self.graph;
        let leaf = |value: Result<WeightValue, String>| match (value, budget) {
            (Ok(value), Some(budget)) => budget.read(value),
            (value, _) => value,
        };
        if let Some(tensor) = graph.initializer.iter().find(|t| t.name == name) {
            let dtype = dtype_of(tensor.data_type).map_err(|kind| {
                format!("its element type is {kind}, which memplan does not support")
            })?;
            return leaf(weights::from_tensor(tensor, dtype, &self.base_dir));
        }
        let Some(&k) = folded_by.get(name) else {
            return Err("it is a sparse initializer, which the importer does not read".to_owned());
        };
        let node = &graph.node[k];
        let attribute = |key: &str| node.attribute.iter().find(|a| a.name == key);
        let default_domain = node.domain.is_empty() || node.domain == "ai.onnx";
        match node.op_type.as_str() {
            "Constant" if default_domain => {
                if let Some(tensor) = attribute("value").and_then(|a| a.t.as_ref()) {
                    let dtype = dtype_of(tensor.data_type).map_err(|kind| {
                        format!("its element type is {kind}, which memplan does not support")
                    })?;
                    return leaf(weights::from_tensor(tensor, dtype, &self.base_dir));
                }
                if let Some(a) = attribute("value_float") {
                    return leaf(Ok(weights::f32s(&[a.f], vec![])));
                }
                if let Some(a) = attribute("value_floats") {
                    return leaf(Ok(weights::f32s(&a.floats, vec![a.floats.len() as u64])));
                }
                if let Some(a) = attribute("value_int") {
                    return leaf(Ok(weights::i64s(&[a.i], vec![])));
                }
                if let Some(a) = attribute("value_ints") {
                    return leaf(Ok(weights::i64s(&a.ints, vec![a.ints.len() as u64])));
                }
                Err(format!(
                    "it is made by `Constant` node `{}` with no tensor, float or int value",
                    node_label(node)
                ))
            }
            "Identity" if default_domain && depth < 64 => match node.input.first() {
                Some(input) => self.constant_value_in(input, folded_by, depth + 1, budget),
                None => Err(format!(
                    "`Identity` node `{}` has no input",
                    node_label(node)
                )),
            },
            "Shape" if default_domain => {
                let input = node.input.first().map_or("", String::as_str);
                let (_, dims) = self.onnx_shape_of(input, "value").map_err(|e| e.message)?;
                let rank = dims.len() as i64;
                let bound = |key: &str, default: i64| {
                    let v = attribute(key).map_or(default, |a| a.i);
                    (if v < 0 { v + rank } else { v }).clamp(0, rank) as usize
                };
                let (start, end) = (bound("start", 0), bound("end", rank));
                let values: Vec<i64> = dims
                    .get(start..end.max(start))
                    .unwrap_or_default()
                    .iter()
                    .map(|&d| d as i64)
                    .collect();
                let n = values.len() as u64;
                leaf(Ok(weights::i64s(&values, vec![n])))
            }
            op_type => {
                let (dtype, shape) = self
                    .onnx_shape_of(name, "folded value")
                    .map_err(|e| e.message)?;
                if depth >= 64 {
                    return Err("it is computed by a chain of more than 64 folded nodes".to_owned());
                }
                // The outermost folded node holds the budget of the whole value: its inputs are
                // copied into it once per use, so a node read twice by each of a chain of nodes
                // would otherwise expand to a tree of 2^depth nodes.
                let own = FoldBudget::default();
                let budget = budget.unwrap_or(&own);
                budget.enter(node)?;
                let inputs = node
                    .input
                    .iter()
                    .map(|input| {
                        (!input.is_empty()).then(|| {
                            self.constant_value_in(input, folded_by, depth + 1, Some(budget))
                        })
                    })
                    .collect();
                if std::ptr::eq(budget, &own)
                    && let Some(why) = own.exhausted(node)
                {
                    return Err(why);
                }
                let outputs = node
                    .output
                    .iter()
                    .map(|output| {
                        (!output.is_empty()).then(|| {
                            self.onnx_shape_of(output, "folded value")
                                .map_err(|e| e.message)
                        })
                    })
                    .collect();
                let attrs = node
                    .attribute
                    .iter()
                    .filter_map(|a| attrs::value(a).map(|v| (a.name.clone(), v)))
                    .collect();
                Ok(WeightValue {
                    dtype,
                    shape,
                    data: WeightData::Computed(Box::new(weights::FoldedNode {
                        node: node_label(node),
                        op_type: op_type.to_owned(),
                        inputs,
                        attrs,
                        outputs,
                        output: node.output.iter().position(|o| o == name).unwrap_or(0),
                    })),
                })
            }
        }
    }

    /// Whether `name` has a fully static shape (after `--dim`).
    fn is_static(&self, name: &str) -> bool {
        self.shape_of(name, "value").is_ok()
    }

    fn run(&self, toml_name: &str) -> Result<Imported, ImportError> {
        let file = self.file;
        let graph = self.graph;
        let is_onnx_domain = |d: &str| d.is_empty() || d == "ai.onnx";
        self.check_options()?;
        self.check_structure()?;

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
        // The arenas' methods and the op views' locals (see `memplan_core`'s name check).
        let mut tensor_names = UniqueNames::reserving(&["new", "views", "rest"]);
        let mut tensors = Vec::with_capacity(onnx_names.len());
        let mut tensor_shapes = Vec::with_capacity(onnx_names.len());
        for &onnx_name in &onnx_names {
            let what = if graph_inputs.contains(&onnx_name) {
                "graph input"
            } else {
                "tensor"
            };
            let (dtype, shape) = self.shape_of(onnx_name, what)?;
            tensor_shapes.push(self.onnx_shape_of(onnx_name, what)?.1);
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

        // 4. Ops, and the weights they read (named in the tensors' namespace, after them).
        let mut op_names = UniqueNames::default();
        let mut ops = Vec::new();
        let mut node_ops = Vec::new();
        let mut weights: Vec<weights::Weight> = Vec::new();
        let mut weight_index: BTreeMap<&str, usize> = BTreeMap::new();
        let folded_by: BTreeMap<&str, usize> = graph
            .node
            .iter()
            .zip(&fates)
            .enumerate()
            .filter(|(_, (_, fate))| matches!(fate, NodeFate::Folded))
            .flat_map(|(k, (node, _))| node.output.iter().map(move |o| (o.as_str(), k)))
            .collect();
        for (k, (node, fate)) in graph.node.iter().zip(&fates).enumerate() {
            if matches!(fate, NodeFate::Folded) {
                continue;
            }
            let mut inputs = Vec::new();
            let mut full_inputs = Vec::new();
            for input in &node.input {
                if input.is_empty() {
                    full_inputs.push(OpInput::Absent);
                } else if constant.contains(input.as_str()) {
                    let w = *weight_index.entry(input.as_str()).or_insert_with(|| {
                        weights.push(weights::Weight {
                            name: tensor_names.claim(&snake_case(input, "weight")),
                            source: input.clone(),
                            value: self.constant_value(input, &folded_by),
                        });
                        weights.len() - 1
                    });
                    full_inputs.push(OpInput::Weight(w));
                } else {
                    let t = index_of[input.as_str()]; // checked above
                    inputs.push(t);
                    full_inputs.push(OpInput::Tensor(t));
                }
            }
            while full_inputs.last() == Some(&OpInput::Absent) {
                full_inputs.pop();
            }
            let mut node_attrs = Vec::new();
            let mut tensor_attrs = Vec::new();
            let mut other_attrs = Vec::new();
            for attribute in &node.attribute {
                match (attrs::value(attribute), &attribute.t) {
                    (Some(value), _) => node_attrs.push((attribute.name.clone(), value)),
                    (None, Some(tensor)) if attribute.ref_attr_name.is_empty() => {
                        let value = dtype_of(tensor.data_type)
                            .map_err(|kind| format!("its element type is {kind}"))
                            .and_then(|dtype| weights::from_tensor(tensor, dtype, &self.base_dir));
                        tensor_attrs.push((attribute.name.clone(), value));
                    }
                    (None, _) => other_attrs.push(attribute.name.clone()),
                }
            }
            let mut full_outputs: Vec<Option<usize>> = node
                .output
                .iter()
                .map(|o| (!o.is_empty()).then(|| index_of[o.as_str()]))
                .collect();
            while full_outputs.last() == Some(&None) {
                full_outputs.pop();
            }
            node_ops.push(NodeOp {
                op_type: node.op_type.clone(),
                domain: node.domain.clone(),
                node: node.name.clone(),
                inputs: full_inputs,
                outputs: full_outputs,
                attrs: node_attrs,
                tensor_attrs,
                other_attrs,
            });
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
                // The plain file lists tensor inputs only; `with_weights` writes the rest.
                all_inputs: Vec::new(),
                attrs: Vec::new(),
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
            nodes: None,
            inputs,
            outputs,
            tensors,
            ops,
            weights: Vec::new(),
            pools: Vec::new(),
            inplace: self.options.inplace,
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
        let plain = header + &model.to_toml();
        let graph_info = Graph {
            tensor_shapes,
            weights,
            ops: node_ops,
        };
        // The file must read back; if it does not, say what is wrong with the ONNX graph, without
        // pointing into a file that is never written.
        let check = |text: &str| {
            parse_model(toml_name, text).or_else(|e| {
                fail(format!(
                    "`{file}` cannot be planned: {}\n  = help: {}",
                    e.message, e.help
                ))
            })
        };
        let model = check(&plain)?;
        let toml = if self.options.with_weights {
            let text = with_weights(&plain, &model, &graph_info)?;
            check(&text)?;
            text
        } else {
            plain
        };
        Ok(Imported {
            toml,
            model,
            graph: graph_info,
            nodes: graph.node.len(),
            folded,
            notes,
        })
    }
}

/// `plain` (a model file without weights, from `model`) with `[weights]`, and each op's inputs in
/// ONNX order and its `attrs`.
fn with_weights(plain: &str, model: &Model, graph: &Graph) -> Result<String, ImportError> {
    // A weight with no elements: a model file refuses it (as it refuses such a tensor). Where
    // ONNX defines an empty input as not given (`Resize`'s `roi` and `scales`), it is written as
    // an absent input (`""`); anywhere else the import stops, naming it.
    let empty: Vec<bool> = graph
        .weights
        .iter()
        .map(|w| w.value.as_ref().is_ok_and(|v| v.shape.contains(&0)))
        .collect();
    for (w, weight) in graph.weights.iter().enumerate() {
        if !empty[w] {
            continue;
        }
        let reader = graph
            .ops
            .iter()
            .find(|op| op.op_type != "Resize" && op.inputs.contains(&OpInput::Weight(w)));
        if let Some(op) = reader {
            return fail(format!(
                "weight `{}` has no elements (shape {:?}) and is an input of node `{}` ({}): a \
                 memplan model has no zero-element weights or tensors\n  = help: if the input is \
                 optional, leave it out (an empty name in the node's inputs); otherwise simplify \
                 the model (for example with `onnxsim`) and save it again",
                weight.source,
                weight
                    .value
                    .as_ref()
                    .map(|v| v.shape.clone())
                    .unwrap_or_default(),
                op.node,
                op.op_type
            ));
        }
    }
    let mut table = String::from("\n[weights]\n");
    for (w, weight) in graph.weights.iter().enumerate() {
        if empty[w] {
            continue;
        }
        let value = weight.value.as_ref().or_else(|why| {
            fail(format!(
                "weight `{}` cannot be described: {why}\n  = help: run ONNX shape inference and constant folding (for example `onnxsim`) and save the model again",
                weight.source
            ))
        })?;
        // The ONNX shape as is: `[]` for a scalar (weights keep their rank).
        let shape: Vec<String> = value.shape.iter().map(u64::to_string).collect();
        table.push_str(&format!(
            "{} = {{ dtype = {}, shape = [{}], source = {} }}\n",
            weight.name,
            attrs::quote(value.dtype.name()),
            shape.join(", "),
            attrs::quote(&weight.source)
        ));
    }
    let mut out = String::with_capacity(plain.len() * 2);
    let mut op: Option<usize> = None;
    let mut weights_written = graph.weights.is_empty();
    for line in plain.lines() {
        if line == "[[ops]]" {
            if !weights_written {
                // Before the first op's blank line.
                out.pop();
                out.push_str(&table);
                out.push('\n');
                weights_written = true;
            }
            op = Some(op.map_or(0, |k| k + 1));
        }
        match op {
            Some(k) if line.starts_with("inputs = ") => {
                let names: Vec<String> = graph.ops[k]
                    .inputs
                    .iter()
                    .map(|input| match *input {
                        OpInput::Absent => "\"\"".to_owned(),
                        OpInput::Tensor(t) => attrs::quote(&model.tensors[t].name),
                        OpInput::Weight(w) if empty[w] => "\"\"".to_owned(),
                        OpInput::Weight(w) => attrs::quote(&graph.weights[w].name),
                    })
                    .collect();
                out.push_str(&format!("inputs = [{}]\n", names.join(", ")));
            }
            Some(k) if line.starts_with("outputs = ") => {
                out.push_str(line);
                out.push('\n');
                if !graph.ops[k].attrs.is_empty() {
                    out.push_str(&format!("attrs = {}\n", attrs::table(&graph.ops[k].attrs)));
                }
            }
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    Ok(out)
}

/// The most folded nodes one folded value may be computed from, each use of a shared one
/// counted (a folded value is a tree: each input is copied into the node that reads it).
pub const MAX_FOLDED_NODES: usize = 4096;

/// The most bytes of constants one folded value may be computed from, each use counted: what
/// a runner reads (initializers, external data, `Constant` values) to evaluate it (1 GiB).
pub const MAX_FOLDED_INPUT_BYTES: u64 = 1 << 30;

/// What one folded value has expanded to so far: folded nodes and the bytes of the constants
/// they read, each use counted; past [`MAX_FOLDED_NODES`] or [`MAX_FOLDED_INPUT_BYTES`] nothing
/// more is expanded, and the value is refused naming the node where it ran out.
#[derive(Default)]
struct FoldBudget {
    nodes: std::cell::Cell<usize>,
    bytes: std::cell::Cell<u64>,
    /// Why it ran out: the node and what was exceeded (the first time).
    exceeded: std::cell::RefCell<Option<String>>,
}

impl FoldBudget {
    fn exceed(&self, why: String) -> String {
        self.exceeded.borrow_mut().get_or_insert(why).clone()
    }

    /// Counts the folded `node`; an error once the budget is spent.
    fn enter(&self, node: &proto::NodeProto) -> Result<(), String> {
        if let Some(why) = self.exceeded.borrow().as_ref() {
            return Err(why.clone());
        }
        self.nodes.set(self.nodes.get() + 1);
        if self.nodes.get() > MAX_FOLDED_NODES {
            return Err(self.exceed(format!(
                "more than {MAX_FOLDED_NODES} folded nodes (each use of a shared one counted), \
                 the last at node `{}` ({})",
                node_label(node),
                node.op_type
            )));
        }
        Ok(())
    }

    /// Counts the bytes of a constant read by a folded node.
    fn read(&self, value: WeightValue) -> Result<WeightValue, String> {
        let bytes = value
            .shape
            .iter()
            .try_fold(value.dtype.size(), |n, &d| n.checked_mul(d))
            .and_then(|n| n.checked_add(self.bytes.get()));
        match bytes {
            Some(bytes) if bytes <= MAX_FOLDED_INPUT_BYTES => {
                self.bytes.set(bytes);
                Ok(value)
            }
            _ => Err(self.exceed(format!(
                "more than {} MiB of constant inputs (each use counted)",
                MAX_FOLDED_INPUT_BYTES >> 20
            ))),
        }
    }

    /// Why the value computed by `node` is refused, if the budget ran out.
    fn exhausted(&self, node: &proto::NodeProto) -> Option<String> {
        self.exceeded.borrow().as_ref().map(|why| {
            format!(
                "it is computed by folded node `{}` ({}) from {why}, which the importer does \
                 not expand\n  = help: a constant computed from this much is almost certainly a \
                 malformed graph; fold it offline (onnx-simplifier) or compute it at run time",
                node_label(node),
                node.op_type
            )
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
