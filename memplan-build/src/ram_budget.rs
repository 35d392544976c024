//! Meeting a RAM budget below the whole-tensor plan: outputs written over their own inputs, then
//! a chain of convolutions run band by band ([`crate::patches`]).
//!
//! Planned over whole tensors, a network's arena cannot go below the most bytes live at one
//! step, and a convolution's input and output are live together. Some kernels need neither
//! copy whole: a pointwise convolution with no more output than input channels reads each pixel
//! before writing the pixel's outputs, which land on pixels already read (int8, float32 and
//! hybrid); a depthwise convolution whose output is no larger than its input holds back a few
//! output rows in a ring (`s8::Depthwise::in_place_scratch_bytes`,
//! `float::Window::depthwise_in_place_scratch_bytes`) until no later row reads the input under
//! them; an int8 ADD, SUB or MUL of one shape reads each element before writing it. Written so,
//! the output shares its input's memory (an in-place pair the planner packs as one rectangle),
//! for the same bytes and no extra arithmetic (the depthwise ring adds a copy of its output).
//!
//! [`Network::ram_budget`](crate::Network::ram_budget) asks for it: when the whole-tensor plan is
//! over the budget, [`meet`] plans with every [`candidates`] node in place, then, if that is not
//! enough, with a run of a chain band by band (and another, while the arena falls: a network can
//! peak in several places), and gives back each in-place node the budget does not need
//! (depthwise convolutions first, as their ring costs a copy). Chains are TFLite convolutions
//! (NHWC rows) or ONNX float32 Convs (NCHW planes, [`memplan_kernels::conv_band`]).

use std::collections::BTreeSet;
use std::ops::Range;

use crate::graph::OpInput;
use memplan_core::Model;

use crate::fold;
use crate::graph::{Constant, Node};
use crate::options::Options;
use crate::patches::{self, Stage};
use crate::planned::Planned;
use crate::specialise::{self, Call};

/// The nodes that can write their output over their input 0: a specialised kernel that can
/// ([`specialise::Kernel::can_overwrite`]), an input in the arena that no later node reads, an
/// output in the arena of the input's size. None when in-place pairs are off ([`Network::inplace`](crate::Network::inplace))
/// or the network has pools.
pub(crate) fn candidates(
    model: &Model,
    shapes: &[Vec<u64>],
    nodes: &[Node],
    constants: &[Constant],
    options: &Options,
) -> Vec<usize> {
    if !options.inplace || !options.pools.is_empty() {
        return Vec::new();
    }
    // The last node reading each tensor.
    let mut last_reader = vec![None; model.tensors.len()];
    for (k, op) in model.ops.iter().enumerate() {
        for &t in &op.inputs {
            last_reader[t] = Some(k);
        }
    }
    let operands = specialise::operands(model, shapes, constants);
    let offsets = vec![0; constants.len()];
    let call = Call {
        constants,
        offsets: &offsets,
    };
    let mut found = Vec::new();
    for (k, node) in nodes.iter().enumerate() {
        let (Some(&OpInput::Tensor(input)), &[output]) =
            (node.inputs.first(), node.outputs.as_slice())
        else {
            continue;
        };
        let arena = |t: usize| !model.tensors[t].memory.external;
        let read_once = model.ops[k].inputs.iter().filter(|&&t| t == input).count() == 1;
        let writes_over = match specialise::plan(node, &operands) {
            Some(kernel) => {
                let mut overwriting = node.clone();
                overwriting.overwrites = true;
                kernel.can_overwrite()
                    && call
                        .statement(&overwriting, &kernel, &|_| String::new(), "")
                        .is_some()
            }
            // An ONNX depthwise Conv runs over its input through the padded plane its scratch
            // holds anyway (`memplan_kernels::conv_runs_in_place`), called as any node with an
            // in-place pair is (`Input::InPlace`).
            None => onnx_conv_in_place(node, shapes, constants),
        };
        // An output smaller than its input would keep the input's height in the arena for
        // as long as the output lives (a chain is one rectangle as tall as its tallest member):
        // only outputs of the input's size go over it.
        let same_size = model.tensors[input].size == model.tensors[output].size;
        if writes_over
            && same_size
            && arena(input)
            && arena(output)
            && read_once
            && last_reader[input] == Some(k)
            && !model.outputs.contains(&input)
        {
            found.push(k);
        }
    }
    found
}

