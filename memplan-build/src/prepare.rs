//! What every format's front end ends in ([`finish`]): a network of memplan's own nodes checked
//! and planned. The graph's inputs and outputs are given to the caller (`external`), each node's
//! scratch is declared as a tensor of its own, the arena is planned; under a RAM budget the
//! schedules of [`crate::ram_budget`] are planned too ([`schedule`], [`merge_stage`]).

use std::collections::BTreeSet;
use std::path::Path;

use memplan_core::model_file::Layout;
use memplan_core::model_file::names::UniqueNames;
use memplan_core::{DType, Model, Tensor, lower_bound};

use crate::cache_bands;
use crate::fold;
use crate::graph::{Constant, Node, OpInput, kernel_dtype};
use crate::options::Options;
use crate::patches;
use crate::planned::Planned;
use crate::ram_budget;
use crate::specialise;

/// The steps every format shares once its graph is a memplan model and nodes the kernels run:
/// the tensors' dtypes, the graph inputs and outputs given to the caller, each node's scratch,
/// the solver options, the model file written and read back, and the plan. `shapes` are the
/// model tensors' shapes as the format gives them (`[]` for a scalar), `constants` what
/// `OpInput::Weight` indexes.
pub(crate) fn finish(
    path: &Path,
    options: &Options,
    mut model: Model,
    shapes: Vec<Vec<u64>>,
    nodes: Vec<Node>,
    constants: &[Constant],
) -> Result<Planned, String> {
    // Tensors the kernels can hold; graph inputs and outputs.
    for tensor in &model.tensors {
        let Layout::Typed { dtype, .. } = &tensor.layout else {
            return Err(format!("tensor `{}` is untyped", tensor.name));
        };
        let onnx = tensor.source.as_deref().unwrap_or(&tensor.name);
        kernel_dtype(*dtype).map_err(|why| {
            format!(
                "value `{onnx}`: {why}\n  = help: convert or export the model with tensors of those types (float16 and float64 ones as float32)"
            )
        })?;
    }
    if model.inputs.is_empty() {
        return Err("the graph has no input that is not a weight\n  = help: a network with no run-time input computes a constant; there is nothing to run".to_owned());
    }
    if model.outputs.is_empty() {
        return Err("the graph has no output computed at run time\n  = help: every graph output is a constant or an input; a network with nothing to compute cannot be run".to_owned());
    }
    for &o in &model.outputs {
        if model.inputs.contains(&o) {
            let t = &model.tensors[o];
            return Err(format!(
                "value `{}` is both a graph input and a graph output\n  = help: the caller owns both buffers; copy the input instead of running the network for it",
                t.source.as_deref().unwrap_or(&t.name)
            ));
        }
    }
    if !options.io_in_arena {
        let io: Vec<usize> = model.inputs.iter().chain(&model.outputs).copied().collect();
        for t in io {
            model.tensors[t].memory.external = true;
        }
    }
    // One schedule planned: the nodes written over their input and the stages run band by band.
    let plan_with = |overwrite: &BTreeSet<usize>, stages: &[patches::Stage]| {
        schedule(
            path,
            options,
            model.clone(),
            shapes.clone(),
            nodes.clone(),
            constants,
            (overwrite, stages),
        )
    };
    let planned = plan_with(&BTreeSet::new(), &[])?;
    match options.ram_budget {
        Some(budget) if planned.plan.total_arena_size() > budget => ram_budget::meet(
            budget,
            &planned,
            &ram_budget::candidates(&model, &shapes, &nodes, constants, options),
            &patches::chains(&model, &shapes, &nodes, constants),
            plan_with,
        ),
        _ => Ok(with_cache_bands(
            planned,
            options,
            |stages| plan_with(&BTreeSet::new(), stages),
            || {
                cache_bands::stages(
                    &model,
                    &shapes,
                    &nodes,
                    constants,
                    &patches::chains(&model, &shapes, &nodes, constants),
                    options.cache_bytes.unwrap_or(u64::MAX),
                )
            },
        )),
    }
}

