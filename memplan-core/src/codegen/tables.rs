//! The tables for interpreters: each tensor's shape and dtype, the weights, the ops with their
//! operands and attributes, and `views(k)`, all `const` data beside the named items.
//!
//! A generic interpreter has an op index, not a name: `OPS[k]` says what op `k` is (its `kind`,
//! operands as indices into `TENSOR_INFO`/`WEIGHTS`, its attributes), and `views(k)` hands out
//! its arena views, cut with the op's precomputed `cuts` (one `split_at_mut` per view, in offset
//! order). Per-op attribute constants (`attrs::<op>::STRIDES`) serve hand-written code.

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::codegen::layout::{aliases_by_op, op_fields, per_item_docs, view_cuts};
use crate::model_file::{AttrValue, DType, Layout, Model, OpInput, sanitize_identifier};
use crate::model_plan::ModelPlan;

/// Which tables a generated module holds beside its named items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tables {
    /// Everything: `shape`/`dtype`, and the index tables an interpreter loops over
    /// (`TENSOR_INFO`, `WEIGHTS`, `attrs`, `OPS`, `MAX_VIEWS`, `views(k)`). What `memplan!` gives.
    Interpreter,
    /// The named items only (`shape::<t>`, `dtype::<t>`): for a caller that emits its own table
    /// of the same network (memplan-build's `network::{VALUES, CONSTANTS, NODES}`, which its
    /// kernels' program describes), so that a generated module has one table, not two.
    Named,
}

/// `__memplan::F32`: the dtype through the module's private alias of `::memplan::__private`.
fn dtype_path(dtype: DType) -> String {
    format!("__memplan::{}", dtype.name().to_ascii_uppercase())
}

/// `::memplan::__private::F32`, for the submodules `dtype` and `weight_dtype`.
fn dtype_full_path(dtype: DType) -> String {
    format!(
        "::memplan::__private::{}",
        dtype.name().to_ascii_uppercase()
    )
}

fn list<T>(items: impl IntoIterator<Item = T>, f: impl Fn(T) -> String) -> String {
    items.into_iter().map(f).collect::<Vec<_>>().join(", ")
}

/// A Rust `f64` expression that is exactly `value`.
fn float(value: f64) -> String {
    if value.is_nan() {
        "::core::primitive::f64::NAN".to_owned()
    } else if value.is_infinite() {
        if value > 0.0 {
            "::core::primitive::f64::INFINITY".to_owned()
        } else {
            "::core::primitive::f64::NEG_INFINITY".to_owned()
        }
    } else {
        // Debug is the shortest text that reads back to the same bits, always with `.` or `e`.
        format!("{value:?}")
    }
}

/// `(type, value)` of an attribute's constant.
fn attr_const(value: &AttrValue) -> (String, String) {
    match value {
        AttrValue::Int(i) => ("::core::primitive::i64".into(), i.to_string()),
        AttrValue::Float(f) => ("::core::primitive::f64".into(), float(*f)),
        AttrValue::Str(s) => ("&::core::primitive::str".into(), format!("{s:?}")),
        AttrValue::Bool(b) => ("::core::primitive::bool".into(), b.to_string()),
        AttrValue::Ints(v) => (
            format!("[::core::primitive::i64; {}]", v.len()),
            format!("[{}]", list(v, i64::to_string)),
        ),
        AttrValue::Floats(v) => (
            format!("[::core::primitive::f64; {}]", v.len()),
            format!("[{}]", list(v, |f| float(*f))),
        ),
        AttrValue::Strs(v) => (
            format!("[&::core::primitive::str; {}]", v.len()),
            format!("[{}]", list(v, |s| format!("{s:?}"))),
        ),
    }
}

/// `::memplan::Attr::Ints(&[2, 2])`.
fn attr_value(value: &AttrValue) -> String {
    let (_, literal) = attr_const(value);
    let variant = match value {
        AttrValue::Int(_) => "Int",
        AttrValue::Float(_) => "Float",
        AttrValue::Str(_) => "Str",
        AttrValue::Bool(_) => "Bool",
        AttrValue::Ints(_) => "Ints",
        AttrValue::Floats(_) => "Floats",
        AttrValue::Strs(_) => "Strs",
    };
    let reference = if matches!(
        value,
        AttrValue::Ints(_) | AttrValue::Floats(_) | AttrValue::Strs(_)
    ) {
        "&"
    } else {
        ""
    };
    format!("::memplan::Attr::{variant}({reference}{literal})")
}