/// Whether `node` is an ONNX Conv its kernel can run with the output over input 0.
fn onnx_conv_in_place(node: &Node, shapes: &[Vec<u64>], constants: &[Constant]) -> bool {
    let shapes_of = || {
        let (x, w, y) = patches::conv_operands(node)?;
        Some((
            patches::dims(shapes.get(x)?)?,
            patches::dims(&constants.get(w)?.shape)?,
            patches::dims(shapes.get(y)?)?,
        ))
    };
    let Some((xs, ws, ys)) = shapes_of() else {
        return false;
    };
    node.op_type == "Conv"
        && fold::with_attrs(&node.attrs, |attrs| {
            memplan_kernels::conv_runs_in_place(attrs, &xs, &ws, &ys)
        })
}

/// The most nodes one stage runs band by band: past a few stride-2 layers, the band buffers
/// at the stage's front hold many rows for each row of its output.
pub(crate) const MAX_STAGE: usize = 6;

/// The calls a plan's stages make, band by band.
fn calls(plan: &Planned) -> usize {
    plan.nodes
        .iter()
        .filter_map(|n| n.stage.as_ref())
        .map(|s| s.steps.len())
        .sum()
}

/// The plan that meets `budget` (`whole`, the plan of whole tensors, does not), cheapest
/// first: the `candidates` written in place (no extra work), else also runs of nodes of the
/// `chains` band by band, one stage at a time ([`crate::patches`]: every row computed once, the extra work a
/// call per band and the moves of kept rows), the fitting run with the fewest calls, with the
/// tallest band that fits; then each in-place node the budget does not need is given back. Or an error saying the least arena reachable.
/// `plan_with` plans a set of in-place nodes and a list of stages.
pub(crate) fn meet(
    budget: u64,
    whole: &Planned,
    candidates: &[usize],
    chains: &[Range<usize>],
    plan_with: impl Fn(&BTreeSet<usize>, &[Stage]) -> Result<Planned, String>,
) -> Result<Planned, String> {
    let arena = |p: &Planned| p.plan.total_arena_size();
    let all: BTreeSet<usize> = candidates.iter().copied().collect();
    let in_place = plan_with(&all, &[])?;
    if arena(&in_place) <= budget {
        return Ok(give_back(budget, in_place, all, &[], &plan_with).0);
    }
    let outside = |stages: &[Stage]| -> BTreeSet<usize> {
        all.iter()
            .copied()
            .filter(|k| !stages.iter().any(|s| s.nodes.contains(k)))
            .collect()
    };
    // Streams, one stage at a time: a run of two to `MAX_STAGE` nodes of a chain band by band,
    // one row at a time, beside the stages already chosen, in place outside them; of those that
    // fit, the one with the fewest calls; else the smallest, and another stage after it while
    // the arena falls (each stage lowers the peak where it runs; a network can peak in several
    // places).
    let mut stages: Vec<Stage> = Vec::new();
    let mut chosen_plan: Option<Planned> = None;
    loop {
        let mut fitting: Option<(usize, Stage, Planned)> = None;
        let mut smallest: Option<(Stage, Planned)> = None;
        for chain in chains {
            for start in chain.clone() {
                for end in start + 2..=chain.end.min(start + MAX_STAGE) {
                    let stage = Stage {
                        nodes: start..end,
                        band: 1,
                    };
                    if stages
                        .iter()
                        .any(|s| s.nodes.start < end && start < s.nodes.end)
                    {
                        continue;
                    }
                    let mut with = stages.clone();
                    with.push(stage.clone());
                    let plan = plan_with(&outside(&with), &with)?;
                    let calls = calls(&plan);
                    if arena(&plan) <= budget {
                        if fitting.as_ref().is_none_or(|(c, ..)| calls < *c) {
                            fitting = Some((calls, stage, plan));
                        }
                    } else if smallest
                        .as_ref()
                        .is_none_or(|(_, p)| arena(&plan) < arena(p))
                    {
                        smallest = Some((stage, plan));
                    }
                }
            }
        }
        let so_far = chosen_plan.as_ref().map_or(arena(&in_place), arena);
        match (fitting, smallest) {
            (Some((_, stage, plan)), _) => {
                stages.push(stage);
                chosen_plan = Some(plan);
                break;
            }
            // None fits with every ring: the smallest may, without the rings that cost more
            // than they save, or with another stage.
            (None, Some((stage, plan))) if arena(&plan) < so_far => {
                stages.push(stage);
                chosen_plan = Some(plan);
            }
            (None, _) => break,
        }
    }
    let Some(best) = chosen_plan else {
        let least = give_back(u64::MAX, in_place, all.clone(), &[], &plan_with).0;
        return if arena(&least) <= budget {
            Ok(least)
        } else {
            Err(refusal(budget, whole, candidates, chains, arena(&least)))
        };
    };
    let chosen = outside(&stages);
    let (mut best, chosen) = if arena(&best) <= budget {
        (best, chosen)
    } else {
        let (least, chosen) = give_back(u64::MAX, best, chosen, &stages, &plan_with);
        if arena(&least) > budget {
            let least = arena(&least).min(arena(&in_place));
            return Err(refusal(budget, whole, candidates, chains, least));
        }
        (least, chosen)
    };
    // Fewer calls: the tallest band (the same for every stage) that still fits.
    let tallest = best
        .nodes
        .iter()
        .filter_map(|n| n.stage.as_ref())
        .flat_map(|s| s.steps.iter().map(|step| step.at + step.rows))
        .max()
        .unwrap_or(1);
    let mut band = tallest.next_power_of_two() / 2;
    while band > 1 {
        let taller: Vec<Stage> = stages
            .iter()
            .map(|s| Stage {
                nodes: s.nodes.clone(),
                band,
            })
            .collect();
        let plan = plan_with(&chosen, &taller)?;
        if arena(&plan) <= budget {
            best = plan;
            stages = taller;
            break;
        }
        band /= 2;
    }
    Ok(give_back(budget, best, chosen, &stages, &plan_with).0)
}

