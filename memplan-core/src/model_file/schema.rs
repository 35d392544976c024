//! The model a `model.toml` describes: tensors, the ops that produce and read them, and options.

use crate::model::{Buffer, Lifetime, Problem};
use crate::model_file::DType;
use crate::solve::Solver;

/// A position in a model file: 1-based line and column (columns count characters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

/// The default of `[model] alignment`: every tensor offset is a multiple of 16 bytes.
pub const DEFAULT_ALIGNMENT: u64 = 16;

/// The largest alignment accepted anywhere (`#[repr(align)]` allows at most 2^29).
pub const MAX_ALIGNMENT: u64 = 1 << 29;

/// A parsed and checked model file. Tensors and ops keep the file's order.
///
/// Made by [`crate::parse_model`]; every reference between ops and tensors is an index into
/// [`Model::tensors`], and every tensor has a derived [`Tensor::lifetime`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Model {
    /// The file's name as the user wrote it, for messages (`model.toml`).
    pub file: String,
    /// `[model] name`: the generated module's name, a Rust identifier.
    pub name: String,
    /// `[model] alignment`: the least alignment of every tensor offset (default 16).
    pub alignment: u64,
    /// `[model] budget`: the largest arena allowed, in bytes, if any.
    pub budget: Option<u64>,
    /// `[model] solver`: the solver to use, if given (otherwise the core's default).
    pub solver: Option<Solver>,
    /// `[model] nodes`: the exact search's node budget, if given (otherwise
    /// [`crate::DEFAULT_NODE_BUDGET`]).
    pub nodes: Option<u64>,
    /// `[model] inputs`: graph inputs (indices into `tensors`), live from step 0.
    pub inputs: Vec<usize>,
    /// `[model] outputs`: graph outputs (indices into `tensors`), live through the last step.
    pub outputs: Vec<usize>,
    /// `[tensors]`, in file order.
    pub tensors: Vec<Tensor>,
    /// `[[ops]]`, in execution order: op `k` runs at step `k`.
    pub ops: Vec<Op>,
    /// `[weights]`, in file order: constants the ops read (never in an arena, no lifetime).
    pub weights: Vec<Weight>,
    /// `[[pools]]`, fastest first; empty for one default pool (the single `Arena`).
    pub pools: Vec<PoolDecl>,
    /// `[model] inplace` (default `true`): whether ops may write outputs over their inputs.
    pub inplace: bool,
    /// The in-place pairs in effect, in op order (empty when `inplace` is `false`); see
    /// [`crate::model_file::INPLACE_KINDS`].
    pub aliases: Vec<Alias>,
    /// Where the `[model]` keys are, for later messages (budget errors point at `budget`).
    pub locations: ModelLocations,
}

/// Where the keys of `[model]` are in the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModelLocations {
    /// The `[model]` table (or the start of the file if it is missing).
    pub model: Location,
    /// The `name` value.
    pub name: Location,
    /// The `budget` value, if present.
    pub budget: Option<Location>,
}

/// What a tensor holds: typed elements, or raw bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// `{ dtype = "f32", shape = [1, 8, 26, 26] }`.
    Typed {
        /// Element type.
        dtype: DType,
        /// Dimensions, each at least 1.
        shape: Vec<u64>,
    },
    /// `{ bytes = 4096 }`: an untyped buffer, viewed as `[u8]`.
    Bytes,
}

/// One tensor of `[tensors]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensor {
    /// Its name: a Rust identifier, also the name of its accessor.
    pub name: String,
    /// Typed or raw.
    pub layout: Layout,
    /// Bytes it occupies (elements x element size, or `bytes`).
    pub size: u64,
    /// Alignment of its offset: its `align`, or the model's, but at least its element's.
    pub alignment: u64,
    /// `source`: its name in the model it came from (for example an ONNX tensor name), if any.
    pub source: Option<String>,
    /// Steps during which it is live, derived from the ops (see [`crate::derive_lifetimes`]).
    pub lifetime: Lifetime,
    /// Where its key is in the file.
    pub location: Location,
    /// `pool`, `offset` and `external`: where its memory comes from.
    pub memory: TensorMemory,
}

