//! Build-time specialisation: the nodes whose kernel `run` calls directly, with every parameter
//! a constant of the generated code, instead of through `memplan_kernels::run`'s operator
//! names and attribute tables.
//!
//! - The int8 CONV_2D, DEPTHWISE_CONV_2D (depth multiplier 1), FULLY_CONNECTED (symmetric
//!   weights), AVERAGE_POOL_2D, MAX_POOL_2D, and ADD, SUB, MUL of operands of one shape of a
//!   TFLite network call `memplan_kernels::tflite::s8`'s kernels with a parameter
//!   struct written as a literal and checked here ([`Kernel`]); the input's zero point is folded
//!   into a bias computed here (`fold_input_offset`), the multipliers and shifts are read in
//!   place or written out per channel.
//! - The float32 CONV_2D, DEPTHWISE_CONV_2D (depth multiplier 1) and FULLY_CONNECTED with float32
//!   constant weights call `memplan_kernels::tflite::float`'s kernels, which compute the
//!   reference's bits (the same sums in the same order) with loops shaped for a Cortex-M4F;
//!   with int8 weights of one scale (hybrid), `memplan_kernels::tflite::hybrid`'s, which quantize
//!   the input once into scratch.
//! - Every other `tflite.*` node calls its own function of `memplan_kernels::tflite::op` with
//!   its attributes as a constant table beside the call, so a firmware links the kernels its
//!   network uses and no others.
//! - An ONNX node calls its operator's function of `memplan_kernels::op` (an elementwise,
//!   reshape-like or reduction one its family's, with the operator's name), its attributes as a
//!   constant table beside the call: no `memplan_kernels::run`, whose table links every kernel.
//!
//! [`plan`] decides, once, from the node, its operands' dtypes and shapes and its constants;
//! the scratch planning (`prepare::finish`) and the emitter (`emit`) both ask it, so the scratch
//! a kernel gets is the scratch it needs.

use crate::graph::{AttrValue, OpInput};
use memplan_core::DType;
use memplan_core::model_file::Layout;
use memplan_kernels::tflite::{float, hybrid, s8};

use crate::graph::{Constant, Node};

/// A node's specialised kernel and its parameters.
pub(crate) enum Kernel {
    /// `s8::conv`.
    Conv(s8::Conv),
    /// `s8::depthwise`.
    Depthwise(s8::Depthwise),
    /// `s8::fully_connected`.
    FullyConnected(s8::FullyConnected),
    /// `s8::elementwise`.
    Elementwise(s8::Elementwise),
    /// `s8::pool`.
    Pool(s8::Pool),
    /// `float::conv`.
    FloatConv(float::Window),
    /// `float::depthwise`.
    FloatDepthwise(float::Window),
    /// `float::fully_connected`.
    FloatFullyConnected(float::FullyConnected),
    /// `hybrid::conv`, with the filter's scale.
    HybridConv(float::Window, f32),
    /// `hybrid::fully_connected`, with the filter's scale.
    HybridFullyConnected(float::FullyConnected, f32),
}

impl Kernel {
    /// Bytes of scratch the kernel needs, writing its output over its input (`overwrites`) or
    /// not.
    pub(crate) fn scratch_bytes(&self, overwrites: bool) -> usize {
        match self {
            Kernel::Conv(p) => p.scratch_bytes(),
            Kernel::HybridConv(p, _) if overwrites => {
                hybrid::conv_in_place_scratch_bytes(p).unwrap_or(0)
            }
            Kernel::HybridConv(p, _) => hybrid::conv_scratch_bytes(p),
            Kernel::HybridFullyConnected(p, _) => hybrid::fully_connected_scratch_bytes(p),
            Kernel::Depthwise(p) if overwrites => p.in_place_scratch_bytes().unwrap_or(0),
            Kernel::FloatDepthwise(p) if overwrites => {
                p.depthwise_in_place_scratch_bytes().unwrap_or(0)
            }
            Kernel::FloatConv(p) if overwrites => p.conv_in_place_scratch_bytes().unwrap_or(0),
            Kernel::Depthwise(_)
            | Kernel::FullyConnected(_)
            | Kernel::Elementwise(_)
            | Kernel::Pool(_)
            | Kernel::FloatConv(_)
            | Kernel::FloatDepthwise(_)
            | Kernel::FloatFullyConnected(_) => 0,
        }
    }

