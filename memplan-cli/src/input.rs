//! Reading problems and plans from files.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, bail};
use memplan_core::Problem;

/// The name errors use for a file: its path as given.
fn display_name(path: &Path) -> String {
    path.display().to_string()
}

fn read_text(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read `{}`", path.display()))
}

/// Reads a problem from a MiniMalloc CSV.
pub(crate) fn read_problem(path: &Path) -> anyhow::Result<Problem> {
    let text = read_text(path)?;
    let input = memplan_core::read_csv(&display_name(path), &text)?;
    Ok(input.problem)
}

/// A problem with what a picture or report can say about it.
pub(crate) struct LoadedModel {
    /// The buffers.
    pub(crate) problem: Problem,
    /// The model's name (the file stem for CSV).
    pub(crate) name: String,
    /// One label per step (`kind name` of the op), when the input names its ops.
    pub(crate) step_labels: Option<Vec<String>>,
}

/// Reads a problem with its name and op labels.
pub(crate) fn read_model(path: &Path) -> anyhow::Result<LoadedModel> {
    let problem = read_problem(path)?;
    let name = path.file_stem().map_or_else(
        || "memory plan".to_string(),
        |s| s.to_string_lossy().into_owned(),
    );
    Ok(LoadedModel {
        problem,
        name,
        step_labels: None,
    })
}

/// Reads the `offset` column of a plan CSV and matches it to `problem`'s buffers by id.
pub(crate) fn read_offsets(path: &Path, problem: &Problem) -> anyhow::Result<Vec<Option<u64>>> {
    let text = read_text(path)?;
    let plan = memplan_core::read_csv(&display_name(path), &text)?;
    let Some(offsets) = plan.offsets else {
        bail!(
            "`{}` has no `offset` column; a plan is the problem's CSV plus an `offset` column",
            path.display()
        );
    };
    let by_id: BTreeMap<&str, u64> = plan
        .problem
        .buffers()
        .iter()
        .map(|b| b.id.as_str())
        .zip(offsets)
        .collect();
    Ok(problem
        .buffers()
        .iter()
        .map(|b| by_id.get(b.id.as_str()).copied())
        .collect())
}