/// Where a tensor's memory comes from: `pool = "sram"`, `offset = 0`, `external = true`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TensorMemory {
    /// `pool`: the pool it must live in (an index into [`Model::pools`]); `None` lets the planner
    /// choose (the first pool with room).
    pub pool: Option<usize>,
    /// `offset`: a pinned offset within its pool that the planner plans around.
    pub offset: Option<u64>,
    /// `external = true`: the application owns it; it takes no arena space and op views take it
    /// as a parameter.
    pub external: bool,
}

/// One `[[pools]]` entry: a memory the planner may use, fastest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolDecl {
    /// `name`: a Rust identifier; names the pool's module and arena type (`sram` ->
    /// `sram::Arena`, `SramArena`).
    pub name: String,
    /// `size`: the most bytes its arena may take; `None` for no limit.
    pub capacity: Option<u64>,
    /// `link_section`: the linker section the application places the pool's `Memory` in (the
    /// generated code places nothing in a section), if any.
    pub link_section: Option<String>,
    /// Where its table starts in the file.
    pub location: Location,
    /// Where its `size` value is, if given.
    pub size_location: Option<Location>,
}

/// An in-place pair: op `op` writes `output` over `input`'s bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Alias {
    /// The op (its step).
    pub op: usize,
    /// The tensor written (index into [`Model::tensors`]).
    pub output: usize,
    /// The tensor whose memory it takes; not read after `op`.
    pub input: usize,
    /// Declared with `inplace = { .. }` rather than chosen from the op's `kind`.
    pub explicit: bool,
}

impl Tensor {
    /// Number of elements of its view: the product of its shape, or its bytes when raw.
    pub fn len(&self) -> u64 {
        match &self.layout {
            Layout::Typed { shape, .. } => shape.iter().product(),
            Layout::Bytes => self.size,
        }
    }

    /// Whether the view is empty (never, in a checked model).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The Rust element type of its view (`f32`, `u8` for raw bytes, ...).
    pub fn rust_type(&self) -> &'static str {
        match &self.layout {
            Layout::Typed { dtype, .. } => dtype.rust_type(),
            Layout::Bytes => "u8",
        }
    }
}

/// One entry of `[weights]`: a constant an op reads (an ONNX initializer), described but never
/// stored: it takes no arena space, has no lifetime and is not a field of any op view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Weight {
    /// Its name: a Rust identifier, distinct from every tensor name.
    pub name: String,
    /// Element type.
    pub dtype: DType,
    /// Dimensions; `[]` is a scalar, and a zero dimension an empty constant.
    pub shape: Vec<u64>,
    /// `source`: its name in the model it came from (the ONNX initializer), if any.
    pub source: Option<String>,
    /// Where its key is in the file.
    pub location: Location,
}

/// One entry of an op's `inputs`, in the order written (ONNX order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpInput {
    /// An activation tensor (index into [`Model::tensors`]).
    Tensor(usize),
    /// A constant (index into [`Model::weights`]).
    Weight(usize),
    /// `""`: an optional input left out (the ONNX convention).
    Absent,
}

/// The value of one op attribute (`attrs = { strides = [2, 2], auto_pad = "NOTSET" }`).
///
/// Floats compare by their bits, so a model equals itself even with a NaN attribute.
#[derive(Clone, Debug)]
pub enum AttrValue {
    /// `group = 1`.
    Int(i64),
    /// `alpha = 0.2`.
    Float(f64),
    /// `auto_pad = "NOTSET"`.
    Str(String),
    /// `ceil = true`.
    Bool(bool),
    /// `strides = [2, 2]` (also an empty array `[]`).
    Ints(Vec<i64>),
    /// `scales = [1.0, 2.0]` (integers in a float array are read as floats).
    Floats(Vec<f64>),
    /// `names = ["a", "b"]`.
    Strs(Vec<String>),
}