    /// Whether the kernel can write its output over its input 0 (`s8::conv_in_place`,
    /// `s8::depthwise_in_place`, `float::conv_in_place`, ...).
    pub(crate) fn can_overwrite(&self) -> bool {
        match self {
            Kernel::Conv(p) => p.in_place(),
            Kernel::Depthwise(p) => p.in_place_rows().is_some(),
            Kernel::Elementwise(_) => true,
            Kernel::FloatConv(p) => p.conv_in_place_scratch_bytes().is_some(),
            Kernel::FloatDepthwise(p) => p.depthwise_in_place_scratch_bytes().is_some(),
            Kernel::HybridConv(p, _) => hybrid::conv_in_place_scratch_bytes(p).is_some(),
            Kernel::FullyConnected(_)
            | Kernel::Pool(_)
            | Kernel::FloatFullyConnected(_)
            | Kernel::HybridFullyConnected(..) => false,
        }
    }
}

/// What [`plan`] reads of a network: each operand's dtype and shape.
pub(crate) struct Operands<'a> {
    model: &'a memplan_core::Model,
    shapes: &'a [Vec<u64>],
    constants: &'a [Constant],
}

impl Operands<'_> {
    fn value(&self, t: usize) -> Option<(DType, &[u64])> {
        let dtype = match &self.model.tensors.get(t)?.layout {
            Layout::Typed { dtype, .. } => *dtype,
            Layout::Bytes => return None,
        };
        Some((dtype, self.shapes.get(t)?))
    }

    fn constant(&self, w: usize) -> Option<(DType, &[u64])> {
        let c = self.constants.get(w)?;
        Some((c.dtype, &c.shape))
    }
}

/// The [`Operands`] of a model, its tensors' `shapes` and its `constants`.
pub(crate) fn operands<'a>(
    model: &'a memplan_core::Model,
    shapes: &'a [Vec<u64>],
    constants: &'a [Constant],
) -> Operands<'a> {
    Operands {
        model,
        shapes,
        constants,
    }
}

fn int(node: &Node, name: &str, default: i64) -> Option<i64> {
    match node.attrs.iter().find(|(n, _)| n == name) {
        Some((_, AttrValue::Int(v))) => Some(*v),
        Some(_) => None,
        None => Some(default),
    }
}

fn size(node: &Node, name: &str, default: i64) -> Option<usize> {
    usize::try_from(int(node, name, default)?).ok()
}

fn i32_of(node: &Node, name: &str, default: i64) -> Option<i32> {
    i32::try_from(int(node, name, default)?).ok()
}

fn dims<const N: usize>(shape: &[u64]) -> Option<[usize; N]> {
    let v: Vec<usize> = shape
        .iter()
        .map(|&d| usize::try_from(d).ok())
        .collect::<Option<_>>()?;
    v.try_into().ok()
}

/// The specialised kernel of `node`, if it has one.
pub(crate) fn plan(node: &Node, ops: &Operands<'_>) -> Option<Kernel> {
    let kernel = match node.op_type.as_str() {
        "tflite.CONV_2D" | "tflite.DEPTHWISE_CONV_2D" | "tflite.FULLY_CONNECTED" => {
            weighted(node, ops)?
        }
        "tflite.ADD" | "tflite.SUB" | "tflite.MUL" => elementwise(node, ops)?,
        "tflite.AVERAGE_POOL_2D" | "tflite.MAX_POOL_2D" => pool(node, ops)?,
        _ => return None,
    };
    let checked = match &kernel {
        Kernel::Conv(p) => p.check(),
        Kernel::Depthwise(p) => p.check(),
        Kernel::FullyConnected(p) => p.check(),
        Kernel::Elementwise(p) => p.check(),
        Kernel::Pool(p) => p.check(),
        Kernel::FloatConv(p) | Kernel::FloatDepthwise(p) | Kernel::HybridConv(p, _) => p.check(),
        Kernel::FloatFullyConnected(_) | Kernel::HybridFullyConnected(..) => Ok(()),
    };
    checked.ok().map(|()| kernel)
}

