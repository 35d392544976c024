//! The generated Rust: the arena module `memplan!` would generate for the planned model, and
//! inside it the network — its constants read in place from one aligned blob in `.rodata`, its
//! tables ([`memplan_kernels::program`]) and `run`, straight-line code that calls one kernel per
//! node on views cut from the arena.

use std::fmt::Write as _;

use crate::graph::{AttrValue, OpInput};
use memplan_core::DType;
use memplan_core::model_file::Layout;
use proc_macro2::TokenStream;

use crate::graph::{Prepared, kernel_dtype};
use crate::specialise;

/// Alignment of the weight blob and of every constant's offset in it.
pub(crate) const CONSTANT_ALIGN: usize = 16;

/// The constants laid out one after the other, each at a multiple of [`CONSTANT_ALIGN`]: the
/// blob and each constant's offset.
pub(crate) fn blob(prepared: &Prepared) -> (Vec<u8>, Vec<usize>) {
    let mut blob = Vec::new();
    let mut offsets = Vec::with_capacity(prepared.constants.len());
    for constant in &prepared.constants {
        while blob.len() % CONSTANT_ALIGN != 0 {
            blob.push(0);
        }
        offsets.push(blob.len());
        blob.extend_from_slice(&constant.bytes);
    }
    (blob, offsets)
}

fn shape_literal(shape: &[u64]) -> String {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    format!("&[{}]", dims.join(", "))
}

/// An f32 as a Rust expression that evaluates to exactly its bits.
fn float_literal(f: f32) -> String {
    format!("f32::from_bits({:#010x})", f.to_bits())
}

/// An attribute as an `Attr` expression, the type named through `path` (`""` or `"__k::"`).
fn attr_literal(value: &AttrValue, path: &str) -> String {
    match value {
        AttrValue::Int(i) => format!("{path}Attr::Int({i})"),
        AttrValue::Float(f) => format!("{path}Attr::Float({})", float_literal(*f)),
        AttrValue::Str(s) => format!("{path}Attr::Str({s:?})"),
        AttrValue::Ints(v) => format!("{path}Attr::Ints(&{v:?})"),
        AttrValue::Floats(v) => {
            let items: Vec<String> = v.iter().map(|f| float_literal(*f)).collect();
            format!("{path}Attr::Floats(&[{}])", items.join(", "))
        }
        AttrValue::Strs(v) => format!("{path}Attr::Strs(&{v:?})"),
    }
}

fn dtype_of(prepared: &Prepared, t: usize) -> DType {
    match &prepared.model.tensors[t].layout {
        Layout::Typed { dtype, .. } => *dtype,
        Layout::Bytes => DType::U8,
    }
}

fn variant(dtype: DType) -> &'static str {
    kernel_dtype(dtype).unwrap_or("F32")
}

/// Where the weight blob is, as the argument of `include_bytes!`.
pub(crate) enum BlobPath {
    /// `concat!(env!("OUT_DIR"), "/<file>")`: the same source on every machine.
    OutDir(String),
    /// An absolute path (a custom output directory).
    Absolute(String),
}

