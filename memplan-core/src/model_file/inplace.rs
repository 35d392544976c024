//! In-place ops: which outputs may take an input's memory, by the op's `kind` or declared with
//! `inplace = { <output> = "<input>" }`.
//!
//! An op may write its output over an input when the op computes each output element from the
//! input elements at the same place (elementwise ops) or only reinterprets the bytes (reshape-like
//! ops). The planner then treats the chain of tensors that share memory as one rectangle
//! ([`crate::AliasGroups`]), which can make the arena smaller than the no-alias lower bound.
//!
//! A pair `(output, input)` of op `k` is allowed only when
//! - `input` is one of the op's inputs and `output` one of its outputs;
//! - `input` is not read after op `k` (its lifetime ends at step `k + 1`);
//! - `input` is not a graph input or output, and neither tensor is `external`;
//! - `output` is no larger than `input`;
//! - `input` is not already taken over by another output;
//! - the two tensors' chains do not name different pools or different pinned offsets, and a pin
//!   is a multiple of every member's alignment.
//!
//! For a binary elementwise op (`Add(a, b)`) the first eligible input in the op's `inputs` order
//! is chosen, so the choice is deterministic.

use crate::model_file::Model;

/// Op kinds whose outputs may take an input's memory automatically: elementwise unary and binary
/// ops, activations, and reshape-like ops that do not move bytes. The model file's kinds are
/// named as ONNX names its operators (the vocabulary hand-written model files use); an op of
/// any other kind, from any format, says the same with `inplace = true` (memplan-build writes it
/// for a TFLite node whose kernel runs in place). Sorted, compared exactly (case-sensitive).
pub const INPLACE_KINDS: &[&str] = &[
    "Abs",
    "Add",
    "BatchNormalization",
    "Ceil",
    "Clip",
    "Cos",
    "Div",
    "Dropout",
    "Elu",
    "Erf",
    "Exp",
    "Flatten",
    "Floor",
    "Gelu",
    "HardSigmoid",
    "HardSwish",
    "Identity",
    "LeakyRelu",
    "Log",
    "Max",
    "Min",
    "Mish",
    "Mul",
    "Neg",
    "Not",
    "PRelu",
    "Pow",
    "Reciprocal",
    "Relu",
    "Reshape",
    "Round",
    "Selu",
    "Sigmoid",
    "Sign",
    "Sin",
    "Softplus",
    "Softsign",
    "Sqrt",
    "Squeeze",
    "Sub",
    "Tanh",
    "ThresholdedRelu",
    "Unsqueeze",
];

/// Whether ops of this kind may write an output over an input (see [`INPLACE_KINDS`]).
pub fn allows_inplace(kind: &str) -> bool {
    INPLACE_KINDS.binary_search(&kind).is_ok()
}

/// Why a pair cannot share memory. Each says what and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    NotAnOutput,
    NotAnInput,
    ReadLater { reader: usize },
    GraphInput,
    GraphOutput,
    External { tensor: usize },
    Larger,
    InputTaken { by: usize },
    OutputTaken,
    PoolConflict { first: usize, second: usize },
    PinConflict { first: usize, second: usize },
    MisalignedPin { pinned: usize, alignment: u64 },
}