/// `best` (planned with the in-place nodes `chosen` and `stages`) after giving back each node
/// of `chosen` whose removal keeps the arena within `budget` (`u64::MAX`: no larger than it
/// was, for the smallest arena), depthwise rings first (they copy their output); and the nodes
/// left.
fn give_back(
    budget: u64,
    mut best: Planned,
    mut chosen: BTreeSet<usize>,
    stages: &[Stage],
    plan_with: &impl Fn(&BTreeSet<usize>, &[Stage]) -> Result<Planned, String>,
) -> (Planned, BTreeSet<usize>) {
    let depthwise = |k: &usize| {
        best.table_nodes
            .get(*k)
            .is_some_and(|n| n.op_type == "tflite.DEPTHWISE_CONV_2D")
    };
    let order: Vec<usize> = chosen
        .iter()
        .copied()
        .filter(depthwise)
        .chain(chosen.iter().copied().filter(|k| !depthwise(k)))
        .collect();
    for k in order {
        chosen.remove(&k);
        match plan_with(&chosen, stages) {
            Ok(without)
                if without.plan.total_arena_size()
                    <= budget.min(if budget == u64::MAX {
                        best.plan.total_arena_size()
                    } else {
                        u64::MAX
                    }) =>
            {
                best = without;
            }
            _ => {
                chosen.insert(k);
            }
        }
    }
    (best, chosen)
}

/// The error of a budget no schedule meets.
fn refusal(
    budget: u64,
    whole: &Planned,
    candidates: &[usize],
    chains: &[Range<usize>],
    least: u64,
) -> String {
    let whole_arena = whole.plan.total_arena_size();
    let how = if candidates.is_empty() {
        "no node can write its output over its input (memplan runs TFLite pointwise \
         convolutions with no more output than input channels, TFLite depthwise convolutions \
         whose output is no larger than their input, int8 ADD, SUB and MUL of one shape, and ONNX \
         depthwise Convs with planes of one size, in place)"
            .to_owned()
    } else {
        format!(
            "{} convolutions can write their output over their input ({})",
            candidates.len(),
            labels(&whole.table_nodes, candidates),
        )
    };
    let streams = if chains.is_empty() {
        "no chain of convolutions (TFLite int8 or float32, or ONNX float32 Convs of one image, \
         each the only reader of the one before) can run band by band"
            .to_owned()
    } else {
        let longest = chains.iter().map(ExactSizeIterator::len).max().unwrap_or(0);
        format!(
            "{} chain(s) of convolutions (up to {longest} nodes) can run band by band, up to \
             {MAX_STAGE} nodes a stage",
            chains.len()
        )
    };
    format!(
        "the arena cannot fit the RAM budget of {budget} bytes: over whole tensors it needs {whole_arena} bytes (the most bytes live at one step: {}); {how}; {streams}; the least arena of those schedules is {least} bytes\n  = help: the least arena this network can run in is {least} bytes: raise `ram_budget` to that, or give the network a smaller input or fewer channels where the arena peaks",
        whole.bound_without_sharing,
    )
}

/// The labels of `nodes` `list`, for a message.
fn labels(nodes: &[Node], list: &[usize]) -> String {
    let names: Vec<String> = list
        .iter()
        .take(6)
        .filter_map(|&k| nodes.get(k))
        .map(|n| format!("`{}`", n.label))
        .collect();
    let more = list.len().saturating_sub(names.len());
    if more > 0 {
        format!("{} and {more} more", names.join(", "))
    } else {
        names.join(", ")
    }
}
