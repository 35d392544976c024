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

use memplan_core::DType;
use memplan_kernels::tflite::quant::quantize_multiplier;
use memplan_onnx::{AttrValue, OpInput};
use memplan_tflite::{Activation, ElementType, Graph, Operator, Options as Opts, Padding};

use crate::dry_run::{MAX_DRY_RUN_TOTAL, dry_run};
use crate::graph::{Constant, FuseReport, Node, Prepared, kernel_dtype};
use crate::options::Options;
use crate::prepare;

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
    let planned = prepare::finish(
        path,
        options,
        imported.model,
        imported.shapes,
        nodes,
        &constants,
    )
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
        let input = |i: usize| -> Result<usize, String> {
            op.inputs
                .get(i)
                .copied()
                .flatten()
                .ok_or_else(|| format!("input {i} is missing"))
        };
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
                let x = input(0)?;
                let Opts::Pool2D {
                    padding,
                    stride,
                    filter,
                    activation,
                } = op.options
                else {
                    return Err("it has no Pool2DOptions".to_owned());
                };
                at_least_one("stride", stride)?;
                at_least_one("filter", filter)?;
                if let &[_, h, w, _] = self.shape(x) {
                    // The kernel visits every tap of a window, inside the input or not; a
                    // window more than twice its input reads no more of it.
                    if filter[0] > 2 * h + 1 || filter[1] > 2 * w + 1 {
                        return Err(format!(
                            "its window {} x {} is larger than its {h} x {w} input padded on both sides ({} x {}): the taps outside the input are never read, but every output would visit each of them, so the run would take time in proportion to the window\n  = help: the file is corrupt; convert the model again",
                            filter[0],
                            filter[1],
                            2 * h + 1,
                            2 * w + 1
                        ));
                    }
                }
                let [pad_top, pad_left] = padding_of(
                    self.shape(x),
                    self.shape(out),
                    filter,
                    stride,
                    [1, 1],
                    padding,
                )?;
                for (name, v) in [
                    ("filter_h", filter[0]),
                    ("filter_w", filter[1]),
                    ("stride_h", stride[0]),
                    ("stride_w", stride[1]),
                    ("pad_top", pad_top),
                    ("pad_left", pad_left),
                ] {
                    attr_int(&mut attrs, name, v as i64);
                }
                if self.element(x) == ElementType::I8 {
                    let (qi, qo) = (self.q(x)?, self.q(out)?);
                    if qi.scale != qo.scale || qi.zero_point != qo.zero_point {
                        return Err("an int8 pool must have the same quantization in and out (as TFLite requires)".to_owned());
                    }
                    // TFLite's int8 average sums a window's inputs in int32 (and so does the
                    // kernel memplan runs): about 2^24 of them reach its limit.
                    if op.name == "AVERAGE_POOL_2D"
                        && let &[_, h, w, _] = self.shape(x)
                    {
                        let taps = (filter[0] as u64)
                            .min(h as u64)
                            .saturating_mul((filter[1] as u64).min(w as u64));
                        if taps > MAX_INT8_AVERAGE_TAPS {
                            return Err(format!(
                                "its int8 average window reads up to {taps} inputs ({} x {} of its {h} x {w} input), which it sums in int32 as TFLite does: past {MAX_INT8_AVERAGE_TAPS} of them the sum, rounded, overflows\n  = help: LiteRT's kernel overflows on it too; use a float32 model for this pool, or a smaller window",
                                (filter[0] as u64).min(h as u64),
                                (filter[1] as u64).min(w as u64)
                            ));
                        }
                    }
                }
                self.activation(activation, out, &mut attrs)?;
                inputs.push(self.operand(x)?);
                op.name
            }
            "RESHAPE" | "SQUEEZE" | "EXPAND_DIMS" => {
                let x = input(0)?;
                if self.element(x) != self.element(out) {
                    return Err("the output's type differs from the input's".to_owned());
                }
                if self.graph.tensors[x].elements() != self.graph.tensors[out].elements() {
                    return Err(format!(
                        "it reshapes `{}` {:?} to `{}` {:?}, another number of elements\n  = help: the file is corrupt; convert the model again",
                        self.name(x),
                        self.shape(x),
                        self.name(out),
                        self.shape(out)
                    ));
                }
                if op.name == "RESHAPE" {
                    self.requested_shape(op, x)?;
                }
                inputs.push(self.operand(x)?);
                "RESHAPE"
            }
            "SOFTMAX" => {
                let x = input(0)?;
                let Opts::Softmax { beta } = op.options else {
                    return Err("it has no SoftmaxOptions".to_owned());
                };
                if !beta.is_finite() {
                    return Err(format!(
                        "its beta is {beta}; it must be a finite number\n  = help: the file is corrupt; convert the model again"
                    ));
                }
                inputs.push(self.operand(x)?);
                match (self.element(x), self.element(out)) {
                    (ElementType::F32, ElementType::F32) => attr_float(&mut attrs, "beta", beta),
                    (ElementType::I8, ElementType::I8) => {
                        let (qi, qo) = (self.q(x)?, self.q(out)?);
                        // LiteRT's PopulateSoftmaxLookupTable, in float.
                        let scale = -qi.scale * beta;
                        let mut table = [0f32; 256];
                        for val in 0..=255u8 {
                            table[255 - usize::from(val)] = (scale * f32::from(val)).exp();
                        }
                        let bytes = table.iter().flat_map(|v| v.to_le_bytes()).collect();
                        let c = self.push(
                            &format!("{} exp table", self.name(x)),
                            DType::F32,
                            &[256],
                            bytes,
                        )?;
                        inputs.push(OpInput::Weight(c));
                        attr_int(&mut attrs, "output_zero_point", i64::from(qo.zero_point));
                        attr_float(&mut attrs, "output_scale", qo.scale);
                    }
                    (a, b) => return Err(types(a, b)),
                }
                op.name
            }
            "ADD" | "SUB" | "MUL" => {
                let (a, b) = (input(0)?, input(1)?);
                let Opts::Arithmetic { activation } = op.options else {
                    return Err("it has no options".to_owned());
                };
                inputs.push(self.operand(a)?);
                inputs.push(self.operand(b)?);
                match (self.element(a), self.element(b), self.element(out)) {
                    (ElementType::F32, ElementType::F32, ElementType::F32) => {}
                    (ElementType::I8, ElementType::I8, ElementType::I8)
                        if op.name == "ADD" || op.name == "SUB" =>
                    {
                        let (q1, q2, qo) = (self.q(a)?, self.q(b)?, self.q(out)?);
                        // LiteRT's PrepareGeneralSubOp / add.cc for int8 (left shift 20); SUB
                        // subtracts the rescaled inputs instead of adding them.
                        let left_shift = 20;
                        let twice_max = 2.0 * f64::from(q1.scale.max(q2.scale));
                        let real1 = f64::from(q1.scale) / twice_max;
                        let real2 = f64::from(q2.scale) / twice_max;
                        let real_out =
                            twice_max / f64::from((1i32 << left_shift) as f32 * qo.scale);
                        // LiteRT's QuantizeMultiplierSmallerThanOneExp checks the output's
                        // multiplier is below 1 (and aborts on this file).
                        if real_out.is_nan() || real_out >= 1.0 {
                            return Err(format!(
                                "its output scale {:?} is too small for its input scales {:?} and {:?}: LiteRT requires 2 x the larger input scale / (2^20 x the output scale) below 1 ({real_out:.3e} here) and refuses the operator\n  = help: the file's quantization is corrupt; convert the model again",
                                qo.scale, q1.scale, q2.scale
                            ));
                        }
                        let (m1, s1) = quantize_multiplier(real1);
                        let (m2, s2) = quantize_multiplier(real2);
                        let (mo, so) = quantize_multiplier(real_out);
                        for (name, v) in [
                            ("input1_offset", -q1.zero_point),
                            ("input2_offset", -q2.zero_point),
                            ("output_offset", qo.zero_point),
                            ("left_shift", left_shift),
                            ("input1_multiplier", m1),
                            ("input1_shift", s1),
                            ("input2_multiplier", m2),
                            ("input2_shift", s2),
                            ("output_multiplier", mo),
                            ("output_shift", so),
                        ] {
                            attr_int(&mut attrs, name, i64::from(v));
                        }
                    }
                    (ElementType::I8, ElementType::I8, ElementType::I8) if op.name == "MUL" => {
                        let (q1, q2, qo) = (self.q(a)?, self.q(b)?, self.q(out)?);
                        // mul.cc: the product of the float scales, in float.
                        let real = f64::from(q1.scale * q2.scale / qo.scale);
                        if !real.is_finite() {
                            return Err(format!(
                                "the product of its input scales {:?} and {:?} over its output scale {:?} is not a finite float32 ({real}): no multiplier applies it\n  = help: the file's quantization is corrupt; convert the model again",
                                q1.scale, q2.scale, qo.scale
                            ));
                        }
                        let (m, s) = quantize_multiplier(real);
                        for (name, v) in [
                            ("input1_offset", -q1.zero_point),
                            ("input2_offset", -q2.zero_point),
                            ("output_offset", qo.zero_point),
                            ("output_multiplier", m),
                            ("output_shift", s),
                        ] {
                            attr_int(&mut attrs, name, i64::from(v));
                        }
                    }
                    (ElementType::I8, _, _) => {
                        return Err(format!(
                            "{} of {}, {} into {} is not supported (all int8 or all float32 are)",
                            op.name,
                            self.element(a).name(),
                            self.element(b).name(),
                            self.element(out).name()
                        ));
                    }
                    (a, _, o) => return Err(types(a, o)),
                }
                self.activation(activation, out, &mut attrs)?;
                op.name
            }
            "LOGISTIC" | "TANH" => {
                let x = input(0)?;
                inputs.push(self.operand(x)?);
                match (self.element(x), self.element(out)) {
                    (ElementType::F32, ElementType::F32) => {}
                    (ElementType::I8, ElementType::I8) => {
                        let (qi, qo) = (self.q(x)?, self.q(out)?);
                        let f: fn(f32) -> f32 = if op.name == "LOGISTIC" {
                            |v| 1.0 / (1.0 + (-v).exp())
                        } else {
                            f32::tanh
                        };
                        // LiteRT's PopulateLookupTable<int8_t>, in float.
                        let inverse_scale = 1.0 / qo.scale;
                        let mut table = [0u8; 256];
                        for val in -128i32..=127 {
                            let dequantized = qi.scale * (val - qi.zero_point) as f32;
                            let rescaled = (f(dequantized) * inverse_scale).round();
                            let q = (rescaled + qo.zero_point as f32) as i32;
                            let byte = q.clamp(-128, 127) as i8;
                            let index = (val as i8).cast_unsigned();
                            table[usize::from(index)] = byte.cast_unsigned();
                        }
                        let c = self.push(
                            &format!("{} table", self.name(x)),
                            DType::I8,
                            &[256],
                            table.to_vec(),
                        )?;
                        inputs.push(OpInput::Weight(c));
                    }
                    (a, b) => return Err(types(a, b)),
                }
                op.name
            }
            "QUANTIZE" => {
                let x = input(0)?;
                if self.element(out) != ElementType::I8 {
                    return Err(format!(
                        "QUANTIZE to {} is not supported (int8 is)",
                        self.element(out).name()
                    ));
                }
                let qo = self.q(out)?;
                attr_int(&mut attrs, "zero_point", i64::from(qo.zero_point));
                match self.element(x) {
                    ElementType::F32 => attr_float(&mut attrs, "scale", qo.scale),
                    ElementType::I8 => {
                        let qi = self.q(x)?;
                        let real = f64::from(qi.scale) / f64::from(qo.scale);
                        let (m, s) = quantize_multiplier(real);
                        attr_int(&mut attrs, "input_zero_point", i64::from(qi.zero_point));
                        attr_int(&mut attrs, "multiplier", i64::from(m));
                        attr_int(&mut attrs, "shift", i64::from(s));
                    }
                    other => {
                        return Err(format!(
                            "QUANTIZE from {} is not supported (float32 and int8 are)",
                            other.name()
                        ));
                    }
                }
                inputs.push(self.operand(x)?);
                op.name
            }
            "DEQUANTIZE" => {
                let x = input(0)?;
                if (self.element(x), self.element(out)) != (ElementType::I8, ElementType::F32) {
                    return Err(format!(
                        "DEQUANTIZE from {} to {} is not supported (int8 to float32 is)",
                        self.element(x).name(),
                        self.element(out).name()
                    ));
                }
                let qi = self.q(x)?;
                attr_float(&mut attrs, "scale", qi.scale);
                attr_int(&mut attrs, "zero_point", i64::from(qi.zero_point));
                inputs.push(self.operand(x)?);
                op.name
            }
            "CONCATENATION" => {
                let Opts::Concatenation { axis, activation } = op.options else {
                    return Err("it has no ConcatenationOptions".to_owned());
                };
                if activation != Activation::None {
                    return Err(format!(
                        "a fused {} activation on CONCATENATION is not supported",
                        activation.name()
                    ));
                }
                let rank = self.shape(out).len() as i64;
                let axis_of_out = if axis < 0 {
                    i64::from(axis) + rank
                } else {
                    i64::from(axis)
                };
                if !(0..rank).contains(&axis_of_out) {
                    return Err(format!(
                        "axis {axis} is out of range for its output `{}` of {rank} dimensions\n  = help: the file is corrupt; convert the model again",
                        self.name(out)
                    ));
                }
                if op.inputs.iter().flatten().next().is_none() {
                    return Err(
                        "it has no inputs\n  = help: the file is corrupt; convert the model again"
                            .to_owned(),
                    );
                }
                let out_q = (self.element(out) == ElementType::I8)
                    .then(|| self.q(out))
                    .transpose()?;
                for &t in op.inputs.iter().flatten() {
                    if self.element(t) != self.element(out) {
                        return Err(types(self.element(t), self.element(out)));
                    }
                    if let Some(qo) = out_q {
                        let qi = self.q(t)?;
                        if qi.scale != qo.scale || qi.zero_point != qo.zero_point {
                            return Err(format!(
                                "input `{}` is quantized unlike the output; TFLite requires the same quantization for int8 CONCATENATION",
                                self.name(t)
                            ));
                        }
                    }
                    inputs.push(self.operand(t)?);
                }
                attr_int(&mut attrs, "axis", i64::from(axis));
                op.name
            }
            "PAD" | "PADV2" => {
                let (x, p) = (input(0)?, input(1)?);
                let pads = self.ints(p)?;
                // Checked here, not only by the kernel: it adds the pads to the input's size,
                // which a pad near `i64::MAX` would overflow.
                let (xs, os) = (self.shape(x), self.shape(out));
                let fits = pads.len() == 2 * xs.len()
                    && os.len() == xs.len()
                    && xs.iter().zip(os).enumerate().all(|(d, (&n, &o))| {
                        let (b, a) = (pads[2 * d], pads[2 * d + 1]);
                        b >= 0
                            && a >= 0
                            && i64::try_from(n)
                                .ok()
                                .and_then(|n| n.checked_add(b)?.checked_add(a))
                                == i64::try_from(o).ok()
                    });
                if !fits {
                    return Err(format!(
                        "its paddings `{}` {pads:?} (before and after, per axis, none negative) do not take `{}` {xs:?} to `{}` {os:?}\n  = help: the file is corrupt; convert the model again",
                        self.name(p),
                        self.name(x),
                        self.name(out)
                    ));
                }
                attrs.push(("pads".to_owned(), AttrValue::Ints(pads)));
                let constant = op.inputs.get(2).copied().flatten();
                match self.element(x) {
                    ElementType::F32 => {
                        let v = match constant {
                            Some(c) => {
                                let data = self.graph.tensors[c].data.as_deref().unwrap_or(&[]);
                                let b: [u8; 4] = data
                                    .get(..4)
                                    .and_then(|b| b.try_into().ok())
                                    .ok_or("PADV2's value must be a float32 constant")?;
                                f32::from_le_bytes(b)
                            }
                            None => 0.0,
                        };
                        attr_float(&mut attrs, "value", v);
                    }
                    ElementType::I8 => {
                        let (qi, qo) = (self.q(x)?, self.q(out)?);
                        if qi.scale != qo.scale || qi.zero_point != qo.zero_point {
                            return Err(
                                "an int8 PAD must have the same quantization in and out".to_owned()
                            );
                        }
                        let v = match constant {
                            Some(c) => {
                                let data = self.graph.tensors[c].data.as_deref().unwrap_or(&[]);
                                i64::from(
                                    data.first()
                                        .map(|&b| b.cast_signed())
                                        .ok_or("PADV2's value must be an int8 constant")?,
                                )
                            }
                            None => i64::from(qo.zero_point),
                        };
                        attr_int(&mut attrs, "value", v);
                    }
                    other => return Err(types(other, self.element(out))),
                }
                inputs.push(self.operand(x)?);
                "PAD"
            }
            "MEAN" => {
                let (x, a) = (input(0)?, input(1)?);
                let axes = self.ints(a)?;
                let rank = self.shape(x).len() as i64;
                if let Some(bad) = axes.iter().find(|&&ax| !(-rank..rank).contains(&ax)) {
                    return Err(format!(
                        "its axis {bad} (in `{}`) is out of range for `{}` of {rank} dimensions\n  = help: the file is corrupt; convert the model again",
                        self.name(a),
                        self.name(x)
                    ));
                }
                match (self.element(x), self.element(out)) {
                    (ElementType::F32, ElementType::F32) => {}
                    (ElementType::I8, ElementType::I8) => {
                        let (qi, qo) = (self.q(x)?, self.q(out)?);
                        // reduce.cc's PrepareMeanOrSum: the multiplier of the scales, in f64.
                        let (m, sh) =
                            quantize_multiplier(f64::from(qi.scale) / f64::from(qo.scale));
                        let xs = self.shape(x);
                        // QuantizedMeanOrSum (LiteRT's one int8 path): the count folded into
                        // the multiplier.
                        let mut count: i64 = 1;
                        let mut seen = [false; 8];
                        for &ax in &axes {
                            let d = if ax < 0 { ax + xs.len() as i64 } else { ax };
                            let d = usize::try_from(d)
                                .ok()
                                .filter(|&d| d < xs.len() && d < 8)
                                .ok_or_else(|| format!("axis {ax} is out of range"))?;
                            if !seen[d] {
                                seen[d] = true;
                                count = i64::try_from(xs[d])
                                    .ok()
                                    .and_then(|n| count.checked_mul(n))
                                    .ok_or("MEAN counts more elements than int64 holds")?;
                            }
                        }
                        if count <= 0 {
                            return Err("MEAN over an empty axis is not supported".to_owned());
                        }
                        let shift = (63 - (count as u64).leading_zeros() as i32)
                            .min(32)
                            .min(31 + sh);
                        let (m, sh) = (((i64::from(m) << shift) / count) as i32, sh - shift);
                        attr_int(&mut attrs, "input_zero_point", i64::from(qi.zero_point));
                        attr_int(&mut attrs, "output_zero_point", i64::from(qo.zero_point));
                        attr_int(&mut attrs, "multiplier", i64::from(m));
                        attr_int(&mut attrs, "shift", i64::from(sh));
                    }
                    (a, b) => return Err(types(a, b)),
                }
                attrs.push(("axes".to_owned(), AttrValue::Ints(axes)));
                inputs.push(self.operand(x)?);
                op.name
            }
            "RELU" | "RELU6" | "RELU_N1_TO_1" => {
                let x = input(0)?;
                let (lo, hi) = match op.name {
                    "RELU" => (0.0f32, f32::INFINITY),
                    "RELU6" => (0.0, 6.0),
                    _ => (-1.0, 1.0),
                };
                match (self.element(x), self.element(out)) {
                    (ElementType::F32, ElementType::F32) => {
                        attr_float(&mut attrs, "act_min", lo);
                        attr_float(
                            &mut attrs,
                            "act_max",
                            if hi.is_finite() { hi } else { f32::MAX },
                        );
                    }
                    (ElementType::I8, ElementType::I8) => {
                        let (qi, qo) = (self.q(x)?, self.q(out)?);
                        // activations.cc: ReluPrepare's multiplier (the float ratio) and
                        // QuantizedReluX's range.
                        let (m, sh) = quantize_multiplier(f64::from(qi.scale / qo.scale));
                        let q =
                            |f: f32| qo.zero_point.saturating_add((f / qo.scale).round() as i32);
                        let act_min = (-128).max(q(lo));
                        let act_max = if hi.is_finite() { 127.min(q(hi)) } else { 127 };
                        attr_int(&mut attrs, "act_min", i64::from(act_min));
                        attr_int(&mut attrs, "act_max", i64::from(act_max));
                        attr_int(&mut attrs, "input_zero_point", i64::from(qi.zero_point));
                        attr_int(&mut attrs, "output_zero_point", i64::from(qo.zero_point));
                        attr_int(&mut attrs, "multiplier", i64::from(m));
                        attr_int(&mut attrs, "shift", i64::from(sh));
                    }
                    (a, b) => return Err(types(a, b)),
                }
                inputs.push(self.operand(x)?);
                "RELU"
            }
            "TRANSPOSE" => {
                let (x, p) = (input(0)?, input(1)?);
                if self.element(x) != self.element(out) {
                    return Err("the output's type differs from the input's".to_owned());
                }
                if self.element(x) == ElementType::I8 {
                    let (qi, qo) = (self.q(x)?, self.q(out)?);
                    if qi.scale != qo.scale || qi.zero_point != qo.zero_point {
                        return Err(
                            "an int8 TRANSPOSE must have the same quantization in and out"
                                .to_owned(),
                        );
                    }
                }
                let perm = self.ints(p)?;
                let (xs, os) = (self.shape(x), self.shape(out));
                let mut seen = vec![false; xs.len()];
                let permutes = perm.len() == xs.len()
                    && os.len() == xs.len()
                    && perm.iter().zip(os).all(|(&p, &o)| {
                        usize::try_from(p)
                            .ok()
                            .filter(|&p| p < xs.len() && !std::mem::replace(&mut seen[p], true))
                            .is_some_and(|p| xs[p] == o)
                    });
                if !permutes {
                    return Err(format!(
                        "its permutation `{}` {perm:?} is not a permutation of the axes of `{}` {xs:?} giving `{}` {os:?}\n  = help: the file is corrupt; convert the model again",
                        self.name(p),
                        self.name(x),
                        self.name(out)
                    ));
                }
                attrs.push(("perm".to_owned(), AttrValue::Ints(perm)));
                inputs.push(self.operand(x)?);
                // ONNX's Transpose moves elements of any type the same way.
                "Transpose"
            }
            "STRIDED_SLICE" => {
                let x = input(0)?;
                let (b, e) = (input(1)?, input(2)?);
                let Opts::StridedSlice {
                    begin_mask,
                    end_mask,
                    ellipsis_mask,
                    new_axis_mask,
                    shrink_axis_mask,
                    offset,
                } = op.options
                else {
                    return Err("it has no StridedSliceOptions".to_owned());
                };
                if ellipsis_mask != 0 || new_axis_mask != 0 {
                    return Err(
                        "STRIDED_SLICE with an ellipsis or a new axis is not supported".to_owned(),
                    );
                }
                if self.element(x) != self.element(out) {
                    return Err("the output's type differs from the input's".to_owned());
                }
                if self.element(x) == ElementType::I8 {
                    let (qi, qo) = (self.q(x)?, self.q(out)?);
                    if qi.scale != qo.scale || qi.zero_point != qo.zero_point {
                        return Err(
                            "an int8 STRIDED_SLICE must have the same quantization in and out"
                                .to_owned(),
                        );
                    }
                }
                let xs = self.shape(x).to_vec();
                let (begin, end) = (self.ints(b)?, self.ints(e)?);
                let strides = match op.inputs.get(3).copied().flatten() {
                    Some(s) => self.ints(s)?,
                    None => vec![1; begin.len()],
                };
                if begin.len() > xs.len()
                    || end.len() != begin.len()
                    || strides.len() != begin.len()
                {
                    return Err(format!(
                        "begin {begin:?}, end {end:?} and strides {strides:?} do not fit the input {xs:?}"
                    ));
                }
                let (starts, steps, sizes) = strided_slice(
                    &xs,
                    &begin,
                    &end,
                    &strides,
                    [begin_mask, end_mask, shrink_axis_mask],
                    offset,
                )?;
                let kept: Vec<usize> = sizes
                    .iter()
                    .enumerate()
                    .filter(|&(d, _)| d >= 32 || shrink_axis_mask & (1 << d) == 0)
                    .map(|(_, &n)| n as usize)
                    .collect();
                if kept.iter().product::<usize>() != self.shape(out).iter().product::<usize>() {
                    return Err(format!(
                        "the output {:?} does not have the {kept:?} elements the slice takes",
                        self.shape(out)
                    ));
                }
                attrs.push(("begin".to_owned(), AttrValue::Ints(starts)));
                attrs.push(("strides".to_owned(), AttrValue::Ints(steps)));
                attrs.push(("out_shape".to_owned(), AttrValue::Ints(sizes)));
                inputs.push(self.operand(x)?);
                op.name
            }
            "BATCH_MATMUL" => {
                let (x, y) = (input(0)?, input(1)?);
                let Opts::BatchMatMul { adj_x, adj_y } = op.options else {
                    return Err("it has no BatchMatMulOptions".to_owned());
                };
                let (xs, ys) = (self.shape(x), self.shape(y));
                if xs.len() < 2 || ys.len() < 2 {
                    return Err(format!(
                        "its operands {xs:?} and {ys:?} must have at least 2 dimensions"
                    ));
                }
                let kx = xs[xs.len() - if adj_x { 2 } else { 1 }];
                let ky = ys[ys.len() - if adj_y { 1 } else { 2 }];
                if kx != ky {
                    return Err(format!(
                        "`{}` {xs:?} and `{}` {ys:?} do not multiply: {kx} columns against {ky} rows\n  = help: the file is corrupt; convert the model again",
                        self.name(x),
                        self.name(y)
                    ));
                }
                attr_int(&mut attrs, "adj_x", i64::from(adj_x));
                attr_int(&mut attrs, "adj_y", i64::from(adj_y));
                match (self.element(x), self.element(y), self.element(out)) {
                    (ElementType::F32, ElementType::F32, ElementType::F32) => {}
                    (ElementType::I8, ElementType::I8, ElementType::I8) => {
                        let (qx, qy, qo) = (self.q(x)?, self.q(y)?, self.q(out)?);
                        // batch_matmul.cc: GetQuantizedConvolutionMultipler (the float product
                        // of the input scales, in f64, over the output's).
                        let real = f64::from(qx.scale * qy.scale) / f64::from(qo.scale);
                        let (m, sh) = quantize_multiplier(real);
                        attr_int(&mut attrs, "input_offset", -i64::from(qx.zero_point));
                        attr_int(&mut attrs, "filter_offset", -i64::from(qy.zero_point));
                        attr_int(&mut attrs, "output_offset", i64::from(qo.zero_point));
                        attr_int(&mut attrs, "multiplier", i64::from(m));
                        attr_int(&mut attrs, "shift", i64::from(sh));
                    }
                    (a, _, o) => return Err(types(a, o)),
                }
                inputs.push(self.operand(x)?);
                inputs.push(self.operand(y)?);
                op.name
            }
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

    fn conv(
        &mut self,
        op: &Operator,
        out: usize,
        inputs: &mut Vec<OpInput>,
        attrs: &mut Attrs,
    ) -> Result<(), String> {
        let depthwise = op.name == "DEPTHWISE_CONV_2D";
        let x = op
            .inputs
            .first()
            .copied()
            .flatten()
            .ok_or("input 0 is missing")?;
        let f = op
            .inputs
            .get(1)
            .copied()
            .flatten()
            .ok_or("the filter is missing")?;
        let bias = op.inputs.get(2).copied().flatten();
        let (padding, stride, dilation, activation) = match op.options {
            Opts::Conv2D {
                padding,
                stride,
                dilation,
                activation,
            }
            | Opts::DepthwiseConv2D {
                padding,
                stride,
                dilation,
                activation,
                ..
            } => (padding, stride, dilation, activation),
            _ => return Err("it has no convolution options".to_owned()),
        };
        let (xs, fs, os) = (self.shape(x), self.shape(f), self.shape(out));
        if xs.len() != 4 || fs.len() != 4 || os.len() != 4 {
            return Err(format!(
                "input {xs:?}, filter {fs:?} and output {os:?} must be 4-D (NHWC)"
            ));
        }
        if self.graph.tensors[f].data.is_none() {
            return Err("the filter must be a constant".to_owned());
        }
        let oc = os[3];
        at_least_one("stride", stride)?;
        at_least_one("dilation", dilation)?;
        let (filter_channels, shape) = if depthwise {
            (fs[3], "[1, height, width, output channels]")
        } else {
            (fs[0], "[output channels, height, width, input channels]")
        };
        if filter_channels != oc || (depthwise && fs[0] != 1) {
            return Err(format!(
                "the filter `{}` {fs:?} does not fit the output `{}` {os:?}: a filter is {shape}\n  = help: the file is corrupt; convert the model again",
                self.name(f),
                self.name(out)
            ));
        }
        if let Some(b) = bias {
            self.bias(b, oc, "output channels")?;
        }
        let [pad_top, pad_left] = padding_of(xs, os, [fs[1], fs[2]], stride, dilation, padding)?;
        for (name, v) in [
            ("stride_h", stride[0]),
            ("stride_w", stride[1]),
            ("dilation_h", dilation[0]),
            ("dilation_w", dilation[1]),
            ("pad_top", pad_top),
            ("pad_left", pad_left),
        ] {
            attr_int(attrs, name, v as i64);
        }
        if depthwise {
            if xs[3] == 0 || oc % xs[3] != 0 {
                return Err(format!(
                    "output channels {oc} are not a multiple of the input's {}",
                    xs[3]
                ));
            }
            attr_int(attrs, "depth_multiplier", (oc / xs[3]) as i64);
        }
        inputs.push(self.operand(x)?);
        inputs.push(self.operand(f)?);
        inputs.push(match bias {
            Some(b) => self.operand(b)?,
            None => OpInput::Absent,
        });
        match (self.element(x), self.element(f), self.element(out)) {
            (ElementType::F32, ElementType::F32, ElementType::F32) => {}
            (ElementType::F32, ElementType::I8, ElementType::F32) => {
                // Hybrid (dynamic-range) model: one filter scale, symmetric.
                let q = self.graph.tensors[f]
                    .quantization
                    .as_ref()
                    .ok_or("the int8 filter has no quantization")?;
                positive_scales(&self.name(f), &q.scale)?;
                let all_same = q.scale.iter().all(|&s| s == q.scale[0]);
                if depthwise || !all_same || q.zero_point.iter().any(|&z| z != 0) {
                    return Err("this hybrid convolution (float32 input, int8 filter) is not supported: memplan runs hybrid CONV_2D with one symmetric filter scale\n  = help: convert the model with full int8 quantization, or without weight quantization".to_owned());
                }
                if dilation != [1, 1] {
                    return Err("a hybrid CONV_2D with dilation is not supported".to_owned());
                }
                attr_float(attrs, "filter_scale", q.scale[0]);
            }
            (ElementType::I8, ElementType::I8, ElementType::I8) => {
                let (qi, qo) = (self.q(x)?, self.q(out)?);
                let fq = self.graph.tensors[f]
                    .quantization
                    .as_ref()
                    .ok_or("the int8 filter has no quantization")?;
                positive_scales(&self.name(f), &fq.scale)?;
                if !(fq.scale.len() == 1 || fq.scale.len() == oc) {
                    return Err(format!(
                        "the filter has {} scales for {oc} output channels",
                        fq.scale.len()
                    ));
                }
                if let Some(b) = bias
                    && self.element(b) != ElementType::I32
                {
                    return Err(format!(
                        "an int8 convolution's bias must be INT32, found {}",
                        self.element(b).name()
                    ));
                }
                let (mult, shift) = per_channel(qi.scale, &fq.scale, qo.scale, oc);
                inputs.push(self.i32s(&format!("{} multipliers", self.name(f)), &mult)?);
                inputs.push(self.i32s(&format!("{} shifts", self.name(f)), &shift)?);
                attr_int(attrs, "input_offset", -i64::from(qi.zero_point));
                attr_int(attrs, "output_offset", i64::from(qo.zero_point));
            }
            (a, b, o) => {
                return Err(format!(
                    "input {}, filter {} and output {} is not a supported combination (float32, int8, or float32 with int8 weights)",
                    a.name(),
                    b.name(),
                    o.name()
                ));
            }
        }
        self.activation(activation, out, attrs)
    }

    fn fully_connected(
        &mut self,
        op: &Operator,
        out: usize,
        inputs: &mut Vec<OpInput>,
        attrs: &mut Attrs,
    ) -> Result<(), String> {
        let x = op
            .inputs
            .first()
            .copied()
            .flatten()
            .ok_or("input 0 is missing")?;
        let f = op
            .inputs
            .get(1)
            .copied()
            .flatten()
            .ok_or("the weights are missing")?;
        let bias = op.inputs.get(2).copied().flatten();
        let Opts::FullyConnected {
            activation,
            default_weights_format,
            asymmetric_quantize_inputs,
            ..
        } = op.options
        else {
            return Err("it has no FullyConnectedOptions".to_owned());
        };
        if !default_weights_format {
            return Err("shuffled weights (SHUFFLED4x16INT8) are not supported".to_owned());
        }
        let fs = self.shape(f);
        if fs.len() != 2 {
            return Err(format!(
                "the weights have shape {fs:?}, expected [units, depth]"
            ));
        }
        let units = fs[0];
        let (depth, total) = (fs[1], self.graph.tensors[x].elements());
        if depth == 0 || total % depth != 0 {
            return Err(format!(
                "its input `{}` {:?} is not a whole number of rows of the weights' depth {depth}\n  = help: the file is corrupt; convert the model again",
                self.name(x),
                self.shape(x)
            ));
        }
        if Some(self.graph.tensors[out].elements()) != (total / depth).checked_mul(units) {
            return Err(format!(
                "its output `{}` {:?} is not {} rows of {units} units\n  = help: the file is corrupt; convert the model again",
                self.name(out),
                self.shape(out),
                total / depth
            ));
        }
        if let Some(b) = bias {
            self.bias(b, units, "units")?;
        }
        inputs.push(self.operand(x)?);
        inputs.push(self.operand(f)?);
        inputs.push(match bias {
            Some(b) => self.operand(b)?,
            None => OpInput::Absent,
        });
        match (self.element(x), self.element(f), self.element(out)) {
            (ElementType::F32, ElementType::F32, ElementType::F32) => {}
            (ElementType::F32, ElementType::I8, ElementType::F32) => {
                let q = self.graph.tensors[f]
                    .quantization
                    .as_ref()
                    .ok_or("the int8 weights have no quantization")?;
                positive_scales(&self.name(f), &q.scale)?;
                if asymmetric_quantize_inputs || !q.per_tensor() || q.zero_point0() != 0 {
                    return Err("this hybrid FULLY_CONNECTED is not supported: memplan runs it with one symmetric weight scale and symmetric input quantization".to_owned());
                }
                attr_float(attrs, "filter_scale", q.scale0());
            }
            (ElementType::I8, ElementType::I8, ElementType::I8) => {
                let (qi, qo) = (self.q(x)?, self.q(out)?);
                let fq = self.graph.tensors[f]
                    .quantization
                    .as_ref()
                    .ok_or("the int8 weights have no quantization")?;
                positive_scales(&self.name(f), &fq.scale)?;
                if !(fq.scale.len() == 1 || fq.scale.len() == units) {
                    return Err(format!(
                        "the weights have {} scales for {units} units",
                        fq.scale.len()
                    ));
                }
                let (mult, shift) = per_channel(qi.scale, &fq.scale, qo.scale, fq.scale.len());
                inputs.push(self.i32s(&format!("{} multipliers", self.name(f)), &mult)?);
                inputs.push(self.i32s(&format!("{} shifts", self.name(f)), &shift)?);
                attr_int(attrs, "input_offset", -i64::from(qi.zero_point));
                attr_int(
                    attrs,
                    "filter_offset",
                    -i64::from(self.weight_zero_point(f)?),
                );
                attr_int(attrs, "output_offset", i64::from(qo.zero_point));
            }
            (a, b, o) => {
                return Err(format!(
                    "input {}, weights {} and output {} is not a supported combination",
                    a.name(),
                    b.name(),
                    o.name()
                ));
            }
        }
        self.activation(activation, out, attrs)
    }
}

