//! Static shape and type inference: the element type and shape of every value of a graph that
//! the file does not describe (no `value_info`), computed node by node in topological order
//! from the graph inputs' shapes, the initializers and the constants.
//!
//! Exporters that do not run ONNX shape inference (and tf2onnx conversions saved without it)
//! leave `value_info` empty: only the graph's inputs and outputs carry a type. The importer needs
//! the dtype and static shape of every activation tensor (and of every folded value a runner
//! computes), so it infers them here, with the rules of the ONNX operators memplan runs:
//!
//! - elementwise unary operators, activations and normalisations keep their input's shape;
//!   binary and variadic operators (`Add`, `Where`, `Max`, comparisons, ...) broadcast as numpy
//!   does (multidirectional);
//! - `Conv`, `ConvTranspose`, `ConvInteger`, `QLinearConv` and the pools follow `pads`,
//!   `strides`, `dilations`, `auto_pad` (`SAME_UPPER`, `SAME_LOWER`, `VALID`), `output_padding`,
//!   `output_shape` and `ceil_mode` (a last window that would start past the input and its leading
//!   padding is dropped, as ONNX Runtime and memplan's kernels do);
//! - `Gemm`, `MatMul` (batched, with the 1-D rules: a 1-D operand gains and then loses an axis),
//!   `QLinearMatMul`, `MatMulInteger`, `Einsum`, and `com.microsoft`'s `QGemm`, `QLinearAdd`,
//!   `QLinearMul` and `QLinearGlobalAveragePool`;
//! - the shape operators: `Reshape` (`0` copies a dimension unless `allowzero`, `-1` is
//!   inferred), `Flatten`, `Transpose`, `Squeeze`/`Unsqueeze` (axes as attribute or input),
//!   `Concat`, `Split` (`split` attribute or input, `num_outputs`, or equal parts), `Slice`
//!   (constant `starts`/`ends`/`axes`/`steps`, or the opset-9 attributes), `Gather`, `Pad`,
//!   `Resize`/`Upsample` (scales rounded down in f32, or sizes), `Expand`, `Tile`, `TopK`,
//!   `OneHot`, `DepthToSpace`/`SpaceToDepth`, reductions (`keepdims`, axes as attribute or
//!   input, `noop_with_empty_axes`), `ArgMax`/`ArgMin`;
//! - types: `Cast`'s `to`, `Shape`/`Size` are int64, comparisons bool, `QuantizeLinear` the zero
//!   point's type (uint8 without one), `DequantizeLinear` the scale's, the QOperator ops their
//!   output zero point's, the integer products int32.
//!
//! Shape operands (`Reshape`'s shape, `Slice`'s starts, ...) must be known before inference: an
//! initializer, a `Constant`, or a small computation on them and on static shapes (`Shape`,
//! `Gather`, `Concat`, `Unsqueeze`, `Cast`, arithmetic, `Range`, `ConstantOfShape`, ... of at most
//! [`MAX_VALUE_ELEMENTS`] elements), which this module evaluates exactly as ONNX defines it.
//!
//! What cannot be inferred is left unknown with the reason (the node and why): an operator this
//! module does not know (a custom domain), a shape that depends on data computed at run time
//! (`NonZero`, a `Reshape` to a computed shape), an input whose own shape is unknown. A value
//! with a `value_info` keeps it (the file wins); the importer compares the two and refuses a
//! value whose declared dtype or shape differs from the inferred one. Inference is a pure
//! function of the file: the same bytes always infer the same shapes.

use std::collections::BTreeMap;
use std::path::Path;

use crate::proto::{self, type_proto};
use crate::weights;

/// The most elements of a constant whose value inference tracks (shape operands are small).
pub const MAX_VALUE_ELEMENTS: u64 = 1 << 16;

/// ONNX element types.
const FLOAT: i32 = 1;
const UINT8: i32 = 2;
const INT32: i32 = 6;
const INT64: i32 = 7;
const BOOL: i32 = 9;
const DOUBLE: i32 = 11;

/// A constant's elements, row-major: integers (and bools) or floats.
#[derive(Clone, Debug, PartialEq)]
enum Values {
    Int(Vec<i64>),
    Float(Vec<f64>),
}

impl Values {
    fn len(&self) -> usize {
        match self {
            Values::Int(v) => v.len(),
            Values::Float(v) => v.len(),
        }
    }

    fn f64_at(&self, i: usize) -> f64 {
        match self {
            Values::Int(v) => v[i] as f64,
            Values::Float(v) => v[i],
        }
    }

    fn ints(&self) -> Option<Vec<i64>> {
        match self {
            Values::Int(v) => Some(v.clone()),
            Values::Float(_) => None,
        }
    }

    /// The elements at `indices`.
    fn pick(&self, indices: &[usize]) -> Values {
        match self {
            Values::Int(v) => Values::Int(indices.iter().map(|&i| v[i]).collect()),
            Values::Float(v) => Values::Float(indices.iter().map(|&i| v[i]).collect()),
        }
    }
}

fn is_float(elem_type: i32) -> bool {
    matches!(elem_type, FLOAT | DOUBLE | 10 | 16)
}

/// A value's inferred type: element type (ONNX code), static shape, and its elements when it is
/// a small constant.
#[derive(Clone, Debug, PartialEq)]
struct Info {
    elem_type: i32,
    dims: Vec<u64>,
    value: Option<Values>,
}

impl Info {
    fn new(elem_type: i32, dims: Vec<u64>) -> Self {
        Self {
            elem_type,
            dims,
            value: None,
        }
    }

    fn with_value(mut self, value: Option<Values>) -> Self {
        let elements: Option<u64> = self.dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d));
        if let Some(v) = value
            && elements == Some(v.len() as u64)
        {
            self.value = Some(match v {
                // An f32 constant holds f32 values: round what was computed in f64.
                Values::Float(f) if self.elem_type == FLOAT => {
                    Values::Float(f.into_iter().map(|x| x as f32 as f64).collect())
                }
                v => v,
            });
        }
        self
    }

    fn rank(&self) -> usize {
        self.dims.len()
    }

    fn elements(&self) -> Option<u64> {
        self.dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d))
    }

    /// The integer elements, if known.
    fn ints(&self) -> Option<Vec<i64>> {
        self.value.as_ref().and_then(Values::ints)
    }
}

/// The inferred type of each value of a graph.
#[derive(Debug, Default)]
pub(crate) struct Shapes {
    /// By value name: the element type and shape computed from the node's inputs (for values a
    /// node makes), or why they are unknown.
    inferred: BTreeMap<String, Result<(i32, Vec<u64>), String>>,
}

impl Shapes {
    /// What inference says about the value `name` a node makes: `None` for a graph input, an
    /// initializer or a value no node makes.
    pub(crate) fn get(&self, name: &str) -> Option<&Result<(i32, Vec<u64>), String>> {
        self.inferred.get(name)
    }
}

/// The declared type of a value, when it is a tensor with a known element type and every
/// dimension a number (or a symbolic one `dims` gives).
pub(crate) fn declared(
    info: &proto::ValueInfoProto,
    dims: &BTreeMap<String, u64>,
) -> Option<(i32, Vec<u64>)> {
    let Some(type_proto::Value::TensorType(tensor)) =
        info.r#type.as_ref().and_then(|t| t.value.as_ref())
    else {
        return None;
    };
    if tensor.elem_type == 0 {
        return None;
    }
    let shape = tensor.shape.as_ref()?;
    let mut out = Vec::with_capacity(shape.dim.len());
    for dim in &shape.dim {
        out.push(match &dim.value {
            Some(proto::DimensionValue::DimValue(v)) if *v >= 0 => *v as u64,
            Some(proto::DimensionValue::DimParam(p)) => *dims.get(p)?,
            _ => return None,
        });
    }
    Some((tensor.elem_type, out))
}

/// Infers the type of every value of `graph` that nodes make. `types` are the declared types
/// (graph inputs, outputs and `value_info`), `dims` the values of symbolic dimensions, `opset`
/// the default domain's version, `base_dir` where external data is (small initializers are read
/// for their values).
pub(crate) fn infer(
    graph: &proto::GraphProto,
    types: &BTreeMap<&str, &proto::ValueInfoProto>,
    dims: &BTreeMap<String, u64>,
    opset: i64,
    base_dir: &Path,
) -> Shapes {
    let mut known: BTreeMap<&str, Result<Info, String>> = BTreeMap::new();
    for input in &graph.input {
        let info = match declared(input, dims) {
            Some((elem_type, d)) => Ok(Info::new(elem_type, d)),
            None => Err(format!(
                "graph input `{}` has no static shape (give symbolic dimensions a value with \
                 `--dim NAME=N`)",
                input.name
            )),
        };
        known.insert(&input.name, info);
    }
    for tensor in &graph.initializer {
        known.insert(&tensor.name, Ok(initializer(tensor, base_dir)));
    }
    for sparse in &graph.sparse_initializer {
        if let Some(values) = &sparse.values {
            let d = sparse.dims.iter().map(|&d| d.max(0) as u64).collect();
            known.insert(&values.name, Ok(Info::new(values.data_type, d)));
        }
    }
    let mut shapes = Shapes::default();
    for node in &graph.node {
        let inputs: Vec<Option<Result<&Info, String>>> = node
            .input
            .iter()
            .map(|name| {
                (!name.is_empty()).then(|| match known.get(name.as_str()) {
                    Some(Ok(info)) => Ok(info),
                    Some(Err(why)) => Err(why.clone()),
                    None => Err(format!(
                        "node `{}` reads `{name}`, which no node makes",
                        label(node)
                    )),
                })
            })
            .collect();
        let ins: Result<Vec<Option<&Info>>, String> =
            inputs.into_iter().map(Option::transpose).collect();
        let results: Vec<Result<Info, String>> = match ins {
            // An input whose type is unknown: so are the outputs, for the same reason.
            Err(why) => vec![Err(why); node.output.len()],
            Ok(ins) => {
                let context = Node {
                    node,
                    ins: &ins,
                    opset,
                    base_dir,
                };
                match context.infer() {
                    Ok(mut outs) => {
                        outs.resize_with(node.output.len(), || {
                            Err(format!(
                                "node `{}` ({}) has more outputs than the operator makes",
                                label(node),
                                node.op_type
                            ))
                        });
                        outs
                    }
                    Err(why) => {
                        let why = format!("node `{}` ({}): {why}", label(node), node.op_type);
                        vec![Err(why); node.output.len()]
                    }
                }
            }
        };
        for (name, result) in node.output.iter().zip(results) {
            if name.is_empty() {
                continue;
            }
            shapes.inferred.insert(
                name.clone(),
                result
                    .as_ref()
                    .map(|i| (i.elem_type, i.dims.clone()))
                    .map_err(Clone::clone),
            );
            // The file's type wins for what comes after; the inferred value is kept when the
            // two agree.
            let effective = match types.get(name.as_str()).and_then(|t| declared(t, dims)) {
                Some((elem_type, d)) => {
                    let value = result
                        .ok()
                        .filter(|i| i.elem_type == elem_type && i.dims == d)
                        .and_then(|i| i.value);
                    Ok(Info::new(elem_type, d).with_value(value))
                }
                None => result,
            };
            known.insert(name, effective);
        }
    }
    shapes
}