/// `whole` (the plan of whole tensors, within any RAM budget) or, with
/// [`Network::cache_bytes`](crate::Network::cache_bytes), the plan with the stages that keep
/// the tensors between convolutions in the cache ([`cache_bands`]), if there are any and it
/// plans within the budget. `plan_with` plans a list of stages, `stages` finds them.
fn with_cache_bands(
    whole: Planned,
    options: &Options,
    plan_with: impl Fn(&[patches::Stage]) -> Result<Planned, String>,
    stages: impl Fn() -> Vec<patches::Stage>,
) -> Planned {
    if options.cache_bytes.is_none() {
        return whole;
    }
    let stages = stages();
    if stages.is_empty() {
        return whole;
    }
    // A stage's arena holds band buffers where it held whole tensors: never more, but a RAM
    // budget is checked rather than assumed; and a schedule that cannot be planned keeps the
    // whole tensors, which run the same bytes.
    match plan_with(&stages) {
        Ok(banded)
            if options
                .ram_budget
                .is_none_or(|budget| banded.plan.total_arena_size() <= budget) =>
        {
            banded
        }
        _ => whole,
    }
}

/// [`finish`]'s planning of one schedule: the nodes of `overwrite` write their output over
/// their input 0 (an in-place pair each), the nodes of each of `stages` run band by band as one,
/// each node gets its scratch, then the model is written, read back and planned.
fn schedule(
    path: &Path,
    options: &Options,
    mut model: Model,
    shapes: Vec<Vec<u64>>,
    mut nodes: Vec<Node>,
    constants: &[Constant],
    (overwrite, stages): (&BTreeSet<usize>, &[patches::Stage]),
) -> Result<Planned, String> {
    for &k in overwrite {
        let (Some(OpInput::Tensor(input)), Some(&output)) =
            (nodes[k].inputs.first(), nodes[k].outputs.first())
        else {
            return Err(
                "internal error: a node written in place has no input value; please report this"
                    .to_owned(),
            );
        };
        model.ops[k].inplace = Some(vec![(output, *input)]);
        nodes[k].overwrites = true;
    }
    // The stages, last first: merging one leaves the nodes before it where they are.
    let mut stages = stages.to_vec();
    stages.sort_by_key(|s| std::cmp::Reverse(s.nodes.start));
    for stage in &stages {
        merge_stage(&mut model, &shapes, &mut nodes, constants, stage)?;
    }

    // Scratch: a `u64` tensor per node that needs one, live while the node runs.
    let mut shapes = shapes;
    let values = model.tensors.len();
    let existing: Vec<&str> = model.tensors.iter().map(|t| t.name.as_str()).collect();
    let mut taken = UniqueNames::reserving(&existing);
    for (k, node) in nodes.iter_mut().enumerate() {
        let operands = specialise::operands(&model, &shapes, constants);
        let words = match &mut node.stage {
            Some(stage) => {
                // The table's nodes say what each needs run whole (an interpreter's heap run).
                for inner in &mut stage.nodes {
                    let whole = whole_scratch_words(inner, &shapes, constants, &operands)?;
                    inner.scratch = (whole > 0).then_some((usize::MAX, whole));
                }
                if stage.nodes.iter().any(patches::nchw) {
                    patches::band_scratch_words(stage, &shapes, constants).ok_or_else(|| {
                        format!(
                            "internal error: the band loop of `{}` has no scratch size; please report this",
                            node.label
                        )
                    })?
                } else {
                    // A specialised kernel's own scratch: the most any of the stage's needs.
                    stage
                        .nodes
                        .iter()
                        .map(|n| specialised_scratch_words(n, &operands))
                        .max()
                        .unwrap_or(0)
                }
            }
            None => whole_scratch_words(node, &shapes, constants, &operands)?,
        };
        if words == 0 {
            continue;
        }
        let name = taken.claim(&format!("scratch_{}", model.ops[k].name));
        let index = model.tensors.len();
        model.tensors.push(Tensor {
            name,
            layout: Layout::Typed {
                dtype: DType::U64,
                shape: vec![words as u64],
            },
            size: words as u64 * 8,
            alignment: options.alignment.max(8),
            source: None,
            lifetime: memplan_core::Lifetime::new(0, 1),
            location: Default::default(),
            memory: Default::default(),
        });
        model.ops[k].scratch.push(index);
        shapes.push(vec![words as u64]);
        node.scratch = Some((index, words));
    }

    // The nodes as the file has them, for the tables.
    let table_nodes: Vec<Node> = nodes
        .iter()
        .flat_map(|node| match &node.stage {
            Some(stage) => stage.nodes.clone(),
            None => vec![node.clone()],
        })
        .collect();

    // Solver settings, then the model written and read back: lifetimes, in-place pairs and
    // every check of a model file derived exactly as `memplan!` derives them.
    if let Some(solver) = &options.solver {
        model.solver = Some(
            solver
                .parse()
                .map_err(|e| format!("solver `{solver}`: {e}"))?,
        );
    }
    model.nodes = options.nodes.or(model.nodes);
    model.budget = options.budget;
    model.pools = options
        .pools
        .iter()
        .map(
            |(name, capacity, link_section)| memplan_core::model_file::PoolDecl {
                name: name.clone(),
                capacity: *capacity,
                link_section: link_section.clone(),
                location: Default::default(),
                size_location: None,
            },
        )
        .collect();
    let file = format!("{}.toml", model.name);
    let toml = format!(
        "# Written by memplan-build from {}: the model `{}.rs` is planned from.\n\n{}",
        path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned()
        ),
        model.name,
        model.to_toml()
    );
    let reread = memplan_core::parse_model(&file, &toml).map_err(|e| {
        format!(
            "the network cannot be planned: {}\n  = help: {}",
            e.message, e.help
        )
    })?;
    if reread.tensors.len() != model.tensors.len()
        || reread
            .tensors
            .iter()
            .zip(&model.tensors)
            .any(|(a, b)| a.name != b.name)
    {
        return Err("internal error: the model file does not read back tensor for tensor; please report this".to_owned());
    }
    let model = reread;
    // The arena's tensors (external ones are the caller's): their sum and the most bytes live
    // at one step when none shares another's memory.
    let arena_tensors: Vec<&Tensor> = model
        .tensors
        .iter()
        .filter(|t| !t.memory.external)
        .collect();
    let sum_of_sizes = arena_tensors.iter().map(|t| t.size).sum();
    let buffers: Vec<memplan_core::Buffer> = arena_tensors
        .iter()
        .map(|t| {
            memplan_core::Buffer::new(t.name.clone(), t.size, t.lifetime.start, t.lifetime.end)
        })
        .collect();
    let bound_without_sharing = memplan_core::Problem::new(buffers)
        .map(|p| lower_bound(&p))
        .unwrap_or(0);
    let plan = memplan_core::model_plan::plan_model(&model).map_err(|e| e.to_string())?;

    Ok(Planned {
        model,
        plan,
        toml,
        shapes,
        values,
        nodes,
        table_nodes,
        bound_without_sharing,
        sum_of_sizes,
    })
}