/// An int8 operand or output: its shape, if the node's input `i` (a value or a constant) or
/// output is int8.
fn int8_shape<'a>(node: &Node, ops: &'a Operands<'_>, input: Option<usize>) -> Option<&'a [u64]> {
    let (dtype, shape) = match input {
        Some(i) => match node.inputs.get(i)? {
            &OpInput::Tensor(t) => ops.value(t)?,
            &OpInput::Weight(w) => ops.constant(w)?,
            OpInput::Absent => return None,
        },
        None => ops.value(*node.outputs.first()?)?,
    };
    (dtype == DType::I8).then_some(shape)
}

/// ADD, SUB, MUL of int8 operands of the output's shape.
fn elementwise(node: &Node, ops: &Operands<'_>) -> Option<Kernel> {
    let out = int8_shape(node, ops, None)?;
    if node.outputs.len() != 1
        || int8_shape(node, ops, Some(0))? != out
        || int8_shape(node, ops, Some(1))? != out
    {
        return None;
    }
    let len = usize::try_from(out.iter().product::<u64>()).ok()?;
    let op = match node.op_type.as_str() {
        "tflite.ADD" => s8::Operator::Add,
        "tflite.SUB" => s8::Operator::Sub,
        _ => s8::Operator::Mul,
    };
    let mul = op == s8::Operator::Mul;
    let v = |name: &str| i32_of(node, name, 0);
    Some(Kernel::Elementwise(s8::Elementwise {
        op,
        len,
        input1_offset: v("input1_offset")?,
        input2_offset: v("input2_offset")?,
        left_shift: if mul {
            0
        } else {
            v("left_shift")?.clamp(0, 30)
        },
        input1: if mul {
            [0; 2]
        } else {
            [v("input1_multiplier")?, v("input1_shift")?]
        },
        input2: if mul {
            [0; 2]
        } else {
            [v("input2_multiplier")?, v("input2_shift")?]
        },
        output: [v("output_multiplier")?, v("output_shift")?],
        output_offset: v("output_offset")?,
        act: [
            i32_of(node, "act_min", -128)?,
            i32_of(node, "act_max", 127)?,
        ],
    }))
}

/// AVERAGE_POOL_2D and MAX_POOL_2D over int8.
fn pool(node: &Node, ops: &Operands<'_>) -> Option<Kernel> {
    let [n, ih, iw, c] = dims(int8_shape(node, ops, Some(0))?)?;
    let [on, oh, ow, oc] = dims(int8_shape(node, ops, None)?)?;
    if on != n || oc != c || !matches!(node.inputs.first(), Some(OpInput::Tensor(_))) {
        return None;
    }
    Some(Kernel::Pool(s8::Pool {
        max: node.op_type == "tflite.MAX_POOL_2D",
        batches: n,
        input: [ih, iw],
        output: [oh, ow],
        channels: c,
        filter: [size(node, "filter_h", 1)?, size(node, "filter_w", 1)?],
        stride: [size(node, "stride_h", 1)?, size(node, "stride_w", 1)?],
        pad: [size(node, "pad_top", 0)?, size(node, "pad_left", 0)?],
        act: [
            i32_of(node, "act_min", -128)?,
            i32_of(node, "act_max", 127)?,
        ],
    }))
}

/// CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED: an int8 value, an int8 constant filter, an
/// int32 constant bias (or none), int32 constant multipliers and shifts.
fn weighted(node: &Node, ops: &Operands<'_>) -> Option<Kernel> {
    let value = |i: usize| match node.inputs.get(i) {
        Some(&OpInput::Tensor(t)) => ops.value(t),
        _ => None,
    };
    let constant = |i: usize| match node.inputs.get(i) {
        Some(&OpInput::Weight(w)) => ops.constant(w),
        _ => None,
    };
    let &[out] = node.outputs.as_slice() else {
        return None;
    };
    let (out_dtype, out_shape) = ops.value(out)?;
    let (x_dtype, x_shape) = value(0)?;
    let (f_dtype, f_shape) = constant(1)?;
    if (x_dtype, f_dtype, out_dtype) == (DType::F32, DType::F32, DType::F32) {
        return float_weighted(node, x_shape, f_shape, out_shape, constant(2));
    }
    if (x_dtype, f_dtype, out_dtype) == (DType::F32, DType::I8, DType::F32) {
        // Hybrid: the float kernel's parameters, an int8 filter of one scale.
        let scale = float_of(node, "filter_scale", 1.0)?;
        return match float_weighted(node, x_shape, f_shape, out_shape, constant(2))? {
            Kernel::FloatConv(p) if p.dilation == [1, 1] => Some(Kernel::HybridConv(p, scale)),
            Kernel::FloatFullyConnected(p) => Some(Kernel::HybridFullyConnected(p, scale)),
            _ => None,
        };
    }
    if (x_dtype, f_dtype, out_dtype) != (DType::I8, DType::I8, DType::I8) {
        return None;
    }
    // The bias, if any, is an int32 constant; multipliers and shifts int32 constants.
    let bias_ok = match node.inputs.get(2) {
        None | Some(OpInput::Absent) => true,
        Some(_) => constant(2).is_some_and(|(d, _)| d == DType::I32),
    };
    let requant_ok = [3, 4]
        .iter()
        .all(|&i| constant(i).is_some_and(|(d, _)| d == DType::I32));
    if !bias_ok || !requant_ok {
        return None;
    }
    let input_offset = i32_of(node, "input_offset", 0)?;
    let output_offset = i32_of(node, "output_offset", 0)?;
    let act = [
        i32_of(node, "act_min", -128)?,
        i32_of(node, "act_max", 127)?,
    ];
    let window = || -> Option<([usize; 2], [usize; 2], [usize; 2])> {
        Some((
            [size(node, "stride_h", 1)?, size(node, "stride_w", 1)?],
            [size(node, "dilation_h", 1)?, size(node, "dilation_w", 1)?],
            [size(node, "pad_top", 0)?, size(node, "pad_left", 0)?],
        ))
    };
    let kernel = match node.op_type.as_str() {
        "tflite.CONV_2D" => {
            let [n, ih, iw, ic] = dims(x_shape)?;
            let [o, kh, kw, fi] = dims(f_shape)?;
            let [on, oh, ow, oc] = dims(out_shape)?;
            if fi != ic || o != oc || on != n {
                return None; // grouped: the reference kernel runs it
            }
            let (stride, dilation, pad) = window()?;
            Kernel::Conv(s8::Conv {
                batches: n,
                input: [ih, iw, ic],
                output: [oh, ow, oc],
                kernel: [kh, kw],
                stride,
                dilation,
                pad,
                input_offset,
                output_offset,
                act,
            })
        }
        "tflite.DEPTHWISE_CONV_2D" => {
            let [n, ih, iw, c] = dims(x_shape)?;
            let [one, kh, kw, fc] = dims(f_shape)?;
            let [on, oh, ow, oc] = dims(out_shape)?;
            if one != 1 || fc != c || oc != c || on != n || size(node, "depth_multiplier", 1)? != 1
            {
                return None;
            }
            let (stride, dilation, pad) = window()?;
            Kernel::Depthwise(s8::Depthwise {
                batches: n,
                input: [ih, iw],
                output: [oh, ow],
                channels: c,
                kernel: [kh, kw],
                stride,
                dilation,
                pad,
                input_offset,
                output_offset,
                act,
            })
        }
        "tflite.FULLY_CONNECTED" => {
            let [units, depth] = dims(f_shape)?;
            let total: u64 = x_shape.iter().product();
            let out_total: u64 = out_shape.iter().product();
            let total = usize::try_from(total).ok()?;
            if depth == 0 || total % depth != 0 || int(node, "filter_offset", 0)? != 0 {
                return None;
            }
            let batches = total / depth;
            if usize::try_from(out_total).ok()? != batches.checked_mul(units)? {
                return None;
            }
            Kernel::FullyConnected(s8::FullyConnected {
                batches,
                depth,
                units,
                input_offset,
                output_offset,
                act,
            })
        }
        _ => return None,
    };
    Some(kernel)
}

