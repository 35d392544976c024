//! From a TFLite file to a checked, planned network: read subgraph 0 (`memplan-tflite`), lower
//! every operator to a `tflite.*` kernel of `memplan-kernels` with the parameters TFLite's
//! `Prepare` computes (padding, activation ranges, zero-point offsets, per-channel fixed-point
//! multipliers and shifts, lookup tables), all here at build time, then plan it as an ONNX
//! network is planned ([`prepare::finish`]).
//!
//! Each multiplier is computed exactly as LiteRT computes it (the same f64 or f32 expression,
//! then `QuantizeMultiplier`), so the int8 kernels reproduce LiteRT's reference kernels bit for
//! bit. Tables (SOFTMAX's exp table, LOGISTIC's and TANH's output tables) are computed with the
//! host's `f32::exp`/`tanh`, the functions LiteRT's `Prepare` calls, and stored as constants.

use std::collections::BTreeMap;
use std::path::Path;

use crate::graph::{AttrValue, OpInput};
use memplan_core::DType;
use memplan_kernels::tflite::quant::quantize_multiplier;
use memplan_tflite::{Activation, ElementType, Graph, Operator, Options as Opts, Padding};

use crate::dry_run::{MAX_DRY_RUN_TOTAL, dry_run};
use crate::graph::{Constant, FuseReport, Node, Prepared, kernel_dtype};
use crate::options::Options;
use crate::prepare;

mod activation;
mod arithmetic;
mod convolution;
mod layout;
mod quantization;
mod strided_slice;

use strided_slice::strided_slice;

/// The TFLite builtin operators the kernels run, sorted.
pub const SUPPORTED_BUILTINS: &[&str] = &[
    "ADD",
    "AVERAGE_POOL_2D",
    "BATCH_MATMUL",
    "CONCATENATION",
    "CONV_2D",
    "DEPTHWISE_CONV_2D",
    "DEQUANTIZE",
    "EXPAND_DIMS",
    "FULLY_CONNECTED",
    "LOGISTIC",
    "MAX_POOL_2D",
    "MEAN",
    "MUL",
    "PAD",
    "PADV2",
    "QUANTIZE",
    "RELU",
    "RELU6",
    "RELU_N1_TO_1",
    "RESHAPE",
    "SOFTMAX",
    "SQUEEZE",
    "STRIDED_SLICE",
    "SUB",
    "TANH",
    "TRANSPOSE",
];

/// Imports, lowers, checks and plans the TFLite file at `path`.
pub(crate) fn prepare(path: &Path, options: &Options) -> Result<Prepared, String> {
    let import = memplan_tflite::ImportOptions {
        name: options.name.clone(),
        alignment: options.alignment,
        inplace: options.inplace,
    };
    let imported = memplan_tflite::import_file(path, &import).map_err(|e| e.message)?;
    let mut lower = Lower {
        graph: &imported.graph,
        tensor_of: &imported.tensor_of,
        constants: Vec::new(),
        cache: BTreeMap::new(),
        by_range: BTreeMap::new(),
        held: 0,
        limit: (imported.graph.file_len as u64)
            .saturating_mul(memplan_tflite::BUDGET_PER_FILE_BYTE as u64)
            .saturating_add(memplan_tflite::BUDGET_SLACK as u64),
    };
    // Each model tensor's dtype and TFLite shape, for the dry runs.
    let tensors: Vec<(DType, Vec<usize>)> = imported
        .model
        .tensors
        .iter()
        .zip(&imported.shapes)
        .map(|(t, shape)| {
            let dtype = match &t.layout {
                memplan_core::model_file::Layout::Typed { dtype, .. } => *dtype,
                _ => DType::U8,
            };
            (dtype, shape.iter().map(|&d| d as usize).collect())
        })
        .collect();
    let mut nodes = Vec::with_capacity(imported.graph.operators.len());
    let mut work = MAX_DRY_RUN_TOTAL;
    for op in &imported.graph.operators {
        let what = match &op.custom {
            Some(c) => format!("custom operator `{c}` (operator {})", op.index),
            None => format!("operator {} ({})", op.index, op.name),
        };
        let node = lower
            .operator(op)
            .map_err(|why| with_help(format!("{what}: {why}")))?;
        // The kernel's own checks, on zeros, now rather than in the first run.
        dry_run(&node, &tensors, &lower.constants, &mut work).map_err(|why| {
            let operands = |list: &mut dyn Iterator<Item = usize>| {
                list.map(|t| {
                    let info = &imported.graph.tensors[t];
                    format!("`{}` {:?}", info.label(), info.shape)
                })
                .collect::<Vec<_>>()
                .join(", ")
            };
            format!(
                "{what}: the kernel refuses it: {why} (inputs {}; output {})\n  = help: every run of the network would fail here: the operator's shapes or options in the file do not fit each other; convert the model again",
                operands(&mut op.inputs.iter().flatten().copied()),
                operands(&mut op.outputs.iter().copied())
            )
        })?;
        nodes.push(node);
    }
    let constants = lower.constants;
    // A node whose kernel runs over its input may take its memory, as an ONNX node of an
    // in-place kind does (the planner checks each pair: input not read later, not a graph
    // value, no larger output).
    let mut model = imported.model;
    for (op, node) in model.ops.iter_mut().zip(&nodes) {
        op.inplace_any_kind = memplan_kernels::tflite::runs_in_place(&node.op_type);
    }
    let planned = prepare::finish(path, options, model, imported.shapes, nodes, &constants)
        .map_err(with_help)?;
    Ok(planned.with(constants, Vec::new(), FuseReport::default()))
}