impl Refusal {
    /// `(message, help)` for the pair `output` over `input` of op `op`.
    pub(crate) fn explain(
        &self,
        model: &Model,
        op: usize,
        output: usize,
        input: usize,
    ) -> (String, String) {
        let t = |i: usize| model.tensors[i].name.as_str();
        let (o, i, name) = (t(output), t(input), model.ops[op].name.as_str());
        let pair = format!("op `{name}` cannot write `{o}` in place of `{i}`");
        let remove = format!("remove `{o} = \"{i}\"` from `inplace`");
        match *self {
            Refusal::NotAnOutput => (
                format!("{pair}: `{o}` is not one of its outputs"),
                format!("the key of an `inplace` entry is an output of the op; {remove}"),
            ),
            Refusal::NotAnInput => (
                format!("{pair}: `{i}` is not one of its inputs"),
                format!("the value of an `inplace` entry is an input of the op; {remove}"),
            ),
            Refusal::ReadLater { reader } => (
                format!(
                    "{pair}: `{i}` is still read later, by op `{}` (step {reader})",
                    model.ops[reader].name
                ),
                format!("only an input whose last reader is this op can be overwritten; {remove}"),
            ),
            Refusal::GraphInput => (
                format!("{pair}: `{i}` is a graph input, which the caller fills"),
                format!("graph inputs keep their values; {remove}"),
            ),
            Refusal::GraphOutput => (
                format!("{pair}: `{i}` is a graph output, which the caller reads at the end"),
                format!("graph outputs keep their values; {remove}"),
            ),
            Refusal::External { tensor } => (
                format!(
                    "{pair}: `{}` is `external` (owned by the application, not in the arena)",
                    t(tensor)
                ),
                format!("only arena tensors can share memory; {remove}"),
            ),
            Refusal::Larger => (
                format!(
                    "{pair}: `{o}` ({} bytes) is larger than `{i}` ({} bytes)",
                    model.tensors[output].size, model.tensors[input].size
                ),
                format!(
                    "an output can only take the memory of an input at least as large; {remove}"
                ),
            ),
            Refusal::InputTaken { by } => (
                format!("{pair}: `{i}` is already taken over by `{}`", t(by)),
                format!("each input can hold one output; {remove}"),
            ),
            Refusal::OutputTaken => (
                format!("{pair}: `{o}` already takes another input's memory"),
                format!("each output can take one input's memory; {remove}"),
            ),
            Refusal::PoolConflict { first, second } => (
                format!(
                    "{pair}: they would share memory, but `{}` is in pool `{}` and `{}` in pool `{}`",
                    t(first),
                    pool_name(model, first),
                    t(second),
                    pool_name(model, second)
                ),
                format!("put them in the same pool (or leave `pool` out of one), or {remove}"),
            ),
            Refusal::PinConflict { first, second } => (
                format!(
                    "{pair}: they would share memory, but `{}` and `{}` are pinned at different offsets",
                    t(first),
                    t(second)
                ),
                format!("pin only one of them, or {remove}"),
            ),
            Refusal::MisalignedPin { pinned, alignment } => (
                format!(
                    "{pair}: they would share memory, but `{}` is pinned at an offset that is not a multiple of {alignment}, the alignment the other needs",
                    t(pinned)
                ),
                format!("pin it at a multiple of {alignment}, or {remove}"),
            ),
        }
    }
}

fn pool_name(model: &Model, tensor: usize) -> &str {
    model.tensors[tensor]
        .memory
        .pool
        .map_or("?", |p| model.pools[p].name.as_str())
}

/// Chains formed so far (union-find), with what constrains each: a pool, a pin, an alignment.
pub(crate) struct Chains {
    parent: Vec<usize>,
    /// Per root: a member bound to a pool, a member pinned, the largest alignment.
    pool: Vec<Option<usize>>,
    pin: Vec<Option<usize>>,
    alignment: Vec<u64>,
    /// `input_taken[i]`: the output that took input `i`'s memory.
    input_taken: Vec<Option<usize>>,
    output_taken: Vec<bool>,
}

impl Chains {
    pub(crate) fn new(model: &Model) -> Self {
        let n = model.tensors.len();
        let mut chains = Self {
            parent: (0..n).collect(),
            pool: vec![None; n],
            pin: vec![None; n],
            alignment: model.tensors.iter().map(|t| t.alignment).collect(),
            input_taken: vec![None; n],
            output_taken: vec![false; n],
        };
        for (i, t) in model.tensors.iter().enumerate() {
            chains.pool[i] = t.memory.pool.map(|_| i);
            chains.pin[i] = t.memory.offset.map(|_| i);
        }
        chains
    }

    fn root(&self, mut i: usize) -> usize {
        while self.parent[i] != i {
            i = self.parent[i];
        }
        i
    }