fn float_of(node: &Node, name: &str, default: f32) -> Option<f32> {
    match node.attrs.iter().find(|(n, _)| n == name) {
        Some((_, AttrValue::Float(v))) => Some(*v),
        Some(_) => None,
        None => Some(default),
    }
}

/// float32 CONV_2D, DEPTHWISE_CONV_2D (multiplier 1) and FULLY_CONNECTED: a float32 value, a
/// float32 constant filter and a float32 constant bias (or none).
fn float_weighted(
    node: &Node,
    x_shape: &[u64],
    f_shape: &[u64],
    out_shape: &[u64],
    bias: Option<(DType, &[u64])>,
) -> Option<Kernel> {
    let bias_ok = match node.inputs.get(2) {
        None | Some(OpInput::Absent) => true,
        Some(_) => bias.is_some_and(|(d, _)| d == DType::F32),
    };
    if !bias_ok {
        return None;
    }
    let act = [
        float_of(node, "act_min", f32::MIN)?,
        float_of(node, "act_max", f32::MAX)?,
    ];
    let window = |input: [usize; 3], output: [usize; 3], kernel: [usize; 2], batches| {
        Some(float::Window {
            batches,
            input,
            output,
            kernel,
            stride: [size(node, "stride_h", 1)?, size(node, "stride_w", 1)?],
            dilation: [size(node, "dilation_h", 1)?, size(node, "dilation_w", 1)?],
            pad: [size(node, "pad_top", 0)?, size(node, "pad_left", 0)?],
            act,
        })
    };
    match node.op_type.as_str() {
        "tflite.CONV_2D" => {
            let [n, ih, iw, ic] = dims(x_shape)?;
            let [o, kh, kw, fi] = dims(f_shape)?;
            let [on, oh, ow, oc] = dims(out_shape)?;
            if fi != ic || o != oc || on != n {
                return None;
            }
            Some(Kernel::FloatConv(window(
                [ih, iw, ic],
                [oh, ow, oc],
                [kh, kw],
                n,
            )?))
        }
        "tflite.DEPTHWISE_CONV_2D" => {
            let [n, ih, iw, c] = dims(x_shape)?;
            let [one, kh, kw, fc] = dims(f_shape)?;
            let [on, oh, ow, oc] = dims(out_shape)?;
            if one != 1 || fc != c || oc != c || on != n || size(node, "depth_multiplier", 1)? != 1
            {
                return None;
            }
            Some(Kernel::FloatDepthwise(window(
                [ih, iw, c],
                [oh, ow, c],
                [kh, kw],
                n,
            )?))
        }
        "tflite.FULLY_CONNECTED" => {
            let [units, depth] = dims(f_shape)?;
            let total = usize::try_from(x_shape.iter().product::<u64>()).ok()?;
            let out_total = usize::try_from(out_shape.iter().product::<u64>()).ok()?;
            if depth == 0
                || total % depth != 0
                || out_total != (total / depth).checked_mul(units)?
            {
                return None;
            }
            Some(Kernel::FloatFullyConnected(float::FullyConnected {
                batches: total / depth,
                depth,
                units,
                act,
            }))
        }
        _ => None,
    }
}

/// A float32 as a Rust expression of exactly its bits.
fn f32_literal(f: f32) -> String {
    format!("f32::from_bits({:#010x})", f.to_bits())
}

/// The literal of a float kernel's window.
pub(crate) fn window_literal(p: &float::Window) -> String {
    let float::Window {
        batches,
        input,
        output,
        kernel,
        stride,
        dilation,
        pad,
        act,
    } = p;
    format!(
        "__k::tflite::float::Window {{ batches: {batches}, input: {input:?}, output: {output:?}, kernel: {kernel:?}, stride: {stride:?}, dilation: {dilation:?}, pad: {pad:?}, act: [{}, {}] }}",
        f32_literal(act[0]),
        f32_literal(act[1])
    )
}

