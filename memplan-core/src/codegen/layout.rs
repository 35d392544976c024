//! The vocabulary the generated code is made of, derived from a model and its plan, which the
//! items ([`super::items`]), the interpreter tables ([`super::tables`]) and the rustdoc
//! ([`super::docs`]) all use: which items get their own docs, the lifetimes `TENSORS` reports,
//! and each op's in-place aliases, view fields and arena cuts. It depends on none of them, so
//! data flows one way: the items take the tables and the docs, and all three take this.

use crate::model_file::{Alias, Model};
use crate::model_plan::ModelPlan;

/// Models up to this many tensors get rustdoc on every generated item; bigger ones only on the
/// module and the item groups, so the docs stay a bounded size per tensor that rustdoc and the
/// compiler handle quickly (the module's table lists the tensors).
pub(crate) const PER_ITEM_DOCS_UP_TO: usize = 2000;

/// Whether every item of `model` gets its own rustdoc.
pub(crate) fn per_item_docs(model: &Model) -> bool {
    model.tensors.len() <= PER_ITEM_DOCS_UP_TO
}

/// The `[start, end)` each placement of `TENSORS` reports, per model tensor: an input that an op
/// overwrites in place ends at that op's step, where its bytes become the output's. The CLI shows
/// and checks these same lifetimes.
pub fn reported_lifetimes(model: &Model) -> Vec<(u64, u64)> {
    let mut lifetimes: Vec<(u64, u64)> = model
        .tensors
        .iter()
        .map(|t| (t.lifetime.start, t.lifetime.end))
        .collect();
    // The first alias of an input wins, as a search from the front would find it.
    for alias in model.aliases.iter().rev() {
        lifetimes[alias.input].1 = alias.op as u64;
    }
    lifetimes
}

/// The in-place aliases of each op, in model order.
pub(crate) fn aliases_by_op(model: &Model) -> Vec<Vec<&Alias>> {
    let mut by_op = vec![Vec::new(); model.ops.len()];
    for alias in &model.aliases {
        by_op[alias.op].push(alias);
    }
    by_op
}

/// One field of an op's view struct.
pub(crate) struct Field {
    pub(crate) tensor: usize,
    pub(crate) mutable: bool,
    /// The input this output overwrites in place, if any.
    pub(crate) absorbs: Option<usize>,
}

/// The fields of op `k`'s view struct, in order: inputs, then outputs and scratch; a tensor
/// listed twice is one field, and an input overwritten in place is its output's field.
pub(crate) fn op_fields(model: &Model, k: usize, aliases: &[&Alias]) -> Vec<Field> {
    let op = &model.ops[k];
    let absorbed = |input: usize| aliases.iter().any(|a| a.input == input);
    let mut fields: Vec<Field> = Vec::new();
    let roles = op
        .inputs
        .iter()
        .map(|&t| (t, false))
        .chain(op.outputs.iter().chain(&op.scratch).map(|&t| (t, true)));
    for (t, mutable) in roles {
        if (!mutable && absorbed(t)) || fields.iter().any(|f| f.tensor == t) {
            continue;
        }
        let absorbs = aliases.iter().find(|a| a.output == t).map(|a| a.input);
        fields.push(Field {
            tensor: t,
            mutable,
            absorbs,
        });
    }
    fields
}

/// One arena view of an op, as cut from its pool: `gap` bytes after the previous view's end.
pub(crate) struct ViewCut {
    pub(crate) pool: usize,
    pub(crate) gap: u64,
    pub(crate) size: u64,
    /// Index into the op's fields.
    pub(crate) field: usize,
}

/// The arena views of `fields`, in pool order, then offset order (external tensors have none).
pub(crate) fn view_cuts(model: &Model, plan: &ModelPlan, fields: &[Field]) -> Vec<ViewCut> {
    let mut order: Vec<(usize, u64, usize)> = fields
        .iter()
        .enumerate()
        .filter_map(|(f, field)| {
            plan.tensors[field.tensor].map(|place| (place.pool, place.offset, f))
        })
        .collect();
    order.sort_by_key(|&(pool, offset, f)| (pool, offset, fields[f].tensor));
    let mut cuts = Vec::with_capacity(order.len());
    let mut cursor = (usize::MAX, 0u64);
    for (pool, offset, f) in order {
        if cursor.0 != pool {
            cursor = (pool, 0);
        }
        // An output written over a larger input views the input's bytes: an in-place kernel
        // reads the input through it (its own elements come first).
        let field = &fields[f];
        let size = field.absorbs.map_or(0, |i| model.tensors[i].size);
        let size = size.max(model.tensors[field.tensor].size);
        cuts.push(ViewCut {
            pool,
            gap: offset - cursor.1,
            size,
            field: f,
        });
        cursor.1 = offset + size;
    }
    cuts
}