/// `message` with a help line: its own, or the one every refused operator gets.
fn with_help(message: String) -> String {
    if message.contains("\n  = help:") {
        message
    } else {
        message
            + "\n  = help: memplan runs the shapes, types and options LiteRT's converter writes (float32, int8, or float32 with int8 weights); check the named operator or tensor in the file (for example with Netron) and convert the model again"
    }
}

/// The lowering of one graph's operators, collecting the constants they read.
struct Lower<'g> {
    graph: &'g Graph,
    tensor_of: &'g [Option<usize>],
    constants: Vec<Constant>,
    /// TFLite tensor -> constant, for weights read by several operators.
    cache: BTreeMap<usize, usize>,
    /// The file's bytes a constant holds (its range, element type and shape) -> that constant:
    /// tensors that share their data share one constant.
    by_range: BTreeMap<(usize, usize, &'static str, Vec<usize>), usize>,
    /// Bytes of the constants so far ...
    held: u64,
    /// ... and the most they may have: the reader's budget for the file (its length times
    /// `BUDGET_PER_FILE_BYTE`, plus `BUDGET_SLACK`), so that a file naming one block many times
    /// cannot make the build copy it many times.
    limit: u64,
}

/// The most inputs an int8 AVERAGE_POOL_2D window may read: the kernel (TFLite's too) sums `n`
/// values in `-128..=127` in int32 and rounds with `sum -+ n / 2`, which stays within int32 while
/// `128.5 n <= 2^31`, that is `n <= (2^32 - 1) / 257` (16,711,935, about 4088 x 4088).
const MAX_INT8_AVERAGE_TAPS: u64 = memplan_kernels::tflite::s8::MAX_AVERAGE_TAPS as u64;

/// An operator's quantization parameters, per tensor.
#[derive(Clone, Copy)]
struct Q {
    scale: f32,
    zero_point: i32,
}

type Attrs = Vec<(String, AttrValue)>;

fn attr_int(attrs: &mut Attrs, name: &str, v: i64) {
    attrs.push((name.to_owned(), AttrValue::Int(v)));
}

fn attr_float(attrs: &mut Attrs, name: &str, v: f32) {
    attrs.push((name.to_owned(), AttrValue::Float(v)));
}

