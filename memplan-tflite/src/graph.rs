//! Subgraph 0 of a TFLite file as plain values: tensors, operators and their decoded options.

use super::*;

/// A TFLite element type (`TensorType` in the schema).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElementType {
    /// `FLOAT32`.
    F32,
    /// `FLOAT16`.
    F16,
    /// `FLOAT64`.
    F64,
    /// `INT8`.
    I8,
    /// `UINT8`.
    U8,
    /// `INT16`.
    I16,
    /// `UINT16`.
    U16,
    /// `INT32`.
    I32,
    /// `UINT32`.
    U32,
    /// `INT64`.
    I64,
    /// `UINT64`.
    U64,
    /// `BOOL`.
    Bool,
    /// A type memplan does not plan (`STRING`, `COMPLEX64`, `RESOURCE`, `INT4`, ...): its name.
    Other(&'static str),
}

impl ElementType {
    pub(crate) fn of(t: fb::TensorType) -> Self {
        use fb::TensorType as T;
        match t {
            T::Float32 => Self::F32,
            T::Float16 => Self::F16,
            T::Float64 => Self::F64,
            T::Int8 => Self::I8,
            T::Uint8 => Self::U8,
            T::Int16 => Self::I16,
            T::Uint16 => Self::U16,
            T::Int32 => Self::I32,
            T::Uint32 => Self::U32,
            T::Int64 => Self::I64,
            T::Uint64 => Self::U64,
            T::Bool => Self::Bool,
            T::String => Self::Other("STRING"),
            T::Complex64 => Self::Other("COMPLEX64"),
            T::Complex128 => Self::Other("COMPLEX128"),
            T::Resource => Self::Other("RESOURCE"),
            T::Variant => Self::Other("VARIANT"),
            T::Int4 => Self::Other("INT4"),
        }
    }

    /// memplan's dtype for it, or the TFLite name of a type memplan does not plan.
    pub fn dtype(self) -> Result<DType, &'static str> {
        Ok(match self {
            Self::F32 => DType::F32,
            Self::F16 => DType::F16,
            Self::F64 => DType::F64,
            Self::I8 => DType::I8,
            Self::U8 => DType::U8,
            Self::I16 => DType::I16,
            Self::U16 => DType::U16,
            Self::I32 => DType::I32,
            Self::U32 => DType::U32,
            Self::I64 => DType::I64,
            Self::U64 => DType::U64,
            Self::Bool => DType::Bool,
            Self::Other(name) => return Err(name),
        })
    }

    /// The schema's name (`INT8`, `FLOAT32`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Self::F32 => "FLOAT32",
            Self::F16 => "FLOAT16",
            Self::F64 => "FLOAT64",
            Self::I8 => "INT8",
            Self::U8 => "UINT8",
            Self::I16 => "INT16",
            Self::U16 => "UINT16",
            Self::I32 => "INT32",
            Self::U32 => "UINT32",
            Self::I64 => "INT64",
            Self::U64 => "UINT64",
            Self::Bool => "BOOL",
            Self::Other(name) => name,
        }
    }
}

/// Affine quantization: `real = scale * (q - zero_point)`, per tensor (one scale) or per slice
/// along `axis` (one scale per index of that axis).
#[derive(Debug, Clone, PartialEq)]
pub struct Quantization {
    /// The scales: one, or one per index of `axis`.
    pub scale: Vec<f32>,
    /// The zero points, as many as the scales (a single one when the file gives one).
    pub zero_point: Vec<i64>,
    /// The quantized dimension (`quantized_dimension`), meaningful with several scales.
    pub axis: usize,
}

impl Quantization {
    /// Whether there is one scale for the whole tensor.
    pub fn per_tensor(&self) -> bool {
        self.scale.len() == 1
    }

    /// The scale of a per-tensor quantization.
    pub fn scale0(&self) -> f32 {
        self.scale[0]
    }

    /// The first zero point (0 when none is given).
    pub fn zero_point0(&self) -> i64 {
        self.zero_point.first().copied().unwrap_or(0)
    }
}