/// An initializer's type, with its elements when it is small.
fn initializer(tensor: &proto::TensorProto, base_dir: &Path) -> Info {
    let dims: Vec<u64> = tensor.dims.iter().map(|&d| d.max(0) as u64).collect();
    let info = Info::new(tensor.data_type, dims);
    let value = (info.elements().is_some_and(|n| n <= MAX_VALUE_ELEMENTS))
        .then(|| tensor_values(tensor, base_dir))
        .flatten();
    info.with_value(value)
}

/// The elements of a small tensor (an initializer or a `Constant`'s value), if its type is one
/// inference computes with.
fn tensor_values(tensor: &proto::TensorProto, base_dir: &Path) -> Option<Values> {
    let dtype = crate::dtype_of(tensor.data_type).ok()?;
    let bytes = weights::from_tensor(tensor, dtype, base_dir)
        .ok()?
        .load()
        .ok()?;
    decode(tensor.data_type, &bytes)
}

/// Little-endian elements of ONNX type `elem_type`.
fn decode(elem_type: i32, bytes: &[u8]) -> Option<Values> {
    fn each<const N: usize, T>(bytes: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
        bytes
            .chunks_exact(N)
            .map(|c| f(c.try_into().expect("N bytes")))
            .collect()
    }
    Some(match elem_type {
        FLOAT => Values::Float(each(bytes, |b| f32::from_le_bytes(b) as f64)),
        DOUBLE => Values::Float(each(bytes, f64::from_le_bytes)),
        UINT8 | BOOL => Values::Int(bytes.iter().map(|&b| b as i64).collect()),
        3 => Values::Int(bytes.iter().map(|&b| b as i8 as i64).collect()),
        4 => Values::Int(each(bytes, |b| u16::from_le_bytes(b) as i64)),
        5 => Values::Int(each(bytes, |b| i16::from_le_bytes(b) as i64)),
        INT32 => Values::Int(each(bytes, |b| i32::from_le_bytes(b) as i64)),
        INT64 => Values::Int(each(bytes, i64::from_le_bytes)),
        12 => Values::Int(each(bytes, |b| u32::from_le_bytes(b) as i64)),
        13 => Values::Int(each(bytes, |b| u64::from_le_bytes(b) as i64)),
        _ => return None,
    })
}

fn label(node: &proto::NodeProto) -> String {
    crate::node_label(node)
}

/// `axis` (negative counts from the end) as an index below `rank`.
fn axis_index(axis: i64, rank: usize) -> Result<usize, String> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    if (0..r).contains(&a) {
        Ok(a as usize)
    } else {
        Err(format!("axis {axis} is out of range for rank {rank}"))
    }
}

/// The numpy (multidirectional) broadcast of `shapes`.
fn broadcast(shapes: &[&[u64]]) -> Result<Vec<u64>, String> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1u64; rank];
    for shape in shapes {
        let offset = rank - shape.len();
        for (i, &d) in shape.iter().enumerate() {
            let o = &mut out[offset + i];
            if *o == d || d == 1 {
                continue;
            }
            if *o == 1 {
                *o = d;
            } else {
                let all: Vec<String> = shapes.iter().map(|s| format!("{s:?}")).collect();
                return Err(format!(
                    "shapes {} do not broadcast (dimension {} is {} and {d})",
                    all.join(", "),
                    offset + i,
                    *o
                ));
            }
        }
    }
    Ok(out)
}

/// For each element of `out` (row-major), the index of the element of a value of shape `dims`
/// that broadcasting reads.
fn broadcast_indices(dims: &[u64], out: &[u64]) -> Vec<usize> {
    let total: u64 = out.iter().product();
    let offset = out.len() - dims.len();
    let mut strides = vec![0usize; out.len()];
    let mut stride = 1usize;
    for i in (0..dims.len()).rev() {
        strides[offset + i] = if dims[i] == 1 { 0 } else { stride };
        stride *= dims[i] as usize;
    }
    let mut indices = Vec::with_capacity(total as usize);
    let mut counter = vec![0u64; out.len()];
    for _ in 0..total {
        indices.push(
            counter
                .iter()
                .zip(&strides)
                .map(|(&c, &s)| c as usize * s)
                .sum(),
        );
        for i in (0..out.len()).rev() {
            counter[i] += 1;
            if counter[i] < out[i] {
                break;
            }
            counter[i] = 0;
        }
    }
    indices
}

fn product(dims: &[u64]) -> Result<u64, String> {
    dims.iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d))
        .ok_or_else(|| format!("the shape {dims:?} has too many elements"))
}

/// One node being inferred: its inputs' types (`None` for an absent optional input).
struct Node<'a> {
    node: &'a proto::NodeProto,
    ins: &'a [Option<&'a Info>],
    opset: i64,
    base_dir: &'a Path,
}

type Outputs = Result<Vec<Result<Info, String>>, String>;

fn one(info: Info) -> Outputs {
    Ok(vec![Ok(info)])
}