/// The items added inside the network's module.
pub(crate) fn network_items(
    prepared: &Prepared,
    offsets: &[usize],
    blob_len: usize,
    blob_path: &BlobPath,
    source: &str,
) -> String {
    let model = &prepared.model;
    let name = &model.name;
    let mut s = String::new();
    let include = match blob_path {
        BlobPath::OutDir(file) => format!("concat!(env!(\"OUT_DIR\"), {:?})", format!("/{file}")),
        BlobPath::Absolute(path) => format!("{path:?}"),
    };
    let _ = writeln!(
        s,
        "#[cfg(target_endian = \"big\")]\n::core::compile_error!(\"memplan-build: network `{name}` reads its weights in place as little-endian values; build it for a little-endian target\");\n\n\
         /// Bytes aligned to {CONSTANT_ALIGN}, so the constants in them can be read in place.\n\
         #[repr(C, align({CONSTANT_ALIGN}))]\nstruct Aligned<T>(T);\n\n\
         /// Every constant of the network, little-endian, each at a multiple of {CONSTANT_ALIGN} bytes: in\n\
         /// `.rodata` (flash on a microcontroller), read in place, never copied.\n\
         static CONSTANT_BYTES: Aligned<[u8; {blob_len}]> = Aligned(*include_bytes!({include}));\n"
    );

    // Tables.
    let _ = writeln!(
        s,
        "/// The network as tables: values, constants and nodes (for interpreters; `run` does not\n\
         /// read them).\n#[allow(clippy::all)]\npub mod network {{\n\
         use ::memplan::kernels::program::{{Constant, Node, Operand, Value}};\n\
         #[allow(unused_imports)] // `Attr` only where a node has attributes\n\
         use ::memplan::kernels::{{Attr, Attrs, DType}};\n\n\
         /// The ONNX file the network was generated from.\npub const SOURCE: &str = {source:?};\n\
         /// Most bytes live at one step with no tensor sharing another's memory (in-place pairs\n\
         /// counted twice): what a planner without in-place aliasing cannot go below.\n\
         pub const BOUND_WITHOUT_SHARING: usize = {};\n\
         /// Bytes of all activations together (no reuse at all).\npub const SUM_OF_SIZES: usize = {};\n\
         /// In-place pairs the plan uses.\npub const INPLACE_PAIRS: usize = {};\n\
         /// Whether ops may write their output over an input (the `inplace` option).\npub const INPLACE: bool = {};\n\
         /// The graph inputs, in graph order (indices into [`VALUES`]).\npub const INPUTS: &[usize] = &{:?};\n\
         /// The graph outputs, in graph order (indices into [`VALUES`]).\npub const OUTPUTS: &[usize] = &{:?};\n\
         /// Nodes of the file the build folded or fused into the node before them\n\
         /// (BatchNormalization into Conv, a constant Add into MatMul, activations).\npub const FUSED_NODES: usize = {};\n\
         /// Constants stored packed in the panels the matrix product reads.\npub const PACKED_CONSTANTS: usize = {};\n\
         /// Nodes whose kernel writes its output over its own input, chosen by the build to meet\n\
         /// its RAM budget (`Network::ram_budget`): the same bytes for no extra arithmetic (a\n\
         /// depthwise convolution copies its output through a ring of a few rows in the arena).\n\
         pub const WRITTEN_IN_PLACE: &[&str] = &{:?};\n\
         /// Chains of nodes run band by band to meet the RAM budget, as `(nodes, calls)`: each\n\
         /// tensor between them held as the few rows the next node still reads, every row computed\n\
         /// once (no extra multiply-accumulates; the extra work is one kernel call per band of\n\
         /// each node, `calls` in all, and the moves of kept rows).\n\
         pub const BAND_BY_BAND: &[(&str, usize)] = &{:?};\n",
        prepared.bound_without_sharing,
        prepared.sum_of_sizes,
        model.aliases.len(),
        model.inplace,
        model.inputs,
        model.outputs,
        prepared.fused.batch_norms + prepared.fused.biases + prepared.fused.activations,
        prepared.fused.packed,
        prepared
            .nodes
            .iter()
            .filter(|n| n.overwrites)
            .map(|n| n.label.as_str())
            .collect::<Vec<_>>(),
        prepared
            .nodes
            .iter()
            .filter_map(|n| Some((n.label.as_str(), n.stage.as_ref()?.steps.len())))
            .collect::<Vec<_>>(),
    );
    let _ = writeln!(
        s,
        "/// Every value computed at run time, in the model's order (each node's scratch is planned\n\
         /// after them, and not listed).\n\
         pub static VALUES: [Value; {}] = [",
        prepared.values
    );
    for (t, tensor) in model.tensors.iter().enumerate().take(prepared.values) {
        let _ = writeln!(
            s,
            "Value {{ name: {:?}, onnx: {:?}, dtype: DType::{}, shape: {} }},",
            tensor.name,
            tensor.source.as_deref().unwrap_or(&tensor.name),
            variant(dtype_of(prepared, t)),
            shape_literal(&prepared.shapes[t])
        );
    }
    let _ = writeln!(s, "];");
    let _ = writeln!(
        s,
        "/// Every constant; its bytes are `constant_bytes()[offset..offset + bytes]`.\n\
         pub static CONSTANTS: [Constant; {}] = [",
        prepared.constants.len()
    );
    for (c, constant) in prepared.constants.iter().enumerate() {
        let _ = writeln!(
            s,
            "Constant {{ onnx: {:?}, dtype: DType::{}, shape: {}, offset: {}, bytes: {} }},",
            constant.onnx,
            variant(constant.dtype),
            shape_literal(&constant.shape),
            offsets[c],
            constant.bytes.len()
        );
    }
    let _ = writeln!(s, "];");
    let _ = writeln!(
        s,
        "/// The nodes in execution order.\npub static NODES: [Node; {}] = [",
        prepared.table_nodes.len()
    );
    for node in &prepared.table_nodes {
        let attrs: Vec<String> = node
            .attrs
            .iter()
            .map(|(n, v)| format!("({n:?}, {})", attr_literal(v, "")))
            .collect();
        let inputs: Vec<String> = node
            .inputs
            .iter()
            .map(|input| match input {
                OpInput::Absent => "Operand::Absent".to_owned(),
                OpInput::Tensor(t) => format!("Operand::Value({t})"),
                OpInput::Weight(w) => format!("Operand::Constant({w})"),
            })
            .collect();
        let _ = writeln!(
            s,
            "Node {{ name: {:?}, op_type: {:?}, attrs: Attrs::new(&[{}]), inputs: &[{}], outputs: &{:?}, scratch: {} }},",
            node.label,
            node.op_type,
            attrs.join(", "),
            inputs.join(", "),
            node.outputs,
            node.scratch.map_or(0, |(_, words)| words)
        );
    }
    let _ = writeln!(s, "];");
    let _ = writeln!(
        s,
        "/// The constants' bytes (aligned to {CONSTANT_ALIGN}).\n\
         pub fn constant_bytes() -> &'static [u8] {{\n&super::CONSTANT_BYTES.0\n}}\n}}\n"
    );

    s.push_str(&run_fn(prepared, offsets));
    s.push_str(&run_dyn_fn(prepared));
    s
}

