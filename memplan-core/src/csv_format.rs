//! MiniMalloc's CSV format: `id,lower,upper,size[,alignment][,offset]`, one buffer a row.
//!
//! `[lower, upper)` is the half-open lifetime in steps and `size` the bytes. Ids may be any
//! string. A plan is the same table with an `offset` column. Columns may come in any order;
//! the header names them. MiniMalloc's later files spell the first three columns
//! `buffer,start,end`: those names are read as `id`, `lower` and `upper`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::error::InputError;
use crate::model::{Buffer, Plan, Problem, ProblemError};

const REQUIRED: [&str; 4] = ["id", "lower", "upper", "size"];
const OPTIONAL: [&str; 2] = ["alignment", "offset"];
/// Other spellings of columns, as (spelling, column): MiniMalloc's `buffer,start,end,size`.
const ALIASES: [(&str, &str); 3] = [("buffer", "id"), ("start", "lower"), ("end", "upper")];

/// The column a header name stands for, when it is another spelling of one: MiniMalloc's
/// `buffer`, `start` and `end` for `id`, `lower` and `upper`.
pub fn column_alias(name: &str) -> Option<&'static str> {
    ALIASES.iter().find(|(a, _)| *a == name).map(|&(_, k)| k)
}

/// A problem read from CSV, with the plan's offsets when the file has an `offset` column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvInput {
    /// The buffers.
    pub problem: Problem,
    /// `Some` when the file has an `offset` column: one offset per buffer.
    pub offsets: Option<Vec<u64>>,
}