impl PartialEq for AttrValue {
    fn eq(&self, other: &Self) -> bool {
        use AttrValue::{Bool, Float, Floats, Int, Ints, Str, Strs};
        match (self, other) {
            (Int(a), Int(b)) => a == b,
            (Float(a), Float(b)) => a.to_bits() == b.to_bits(),
            (Str(a), Str(b)) => a == b,
            (Bool(a), Bool(b)) => a == b,
            (Ints(a), Ints(b)) => a == b,
            (Floats(a), Floats(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
            }
            (Strs(a), Strs(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for AttrValue {}

/// One entry of `[[ops]]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Op {
    /// Its name: a Rust identifier (its view method is `op_<name>`).
    pub name: String,
    /// `kind`: the operator type (for example the ONNX `op_type`, `"Conv"`), if any.
    pub kind: Option<String>,
    /// `source`: its name in the model it came from, if any.
    pub source: Option<String>,
    /// Tensors it reads (indices into [`Model::tensors`]); a tensor may appear twice. Only the
    /// activation tensors of `inputs`: see [`Op::all_inputs`] for the full list.
    pub inputs: Vec<usize>,
    /// `inputs` as written, in order: tensors, weights and absent (`""`) entries. A parsed model
    /// always fills it; a model built in code may leave it empty, which means `inputs` (all
    /// tensors).
    pub all_inputs: Vec<OpInput>,
    /// `attrs = { .. }`: the operator's attributes, in file order.
    pub attrs: Vec<(String, AttrValue)>,
    /// Tensors it writes.
    pub outputs: Vec<usize>,
    /// Tensors live only while it runs.
    pub scratch: Vec<usize>,
    /// `inplace = { <output> = "<input>" }`: declared in-place pairs `(output, input)`; `None`
    /// when absent (the op's `kind` decides), `Some(vec![])` for `inplace = {}` (never in place).
    pub inplace: Option<Vec<(usize, usize)>>,
    /// `inplace = true`: the op writes each output over an input where the planner can, its
    /// pairs chosen as for an in-place `kind` whatever its kind is (how an importer of any format
    /// says that a node's kernel runs in place; `false` without the key, when `kind` decides).
    pub inplace_any_kind: bool,
    /// Where its table starts in the file.
    pub location: Location,
}

impl Op {
    /// Its inputs in order: [`Op::all_inputs`], or `inputs` as tensors when that is empty.
    pub fn input_list(&self) -> Vec<OpInput> {
        if self.all_inputs.is_empty() {
            self.inputs.iter().map(|&t| OpInput::Tensor(t)).collect()
        } else {
            self.all_inputs.clone()
        }
    }
}

impl Weight {
    /// Bytes of its data (elements x element size).
    pub fn size(&self) -> u64 {
        self.shape.iter().product::<u64>() * self.dtype.size()
    }
}

impl Model {
    /// Index of the weight named `name`.
    pub fn weight_index(&self, name: &str) -> Option<usize> {
        self.weights.iter().position(|w| w.name == name)
    }

    /// Index of the tensor named `name`.
    pub fn tensor_index(&self, name: &str) -> Option<usize> {
        self.tensors.iter().position(|t| t.name == name)
    }

    /// Number of steps: one per op.
    pub fn steps(&self) -> u64 {
        self.ops.len() as u64
    }

    /// The planning problem: one buffer per tensor, in tensor order, with its size, derived
    /// lifetime and alignment.
    ///
    /// This is the plain problem: every tensor, app-owned (`external`) ones too, with no pins,
    /// pools or in-place pairs; [`crate::model_plan::plan_model`] applies those.
    pub fn to_problem(&self) -> Problem {
        let buffers = self
            .tensors
            .iter()
            .map(|t| {
                Buffer::new(t.name.clone(), t.size, t.lifetime.start, t.lifetime.end)
                    .with_alignment(t.alignment)
            })
            .collect();
        Problem::new(buffers).expect(
            "a parsed model has unique names, non-zero sizes, non-empty lifetimes and \
             power-of-two alignments",
        )
    }

    /// The alignment of the arena: the largest alignment of any tensor (and at least the
    /// model's).
    pub fn arena_alignment(&self) -> u64 {
        self.tensors
            .iter()
            .map(|t| t.alignment)
            .fold(self.alignment, u64::max)
    }
}