/// One tensor of subgraph 0.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorInfo {
    /// Its index in the subgraph.
    pub index: usize,
    /// Its name in the file (may be empty).
    pub name: String,
    /// Its element type.
    pub element: ElementType,
    /// Its static shape, as in the file (NHWC for images; `[]` for a scalar).
    pub shape: Vec<usize>,
    /// Its quantization, if the file gives scales.
    pub quantization: Option<Quantization>,
    /// Its constant data (little-endian elements, row-major), for a weight; `None` for an
    /// activation. Shared with every tensor whose data is the same bytes of the file.
    pub data: Option<Data>,
}

impl TensorInfo {
    /// Number of elements (`usize::MAX` if the product overflows, which [`read`] refuses).
    pub fn elements(&self) -> usize {
        self.shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .unwrap_or(usize::MAX)
    }

    /// The name to show in messages: the file's, or `tensor <index>` when it has none.
    pub fn label(&self) -> String {
        if self.name.is_empty() {
            format!("tensor {}", self.index)
        } else {
            self.name.clone()
        }
    }
}

/// A fused activation (`ActivationFunctionType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// `NONE`.
    None,
    /// `RELU`: `max(x, 0)`.
    Relu,
    /// `RELU_N1_TO_1`: `clamp(x, -1, 1)`.
    ReluN1To1,
    /// `RELU6`: `clamp(x, 0, 6)`.
    Relu6,
    /// `TANH`.
    Tanh,
    /// `SIGN_BIT`.
    SignBit,
}

impl Activation {
    pub(crate) fn of(a: fb::ActivationFunctionType) -> Self {
        use fb::ActivationFunctionType as A;
        match a {
            A::None => Self::None,
            A::Relu => Self::Relu,
            A::ReluN1To1 => Self::ReluN1To1,
            A::Relu6 => Self::Relu6,
            A::Tanh => Self::Tanh,
            A::SignBit => Self::SignBit,
        }
    }

    /// The schema's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "NONE",
            Self::Relu => "RELU",
            Self::ReluN1To1 => "RELU_N1_TO_1",
            Self::Relu6 => "RELU6",
            Self::Tanh => "TANH",
            Self::SignBit => "SIGN_BIT",
        }
    }
}

/// `SAME` or `VALID` padding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Padding {
    /// `SAME`: the output is `ceil(input / stride)`, zeros around the input.
    Same,
    /// `VALID`: no padding.
    Valid,
}

impl Padding {
    pub(crate) fn of(p: fb::Padding) -> Self {
        match p {
            fb::Padding::Same => Self::Same,
            fb::Padding::Valid => Self::Valid,
        }
    }
}