/// Reads a problem (and offsets, if present) from CSV text. `file` names the source in errors.
pub fn read_csv(file: &str, text: &str) -> Result<CsvInput, InputError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .trim(csv::Trim::All)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut records = reader.records();
    // The text of the row that starts at byte `at`, for columns in messages (found only when a
    // message needs one, so reading keeps no table of lines).
    let row_at = |at: usize| {
        text.get(at..)
            .and_then(|rest| rest.lines().next())
            .unwrap_or("")
    };
    let error = |line: usize, column: usize, message: String, help: &str| {
        InputError::new(file, line, column, message, help)
    };

    let header = match records.next() {
        None => {
            return Err(error(
                1,
                1,
                "the file is empty".into(),
                "start with the header line `id,lower,upper,size`",
            ));
        }
        Some(Err(e)) => return Err(csv_error(file, &e)),
        Some(Ok(header)) => header,
    };
    let mut columns: BTreeMap<&str, usize> = BTreeMap::new();
    // Each column's name as the header spells it, for messages.
    let mut spelled: BTreeMap<&str, &str> = BTreeMap::new();
    for (index, name) in header.iter().enumerate() {
        let name = name.trim_start_matches('\u{feff}');
        let known = REQUIRED
            .iter()
            .chain(&OPTIONAL)
            .copied()
            .find(|&k| k == name)
            .or_else(|| column_alias(name));
        let Some(known) = known else {
            return Err(error(
                1,
                column_of(row_at(0), index),
                format!("unknown column `{name}`"),
                "columns are id, lower, upper, size and optionally alignment and offset \
                 (or MiniMalloc's buffer, start, end, size)",
            ));
        };
        if columns.insert(known, index).is_some() {
            let first = spelled[known];
            let message = if first == name {
                format!("column `{name}` appears twice")
            } else {
                format!("columns `{first}` and `{name}` are the same column (`{known}`)")
            };
            return Err(error(
                1,
                column_of(row_at(0), index),
                message,
                "remove the second one",
            ));
        }
        spelled.insert(known, name);
    }
    if let Some(missing) = REQUIRED.iter().find(|c| !columns.contains_key(*c)) {
        return Err(error(
            1,
            1,
            format!("the header has no `{missing}` column"),
            "the header must name id, lower, upper and size, e.g. `id,lower,upper,size`",
        ));
    }

    // One buffer a line at most: reserved once, so 10^6 buffers never hold two copies while
    // the vector grows.
    let rows = text.lines().count().saturating_sub(1);
    let mut buffers = Vec::with_capacity(rows);
    let mut offsets = columns.contains_key("offset").then(Vec::new);
    // The line and the row's first byte of each buffer, for the duplicate-id message.
    let mut placed_at: Vec<(usize, usize)> = Vec::with_capacity(rows);
    let mut total: u64 = 0; // bytes of all sizes so far
    for record in records {
        let record = record.map_err(|e| csv_error(file, &e))?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        let at = record.position().map_or(usize::MAX, |p| p.byte() as usize);
        if record.iter().all(str::is_empty) {
            continue;
        }
        if record.len() != header.len() {
            return Err(error(
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
        let value = |name: &str| -> &str { &record[columns[name]] };
        let column = |name: &str| column_of(row_at(at), columns[name]);
        let number = |name: &str, what: &str| -> Result<u64, InputError> {
            let value = value(name);
            value.parse::<u64>().map_err(|e| {
                let (column, name) = (column(name), spelled[name]);
                let why = match e.kind() {
                    std::num::IntErrorKind::PosOverflow => "does not fit in 64 bits".to_string(),
                    std::num::IntErrorKind::Empty => "is empty".to_string(),
                    _ => "is not a non-negative integer".to_string(),
                };
                error(
                    line,
                    column,
                    format!("`{name}` value `{value}` {why}"),
                    &format!("write {what} as a whole number, e.g. 1024"),
                )
            })
        };
        let id = value("id");
        if id.is_empty() {
            return Err(error(
                line,
                column("id"),
                "empty id".into(),
                "give every buffer a name or number",
            ));
        }
        let lower = number("lower", "the first live step")?;
        let upper = number("upper", "the first step after the buffer dies")?;
        let size = number("size", "the size in bytes")?;
        let alignment = match columns.get("alignment") {
            Some(_) if !value("alignment").is_empty() => {
                number("alignment", "the alignment in bytes")?
            }
            _ => 1,
        };
        if upper <= lower {
            return Err(error(
                line,
                column("upper"),
                format!(
                    "`{}` ({upper}) is not greater than `{}` ({lower})",
                    spelled["upper"], spelled["lower"]
                ),
                &format!(
                    "lifetimes are half-open [{lower_name}, {upper_name}): {upper_name} must be at least {lower_name} + 1",
                    lower_name = spelled["lower"],
                    upper_name = spelled["upper"]
                ),
            ));
        }
        let buffer = Buffer::new(id, size, lower, upper).with_alignment(alignment);
        if let Some(offsets) = offsets.as_mut() {
            offsets.push(number("offset", "the offset in bytes")?);
        }
        // Checked one buffer at a time so the error names this line.
        let problem_error = |e: ProblemError| -> InputError {
            let (column, help) = match e {
                ProblemError::ZeroSize { .. } => {
                    (column("size"), "every buffer needs at least one byte")
                }
                ProblemError::BadAlignment { .. } => (
                    column("alignment"),
                    "use a power of two such as 1, 8, 16 or 64",
                ),
                ProblemError::Overflow { .. } => (
                    column("size"),
                    "the sizes, each plus up to `alignment - 1` bytes of padding, must stay below 2^62 bytes together",
                ),
                _ => (1, "fix this row"),
            };
            error(line, column, e.to_string(), help)
        };
        crate::model::check_buffer(&buffer).map_err(problem_error)?;
        // The whole problem also bounds the padded sizes together (see `Problem::new`).
        total = total.saturating_add(buffer.padded_size());
        if total > crate::model::MAX_ADDRESS {
            return Err(problem_error(ProblemError::Overflow { id: id.to_string() }));
        }
        placed_at.push((line, at));
        buffers.push(buffer);
    }
    if let Some((first, second)) = first_duplicate(&buffers) {
        let (line, at) = placed_at[second];
        return Err(error(
            line,
            column_of(row_at(at), columns["id"]),
            format!(
                "duplicate id `{}` (first on line {})",
                buffers[second].id, placed_at[first].0
            ),
            "give every buffer a unique id",
        ));
    }
    let problem = Problem::new(buffers).expect("every buffer was checked on its own line");
    Ok(CsvInput { problem, offsets })
}

/// Writes `problem` with `plan`'s offsets as CSV (`id,lower,upper,size[,alignment],offset`).
pub fn write_plan_csv(problem: &Problem, plan: &Plan) -> String {
    let aligned = problem.buffers().iter().any(|b| b.alignment != 1);
    let mut out = String::from("id,lower,upper,size");
    out.push_str(if aligned {
        ",alignment,offset\n"
    } else {
        ",offset\n"
    });
    for (buffer, offset) in problem.buffers().iter().zip(&plan.offsets) {
        let id = quote_field(&buffer.id);
        let l = buffer.lifetime;
        write!(out, "{id},{},{},{}", l.start, l.end, buffer.size).expect("writing to a String");
        if aligned {
            write!(out, ",{}", buffer.alignment).expect("writing to a String");
        }
        writeln!(out, ",{offset}").expect("writing to a String");
    }
    out
}

/// Writes a problem as CSV (`id,lower,upper,size[,alignment]`), without offsets.
pub fn write_problem_csv(problem: &Problem) -> String {
    let aligned = problem.buffers().iter().any(|b| b.alignment != 1);
    let mut out = String::from(if aligned {
        "id,lower,upper,size,alignment\n"
    } else {
        "id,lower,upper,size\n"
    });
    for buffer in problem.buffers() {
        let l = buffer.lifetime;
        write!(
            out,
            "{},{},{},{}",
            quote_field(&buffer.id),
            l.start,
            l.end,
            buffer.size
        )
        .expect("writing to a String");
        if aligned {
            write!(out, ",{}", buffer.alignment).expect("writing to a String");
        }
        out.push('\n');
    }
    out
}

fn quote_field(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) || field.trim() != field {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

fn csv_error(file: &str, e: &csv::Error) -> InputError {
    let line = e.position().map_or(1, |p| p.line() as usize);
    InputError::new(
        file,
        line,
        1,
        format!("malformed CSV: {e}"),
        "check quoting and that the file is UTF-8 text",
    )
}

/// The first buffer whose id an earlier one already has, as `(earlier, it)`: the one a reader
/// meets first going down the file. One pass, each id borrowed (not copied) into the map.
fn first_duplicate(buffers: &[Buffer]) -> Option<(usize, usize)> {
    let mut first_of = std::collections::HashMap::with_capacity(buffers.len());
    buffers
        .iter()
        .enumerate()
        .find_map(|(i, b)| first_of.insert(b.id.as_str(), i).map(|first| (first, i)))
}

/// 1-based column of field `index` in `row` (plain comma counting, which is right for the
/// unquoted numeric fields errors point at).
fn column_of(row: &str, index: usize) -> usize {
    let mut column = 1;
    for (i, field) in row.split(',').enumerate() {
        if i == index {
            return column + (field.len() - field.trim_start().len());
        }
        column += field.chars().count() + 1;
    }
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_minimalloc_example() {
        let text = "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n";
        let input = read_csv("example.csv", text).unwrap();
        assert_eq!(input.problem.len(), 5);
        assert_eq!(input.problem.buffers()[1], Buffer::new("b2", 4, 3, 9));
        assert_eq!(input.offsets, None);
    }

    #[test]
    fn reads_minimallocs_later_header() {
        // MiniMalloc's asplos2024 files: `buffer,start,end,size`.
        let text = "buffer,start,end,size\n0,0,3,4\n1,3,9,4\n";
        let input = read_csv("later.csv", text).unwrap();
        assert_eq!(input.problem.buffers()[1], Buffer::new("1", 4, 3, 9));
        let e = read_csv("t.csv", "buffer,start,end,size\na,3,3,4\n").unwrap_err();
        assert_eq!(e.message, "`end` (3) is not greater than `start` (3)");
        assert!(e.help.contains("[start, end)"), "{}", e.help);
        let e = read_csv("t.csv", "buffer,start,end,size\na,0,x,4\n").unwrap_err();
        assert_eq!(e.message, "`end` value `x` is not a non-negative integer");
        let e = read_csv("t.csv", "id,lower,upper,size,buffer\n").unwrap_err();
        assert_eq!(
            format!("{}: {}", e.location(), e.message),
            "t.csv:1:21: columns `id` and `buffer` are the same column (`id`)"
        );
    }

    #[test]
    fn plan_round_trips() {
        let text = "id,lower,upper,size,alignment,offset\n\"a,1\",0,3,4,4,8\nb,3,9,4,1,0\n";
        let input = read_csv("p.csv", text).unwrap();
        let plan = Plan::from_offsets(&input.problem, input.offsets.clone().unwrap());
        assert_eq!(write_plan_csv(&input.problem, &plan), text);
        let again = read_csv("p.csv", &write_problem_csv(&input.problem)).unwrap();
        assert_eq!(again.problem, input.problem);
    }

    /// Golden messages: each malformed input gives its line, column, what and how to fix.
    #[test]
    fn malformed_input_is_located_and_explained() {
        let cases: &[(&str, &str)] = &[
            ("", "t.csv:1:1: the file is empty"),
            (
                "id,lower,upper\n",
                "t.csv:1:1: the header has no `size` column",
            ),
            (
                "id,lower,upper,size,colour\n",
                "t.csv:1:21: unknown column `colour`",
            ),
            (
                "id,lower,upper,size,size\n",
                "t.csv:1:21: column `size` appears twice",
            ),
            (
                "id,lower,upper,size\na,0,x,4\n",
                "t.csv:2:5: `upper` value `x` is not a non-negative integer",
            ),
            (
                "id,lower,upper,size\na,0,1,-4\n",
                "t.csv:2:7: `size` value `-4` is not a non-negative integer",
            ),
            (
                "id,lower,upper,size\na,0,1,99999999999999999999\n",
                "t.csv:2:7: `size` value `99999999999999999999` does not fit in 64 bits",
            ),
            (
                "id,lower,upper,size\na,3,3,4\n",
                "t.csv:2:5: `upper` (3) is not greater than `lower` (3)",
            ),
            (
                "id,lower,upper,size\na,0,1,0\n",
                "t.csv:2:7: buffer `a` has size 0; every buffer needs at least one byte",
            ),
            (
                "id,lower,upper,size\na,0,1,4\na,1,2,4\n",
                "t.csv:3:1: duplicate id `a` (first on line 2)",
            ),
            (
                "id,lower,upper,size,alignment\na,0,1,4,3\n",
                "t.csv:2:9: buffer `a` has alignment 3, which is not a power of two",
            ),
            (
                "id,lower,upper,size\na,0,1\n",
                "t.csv:2:1: this row has 3 fields but the header has 4",
            ),
            ("id,lower,upper,size\n,0,1,4\n", "t.csv:2:1: empty id"),
            (
                "id,lower,upper,size\na,0,1,4611686018427387904\n",
                "t.csv:2:7: buffer `a` is too large: with the sizes before it (each plus the padding its alignment can need), more than 2^62 bytes, so addresses could overflow 64 bits",
            ),
            (
                // Each size alone is fine; five together would overflow the bytes live at once.
                "id,lower,upper,size\na,0,1,4611686018427387903\nb,0,1,4611686018427387903\n",
                "t.csv:3:7: buffer `b` is too large: with the sizes before it (each plus the padding its alignment can need), more than 2^62 bytes, so addresses could overflow 64 bits",
            ),
            (
                "id,lower,upper,size\na,,1,4\n",
                "t.csv:2:3: `lower` value `` is empty",
            ),
        ];
        for (text, expected) in cases {
            let e = read_csv("t.csv", text).expect_err(text);
            let got = format!("{}: {}", e.location(), e.message);
            assert_eq!(&got, expected, "input {text:?}");
            assert!(!e.help.is_empty());
        }
    }
}