/// What `run` takes the arena as: `Arena`, or `Arenas<'_>` with pools.
fn arena_type(prepared: &Prepared) -> &'static str {
    if prepared.model.pools.is_empty() {
        "Arena"
    } else {
        "Arenas<'_>"
    }
}

/// Constant `w` as a kernel's `Input`, read in place from the blob.
fn constant_input(prepared: &Prepared, offsets: &[usize], w: usize) -> String {
    let c = &prepared.constants[w];
    let rust = match c.dtype {
        DType::Bool => "u8",
        other => other.rust_type(),
    };
    format!(
        "__k::Input::Value {{ shape: {}, data: __k::Data::{}(__k::program::constant::<{rust}>(__blob, {}, {}).map_err(__e)?) }}",
        shape_literal(&c.shape),
        variant(c.dtype),
        offsets[w],
        c.shape.iter().product::<u64>()
    )
}

/// The attributes of `node` as a static `__ATTRS` beside its call.
fn attrs_static(node: &crate::graph::Node) -> String {
    let attrs: Vec<String> = node
        .attrs
        .iter()
        .map(|(n, v)| format!("({n:?}, {})", attr_literal(v, "__k::")))
        .collect();
    format!(
        "static __ATTRS: __k::Attrs<'static> = __k::Attrs::new(&[{}]);",
        attrs.join(", ")
    )
}