impl Lower<'_> {
    fn name(&self, t: usize) -> String {
        self.graph.tensors[t].label()
    }

    fn element(&self, t: usize) -> ElementType {
        self.graph.tensors[t].element
    }

    fn shape(&self, t: usize) -> &[usize] {
        &self.graph.tensors[t].shape
    }

    /// Operand `t`: an activation, or a constant (its bytes copied once into the weight blob).
    fn operand(&mut self, t: usize) -> Result<OpInput, String> {
        let info = &self.graph.tensors[t];
        match &info.data {
            None => match self.tensor_of[t] {
                Some(m) => Ok(OpInput::Tensor(m)),
                None => Err(format!("tensor `{}` has no producer", info.label())),
            },
            Some(bytes) => {
                if let Some(&c) = self.cache.get(&t) {
                    return Ok(OpInput::Weight(c));
                }
                let dtype = info.element.dtype().map_err(|kind| {
                    format!(
                        "constant `{}` has element type {kind}, which the kernels do not hold",
                        info.label()
                    )
                })?;
                kernel_dtype(dtype).map_err(|why| format!("constant `{}`: {why}", info.label()))?;
                let expected = u64::try_from(info.elements())
                    .ok()
                    .and_then(|n| n.checked_mul(dtype.size()));
                if Some(bytes.len() as u64) != expected {
                    let expected =
                        expected.map_or("more than memory holds".to_owned(), |n| n.to_string());
                    return Err(format!(
                        "constant `{}` has {} bytes of data, its shape {:?} of {} needs {expected}\n  = help: the file is corrupt; convert the model again",
                        info.label(),
                        bytes.len(),
                        info.shape,
                        info.element.name()
                    ));
                }
                let range = bytes.range();
                let key = (
                    range.start,
                    range.end,
                    info.element.name(),
                    info.shape.clone(),
                );
                let c = match self.by_range.get(&key) {
                    Some(&c) => c,
                    None => {
                        let c = self.push(&info.name, dtype, &info.shape, bytes.to_vec())?;
                        self.by_range.insert(key, c);
                        c
                    }
                };
                self.cache.insert(t, c);
                Ok(OpInput::Weight(c))
            }
        }
    }

    fn push(
        &mut self,
        name: &str,
        dtype: DType,
        shape: &[usize],
        bytes: Vec<u8>,
    ) -> Result<usize, String> {
        self.held = self.held.saturating_add(bytes.len() as u64);
        if self.held > self.limit {
            return Err(format!(
                "the constants would hold more than {} bytes when it comes to `{name}` ({} times the file's {} bytes, plus {} MiB)\n  = help: a converter writes each constant once; this file makes its operators read or derive more constant data than it holds (or is corrupt). Convert the model again",
                self.limit,
                memplan_tflite::BUDGET_PER_FILE_BYTE,
                self.graph.file_len,
                memplan_tflite::BUDGET_SLACK >> 20
            ));
        }
        self.constants.push(Constant {
            onnx: name.to_owned(),
            dtype,
            shape: shape.iter().map(|&d| d as u64).collect(),
            bytes,
        });
        Ok(self.constants.len() - 1)
    }

    fn i32s(&mut self, name: &str, values: &[i32]) -> Result<OpInput, String> {
        let bytes = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        Ok(OpInput::Weight(self.push(
            name,
            DType::I32,
            &[values.len()],
            bytes,
        )?))
    }

    /// The per-tensor quantization of `t` (an int8 activation).
    fn q(&self, t: usize) -> Result<Q, String> {
        let info = &self.graph.tensors[t];
        let Some(q) = &info.quantization else {
            return Err(format!(
                "int8 tensor `{}` has no quantization",
                info.label()
            ));
        };
        if !q.per_tensor() {
            return Err(format!(
                "tensor `{}` is quantized per axis, where the operator needs one scale",
                info.label()
            ));
        }
        positive_scales(&info.label(), &q.scale)?;
        Ok(Q {
            scale: q.scale0(),
            zero_point: int8_zero_point(info.label(), q.zero_point0())?,
        })
    }

    /// The zero point of the int8 weights `t` (the first, which LiteRT's int8 kernels use), an
    /// int8 value.
    fn weight_zero_point(&self, t: usize) -> Result<i32, String> {
        let info = &self.graph.tensors[t];
        let zero_point = info.quantization.as_ref().map_or(0, |q| q.zero_point0());
        int8_zero_point(info.label(), zero_point)
    }

    /// Checks that the bias `b` has one value per output channel (`count` of `what`).
    fn bias(&self, b: usize, count: usize, what: &str) -> Result<(), String> {
        if self.shape(b).len() != 1 || self.shape(b)[0] != count {
            return Err(format!(
                "the bias `{}` has shape {:?}; it must have one value per {what}, [{count}]\n  = help: the file is corrupt; convert the model again",
                self.name(b),
                self.shape(b)
            ));
        }
        Ok(())
    }

    /// Checks the shape a RESHAPE asks for, as LiteRT's Prepare computes it: its constant shape
    /// operand, else its options' `new_shape` (neither: nothing to check). At most one `-1`,
    /// which stands for the rest; no other negative size; as many elements as `x`.
    fn requested_shape(&self, op: &Operator, x: usize) -> Result<(), String> {
        let requested: Vec<i64> = match op.inputs.get(1).copied().flatten() {
            Some(s) if self.graph.tensors[s].data.is_some() => self.ints(s)?,
            Some(_) => return Ok(()), // computed at run time: LiteRT checks it then
            None => match &op.options {
                Opts::Reshape {
                    new_shape: Some(list),
                } => list.iter().map(|&d| i64::from(d)).collect(),
                _ => return Ok(()),
            },
        };
        let elements = self.graph.tensors[x].elements() as u64;
        let stretched = requested.iter().filter(|&&d| d == -1).count();
        let known = requested
            .iter()
            .filter(|&&d| d != -1)
            .try_fold(1u64, |n, &d| {
                u64::try_from(d).ok().and_then(|d| n.checked_mul(d))
            });
        let fits = match (stretched, known) {
            (0, Some(n)) => n == elements,
            (1, Some(n)) => n > 0 && elements.is_multiple_of(n),
            _ => false,
        };
        if fits {
            return Ok(());
        }
        Err(format!(
            "it asks for shape {requested:?} for the {elements} elements of `{}` {:?}: LiteRT refuses it (at most one -1, no other negative size, the same number of elements)\n  = help: the file is corrupt; convert the model again",
            self.name(x),
            self.shape(x)
        ))
    }

    /// The constant data of `t` as int32 or int64 integers (a shape, axes, paddings).
    fn ints(&self, t: usize) -> Result<Vec<i64>, String> {
        let info = &self.graph.tensors[t];
        let Some(bytes) = &info.data else {
            return Err(format!(
                "`{}` must be a constant (memplan plans static shapes)",
                info.label()
            ));
        };
        Ok(match info.element {
            ElementType::I32 => bytes
                .chunks_exact(4)
                .map(|c| i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                .collect(),
            ElementType::I64 => bytes
                .chunks_exact(8)
                .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                .collect(),
            other => {
                return Err(format!(
                    "`{}` is {}, expected INT32 or INT64",
                    info.label(),
                    other.name()
                ));
            }
        })
    }

    fn operator(&mut self, op: &Operator) -> Result<Node, String> {
        if op.custom.is_some() {
            return Err(unsupported("CUSTOM"));
        }
        let Some(&out) = op.outputs.first() else {
            return Err("it has no output".to_owned());
        };
        if op.outputs.len() != 1 {
            return Err(format!(
                "it has {} outputs; the kernels take one",
                op.outputs.len()
            ));
        }
        for &t in op.inputs.iter().flatten().chain(&op.outputs) {
            let rank = self.shape(t).len();
            if rank > memplan_kernels::MAX_RANK {
                return Err(format!(
                    "tensor `{}` has {rank} dimensions; the kernels take at most {}\n  = help: reshape the model so that no tensor has more than {} dimensions",
                    self.name(t),
                    memplan_kernels::MAX_RANK,
                    memplan_kernels::MAX_RANK
                ));
            }
        }
        let mut attrs = Attrs::new();
        let mut inputs = Vec::new();
        let kind = match op.name {
            "CONV_2D" | "DEPTHWISE_CONV_2D" => {
                self.conv(op, out, &mut inputs, &mut attrs)?;
                op.name
            }
            "FULLY_CONNECTED" => {
                self.fully_connected(op, out, &mut inputs, &mut attrs)?;
                op.name
            }
            "AVERAGE_POOL_2D" | "MAX_POOL_2D" => {
                self.lower_pool(op, out, &mut inputs, &mut attrs)?
            }
            "RESHAPE" | "SQUEEZE" | "EXPAND_DIMS" => {
                self.lower_reshape(op, out, &mut inputs, &mut attrs)?
            }
            "SOFTMAX" => self.lower_softmax(op, out, &mut inputs, &mut attrs)?,
            "ADD" | "SUB" | "MUL" => self.lower_binary(op, out, &mut inputs, &mut attrs)?,
            "LOGISTIC" | "TANH" => self.lower_lookup_table(op, out, &mut inputs, &mut attrs)?,
            "QUANTIZE" => self.lower_quantize(op, out, &mut inputs, &mut attrs)?,
            "DEQUANTIZE" => self.lower_dequantize(op, out, &mut inputs, &mut attrs)?,
            "CONCATENATION" => self.lower_concatenation(op, out, &mut inputs, &mut attrs)?,
            "PAD" | "PADV2" => self.lower_pad(op, out, &mut inputs, &mut attrs)?,
            "MEAN" => self.lower_mean(op, out, &mut inputs, &mut attrs)?,
            "RELU" | "RELU6" | "RELU_N1_TO_1" => {
                self.lower_relu(op, out, &mut inputs, &mut attrs)?
            }
            "TRANSPOSE" => self.lower_transpose(op, out, &mut inputs, &mut attrs)?,
            "STRIDED_SLICE" => self.lower_strided_slice(op, out, &mut inputs, &mut attrs)?,
            "BATCH_MATMUL" => self.lower_batch_matmul(op, out, &mut inputs, &mut attrs)?,
            other => return Err(unsupported(other)),
        };
        let outputs = vec![
            self.tensor_of[out]
                .ok_or_else(|| format!("output `{}` is not planned", self.name(out)))?,
        ];
        Ok(Node {
            label: format!("{}_{}", op.name, op.index),
            op_type: if kind == "Transpose" {
                kind.to_owned()
            } else {
                format!("tflite.{kind}")
            },
            attrs,
            inputs,
            outputs,
            scratch: None,
            overwrites: false,
            stage: None,
        })
    }

    /// The fused activation as the clamp range TFLite's `CalculateActivationRange(Quantized)`
    /// gives for `out`.
    fn activation(&self, a: Activation, out: usize, attrs: &mut Attrs) -> Result<(), String> {
        match self.element(out) {
            ElementType::F32 => {
                let (lo, hi) = match a {
                    Activation::None => return Ok(()),
                    Activation::Relu => (0.0, f32::MAX),
                    Activation::Relu6 => (0.0, 6.0),
                    Activation::ReluN1To1 => (-1.0, 1.0),
                    other => return Err(activation_unsupported(other)),
                };
                attr_float(attrs, "act_min", lo);
                attr_float(attrs, "act_max", hi);
            }
            ElementType::I8 => {
                let q = self.q(out)?;
                let quantize = |f: f32| q.zero_point.saturating_add((f / q.scale).round() as i32);
                let (lo, hi) = match a {
                    Activation::None => (-128, 127),
                    Activation::Relu => (quantize(0.0).max(-128), 127),
                    Activation::Relu6 => (quantize(0.0).max(-128), quantize(6.0).min(127)),
                    Activation::ReluN1To1 => (quantize(-1.0).max(-128), quantize(1.0).min(127)),
                    other => return Err(activation_unsupported(other)),
                };
                attr_int(attrs, "act_min", i64::from(lo));
                attr_int(attrs, "act_max", i64::from(hi));
            }
            other => {
                return Err(format!(
                    "an output of type {} is not supported",
                    other.name()
                ));
            }
        }
        Ok(())
    }
}

