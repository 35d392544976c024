//! Reads ONNX models for memplan: an ONNX model's activation tensors and ops as a model TOML
//! (`memplan import`), and everything a runner needs besides: each node's attributes, its inputs
//! in ONNX order (tensors, weights, absent optional inputs), and the weights' data.
//!
//! An ONNX file is a protobuf `ModelProto` whose graph lists nodes in topological order, weights
//! as initializers, and the type and shape of values in `input`, `output` and `value_info`.
//! `value_info` is optional for the operators memplan runs: the importer infers the dtype and
//! static shape of every value the file does not describe (`shapes/`: node by node from the
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
//!   the original name is kept as `source`. An optional output left out (`""`) before one that
//!   is used (an `LSTM`'s `Y` beside its `Y_h`) becomes a tensor of its own, `<node>:output<i>`,
//!   that nothing reads: the kernels take outputs by position.
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
//! values they capture from the outer graph are not counted as read by them. Such a node is
//! never folded, even with constant inputs (a branch may read a graph input): it stays an op.

mod attrs;
mod external;
mod fold;
mod left_out;
mod proto;
mod shapes;
mod value_types;
mod walk;
mod weights;
mod weights_table;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use memplan_core::model_file::DEFAULT_ALIGNMENT;
use memplan_core::{DType, Model};
use prost::Message;

pub use attrs::AttrValue;
pub use fold::{BUDGET_PER_FILE_BYTE, BUDGET_SLACK, MAX_FOLDED_INPUT_BYTES, MAX_FOLDED_NODES};
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

/// One input of a node: memplan's own operand type (an absent optional input, an activation
/// tensor of the model, or a constant: an index into [`Graph::weights`]).
pub use memplan_core::model_file::OpInput;

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
    let mut model = decode(file_name, bytes)?;
    if let Some(graph) = model.graph.as_mut() {
        left_out::name_left_out_outputs(graph);
    }
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
    let importer = Importer::new(file_name, bytes.len() as u64, graph, options, opset);
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
    let model = match proto::ModelProto::decode(bytes) {
        Ok(model) => model,
        // Only a file that is not a protobuf message is taken for TFLite by its identifier: an
        // ONNX file has `TFL3` at bytes 4..8 when its producer's name starts so.
        Err(_) if bytes.get(4..8) == Some(b"TFL3") => {
            return not_onnx(
                "it is a TensorFlow Lite flatbuffer",
                "convert it to ONNX first (for example with tf2onnx)",
            );
        }
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
    /// Each initializer by name (the first of a name).
    initializer_of: BTreeMap<&'g str, &'g proto::TensorProto>,
    /// What the folded values hold together (`fold.rs`).
    held: fold::HeldBudget,
    /// The `--dim` names that some dimension used.
    used_dims: std::cell::RefCell<BTreeSet<String>>,
    /// The inferred type of every value a node makes (`shapes/`).
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
        file_len: u64,
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
        let mut initializer_of = BTreeMap::new();
        for tensor in &graph.initializer {
            initializer_of.entry(tensor.name.as_str()).or_insert(tensor);
        }
        let mut initializers: BTreeSet<&str> = initializer_of.keys().copied().collect();
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
        let held = fold::HeldBudget::new(file_len);
        let shapes = shapes::infer(graph, &types, &options.dims, opset, &base_dir, held.limit());
        Self {
            file,
            base_dir,
            graph,
            options,
            types,
            initializers,
            initializer_of,
            held,
            used_dims: std::cell::RefCell::default(),
            shapes,
        }
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
        // A name the generated module cannot have: not an identifier, a crate (`memplan`,
        // `std`), or a name of the prelude or a primitive type (`Vec`, `u8`) it would hide.
        if let Some(name) = &self.options.name
            && let Some(problem) = memplan_core::model_file::module_name_problem(name)
        {
            return fail(format!(
                "{problem}\n  = help: pass another name, for example `--name {}`",
                memplan_core::model_file::names::model_name(name)
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
                // Single assignment holds for initializers too: ONNX's reference evaluates the
                // node's value, so reading the initializer instead would be silently wrong.
                if self.initializers.contains(output.as_str()) {
                    return fail(format!(
                        "`{file}`: value `{output}` is both an initializer and the output of node `{}` (node {k}, {})\n  = help: every ONNX value has one producer (`onnx.checker.check_model` refuses this file); rename the initializer or the node's output, or export the model again",
                        node_label(node),
                        node.op_type
                    ));
                }
                produced_at.entry(output.as_str()).or_insert(k);
            }
        }
        // A set: the graph's inputs searched once per node input would be quadratic.
        let graph_inputs: BTreeSet<&str> = graph.input.iter().map(|i| i.name.as_str()).collect();
        for (k, node) in graph.node.iter().enumerate() {
            for input in node.input.iter().filter(|i| !i.is_empty()) {
                if self.initializers.contains(input.as_str()) {
                    continue;
                }
                let is_graph_input = graph_inputs.contains(input.as_str());
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

    /// The initializer named `name` (the first, if several are), in logarithmic time.
    fn initializer(&self, name: &str) -> Option<&'g proto::TensorProto> {
        self.initializer_of.get(name).copied()
    }

    /// Whether `name` has a fully static shape (after `--dim`).
    fn is_static(&self, name: &str) -> bool {
        self.shape_of(name, "value").is_ok()
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
