//! The network between the stages of the build: each node as the generated code runs it, the
//! constants, the planned network ready to be written ([`Prepared`]), what the build-time
//! rewriting did ([`FuseReport`]) and the kernels' names for dtypes, in memplan's own types
//! ([`AttrValue`], [`OpInput`]): the front ends (`onnx`, `tflite`) make it, `fuse` rewrites it,
//! `emit` writes it; this module imports none of them, nor any format's types.

use std::path::PathBuf;

use memplan_core::model_plan::ModelPlan;
use memplan_core::{DType, Model};

/// The kernels' name for a dtype (the `Data` variant), or why they cannot hold it.
pub(crate) fn kernel_dtype(dtype: DType) -> Result<&'static str, String> {
    match dtype {
        DType::F32 => Ok("F32"),
        DType::I64 => Ok("I64"),
        DType::I32 => Ok("I32"),
        DType::Bool => Ok("Bool"),
        DType::I8 => Ok("I8"),
        DType::U8 => Ok("U8"),
        other => Err(format!(
            "element type {} is not supported by the kernels (float32, int64, int32, bool, int8, uint8)",
            other.name()
        )),
    }
}

/// An attribute's value, memplan's own whichever format the network came from (the ONNX front
/// end converts its attributes, the TFLite lowering computes them). Not the model file's
/// [`memplan_core::AttrValue`]: floats here are the `f32` the kernels read (the model file's are
/// TOML's `f64`), and there are no booleans.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum AttrValue {
    /// An integer.
    Int(i64),
    /// A float.
    Float(f32),
    /// A string.
    Str(String),
    /// A list of integers.
    Ints(Vec<i64>),
    /// A list of floats.
    Floats(Vec<f32>),
    /// A list of strings.
    Strs(Vec<String>),
}

/// Where one input of a node comes from: memplan's own operand type, the model file's (a
/// value of the network is `Tensor`, an index into the model's tensors; a constant is `Weight`,
/// an index into the network's constants).
pub(crate) use memplan_core::model_file::OpInput;

/// One node as the generated code runs it.
#[derive(Clone)]
pub(crate) struct Node {
    /// The ONNX node's name, or `<op_type>_<k>`.
    pub(crate) label: String,
    /// Its `op_type`.
    pub(crate) op_type: String,
    /// Its attributes, tensor-valued ones as the one value they hold.
    pub(crate) attrs: Vec<(String, AttrValue)>,
    /// Its inputs in ONNX order.
    pub(crate) inputs: Vec<OpInput>,
    /// Its outputs (indices into the model's tensors).
    pub(crate) outputs: Vec<usize>,
    /// Its scratch tensor and how many `u64` words it holds.
    pub(crate) scratch: Option<(usize, usize)>,
    /// Whether its kernel writes its output over its input 0 (chosen to meet a RAM budget,
    /// [`crate::ram_budget`]): the two share memory, an in-place pair of the model.
    pub(crate) overwrites: bool,
    /// The chain of nodes it stands for, run band by band ([`crate::patches`]), if it is one.
    pub(crate) stage: Option<Box<Streamed>>,
}

/// One call of the generated loop: layer `node` (of the stage) computes `rows` output rows into
/// its band buffer at row `at`, after moving the buffer's rows `drop..drop + at` to its front;
/// it reads `take` rows of its input from row `from` (of the band buffer before it, or of the
/// stage's input), with `above` rows of padding above them. The last layer writes the stage's
/// output at row `at` (and never drops).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Step {
    pub(crate) node: usize,
    pub(crate) drop: usize,
    pub(crate) at: usize,
    pub(crate) rows: usize,
    pub(crate) from: usize,
    pub(crate) take: usize,
    pub(crate) above: usize,
}

/// A stage as the generated code runs it (built by [`crate::patches`]).
#[derive(Clone)]
pub(crate) struct Streamed {
    /// The stage's nodes, as the file has them.
    pub(crate) nodes: Vec<Node>,
    /// The tensors between them (`nodes.len() - 1`), each now a band buffer.
    pub(crate) bands: Vec<usize>,
    /// Rows each band buffer holds.
    pub(crate) band_rows: Vec<usize>,
    /// Every call, in order.
    pub(crate) steps: Vec<Step>,
}

/// A constant, loaded.
pub(crate) struct Constant {
    /// Its ONNX name.
    pub(crate) onnx: String,
    /// Its element type.
    pub(crate) dtype: DType,
    /// Its ONNX shape.
    pub(crate) shape: Vec<u64>,
    /// Its little-endian bytes.
    pub(crate) bytes: Vec<u8>,
}

/// A network ready to be written as Rust.
pub(crate) struct Prepared {
    /// The planned model: activations, plus scratch tensors; graph inputs and outputs
    /// `external` unless they are kept in the arena.
    pub(crate) model: Model,
    /// The plan `memplan!` would compile for that model.
    pub(crate) plan: ModelPlan,
    /// The model file's text (what `memplan plan` reads to show the same plan).
    pub(crate) toml: String,
    /// Per tensor: its ONNX shape (`[]` for a scalar).
    pub(crate) shapes: Vec<Vec<u64>>,
    /// How many of the model's tensors are values of the graph; the scratch tensors follow.
    pub(crate) values: usize,
    /// The nodes in execution order.
    pub(crate) nodes: Vec<Node>,
    /// The nodes as the file has them (a stage's nodes one by one), for the tables the
    /// interpreters read (`network::NODES`).
    pub(crate) table_nodes: Vec<Node>,
    /// The constants, in order of first use.
    pub(crate) constants: Vec<Constant>,
    /// Files read besides the model (external weight data).
    pub(crate) files: Vec<PathBuf>,
    /// The most bytes of the arena's tensors live at one step, none sharing another's memory.
    pub(crate) bound_without_sharing: u64,
    /// The sum of the arena's tensor sizes.
    pub(crate) sum_of_sizes: u64,
    /// What the build-time rewriting did.
    pub(crate) fused: FuseReport,
}

/// What [`fuse`](crate::fuse::fuse) did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FuseReport {
    /// BatchNormalizations folded into Convs.
    pub(crate) batch_norms: usize,
    /// Constant `Add`s folded into MatMuls as a bias.
    pub(crate) biases: usize,
    /// Activations fused into the node before them.
    pub(crate) activations: usize,
    /// Constants packed for the matrix product.
    pub(crate) packed: usize,
}