impl<'a> Node<'a> {
    fn attr(&self, name: &str) -> Option<&'a proto::AttributeProto> {
        self.node.attribute.iter().find(|a| a.name == name)
    }

    fn int(&self, name: &str, default: i64) -> i64 {
        self.attr(name).map_or(default, |a| a.i)
    }

    fn ints(&self, name: &str) -> Option<Vec<i64>> {
        self.attr(name).map(|a| a.ints.clone())
    }

    fn text(&self, name: &str, default: &str) -> String {
        self.attr(name).map_or(default.to_owned(), |a| {
            String::from_utf8_lossy(&a.s).into_owned()
        })
    }

    /// Input `k`, which must be given.
    fn input(&self, k: usize) -> Result<&'a Info, String> {
        self.ins
            .get(k)
            .copied()
            .flatten()
            .ok_or_else(|| format!("input {k} is missing"))
    }

    /// Input `k`, if given.
    fn optional(&self, k: usize) -> Option<&'a Info> {
        self.ins.get(k).copied().flatten()
    }

    /// The integer elements of input `k`, which must be a known constant.
    fn const_ints(&self, k: usize, what: &str) -> Result<Vec<i64>, String> {
        let info = self.input(k)?;
        info.ints().ok_or_else(|| {
            format!(
                "its {what} (input {k}, `{}`) is not a constant known before inference, so the \
                 output shape depends on values computed at run time",
                self.node.input[k]
            )
        })
    }

    /// The integers of input `k` if given, else of attribute `attr` (older opsets), else `None`.
    fn ints_input_or_attr(&self, k: usize, attr: &str) -> Result<Option<Vec<i64>>, String> {
        match self.optional(k) {
            Some(_) => self.const_ints(k, attr).map(Some),
            None => Ok(self.ints(attr)),
        }
    }

    fn same(&self, k: usize) -> Outputs {
        let x = self.input(k)?;
        one(Info::new(x.elem_type, x.dims.clone()))
    }

    fn infer(&self) -> Outputs {
        let domain = self.node.domain.as_str();
        let op = self.node.op_type.as_str();
        match domain {
            "" | "ai.onnx" => self.default_domain(op),
            "com.microsoft" => self.microsoft(op),
            _ => Err(format!(
                "memplan does not infer the shapes of operators of domain `{domain}`"
            )),
        }
    }

    fn default_domain(&self, op: &str) -> Outputs {
        match op {
            // Elementwise, same shape and type.
            "Abs"
            | "Acos"
            | "Acosh"
            | "Asin"
            | "Asinh"
            | "Atan"
            | "Atanh"
            | "Ceil"
            | "Celu"
            | "Cos"
            | "Cosh"
            | "Elu"
            | "Erf"
            | "Exp"
            | "Floor"
            | "Gelu"
            | "HardSigmoid"
            | "HardSwish"
            | "LeakyRelu"
            | "Log"
            | "Mish"
            | "Neg"
            | "Reciprocal"
            | "Relu"
            | "Round"
            | "Selu"
            | "Sigmoid"
            | "Sign"
            | "Sin"
            | "Sinh"
            | "Softplus"
            | "Softsign"
            | "Sqrt"
            | "Tan"
            | "Tanh"
            | "ThresholdedRelu"
            | "Not"
            | "Softmax"
            | "LogSoftmax"
            | "Hardmax"
            | "LRN"
            | "LpNormalization"
            | "InstanceNormalization"
            | "Clip"
            | "CumSum"
            | "Trilu"
            | "Shrink"
            | "MeanVarianceNormalization"
            | "BitwiseNot" => self.unary(),
            "Identity" => {
                let x = self.input(0)?;
                one(Info::new(x.elem_type, x.dims.clone()).with_value(x.value.clone()))
            }
            "IsInf" | "IsNaN" => {
                let x = self.input(0)?;
                one(Info::new(BOOL, x.dims.clone()))
            }
            "Dropout" => {
                let x = self.input(0)?;
                Ok(vec![
                    Ok(Info::new(x.elem_type, x.dims.clone()).with_value(x.value.clone())),
                    Ok(Info::new(BOOL, x.dims.clone())),
                ])
            }
            "BatchNormalization" => {
                let x = self.input(0)?;
                let c = x.dims.get(1).copied().unwrap_or(1);
                let stat = |k: usize| {
                    let t = self.optional(k).map_or(x.elem_type, |i| i.elem_type);
                    Ok(Info::new(t, vec![c]))
                };
                Ok(vec![
                    Ok(Info::new(x.elem_type, x.dims.clone())),
                    stat(3),
                    stat(4),
                ])
            }
            "LayerNormalization" => {
                let x = self.input(0)?;
                let axis = axis_index(self.int("axis", -1), x.rank())?;
                let mut stat = x.dims.clone();
                for d in &mut stat[axis..] {
                    *d = 1;
                }
                let stash = match self.int("stash_type", 1) {
                    1 => FLOAT,
                    t => t as i32,
                };
                Ok(vec![
                    Ok(Info::new(x.elem_type, x.dims.clone())),
                    Ok(Info::new(stash, stat.clone())),
                    Ok(Info::new(stash, stat)),
                ])
            }
            "Cast" => {
                let x = self.input(0)?;
                let to = self.int("to", 0) as i32;
                let value = x.value.as_ref().and_then(|v| cast(v, to));
                one(Info::new(to, x.dims.clone()).with_value(value))
            }
            "CastLike" => {
                let x = self.input(0)?;
                let to = self.input(1)?.elem_type;
                let value = x.value.as_ref().and_then(|v| cast(v, to));
                one(Info::new(to, x.dims.clone()).with_value(value))
            }
            "Add" | "Sub" | "Mul" | "Div" | "Pow" | "Mod" | "And" | "Or" | "Xor" | "Equal"
            | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual" | "PRelu" | "Max" | "Min"
            | "Sum" | "Mean" | "BitShift" | "BitwiseAnd" | "BitwiseOr" | "BitwiseXor" => {
                self.elementwise(op)
            }
            "Where" => {
                let (c, x, y) = (self.input(0)?, self.input(1)?, self.input(2)?);
                let dims = broadcast(&[&c.dims, &x.dims, &y.dims])?;
                let value = match (&c.value, &x.value, &y.value) {
                    (Some(Values::Int(cv)), Some(xv), Some(yv)) if dims_small(&dims) => {
                        let (ci, xi, yi) = (
                            broadcast_indices(&c.dims, &dims),
                            broadcast_indices(&x.dims, &dims),
                            broadcast_indices(&y.dims, &dims),
                        );
                        let pick = |i: usize| {
                            if cv[ci[i]] != 0 {
                                (xv, xi[i])
                            } else {
                                (yv, yi[i])
                            }
                        };
                        match xv {
                            Values::Int(_) => Some(Values::Int(
                                (0..ci.len())
                                    .map(|i| {
                                        let (v, k) = pick(i);
                                        v.f64_at(k) as i64
                                    })
                                    .collect(),
                            )),
                            Values::Float(_) => Some(Values::Float(
                                (0..ci.len())
                                    .map(|i| {
                                        let (v, k) = pick(i);
                                        v.f64_at(k)
                                    })
                                    .collect(),
                            )),
                        }
                    }
                    _ => None,
                };
                one(Info::new(x.elem_type, dims).with_value(value))
            }
            "QuantizeLinear" => {
                let x = self.input(0)?;
                let t = match self.optional(2) {
                    Some(zp) => zp.elem_type,
                    None => match self.int("output_dtype", 0) {
                        0 => UINT8,
                        t => t as i32,
                    },
                };
                one(Info::new(t, x.dims.clone()))
            }
            "DequantizeLinear" => {
                let x = self.input(0)?;
                let t = self.input(1)?.elem_type;
                one(Info::new(t, x.dims.clone()))
            }
            "DynamicQuantizeLinear" => {
                let x = self.input(0)?;
                Ok(vec![
                    Ok(Info::new(UINT8, x.dims.clone())),
                    Ok(Info::new(FLOAT, vec![])),
                    Ok(Info::new(UINT8, vec![])),
                ])
            }
            "Conv" => self.conv(0, 1, None),
            "ConvInteger" => self.conv(0, 1, Some(INT32)),
            "QLinearConv" => {
                let t = self.input(7)?.elem_type;
                self.conv(0, 3, Some(t))
            }
            "ConvTranspose" => self.conv_transpose(),
            "MaxPool" | "AveragePool" | "LpPool" => self.pool(),
            "GlobalAveragePool" | "GlobalMaxPool" | "GlobalLpPool" => {
                let x = self.input(0)?;
                if x.rank() < 2 {
                    return Err(format!("the input has rank {}, below 2", x.rank()));
                }
                let mut dims = x.dims.clone();
                for d in &mut dims[2..] {
                    *d = 1;
                }
                one(Info::new(x.elem_type, dims))
            }
            "Gemm" => {
                let (a, b) = (self.input(0)?, self.input(1)?);
                let t = a.elem_type;
                self.gemm(a, b, t)
            }
            "MatMul" => {
                let (a, b) = (self.input(0)?, self.input(1)?);
                one(Info::new(a.elem_type, matmul(&a.dims, &b.dims)?))
            }
            "MatMulInteger" => {
                let (a, b) = (self.input(0)?, self.input(1)?);
                one(Info::new(INT32, matmul(&a.dims, &b.dims)?))
            }
            "QLinearMatMul" => {
                let (a, b) = (self.input(0)?, self.input(3)?);
                one(Info::new(
                    self.input(7)?.elem_type,
                    matmul(&a.dims, &b.dims)?,
                ))
            }
            "Einsum" => self.einsum(),
            "Flatten" => {
                let x = self.input(0)?;
                let r = x.rank() as i64;
                let axis = self.int("axis", 1);
                let axis = if axis < 0 { axis + r } else { axis };
                if !(0..=r).contains(&axis) {
                    return Err(format!(
                        "axis {} is out of range for rank {r}",
                        self.int("axis", 1)
                    ));
                }
                let (outer, inner) = x.dims.split_at(axis as usize);
                one(
                    Info::new(x.elem_type, vec![product(outer)?, product(inner)?])
                        .with_value(x.value.clone()),
                )
            }
            "Reshape" => self.reshape(),
            "Transpose" => {
                let x = self.input(0)?;
                let r = x.rank();
                let perm: Vec<i64> = self
                    .ints("perm")
                    .unwrap_or_else(|| (0..r as i64).rev().collect());
                let mut seen = vec![false; r];
                let mut dims = Vec::with_capacity(r);
                for &p in &perm {
                    let a = axis_index(p, r)?;
                    if std::mem::replace(&mut seen[a], true) {
                        return Err(format!("perm {perm:?} repeats axis {p}"));
                    }
                    dims.push(x.dims[a]);
                }
                if perm.len() != r {
                    return Err(format!("perm {perm:?} does not have rank {r}"));
                }
                one(Info::new(x.elem_type, dims))
            }
            "Squeeze" => {
                let x = self.input(0)?;
                let axes = self.ints_input_or_attr(1, "axes")?;
                let dims: Vec<u64> = match axes {
                    None => x.dims.iter().copied().filter(|&d| d != 1).collect(),
                    Some(axes) => {
                        let mut drop = vec![false; x.rank()];
                        for a in axes {
                            let i = axis_index(a, x.rank())?;
                            if x.dims[i] != 1 {
                                return Err(format!(
                                    "axis {a} has size {}, not 1, so it cannot be squeezed",
                                    x.dims[i]
                                ));
                            }
                            drop[i] = true;
                        }
                        x.dims
                            .iter()
                            .zip(drop)
                            .filter(|(_, d)| !d)
                            .map(|(&d, _)| d)
                            .collect()
                    }
                };
                one(Info::new(x.elem_type, dims).with_value(x.value.clone()))
            }
            "Unsqueeze" => {
                let x = self.input(0)?;
                let axes = self
                    .ints_input_or_attr(1, "axes")?
                    .ok_or("it has no axes (neither an input nor an attribute)")?;
                let r = x.rank() + axes.len();
                let mut inserted = vec![false; r];
                for &a in &axes {
                    let i = axis_index(a, r)?;
                    if std::mem::replace(&mut inserted[i], true) {
                        return Err(format!("axes {axes:?} repeat axis {a}"));
                    }
                }
                let mut rest = x.dims.iter();
                let dims = inserted
                    .iter()
                    .map(|&new| if new { 1 } else { *rest.next().unwrap_or(&1) })
                    .collect();
                one(Info::new(x.elem_type, dims).with_value(x.value.clone()))
            }
            "Concat" => self.concat(),
            "Split" => self.split(),
            "Slice" => self.slice(),
            "Gather" => self.gather(),
            "GatherElements" => {
                let (x, indices) = (self.input(0)?, self.input(1)?);
                one(Info::new(x.elem_type, indices.dims.clone()))
            }
            "ScatterElements" | "ScatterND" | "Scatter" => self.same(0),
            "Pad" => self.pad(),
            "Resize" | "Upsample" => self.resize(op),
            "ReduceL1" | "ReduceL2" | "ReduceLogSum" | "ReduceLogSumExp" | "ReduceMax"
            | "ReduceMean" | "ReduceMin" | "ReduceProd" | "ReduceSum" | "ReduceSumSquare" => {
                self.reduce(op)
            }
            "ArgMax" | "ArgMin" => {
                let x = self.input(0)?;
                let axis = axis_index(self.int("axis", 0), x.rank())?;
                let mut dims = x.dims.clone();
                if self.int("keepdims", 1) != 0 {
                    dims[axis] = 1;
                } else {
                    dims.remove(axis);
                }
                one(Info::new(INT64, dims))
            }
            "Shape" => {
                let x = self.input(0)?;
                let r = x.rank() as i64;
                let bound = |key: &str, default: i64| {
                    let v = self.attr(key).map_or(default, |a| a.i);
                    (if v < 0 { v + r } else { v }).clamp(0, r) as usize
                };
                let (start, end) = (bound("start", 0), bound("end", r));
                let values: Vec<i64> = x.dims[start..end.max(start)]
                    .iter()
                    .map(|&d| d as i64)
                    .collect();
                one(Info::new(INT64, vec![values.len() as u64])
                    .with_value(Some(Values::Int(values))))
            }
            "Size" => {
                let x = self.input(0)?;
                let n = product(&x.dims)? as i64;
                one(Info::new(INT64, vec![]).with_value(Some(Values::Int(vec![n]))))
            }
            "Constant" => self.constant(),
            "ConstantOfShape" => {
                let shape = self.const_ints(0, "shape")?;
                let dims = shape
                    .iter()
                    .map(|&d| {
                        u64::try_from(d).map_err(|_| format!("shape {shape:?} has a negative size"))
                    })
                    .collect::<Result<Vec<u64>, String>>()?;
                let (t, fill) = match self.attr("value").and_then(|a| a.t.as_ref()) {
                    Some(tensor) => (
                        tensor.data_type,
                        tensor_values(tensor, self.base_dir).filter(|v| v.len() == 1),
                    ),
                    None => (FLOAT, Some(Values::Float(vec![0.0]))),
                };
                let n = product(&dims)?;
                let value = fill
                    .filter(|_| n <= MAX_VALUE_ELEMENTS)
                    .map(|v| v.pick(&vec![0; n as usize]));
                one(Info::new(t, dims).with_value(value))
            }
            "Range" => {
                let (start, limit, delta) = (self.input(0)?, self.input(1)?, self.input(2)?);
                let scalar = |i: &Info, k: usize, what: &str| -> Result<f64, String> {
                    match &i.value {
                        Some(v) if v.len() == 1 => Ok(v.f64_at(0)),
                        _ => Err(format!(
                            "its {what} (input {k}, `{}`) is not a constant known before \
                             inference, so the output shape depends on values computed at run time",
                            self.node.input[k]
                        )),
                    }
                };
                let (s, l, d) = (
                    scalar(start, 0, "start")?,
                    scalar(limit, 1, "limit")?,
                    scalar(delta, 2, "delta")?,
                );
                if d == 0.0 {
                    return Err("its delta is 0".to_owned());
                }
                let n = ((l - s) / d).ceil().max(0.0);
                if n > (1u64 << 40) as f64 {
                    return Err(format!("it would make {n} elements"));
                }
                let n = n as u64;
                let value = if n > MAX_VALUE_ELEMENTS {
                    None
                } else {
                    match (&start.value, &delta.value) {
                        (Some(Values::Int(v)), Some(Values::Int(step))) => (0..n as i64)
                            .map(|k| k.checked_mul(step[0]).and_then(|x| x.checked_add(v[0])))
                            .collect::<Option<Vec<i64>>>()
                            .map(Values::Int),
                        _ => Some(Values::Float((0..n).map(|k| s + k as f64 * d).collect())),
                    }
                };
                one(Info::new(start.elem_type, vec![n]).with_value(value))
            }
            "Expand" => {
                let x = self.input(0)?;
                let shape = self.const_ints(1, "shape")?;
                let shape: Vec<u64> = shape.iter().map(|&d| d.max(0) as u64).collect();
                let dims = broadcast(&[&x.dims, &shape])?;
                let value = x
                    .value
                    .as_ref()
                    .filter(|_| dims_small(&dims))
                    .map(|v| v.pick(&broadcast_indices(&x.dims, &dims)));
                one(Info::new(x.elem_type, dims).with_value(value))
            }
            "Tile" => {
                let x = self.input(0)?;
                let repeats = self.const_ints(1, "repeats")?;
                if repeats.len() != x.rank() || repeats.iter().any(|&r| r < 0) {
                    return Err(format!(
                        "repeats {repeats:?} do not fit the input's shape {:?}",
                        x.dims
                    ));
                }
                let dims = x
                    .dims
                    .iter()
                    .zip(&repeats)
                    .map(|(&d, &r)| d.checked_mul(r as u64).ok_or("too large"))
                    .collect::<Result<Vec<u64>, _>>()?;
                one(Info::new(x.elem_type, dims))
            }
            "TopK" => {
                let x = self.input(0)?;
                let k = self.const_ints(1, "K")?;
                let axis = axis_index(self.int("axis", -1), x.rank())?;
                let mut dims = x.dims.clone();
                match k.as_slice() {
                    [k] if *k >= 0 && (*k as u64) <= dims[axis] => dims[axis] = *k as u64,
                    _ => {
                        return Err(format!(
                            "K {k:?} does not fit the axis of size {}",
                            dims[axis]
                        ));
                    }
                }
                Ok(vec![
                    Ok(Info::new(x.elem_type, dims.clone())),
                    Ok(Info::new(INT64, dims)),
                ])
            }
            "OneHot" => {
                let (indices, values) = (self.input(0)?, self.input(2)?);
                let depth = match &self.input(1)?.value {
                    Some(v) if v.len() == 1 => v.f64_at(0),
                    _ => {
                        return Err(format!(
                            "its depth (input 1, `{}`) is not a constant known before inference",
                            self.node.input[1]
                        ));
                    }
                };
                if !(depth >= 1.0 && depth < (1u64 << 40) as f64) {
                    return Err(format!("its depth {depth} is not a positive size"));
                }
                let r = indices.rank() + 1;
                let axis = axis_index(self.int("axis", -1), r)?;
                let mut dims = indices.dims.clone();
                dims.insert(axis, depth as u64);
                one(Info::new(values.elem_type, dims))
            }
            "DepthToSpace" | "SpaceToDepth" => {
                let x = self.input(0)?;
                let b = self.int("blocksize", 0);
                if b <= 0 || x.rank() != 4 {
                    return Err(format!(
                        "blocksize {b} on an input of shape {:?} (rank 4 needed)",
                        x.dims
                    ));
                }
                let b = b as u64;
                let [n, c, h, w] = [x.dims[0], x.dims[1], x.dims[2], x.dims[3]];
                let bb = b
                    .checked_mul(b)
                    .ok_or_else(|| format!("blocksize {b} is too large"))?;
                let dims = if op == "DepthToSpace" {
                    if c % bb != 0 {
                        return Err(format!("{c} channels are not a multiple of {bb}"));
                    }
                    let (Some(hb), Some(wb)) = (h.checked_mul(b), w.checked_mul(b)) else {
                        return Err(format!("blocksize {b} is too large"));
                    };
                    vec![n, c / bb, hb, wb]
                } else {
                    if h % b != 0 || w % b != 0 {
                        return Err(format!("{h} x {w} is not a multiple of blocksize {b}"));
                    }
                    let cb = c
                        .checked_mul(bb)
                        .ok_or_else(|| format!("blocksize {b} is too large"))?;
                    vec![n, cb, h / b, w / b]
                };
                one(Info::new(x.elem_type, dims))
            }
            "NonZero" | "Unique" | "NonMaxSuppression" | "Compress" | "StringNormalizer" | "If"
            | "Loop" | "Scan" => Err(
                "its output shape depends on values computed at run time (or on a subgraph)"
                    .to_owned(),
            ),
            _ => Err("memplan does not infer the shapes of this operator".to_owned()),
        }
    }

    fn microsoft(&self, op: &str) -> Outputs {
        match op {
            "QLinearAdd" | "QLinearMul" => {
                let (a, b) = (self.input(0)?, self.input(3)?);
                let t = self.optional(7).map_or(a.elem_type, |zp| zp.elem_type);
                one(Info::new(t, broadcast(&[&a.dims, &b.dims])?))
            }
            "QGemm" => {
                let (a, b) = (self.input(0)?, self.input(3)?);
                let t = match (self.optional(7), self.optional(8)) {
                    (None, _) => FLOAT,
                    (Some(_), Some(zp)) => zp.elem_type,
                    (Some(_), None) => a.elem_type,
                };
                self.gemm(a, b, t)
            }
            "QLinearGlobalAveragePool" => {
                let x = self.input(0)?;
                if x.rank() < 3 {
                    return Err(format!("the input has rank {}, below 3", x.rank()));
                }
                let mut dims = x.dims.clone();
                let spatial = if self.int("channels_last", 0) != 0 {
                    1..x.rank() - 1
                } else {
                    2..x.rank()
                };
                for d in &mut dims[spatial] {
                    *d = 1;
                }
                let t = self.optional(4).map_or(x.elem_type, |zp| zp.elem_type);
                one(Info::new(t, dims))
            }
            _ => Err("memplan does not infer the shapes of this com.microsoft operator".to_owned()),
        }
    }

    fn unary(&self) -> Outputs {
        let x = self.input(0)?;
        let op = self.node.op_type.as_str();
        let value = match (&x.value, op) {
            (Some(Values::Int(v)), "Neg") => v
                .iter()
                .map(|x| x.checked_neg())
                .collect::<Option<_>>()
                .map(Values::Int),
            (Some(Values::Int(v)), "Abs") => v
                .iter()
                .map(|x| x.checked_abs())
                .collect::<Option<_>>()
                .map(Values::Int),
            (Some(Values::Int(v)), "Not") => {
                Some(Values::Int(v.iter().map(|&x| (x == 0) as i64).collect()))
            }
            (Some(Values::Int(v)), "Relu") => {
                Some(Values::Int(v.iter().map(|&x| x.max(0)).collect()))
            }
            (Some(Values::Float(v)), "Neg") => Some(Values::Float(v.iter().map(|x| -x).collect())),
            (Some(Values::Float(v)), "Abs") => {
                Some(Values::Float(v.iter().map(|x| x.abs()).collect()))
            }
            (Some(Values::Float(v)), "Floor") => {
                Some(Values::Float(v.iter().map(|x| x.floor()).collect()))
            }
            (Some(Values::Float(v)), "Ceil") => {
                Some(Values::Float(v.iter().map(|x| x.ceil()).collect()))
            }
            (Some(Values::Float(v)), "Relu") => {
                Some(Values::Float(v.iter().map(|x| x.max(0.0)).collect()))
            }
            _ => None,
        };
        one(Info::new(x.elem_type, x.dims.clone()).with_value(value))
    }

    /// Binary and variadic broadcasting operators, with their values when all are known.
    fn elementwise(&self, op: &str) -> Outputs {
        let ins: Vec<&Info> = self.ins.iter().flatten().copied().collect();
        let Some(first) = ins.first() else {
            return Err("it has no inputs".to_owned());
        };
        if matches!(
            op,
            "Add"
                | "Sub"
                | "Mul"
                | "Div"
                | "Pow"
                | "Mod"
                | "And"
                | "Or"
                | "Xor"
                | "Equal"
                | "Less"
                | "Greater"
                | "LessOrEqual"
                | "GreaterOrEqual"
                | "PRelu"
                | "BitShift"
                | "BitwiseAnd"
                | "BitwiseOr"
                | "BitwiseXor"
        ) && ins.len() != 2
        {
            return Err(format!("it has {} inputs, not 2", ins.len()));
        }
        let shapes: Vec<&[u64]> = ins.iter().map(|i| i.dims.as_slice()).collect();
        let dims = broadcast(&shapes)?;
        let t = match op {
            "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual" => BOOL,
            _ => first.elem_type,
        };
        let value = if dims_small(&dims) && ins.iter().all(|i| i.value.is_some()) {
            let picked: Vec<Values> = ins
                .iter()
                .map(|i| {
                    i.value
                        .as_ref()
                        .expect("checked")
                        .pick(&broadcast_indices(&i.dims, &dims))
                })
                .collect();
            fold_values(op, &picked, self.int("fmod", 0) != 0)
        } else {
            None
        };
        one(Info::new(t, dims).with_value(value))
    }

    fn gemm(&self, a: &Info, b: &Info, t: i32) -> Outputs {
        if a.rank() != 2 || b.rank() != 2 {
            return Err(format!(
                "A {:?} and B {:?} must both have rank 2",
                a.dims, b.dims
            ));
        }
        let (m, ka) = if self.int("transA", 0) != 0 {
            (a.dims[1], a.dims[0])
        } else {
            (a.dims[0], a.dims[1])
        };
        let (kb, n) = if self.int("transB", 0) != 0 {
            (b.dims[1], b.dims[0])
        } else {
            (b.dims[0], b.dims[1])
        };
        if ka != kb {
            return Err(format!(
                "A {:?} and B {:?} do not multiply (transA, transB applied)",
                a.dims, b.dims
            ));
        }
        one(Info::new(t, vec![m, n]))
    }

    /// Conv-like: input `x` and weight `w`, output type `t` (the input's when `None`).
    fn conv(&self, x: usize, w: usize, t: Option<i32>) -> Outputs {
        let (x, w) = (self.input(x)?, self.input(w)?);
        if x.rank() < 3 || w.rank() != x.rank() {
            return Err(format!(
                "input {:?} and weight {:?} do not make a convolution (rank 3 or more, the same \
                 for both)",
                x.dims, w.dims
            ));
        }
        let kernel = match self.ints("kernel_shape") {
            Some(k) => k.iter().map(|&k| k.max(0) as u64).collect(),
            None => w.dims[2..].to_vec(),
        };
        let spatial = self.window(&x.dims[2..], &kernel, false)?;
        let mut dims = vec![x.dims[0], w.dims[0]];
        dims.extend(spatial);
        one(Info::new(t.unwrap_or(x.elem_type), dims))
    }

    fn pool(&self) -> Outputs {
        let x = self.input(0)?;
        if x.rank() < 3 {
            return Err(format!("the input {:?} has rank below 3", x.dims));
        }
        let kernel: Vec<u64> = self
            .ints("kernel_shape")
            .ok_or("it has no kernel_shape")?
            .iter()
            .map(|&k| k.max(0) as u64)
            .collect();
        let ceil = self.int("ceil_mode", 0) != 0;
        let mut dims = x.dims[..2].to_vec();
        dims.extend(self.window(&x.dims[2..], &kernel, ceil)?);
        Ok(vec![
            Ok(Info::new(x.elem_type, dims.clone())),
            Ok(Info::new(INT64, dims)),
        ])
    }

    /// The output's spatial sizes of a window (`strides`, `dilations`, `pads`, `auto_pad`,
    /// `ceil_mode`) over `input` with `kernel`.
    fn window(&self, input: &[u64], kernel: &[u64], ceil: bool) -> Result<Vec<u64>, String> {
        let r = input.len();
        if kernel.len() != r {
            return Err(format!(
                "the kernel {kernel:?} does not have the input's {r} spatial dimensions"
            ));
        }
        let list = |name: &str, len: usize, default: i64| -> Result<Vec<i64>, String> {
            match self.ints(name) {
                Some(v) if v.len() == len => Ok(v),
                Some(v) if v.is_empty() => Ok(vec![default; len]),
                Some(v) => Err(format!("{name} {v:?} does not have {len} values")),
                None => Ok(vec![default; len]),
            }
        };
        let strides = list("strides", r, 1)?;
        let dilations = list("dilations", r, 1)?;
        let pads = list("pads", 2 * r, 0)?;
        if strides.iter().chain(&dilations).any(|&v| v <= 0) || kernel.contains(&0) {
            return Err("strides, dilations and kernel sizes must be positive".to_owned());
        }
        let auto_pad = self.text("auto_pad", "NOTSET");
        let mut out = Vec::with_capacity(r);
        for i in 0..r {
            let (n, s, d) = (input[i] as i128, strides[i] as i128, dilations[i] as i128);
            let span = (kernel[i] as i128 - 1) * d + 1;
            let o = match auto_pad.as_str() {
                "NOTSET" | "VALID" => {
                    let (b, e) = if auto_pad == "NOTSET" {
                        (pads[i] as i128, pads[i + r] as i128)
                    } else {
                        (0, 0)
                    };
                    let padded = n + b + e;
                    if padded < span {
                        return Err(format!(
                            "the kernel spans {span} elements, more than the padded input \
                             {padded} along spatial dimension {i}"
                        ));
                    }
                    if ceil {
                        let mut o = (padded - span + s - 1) / s + 1;
                        // A last window starting past the input and its leading padding is
                        // dropped (ONNX Runtime).
                        if (o - 1) * s >= n + b {
                            o -= 1;
                        }
                        o
                    } else {
                        (padded - span) / s + 1
                    }
                }
                "SAME_UPPER" | "SAME_LOWER" => (n + s - 1) / s,
                other => return Err(format!("auto_pad {other:?} is not an ONNX value")),
            };
            out.push(o as u64);
        }
        Ok(out)
    }

    fn conv_transpose(&self) -> Outputs {
        let (x, w) = (self.input(0)?, self.input(1)?);
        let r = x.rank().saturating_sub(2);
        if x.rank() < 3 || w.rank() != x.rank() {
            return Err(format!(
                "input {:?} and weight {:?} do not make a transposed convolution",
                x.dims, w.dims
            ));
        }
        let group = self.int("group", 1).max(1) as u64;
        let kernel: Vec<i64> = match self.ints("kernel_shape") {
            Some(k) => k,
            None => w.dims[2..].iter().map(|&d| d as i64).collect(),
        };
        if kernel.len() != r {
            return Err(format!(
                "the kernel {kernel:?} does not have the input's {r} spatial dimensions"
            ));
        }
        let channels = w.dims[1]
            .checked_mul(group)
            .ok_or_else(|| format!("group {group} is too large"))?;
        let list = |name: &str, len: usize, default: i64| -> Vec<i64> {
            self.ints(name)
                .filter(|v| v.len() == len)
                .unwrap_or_else(|| vec![default; len])
        };
        let strides = list("strides", r, 1);
        let dilations = list("dilations", r, 1);
        let pads = list("pads", 2 * r, 0);
        let out_pad = list("output_padding", r, 0);
        let mut dims = vec![x.dims[0], channels];
        match self.ints("output_shape") {
            Some(shape) => {
                // The spatial sizes (a full shape's last `r` values).
                if shape.len() < r {
                    return Err(format!("output_shape {shape:?} does not give {r} sizes"));
                }
                dims.extend(shape[shape.len() - r..].iter().map(|&d| d.max(0) as u64));
            }
            None => {
                let auto_pad = self.text("auto_pad", "NOTSET");
                for i in 0..r {
                    let n = x.dims[2 + i] as i128;
                    let o = if auto_pad.starts_with("SAME") {
                        n * strides[i] as i128
                    } else {
                        let (b, e) = if auto_pad == "VALID" {
                            (0, 0)
                        } else {
                            (pads[i] as i128, pads[i + r] as i128)
                        };
                        strides[i] as i128 * (n - 1)
                            + out_pad[i] as i128
                            + (kernel[i] as i128 - 1) * dilations[i] as i128
                            + 1
                            - b
                            - e
                    };
                    if o < 0 {
                        return Err(format!("the output's spatial size {i} would be {o}"));
                    }
                    dims.push(o as u64);
                }
            }
        }
        one(Info::new(x.elem_type, dims))
    }

    fn einsum(&self) -> Outputs {
        let equation: String = self
            .text("equation", "")
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        if !equation.is_ascii() {
            return Err(format!("equation {equation:?} is not ASCII"));
        }
        let (lhs, rhs) = match equation.split_once("->") {
            Some((l, r)) => (l, Some(r)),
            None => (equation.as_str(), None),
        };
        let terms: Vec<&str> = lhs.split(',').collect();
        let ins: Vec<&Info> = self.ins.iter().flatten().copied().collect();
        if terms.len() != ins.len() {
            return Err(format!(
                "equation {equation:?} has {} operands, the node {}",
                terms.len(),
                ins.len()
            ));
        }
        let mut letters: BTreeMap<char, u64> = BTreeMap::new();
        let mut counts: BTreeMap<char, usize> = BTreeMap::new();
        let mut ellipsis: Vec<&[u64]> = Vec::new();
        for (term, info) in terms.iter().zip(&ins) {
            let (before, after) = match term.split_once("...") {
                Some((b, a)) => (b, Some(a)),
                None => (*term, None),
            };
            let named = before.len() + after.map_or(0, str::len);
            if named > info.rank() || (after.is_none() && named != info.rank()) {
                return Err(format!(
                    "term {term:?} does not fit an operand of shape {:?}",
                    info.dims
                ));
            }
            let ell = info.rank() - named;
            let mut axes: Vec<(char, u64)> =
                before.chars().zip(info.dims.iter().copied()).collect();
            if let Some(after) = after {
                ellipsis.push(&info.dims[before.len()..before.len() + ell]);
                axes.extend(
                    after
                        .chars()
                        .zip(info.dims[before.len() + ell..].iter().copied()),
                );
            }
            for (c, d) in axes {
                *counts.entry(c).or_default() += 1;
                let entry = letters.entry(c).or_insert(d);
                if *entry == 1 {
                    *entry = d;
                } else if d != 1 && *entry != d {
                    return Err(format!("label {c:?} has sizes {entry} and {d}"));
                }
            }
        }
        let ell = broadcast(&ellipsis)?;
        let dims: Vec<u64> = match rhs {
            Some(rhs) => {
                let (before, after) = match rhs.split_once("...") {
                    Some((b, a)) => (b, Some(a)),
                    None => (rhs, None),
                };
                let label = |c: char| {
                    letters
                        .get(&c)
                        .copied()
                        .ok_or_else(|| format!("output label {c:?} is not an input's"))
                };
                let mut dims = before
                    .chars()
                    .map(label)
                    .collect::<Result<Vec<u64>, String>>()?;
                if let Some(after) = after {
                    dims.extend(&ell);
                    dims.extend(
                        after
                            .chars()
                            .map(label)
                            .collect::<Result<Vec<u64>, String>>()?,
                    );
                }
                dims
            }
            None => {
                let mut dims = ell;
                dims.extend(
                    letters
                        .iter()
                        .filter(|(c, _)| counts[c] == 1)
                        .map(|(_, &d)| d),
                );
                dims
            }
        };
        one(Info::new(ins[0].elem_type, dims))
    }

    fn reshape(&self) -> Outputs {
        let x = self.input(0)?;
        let shape = self.const_ints(1, "shape")?;
        let allowzero = self.int("allowzero", 0) != 0;
        let total = product(&x.dims)?;
        let mut dims = Vec::with_capacity(shape.len());
        let mut infer = None;
        for (i, &s) in shape.iter().enumerate() {
            dims.push(match s {
                -1 if infer.is_none() => {
                    infer = Some(i);
                    1
                }
                -1 => return Err(format!("shape {shape:?} has more than one -1")),
                0 if !allowzero => *x.dims.get(i).ok_or_else(|| {
                    format!(
                        "shape {shape:?} copies dimension {i} (0), which the input {:?} does not have",
                        x.dims
                    )
                })?,
                s if s >= 0 => s as u64,
                s => return Err(format!("shape {shape:?} has a negative size {s}")),
            });
        }
        let known = product(&dims)?;
        if let Some(i) = infer {
            if known == 0 || total % known != 0 {
                return Err(format!(
                    "the input {:?} ({total} elements) cannot be reshaped to {shape:?}",
                    x.dims
                ));
            }
            dims[i] = total / known;
        } else if known != total {
            return Err(format!(
                "the input {:?} ({total} elements) cannot be reshaped to {shape:?} ({known})",
                x.dims
            ));
        }
        one(Info::new(x.elem_type, dims).with_value(x.value.clone()))
    }

    fn concat(&self) -> Outputs {
        let ins: Vec<&Info> = self.ins.iter().flatten().copied().collect();
        let Some(first) = ins.first() else {
            return Err("it has no inputs".to_owned());
        };
        let axis = axis_index(self.int("axis", 0), first.rank())?;
        let mut dims = first.dims.clone();
        dims[axis] = 0;
        for info in &ins {
            if info.rank() != dims.len()
                || info
                    .dims
                    .iter()
                    .zip(&first.dims)
                    .enumerate()
                    .any(|(i, (a, b))| i != axis && a != b)
            {
                return Err(format!(
                    "inputs of shapes {:?} and {:?} do not concatenate along axis {axis}",
                    first.dims, info.dims
                ));
            }
            dims[axis] = dims[axis]
                .checked_add(info.dims[axis])
                .ok_or("the concatenation is too large")?;
        }
        // Values: only of 1-D operands (shape vectors).
        let value = if dims.len() == 1 && ins.iter().all(|i| i.value.is_some()) {
            if ins.iter().all(|i| matches!(i.value, Some(Values::Int(_)))) {
                Some(Values::Int(
                    ins.iter().flat_map(|i| i.ints().expect("ints")).collect(),
                ))
            } else {
                Some(Values::Float(
                    ins.iter()
                        .flat_map(|i| {
                            let v = i.value.as_ref().expect("checked");
                            (0..v.len()).map(|k| v.f64_at(k)).collect::<Vec<_>>()
                        })
                        .collect(),
                ))
            }
        } else {
            None
        };
        one(Info::new(first.elem_type, dims).with_value(value))
    }

    fn split(&self) -> Outputs {
        let x = self.input(0)?;
        let axis = axis_index(self.int("axis", 0), x.rank())?;
        let outputs = self.node.output.len() as u64;
        let d = x.dims[axis];
        let parts: Vec<u64> = match self.ints_input_or_attr(1, "split")? {
            Some(split) if !split.is_empty() => {
                if split.iter().any(|&s| s < 0)
                    || split.iter().try_fold(0i64, |a, &b| a.checked_add(b)) != Some(d as i64)
                {
                    return Err(format!(
                        "split {split:?} does not add up to the axis's size {d}"
                    ));
                }
                split.iter().map(|&s| s as u64).collect()
            }
            _ => {
                let n = match self.attr("num_outputs") {
                    Some(a) if a.i > 0 && a.i as u64 == outputs => a.i as u64,
                    Some(a) => {
                        return Err(format!("num_outputs {} is not its {outputs} outputs", a.i));
                    }
                    _ => outputs,
                };
                if n == 0 {
                    return Err("it has no outputs".to_owned());
                }
                if self.attr("num_outputs").is_some() {
                    let chunk = d.div_ceil(n);
                    (0..n)
                        .map(|k| chunk.min(d.saturating_sub(k * chunk)))
                        .collect()
                } else {
                    if d % n != 0 {
                        return Err(format!(
                            "the axis's size {d} does not split into {n} equal parts"
                        ));
                    }
                    vec![d / n; n as usize]
                }
            }
        };
        Ok(parts
            .into_iter()
            .map(|p| {
                let mut dims = x.dims.clone();
                dims[axis] = p;
                Ok(Info::new(x.elem_type, dims))
            })
            .collect())
    }

    fn slice(&self) -> Outputs {
        let x = self.input(0)?;
        let r = x.rank();
        let (starts, ends, axes, steps) = if self.ins.len() > 1 {
            let starts = self.const_ints(1, "starts")?;
            let ends = self.const_ints(2, "ends")?;
            let axes = match self.optional(3) {
                Some(_) => Some(self.const_ints(3, "axes")?),
                None => None,
            };
            let steps = match self.optional(4) {
                Some(_) => Some(self.const_ints(4, "steps")?),
                None => None,
            };
            (starts, ends, axes, steps)
        } else {
            (
                self.ints("starts").ok_or("it has no starts")?,
                self.ints("ends").ok_or("it has no ends")?,
                self.ints("axes"),
                None,
            )
        };
        let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
        let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
        if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
            return Err(format!(
                "starts {starts:?}, ends {ends:?}, axes {axes:?} and steps {steps:?} differ in length"
            ));
        }
        let mut dims = x.dims.clone();
        // Per axis: first index and step of the elements kept.
        let mut picks: Vec<(i128, i128)> = (0..r).map(|_| (0, 1)).collect();
        for k in 0..starts.len() {
            let a = axis_index(axes[k], r)?;
            let d = x.dims[a] as i128;
            let step = steps[k] as i128;
            if step == 0 {
                return Err("a step is 0".to_owned());
            }
            let (mut s, mut e) = (starts[k] as i128, ends[k] as i128);
            if s < 0 {
                s += d;
            }
            if e < 0 {
                e += d;
            }
            let n = if step > 0 {
                s = s.clamp(0, d);
                e = e.clamp(0, d);
                ((e - s + step - 1) / step).max(0)
            } else {
                s = s.clamp(0, (d - 1).max(0));
                e = e.clamp(-1, d - 1);
                ((s - e + (-step) - 1) / (-step)).max(0)
            };
            dims[a] = n as u64;
            picks[a] = (s, step);
        }
        let value = x.value.as_ref().filter(|_| dims_small(&dims)).map(|v| {
            let mut strides = vec![1i128; r];
            for i in (0..r.saturating_sub(1)).rev() {
                strides[i] = strides[i + 1] * x.dims[i + 1] as i128;
            }
            let indices: Vec<usize> = broadcast_indices(&dims, &dims)
                .into_iter()
                .map(|flat| {
                    let mut rest = flat;
                    let mut index = 0i128;
                    for i in (0..r).rev() {
                        let c = (rest % dims[i] as usize) as i128;
                        rest /= dims[i] as usize;
                        index += (picks[i].0 + c * picks[i].1) * strides[i];
                    }
                    index as usize
                })
                .collect();
            v.pick(&indices)
        });
        one(Info::new(x.elem_type, dims).with_value(value))
    }

    fn gather(&self) -> Outputs {
        let (x, indices) = (self.input(0)?, self.input(1)?);
        if x.rank() == 0 {
            return Err("the data is a scalar".to_owned());
        }
        let axis = axis_index(self.int("axis", 0), x.rank())?;
        let mut dims = x.dims[..axis].to_vec();
        dims.extend(&indices.dims);
        dims.extend(&x.dims[axis + 1..]);
        let value = match (&x.value, indices.ints()) {
            (Some(v), Some(idx)) if dims_small(&dims) => {
                let n = x.dims[axis] as i64;
                let outer: u64 = x.dims[..axis].iter().product();
                let inner: u64 = x.dims[axis + 1..].iter().product();
                let resolved: Option<Vec<u64>> = idx
                    .iter()
                    .map(|&i| {
                        let i = if i < 0 { i + n } else { i };
                        (0..n).contains(&i).then_some(i as u64)
                    })
                    .collect();
                resolved.map(|resolved| {
                    let mut picks = Vec::new();
                    for o in 0..outer {
                        for &i in &resolved {
                            for k in 0..inner {
                                picks.push(((o * n as u64 + i) * inner + k) as usize);
                            }
                        }
                    }
                    v.pick(&picks)
                })
            }
            _ => None,
        };
        one(Info::new(x.elem_type, dims).with_value(value))
    }

    fn pad(&self) -> Outputs {
        let x = self.input(0)?;
        let r = x.rank();
        let pads = match self.optional(1) {
            Some(_) => self.const_ints(1, "pads")?,
            None => self
                .ints("pads")
                .or_else(|| self.ints("paddings"))
                .ok_or("it has no pads")?,
        };
        let axes: Vec<usize> = match self.optional(3) {
            Some(_) => self
                .const_ints(3, "axes")?
                .iter()
                .map(|&a| axis_index(a, r))
                .collect::<Result<_, _>>()?,
            None => (0..r).collect(),
        };
        if pads.len() != 2 * axes.len() {
            return Err(format!(
                "pads {pads:?} do not give a start and an end for each of {} axes",
                axes.len()
            ));
        }
        let mut dims = x.dims.clone();
        let n = axes.len();
        for (k, &a) in axes.iter().enumerate() {
            let size = dims[a] as i128 + pads[k] as i128 + pads[k + n] as i128;
            if size < 0 {
                return Err(format!("pads {pads:?} remove more than axis {a} holds"));
            }
            dims[a] = size as u64;
        }
        one(Info::new(x.elem_type, dims))
    }

    fn resize(&self, op: &str) -> Outputs {
        let x = self.input(0)?;
        let r = x.rank();
        // Upsample (scales as input 1 or the opset-7 attribute), Resize of opset 10 (scales as
        // input 1), Resize of opset 11+ (roi, scales, sizes).
        let (scales_at, sizes_at) = if op == "Upsample" || self.opset < 11 {
            (1, None)
        } else {
            (2, Some(3))
        };
        let given = |k: usize| self.optional(k).filter(|i| i.elements() != Some(0));
        let axes: Vec<usize> = match self.ints("axes") {
            Some(a) => a
                .iter()
                .map(|&a| axis_index(a, r))
                .collect::<Result<_, _>>()?,
            None => (0..r).collect(),
        };
        let mut dims = x.dims.clone();
        if let Some(k) = sizes_at.filter(|&k| given(k).is_some()) {
            let sizes = self.const_ints(k, "sizes")?;
            if sizes.len() != axes.len() || sizes.iter().any(|&s| s < 0) {
                return Err(format!("sizes {sizes:?} do not fit {} axes", axes.len()));
            }
            let policy = self.text("keep_aspect_ratio_policy", "stretch");
            if policy == "stretch" {
                for (&a, &s) in axes.iter().zip(&sizes) {
                    dims[a] = s as u64;
                }
            } else {
                let ratios = axes
                    .iter()
                    .zip(&sizes)
                    .map(|(&a, &s)| s as f32 / x.dims[a] as f32);
                let scale = if policy == "not_larger" {
                    ratios.fold(f32::INFINITY, f32::min)
                } else {
                    ratios.fold(0.0, f32::max)
                };
                for &a in &axes {
                    dims[a] = (scale * x.dims[a] as f32).round() as u64;
                }
            }
            return one(Info::new(x.elem_type, dims));
        }
        let scales: Vec<f64> = match given(scales_at) {
            Some(info) => match &info.value {
                Some(v) => (0..v.len()).map(|k| v.f64_at(k)).collect(),
                None => {
                    return Err(format!(
                        "its scales (input {scales_at}, `{}`) are not a constant known before \
                         inference",
                        self.node.input[scales_at]
                    ));
                }
            },
            None => match self.attr("scales") {
                Some(a) if op == "Upsample" => a.floats.iter().map(|&f| f as f64).collect(),
                _ => return Err("it has neither scales nor sizes".to_owned()),
            },
        };
        if scales.len() != axes.len() {
            return Err(format!("{} scales for {} axes", scales.len(), axes.len()));
        }
        for (&a, &s) in axes.iter().zip(&scales) {
            // In f32, as ONNX Runtime and memplan's kernels compute it.
            let o = (x.dims[a] as f32 * s as f32).floor();
            if !(o >= 0.0 && o < (1u64 << 40) as f32) {
                return Err(format!("scale {s} makes an output size of {o}"));
            }
            dims[a] = o as u64;
        }
        one(Info::new(x.elem_type, dims))
    }

    fn reduce(&self, op: &str) -> Outputs {
        let x = self.input(0)?;
        let r = x.rank();
        let axes = self.ints_input_or_attr(1, "axes")?.unwrap_or_default();
        let keep = self.int("keepdims", 1) != 0;
        if axes.is_empty() && self.int("noop_with_empty_axes", 0) != 0 {
            return one(Info::new(x.elem_type, x.dims.clone()).with_value(x.value.clone()));
        }
        let mut reduced = vec![axes.is_empty(); r];
        for &a in &axes {
            reduced[axis_index(a, r)?] = true;
        }
        let dims: Vec<u64> = x
            .dims
            .iter()
            .zip(&reduced)
            .filter_map(|(&d, &red)| match (red, keep) {
                (true, true) => Some(1),
                (true, false) => None,
                (false, _) => Some(d),
            })
            .collect();
        // Values: integer reductions over every axis (shape arithmetic: the product of dims).
        let value = match (&x.value, reduced.iter().all(|&r| r)) {
            (Some(Values::Int(v)), true) => match op {
                "ReduceProd" => v.iter().try_fold(1i64, |a, &b| a.checked_mul(b)),
                "ReduceSum" => v.iter().try_fold(0i64, |a, &b| a.checked_add(b)),
                "ReduceMax" => v.iter().copied().max(),
                "ReduceMin" => v.iter().copied().min(),
                _ => None,
            }
            .map(|n| Values::Int(vec![n])),
            _ => None,
        };
        one(Info::new(x.elem_type, dims).with_value(value))
    }

    fn constant(&self) -> Outputs {
        if let Some(tensor) = self.attr("value").and_then(|a| a.t.as_ref()) {
            let dims: Vec<u64> = tensor.dims.iter().map(|&d| d.max(0) as u64).collect();
            let info = Info::new(tensor.data_type, dims);
            let value = info
                .elements()
                .filter(|&n| n <= MAX_VALUE_ELEMENTS)
                .and_then(|_| tensor_values(tensor, self.base_dir));
            return one(info.with_value(value));
        }
        if let Some(a) = self.attr("value_float") {
            return one(Info::new(FLOAT, vec![]).with_value(Some(Values::Float(vec![a.f as f64]))));
        }
        if let Some(a) = self.attr("value_floats") {
            let v: Vec<f64> = a.floats.iter().map(|&f| f as f64).collect();
            return one(Info::new(FLOAT, vec![v.len() as u64]).with_value(Some(Values::Float(v))));
        }
        if let Some(a) = self.attr("value_int") {
            return one(Info::new(INT64, vec![]).with_value(Some(Values::Int(vec![a.i]))));
        }
        if let Some(a) = self.attr("value_ints") {
            return one(Info::new(INT64, vec![a.ints.len() as u64])
                .with_value(Some(Values::Int(a.ints.clone()))));
        }
        Err("it has no tensor, float or int value".to_owned())
    }
}