/// The constant names of an op's attributes: upper case, invalid characters as `_`, and a
/// `_2`, `_3`, ... suffix for a name already taken, in file order, so they never collide.
pub(crate) fn attr_const_names(attrs: &[(String, AttrValue)]) -> Vec<String> {
    let mut taken = BTreeSet::new();
    attrs
        .iter()
        .map(|(name, _)| {
            // `transB` -> `TRANS_B`, `auto_pad` -> `AUTO_PAD`.
            let mut screaming = String::with_capacity(name.len() + 4);
            let mut previous_lower = false;
            for c in name.chars() {
                if c.is_ascii_uppercase() && previous_lower {
                    screaming.push('_');
                }
                previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
                screaming.push(c.to_ascii_uppercase());
            }
            let base = sanitize_identifier(&screaming);
            let mut candidate = base.clone();
            let mut n = 2;
            while taken.contains(&candidate) {
                candidate = format!("{base}_{n}");
                n += 1;
            }
            taken.insert(candidate.clone());
            candidate
        })
        .collect()
}

/// `#[doc = ".."]`, or nothing for a big model (see [`per_item_docs`]).
fn doc(model: &Model, text: impl FnOnce() -> String) -> String {
    if per_item_docs(model) {
        format!("#[doc = {:?}]", text())
    } else {
        String::new()
    }
}

