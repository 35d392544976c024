//! From a [`Graph`] to a memplan model: its activations, operators and their lifetimes.

use super::*;

/// How to import.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// The model's name; default: the file name up to its first `.`, in snake_case.
    pub name: Option<String>,
    /// `[model] alignment` of the written model.
    pub alignment: u64,
    /// `[model] inplace`.
    pub inplace: bool,
}

impl Default for ImportOptions {
    fn default() -> Self {
        Self {
            name: None,
            alignment: DEFAULT_ALIGNMENT,
            inplace: true,
        }
    }
}

/// A TFLite model imported as a memplan model.
#[derive(Debug)]
pub struct Imported {
    /// The model file's text.
    pub toml: String,
    /// The activations and operators, parsed and checked by `memplan-core` (lifetimes derived).
    pub model: Model,
    /// Subgraph 0 as read.
    pub graph: Graph,
    /// Per TFLite tensor: its index among the model's tensors (`None` for a constant, or a
    /// tensor no operator uses).
    pub tensor_of: Vec<Option<usize>>,
    /// Per model tensor: its TFLite shape (`[]` for a scalar, which the model file writes as
    /// `[1]`).
    pub shapes: Vec<Vec<u64>>,
}

/// Reads and imports the TFLite file at `path`.
///
/// # Errors
/// A file that cannot be read, or what [`import`] refuses.
pub fn import_file(path: &Path, options: &ImportOptions) -> Result<Imported, Error> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).or_else(|e| {
        fail(format!(
            "cannot read `{shown}`: {e}\n  = help: check the path (it must name a .tflite file)"
        ))
    })?;
    import(&shown, "model.toml", &bytes, options)
}

