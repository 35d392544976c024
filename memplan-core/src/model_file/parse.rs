//! Reading a model file: TOML with spans, checked key by key, into a [`Model`].

use std::collections::BTreeMap;
use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::error::InputError;
use crate::lifetime::{LifetimeError, OpTensors, Producer, Role, Schedule, derive_lifetimes};
use crate::model::Lifetime;
use crate::model_file::inplace::{Chains, automatic};
use crate::model_file::source::{SourceText, did_you_mean};
use crate::model_file::{
    Alias, AttrValue, DEFAULT_ALIGNMENT, DType, Layout, MAX_ALIGNMENT, Model, ModelLocations, Op,
    OpInput, PoolDecl, Tensor, TensorMemory, Weight, identifier_problem, parse_byte_size,
};
use crate::solve::Solver;

/// The largest tensor accepted: 2^48 bytes (256 TiB), far beyond any device, small enough that
/// sums over many tensors never overflow.
pub const MAX_TENSOR_BYTES: u64 = 1 << 48;

/// The largest `[model] nodes` accepted (at a few microseconds a node, about an hour).
const MAX_NODE_BUDGET: u64 = 1_000_000_000;

/// The largest sum of all tensor sizes accepted (2^60 bytes).
const MAX_TOTAL_BYTES: u64 = 1 << 60;

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
const TENSOR_KEYS: [&str; 8] = [
    "dtype", "shape", "bytes", "align", "source", "pool", "offset", "external",
];
const OP_KEYS: [&str; 8] = [
    "name", "inputs", "outputs", "scratch", "kind", "source", "inplace", "attrs",
];
const WEIGHT_KEYS: [&str; 3] = ["dtype", "shape", "source"];
const POOL_KEYS: [&str; 3] = ["name", "size", "link_section"];
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

/// The largest `link_section` name accepted.
const MAX_SECTION_NAME: usize = 64;

/// Sections the loader, the start-up code or the code itself depend on: an arena there runs as
/// code, is executed before `main`, makes code or constants writable, or is thrown away. A
/// `link_section` equal to one of these or starting with one is refused.
const FORBIDDEN_SECTIONS: [&str; 34] = [
    ".init_array",
    ".fini_array",
    ".preinit_array",
    ".ctors",
    ".dtors",
    ".init",
    ".fini",
    ".text",
    ".rodata",
    ".plt",
    ".got",
    ".data.rel.ro",
    ".tdata",
    ".tbss",
    ".eh_frame",
    ".gcc_except_table",
    ".debug",
    ".zdebug",
    ".interp",
    ".dynamic",
    ".dynsym",
    ".dynstr",
    ".hash",
    ".gnu",
    ".rel",
    ".note",
    ".symtab",
    ".strtab",
    ".shstrtab",
    ".comment",
    ".ARM.exidx",
    ".ARM.extab",
    ".isr_vector",
    ".vector",
];

/// Why `section` may not hold an arena, or `None` if it may: a conservative charset (ASCII
/// letters, digits, `.`, `_`, `$`, and `,` for Mach-O `segment,section`), at most 64 characters,
/// none of [`FORBIDDEN_SECTIONS`] nor Mach-O's `__TEXT` segment.
pub(crate) fn link_section_problem(section: &str) -> Option<String> {
    if section.is_empty() {
        return Some("is empty".into());
    }
    if section.chars().count() > MAX_SECTION_NAME {
        return Some(format!("is longer than {MAX_SECTION_NAME} characters"));
    }
    if let Some(c) = section
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '$' | ',')))
    {
        return Some(format!(
            "contains {c:?}; a section name may only use ASCII letters, digits, `.`, `_`, `$` \
             and `,`"
        ));
    }
    if let Some(forbidden) = FORBIDDEN_SECTIONS.iter().find(|f| section.starts_with(**f)) {
        return Some(format!(
            "is (or starts with) `{forbidden}`, a section the program's loader, start-up code \
             or code depends on: an arena there would be run, made of code or constants, or \
             thrown away"
        ));
    }
    if section.starts_with("__TEXT") {
        return Some("is in Mach-O's `__TEXT` segment, which holds code and constants".into());
    }
    None
}

