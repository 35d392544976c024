//! Plan CSV files: what `memplan plan --out` writes and what `memplan check` and
//! `memplan render --plan` read.
//!
//! A plan is a CSV table with a header. Only `id` and `offset` are required: the problem (a
//! MiniMalloc CSV or a model TOML) already says every buffer's size and lifetime. The other
//! columns are optional and, when present, must agree with the problem, so a plan made for
//! another problem is refused instead of checked against the wrong sizes:
//!
//! | column | meaning |
//! |---|---|
//! | `id` | the buffer (a model tensor's name) |
//! | `offset` | its first byte in its arena |
//! | `pool` | for a model TOML: the pool whose arena holds it (needed when the model has `[[pools]]`) |
//! | `lower`, `upper` | its lifetime `[lower, upper)` in steps; for a model, the one `TENSORS` reports |
//! | `size`, `alignment` | its bytes and alignment |
//! | `chain` | for a model: the number of the in-place chain it shares bytes with (empty for none); the chains come from the model, so the column must group the tensors as they do |
//!
//! A MiniMalloc plan (`id,lower,upper,size[,alignment],offset`, or with MiniMalloc's later header
//! `buffer,start,end,size,offset`) is a plan CSV as it is.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context as _;
use memplan_core::InputError;

use crate::diagnostic;

/// The columns a plan CSV may have, in the order `plan --out` writes them.
const COLUMNS: [&str; 8] = [
    "id",
    "lower",
    "upper",
    "size",
    "alignment",
    "offset",
    "pool",
    "chain",
];

/// A plan read from a CSV file, with its text kept for located errors.
pub(crate) struct PlanFile {
    /// The file name as given, for messages.
    pub(crate) file: String,
    /// The file's text.
    text: String,
    /// Which columns the header names.
    pub(crate) has_pool: bool,
    /// One row per buffer, in file order.
    pub(crate) rows: Vec<PlanRow>,
}