/// The multipliers and shifts of `input_scale * filter_scale[c] / output_scale`, in f64 as
/// LiteRT's `PopulateConvolutionQuantizationParams` (and, for one scale,
/// `GetQuantizedConvolutionMultipler`) computes them.
fn per_channel(input: f32, filter: &[f32], output: f32, channels: usize) -> (Vec<i32>, Vec<i32>) {
    (0..channels)
        .map(|c| {
            let scale = if filter.len() == 1 {
                filter[0]
            } else {
                filter[c]
            };
            quantize_multiplier(f64::from(input) * f64::from(scale) / f64::from(output))
        })
        .unzip()
}

/// The padding before (top, left) of a window over `xs` (NHWC) giving `os`, as TFLite's
/// `ComputePaddingHeightWidth`; the output size must be the one TFLite computes.
fn padding_of(
    xs: &[usize],
    os: &[usize],
    filter: [usize; 2],
    stride: [usize; 2],
    dilation: [usize; 2],
    padding: Padding,
) -> Result<[usize; 2], String> {
    if xs.len() != 4 || os.len() != 4 {
        return Err(format!("input {xs:?} and output {os:?} must be 4-D (NHWC)"));
    }
    let mut pads = [0; 2];
    for a in 0..2 {
        let (input, output) = (xs[1 + a], os[1 + a]);
        let (s, d) = (stride[a].max(1), dilation[a].max(1));
        // The window's span (the file's filter size and dilation may be up to 2^31 - 1 each).
        let too_large = || {
            format!(
                "a window of {} taps dilated by {d} on axis {} spans more than memory holds\n  = help: the file is corrupt; convert the model again",
                filter[a],
                1 + a
            )
        };
        let effective = (filter[a].max(1) - 1)
            .checked_mul(d)
            .and_then(|span| span.checked_add(1))
            .ok_or_else(too_large)?;
        let expected = match padding {
            Padding::Same => input.div_ceil(s),
            Padding::Valid => input.saturating_add(s).saturating_sub(effective) / s,
        };
        if expected != output {
            return Err(format!(
                "the output's size {output} on axis {} is not the {expected} that {padding:?} padding gives",
                1 + a
            ));
        }
        let total = output
            .saturating_sub(1)
            .checked_mul(s)
            .and_then(|span| span.checked_add(effective))
            .ok_or_else(too_large)?
            .saturating_sub(input);
        pads[a] = if padding == Padding::Same {
            total / 2
        } else {
            0
        };
    }
    Ok(pads)
}

