//! The `[model]` table (name, alignment, budget, solver, nodes, inputs, outputs, inplace) and
//! the whole file's assembly into a [`Model`]: the tables are read in the order their errors are
//! reported (`[model]`, `[[pools]]`, `[tensors]`, `[weights]`, `[[ops]]`), then the schedule
//! gives the lifetimes and the in-place pairs are chosen.

use std::collections::BTreeMap;
use std::ops::Range;

use toml::Spanned;
use toml::de::DeValue;

use super::values::kind;
use super::{Names, Parser, Result, Table, Value};
use crate::model_file::{DEFAULT_ALIGNMENT, Model, ModelLocations};
use crate::solve::Solver;

/// The largest `[model] nodes` accepted (at a few microseconds a node, about an hour).
const MAX_NODE_BUDGET: u64 = 1_000_000_000;

const TOP_KEYS: [&str; 5] = ["model", "tensors", "weights", "ops", "pools"];

const MODEL_KEYS: [&str; 8] = [
    "name",
    "alignment",
    "budget",
    "solver",
    "nodes",
    "inputs",
    "outputs",
    "inplace",
];

/// Crates a generated module or its user reach by name: a module named like one of them
/// (`pub mod memplan`) makes `memplan::...` ambiguous.
const RESERVED_MODEL_NAMES: [&str; 6] = [
    "memplan",
    "core",
    "std",
    "alloc",
    "bytemuck",
    "memplan_core",
];

/// The span of top-level key `name` (`0..0` when absent).
pub(super) fn key_span(top: &Table<'_>, name: &str) -> Range<usize> {
    top.keys()
        .find(|key| key.get_ref() == name)
        .map_or(0..0, Spanned::span)
}

/// The span of the first top-level key in the file (`0..0` in an empty file).
fn first_key_span(top: &Table<'_>) -> Range<usize> {
    top.keys()
        .map(Spanned::span)
        .min_by_key(|span| span.start)
        .unwrap_or(0..0)
}

