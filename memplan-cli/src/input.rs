//! Reading problems and plans from files: MiniMalloc CSV, or a model TOML (by extension).

use std::path::Path;

use anyhow::{Context, bail};
use memplan_core::{InputError, Problem, Solver};

use crate::diagnostic;

fn read_text(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read `{}`", path.display()))
}

/// Reads a model TOML as the `memplan!` macro does (the same checks and size limit,
/// [`memplan_core::model_file::MAX_MODEL_FILE_BYTES`]), so the CLI refuses exactly the files the
/// build refuses.
pub(crate) fn read_model_text(path: &Path) -> anyhow::Result<String> {
    memplan_core::model_file::read_model_file(path, "check the path, or create the file")
        .map_err(|reason| anyhow::anyhow!("cannot read model file `{}`: {reason}", path.display()))
}

/// Whether `path` names a model TOML (`.toml`) rather than a CSV.
pub(crate) fn is_model_toml(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
}

/// An input error with its source snippet.
fn located(error: &InputError, text: &str) -> anyhow::Error {
    anyhow::Error::new(diagnostic::render(error, text))
}

/// A problem with what a picture or report can say about it.
pub(crate) struct LoadedModel {
    /// The buffers.
    pub(crate) problem: Problem,
    /// The model's name (the file stem for CSV).
    pub(crate) name: String,
    /// One label per step (`kind name` of the op), when the input names its ops.
    pub(crate) step_labels: Option<Vec<String>>,
    /// The model's `solver`, if it names one.
    pub(crate) solver: Option<Solver>,
    /// The model's `budget`, if any.
    pub(crate) budget: Option<u64>,
    /// The model's `nodes` (the exact search's node budget), if any.
    pub(crate) nodes: Option<u64>,
}

/// Reads a problem with its name and op labels from a CSV or a model TOML.
pub(crate) fn read_model(path: &Path) -> anyhow::Result<LoadedModel> {
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("onnx"))
    {
        bail!(
            "`{}` is an ONNX model; import it first: `memplan import {} -o model.toml`, then use model.toml",
            path.display(),
            path.display()
        );
    }
    let text = if is_model_toml(path) {
        read_model_text(path)?
    } else {
        read_text(path)?
    };
    let file = path.display().to_string();
    if is_model_toml(path) {
        let model = memplan_core::parse_model(&file, &text).map_err(|e| located(&e, &text))?;
        let step_labels = model
            .ops
            .iter()
            .map(|op| {
                let name = op.source.as_deref().unwrap_or(&op.name);
                match &op.kind {
                    Some(kind) => format!("{kind} {name}"),
                    None => name.to_string(),
                }
            })
            .collect();
        return Ok(LoadedModel {
            problem: model.to_problem(),
            name: model.name.clone(),
            step_labels: Some(step_labels),
            solver: model.solver,
            budget: model.budget,
            nodes: model.nodes,
        });
    }
    let input = memplan_core::read_csv(&file, &text).map_err(|e| located(&e, &text))?;
    let name = path.file_stem().map_or_else(
        || "memory plan".to_string(),
        |s| s.to_string_lossy().into_owned(),
    );
    Ok(LoadedModel {
        problem: input.problem,
        name,
        step_labels: None,
        solver: None,
        budget: None,
        nodes: None,
    })
}

/// Reads a problem from a MiniMalloc CSV or a model TOML.
pub(crate) fn read_problem(path: &Path) -> anyhow::Result<Problem> {
    Ok(read_model(path)?.problem)
}