/// Per axis: the first index, the step and the count.
type Slice = (Vec<i64>, Vec<i64>, Vec<i64>);

/// STRIDED_SLICE's begin, stride and size per axis, as TFLite's `StartForAxis`, `StopForAxis`
/// and `strided_slice.cc` resolve them (`masks`: begin, end, shrink; an axis past `begin`'s
/// length is taken whole).
fn strided_slice(
    xs: &[usize],
    begin: &[i64],
    end: &[i64],
    strides: &[i64],
    masks: [i32; 3],
    offset: bool,
) -> Result<Slice, String> {
    let [begin_mask, end_mask, shrink_mask] = masks;
    let bit = |mask: i32, d: usize| d < 32 && mask & (1 << d) != 0;
    let (mut starts, mut steps, mut sizes) = (Vec::new(), Vec::new(), Vec::new());
    for (d, &n) in xs.iter().enumerate() {
        let n = n as i64;
        if d >= begin.len() {
            starts.push(0);
            steps.push(1);
            sizes.push(n);
            continue;
        }
        if strides[d] == 0 {
            return Err(format!("stride 0 on axis {d}"));
        }
        // A stride longer than the axis takes one element, as one of `n + 1` does: clamped, so
        // the arithmetic below stays far from the limits of int64 (the file's stride may be
        // `i64::MIN`).
        let s = strides[d].clamp(-(n + 1), n + 1);
        // `begin + end` (with `offset`) is checked: both come from the file and may be near the
        // limits of int64.
        let overflow = || {
            format!(
                "begin {} plus end {} on axis {d} overflows int64\n  = help: the slice's values are absurd; the file is corrupt, convert the model again",
                begin[d], end[d]
            )
        };
        let mut start = if bit(begin_mask, d) && !bit(shrink_mask, d) {
            if s > 0 { 0 } else { n - 1 }
        } else {
            let b = begin[d];
            if b < 0 { b + n } else { b }
        };
        start = if s > 0 {
            start.clamp(0, n)
        } else {
            start.clamp(-1, n - 1)
        };
        if bit(shrink_mask, d) {
            if !(0..n).contains(&start) {
                return Err(format!(
                    "the shrunk axis {d} starts at {start}, outside its {n} elements"
                ));
            }
            starts.push(start);
            steps.push(1);
            sizes.push(1);
            continue;
        }
        let mut stop = if bit(end_mask, d) {
            if s > 0 { n } else { -1 }
        } else {
            let e = if offset {
                begin[d].checked_add(end[d]).ok_or_else(overflow)?
            } else {
                end[d]
            };
            if e < 0 { e + n } else { e }
        };
        stop = if s > 0 {
            stop.clamp(0, n)
        } else {
            stop.clamp(-1, n - 1)
        };
        let size = if s > 0 {
            (stop - start + s - 1).div_euclid(s).max(0)
        } else {
            (start - stop - s - 1).div_euclid(-s).max(0)
        };
        starts.push(if size == 0 { 0 } else { start });
        steps.push(s);
        sizes.push(size);
    }
    Ok((starts, steps, sizes))
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