impl Parser<'_> {
    pub(super) fn model(&self, top: &Table<'_>) -> Result<Model> {
        self.check_keys(top, &TOP_KEYS, "at the top level", |_| {
            "the top level has `[model]`, `[tensors]`, `[[ops]]`, and optionally `[weights]` and \
             `[[pools]]`"
                .into()
        })?;
        let Some(model_value) = top.get("model") else {
            // At the first top-level key, where `[model]` belongs (the file's start when empty).
            return Err(self.source.error(
                &first_key_span(top),
                "missing `[model]` table",
                "start the file with `[model]` and at least `name = \"my_model\"`",
            ));
        };
        let model = self.table(model_value, "`model`", "write `[model]` as a table")?;
        self.check_keys(model, &MODEL_KEYS, "in `[model]`", |_| {
            "`[model]` takes `name`, `alignment`, `budget`, `solver`, `nodes`, `inputs`, \
             `outputs` and `inplace`"
                .into()
        })?;
        let model_span = model_value.span();

        // name
        let Some(name_value) = model.get("name") else {
            return Err(self.source.error(
                &model_span,
                "`[model]` has no `name`",
                "add `name = \"my_model\"`: it names the generated module",
            ));
        };
        let name = self.string(name_value, "`name`")?;
        self.identifier(
            name,
            &name_value.span(),
            "model name",
            "it names the generated module",
        )?;
        if RESERVED_MODEL_NAMES.contains(&name) {
            return Err(self.source.error(
                &name_value.span(),
                format!(
                    "model name `{name}` is also the name of a crate the generated code and your \
                     code use, so paths like `{name}::...` would become ambiguous"
                ),
                format!("rename the model (for example `{name}_model`)"),
            ));
        }

        // alignment
        let alignment = match model.get("alignment") {
            None => DEFAULT_ALIGNMENT,
            Some(v) => self.alignment(v, "`alignment`")?,
        };

        // budget
        let budget = match model.get("budget") {
            None => None,
            Some(v) => Some(self.budget(v)?),
        };

        // solver
        let solver = match model.get("solver") {
            None => None,
            Some(v) => {
                let name = self.string(v, "`solver`")?;
                Some(name.parse::<Solver>().map_err(|_| {
                    self.source.error(
                        &v.span(),
                        format!("unknown solver `{name}`"),
                        format!(
                            "use one of: {}; or leave `solver` out for the default (`auto`)",
                            crate::solve::known_solver_names()
                        ),
                    )
                })?)
            }
        };

        // node budget of the exact search
        let nodes = match model.get("nodes") {
            None => None,
            Some(v) => Some(self.node_budget(v)?),
        };

        // in-place ops
        let inplace = match model.get("inplace") {
            None => true,
            Some(v) => self.boolean(v, "`inplace` of `[model]`")?,
        };

        // pools
        let pools = match top.get("pools") {
            None => Vec::new(),
            Some(v) => self.pools(v)?,
        };

        // tensors
        let (tensors, tensor_spans) = match top.get("tensors") {
            None => {
                // At the `[model]` header: `[tensors]` follows it.
                return Err(self.source.error(
                    &key_span(top, "model"),
                    "missing `[tensors]` table",
                    "add `[tensors]` with one entry per activation tensor, e.g. \
                     `input = { dtype = \"f32\", shape = [1, 28, 28] }`",
                ));
            }
            Some(v) => self.tensors(v, alignment, &pools)?,
        };
        let index: BTreeMap<&str, usize> = tensors
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.as_str(), i))
            .collect();

        // weights: constants, named like tensors but never one
        let weights = match top.get("weights") {
            None => Vec::new(),
            Some(v) => self.weights(v, &index)?,
        };
        let weight_index: BTreeMap<&str, usize> = weights
            .iter()
            .enumerate()
            .map(|(i, w)| (w.name.as_str(), i))
            .collect();
        let names = Names {
            tensors: &index,
            weights: &weight_index,
        };

        // graph inputs and outputs
        let inputs = match model.get("inputs") {
            None => (Vec::new(), Vec::new()),
            Some(v) => self.references(v, &names, "`inputs` of `[model]`")?,
        };
        let outputs = match model.get("outputs") {
            None => (Vec::new(), Vec::new()),
            Some(v) => self.references(v, &names, "`outputs` of `[model]`")?,
        };
        self.no_repeats(&inputs, &tensors, "graph inputs")?;
        self.no_repeats(&outputs, &tensors, "graph outputs")?;

        // ops
        let (ops, op_spans) = match top.get("ops") {
            None => (Vec::new(), Vec::new()),
            Some(v) => self.ops(v, &names)?,
        };
        if ops.is_empty() {
            return Err(self.source.error(
                &top.get("ops")
                    .map_or_else(|| key_span(top, "tensors"), Spanned::span),
                "the model has no ops",
                "add at least one `[[ops]]` table with `name`, `inputs` and `outputs`; ops run in \
                 file order and give the tensors their lifetimes",
            ));
        }
        self.names_do_not_collide(&tensors, &tensor_spans, &ops, &op_spans)?;

        let mut model = Model {
            file: self.source.file().to_owned(),
            name: name.to_owned(),
            alignment,
            budget,
            solver,
            nodes,
            inputs: inputs.0,
            outputs: outputs.0,
            tensors,
            ops,
            weights,
            pools,
            inplace,
            aliases: Vec::new(),
            locations: ModelLocations {
                model: self.source.location(model_span.start),
                name: self.source.location(name_value.span().start),
                budget: model
                    .get("budget")
                    .map(|v| self.source.location(v.span().start)),
            },
        };
        let lifetimes = self.lifetimes(&model, &tensor_spans, &op_spans, &outputs.1)?;
        for (tensor, lifetime) in model.tensors.iter_mut().zip(lifetimes) {
            tensor.lifetime = lifetime;
        }
        model.aliases = self.aliases(&model, &op_spans)?;
        Ok(model)
    }

    pub(super) fn budget(&self, value: &Value<'_>) -> Result<u64> {
        let budget = self.byte_count(value, "`budget`")?;
        if budget == 0 {
            return Err(self.source.error(
                &value.span(),
                "`budget` is 0",
                "give the largest arena allowed, e.g. `budget = \"512 KiB\"`, or remove `budget`",
            ));
        }
        Ok(budget)
    }

    pub(super) fn node_budget(&self, value: &Value<'_>) -> Result<u64> {
        let help = || {
            format!(
                "give the most search nodes `exact` and `auto` may use, from 0 (heuristics only) \
                 to {MAX_NODE_BUDGET}, e.g. `nodes = 100000`; or remove `nodes` for the default \
                 ({})",
                crate::DEFAULT_NODE_BUDGET
            )
        };
        let nodes = match value.get_ref() {
            DeValue::Integer(i) => u64::from_str_radix(i.as_str(), i.radix()).ok(),
            other => {
                return Err(self.source.error(
                    &value.span(),
                    format!("`nodes` must be an integer, not {}", kind(other)),
                    help(),
                ));
            }
        };
        match nodes {
            Some(nodes) if nodes <= MAX_NODE_BUDGET => Ok(nodes),
            _ => Err(self.source.error(
                &value.span(),
                format!("`nodes` is out of range (0 to {MAX_NODE_BUDGET})"),
                help(),
            )),
        }
    }
}
