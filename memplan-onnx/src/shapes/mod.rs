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
//!   `QLinearMatMul`, `MatMulInteger`, `Einsum`, the recurrent `LSTM`, `GRU` and `RNN`, and
//!   `com.microsoft`'s `QGemm`, `QLinearAdd`, `QLinearMul` and `QLinearGlobalAveragePool`;
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
//!
//! The rules are split by family: `node` holds what inference knows of a value and of the
//! node being inferred, and the shape arithmetic they share; `elementwise`, `conv`, `matmul`,
//! `reshape`, `select`, `reduce`, `recurrent` and `quantized` the operator rules; `eval` the constant
//! evaluation of shape operands; `strip` the removal of `value_info` for tests. This file walks
//! the graph and picks each node's rule.

use std::collections::BTreeMap;
use std::path::Path;

use crate::proto::{self, type_proto};

mod conv;
mod elementwise;
mod eval;
mod matmul;
mod node;
mod quantized;
mod recurrent;
mod reduce;
mod reshape;
mod select;
mod strip;

pub use node::MAX_VALUE_ELEMENTS;
pub use strip::strip_value_info;

use eval::{cast, tensor_values};
use matmul::matmul;
use node::{BOOL, INT32, INT64, Info, Node, Outputs, Values, one, product};

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

/// The values inference keeps, each at most [`MAX_VALUE_ELEMENTS`] elements, within `limit`
/// bytes together (8 a value): each node that passes a value on (`Identity`, `Neg`, `Reshape`)
/// keeps a copy, so a file of thousands of such nodes on one 64 Ki-element initializer would
/// otherwise hold gigabytes. Past the limit, values are dropped: a shape operand that needed
/// one is then unknown, and says so.
struct KeptValues {
    limit: u64,
    held: u64,
}

impl KeptValues {
    /// Whether a value of [`MAX_VALUE_ELEMENTS`] would not fit.
    fn is_full(&self) -> bool {
        self.held.saturating_add(MAX_VALUE_ELEMENTS * 8) > self.limit
    }

    fn keep(&mut self, mut info: Info) -> Info {
        if let Some(value) = &info.value {
            let bytes = value.len() as u64 * 8;
            match self.held.checked_add(bytes) {
                Some(held) if held <= self.limit => self.held = held,
                _ => info.value = None,
            }
        }
        info
    }
}

/// Infers the type of every value of `graph` that nodes make. `types` are the declared types
/// (graph inputs, outputs and `value_info`), `dims` the values of symbolic dimensions, `opset`
/// the default domain's version, `base_dir` where external data is (small initializers are read
/// for their values), `limit` the bytes the values it computes may hold together (see
/// [`KeptValues`]).
pub(crate) fn infer(
    graph: &proto::GraphProto,
    types: &BTreeMap<&str, &proto::ValueInfoProto>,
    dims: &BTreeMap<String, u64>,
    opset: i64,
    base_dir: &Path,
    limit: u64,
) -> Shapes {
    let mut kept = KeptValues { limit, held: 0 };
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
        known.insert(&tensor.name, Ok(kept.keep(initializer(tensor, base_dir))));
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
                // Too little budget left for another value: the node gets its inputs without
                // theirs, so it computes none (each could take 64 Ki elements of work).
                let stripped: Vec<Option<Info>>;
                let ins = if kept.is_full() {
                    stripped = ins
                        .iter()
                        .map(|i| i.map(|i| Info::new(i.elem_type, i.dims.clone())))
                        .collect();
                    stripped.iter().map(Option::as_ref).collect()
                } else {
                    ins
                };
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
            known.insert(name, effective.map(|info| kept.keep(info)));
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

fn label(node: &proto::NodeProto) -> String {
    crate::node_label(node)
}

impl Node<'_> {
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
            "Dropout" => self.dropout(),
            "BatchNormalization" => self.batch_normalization(),
            "LayerNormalization" => self.layer_normalization(),
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
            "Where" => self.where_(),
            "QuantizeLinear" => self.quantize_linear(),
            "DequantizeLinear" => {
                let x = self.input(0)?;
                let t = self.input(1)?.elem_type;
                one(Info::new(t, x.dims.clone()))
            }
            "DynamicQuantizeLinear" => self.dynamic_quantize_linear(),
            "Conv" => self.conv(0, 1, None),
            "ConvInteger" => self.conv(0, 1, Some(INT32)),
            "QLinearConv" => {
                let t = self.input(7)?.elem_type;
                self.conv(0, 3, Some(t))
            }
            "ConvTranspose" => self.conv_transpose(),
            "MaxPool" | "AveragePool" | "LpPool" => self.pool(),
            "GlobalAveragePool" | "GlobalMaxPool" | "GlobalLpPool" => self.global_pool(),
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
            "LSTM" | "GRU" | "RNN" => self.recurrent(op),
            "Flatten" => self.flatten(),
            "Reshape" => self.reshape(),
            "Transpose" => self.transpose(),
            "Squeeze" => self.squeeze(),
            "Unsqueeze" => self.unsqueeze(),
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
            "ArgMax" | "ArgMin" => self.arg_reduce(),
            "Shape" => self.shape(),
            "Size" => {
                let x = self.input(0)?;
                let n = product(&x.dims)? as i64;
                one(Info::new(INT64, vec![]).with_value(Some(Values::Int(vec![n]))))
            }
            "Constant" => self.constant(),
            "ConstantOfShape" => self.constant_of_shape(),
            "Range" => self.range(),
            "Expand" => self.expand(),
            "Tile" => self.tile(),
            "TopK" => self.top_k(),
            "OneHot" => self.one_hot(),
            "DepthToSpace" | "SpaceToDepth" => self.depth_to_space(op),
            "NonZero" | "Unique" | "NonMaxSuppression" | "Compress" | "StringNormalizer" | "If"
            | "Loop" | "Scan" => Err(
                "its output shape depends on values computed at run time (or on a subgraph)"
                    .to_owned(),
            ),
            _ => Err("memplan does not infer the shapes of this operator".to_owned()),
        }
    }
}

#[cfg(test)]
mod tests;
