//! The tables a generated module gives an interpreter: every tensor's type, shape and place,
//! every weight's type and shape, and every op with its operands and attributes.
//!
//! An interpreter loops over `OPS` (op `k` runs at step `k`), looks at each op's `kind`, `attrs`
//! and operand indices, and takes the op's views with `views(k)` (see [`crate::Views`]). All of
//! it is `const` data: no allocation, no initialisation at start-up.

/// The element type of a tensor or weight, as written in the model file (`dtype = "f32"`).
///
/// Views expose `f16`/`bf16` as `u16` bits and `bool` as `u8`; a raw `{ bytes = N }` tensor is
/// described as `U8` with shape `[N]`.
// The same table as `memplan_core::DType` (memplan-core/src/model_file/dtype.rs), written twice
// on purpose: a user's binary links this crate and never memplan-core (a dependency of the proc
// macro only), and memplan-core cannot depend on this crate (it depends on the macro, which
// depends on memplan-core). The generated code names these variants, and
// tests/test_dtype_tables.rs checks that both tables have the same dtypes, names and sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// 32-bit IEEE float.
    F32,
    /// 64-bit IEEE float.
    F64,
    /// 16-bit IEEE float (viewed as `u16` bits).
    F16,
    /// 16-bit brain float (viewed as `u16` bits).
    Bf16,
    /// Signed byte.
    I8,
    /// Unsigned byte (also raw bytes).
    U8,
    /// Signed 16-bit integer.
    I16,
    /// Unsigned 16-bit integer.
    U16,
    /// Signed 32-bit integer.
    I32,
    /// Unsigned 32-bit integer.
    U32,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 64-bit integer.
    U64,
    /// Boolean, one byte (viewed as `u8`, 0 or 1).
    Bool,
}

impl DType {
    /// Bytes per element.
    pub const fn size(self) -> usize {
        match self {
            DType::I8 | DType::U8 | DType::Bool => 1,
            DType::F16 | DType::Bf16 | DType::I16 | DType::U16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 | DType::U64 => 8,
        }
    }

    /// The name used in model files (`"f32"`).
    pub const fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::F16 => "f16",
            DType::Bf16 => "bf16",
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::I16 => "i16",
            DType::U16 => "u16",
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::I64 => "i64",
            DType::U64 => "u64",
            DType::Bool => "bool",
        }
    }
}

/// One tensor of the model (`TENSOR_INFO[i]` is the model file's `i`-th tensor, external ones
/// included): what an interpreter needs to run an op on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TensorInfo {
    /// Its name in the model file.
    pub name: &'static str,
    /// Element type.
    pub dtype: DType,
    /// Dimensions (`[bytes]` for a raw tensor).
    pub shape: &'static [usize],
    /// Bytes.
    pub size: usize,
    /// Its pool (index into the model's pools, in declaration order; 0 without `[[pools]]`).
    /// Meaningless for an external tensor.
    pub pool: usize,
    /// Byte offset in its pool's arena (0 for an external tensor).
    pub offset: usize,
    /// `external = true`: the application owns it; it is not in any arena or [`crate::Views`].
    pub external: bool,
}

/// One constant of `[weights]`: described, never stored (its data stays in the source model).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WeightInfo {
    /// Its name in the model file.
    pub name: &'static str,
    /// Element type.
    pub dtype: DType,
    /// Dimensions (`[]` for a scalar).
    pub shape: &'static [usize],
    /// Its name in the source model (the ONNX initializer), if the model file gives one.
    pub source: Option<&'static str>,
}

/// One entry of an op's `inputs`, in the model file's (ONNX) order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// An activation: index into `TENSOR_INFO`.
    Tensor(usize),
    /// A constant: index into `WEIGHTS`.
    Weight(usize),
    /// `""` in the model file: an optional input left out.
    Absent,
}

/// The value of an op attribute (`attrs = { strides = [2, 2] }` in the model file).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Attr {
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(&'static str),
    /// A boolean.
    Bool(bool),
    /// An array of integers (also an empty array).
    Ints(&'static [i64]),
    /// An array of floats.
    Floats(&'static [f64]),
    /// An array of strings.
    Strs(&'static [&'static str]),
}

/// One op of the schedule: `OPS[k]` runs at step `k`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OpInfo {
    /// Its name in the model file (its view method is `op_<name>`).
    pub name: &'static str,
    /// `kind` (the ONNX `op_type`), if the model file gives one.
    pub kind: Option<&'static str>,
    /// Its step: its index in `OPS`.
    pub step: usize,
    /// Its inputs in order: tensors, weights and absent optional inputs.
    pub inputs: &'static [Operand],
    /// The tensors it writes (indices into `TENSOR_INFO`).
    pub outputs: &'static [usize],
    /// Its scratch tensors (indices into `TENSOR_INFO`).
    pub scratch: &'static [usize],
    /// In-place pairs `(output, input)`: the output is written over the input's bytes, so the
    /// two are one view (taken under either index, once).
    pub inplace: &'static [(usize, usize)],
    /// Its attributes, in file order.
    pub attrs: &'static [(&'static str, Attr)],
    /// How its arena views are cut (see [`crate::Views`]); in pool order, then offset order.
    pub cuts: &'static [Cut],
}

impl OpInfo {
    /// The attribute named `name`, if the op has it.
    pub fn attr(&self, name: &str) -> Option<Attr> {
        self.attrs.iter().find(|(n, _)| *n == name).map(|&(_, a)| a)
    }
}

/// One view of an op in its pool's arena: `gap` bytes after the end of the previous view of
/// the same pool (after the start of the arena for the first), `size` bytes long.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cut {
    /// Index of the pool.
    pub pool: usize,
    /// Bytes skipped before it.
    pub gap: usize,
    /// Its bytes.
    pub size: usize,
    /// The tensor it is (index into `TENSOR_INFO`).
    pub tensor: usize,
    /// The input whose bytes it takes over in place, if any: the view is that tensor too.
    pub absorbs: Option<usize>,
}