/// `run`: straight-line code, one block per node.
fn run_fn(prepared: &Prepared, offsets: &[usize]) -> String {
    let model = &prepared.model;
    let mut s = String::new();
    let external = |t: usize| model.tensors[t].memory.external;
    let elem = |t: usize| model.tensors[t].rust_type();
    // The arena parameter's name: `arena`, unless a graph input or output has that name.
    let io_names = || {
        model
            .inputs
            .iter()
            .chain(&model.outputs)
            .map(|&t| &model.tensors[t].name)
    };
    let arena = if io_names().any(|n| n == "arena") {
        "__arena"
    } else {
        "arena"
    };
    let mut params = Vec::new();
    for &t in &model.inputs {
        params.push(format!(
            "{}: &[{}; len::{}]",
            model.tensors[t].name,
            elem(t),
            model.tensors[t].name
        ));
    }
    for &t in &model.outputs {
        params.push(format!(
            "{}: &mut [{}; len::{}]",
            model.tensors[t].name,
            elem(t),
            model.tensors[t].name
        ));
    }
    let names = |list: &[usize]| -> String {
        let names: Vec<String> = list
            .iter()
            .map(|&t| format!("`{}`", model.tensors[t].name))
            .collect();
        names.join(", ")
    };
    let _ = writeln!(
        s,
        "/// Runs the network once: reads the graph inputs ({}), writes the graph outputs ({}),\n\
         /// every other value in `arena`. Allocates nothing; the constants are read in place.\n\
         ///\n/// # Errors\n/// A kernel that refuses its operands, which the build's checks rule out.\n\
         #[allow(unused_variables, clippy::too_many_arguments)]\n\
         pub fn run({arena}: &mut {}, {}) -> ::core::result::Result<(), ::memplan::kernels::program::RunError> {{\n\
         use ::memplan::kernels as __k;\n\
         let __blob: &'static [u8] = &CONSTANT_BYTES.0;",
        names(&model.inputs),
        names(&model.outputs),
        arena_type(prepared),
        params.join(", ")
    );
    if !external(model.inputs[0]) {
        for &t in &model.inputs {
            let name = &model.tensors[t].name;
            let _ = writeln!(
                s,
                "for (__d, __s) in {arena}.{name}().iter_mut().zip({name}.iter()) {{ *__d = *__s; }}"
            );
        }
    }
    let operands = specialise::operands(model, &prepared.shapes, &prepared.constants);
    let call = specialise::Call {
        constants: &prepared.constants,
        offsets,
    };
    for (k, op) in model.ops.iter().enumerate() {
        let node = &prepared.nodes[k];
        let pairs: Vec<_> = model.aliases.iter().filter(|a| a.op == k).collect();
        // The op view's parameters: its external tensors, in field order (as the codegen lists
        // them: distinct tensors of inputs, outputs, scratch).
        let mut seen = Vec::new();
        let mut args = Vec::new();
        let mut writes = std::collections::BTreeSet::new();
        for &t in &op.outputs {
            writes.insert(t);
        }
        for &t in op.inputs.iter().chain(&op.outputs).chain(&op.scratch) {
            if seen.contains(&t) || pairs.iter().any(|a| a.input == t) {
                continue;
            }
            seen.push(t);
            if external(t) {
                let name = &model.tensors[t].name;
                args.push(if writes.contains(&t) {
                    format!("&mut *{name}")
                } else {
                    format!("&*{name}")
                });
            }
        }
        let label = &node.label;
        // A node with an in-place pair runs through the general path (`Input::InPlace`),
        // unless its specialised kernel is the one writing in place.
        let kernel =
            specialise::plan(node, &operands).filter(|_| pairs.is_empty() || node.overwrites);
        let how = match (&kernel, specialise::tflite_function(&node.op_type)) {
            (Some(_), _) if node.overwrites => ", specialised, written over its input",
            (Some(_), _) => ", specialised",
            (None, Some(_)) => ", direct",
            (None, None) => "",
        };
        let _ = writeln!(
            s,
            "// node {k}: `{label}` ({}{how})\n{{\nlet __v = {arena}.op_{}({});\nlet __e = |e| __k::program::RunError::new({k}, {label:?}, e);",
            node.op_type,
            op.name,
            args.join(", ")
        );
        let view = |t: usize| format!("__v.{}", model.tensors[t].name);
        let scratch = match node.scratch {
            Some((t, _)) => view(t),
            None => "&mut []".to_owned(),
        };
        if let Some(stage) = &node.stage {
            let body = if stage.nodes.iter().all(crate::patches::nchw) {
                nchw_stage_body(prepared, offsets, stage, &view, &scratch)
            } else {
                stage_body(prepared, &call, &operands, stage, &view, &scratch)
            }
                .unwrap_or_else(|| format!(
                    "::core::compile_error!(\"memplan-build: the band loop of `{label}` could not be generated; please report this\");"
                ));
            let _ = writeln!(s, "{body}\n}}");
            continue;
        }
        if let Some(kernel) = &kernel
            && let Some(statement) = call.statement(node, kernel, &view, &scratch)
        {
            let _ = writeln!(s, "{statement}\n}}");
            continue;
        }
        if node.overwrites && kernel.is_some() {
            // `ram_budget::candidates` chose only nodes whose statement it could write (a node
            // with no specialised kernel, an ONNX depthwise Conv, runs as any in-place pair).
            let _ = writeln!(
                s,
                "::core::compile_error!(\"memplan-build: node `{label}` was to be written in place but its kernel call could not be generated; please report this\");\n}}"
            );
            continue;
        }
        let mut inputs = Vec::new();
        for input in &node.inputs {
            inputs.push(match *input {
                OpInput::Absent => "__k::Input::Absent".to_owned(),
                OpInput::Weight(w) => constant_input(prepared, offsets, w),
                OpInput::Tensor(t) => {
                    let shape = shape_literal(&prepared.shapes[t]);
                    match pairs.iter().find(|a| a.input == t) {
                        Some(pair) => {
                            let o = node
                                .outputs
                                .iter()
                                .position(|&x| x == pair.output)
                                .unwrap_or(0);
                            format!("__k::Input::InPlace {{ output: {o}, shape: {shape} }}")
                        }
                        None => format!(
                            "__k::Input::Value {{ shape: {shape}, data: __k::Data::{}(__v.{}) }}",
                            variant(dtype_of(prepared, t)),
                            model.tensors[t].name
                        ),
                    }
                }
            });
        }
        let outputs: Vec<String> = node
            .outputs
            .iter()
            .map(|&t| {
                format!(
                    "__k::Output {{ shape: {}, data: __k::DataMut::{}(__v.{}) }}",
                    shape_literal(&prepared.shapes[t]),
                    variant(dtype_of(prepared, t)),
                    model.tensors[t].name
                )
            })
            .collect();
        // The attributes as a constant table beside the call (`network::NODES` is for
        // interpreters; `run` does not read it).
        let run = match specialise::tflite_function(&node.op_type) {
            Some(function) => {
                format!("__k::tflite::op::{function}(&__ATTRS, &__inputs, &mut __outputs)")
            }
            // An ONNX operator: its own function (a family's takes the operator's name), so
            // only the kernels the network uses are linked.
            None => match memplan_kernels::op::function(&node.op_type) {
                Some((function, false)) => {
                    format!("__k::op::{function}(&__ATTRS, &__inputs, &mut __outputs, {scratch})")
                }
                Some((function, true)) => format!(
                    "__k::op::{function}({:?}, &__ATTRS, &__inputs, &mut __outputs)",
                    node.op_type
                ),
                None => format!(
                    "__k::run({:?}, &__ATTRS, &__inputs, &mut __outputs, {scratch})",
                    node.op_type
                ),
            },
        };
        let _ = writeln!(
            s,
            "{}\nlet __inputs = [{}];\nlet mut __outputs = [{}];\n{run}.map_err(__e)?;\n}}",
            attrs_static(node),
            inputs.join(", "),
            outputs.join(", "),
        );
    }
    if !external(model.outputs[0]) {
        for &t in &model.outputs {
            let name = &model.tensors[t].name;
            let _ = writeln!(
                s,
                "for (__d, __s) in {name}.iter_mut().zip({arena}.{name}().iter()) {{ *__d = *__s; }}"
            );
        }
    }
    let _ = writeln!(s, "Ok(())\n}}\n");
    s
}

