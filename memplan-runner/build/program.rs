//! The build script's work: import the ONNX file, check it against the kernels, plan its
//! activations, and write the network as Rust source.
//!
//! The program is straight-line code: per op, one block that takes the op's views from the arena
//! (`arena.op_<name>()`, whose fields are named after its tensors; an in-place pair is one `&mut`
//! field named after the output), builds the kernel's input and output lists with the static
//! shapes written in as constants, and calls `kernels::run`. Weights come from a table decoded
//! once at start. The same network as tables (`TENSORS`, `WEIGHTS`, `STEPS`) drives the `--heap`
//! run, which gives every tensor its own buffer.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use memplan_core::model_file::Layout;
use memplan_core::{DType, lower_bound};
use memplan_onnx::{AttrValue, ImportOptions, OpInput, WeightValue};

use crate::supported;

/// What the build script writes.
pub(crate) struct Built {
    /// The arena module.
    pub(crate) plan: String,
    /// The program and its tables.
    pub(crate) program: String,
    /// The weights' bytes, concatenated.
    pub(crate) weights: Vec<u8>,
    /// Files besides the model that the build read (external weight data).
    pub(crate) rerun_files: Vec<PathBuf>,
}

/// The kernels' name for a dtype, or why the runner cannot hold it.
fn kernel_dtype(dtype: DType) -> Result<&'static str, String> {
    match dtype {
        DType::F32 => Ok("F32"),
        DType::I64 => Ok("I64"),
        DType::I32 => Ok("I32"),
        DType::Bool => Ok("Bool"),
        other => Err(format!(
            "element type {} is not supported by the runner's kernels (float32, int64, int32, bool)",
            other.name()
        )),
    }
}

fn shape_literal(shape: &[u64]) -> String {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    format!("&[{}]", dims.join(", "))
}