/// Imports subgraph 0 of the TFLite model in `bytes` as a memplan model: its activations (the
/// tensors without constant data that an operator reads or writes, or that are graph inputs or
/// outputs), with dtype and shape, and one op per operator (`kind` is `tflite.<BUILTIN>`).
///
/// # Errors
/// What [`read`] refuses, an activation of a type memplan cannot plan, a graph output no
/// operator computes, a model that cannot be planned.
pub fn import(
    file: &str,
    toml_name: &str,
    bytes: &[u8],
    options: &ImportOptions,
) -> Result<Imported, Error> {
    let graph = read(file, bytes)?;
    let alignment = options.alignment;
    if !alignment.is_power_of_two() || alignment > memplan_core::model_file::MAX_ALIGNMENT {
        return fail(format!(
            "alignment {alignment} is not a power of two between 1 and {}\n  = help: pass `--alignment 16` (the default) or `--alignment 64`",
            memplan_core::model_file::MAX_ALIGNMENT
        ));
    }
    if graph.operators.is_empty() {
        return fail(format!(
            "`{file}`: subgraph 0 has no operators, so there is nothing to plan\n  = help: convert the model again"
        ));
    }
    // Activations: graph inputs first, then every operator's operands in execution order.
    let mut order: Vec<usize> = Vec::new();
    let mut seen = vec![false; graph.tensors.len()];
    let mut produced = vec![false; graph.tensors.len()];
    for &t in &graph.inputs {
        produced[t] = true;
    }
    let mut visit = |t: usize, order: &mut Vec<usize>| {
        if graph.tensors[t].data.is_none() && !seen[t] {
            seen[t] = true;
            order.push(t);
        }
    };
    for &t in &graph.inputs {
        visit(t, &mut order);
    }
    for op in &graph.operators {
        for &t in op.inputs.iter().flatten() {
            if graph.tensors[t].data.is_none() && !produced[t] {
                return fail(format!(
                    "`{file}`: {} reads `{}`, which is not a graph input, a constant, or the output of an earlier operator\n  = help: the file is corrupt or its operators are out of order; convert the model again",
                    op.label(),
                    graph.tensors[t].label()
                ));
            }
            visit(t, &mut order);
        }
        for &t in &op.outputs {
            if graph.tensors[t].data.is_some() {
                return fail(format!(
                    "`{file}`: {} writes `{}`, which has constant data\n  = help: the file is corrupt; convert the model again",
                    op.label(),
                    graph.tensors[t].label()
                ));
            }
            produced[t] = true;
            visit(t, &mut order);
        }
    }
    for &t in &graph.outputs {
        if !produced[t] {
            return fail(format!(
                "`{file}`: graph output `{}` is not computed by any operator\n  = help: memplan runs the graph's operators; a constant output has nothing to compute",
                graph.tensors[t].label()
            ));
        }
    }
    // The arenas' methods and the op views' locals (see `memplan_core`'s name check), as the
    // ONNX importer reserves them: a tensor named `views` becomes `views_2`.
    let mut names = UniqueNames::reserving(&["new", "views", "rest"]);
    let mut tensor_of = vec![None; graph.tensors.len()];
    let mut tensors = Vec::with_capacity(order.len());
    let mut shapes = Vec::with_capacity(order.len());
    for &t in &order {
        let info = &graph.tensors[t];
        let dtype = info.element.dtype().or_else(|kind| {
            fail(format!(
                "`{file}`: tensor `{}` has element type {kind}, which memplan does not plan\n  = help: supported: FLOAT32, FLOAT16, FLOAT64, INT8/16/32/64, UINT8/16/32/64, BOOL",
                info.label()
            ))
        })?;
        let mut shape: Vec<u64> = info.shape.iter().map(|&d| d as u64).collect();
        shapes.push(shape.clone());
        if shape.is_empty() {
            shape.push(1);
        }
        if shape.contains(&0) {
            return fail(format!(
                "`{file}`: tensor `{}` has shape {:?}, with no elements\n  = help: memplan plans tensors of at least one element",
                info.label(),
                info.shape
            ));
        }
        let size = shape
            .iter()
            .try_fold(dtype.size(), |acc, &d| acc.checked_mul(d))
            .filter(|&b| b <= memplan_core::model_file::MAX_TENSOR_BYTES);
        let Some(size) = size else {
            return fail(format!(
                "`{file}`: tensor `{}` is too large ({:?} of {dtype})\n  = help: memplan plans tensors below 2^48 bytes; check the shape, or convert the model with a smaller input shape",
                info.label(),
                info.shape
            ));
        };
        // TFLite names a fused tensor after every op fused into it, `;`-separated; the first
        // is the readable one (`functional_1/activation/Relu`). The full name stays `source`.
        let short = info.name.split(';').next().unwrap_or("");
        let base = if short.is_empty() {
            format!("tensor_{t}")
        } else {
            snake_case(short, "tensor")
        };
        let name = names.claim(&base);
        tensor_of[t] = Some(tensors.len());
        tensors.push(Tensor {
            source: (name != info.name).then(|| info.name.clone()),
            name,
            layout: Layout::Typed { dtype, shape },
            size,
            alignment: alignment.max(dtype.alignment()),
            lifetime: Lifetime::new(0, 1),
            location: Location::default(),
            memory: TensorMemory::default(),
        });
    }
    let mut op_names = UniqueNames::default();
    let mut ops = Vec::with_capacity(graph.operators.len());
    // Per model tensor: the last operator that listed it (an operator's inputs are listed once
    // each, in linear time however long the list).
    let mut listed_by = vec![usize::MAX; tensors.len()];
    for (k, op) in graph.operators.iter().enumerate() {
        let base = snake_case(&format!("{}_{}", op.name, op.index).to_lowercase(), "op");
        let mut name = op_names.claim(&base);
        while names.contains(&format!("op_{name}")) {
            name = op_names.claim(&base);
        }
        let mut inputs = Vec::new();
        for &t in op.inputs.iter().flatten() {
            if let Some(m) = tensor_of[t]
                && listed_by[m] != k
            {
                listed_by[m] = k;
                inputs.push(m);
            }
        }
        let outputs: Vec<usize> = op.outputs.iter().filter_map(|&t| tensor_of[t]).collect();
        ops.push(Op {
            source: None,
            name,
            kind: Some(match &op.custom {
                Some(custom) => format!("tflite.CUSTOM.{custom}"),
                None => format!("tflite.{}", op.name),
            }),
            inputs,
            outputs,
            scratch: Vec::new(),
            // No TFLite kind is in memplan's in-place list: every output has memory of its own
            // (memplan-build, which knows the kernels, marks the nodes that run in place).
            inplace: None,
            inplace_any_kind: false,
            location: Location::default(),
            all_inputs: Vec::new(),
            attrs: Vec::new(),
        });
    }
    let stem = file
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(file)
        .split('.')
        .next()
        .unwrap_or("model");
    // A name the generated module cannot have: not an identifier, a crate (`memplan`, `std`),
    // or a name of the prelude or a primitive type (`Vec`, `u8`) it would hide.
    let name = match &options.name {
        Some(name) => {
            if let Some(problem) = memplan_core::model_file::module_name_problem(name) {
                return fail(format!(
                    "{problem}\n  = help: pass another name, for example `--name {}`",
                    memplan_core::model_file::names::model_name(name)
                ));
            }
            name.clone()
        }
        None => memplan_core::model_file::names::model_name(stem),
    };
    let model = Model {
        file: toml_name.to_owned(),
        name,
        alignment,
        budget: None,
        solver: None,
        nodes: None,
        inputs: graph.inputs.iter().filter_map(|&t| tensor_of[t]).collect(),
        outputs: graph.outputs.iter().filter_map(|&t| tensor_of[t]).collect(),
        tensors,
        ops,
        weights: Vec::new(),
        pools: Vec::new(),
        inplace: options.inplace,
        aliases: Vec::new(),
        locations: ModelLocations::default(),
    };
    let header = format!(
        "# Imported by `memplan import` from {}: subgraph 0 of {}, {} operators and {} activation\n# tensors (NHWC as in the file). Names are snake_case; `source` keeps the TFLite name.\n\n",
        file.rsplit(['/', '\\']).next().unwrap_or(file),
        graph.subgraphs,
        model.ops.len(),
        model.tensors.len()
    );
    let toml = header + &model.to_toml();
    let model = parse_model(toml_name, &toml).or_else(|e| {
        fail(format!(
            "`{file}` cannot be planned: {}\n  = help: {}",
            e.message, e.help
        ))
    })?;
    Ok(Imported {
        toml,
        model,
        graph,
        tensor_of,
        shapes,
    })
}