/// Scratch words a specialised kernel of `node` needs (the int8 convolution's im2col
/// columns, a ring written in place), 0 for none.
fn specialised_scratch_words(node: &Node, operands: &specialise::Operands<'_>) -> usize {
    specialise::plan(node, operands).map_or(0, |kernel| {
        kernel.scratch_bytes(node.overwrites).div_ceil(8)
    })
}

/// Scratch words `node` needs run over whole tensors: its kernel's
/// ([`memplan_kernels::scratch_len`]) or its specialised kernel's, the larger.
fn whole_scratch_words(
    node: &Node,
    shapes: &[Vec<u64>],
    constants: &[Constant],
    operands: &specialise::Operands<'_>,
) -> Result<usize, String> {
    let dims = |s: &[u64]| s.iter().map(|&d| d as usize).collect::<Vec<usize>>();
    let input_shapes: Vec<Option<Vec<usize>>> = node
        .inputs
        .iter()
        .map(|input| match *input {
            OpInput::Absent => None,
            OpInput::Tensor(t) => Some(dims(&shapes[t])),
            OpInput::Weight(w) => constants.get(w).map(|c| dims(&c.shape)),
        })
        .collect();
    let output_shapes: Vec<Vec<usize>> = node.outputs.iter().map(|&t| dims(&shapes[t])).collect();
    let input_refs: Vec<Option<&[usize]>> = input_shapes.iter().map(|s| s.as_deref()).collect();
    let output_refs: Vec<&[usize]> = output_shapes.iter().map(Vec::as_slice).collect();
    let words = fold::with_attrs(&node.attrs, |attrs| {
        memplan_kernels::scratch_len(&node.op_type, attrs, &input_refs, &output_refs)
            .map_err(|e| e.to_string())
    })
    .map_err(|e| format!("node `{}` ({}): {e}", node.label, node.op_type))?;
    Ok(words.max(specialised_scratch_words(node, operands)))
}