fn attr_literal(value: &AttrValue) -> String {
    let floats = |v: &[f32]| {
        v.iter()
            .map(|f| float_literal(*f))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match value {
        AttrValue::Int(i) => format!("Attr::Int({i})"),
        AttrValue::Float(f) => format!("Attr::Float({})", float_literal(*f)),
        AttrValue::Str(s) => format!("Attr::Str(String::from({s:?}))"),
        AttrValue::Ints(v) => format!("Attr::Ints(vec!{v:?})"),
        AttrValue::Floats(v) => format!("Attr::Floats(vec![{}])", floats(v)),
        AttrValue::Strs(v) => {
            let items: Vec<String> = v.iter().map(|s| format!("String::from({s:?})")).collect();
            format!("Attr::Strs(vec![{}])", items.join(", "))
        }
    }
}

/// An f32 as a Rust expression that evaluates to exactly its bits.
fn float_literal(f: f32) -> String {
    format!("f32::from_bits({:#010x})", f.to_bits())
}

/// A one-element tensor attribute (`ConstantOfShape`'s `value`) as the kernels take it.
fn tensor_attr(value: &WeightValue) -> Result<AttrValue, String> {
    let bytes = value.load()?;
    if value.elements() != 1 {
        return Err(format!(
            "it has {} elements; the kernels take one-element tensor attributes only",
            value.elements()
        ));
    }
    Ok(match value.dtype {
        DType::F32 => AttrValue::Float(f32::from_le_bytes(bytes[..4].try_into().unwrap())),
        DType::I64 => AttrValue::Int(i64::from_le_bytes(bytes[..8].try_into().unwrap())),
        DType::I32 => AttrValue::Int(i64::from(i32::from_le_bytes(
            bytes[..4].try_into().unwrap(),
        ))),
        DType::Bool | DType::U8 => AttrValue::Int(i64::from(bytes[0])),
        other => {
            return Err(format!(
                "its element type {} is not supported",
                other.name()
            ));
        }
    })
}

/// Imports, checks and plans the model at `path`; `inplace` lets ops write over their inputs.
pub(crate) fn build(path: &Path, inplace: bool) -> Result<Built, String> {
    let options = ImportOptions {
        name: Some("net".to_owned()),
        inplace,
        ..ImportOptions::default()
    };
    let imported = memplan_onnx::import_file(path, &options).map_err(|e| e.message)?;
    let model = &imported.model;
    let graph = &imported.graph;
    for note in &imported.notes {
        if note.starts_with("graph output") {
            return Err(format!(
                "{note}\n  = help: the runner writes the graph's first output, which must be computed at run time"
            ));
        }
    }

    // 1. Every node is one the kernels implement, with attributes they implement.
    let mut op_attrs: Vec<Vec<(String, AttrValue)>> = Vec::with_capacity(graph.ops.len());
    for (k, op) in graph.ops.iter().enumerate() {
        let label = if op.node.is_empty() {
            format!("node {k} ({})", op.op_type)
        } else {
            format!("node `{}` ({})", op.node, op.op_type)
        };
        if !(op.domain.is_empty() || op.domain == "ai.onnx") {
            return Err(format!(
                "{label}: operator `{}` of domain `{}` is not supported\n  = help: the runner implements the default ONNX domain only; export without custom operators",
                op.op_type, op.domain
            ));
        }
        if op.outputs.contains(&None) {
            return Err(format!(
                "{label}: an optional output is left out before one that is used\n  = help: the runner passes outputs by position; export the model with every output up to the last one used"
            ));
        }
        if let Some(name) = op.other_attrs.first() {
            return Err(format!(
                "{label}: attribute `{name}` is graph- or type-valued, which the runner does not support"
            ));
        }
        let mut attrs = op.attrs.clone();
        for (name, value) in &op.tensor_attrs {
            let value = value
                .as_ref()
                .map_err(Clone::clone)
                .and_then(tensor_attr)
                .map_err(|why| format!("{label}: tensor attribute `{name}`: {why}"))?;
            attrs.push((name.clone(), value));
        }
        let ints: Vec<(&str, i64)> = attrs
            .iter()
            .filter_map(|(n, v)| match v {
                AttrValue::Int(i) => Some((n.as_str(), *i)),
                _ => None,
            })
            .collect();
        let strs: Vec<(&str, &str)> = attrs
            .iter()
            .filter_map(|(n, v)| match v {
                AttrValue::Str(s) => Some((n.as_str(), s.as_str())),
                _ => None,
            })
            .collect();
        supported::check_node(&op.op_type, &ints, &strs).map_err(|why| {
            format!(
                "{label}: {why}\n  = help: the runner's kernels implement: {}",
                supported::SUPPORTED_OPS.join(" ")
            )
        })?;
        op_attrs.push(attrs);
    }

    // 2. Tensors the kernels can hold; one graph input, one output used.
    let mut tensor_dtypes = Vec::with_capacity(model.tensors.len());
    for tensor in &model.tensors {
        let Layout::Typed { dtype, .. } = &tensor.layout else {
            return Err(format!("tensor `{}` is untyped", tensor.name));
        };
        let onnx = tensor.source.as_deref().unwrap_or(&tensor.name);
        tensor_dtypes.push(kernel_dtype(*dtype).map_err(|why| format!("tensor `{onnx}`: {why}"))?);
    }
    let input = match model.inputs.as_slice() {
        [input] => *input,
        [] => return Err("the graph has no input that is not a weight".to_owned()),
        more => {
            let names: Vec<&str> = more
                .iter()
                .map(|&t| model.tensors[t].name.as_str())
                .collect();
            return Err(format!(
                "the graph has {} inputs ({}); the runner feeds one input file\n  = help: fold the other inputs into constants (for example with onnxsim) or export with one input",
                more.len(),
                names.join(", ")
            ));
        }
    };
    let Some(&output) = model.outputs.first() else {
        return Err("the graph has no output computed at run time".to_owned());
    };

    // 3. Weights, read and laid out one after the other.
    let mut weights = Vec::new();
    let mut weight_rows = String::new();
    let mut rerun_files = Vec::new();
    for weight in &graph.weights {
        let fail = |why: &str| {
            format!(
                "weight `{}`: {why}\n  = help: check that the ONNX file (and its external data) is complete; export it again",
                weight.source
            )
        };
        let value = weight.value.as_ref().map_err(|why| fail(why))?;
        if let memplan_onnx::WeightData::External { path, .. } = &value.data {
            rerun_files.push(path.clone());
        }
        let dtype = kernel_dtype(value.dtype).map_err(|why| fail(&why))?;
        let bytes = crate::fold::load(value).map_err(|why| fail(&why))?;
        // Each weight starts at a multiple of 8 in the blob.
        while weights.len() % 8 != 0 {
            weights.push(0);
        }
        let _ = writeln!(
            weight_rows,
            "    WeightInfo {{ name: {:?}, dtype: DType::{dtype}, shape: {}, offset: {}, bytes: {} }},",
            weight.source,
            shape_literal(&value.shape),
            weights.len(),
            bytes.len()
        );
        weights.extend_from_slice(&bytes);
    }

    // 4. The plan.
    let plan = memplan_core::codegen::plan_model(model).map_err(|e| e.to_string())?;
    let plan_code = memplan_core::codegen::generate(model, &plan).to_string();
    let arena_size = plan.total_arena_size();
    let bound = lower_bound(&model.to_problem());
    let sum: u64 = model.tensors.iter().map(|t| t.size).sum();

    // 5. The program.
    let mut p = String::new();
    let _ = writeln!(
        p,
        "// Generated by memplan-runner's build.rs from {path:?}: do not edit.\n"
    );
    let _ = writeln!(p, "/// The ONNX file this binary runs.");
    let _ = writeln!(
        p,
        "pub const MODEL: &str = {:?};",
        path.display().to_string()
    );
    let _ = writeln!(p, "/// Whether ops may write outputs over their inputs.");
    let _ = writeln!(p, "pub const INPLACE: bool = {inplace};");
    let _ = writeln!(p, "/// Bytes of the planned arena.");
    let _ = writeln!(p, "pub const ARENA_BYTES: u64 = {arena_size};");
    let _ = writeln!(
        p,
        "/// Most bytes live at one step when no tensor shares another's memory."
    );
    let _ = writeln!(p, "pub const LOWER_BOUND: u64 = {bound};");
    let _ = writeln!(
        p,
        "/// Bytes of all activations together (no reuse at all)."
    );
    let _ = writeln!(p, "pub const SUM_OF_SIZES: u64 = {sum};");
    let _ = writeln!(p, "/// In-place pairs the plan uses.");
    let _ = writeln!(
        p,
        "pub const INPLACE_PAIRS: usize = {};",
        model.aliases.len()
    );
    let _ = writeln!(
        p,
        "/// The graph input the input file fills (index into `TENSORS`)."
    );
    let _ = writeln!(p, "pub const INPUT: usize = {input};");
    let _ = writeln!(p, "/// The graph output written to the output file.");
    let _ = writeln!(p, "pub const OUTPUT: usize = {output};");

    let _ = writeln!(p, "/// Every activation tensor, in the model's order.");
    let _ = writeln!(p, "pub static TENSORS: &[TensorInfo] = &[");
    for (t, tensor) in model.tensors.iter().enumerate() {
        let _ = writeln!(
            p,
            "    TensorInfo {{ name: {:?}, dtype: DType::{}, shape: {} }},",
            tensor.source.as_deref().unwrap_or(&tensor.name),
            tensor_dtypes[t],
            shape_literal(&graph.tensor_shapes[t])
        );
    }
    let _ = writeln!(p, "];");
    let _ = writeln!(
        p,
        "/// Every weight; its bytes are `WEIGHT_BYTES[offset..offset + bytes]`."
    );
    let _ = writeln!(p, "pub static WEIGHTS: &[WeightInfo] = &[\n{weight_rows}];");
    let _ = writeln!(p, "/// The weights' little-endian bytes.");
    let _ = writeln!(
        p,
        "pub static WEIGHT_BYTES: &[u8] = include_bytes!(concat!(env!(\"OUT_DIR\"), \"/weights.bin\"));"
    );
    let input_refs = |k: usize| -> String {
        let refs: Vec<String> = graph.ops[k]
            .inputs
            .iter()
            .map(|input| match input {
                OpInput::Absent => "Ref::Absent".to_owned(),
                OpInput::Tensor(t) => format!("Ref::Tensor({t})"),
                OpInput::Weight(w) => format!("Ref::Weight({w})"),
            })
            .collect();
        refs.join(", ")
    };
    let _ = writeln!(p, "/// The ops in execution order.");
    let _ = writeln!(p, "pub static STEPS: &[Step] = &[");
    for (k, op) in model.ops.iter().enumerate() {
        let outputs: Vec<String> = op.outputs.iter().map(usize::to_string).collect();
        let _ = writeln!(
            p,
            "    Step {{ name: {:?}, op_type: {:?}, inputs: &[{}], outputs: &[{}] }},",
            op.source.as_deref().unwrap_or(&op.name),
            graph.ops[k].op_type,
            input_refs(k),
            outputs.join(", ")
        );
    }
    let _ = writeln!(p, "];");

    let _ = writeln!(p, "/// Each op's attributes, in `STEPS` order.");
    let _ = writeln!(p, "pub fn attrs() -> Vec<Attrs> {{\n    vec![");
    for attrs in &op_attrs {
        let items: Vec<String> = attrs
            .iter()
            .map(|(n, v)| format!("(String::from({n:?}), {})", attr_literal(v)))
            .collect();
        let _ = writeln!(p, "        Attrs::new(vec![{}]),", items.join(", "));
    }
    let _ = writeln!(p, "    ]\n}}");

    let view = |t: usize, field: &str, mutable: bool| {
        let kind = if mutable { "DataMut" } else { "Data" };
        format!("{kind}::{}({field})", tensor_dtypes[t])
    };
    let in_name = &model.tensors[input].name;
    let out_name = &model.tensors[output].name;
    let _ = writeln!(p, "/// The graph input's view in the arena.");
    let _ = writeln!(
        p,
        "pub fn input_view(arena: &mut net::Arena) -> DataMut<'_> {{ {} }}",
        view(input, &format!("arena.{in_name}()"), true)
    );
    let _ = writeln!(p, "/// The graph output's view in the arena.");
    let _ = writeln!(
        p,
        "pub fn output_view(arena: &mut net::Arena) -> Data<'_> {{ {} }}",
        view(output, &format!("arena.{out_name}()"), false)
    );

    let _ = writeln!(
        p,
        "/// Runs every op on its views of `arena`: the graph input must be filled, the graph\n/// output is read afterwards."
    );
    let _ = writeln!(
        p,
        "pub fn run_arena(arena: &mut net::Arena, weights: &Weights, attrs: &[Attrs]) -> Result<(), StepError> {{"
    );
    for (k, op) in model.ops.iter().enumerate() {
        let pairs: Vec<_> = model.aliases.iter().filter(|a| a.op == k).collect();
        let mut inputs = Vec::new();
        for input in &graph.ops[k].inputs {
            inputs.push(match *input {
                OpInput::Absent => "Input::Absent".to_owned(),
                OpInput::Weight(w) => format!("weights.input({w})"),
                OpInput::Tensor(t) => {
                    let shape = shape_literal(&graph.tensor_shapes[t]);
                    match pairs.iter().find(|a| a.input == t) {
                        Some(pair) => {
                            let o = op
                                .outputs
                                .iter()
                                .position(|&x| x == pair.output)
                                .expect("an in-place pair's output is the op's");
                            format!("Input::InPlace {{ output: {o}, shape: {shape} }}")
                        }
                        None => format!(
                            "Input::Value {{ shape: {shape}, data: {} }}",
                            view(t, &format!("v.{}", model.tensors[t].name), false)
                        ),
                    }
                }
            });
        }
        let outputs: Vec<String> = op
            .outputs
            .iter()
            .map(|&t| {
                format!(
                    "Output {{ shape: {}, data: {} }}",
                    shape_literal(&graph.tensor_shapes[t]),
                    view(t, &format!("v.{}", model.tensors[t].name), true)
                )
            })
            .collect();
        let _ = writeln!(
            p,
            "    {{\n        let v = arena.op_{}();\n        let inputs = [{}];\n        let mut outputs = [{}];\n        kernels::run({:?}, &attrs[{k}], &inputs, &mut outputs).map_err(|e| StepError::new({k}, e))?;\n    }}",
            op.name,
            inputs.join(", "),
            outputs.join(", "),
            graph.ops[k].op_type
        );
    }
    let _ = writeln!(p, "    Ok(())\n}}");

    Ok(Built {
        plan: plan_code,
        program: p,
        weights,
        rerun_files,
    })
}