/// The start of a stage's loop: a comment (`what`, the band buffers), its steps as a constant
/// table (`u16` fields when they fit), and the loop over them up to `match __node {`.
fn steps_header(prepared: &Prepared, stage: &crate::graph::Streamed, what: &str) -> String {
    let fields =
        |st: &crate::graph::Step| [st.node, st.drop, st.at, st.rows, st.from, st.take, st.above];
    let narrow = stage
        .steps
        .iter()
        .all(|st| fields(st).iter().all(|&v| u16::try_from(v).is_ok()));
    let (ty, widen) = if narrow {
        ("u16", "usize::from")
    } else {
        ("u32", "|v| v as usize")
    };
    let rows: Vec<String> = stage
        .steps
        .iter()
        .map(|st| format!("{:?}", fields(st)))
        .collect();
    let buffers: Vec<String> = stage
        .bands
        .iter()
        .zip(&stage.band_rows)
        .map(|(&t, rows)| format!("`{}` {rows} rows", prepared.model.tensors[t].name))
        .collect();
    format!(
        "// {what}; band buffers: {}\n// {} calls: [node, rows dropped, rows kept, rows computed, first input row, input rows, padding above]\n\
         static __STEPS: [[{ty}; 7]; {}] = [{}];\n\
         let __band = |what: &'static str| __e(__k::KernelError::new(what));\n\
         for __step in &__STEPS {{\n\
         let [__node, __drop, __at, __rows, __from, __take, __above] = __step.map({widen});\n\
         match __node {{\n",
        buffers.join(", "),
        stage.steps.len(),
        stage.steps.len(),
        rows.join(", ")
    )
}