/// Makes the nodes of `stage` one node that runs them band by band ([`patches`]): the first
/// node's op takes the stage's input and writes its output, the tensors between them become
/// its band buffers (scratch of a few rows each), the other ops go.
fn merge_stage(
    model: &mut Model,
    shapes: &[Vec<u64>],
    nodes: &mut Vec<Node>,
    constants: &[Constant],
    stage: &patches::Stage,
) -> Result<(), String> {
    let range = stage.nodes.clone();
    let internal = || {
        format!(
            "internal error: nodes {range:?} cannot run band by band as planned; please report this"
        )
    };
    let sub: Vec<Node> = nodes[range.clone()].to_vec();
    let operands = specialise::operands(model, shapes, constants);
    let layers: Vec<patches::Rows> = sub
        .iter()
        .map(|node| patches::layer_rows(model, shapes, constants, &operands, node))
        .collect::<Option<_>>()
        .ok_or_else(internal)?;
    let (steps, band_rows) = patches::simulate(&layers, stage.band).ok_or_else(internal)?;
    let bands: Vec<usize> = sub[..sub.len() - 1].iter().map(|n| n.outputs[0]).collect();
    for ((&t, &rows), node) in bands.iter().zip(&band_rows).zip(&sub) {
        // The rows are the height: NHWC's axis 1, NCHW's axis 2.
        let height = if patches::nchw(node) { 2 } else { 1 };
        let mut shape = shapes[t].clone();
        if shape.len() != 4 {
            return Err(internal());
        }
        shape[height] = rows as u64;
        let tensor = &mut model.tensors[t];
        let Layout::Typed { dtype, .. } = tensor.layout else {
            return Err(internal());
        };
        tensor.size = shape.iter().product::<u64>() * dtype.size();
        tensor.layout = Layout::Typed { dtype, shape };
    }
    let (first, last) = (&sub[0], &sub[sub.len() - 1]);
    let Some(&OpInput::Tensor(input)) = first.inputs.first() else {
        return Err(internal());
    };
    let name = format!(
        "{}_to_{}",
        model.ops[range.start].name,
        model.ops[range.end - 1].name
    );
    let op = &mut model.ops[range.start];
    op.name = name;
    op.kind = Some("memplan.PATCHES".to_owned());
    op.inputs = vec![input];
    op.all_inputs = Vec::new();
    op.attrs = Vec::new();
    op.outputs = last.outputs.clone();
    op.scratch = bands.clone();
    op.inplace = Some(Vec::new());
    model.ops.drain(range.start + 1..range.end);
    let node = Node {
        label: format!("{}..{}", first.label, last.label),
        op_type: "memplan.PATCHES".to_owned(),
        attrs: Vec::new(),
        inputs: vec![OpInput::Tensor(input)],
        outputs: last.outputs.clone(),
        scratch: None,
        overwrites: false,
        stage: Some(Box::new(crate::graph::Streamed {
            nodes: sub,
            bands,
            band_rows,
            steps,
        })),
    };
    nodes[range.start] = node;
    nodes.drain(range.start + 1..range.end);
    Ok(())
}
