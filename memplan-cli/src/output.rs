//! Summaries, and the one way the CLI writes an output file.

use std::fmt;
use std::path::Path;

use memplan_core::{Plan, Problem};
use serde::Serialize;

use crate::solver_run::SolverRun;

/// The one-line result of `memplan plan`.
#[derive(Debug, Serialize)]
pub(crate) struct Summary {
    pub(crate) buffers: usize,
    pub(crate) arena_size: u64,
    pub(crate) lower_bound: u64,
    pub(crate) ratio: f64,
    pub(crate) solver: String,
    pub(crate) time_ms: f64,
    pub(crate) fits_capacity: bool,
    pub(crate) optimal: bool,
    pub(crate) nodes: u64,
}

impl Summary {
    pub(crate) fn new(problem: &Problem, run: &SolverRun, capacity: Option<u64>) -> Self {
        let arena_size = run.solution.plan.arena_size;
        let lower_bound = memplan_core::lower_bound(problem);
        Self {
            buffers: problem.len(),
            arena_size,
            lower_bound,
            ratio: ratio(arena_size, lower_bound),
            solver: run.solution.solver.to_string(),
            time_ms: run.seconds * 1e3,
            fits_capacity: capacity.is_none_or(|c| arena_size <= c),
            optimal: run.solution.optimal,
            nodes: run.solution.nodes,
        }
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "buffers {} | arena {} bytes | lower bound {} | ratio {:.4} | solver {}{} | {:.2} ms",
            self.buffers,
            self.arena_size,
            self.lower_bound,
            self.ratio,
            self.solver,
            if self.optimal { " (optimal)" } else { "" },
            self.time_ms
        )
    }
}

/// What `memplan plan` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// The summary line, then one row per buffer.
    Table,
    /// The summary and the plan as one JSON object.
    Json,
    /// The plan as CSV (`id,lower,upper,size[,alignment],offset`); the summary goes to stderr.
    Csv,
}

/// The width of a text column: its widest entry or its header.
pub(crate) fn column_width<'a>(header: &str, entries: impl IntoIterator<Item = &'a str>) -> usize {
    entries
        .into_iter()
        .map(|e| e.chars().count())
        .chain([header.chars().count()])
        .max()
        .unwrap_or(0)
}

/// One row per buffer: id, offset, size, lifetime, aligned in columns.
pub(crate) fn plan_table(problem: &Problem, plan: &Plan) -> String {
    let width = column_width("buffer", problem.buffers().iter().map(|b| b.id.as_str()));
    let mut out = format!(
        "{:<width$}  {:>14}  {:>14}  lifetime\n",
        "buffer", "offset", "bytes"
    );
    for (buffer, offset) in problem.buffers().iter().zip(&plan.offsets) {
        out.push_str(&format!(
            "{:<width$}  {:>14}  {:>14}  {}\n",
            buffer.id, offset, buffer.size, buffer.lifetime
        ));
    }
    out
}

/// One buffer of the JSON plan.
#[derive(Debug, Serialize)]
struct PlacedBuffer<'a> {
    id: &'a str,
    offset: u64,
    size: u64,
    start: u64,
    end: u64,
}

/// The summary's keys plus `plan`: one `{id, offset, size, start, end}` per buffer.
pub(crate) fn plan_json(
    summary: &Summary,
    problem: &Problem,
    plan: &Plan,
) -> anyhow::Result<serde_json::Value> {
    let mut value = serde_json::to_value(summary)?;
    let placed: Vec<PlacedBuffer<'_>> = problem
        .buffers()
        .iter()
        .zip(&plan.offsets)
        .map(|(b, &offset)| PlacedBuffer {
            id: &b.id,
            offset,
            size: b.size,
            start: b.lifetime.start,
            end: b.lifetime.end,
        })
        .collect();
    value["plan"] = serde_json::to_value(placed)?;
    Ok(value)
}

/// `arena / lower_bound`, 1 for an empty problem.
pub(crate) fn ratio(arena: u64, lower_bound: u64) -> f64 {
    if lower_bound == 0 {
        1.0
    } else {
        arena as f64 / lower_bound as f64
    }
}

/// Writes `contents` to `path`, the one way every output file of the CLI is written: whole or
/// not at all, never replacing a device, FIFO or symlink (`memplan_output::write_file`).
pub(crate) fn write_atomically(path: &Path, contents: &str) -> anyhow::Result<()> {
    Ok(memplan_output::write_file(path, contents.as_bytes())?)
}