/// Whether a value of shape `dims` is small enough to compute.
fn dims_small(dims: &[u64]) -> bool {
    product(dims).is_ok_and(|n| n <= MAX_VALUE_ELEMENTS)
}

/// MatMul's output shape: numpy `matmul` (batch dimensions broadcast; a 1-D first operand is a
/// row `[1, K]`, a 1-D second a column `[K, 1]`, and the added axis is removed again).
pub(crate) fn matmul(a: &[u64], b: &[u64]) -> Result<Vec<u64>, String> {
    if a.is_empty() || b.is_empty() {
        return Err(format!("MatMul of {a:?} and {b:?}: an operand is a scalar"));
    }
    let a2: Vec<u64> = if a.len() == 1 {
        vec![1, a[0]]
    } else {
        a.to_vec()
    };
    let b2: Vec<u64> = if b.len() == 1 {
        vec![b[0], 1]
    } else {
        b.to_vec()
    };
    let (m, k) = (a2[a2.len() - 2], a2[a2.len() - 1]);
    let (kb, n) = (b2[b2.len() - 2], b2[b2.len() - 1]);
    if k != kb {
        return Err(format!(
            "MatMul of {a:?} and {b:?}: the inner dimensions {k} and {kb} differ"
        ));
    }
    let mut out = broadcast(&[&a2[..a2.len() - 2], &b2[..b2.len() - 2]])?;
    if a.len() > 1 {
        out.push(m);
    }
    if b.len() > 1 {
        out.push(n);
    }
    Ok(out)
}