/// The `memplan_kernels::tflite::op` function of a `tflite.*` operator: its builtin's name in
/// lower case (`tflite.CONV_2D` -> `conv_2d`).
pub(crate) fn tflite_function(op_type: &str) -> Option<String> {
    let builtin = op_type.strip_prefix("tflite.")?;
    memplan_kernels::tflite::OPERATORS
        .contains(&op_type)
        .then(|| builtin.to_ascii_lowercase())
}

/// Little-endian bytes as int8 values.
fn i8s(bytes: &[u8]) -> Vec<i8> {
    bytes.iter().map(|&b| b.cast_signed()).collect()
}

/// Little-endian bytes as int32 values.
fn i32s(bytes: &[u8]) -> Vec<i32> {
    bytes
        .chunks_exact(4)
        .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// An int32 array as a `static` item named `name`.
fn static_i32s(name: &str, values: &[i32]) -> String {
    let items: Vec<String> = values.iter().map(i32::to_string).collect();
    format!(
        "static {name}: [i32; {}] = [{}];",
        values.len(),
        items.join(", ")
    )
}

/// How the generated code reaches one operand of a specialised call.
pub(crate) struct Call<'a> {
    /// The network's constants.
    pub(crate) constants: &'a [Constant],
    /// Each constant's offset in the weight blob.
    pub(crate) offsets: &'a [usize],
}

