//! The `[[ops]]` tables: each op's inputs, outputs, scratch, kind, attributes and in-place pairs,
//! then the schedule they make (lifetimes, with an error at the reference that breaks it) and the
//! in-place pairs chosen from them.

use std::collections::BTreeMap;
use std::ops::Range;

use toml::Spanned;
use toml::de::DeValue;

use super::values::{in_file_order, kind};
use super::{Names, Parser, Result, Value};
use crate::lifetime::{LifetimeError, OpTensors, Producer, Role, Schedule, derive_lifetimes};
use crate::model::Lifetime;
use crate::model_file::inplace::{Chains, automatic};
use crate::model_file::source::did_you_mean;
use crate::model_file::{Alias, AttrValue, Model, Op, OpInput, Tensor};

const OP_KEYS: [&str; 8] = [
    "name", "inputs", "outputs", "scratch", "kind", "source", "inplace", "attrs",
];

/// Spans of an op's references, kept to point errors at the exact name.
pub(super) struct OpSpans {
    pub(super) name: Range<usize>,
    pub(super) inputs: Vec<Range<usize>>,
    pub(super) outputs: Vec<Range<usize>>,
    pub(super) scratch: Vec<Range<usize>>,
    /// `inplace` entries: (output key, input value) spans, in file order.
    pub(super) inplace: Vec<(Range<usize>, Range<usize>)>,
}