/// Shapes, dtypes, `TENSOR_INFO`, `WEIGHTS`, weight shapes and dtypes, attribute constants,
/// `OPS` and `MAX_VIEWS`, as source text for the model's module.
pub(crate) fn tables(model: &Model, plan: &ModelPlan, which: Tables) -> String {
    let mut out = String::with_capacity(256 * (model.tensors.len() + model.ops.len()));
    out.push_str("#[allow(unused_imports)]\nuse ::memplan::__private as __memplan;\n");
    let dims = |shape: &[u64]| list(shape, u64::to_string);
    let (shapes, dtypes): (Vec<String>, Vec<DType>) = model
        .tensors
        .iter()
        .map(|t| match &t.layout {
            Layout::Typed { dtype, shape } => (dims(shape), *dtype),
            Layout::Bytes => (t.size.to_string(), DType::U8),
        })
        .unzip();

    // shape::<t>, dtype::<t>
    out.push_str(
        "/// Dimensions of each tensor (`[bytes]` for a raw one).\n\
         #[allow(non_upper_case_globals)]\npub mod shape {\n",
    );
    for (t, shape) in model.tensors.iter().zip(&shapes) {
        let rank = shape.split(", ").count();
        let _ = writeln!(
            out,
            "{}\npub const {}: [usize; {rank}] = [{shape}];",
            doc(model, || format!("Dimensions of `{}`.", t.name)),
            t.name
        );
    }
    out.push_str(
        "}\n/// Element type of each tensor (`U8` for a raw one).\n\
         #[allow(non_upper_case_globals)]\npub mod dtype {\n",
    );
    for (t, dtype) in model.tensors.iter().zip(&dtypes) {
        let _ = writeln!(
            out,
            "{}\npub const {}: ::memplan::DType = {};",
            doc(model, || format!("Element type of `{}`.", t.name)),
            t.name,
            dtype_full_path(*dtype)
        );
    }
    out.push_str("}\n");
    if which == Tables::Named {
        return out;
    }

    // TENSOR_INFO
    out.push_str(
        "/// Every tensor of the model, in model order (external ones too): the indices of \
         [`OPS`] refer to it.\npub const TENSOR_INFO: &[::memplan::TensorInfo] = &[\n",
    );
    for (i, t) in model.tensors.iter().enumerate() {
        let (pool, offset) = plan.tensors[i].map_or((0, 0), |p| (p.pool, p.offset));
        let _ = writeln!(
            out,
            "__memplan::tensor_info({:?}, {}, &shape::{}, {}, {pool}, {offset}, {}),",
            t.name,
            dtype_path(dtypes[i]),
            t.name,
            t.size,
            t.memory.external
        );
    }
    out.push_str("];\n");

    // WEIGHTS, weight_shape, weight_dtype
    out.push_str(
        "/// The model's constants (`[weights]`), in file order: described, never stored.\n\
         pub const WEIGHTS: &[::memplan::WeightInfo] = &[\n",
    );
    for w in &model.weights {
        let source = w
            .source
            .as_ref()
            .map_or("::core::option::Option::None".to_owned(), |s| {
                format!("::core::option::Option::Some({s:?})")
            });
        let _ = writeln!(
            out,
            "::memplan::WeightInfo {{ name: {:?}, dtype: {}, shape: &[{}], source: {source} }},",
            w.name,
            dtype_path(w.dtype),
            dims(&w.shape)
        );
    }
    out.push_str("];\n");
    if !model.weights.is_empty() {
        out.push_str(
            "/// Dimensions of each weight.\n#[allow(non_upper_case_globals)]\npub mod weight_shape {\n",
        );
        for w in &model.weights {
            let _ = writeln!(
                out,
                "{}\npub const {}: [usize; {}] = [{}];",
                doc(model, || format!("Dimensions of weight `{}`.", w.name)),
                w.name,
                w.shape.len(),
                dims(&w.shape)
            );
        }
        out.push_str(
            "}\n/// Element type of each weight.\n#[allow(non_upper_case_globals)]\npub mod weight_dtype {\n",
        );
        for w in &model.weights {
            let _ = writeln!(
                out,
                "{}\npub const {}: ::memplan::DType = {};",
                doc(model, || format!("Element type of weight `{}`.", w.name)),
                w.name,
                dtype_full_path(w.dtype)
            );
        }
        out.push_str("}\n");
    }

    // attrs::<op>::<NAME>
    if model.ops.iter().any(|op| !op.attrs.is_empty()) {
        out.push_str(
            "/// Each op's attributes as constants (`attrs::conv1::STRIDES`).\npub mod attrs {\n",
        );
        for op in model.ops.iter().filter(|op| !op.attrs.is_empty()) {
            let _ = writeln!(
                out,
                "{}\n#[allow(non_snake_case)]\npub mod {} {{",
                doc(model, || format!("Attributes of op `{}`.", op.name)),
                op.name
            );
            for ((name, value), constant) in op.attrs.iter().zip(attr_const_names(&op.attrs)) {
                let (ty, literal) = attr_const(value);
                let _ = writeln!(
                    out,
                    "{}\npub const {constant}: {ty} = {literal};",
                    doc(model, || format!("`{name}`"))
                );
            }
            out.push_str("}\n");
        }
        out.push_str("}\n");
    }

    // OPS
    let aliases = aliases_by_op(model);
    let mut max_views = 0;
    out.push_str(
        "/// Every op in schedule order (`OPS[k]` runs at step `k`): its kind, operands, \
         attributes and view cuts, for interpreters; `views(k)` hands out its views.\n\
         pub const OPS: &[::memplan::OpInfo] = &[\n",
    );
    for (k, op) in model.ops.iter().enumerate() {
        let inputs = list(op.input_list(), |input| match input {
            OpInput::Tensor(t) => format!("__memplan::tensor({t})"),
            OpInput::Weight(w) => format!("__memplan::weight({w})"),
            OpInput::Absent => "__memplan::ABSENT".to_owned(),
        });
        let indices = |v: &[usize]| list(v, usize::to_string);
        let inplace = list(&aliases[k], |a| format!("({}, {})", a.output, a.input));
        let attrs = list(&op.attrs, |(name, value)| {
            format!("({name:?}, {})", attr_value(value))
        });
        let fields = op_fields(model, k, &aliases[k]);
        let cuts = view_cuts(model, plan, &fields);
        max_views = max_views.max(cuts.len());
        let cuts = list(&cuts, |c| {
            let field = &fields[c.field];
            let absorbs = field
                .absorbs
                .map_or("::core::option::Option::None".to_owned(), |a| {
                    format!("::core::option::Option::Some({a})")
                });
            format!(
                "::memplan::Cut {{ pool: {}, gap: {}, size: {}, tensor: {}, absorbs: {absorbs} }}",
                c.pool, c.gap, c.size, field.tensor
            )
        });
        let kind = op.kind.as_deref().unwrap_or("");
        let _ = writeln!(
            out,
            "__memplan::op_info({:?}, {kind:?}, {k}, &[{inputs}], &[{}], &[{}], &[{inplace}], \
             &[{attrs}], &[{cuts}]),",
            op.name,
            indices(&op.outputs),
            indices(&op.scratch),
        );
    }
    out.push_str("];\n");
    let _ = writeln!(
        out,
        "/// The most arena views of one op: the capacity of [`::memplan::Views`] from `views`.\n\
         pub const MAX_VIEWS: usize = {max_views};"
    );
    out
}

/// `views(k)`: the method on `Arena` (one pool) or `Arenas` (several), as source text.
pub(crate) fn views_method(plan: &ModelPlan) -> String {
    let several = !matches!(plan.pools.as_slice(), [pool] if pool.default);
    let pools = if several {
        list(&plan.pools, |p| format!("&mut self.{}.bytes[..]", p.name))
    } else {
        "&mut self.bytes[..]".to_owned()
    };
    format!(
        "/// All arena views of op `k` (`OPS[k]`), for an interpreter's loop; `None` if there is \
         no op `k`. Take each view by its tensor index (`TENSOR_INFO`).\n\
         #[inline]\n\
         pub fn views(&mut self, k: usize) -> ::core::option::Option<::memplan::Views<'_, MAX_VIEWS>> {{\n\
         let op = OPS.get(k)?;\n\
         ::memplan::__private::views([{pools}], op.cuts)\n}}\n"
    )
}
