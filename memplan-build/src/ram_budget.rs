//! Meeting a RAM budget below the whole-tensor plan: outputs written over their own inputs.
//!
//! Planned over whole tensors, a network's arena cannot go below the most bytes live at one
//! step, and a convolution's input and output are live together. Some kernels need neither
//! copy whole: a pointwise convolution with no more output than input channels reads each pixel
//! before writing the pixel's outputs, which land on pixels already read; a depthwise
//! convolution whose output is no larger than its input holds back a few output rows in a
//! ring (`s8::Depthwise::in_place_scratch_bytes`) until no later row reads the input under
//! them. Written so, the output shares its input's memory (an in-place pair the planner packs
//! as one rectangle), for the same bytes and no extra arithmetic (the depthwise ring adds a
//! copy of its output).
//!
//! [`Network::ram_budget`](crate::Network::ram_budget) asks for it: when the whole-tensor plan is
//! over the budget, [`meet`] plans with every [`candidates`] node in place, then gives back each
//! one the budget does not need (depthwise convolutions first, as their ring costs a copy).

use std::collections::BTreeSet;

use memplan_core::Model;
use memplan_onnx::OpInput;

use crate::graph::{Constant, Node};
use crate::options::Options;
use crate::prepare::Planned;
use crate::specialise::{self, Call};

/// The nodes that can write their output over their input 0: a specialised kernel that can
/// ([`specialise::Kernel::can_overwrite`]), an input in the arena that no later node reads, an output in
/// the arena. None when in-place pairs are off ([`Network::inplace`](crate::Network::inplace))
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
        let Some(kernel) = specialise::plan(node, &operands) else {
            continue;
        };
        let arena = |t: usize| !model.tensors[t].memory.external;
        let read_once = model.ops[k].inputs.iter().filter(|&&t| t == input).count() == 1;
        let mut overwriting = node.clone();
        overwriting.overwrites = true;
        let emits = call
            .statement(&overwriting, &kernel, &|_| String::new(), "")
            .is_some();
        if kernel.can_overwrite()
            && arena(input)
            && arena(output)
            && read_once
            && last_reader[input] == Some(k)
            && !model.outputs.contains(&input)
            && emits
        {
            found.push(k);
        }
    }
    found
}

/// The plan that meets `budget` (`whole`, the plan of whole tensors, does not): with every
/// node of `candidates` in place, then each given back that the budget does not need, or an
/// error saying the least arena reachable. `plan_with` plans a set of in-place nodes.
pub(crate) fn meet(
    budget: u64,
    whole: &Planned,
    candidates: &[usize],
    plan_with: impl Fn(&BTreeSet<usize>) -> Result<Planned, String>,
) -> Result<Planned, String> {
    let whole_arena = whole.plan.total_arena_size();
    let mut chosen: BTreeSet<usize> = candidates.iter().copied().collect();
    let mut best = plan_with(&chosen)?;
    let least = best.plan.total_arena_size();
    if least > budget {
        let how = if candidates.is_empty() {
            "no node of the network can write its output over its input (memplan runs int8 \
             pointwise convolutions with no more output than input channels, and int8 depthwise \
             convolutions whose output is no larger than their input, in place)"
                .to_owned()
        } else {
            format!(
                "with the {} convolutions that can write their output over their input doing so \
                 ({}), it needs {least} bytes",
                candidates.len(),
                labels(&best.nodes, candidates)
            )
        };
        return Err(format!(
            "the arena cannot fit the RAM budget of {budget} bytes: over whole tensors it needs {whole_arena} bytes (the most bytes live at one step: {}), and {how}\n  = help: the least arena this network can run in is {} bytes: raise `ram_budget` to that, or give the network a smaller input or fewer channels where the arena peaks",
            whole.bound_without_sharing,
            least.min(whole_arena)
        ));
    }
    // Give back what the budget does not need: depthwise rings first (they copy their output).
    let depthwise = |k: &usize| best.nodes[*k].op_type == "tflite.DEPTHWISE_CONV_2D";
    let order: Vec<usize> = candidates
        .iter()
        .copied()
        .filter(depthwise)
        .chain(candidates.iter().copied().filter(|k| !depthwise(k)))
        .collect();
    for k in order {
        chosen.remove(&k);
        let without = plan_with(&chosen)?;
        if without.plan.total_arena_size() <= budget {
            best = without;
        } else {
            chosen.insert(k);
        }
    }
    Ok(best)
}

/// The labels of `nodes` `list`, for a message.
fn labels(nodes: &[Node], list: &[usize]) -> String {
    let names: Vec<String> = list
        .iter()
        .take(6)
        .map(|&k| format!("`{}`", nodes[k].label))
        .collect();
    let more = list.len().saturating_sub(names.len());
    if more > 0 {
        format!("{} and {more} more", names.join(", "))
    } else {
        names.join(", ")
    }
}