/// `values` cast to ONNX type `to` (integers truncate toward zero, bools are `!= 0`).
fn cast(values: &Values, to: i32) -> Option<Values> {
    Some(match (values, to) {
        (Values::Int(v), t) if is_float(t) => Values::Float(v.iter().map(|&x| x as f64).collect()),
        (Values::Float(v), t) if is_float(t) => Values::Float(v.clone()),
        (v, BOOL) => Values::Int((0..v.len()).map(|k| (v.f64_at(k) != 0.0) as i64).collect()),
        (Values::Int(v), _) => Values::Int(v.clone()),
        (Values::Float(v), _) => {
            if v.iter().any(|x| !x.is_finite() || x.abs() > 9.0e18) {
                return None;
            }
            Values::Int(v.iter().map(|&x| x.trunc() as i64).collect())
        }
    })
}

/// The elementwise `op` over operands already broadcast to one shape, when inference computes it
/// (integer shape arithmetic and float scale arithmetic); `None` otherwise.
fn fold_values(op: &str, operands: &[Values], fmod: bool) -> Option<Values> {
    let n = operands.first()?.len();
    if operands.iter().all(|v| matches!(v, Values::Int(_))) {
        let ints: Vec<&Vec<i64>> = operands
            .iter()
            .filter_map(|v| match v {
                Values::Int(v) => Some(v),
                Values::Float(_) => None,
            })
            .collect();
        let binary = |f: &dyn Fn(i64, i64) -> Option<i64>| -> Option<Values> {
            (0..n)
                .map(|i| f(ints[0][i], ints[1][i]))
                .collect::<Option<Vec<i64>>>()
                .map(Values::Int)
        };
        let fold = |f: &dyn Fn(i64, i64) -> Option<i64>| -> Option<Values> {
            (0..n)
                .map(|i| ints[1..].iter().try_fold(ints[0][i], |a, v| f(a, v[i])))
                .collect::<Option<Vec<i64>>>()
                .map(Values::Int)
        };
        return match op {
            "Add" => binary(&|a, b| a.checked_add(b)),
            "Sub" => binary(&|a, b| a.checked_sub(b)),
            "Mul" => binary(&|a, b| a.checked_mul(b)),
            "Div" => binary(&|a, b| a.checked_div(b)),
            "Mod" if fmod => binary(&|a, b| a.checked_rem(b)),
            "Mod" => binary(&|a, b| {
                let r = a.checked_rem(b)?;
                Some(if r != 0 && (r < 0) != (b < 0) {
                    r + b
                } else {
                    r
                })
            }),
            "Equal" => binary(&|a, b| Some((a == b) as i64)),
            "Less" => binary(&|a, b| Some((a < b) as i64)),
            "Greater" => binary(&|a, b| Some((a > b) as i64)),
            "LessOrEqual" => binary(&|a, b| Some((a <= b) as i64)),
            "GreaterOrEqual" => binary(&|a, b| Some((a >= b) as i64)),
            "And" => binary(&|a, b| Some((a != 0 && b != 0) as i64)),
            "Or" => binary(&|a, b| Some((a != 0 || b != 0) as i64)),
            "Xor" => binary(&|a, b| Some(((a != 0) != (b != 0)) as i64)),
            "Max" => fold(&|a, b| Some(a.max(b))),
            "Min" => fold(&|a, b| Some(a.min(b))),
            "Sum" => fold(&|a, b| a.checked_add(b)),
            _ => None,
        };
    }
    if operands.iter().all(|v| matches!(v, Values::Float(_))) {
        let f = |k: usize, i: usize| operands[k].f64_at(i);
        let binary = |g: &dyn Fn(f64, f64) -> f64| -> Option<Values> {
            Some(Values::Float((0..n).map(|i| g(f(0, i), f(1, i))).collect()))
        };
        return match op {
            "Add" => binary(&|a, b| a + b),
            "Sub" => binary(&|a, b| a - b),
            "Mul" => binary(&|a, b| a * b),
            "Div" => binary(&|a, b| a / b),
            "Max" if operands.len() == 2 => binary(&f64::max),
            "Min" if operands.len() == 2 => binary(&f64::min),
            "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual" => {
                let cmp = |a: f64, b: f64| -> bool {
                    match op {
                        "Equal" => a == b,
                        "Less" => a < b,
                        "Greater" => a > b,
                        "LessOrEqual" => a <= b,
                        _ => a >= b,
                    }
                };
                Some(Values::Int(
                    (0..n).map(|i| cmp(f(0, i), f(1, i)) as i64).collect(),
                ))
            }
            _ => None,
        };
    }
    None
}