/// An operator's builtin options, decoded for the operators memplan runs; the others keep the
/// name of their options table.
#[derive(Debug, Clone, PartialEq)]
pub enum Options {
    /// No options table.
    None,
    /// `Conv2DOptions`.
    Conv2D {
        /// Padding.
        padding: Padding,
        /// Strides (height, width).
        stride: [usize; 2],
        /// Dilations (height, width).
        dilation: [usize; 2],
        /// Fused activation.
        activation: Activation,
    },
    /// `DepthwiseConv2DOptions`.
    DepthwiseConv2D {
        /// Padding.
        padding: Padding,
        /// Strides (height, width).
        stride: [usize; 2],
        /// Dilations (height, width).
        dilation: [usize; 2],
        /// `depth_multiplier` as written (TFLite derives it from the shapes).
        depth_multiplier: i32,
        /// Fused activation.
        activation: Activation,
    },
    /// `Pool2DOptions`.
    Pool2D {
        /// Padding.
        padding: Padding,
        /// Strides (height, width).
        stride: [usize; 2],
        /// Window (height, width).
        filter: [usize; 2],
        /// Fused activation.
        activation: Activation,
    },
    /// `FullyConnectedOptions`.
    FullyConnected {
        /// Fused activation.
        activation: Activation,
        /// `keep_num_dims`.
        keep_num_dims: bool,
        /// Whether the weights are in the default layout (not `SHUFFLED4x16INT8`).
        default_weights_format: bool,
        /// `asymmetric_quantize_inputs` (hybrid models).
        asymmetric_quantize_inputs: bool,
    },
    /// `SoftmaxOptions`.
    Softmax {
        /// `beta`.
        beta: f32,
    },
    /// `ConcatenationOptions`.
    Concatenation {
        /// `axis` (negative counts from the end).
        axis: i32,
        /// Fused activation.
        activation: Activation,
    },
    /// `AddOptions`, `SubOptions`, `MulOptions`, `DivOptions`: the fused activation.
    Arithmetic {
        /// Fused activation.
        activation: Activation,
    },
    /// `ReshapeOptions`.
    Reshape {
        /// `new_shape`, if given.
        new_shape: Option<Vec<i32>>,
    },
    /// `ReducerOptions`.
    Reducer {
        /// `keep_dims`.
        keep_dims: bool,
    },
    /// `SqueezeOptions`.
    Squeeze {
        /// `squeeze_dims`.
        dims: Vec<i32>,
    },
    /// `LeakyReluOptions`.
    LeakyRelu {
        /// `alpha`.
        alpha: f32,
    },
    /// `StridedSliceOptions`: the masks (bit `i` for axis `i`) and `offset`.
    StridedSlice {
        /// `begin_mask`: the axis starts at its beginning (its end for a negative stride).
        begin_mask: i32,
        /// `end_mask`: the axis runs to its end (its beginning for a negative stride).
        end_mask: i32,
        /// `ellipsis_mask`.
        ellipsis_mask: i32,
        /// `new_axis_mask`.
        new_axis_mask: i32,
        /// `shrink_axis_mask`: the axis takes one element and is removed.
        shrink_axis_mask: i32,
        /// `offset`: `end` is relative to `begin`.
        offset: bool,
    },
    /// `BatchMatMulOptions`.
    BatchMatMul {
        /// `adj_x`: the left operand's last two axes are swapped.
        adj_x: bool,
        /// `adj_y`: the right operand's last two axes are swapped.
        adj_y: bool,
    },
    /// An options table this crate does not decode: its name.
    Other(String),
}

/// One operator of subgraph 0, in execution order.
#[derive(Debug, Clone, PartialEq)]
pub struct Operator {
    /// Its index in execution order.
    pub index: usize,
    /// Its builtin code (`BuiltinOperator`; 32 for a custom operator).
    pub code: i32,
    /// Its builtin name (`CONV_2D`), or `CUSTOM` for a custom operator.
    pub name: &'static str,
    /// The custom operator's name (`custom_code`), for a custom operator.
    pub custom: Option<String>,
    /// The operator's version (which options and types it may use).
    pub version: i32,
    /// Its inputs: tensor indices, `None` for an omitted optional input (`-1`).
    pub inputs: Vec<Option<usize>>,
    /// Its outputs: tensor indices.
    pub outputs: Vec<usize>,
    /// Its builtin options.
    pub options: Options,
}

impl Operator {
    /// `CONV_2D (operator 3)`, or the custom operator's name.
    pub fn label(&self) -> String {
        match &self.custom {
            Some(custom) => format!("custom operator `{custom}` (operator {})", self.index),
            None => format!("{} (operator {})", self.name, self.index),
        }
    }
}

/// Subgraph 0 of a TFLite model.
#[derive(Debug, Clone, PartialEq)]
pub struct Graph {
    /// The schema version the file declares.
    pub version: u32,
    /// The model's description, if any.
    pub description: Option<String>,
    /// How many subgraphs the file has (only subgraph 0 is read).
    pub subgraphs: usize,
    /// Its tensors, by index.
    pub tensors: Vec<TensorInfo>,
    /// Its operators, in execution order.
    pub operators: Vec<Operator>,
    /// The graph's inputs (tensor indices), in order.
    pub inputs: Vec<usize>,
    /// The graph's outputs (tensor indices), in order.
    pub outputs: Vec<usize>,
    /// The file's length in bytes.
    pub file_len: usize,
    /// The bytes the reader copied out of the file for this graph (its lists, names and one
    /// copy of the file's bytes for the constants), at most [`BUDGET_PER_FILE_BYTE`] times
    /// `file_len` plus [`BUDGET_SLACK`].
    pub held_bytes: usize,
}