/// The loop of a stage run band by band ([`crate::patches`]): its steps as a constant table,
/// each a call of one of its kernels on the rows of a band buffer (or of the stage's input)
/// into the rows of the next (or of its output), after moving the kept rows to the buffer's
/// front.
fn stage_body(
    prepared: &Prepared,
    call: &specialise::Call<'_>,
    operands: &specialise::Operands<'_>,
    stage: &crate::graph::Streamed,
    view: &dyn Fn(usize) -> String,
    scratch: &str,
) -> Option<String> {
    let row_bytes = |t: usize| -> Option<u64> {
        let shape = prepared.shapes.get(t)?;
        Some(shape.get(2)? * shape.get(3)?)
    };
    let n = stage.nodes.len();
    let mut s = steps_header(prepared, stage, &format!("{n} nodes band by band"));
    for (i, node) in stage.nodes.iter().enumerate() {
        let kernel = specialise::plan(node, operands)?;
        let literal = match &kernel {
            specialise::Kernel::Conv(p) => format!("__k::tflite::s8::{p:?}"),
            specialise::Kernel::Depthwise(p) => format!("__k::tflite::s8::{p:?}"),
            specialise::Kernel::FloatConv(p) | specialise::Kernel::FloatDepthwise(p) => {
                specialise::window_literal(p)
            }
            _ => return None,
        };
        let source = match i {
            0 => match node.inputs.first()? {
                &OpInput::Tensor(t) => t,
                _ => return None,
            },
            _ => stage.bands[i - 1],
        };
        let target = if i + 1 == n {
            *node.outputs.first()?
        } else {
            stage.bands[i]
        };
        let (sr, tr) = (row_bytes(source)?, row_bytes(target)?);
        let (items, run) =
            call.call(node, &kernel, Some("__p"), "__src", "__out", scratch, view)?;
        let _ = writeln!(
            s,
            "{i} => {{\n{items}let mut __p = {literal};\n\
             __p.input[0] = __take;\n__p.output[0] = __rows;\n__p.pad[0] = __above;\n\
             let __src = {}.get(__from * {sr}..(__from + __take) * {sr}).ok_or_else(|| __band(\"a band reads past its input\"))?;\n\
             let __dst = &mut *{};\n\
             let __kept = __drop * {tr}..(__drop + __at) * {tr};\n\
             if __dst.get(__kept.clone()).is_none() {{ return Err(__band(\"a band keeps rows past its buffer\")); }}\n\
             __dst.copy_within(__kept, 0);\n\
             let __out = __dst.get_mut(__at * {tr}..(__at + __rows) * {tr}).ok_or_else(|| __band(\"a band writes past its buffer\"))?;\n\
             {run}.map_err(__e)?;\n}}",
            view(source),
            view(target),
        );
    }
    let _ = writeln!(s, "_ => {{}}\n}}\n}}");
    Some(s)
}