/// A model as an exporter that does not run shape inference writes it: `bytes` (an ONNX file)
/// with the graph's `value_info` removed and, with `outputs`, the graph outputs' types too.
/// Every other byte is kept as it is (the protobuf is edited field by field, not decoded and
/// written again). For tests and for checking what the importer infers against a file's own
/// shapes.
pub fn strip_value_info(bytes: &[u8], outputs: bool) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(bytes.len());
    for field in fields(bytes)? {
        if field.number == 7 && field.wire == 2 {
            // ModelProto.graph
            let mut graph = Vec::with_capacity(field.body.len());
            for g in fields(field.body)? {
                match (g.number, g.wire) {
                    // GraphProto.value_info
                    (13, 2) => {}
                    // GraphProto.output: keep the name only.
                    (12, 2) if outputs => {
                        let mut info = Vec::new();
                        for f in fields(g.body)? {
                            if f.number == 1 {
                                info.extend_from_slice(f.whole);
                            }
                        }
                        put_field(&mut graph, 12, &info);
                    }
                    _ => graph.extend_from_slice(g.whole),
                }
            }
            put_field(&mut out, 7, &graph);
        } else {
            out.extend_from_slice(field.whole);
        }
    }
    Ok(out)
}

/// One protobuf field: its number, wire type, bytes (key included) and, for a length-delimited
/// one, its body.
struct Field<'b> {
    number: u64,
    wire: u8,
    whole: &'b [u8],
    body: &'b [u8],
}