    /// Whether op `op` may write `output` over `input` given the chains so far.
    pub(crate) fn check(
        &self,
        model: &Model,
        op: usize,
        output: usize,
        input: usize,
    ) -> Result<(), Refusal> {
        let the_op = &model.ops[op];
        if !the_op.outputs.contains(&output) {
            return Err(Refusal::NotAnOutput);
        }
        if !the_op.inputs.contains(&input) {
            return Err(Refusal::NotAnInput);
        }
        for tensor in [input, output] {
            if model.tensors[tensor].memory.external {
                return Err(Refusal::External { tensor });
            }
        }
        if model.inputs.contains(&input) {
            return Err(Refusal::GraphInput);
        }
        if model.outputs.contains(&input) {
            return Err(Refusal::GraphOutput);
        }
        if model.tensors[input].lifetime.end > op as u64 + 1 {
            let reader = (op + 1..model.ops.len())
                .find(|&k| model.ops[k].inputs.contains(&input))
                .unwrap_or(op);
            return Err(Refusal::ReadLater { reader });
        }
        if model.tensors[output].size > model.tensors[input].size {
            return Err(Refusal::Larger);
        }
        if let Some(by) = self.input_taken[input] {
            return Err(Refusal::InputTaken { by });
        }
        if self.output_taken[output] {
            return Err(Refusal::OutputTaken);
        }
        let (a, b) = (self.root(input), self.root(output));
        if a == b {
            // Cannot happen for a schedule (the output is new at this op); refuse rather than loop.
            return Err(Refusal::OutputTaken);
        }
        if let (Some(x), Some(y)) = (self.pool[a], self.pool[b])
            && model.tensors[x].memory.pool != model.tensors[y].memory.pool
        {
            return Err(Refusal::PoolConflict {
                first: x,
                second: y,
            });
        }
        let alignment = self.alignment[a].max(self.alignment[b]);
        match (self.pin[a], self.pin[b]) {
            (Some(x), Some(y))
                if model.tensors[x].memory.offset != model.tensors[y].memory.offset =>
            {
                return Err(Refusal::PinConflict {
                    first: x,
                    second: y,
                });
            }
            (Some(p), _) | (None, Some(p)) => {
                if !model.tensors[p]
                    .memory
                    .offset
                    .unwrap_or(0)
                    .is_multiple_of(alignment)
                {
                    return Err(Refusal::MisalignedPin {
                        pinned: p,
                        alignment,
                    });
                }
            }
            (None, None) => {}
        }
        Ok(())
    }

    /// Records that `output` takes `input`'s memory (after [`Chains::check`] passed).
    pub(crate) fn join(&mut self, output: usize, input: usize) {
        let (a, b) = (self.root(input), self.root(output));
        self.input_taken[input] = Some(output);
        self.output_taken[output] = true;
        let (low, high) = (a.min(b), a.max(b));
        self.parent[high] = low;
        self.pool[low] = self.pool[low].or(self.pool[high]);
        self.pin[low] = self.pin[low].or(self.pin[high]);
        self.alignment[low] = self.alignment[low].max(self.alignment[high]);
    }
}

/// The pairs op `op` gets from its kind (or from `inplace = true`): for each output in order, the first input that passes
/// [`Chains::check`], recorded in `chains`.
pub(crate) fn automatic(model: &Model, op: usize, chains: &mut Chains) -> Vec<(usize, usize)> {
    let the_op = &model.ops[op];
    if !the_op.inplace_any_kind && !the_op.kind.as_deref().is_some_and(allows_inplace) {
        return Vec::new();
    }
    let mut pairs = Vec::new();
    for &output in &the_op.outputs {
        if let Some(&input) = the_op
            .inputs
            .iter()
            .find(|&&input| chains.check(model, op, output, input).is_ok())
        {
            chains.join(output, input);
            pairs.push((output, input));
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allowlist_is_sorted_and_exact() {
        assert!(INPLACE_KINDS.windows(2).all(|w| w[0] < w[1]));
        assert!(allows_inplace("Relu"));
        assert!(allows_inplace("Reshape"));
        assert!(!allows_inplace("relu"));
        assert!(!allows_inplace("Conv"));
        assert!(!allows_inplace("MatMul"));
    }
}