impl Parser<'_> {
    pub(super) fn ops(
        &self,
        value: &Value<'_>,
        refs: &Names<'_>,
    ) -> Result<(Vec<Op>, Vec<OpSpans>)> {
        let index = refs.tensors;
        let help = "write each op as an `[[ops]]` table with `name`, `inputs` and `outputs`";
        let DeValue::Array(items) = value.get_ref() else {
            return Err(self
                .source
                .error(&value.span(), "`ops` is not an array of tables", help));
        };
        let mut ops: Vec<Op> = Vec::with_capacity(items.len());
        let mut spans = Vec::with_capacity(items.len());
        let mut names: BTreeMap<&str, usize> = BTreeMap::new();
        for (k, item) in items.iter().enumerate() {
            let table = self.table(item, &format!("the op at index {k} of `ops`"), help)?;
            // Named when it has a name already, so an unknown key says which op it is in.
            let named = match table.get("name").map(Spanned::get_ref) {
                Some(DeValue::String(name)) => format!("op `{name}` (index {k})"),
                _ => format!("the op at index {k}"),
            };
            self.check_keys(table, &OP_KEYS, &format!("in {named}"), |_| {
                "an op has `name`, `inputs`, `outputs`, and optionally `scratch`, `kind`, `source`, \
                 `inplace` and `attrs`"
                    .into()
            })?;
            let Some(name_value) = table.get("name") else {
                return Err(self.source.error(
                    &item.span(),
                    format!("the op at index {k} (counting `[[ops]]` from 0) has no `name`"),
                    "add `name = \"conv1\"`: it names the op's view method (`op_conv1`)",
                ));
            };
            let name = self.string(name_value, "op `name`")?;
            self.identifier(
                name,
                &name_value.span(),
                "op name",
                "it names the op's view method",
            )?;
            if let Some(&first) = names.get(name) {
                let first_at = ops[first].location;
                return Err(self.source.error(
                    &name_value.span(),
                    format!(
                        "duplicate op name `{name}`: the op at index {first} ({}:{}:{}) has it too",
                        self.source.file(),
                        first_at.line,
                        first_at.column
                    ),
                    "give every op a unique name",
                ));
            }
            names.insert(name, k);
            let what = |list: &str| format!("`{list}` of op `{name}`");
            let list = |key: &str| -> Result<(Vec<usize>, Vec<Range<usize>>)> {
                match table.get(key) {
                    None => Ok((Vec::new(), Vec::new())),
                    Some(v) => self.references(v, refs, &what(key)),
                }
            };
            let (all_inputs, inputs, input_spans) = match table.get("inputs") {
                None => (Vec::new(), Vec::new(), Vec::new()),
                Some(v) => self.op_inputs(v, refs, &what("inputs"))?,
            };
            let (outputs, output_spans) = list("outputs")?;
            let (scratch, scratch_spans) = list("scratch")?;
            let optional_string = |key: &str| -> Result<Option<String>> {
                table
                    .get(key)
                    .map(|v| self.string(v, &what(key)).map(str::to_owned))
                    .transpose()
            };
            let mut inplace_any_kind = false;
            let (inplace, inplace_spans) = match table.get("inplace") {
                None => (None, Vec::new()),
                // `inplace = false`: never in place; `true`: in place where the planner can,
                // whatever the kind.
                Some(v) if matches!(v.get_ref(), DeValue::Boolean(_)) => {
                    let allowed = self.boolean(v, &what("inplace"))?;
                    inplace_any_kind = allowed;
                    (if allowed { None } else { Some(Vec::new()) }, Vec::new())
                }
                Some(v) => {
                    let (pairs, spans) = self.inplace_table(v, index, &what("inplace"))?;
                    (Some(pairs), spans)
                }
            };
            let attrs = match table.get("attrs") {
                None => Vec::new(),
                Some(v) => self.attrs(v, &what("attrs"))?,
            };
            ops.push(Op {
                name: name.to_owned(),
                kind: optional_string("kind")?,
                source: optional_string("source")?,
                inputs,
                all_inputs,
                attrs,
                outputs,
                scratch,
                inplace,
                inplace_any_kind,
                location: self.source.location(item.span().start),
            });
            spans.push(OpSpans {
                name: name_value.span(),
                inputs: input_spans,
                outputs: output_spans,
                scratch: scratch_spans,
                inplace: inplace_spans,
            });
        }
        Ok((ops, spans))
    }

    /// An op's `inputs`: tensors, weights and `""` (absent), in order. Returns the full list,
    /// the tensors alone, and the tensors' spans.
    #[allow(clippy::type_complexity)]
    pub(super) fn op_inputs(
        &self,
        value: &Value<'_>,
        names: &Names<'_>,
        what: &str,
    ) -> Result<(Vec<OpInput>, Vec<usize>, Vec<Range<usize>>)> {
        let DeValue::Array(items) = value.get_ref() else {
            return Err(self.source.error(
                &value.span(),
                format!("{what} must be an array of tensor or weight names"),
                "write it as `[\"x\", \"conv1_weight\"]`, with `\"\"` for an absent optional input",
            ));
        };
        let mut all = Vec::with_capacity(items.len());
        let mut tensors = Vec::with_capacity(items.len());
        let mut spans = Vec::with_capacity(items.len());
        for item in items.iter() {
            let name = self.string(item, &format!("an entry of {what}"))?;
            if name.is_empty() {
                all.push(OpInput::Absent);
            } else if let Some(&t) = names.tensors.get(name) {
                all.push(OpInput::Tensor(t));
                tensors.push(t);
                spans.push(item.span());
            } else if let Some(&w) = names.weights.get(name) {
                all.push(OpInput::Weight(w));
            } else if names.weights.is_empty() {
                return Err(self.source.error(
                    &item.span(),
                    format!("unknown tensor `{name}` in {what}"),
                    format!(
                        "declare `{name}` under `[tensors]`, or fix the name{}",
                        did_you_mean(name, names.tensors.keys().copied())
                    ),
                ));
            } else {
                return Err(self.source.error(
                    &item.span(),
                    format!("unknown tensor or weight `{name}` in {what}"),
                    format!(
                        "declare `{name}` under `[tensors]` (an activation) or `[weights]` (a \
                         constant), write `\"\"` for an absent optional input, or fix the name{}",
                        did_you_mean(
                            name,
                            names.tensors.keys().chain(names.weights.keys()).copied()
                        )
                    ),
                ));
            }
        }
        Ok((all, tensors, spans))
    }

    /// An op's `attrs = { strides = [2, 2], auto_pad = "NOTSET", alpha = 0.2 }`, in file order.
    pub(super) fn attrs(&self, value: &Value<'_>, what: &str) -> Result<Vec<(String, AttrValue)>> {
        let table = self.table(
            value,
            what,
            "write it as an inline table, e.g. `attrs = { strides = [2, 2], group = 1 }`",
        )?;
        let entries = in_file_order(table);
        let mut attrs = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            let name: &str = key.get_ref();
            if name.is_empty() {
                return Err(self.source.error(
                    &key.span(),
                    format!("an attribute of {what} has an empty name"),
                    "name every attribute, e.g. `group = 1`",
                ));
            }
            let what = format!("attribute `{name}` of {what}");
            attrs.push((name.to_owned(), self.attr_value(value, &what)?));
        }
        Ok(attrs)
    }

    pub(super) fn attr_value(&self, value: &Value<'_>, what: &str) -> Result<AttrValue> {
        let help = "an attribute is an integer, a float, a string, a boolean, or an array of \
                    integers, floats or strings (`[]` allowed)";
        Ok(match value.get_ref() {
            DeValue::Integer(_) => AttrValue::Int(self.signed(value, what)?),
            DeValue::Float(_) => AttrValue::Float(self.float(value, what)?),
            DeValue::String(s) => AttrValue::Str(s.to_string()),
            DeValue::Boolean(b) => AttrValue::Bool(*b),
            DeValue::Array(items) => {
                let all = |f: fn(&DeValue<'_>) -> bool| items.iter().all(|i| f(i.get_ref()));
                let is_int = |v: &DeValue<'_>| matches!(v, DeValue::Integer(_));
                let is_number =
                    |v: &DeValue<'_>| matches!(v, DeValue::Integer(_) | DeValue::Float(_));
                let is_str = |v: &DeValue<'_>| matches!(v, DeValue::String(_));
                if all(is_int) {
                    AttrValue::Ints(
                        items
                            .iter()
                            .map(|i| self.signed(i, what))
                            .collect::<Result<_>>()?,
                    )
                } else if all(is_number) {
                    AttrValue::Floats(
                        items
                            .iter()
                            .map(|i| self.float(i, what))
                            .collect::<Result<_>>()?,
                    )
                } else if all(is_str) {
                    AttrValue::Strs(
                        items
                            .iter()
                            .map(|i| self.string(i, what).map(str::to_owned))
                            .collect::<Result<_>>()?,
                    )
                } else {
                    let odd = items
                        .iter()
                        .find(|i| {
                            !(is_number(i.get_ref())
                                || is_str(i.get_ref()) && is_str(items[0].get_ref()))
                        })
                        .map_or_else(|| value.span(), Spanned::span);
                    return Err(self.source.error(
                        &odd,
                        format!("{what} mixes kinds of values or holds an array or table"),
                        format!("{help}; all entries of one kind"),
                    ));
                }
            }
            other => {
                return Err(self.source.error(
                    &value.span(),
                    format!("{what} is {}, which an attribute cannot be", kind(other)),
                    help,
                ));
            }
        })
    }

    pub(super) fn signed(&self, value: &Value<'_>, what: &str) -> Result<i64> {
        match value.get_ref() {
            DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix()).map_err(|_| {
                self.source.error(
                    &value.span(),
                    format!("{what} must fit in a 64-bit signed integer, not {i}"),
                    "write an integer between -2^63 and 2^63 - 1",
                )
            }),
            other => Err(self.source.error(
                &value.span(),
                format!("{what} must be an integer, not {}", kind(other)),
                "write an integer without quotes",
            )),
        }
    }

    pub(super) fn float(&self, value: &Value<'_>, what: &str) -> Result<f64> {
        let text = match value.get_ref() {
            DeValue::Integer(i) if i.radix() == 10 => i.as_str(),
            DeValue::Float(f) => f.as_str(),
            other => {
                return Err(self.source.error(
                    &value.span(),
                    format!("{what} must be a number, not {}", kind(other)),
                    "write a decimal number, e.g. `0.2`",
                ));
            }
        };
        let text = text.replace('_', "");
        let parsed = match text.trim_start_matches(['+', '-']) {
            "inf" => Some(f64::INFINITY),
            "nan" => Some(f64::NAN),
            _ => text.trim_start_matches('+').parse::<f64>().ok(),
        }
        .map(|v| {
            if text.starts_with('-') && !v.is_sign_negative() {
                -v
            } else {
                v
            }
        });
        parsed.ok_or_else(|| {
            self.source.error(
                &value.span(),
                format!("{what} `{text}` is not a number"),
                "write a decimal number, e.g. `0.2` or `1e-5`",
            )
        })
    }

    /// `inplace = { out = "in", ... }` of an op: `(output, input)` pairs with their spans.
    #[allow(clippy::type_complexity)]
    pub(super) fn inplace_table(
        &self,
        value: &Value<'_>,
        index: &BTreeMap<&str, usize>,
        what: &str,
    ) -> Result<(Vec<(usize, usize)>, Vec<(Range<usize>, Range<usize>)>)> {
        let table = self.table(
            value,
            what,
            "write it as `inplace = { relu1 = \"conv1\" }` (output = the input whose memory it \
             takes), or `inplace = false`",
        )?;
        let entries = in_file_order(table);
        let resolve = |name: &str, span: &Range<usize>| -> Result<usize> {
            index.get(name).copied().ok_or_else(|| {
                self.source.error(
                    span,
                    format!("unknown tensor `{name}` in {what}"),
                    format!(
                        "name an output of the op and one of its inputs{}",
                        did_you_mean(name, index.keys().copied())
                    ),
                )
            })
        };
        let mut pairs = Vec::with_capacity(entries.len());
        let mut spans = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            let output = resolve(key.get_ref(), &key.span())?;
            let input_name = self.string(value, &format!("an entry of {what}"))?;
            let input = resolve(input_name, &value.span())?;
            pairs.push((output, input));
            spans.push((key.span(), value.span()));
        }
        Ok((pairs, spans))
    }

    /// The in-place pairs: declared ones (checked, with an error at the entry when refused) and
    /// those the ops' kinds allow. Empty when `[model] inplace = false`, which refuses declared
    /// pairs with an error at the first one.
    pub(super) fn aliases(&self, model: &Model, op_spans: &[OpSpans]) -> Result<Vec<Alias>> {
        let mut chains = Chains::new(model);
        let mut aliases = Vec::new();
        for (k, op) in model.ops.iter().enumerate() {
            match &op.inplace {
                Some(pairs) => {
                    for (&(output, input), (key_span, value_span)) in
                        pairs.iter().zip(&op_spans[k].inplace)
                    {
                        if let Err(refusal) = chains.check(model, k, output, input) {
                            let (message, help) = refusal.explain(model, k, output, input);
                            let span = match refusal {
                                crate::model_file::inplace::Refusal::NotAnOutput
                                | crate::model_file::inplace::Refusal::Larger
                                | crate::model_file::inplace::Refusal::OutputTaken => key_span,
                                _ => value_span,
                            };
                            return Err(self.source.error(span, message, help));
                        }
                        chains.join(output, input);
                        aliases.push(Alias {
                            op: k,
                            output,
                            input,
                            explicit: true,
                        });
                    }
                }
                None => {
                    for (output, input) in automatic(model, k, &mut chains) {
                        aliases.push(Alias {
                            op: k,
                            output,
                            input,
                            explicit: false,
                        });
                    }
                }
            }
        }
        if !model.inplace {
            // Declared pairs are not dropped silently: the model turns in-place off, the op
            // asks for it, and only the user can say which one is meant.
            if let Some((k, spans)) = op_spans
                .iter()
                .enumerate()
                .find_map(|(k, spans)| spans.inplace.first().map(|s| (k, s)))
            {
                return Err(self.source.error(
                    &spans.0,
                    format!(
                        "op `{}` declares an in-place pair, but `[model] inplace = false` turns \
                         in-place ops off",
                        model.ops[k].name
                    ),
                    "remove `inplace = false` from `[model]` to use the declared pairs (and \
                     those the ops' kinds allow), or remove this op's `inplace` table",
                ));
            }
            aliases.clear();
        }
        Ok(aliases)
    }

    /// The generated code has `Arena::new`, accessor `t` per tensor and `op_o` per op: they must
    /// not clash.
    pub(super) fn names_do_not_collide(
        &self,
        tensors: &[Tensor],
        tensor_spans: &[Range<usize>],
        ops: &[Op],
        op_spans: &[OpSpans],
    ) -> Result<()> {
        for (tensor, span) in tensors.iter().zip(tensor_spans) {
            if tensor.name == "new" {
                return Err(self.source.error(
                    span,
                    "tensor name `new` clashes with `Arena::new`",
                    "rename the tensor (for example `new_`)",
                ));
            }
        }
        let names: std::collections::BTreeSet<&str> =
            tensors.iter().map(|t| t.name.as_str()).collect();
        for (op, spans) in ops.iter().zip(op_spans) {
            let method = format!("op_{}", op.name);
            if names.contains(method.as_str()) {
                return Err(self.source.error(
                    &spans.name,
                    format!(
                        "op `{}` has view method `{method}`, which is also a tensor's accessor",
                        op.name
                    ),
                    format!("rename the op or the tensor `{method}`"),
                ));
            }
        }
        Ok(())
    }

    pub(super) fn lifetimes(
        &self,
        model: &Model,
        tensor_spans: &[Range<usize>],
        op_spans: &[OpSpans],
        output_spans: &[Range<usize>],
    ) -> Result<Vec<Lifetime>> {
        let op_tensors: Vec<OpTensors<'_>> = model
            .ops
            .iter()
            .map(|op| OpTensors {
                inputs: &op.inputs,
                outputs: &op.outputs,
                scratch: &op.scratch,
            })
            .collect();
        let schedule = Schedule {
            tensors: model.tensors.len(),
            inputs: &model.inputs,
            outputs: &model.outputs,
            ops: &op_tensors,
        };
        derive_lifetimes(&schedule).map_err(|error| {
            let tensor_name = |t: usize| model.tensors[t].name.as_str();
            let op_name = |k: usize| model.ops[k].name.as_str();
            let span_of = |op: usize, role: Role| match role {
                Role::Input(i) => op_spans[op].inputs[i].clone(),
                Role::Output(i) => op_spans[op].outputs[i].clone(),
                Role::Scratch(i) => op_spans[op].scratch[i].clone(),
            };
            match error {
                LifetimeError::NoOps => self.source.error(&(0..0), "the model has no ops", "add `[[ops]]`"),
                LifetimeError::ReadBeforeProduced { op, role, tensor, produced_at } => {
                    let (t, o) = (tensor_name(tensor), op_name(op));
                    let (message, help) = match produced_at {
                        Some(p) if p == op => (
                            format!("op `{o}` reads tensor `{t}`, which it also produces"),
                            "an op cannot read its own output; write the result to a new tensor".to_owned(),
                        ),
                        Some(p) => (
                            format!(
                                "tensor `{t}` is read by op `{o}` (step {op}) before it is produced by op `{}` (step {p})",
                                op_name(p)
                            ),
                            format!("move op `{}` before op `{o}`: ops run in file order", op_name(p)),
                        ),
                        None => (
                            format!("tensor `{t}` is read by op `{o}` but no op produces it"),
                            format!(
                                "list `{t}` in `[model] inputs` if the caller fills it, or in the `outputs` of an earlier op"
                            ),
                        ),
                    };
                    self.source.error(&span_of(op, role), message, help)
                }
                LifetimeError::ProducedTwice { op, role, tensor, first } => {
                    let (t, o) = (tensor_name(tensor), op_name(op));
                    let (message, help) = match first {
                        Producer::GraphInput => (
                            format!("tensor `{t}` is produced by op `{o}` but is also a graph input"),
                            format!("remove `{t}` from `[model] inputs`, or write op `{o}`'s result to a new tensor"),
                        ),
                        Producer::Op(j) => (
                            format!("tensor `{t}` is produced twice: by op `{}` and by op `{o}`", op_name(j)),
                            "every tensor has exactly one producer; write the second result to a new tensor".to_owned(),
                        ),
                    };
                    self.source.error(&span_of(op, role), message, help)
                }
                LifetimeError::SharedScratch { op, role, tensor } => self.source.error(
                    &span_of(op, role),
                    format!(
                        "tensor `{}` is scratch of one op but also used elsewhere (here, in op `{}`)",
                        tensor_name(tensor),
                        op_name(op)
                    ),
                    "scratch is private to one op and not a graph input or output; declare a separate scratch tensor per op",
                ),
                LifetimeError::Untouched { tensor } => self.source.error(
                    &tensor_spans[tensor],
                    format!("no op touches tensor `{}`", tensor_name(tensor)),
                    "remove it, or list it in an op's `inputs`, `outputs` or `scratch`",
                ),
                LifetimeError::OutputNeverProduced { position, tensor } => self.source.error(
                    &output_spans[position],
                    format!("graph output `{}` is never produced", tensor_name(tensor)),
                    "list it in the `outputs` of an op",
                ),
            }
        })
    }
}