fn varint(bytes: &[u8], at: &mut usize) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at).ok_or("truncated varint")?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("varint longer than 10 bytes".to_owned())
}

fn fields(bytes: &[u8]) -> Result<Vec<Field<'_>>, String> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let start = at;
        let key = varint(bytes, &mut at)?;
        let (number, wire) = (key >> 3, (key & 7) as u8);
        let body_start;
        match wire {
            0 => {
                varint(bytes, &mut at)?;
                body_start = at;
            }
            1 => {
                at += 8;
                body_start = at;
            }
            2 => {
                let len = varint(bytes, &mut at)?;
                body_start = at;
                at = at
                    .checked_add(usize::try_from(len).map_err(|_| "length too large")?)
                    .ok_or("length too large")?;
            }
            5 => {
                at += 4;
                body_start = at;
            }
            w => return Err(format!("wire type {w} is not supported")),
        }
        if at > bytes.len() {
            return Err("truncated field".to_owned());
        }
        let body = if wire == 2 {
            &bytes[body_start..at]
        } else {
            &[][..]
        };
        out.push(Field {
            number,
            wire,
            whole: &bytes[start..at],
            body,
        });
    }
    Ok(out)
}

fn put_field(out: &mut Vec<u8>, number: u64, body: &[u8]) {
    let mut put = |mut v: u64| loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            break;
        }
        out.push(byte | 0x80);
    };
    put(number << 3 | 2);
    put(body.len() as u64);
    out.extend_from_slice(body);
}

#[cfg(test)]
#[path = "shapes_tests.rs"]
mod tests;