/// Names the generated module already uses, so no pool may take them.
const RESERVED_POOL_NAMES: [&str; 9] = [
    "__memplan",
    "offset",
    "len",
    "op",
    "shape",
    "dtype",
    "weight_shape",
    "weight_dtype",
    "attrs",
];

type Result<T> = std::result::Result<T, InputError>;
type Table<'i> = DeTable<'i>;
type Value<'i> = Spanned<DeValue<'i>>;

/// Parses and checks a model file: the TOML, every key, every name, and the schedule, deriving
/// each tensor's lifetime from the ops (see [`crate::derive_lifetimes`]).
///
/// `file_name` is only used in messages (`model.toml:3:7`). The first problem found is returned
/// as an [`InputError`] that says what is wrong, where, and how to fix it.
///
/// ```
/// let model = memplan_core::parse_model("model.toml", r#"
/// [model]
/// name = "tiny"
/// inputs = ["input"]
/// outputs = ["out"]
///
/// [tensors]
/// input = { dtype = "f32", shape = [1, 4] }
/// out = { dtype = "f32", shape = [1, 4] }
///
/// [[ops]]
/// name = "relu"
/// inputs = ["input"]
/// outputs = ["out"]
/// "#)?;
/// assert_eq!(model.tensors[1].size, 16);
/// assert_eq!(model.to_problem().len(), 2);
/// # Ok::<(), memplan_core::InputError>(())
/// ```
///
/// # Runtime
/// Linear in the file's size, plus `O(t log t)` for `t` tensors.
pub fn parse_model(file_name: &str, text: &str) -> Result<Model> {
    let source = SourceText::new(file_name, text);
    let document = DeTable::parse(text).map_err(|e| syntax_error(&source, &e))?;
    let model = Parser { source }.model(document.get_ref())?;
    // Every name the generated code declares, against every other one (one place for all).
    crate::codegen::names::check(&model)?;
    Ok(model)
}

/// The span of top-level key `name` (`0..0` when absent).
fn key_span(top: &Table<'_>, name: &str) -> Range<usize> {
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

fn syntax_error(source: &SourceText<'_>, error: &toml::de::Error) -> InputError {
    let span = error.span().unwrap_or(0..0);
    let message = error.message().trim().replace('\n', "; ");
    let help = if message.contains("duplicate key") {
        "each key may appear once per table; rename or remove the second one (tensor and op \
         names must be unique)"
    } else {
        "fix the TOML syntax here (strings in double quotes, arrays in [ ], inline tables in { })"
    };
    source.error(&span, format!("TOML syntax error: {message}"), help)
}

/// Spans of an op's references, kept to point errors at the exact name.
struct OpSpans {
    name: Range<usize>,
    inputs: Vec<Range<usize>>,
    outputs: Vec<Range<usize>>,
    scratch: Vec<Range<usize>>,
    /// `inplace` entries: (output key, input value) spans, in file order.
    inplace: Vec<(Range<usize>, Range<usize>)>,
}

/// The names an op may refer to: tensors and weights.
struct Names<'m> {
    tensors: &'m BTreeMap<&'m str, usize>,
    weights: &'m BTreeMap<&'m str, usize>,
}

struct Parser<'a> {
    source: SourceText<'a>,
}