/// One row of a plan CSV.
pub(crate) struct PlanRow {
    /// Its 1-based line.
    pub(crate) line: usize,
    /// The `id` and its column.
    pub(crate) id: (String, usize),
    /// The `offset` and its column.
    pub(crate) offset: (u64, usize),
    /// The `pool` (empty when the column is absent) and its column.
    pub(crate) pool: (String, usize),
    /// The optional numeric columns present (`lower`, `upper`, `size`, `alignment`): name,
    /// value, column.
    pub(crate) facts: Vec<(&'static str, u64, usize)>,
    /// The `chain` (`None` when empty) and its column, if the column is present.
    pub(crate) chain: Option<(Option<u64>, usize)>,
}

impl PlanFile {
    /// An error at `line`:`column` of this file, drawn with its source line.
    pub(crate) fn error(
        &self,
        line: usize,
        column: usize,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> anyhow::Error {
        let error = InputError::new(&self.file, line, column, message, help);
        anyhow::Error::new(diagnostic::render(&error, &self.text))
    }
}

/// The 1-based column where field `index` starts on `line` (comma counting: right for the
/// unquoted names and numbers a plan has).
fn column_of(line: &str, index: usize) -> usize {
    let mut column = 1;
    for (i, field) in line.split(',').enumerate() {
        if i == index {
            let leading = field.chars().take_while(|c| c.is_whitespace()).count();
            return column + leading;
        }
        column += field.chars().count() + 1;
    }
    column
}

/// Reads the plan CSV at `path`. Errors are located (`file:line:col`).
pub(crate) fn read(path: &Path) -> anyhow::Result<PlanFile> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read `{}`", path.display()))?;
    let mut plan = PlanFile {
        file: path.display().to_string(),
        text,
        has_pool: false,
        rows: Vec::new(),
    };
    let text = plan.text.clone();
    let lines: Vec<&str> = text.lines().collect();
    let line_text = |line: usize| lines.get(line.wrapping_sub(1)).copied().unwrap_or("");
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .trim(csv::Trim::All)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut records = reader.records();
    let malformed = |plan: &PlanFile, e: &csv::Error| {
        let line = e.position().map_or(1, |p| p.line() as usize);
        plan.error(
            line,
            1,
            format!("malformed CSV: {e}"),
            "check the quoting and that the file is UTF-8 text",
        )
    };
    let header = match records.next() {
        None => {
            return Err(plan.error(
                1,
                1,
                "the plan is empty",
                "start with a header naming at least `id` and `offset`, e.g. `id,offset`",
            ));
        }
        Some(Err(e)) => return Err(malformed(&plan, &e)),
        Some(Ok(header)) => header,
    };
    let mut columns: BTreeMap<&'static str, usize> = BTreeMap::new();
    for (index, name) in header.iter().enumerate() {
        let name = name.trim_start_matches('\u{feff}');
        // MiniMalloc's `buffer,start,end` stand for `id,lower,upper`.
        let column = memplan_core::column_alias(name).unwrap_or(name);
        let Some(&known) = COLUMNS.iter().find(|&&c| c == column) else {
            return Err(plan.error(
                1,
                column_of(line_text(1), index),
                format!("unknown column `{name}` in a plan"),
                format!("a plan's columns are {}", COLUMNS.join(", ")),
            ));
        };
        if columns.insert(known, index).is_some() {
            return Err(plan.error(
                1,
                column_of(line_text(1), index),
                format!("column `{name}` appears twice"),
                "remove the second one",
            ));
        }
    }
    for required in ["id", "offset"] {
        if !columns.contains_key(required) {
            return Err(plan.error(
                1,
                1,
                format!("the plan has no `{required}` column"),
                "a plan needs at least the columns `id` and `offset` (one row per buffer)",
            ));
        }
    }
    plan.has_pool = columns.contains_key("pool");
    for record in records {
        let record = record.map_err(|e| malformed(&plan, &e))?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        if record.iter().all(str::is_empty) {
            continue;
        }
        if record.len() != header.len() {
            return Err(plan.error(
                line,
                1,
                format!(
                    "this row has {} fields but the header has {}",
                    record.len(),
                    header.len()
                ),
                "give every row one value per header column",
            ));
        }
        let field = |name: &str| {
            columns
                .get(name)
                .map(|&index| (record[index].to_owned(), column_of(line_text(line), index)))
        };
        let number = |name: &'static str| -> anyhow::Result<Option<(u64, usize)>> {
            let Some((value, column)) = field(name) else {
                return Ok(None);
            };
            match value.parse::<u64>() {
                Ok(number) => Ok(Some((number, column))),
                Err(e) => {
                    let why = match e.kind() {
                        std::num::IntErrorKind::PosOverflow => "does not fit in 64 bits",
                        std::num::IntErrorKind::Empty => "is empty",
                        _ => "is not a non-negative integer",
                    };
                    Err(plan.error(
                        line,
                        column,
                        format!("`{name}` value `{value}` {why}"),
                        format!("write the {name} as a whole number of bytes or steps, e.g. 1024"),
                    ))
                }
            }
        };
        let id = field("id").unwrap_or_default();
        if id.0.is_empty() {
            return Err(plan.error(line, id.1, "empty id", "name the buffer this row places"));
        }
        let offset = number("offset")?.unwrap_or_default();
        let mut facts = Vec::new();
        for name in ["lower", "upper", "size", "alignment"] {
            if let Some((value, column)) = number(name)? {
                facts.push((name, value, column));
            }
        }
        let chain = match field("chain") {
            None => None,
            Some((value, column)) if value.is_empty() => Some((None, column)),
            Some((value, column)) => match value.parse::<u64>() {
                Ok(number) => Some((Some(number), column)),
                Err(_) => {
                    return Err(plan.error(
                        line,
                        column,
                        format!("`chain` value `{value}` is not a chain number"),
                        "leave `chain` empty or write the number `plan --out` wrote",
                    ));
                }
            },
        };
        plan.rows.push(PlanRow {
            line,
            id,
            offset,
            pool: field("pool").unwrap_or_default(),
            facts,
            chain,
        });
    }
    Ok(plan)
}

/// A plan row per arena tensor of a compiled model: `id,lower,upper,size,alignment,offset,pool,chain`
/// (see the module docs); app-owned tensors have no place and no row.
pub(crate) fn write_compiled(compiled: &crate::model_plan::Compiled) -> String {
    let mut out = COLUMNS.join(",");
    out.push('\n');
    let model = &compiled.model;
    let plan = &compiled.plan;
    for (i, tensor) in model.tensors.iter().enumerate() {
        let Some(place) = plan.tensors[i] else {
            continue;
        };
        let (lower, upper) = compiled.lifetimes[i];
        let chain = compiled.chain[i].map_or(String::new(), |c| c.to_string());
        let _ = writeln!(
            out,
            "{},{lower},{upper},{},{},{},{},{chain}",
            tensor.name, tensor.size, tensor.alignment, place.offset, plan.pools[place.pool].name
        );
    }
    out
}