/// The loop of a stage of ONNX Convs run band by band ([`crate::patches`]), as
/// [`stage_body`] writes one for NHWC rows: in NCHW a band is a run of rows per channel, so each
/// call reads its input's rows `__from..` of every channel (a band buffer's channels are its
/// rows apart, a whole tensor's a plane), moves each channel's kept rows to the front of that
/// channel's rows, and writes each channel's new rows after them
/// ([`memplan_kernels::conv_band`]).
fn nchw_stage_body(
    prepared: &Prepared,
    offsets: &[usize],
    stage: &crate::graph::Streamed,
    view: &dyn Fn(usize) -> String,
    scratch: &str,
) -> Option<String> {
    let n = stage.nodes.len();
    let mut s = steps_header(prepared, stage, &format!("{n} Convs band by band (NCHW)"));
    for (i, node) in stage.nodes.iter().enumerate() {
        let (&OpInput::Tensor(x), &[y]) = (node.inputs.first()?, node.outputs.as_slice()) else {
            return None;
        };
        let (xs, ys) = (prepared.shapes.get(x)?, prepared.shapes.get(y)?);
        let (&[1, c, h, w], &[1, m, oh, ow]) = (xs.as_slice(), ys.as_slice()) else {
            return None;
        };
        // Words from one channel's rows to the next's: a band buffer's rows, or a plane.
        let source = if i == 0 { x } else { stage.bands[i - 1] };
        let input_stride = match i {
            0 => h * w,
            _ => *stage.band_rows.get(i - 1)? as u64 * w,
        };
        let target = if i + 1 == n { y } else { stage.bands[i] };
        let output_stride = match stage.band_rows.get(i) {
            Some(&rows) if i + 1 < n => rows as u64 * ow,
            _ => oh * ow,
        };
        let mut inputs =
            vec!["__k::Input::Value { shape: &__xs, data: __k::Data::F32(__src) }".to_owned()];
        for input in &node.inputs[1..] {
            inputs.push(match *input {
                OpInput::Absent => "__k::Input::Absent".to_owned(),
                OpInput::Weight(wt) => constant_input(prepared, offsets, wt),
                OpInput::Tensor(_) => return None,
            });
        }
        let _ = writeln!(
            s,
            "{i} => {{\n{}\n\
             let __src = {}.get(__from * {w}..).ok_or_else(|| __band(\"a band reads past its input\"))?;\n\
             let __dst = &mut *{};\n\
             if __drop > 0 && __at > 0 {{\n\
             for __ch in 0..{m} {{\n\
             let __kept = __ch * {output_stride} + __drop * {ow}..__ch * {output_stride} + (__drop + __at) * {ow};\n\
             if __dst.get(__kept.clone()).is_none() {{ return Err(__band(\"a band keeps rows past its buffer\")); }}\n\
             __dst.copy_within(__kept, __ch * {output_stride});\n}}\n}}\n\
             let __out = __dst.get_mut(__at * {ow}..).ok_or_else(|| __band(\"a band writes past its buffer\"))?;\n\
             let __xs = [1, {c}, __take, {w}];\nlet __ys = [1, {m}, __rows, {ow}];\n\
             let __inputs = [{}];\n\
             let mut __outputs = [__k::Output {{ shape: &__ys, data: __k::DataMut::F32(__out) }}];\n\
             let __geometry = __k::ConvBand {{ input_rows: {h}, output_rows: {oh}, above: __above, input_stride: {input_stride}, output_stride: {output_stride} }};\n\
             __k::conv_band(&__ATTRS, &__inputs, &mut __outputs, {scratch}, __geometry).map_err(__e)?;\n}}",
            attrs_static(node),
            view(source),
            view(target),
            inputs.join(", "),
        );
    }
    let _ = writeln!(s, "_ => {{}}\n}}\n}}");
    Some(s)
}