impl Call<'_> {
    /// The constant at input `i` of `node`, read in place from the blob as `T`.
    fn in_place(&self, node: &Node, i: usize, rust: &str) -> Option<String> {
        let &OpInput::Weight(w) = node.inputs.get(i)? else {
            return None;
        };
        let c = &self.constants[w];
        let len = c.bytes.len() / if rust == "i8" { 1 } else { 4 };
        Some(format!(
            "__k::program::constant::<{rust}>(__blob, {}, {len}).map_err(__e)?",
            self.offsets[w]
        ))
    }

    fn bytes<'n>(&'n self, node: &Node, i: usize) -> Option<&'n [u8]> {
        match node.inputs.get(i)? {
            &OpInput::Weight(w) => Some(&self.constants[w].bytes),
            _ => None,
        }
    }

    /// The per-channel int32 list at input `i` (`channels` values, or one for all), in place
    /// when it has one value per channel, else written out per channel as `static {name}`.
    fn per_channel(
        &self,
        node: &Node,
        i: usize,
        channels: usize,
        name: &str,
        items: &mut String,
    ) -> Option<String> {
        let values = i32s(self.bytes(node, i)?);
        match values.len() {
            n if n == channels => self.in_place(node, i, "i32"),
            1 => {
                items.push_str(&static_i32s(name, &vec![values[0]; channels]));
                items.push('\n');
                Some(format!("&{name}"))
            }
            _ => None,
        }
    }

    /// A float bias (input 2) read in place, or `channels` zeros as `static __BIAS`.
    fn float_bias(&self, node: &Node, channels: usize, items: &mut String) -> Option<String> {
        match self.bytes(node, 2) {
            Some(bytes) if bytes.len() == 4 * channels => self.in_place(node, 2, "f32"),
            Some(_) => None,
            None => {
                items.push_str(&format!(
                    "static __BIAS: [f32; {channels}] = [0.0; {channels}];\n"
                ));
                Some("&__BIAS".to_owned())
            }
        }
    }

    /// The bias with the input offset folded in, as `static __BIAS`.
    fn folded_bias(
        &self,
        node: &Node,
        input_offset: i32,
        rows: usize,
        items: &mut String,
    ) -> Option<String> {
        let filter = i8s(self.bytes(node, 1)?);
        let bias = self.bytes(node, 2).map(i32s);
        let mut folded = vec![0i32; rows];
        s8::fold_input_offset(&filter, bias.as_deref(), input_offset, &mut folded).ok()?;
        items.push_str(&static_i32s("__BIAS", &folded));
        items.push('\n');
        Some("&__BIAS".to_owned())
    }

    /// The operands CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED take after their input: the
    /// filter (input 1, in place), `bias`, and the per-channel multipliers (input 3) and shifts
    /// (input 4) of `channels` channels.
    fn weights(
        &self,
        node: &Node,
        channels: usize,
        bias: &str,
        items: &mut String,
    ) -> Option<String> {
        let filter = self.in_place(node, 1, "i8")?;
        let multiplier = self.per_channel(node, 3, channels, "__MULTIPLIER", items)?;
        let shift = self.per_channel(node, 4, channels, "__SHIFT", items)?;
        Some(format!("{filter}, {bias}, {multiplier}, {shift}"))
    }

    /// The statement that runs `node` with `kernel`: `view(t)` is the view of value `t`,
    /// `scratch` the node's scratch. `None` when an operand is not what `kernel` reads (the
    /// node then runs through the general path).
    pub(crate) fn statement(
        &self,
        node: &Node,
        kernel: &Kernel,
        view: &dyn Fn(usize) -> String,
        scratch: &str,
    ) -> Option<String> {
        // Written in place, the input is the output's view (they share memory).
        let x = if node.overwrites {
            String::new()
        } else {
            match node.inputs.first()? {
                &OpInput::Tensor(t) => view(t),
                _ => return None,
            }
        };
        let out = view(*node.outputs.first()?);
        let (items, call) = self.call(node, kernel, None, &x, &out, scratch, view)?;
        Some(format!("{items}{call}.map_err(__e)?;"))
    }

    /// The call that runs `node` with `kernel` on input `x` into `out` (expressions), with
    /// `params` (an expression of the parameter struct's type) instead of its literal when
    /// given: the `static` items it needs, and the call (a `Result`). `None` when an operand is
    /// not what `kernel` reads.
    #[allow(clippy::too_many_arguments)] // the pieces of one call
    pub(crate) fn call(
        &self,
        node: &Node,
        kernel: &Kernel,
        params: Option<&str>,
        x: &str,
        out: &str,
        scratch: &str,
        view: &dyn Fn(usize) -> String,
    ) -> Option<(String, String)> {
        let operand = |i: usize| match node.inputs.get(i)? {
            &OpInput::Tensor(t) => Some(view(t)),
            OpInput::Weight(_) => self.in_place(node, i, "i8"),
            OpInput::Absent => None,
        };
        let literal = |p: &dyn std::fmt::Debug| {
            params.map_or_else(|| format!("&__k::tflite::s8::{p:?}"), |e| format!("&{e}"))
        };
        let mut items = String::new();
        // The parameter structs' `Debug` is their literal: plain fields of integers and arrays.
        let call = match kernel {
            Kernel::Conv(p) => {
                let oc = p.output[2];
                let bias = self.folded_bias(node, p.input_offset, oc, &mut items)?;
                let weights = self.weights(node, oc, &bias, &mut items)?;
                let p = literal(p);
                if node.overwrites {
                    format!("__k::tflite::s8::conv_in_place({p}, {out}, {weights}, {scratch})")
                } else {
                    format!("__k::tflite::s8::conv({p}, {x}, {weights}, {out}, {scratch})")
                }
            }
            Kernel::Depthwise(p) => {
                let c = p.channels;
                let bias = match self.bytes(node, 2) {
                    Some(_) => self.in_place(node, 2, "i32")?,
                    None => {
                        items.push_str(&static_i32s("__BIAS", &vec![0; c]));
                        "&__BIAS".to_owned()
                    }
                };
                let weights = self.weights(node, c, &bias, &mut items)?;
                let p = literal(p);
                if node.overwrites {
                    format!("__k::tflite::s8::depthwise_in_place({p}, {out}, {weights}, {scratch})")
                } else {
                    format!("__k::tflite::s8::depthwise({p}, {x}, {weights}, {out})")
                }
            }
            Kernel::FullyConnected(p) => {
                let units = p.units;
                let bias = self.folded_bias(node, p.input_offset, units, &mut items)?;
                let weights = self.weights(node, units, &bias, &mut items)?;
                format!(
                    "__k::tflite::s8::fully_connected(&__k::tflite::s8::{p:?}, {x}, {weights}, {out})"
                )
            }
            Kernel::Elementwise(p) => {
                // Written out: `Debug` would name the operator without its path.
                let s8::Elementwise {
                    op,
                    len,
                    input1_offset,
                    input2_offset,
                    left_shift,
                    input1,
                    input2,
                    output,
                    output_offset,
                    act,
                } = p;
                if node.overwrites {
                    format!(
                        "__k::tflite::s8::elementwise_in_place(&__k::tflite::s8::Elementwise {{ op: __k::tflite::s8::Operator::{op:?}, len: {len}, input1_offset: {input1_offset}, input2_offset: {input2_offset}, left_shift: {left_shift}, input1: {input1:?}, input2: {input2:?}, output: {output:?}, output_offset: {output_offset}, act: {act:?} }}, {out}, {})",
                        operand(1)?
                    )
                } else {
                    format!(
                        "__k::tflite::s8::elementwise(&__k::tflite::s8::Elementwise {{ op: __k::tflite::s8::Operator::{op:?}, len: {len}, input1_offset: {input1_offset}, input2_offset: {input2_offset}, left_shift: {left_shift}, input1: {input1:?}, input2: {input2:?}, output: {output:?}, output_offset: {output_offset}, act: {act:?} }}, {x}, {}, {out})",
                        operand(1)?
                    )
                }
            }
            Kernel::Pool(p) => {
                format!("__k::tflite::s8::pool(&__k::tflite::s8::{p:?}, {x}, {out})")
            }
            Kernel::FloatConv(p) | Kernel::FloatDepthwise(p) => {
                let channels = p.output[2];
                let filter = self.in_place(node, 1, "f32")?;
                let bias = self.float_bias(node, channels, &mut items)?;
                let function = if matches!(kernel, Kernel::FloatConv(_)) {
                    "conv"
                } else {
                    "depthwise"
                };
                let p = params.map_or_else(|| window_literal(p), |e| e.to_owned());
                if node.overwrites {
                    format!(
                        "__k::tflite::float::{function}_in_place(&{p}, {out}, {filter}, {bias}, {scratch})"
                    )
                } else {
                    format!("__k::tflite::float::{function}(&{p}, {x}, {filter}, {bias}, {out})")
                }
            }
            Kernel::HybridConv(p, scale) => {
                let filter = self.in_place(node, 1, "i8")?;
                let bias = self.float_bias(node, p.output[2], &mut items)?;
                let (p, scale) = (window_literal(p), f32_literal(*scale));
                if node.overwrites {
                    format!(
                        "__k::tflite::hybrid::conv_in_place(&{p}, {out}, {filter}, {scale}, {bias}, {scratch})"
                    )
                } else {
                    format!(
                        "__k::tflite::hybrid::conv(&{p}, {x}, {filter}, {scale}, {bias}, {out}, {scratch})"
                    )
                }
            }
            Kernel::HybridFullyConnected(p, scale) => {
                let filter = self.in_place(node, 1, "i8")?;
                let bias = self.float_bias(node, p.units, &mut items)?;
                let float::FullyConnected {
                    batches,
                    depth,
                    units,
                    act,
                } = p;
                format!(
                    "__k::tflite::hybrid::fully_connected(&__k::tflite::float::FullyConnected {{ batches: {batches}, depth: {depth}, units: {units}, act: [{}, {}] }}, {x}, {filter}, {}, {bias}, {out}, {scratch})",
                    f32_literal(act[0]),
                    f32_literal(act[1]),
                    f32_literal(*scale)
                )
            }
            Kernel::FloatFullyConnected(p) => {
                let filter = self.in_place(node, 1, "f32")?;
                let bias = self.float_bias(node, p.units, &mut items)?;
                let float::FullyConnected {
                    batches,
                    depth,
                    units,
                    act,
                } = p;
                format!(
                    "__k::tflite::float::fully_connected(&__k::tflite::float::FullyConnected {{ batches: {batches}, depth: {depth}, units: {units}, act: [{}, {}] }}, {x}, {filter}, {bias}, {out})",
                    f32_literal(act[0]),
                    f32_literal(act[1])
                )
            }
        };
        Some((items, call))
    }
}