/// Operator `op`'s input `i` (a tensor), or why it has none.
fn input_of(op: &Operator, i: usize) -> Result<usize, String> {
    op.inputs
        .get(i)
        .copied()
        .flatten()
        .ok_or_else(|| format!("input {i} is missing"))
}

/// Checks a window's strides (dilations, filter sizes): the reader gives 0 for a value that is
/// 0 or negative in the file, which no kernel runs (LiteRT's `Prepare` refuses it too).
fn at_least_one(what: &str, values: [usize; 2]) -> Result<(), String> {
    if values.contains(&0) {
        return Err(format!(
            "its {what} is {} x {}: each must be at least 1 (the file gives 0 or a negative value)\n  = help: the file is corrupt; convert the model again",
            values[0], values[1]
        ));
    }
    Ok(())
}

/// Checks that every scale of the tensor `label` is a positive finite number (LiteRT's kernels
/// divide by them: a zero or NaN scale makes every multiplier meaningless).
fn positive_scales(label: &str, scales: &[f32]) -> Result<(), String> {
    match scales.iter().find(|s| !(s.is_finite() && **s > 0.0)) {
        Some(s) => Err(format!(
            "tensor `{label}` has scale {s}; a scale must be a positive, finite number\n  = help: the file is corrupt; convert the model again"
        )),
        None => Ok(()),
    }
}

/// `zero_point` of the int8 tensor `label`, which must be an int8 value (the one real 0 maps
/// to): a zero point outside -128..=127 would overflow the offsets the kernels add.
fn int8_zero_point(label: String, zero_point: i64) -> Result<i32, String> {
    i32::try_from(zero_point)
        .ok()
        .filter(|z| (-128..=127).contains(z))
        .ok_or_else(|| {
            format!(
                "int8 tensor `{label}` has zero point {zero_point}, outside -128..=127\n  = help: an int8 zero point is the int8 value of real 0; the file is corrupt, convert the model again"
            )
        })
}

fn types(a: ElementType, b: ElementType) -> String {
    format!(
        "input {} and output {} is not a supported combination",
        a.name(),
        b.name()
    )
}

fn activation_unsupported(a: Activation) -> String {
    format!(
        "the fused activation {} is not supported (NONE, RELU, RELU6, RELU_N1_TO_1 are)",
        a.name()
    )
}

/// The refusal of an operator the kernels do not run.
fn unsupported(name: &str) -> String {
    format!(
        "TFLite builtin operator {name} is not supported\n  = help: memplan runs these TFLite builtins: {}",
        SUPPORTED_BUILTINS.join(" ")
    )
}