impl Parser<'_> {
    fn model(&self, top: &Table<'_>) -> Result<Model> {
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

    fn tensors(
        &self,
        value: &Value<'_>,
        model_alignment: u64,
        pools: &[PoolDecl],
    ) -> Result<(Vec<Tensor>, Vec<Range<usize>>)> {
        let table = self.table(
            value,
            "`tensors`",
            "write `[tensors]` as a table of tensors",
        )?;
        // File order: the table is keyed by name, so sort its entries by where they appear.
        let mut entries: Vec<_> = table.iter().collect();
        entries.sort_by_key(|(key, _)| key.span().start);
        let mut tensors = Vec::with_capacity(entries.len());
        let mut spans = Vec::with_capacity(entries.len());
        let mut total: u64 = 0;
        for (key, value) in entries {
            let name: &str = key.get_ref();
            self.identifier(
                name,
                &key.span(),
                "tensor name",
                "it names the tensor's accessor",
            )?;
            let tensor = self.tensor(name, &key.span(), value, model_alignment, pools)?;
            total = total.saturating_add(tensor.size.next_multiple_of(tensor.alignment));
            if total > MAX_TOTAL_BYTES {
                return Err(self.source.error(
                    &key.span(),
                    "size overflow: the tensors together need more than 2^60 bytes",
                    "check the shapes for a typo; no device has that much memory",
                ));
            }
            tensors.push(tensor);
            spans.push(key.span());
        }
        if tensors.is_empty() {
            return Err(self.source.error(
                &value.span(),
                "`[tensors]` is empty",
                "declare every activation tensor, e.g. `input = { dtype = \"f32\", shape = [1, 28, 28] }`",
            ));
        }
        Ok((tensors, spans))
    }

    fn tensor(
        &self,
        name: &str,
        key_span: &Range<usize>,
        value: &Value<'_>,
        model_alignment: u64,
        pools: &[PoolDecl],
    ) -> Result<Tensor> {
        let what = format!("tensor `{name}`");
        let table = self.table(
            value,
            &what,
            "write it as `{ dtype = \"f32\", shape = [1, 8] }` or `{ bytes = 4096 }`",
        )?;
        self.check_keys(table, &TENSOR_KEYS, &format!("in {what}"), |_| {
            "a tensor has `dtype` and `shape`, or `bytes`; and optionally `align`, `source`, \
             `pool`, `offset` and `external`"
                .into()
        })?;
        let overflow = |span: &Range<usize>| {
            self.source.error(
                span,
                format!("size overflow: {what} is larger than 2^48 bytes"),
                "check the shape for a typo; no device has that much memory",
            )
        };
        let (layout, size, natural_alignment) = match (
            table.get("dtype"),
            table.get("shape"),
            table.get("bytes"),
        ) {
            (Some(_), _, Some(bytes)) | (_, Some(_), Some(bytes)) => {
                return Err(self.source.error(
                    &bytes.span(),
                    format!("{what} has both `bytes` and `dtype`/`shape`"),
                    "give either `dtype` and `shape` (a typed tensor) or `bytes` (raw bytes), not both",
                ));
            }
            (None, None, Some(bytes)) => {
                let size = self.byte_count(bytes, &format!("`bytes` of {what}"))?;
                if size == 0 {
                    return Err(self.source.error(
                        &bytes.span(),
                        format!("{what} has `bytes = 0`"),
                        "every tensor needs at least one byte; remove the tensor if it is unused",
                    ));
                }
                if size > MAX_TENSOR_BYTES {
                    return Err(overflow(&bytes.span()));
                }
                (Layout::Bytes, size, 1)
            }
            (Some(dtype_value), Some(shape_value), None) => {
                let dtype_name = self.string(dtype_value, &format!("`dtype` of {what}"))?;
                let dtype: DType = dtype_name.parse().map_err(|_| {
                    self.source.error(
                        &dtype_value.span(),
                        format!("unknown dtype `{dtype_name}` for {what}"),
                        format!(
                            "use one of: {}{}",
                            DType::known_names(),
                            did_you_mean(dtype_name, DType::ALL.iter().map(|d| d.name()))
                        ),
                    )
                })?;
                let shape = self.shape(shape_value, &what)?;
                let elements = shape
                    .iter()
                    .try_fold(1u64, |acc, &d| acc.checked_mul(d))
                    .and_then(|n| n.checked_mul(dtype.size()))
                    .filter(|&bytes| bytes <= MAX_TENSOR_BYTES)
                    .ok_or_else(|| overflow(&shape_value.span()))?;
                (Layout::Typed { dtype, shape }, elements, dtype.alignment())
            }
            (None, Some(shape), None) => {
                return Err(self.source.error(
                    &shape.span(),
                    format!("{what} has a `shape` but no `dtype`"),
                    format!(
                        "add `dtype = \"f32\"` (or one of: {})",
                        DType::known_names()
                    ),
                ));
            }
            (Some(dtype), None, None) => {
                return Err(self.source.error(
                    &dtype.span(),
                    format!("{what} has a `dtype` but no `shape`"),
                    "add its dimensions, e.g. `shape = [1, 8, 26, 26]`",
                ));
            }
            (None, None, None) => {
                return Err(self.source.error(
                    key_span,
                    format!("{what} has neither `dtype`/`shape` nor `bytes`"),
                    "write it as `{ dtype = \"f32\", shape = [1, 8] }` or `{ bytes = 4096 }`",
                ));
            }
        };
        let alignment = match table.get("align") {
            None => model_alignment,
            Some(v) => self.alignment(v, &format!("`align` of {what}"))?,
        };
        let source = match table.get("source") {
            None => None,
            Some(v) => Some(self.string(v, &format!("`source` of {what}"))?.to_owned()),
        };
        let alignment = alignment.max(natural_alignment);
        let memory = self.tensor_memory(&what, table, size, alignment, pools)?;
        Ok(Tensor {
            name: name.to_owned(),
            layout,
            size,
            alignment,
            source,
            lifetime: Lifetime::new(0, 1),
            location: self.source.location(key_span.start),
            memory,
        })
    }

    fn shape(&self, value: &Value<'_>, what: &str) -> Result<Vec<u64>> {
        let help = "write the dimensions as positive integers, e.g. `shape = [1, 8, 26, 26]`";
        let DeValue::Array(items) = value.get_ref() else {
            return Err(self.source.error(
                &value.span(),
                format!("`shape` of {what} is not an array"),
                help,
            ));
        };
        if items.is_empty() {
            return Err(self.source.error(
                &value.span(),
                format!("`shape` of {what} is empty"),
                "give at least one dimension; write a scalar as `shape = [1]`",
            ));
        }
        items
            .iter()
            .map(|item| {
                let dim = self.integer(item, &format!("a dimension of {what}"))?;
                if dim == 0 {
                    return Err(self.source.error(
                        &item.span(),
                        format!("{what} has a zero dimension"),
                        "every dimension must be at least 1; a tensor with no elements needs no memory, so remove it",
                    ));
                }
                Ok(dim)
            })
            .collect()
    }

    fn ops(&self, value: &Value<'_>, refs: &Names<'_>) -> Result<(Vec<Op>, Vec<OpSpans>)> {
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
            let (inplace, inplace_spans) = match table.get("inplace") {
                None => (None, Vec::new()),
                // `inplace = false`: never in place; `true`: as its kind allows.
                Some(v) if matches!(v.get_ref(), DeValue::Boolean(_)) => {
                    let allowed = self.boolean(v, &what("inplace"))?;
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

    /// `[weights]`: `name = { dtype = "f32", shape = [64, 3, 3, 3], source = "conv1.weight" }`.
    fn weights(&self, value: &Value<'_>, tensors: &BTreeMap<&str, usize>) -> Result<Vec<Weight>> {
        let table = self.table(
            value,
            "`weights`",
            "write `[weights]` as a table: `w = { dtype = \"f32\", shape = [8, 3] }`",
        )?;
        let mut entries: Vec<_> = table.iter().collect();
        entries.sort_by_key(|(key, _)| key.span().start);
        let mut weights = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            let name: &str = key.get_ref();
            self.identifier(
                name,
                &key.span(),
                "weight name",
                "it names the weight's shape and dtype constants",
            )?;
            if tensors.contains_key(name) {
                return Err(self.source.error(
                    &key.span(),
                    format!("`{name}` is declared both as a tensor and as a weight"),
                    "a name is either an activation tensor (`[tensors]`) or a constant \
                     (`[weights]`), never both; rename one of them",
                ));
            }
            let what = format!("weight `{name}`");
            let table = self.table(
                value,
                &what,
                "write it as `{ dtype = \"f32\", shape = [64, 3, 3, 3], source = \"conv1.weight\" }`",
            )?;
            self.check_keys(table, &WEIGHT_KEYS, &format!("in {what}"), |_| {
                "a weight has `dtype` and `shape`, and optionally `source`; its data stays in the \
                 model it came from"
                    .into()
            })?;
            let Some(dtype_value) = table.get("dtype") else {
                return Err(self.source.error(
                    &key.span(),
                    format!("{what} has no `dtype`"),
                    format!(
                        "add `dtype = \"f32\"` (or one of: {})",
                        DType::known_names()
                    ),
                ));
            };
            let dtype_name = self.string(dtype_value, &format!("`dtype` of {what}"))?;
            let dtype: DType = dtype_name.parse().map_err(|_| {
                self.source.error(
                    &dtype_value.span(),
                    format!("unknown dtype `{dtype_name}` for {what}"),
                    format!(
                        "use one of: {}{}",
                        DType::known_names(),
                        did_you_mean(dtype_name, DType::ALL.iter().map(|d| d.name()))
                    ),
                )
            })?;
            let Some(shape_value) = table.get("shape") else {
                return Err(self.source.error(
                    &key.span(),
                    format!("{what} has no `shape`"),
                    "add its dimensions, e.g. `shape = [64, 3, 3, 3]` (`shape = []` for a scalar)",
                ));
            };
            let DeValue::Array(items) = shape_value.get_ref() else {
                return Err(self.source.error(
                    &shape_value.span(),
                    format!("`shape` of {what} is not an array"),
                    "write the dimensions as integers, e.g. `shape = [64, 3, 3, 3]`",
                ));
            };
            // Like a tensor's: every dimension at least 1 (`[]`, a scalar, is one element).
            let shape = items
                .iter()
                .map(|item| {
                    let dim = self.integer(item, &format!("a dimension of {what}"))?;
                    if dim == 0 {
                        return Err(self.source.error(
                            &item.span(),
                            format!("{what} has a zero dimension"),
                            "every dimension must be at least 1; a weight with no elements holds \
                             nothing, so remove it (and leave the op's input out with `\"\"`, as \
                             ONNX writes an absent optional input)",
                        ));
                    }
                    Ok(dim)
                })
                .collect::<Result<Vec<u64>>>()?;
            let fits = shape
                .iter()
                .try_fold(dtype.size(), |acc, &d| acc.checked_mul(d))
                .is_some_and(|bytes| bytes <= MAX_TENSOR_BYTES);
            if !fits {
                return Err(self.source.error(
                    &shape_value.span(),
                    format!("size overflow: {what} is larger than 2^48 bytes"),
                    "check the shape for a typo; no device has that much memory",
                ));
            }
            let source = match table.get("source") {
                None => None,
                Some(v) => Some(self.string(v, &format!("`source` of {what}"))?.to_owned()),
            };
            weights.push(Weight {
                name: name.to_owned(),
                dtype,
                shape,
                source,
                location: self.source.location(key.span().start),
            });
        }
        Ok(weights)
    }

    /// An op's `inputs`: tensors, weights and `""` (absent), in order. Returns the full list,
    /// the tensors alone, and the tensors' spans.
    #[allow(clippy::type_complexity)]
    fn op_inputs(
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
    fn attrs(&self, value: &Value<'_>, what: &str) -> Result<Vec<(String, AttrValue)>> {
        let table = self.table(
            value,
            what,
            "write it as an inline table, e.g. `attrs = { strides = [2, 2], group = 1 }`",
        )?;
        let mut entries: Vec<_> = table.iter().collect();
        entries.sort_by_key(|(key, _)| key.span().start);
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

    fn attr_value(&self, value: &Value<'_>, what: &str) -> Result<AttrValue> {
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

    fn signed(&self, value: &Value<'_>, what: &str) -> Result<i64> {
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

    fn float(&self, value: &Value<'_>, what: &str) -> Result<f64> {
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

    /// The generated code has `Arena::new`, accessor `t` per tensor and `op_o` per op: they must
    /// not clash.
    fn names_do_not_collide(
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

    fn lifetimes(
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

    // ---- memory: pools, pinned and app-owned tensors, in-place pairs ----

    fn pools(&self, value: &Value<'_>) -> Result<Vec<PoolDecl>> {
        let help = "write each pool as a `[[pools]]` table with `name` and optionally `size` and \
                    `link_section`, fastest first";
        let DeValue::Array(items) = value.get_ref() else {
            return Err(self.source.error(
                &value.span(),
                "`pools` is not an array of tables",
                help,
            ));
        };
        let mut pools: Vec<PoolDecl> = Vec::with_capacity(items.len());
        for (k, item) in items.iter().enumerate() {
            let table = self.table(item, &format!("the pool at index {k} of `pools`"), help)?;
            let named = match table.get("name").map(Spanned::get_ref) {
                Some(DeValue::String(name)) => format!("pool `{name}` (index {k})"),
                _ => format!("the pool at index {k}"),
            };
            self.check_keys(table, &POOL_KEYS, &format!("in {named}"), |_| {
                "a pool has `name`, and optionally `size` and `link_section`".into()
            })?;
            let Some(name_value) = table.get("name") else {
                return Err(self.source.error(
                    &item.span(),
                    format!("the pool at index {k} (counting `[[pools]]` from 0) has no `name`"),
                    "add `name = \"sram\"`: it names the pool's module and arena type",
                ));
            };
            let name = self.string(name_value, "pool `name`")?;
            self.identifier(
                name,
                &name_value.span(),
                "pool name",
                "it names the pool's module",
            )?;
            if RESERVED_POOL_NAMES.contains(&name) {
                return Err(self.source.error(
                    &name_value.span(),
                    format!("pool name `{name}` clashes with the generated module `{name}`"),
                    "rename the pool (for example `sram`, `dram`, `tcm`)",
                ));
            }
            let camel = |n: &str| {
                n.split('_')
                    .map(str::to_ascii_lowercase)
                    .collect::<String>()
            };
            if let Some(other) = pools
                .iter()
                .find(|p| p.name != name && camel(&p.name) == camel(name))
            {
                return Err(self.source.error(
                    &name_value.span(),
                    format!(
                        "pool names `{}` and `{name}` give the same arena type name",
                        other.name
                    ),
                    "rename one of them so they differ in more than `_` and case",
                ));
            }
            if pools.iter().any(|p| p.name == name) {
                return Err(self.source.error(
                    &name_value.span(),
                    format!("duplicate pool name `{name}`"),
                    "give every pool a unique name",
                ));
            }
            let capacity = match table.get("size") {
                None => None,
                Some(v) => {
                    let size = self.byte_count(v, &format!("`size` of pool `{name}`"))?;
                    if size == 0 {
                        return Err(self.source.error(
                            &v.span(),
                            format!("pool `{name}` has `size = 0`"),
                            "give the most bytes the pool may take (e.g. `size = \"64 KiB\"`), or \
                             remove `size` for no limit",
                        ));
                    }
                    Some(size)
                }
            };
            let link_section = match table.get("link_section") {
                None => None,
                Some(v) => {
                    let section = self.string(v, &format!("`link_section` of pool `{name}`"))?;
                    if let Some(problem) = link_section_problem(section) {
                        return Err(self.source.error(
                            &v.span(),
                            format!("`link_section` {section:?} of pool `{name}` {problem}"),
                            "name a data section of your memory map that the linker script \
                             places in the pool's memory, e.g. `link_section = \".sram\"` or \
                             `\".bss.dtcm\"`",
                        ));
                    }
                    Some(section.to_owned())
                }
            };
            pools.push(PoolDecl {
                name: name.to_owned(),
                capacity,
                link_section,
                location: self.source.location(item.span().start),
                size_location: table
                    .get("size")
                    .map(|v| self.source.location(v.span().start)),
            });
        }
        if pools.is_empty() {
            return Err(self.source.error(
                &value.span(),
                "`pools` is empty",
                "declare at least one `[[pools]]` table, or remove `pools` for one default arena",
            ));
        }
        Ok(pools)
    }

    /// `pool`, `offset` and `external` of a tensor.
    fn tensor_memory(
        &self,
        what: &str,
        table: &Table<'_>,
        size: u64,
        alignment: u64,
        pools: &[PoolDecl],
    ) -> Result<TensorMemory> {
        let external = match table.get("external") {
            None => false,
            Some(v) => self.boolean(v, &format!("`external` of {what}"))?,
        };
        if external {
            for key in ["pool", "offset"] {
                if let Some(v) = table.get(key) {
                    return Err(self.source.error(
                        &v.span(),
                        format!("{what} is `external` but also has `{key}`"),
                        format!(
                            "an external tensor is owned by the application and has no place in \
                             an arena; remove `{key}` or `external`"
                        ),
                    ));
                }
            }
        }
        let pool = match table.get("pool") {
            None => None,
            Some(v) => {
                let name = self.string(v, &format!("`pool` of {what}"))?;
                let Some(index) = pools.iter().position(|p| p.name == name) else {
                    let help = if pools.is_empty() {
                        format!(
                            "declare the pool first: `[[pools]]` with `name = \"{name}\"` (and \
                             optionally `size`), or remove `pool`"
                        )
                    } else {
                        format!(
                            "use one of the `[[pools]]`: {}{}",
                            pools
                                .iter()
                                .map(|p| format!("`{}`", p.name))
                                .collect::<Vec<_>>()
                                .join(", "),
                            did_you_mean(name, pools.iter().map(|p| p.name.as_str()))
                        )
                    };
                    return Err(self.source.error(
                        &v.span(),
                        format!("unknown pool `{name}` in {what}"),
                        help,
                    ));
                };
                Some(index)
            }
        };
        let offset = match table.get("offset") {
            None => None,
            Some(v) => {
                let offset = self.byte_count(v, &format!("`offset` of {what}"))?;
                if offset % alignment != 0 {
                    return Err(self.source.error(
                        &v.span(),
                        format!(
                            "{what} is pinned at offset {offset}, which is not a multiple of its \
                             alignment {alignment}"
                        ),
                        format!(
                            "pin it at a multiple of {alignment} (for example {}), or lower its \
                             `align`",
                            offset / alignment * alignment
                        ),
                    ));
                }
                let home = pool.or(if pools.is_empty() { None } else { Some(0) });
                let end = offset.checked_add(size).filter(|&e| e <= MAX_TOTAL_BYTES);
                let capacity = home.and_then(|p| pools[p].capacity.map(|c| (p, c)));
                match (end, capacity) {
                    (None, _) => {
                        return Err(self.source.error(
                            &v.span(),
                            format!("size overflow: {what} pinned at offset {offset} ends past 2^60 bytes"),
                            "check the offset for a typo",
                        ));
                    }
                    (Some(end), Some((p, capacity))) if end > capacity => {
                        return Err(self.source.error(
                            &v.span(),
                            format!(
                                "{what} pinned at offset {offset} ends at byte {end}, past the \
                                 {capacity} bytes of pool `{}`",
                                pools[p].name
                            ),
                            format!(
                                "pin it at most at {} or raise the pool's `size`",
                                capacity.saturating_sub(size) / alignment * alignment
                            ),
                        ));
                    }
                    _ => {}
                }
                Some(offset)
            }
        };
        Ok(TensorMemory {
            pool,
            offset,
            external,
        })
    }

    /// `inplace = { out = "in", ... }` of an op: `(output, input)` pairs with their spans.
    #[allow(clippy::type_complexity)]
    fn inplace_table(
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
        let mut entries: Vec<_> = table.iter().collect();
        entries.sort_by_key(|(key, _)| key.span().start);
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
    fn aliases(&self, model: &Model, op_spans: &[OpSpans]) -> Result<Vec<Alias>> {
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

    // ---- value helpers ----

    fn check_keys(
        &self,
        table: &Table<'_>,
        allowed: &[&str],
        place: &str,
        help: impl Fn(&str) -> String,
    ) -> Result<()> {
        let mut keys: Vec<_> = table.keys().collect();
        keys.sort_by_key(|k| k.span().start);
        for key in keys {
            let name: &str = key.get_ref();
            if !allowed.contains(&name) {
                return Err(self.source.error(
                    &key.span(),
                    format!("unknown key `{name}` {place}"),
                    format!(
                        "{}{}",
                        help(name),
                        did_you_mean(name, allowed.iter().copied())
                    ),
                ));
            }
        }
        Ok(())
    }

    fn table<'v, 'i>(&self, value: &'v Value<'i>, what: &str, help: &str) -> Result<&'v Table<'i>> {
        match value.get_ref() {
            DeValue::Table(t) => Ok(t),
            other => Err(self.source.error(
                &value.span(),
                format!("{what} must be a table, not {}", kind(other)),
                help,
            )),
        }
    }

    fn string<'v>(&self, value: &'v Value<'_>, what: &str) -> Result<&'v str> {
        match value.get_ref() {
            DeValue::String(s) => Ok(s),
            other => Err(self.source.error(
                &value.span(),
                format!("{what} must be a string, not {}", kind(other)),
                "put it in double quotes",
            )),
        }
    }

    fn boolean(&self, value: &Value<'_>, what: &str) -> Result<bool> {
        match value.get_ref() {
            DeValue::Boolean(b) => Ok(*b),
            other => Err(self.source.error(
                &value.span(),
                format!("{what} must be `true` or `false`, not {}", kind(other)),
                "write `true` or `false` without quotes",
            )),
        }
    }

    fn integer(&self, value: &Value<'_>, what: &str) -> Result<u64> {
        match value.get_ref() {
            DeValue::Integer(i) => u64::from_str_radix(i.as_str(), i.radix()).map_err(|_| {
                self.source.error(
                    &value.span(),
                    format!("{what} must be a non-negative integer that fits in 64 bits, not {i}"),
                    "write a non-negative integer",
                )
            }),
            other => Err(self.source.error(
                &value.span(),
                format!("{what} must be an integer, not {}", kind(other)),
                "write a non-negative integer without quotes",
            )),
        }
    }

    fn byte_count(&self, value: &Value<'_>, what: &str) -> Result<u64> {
        match value.get_ref() {
            DeValue::String(s) => parse_byte_size(s).ok_or_else(|| {
                self.source.error(
                    &value.span(),
                    format!("{what} `{s}` is not a byte size"),
                    "write an integer number of bytes (`4096`) or a string like \"512 KiB\", \"2 MiB\", \"1 GiB\"",
                )
            }),
            _ => self.integer(value, what),
        }
    }

    fn budget(&self, value: &Value<'_>) -> Result<u64> {
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

    fn node_budget(&self, value: &Value<'_>) -> Result<u64> {
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

    fn alignment(&self, value: &Value<'_>, what: &str) -> Result<u64> {
        let alignment = self.integer(value, what)?;
        if !alignment.is_power_of_two() || alignment > MAX_ALIGNMENT {
            let lower = if alignment == 0 {
                1
            } else {
                1u64 << alignment.ilog2()
            };
            return Err(self.source.error(
                &value.span(),
                format!("{what} is {alignment}, which is not a power of two up to 2^29"),
                format!(
                    "use a power of two such as 1, 8, 16 or 64 (nearest below: {})",
                    lower.min(MAX_ALIGNMENT)
                ),
            ));
        }
        Ok(alignment)
    }

    fn identifier(&self, name: &str, span: &Range<usize>, what: &str, why: &str) -> Result<()> {
        match identifier_problem(name) {
            None => Ok(()),
            Some(problem) => Err(self.source.error(
                span,
                format!("{what} `{name}` is not a valid Rust identifier: it {problem}"),
                format!(
                    "{why}; use ASCII letters, digits and `_` (for example `{}`), and keep an original name in `source`",
                    crate::model_file::sanitize_identifier(name)
                ),
            )),
        }
    }

    /// A list of tensor names, resolved to indices, with each name's span.
    fn references(
        &self,
        value: &Value<'_>,
        names: &Names<'_>,
        what: &str,
    ) -> Result<(Vec<usize>, Vec<Range<usize>>)> {
        let index = names.tensors;
        let DeValue::Array(items) = value.get_ref() else {
            return Err(self.source.error(
                &value.span(),
                format!("{what} must be an array of tensor names"),
                "write it as `[\"a\", \"b\"]`",
            ));
        };
        let mut indices = Vec::with_capacity(items.len());
        let mut spans = Vec::with_capacity(items.len());
        for item in items.iter() {
            let name = self.string(item, &format!("an entry of {what}"))?;
            if names.weights.contains_key(name) {
                return Err(self.source.error(
                    &item.span(),
                    format!("`{name}` in {what} is a weight, not a tensor"),
                    "weights are constants that ops read: name them only in an op's `inputs`; \
                     an op's outputs and scratch, and the graph's inputs and outputs, are \
                     tensors declared under `[tensors]`",
                ));
            }
            let Some(&i) = index.get(name) else {
                return Err(self.source.error(
                    &item.span(),
                    format!("unknown tensor `{name}` in {what}"),
                    format!(
                        "declare `{name}` under `[tensors]`, or fix the name{}",
                        did_you_mean(name, index.keys().copied())
                    ),
                ));
            };
            indices.push(i);
            spans.push(item.span());
        }
        Ok((indices, spans))
    }

    fn no_repeats(
        &self,
        list: &(Vec<usize>, Vec<Range<usize>>),
        tensors: &[Tensor],
        what: &str,
    ) -> Result<()> {
        for (i, &t) in list.0.iter().enumerate() {
            if list.0[..i].contains(&t) {
                return Err(self.source.error(
                    &list.1[i],
                    format!("tensor `{}` is listed twice in the {what}", tensors[t].name),
                    "list each tensor once",
                ));
            }
        }
        Ok(())
    }
}

fn kind(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a datetime",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}