/// `run_dyn`: [`run`] for callers that hold the inputs and outputs as slices (an interpreter or
/// a command line tool), checking their types and lengths.
fn run_dyn_fn(prepared: &Prepared) -> String {
    let model = &prepared.model;
    let mut s = String::new();
    let ins: Vec<String> = (0..model.inputs.len()).map(|i| format!("i{i}")).collect();
    let outs: Vec<String> = (0..model.outputs.len()).map(|o| format!("o{o}")).collect();
    let _ = writeln!(
        s,
        "/// [`run`] on inputs and outputs given as slices, in graph order; their types and lengths\n\
         /// are checked.\n///\n/// # Errors\n/// Wrong types, counts or lengths, or what [`run`] reports.\n\
         pub fn run_dyn(arena: &mut {}, inputs: &[::memplan::kernels::Data<'_>], outputs: &mut [::memplan::kernels::DataMut<'_>]) -> ::core::result::Result<(), ::memplan::kernels::program::RunError> {{\n\
         use ::memplan::kernels::{{Data, DataMut, KernelError}};\n\
         use ::memplan::kernels::program::RunError;\n\
         let bad = |what: &str| RunError::new(usize::MAX, \"run_dyn\", KernelError::new(what));\n\
         let [{}] = inputs else {{ return Err(bad(\"wrong number of inputs\")); }};\n\
         let [{}] = outputs else {{ return Err(bad(\"wrong number of outputs\")); }};",
        arena_type(prepared),
        ins.join(", "),
        outs.join(", ")
    );
    for (i, &t) in model.inputs.iter().enumerate() {
        let v = variant(dtype_of(prepared, t));
        let name = &model.tensors[t].name;
        let _ = writeln!(
            s,
            "let Data::{v}(i{i}) = *i{i} else {{ return Err(bad(\"input `{name}` has the wrong type\")); }};\n\
             let Ok(i{i}) = <&[_; len::{name}]>::try_from(i{i}) else {{ return Err(bad(\"input `{name}` has the wrong length\")); }};"
        );
    }
    for (o, &t) in model.outputs.iter().enumerate() {
        let v = variant(dtype_of(prepared, t));
        let name = &model.tensors[t].name;
        let _ = writeln!(
            s,
            "let DataMut::{v}(o{o}) = o{o} else {{ return Err(bad(\"output `{name}` has the wrong type\")); }};\n\
             let Ok(o{o}) = <&mut [_; len::{name}]>::try_from(&mut **o{o}) else {{ return Err(bad(\"output `{name}` has the wrong length\")); }};"
        );
    }
    let _ = writeln!(s, "run(arena, {}, {})\n}}", ins.join(", "), outs.join(", "));
    s
}

/// The arena module with `items` inside it, and its docs kept (`docs`) or cut to one line.
pub(crate) fn module(plan_tokens: TokenStream, items: &str, docs: bool) -> Result<String, String> {
    let extra: TokenStream = items.parse().map_err(|e| {
        format!("internal error: the generated network does not lex ({e}); please report this")
    })?;
    let tokens = memplan_core::codegen::append_to_module(plan_tokens, extra, docs).ok_or(
        "internal error: the generated arena module has an unexpected shape; please report this",
    )?;
    Ok(memplan_core::codegen::to_source(&tokens))
}
