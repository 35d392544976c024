//! What `memplan!` would generate for a model TOML, in lines: its pools, pinned and app-owned
//! tensors, and in-place chains (`memplan plan model.toml` prints them under the summary).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;
use memplan_core::codegen::{ModelPlan, plan_model};
use memplan_core::{Model, Solver, format_byte_size};

use crate::diagnostic;

/// The model file at `path`, planned as the generated code plans it (with `solver` if given).
pub(crate) fn plan(path: &Path, solver: Option<Solver>) -> anyhow::Result<(Model, ModelPlan)> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read `{}`", path.display()))?;
    let file = path.display().to_string();
    let mut model = memplan_core::parse_model(&file, &text)
        .map_err(|e| anyhow::Error::new(diagnostic::render(&e, &text)))?;
    if solver.is_some() {
        model.solver = solver;
    }
    let plan = plan_model(&model).map_err(|e| anyhow::Error::new(diagnostic::render(&e, &text)))?;
    Ok((model, plan))
}

/// One line per pool, then the in-place chains and the app-owned tensors.
pub(crate) fn describe(model: &Model, plan: &ModelPlan) -> String {
    let mut out = String::new();
    for pool in &plan.pools {
        let pinned = pool.pinned_count(model);
        let limit = pool
            .capacity
            .map_or(String::new(), |c| format!(" of {c} allowed"));
        let section = pool
            .link_section
            .as_ref()
            .map_or(String::new(), |s| format!(" | section {s}"));
        let _ = writeln!(
            out,
            "pool {}: {} bytes ({}){limit} | lower bound {} | {} tensors | {pinned} pinned | solver {}{}{section}",
            pool.name,
            pool.arena_size,
            format_byte_size(pool.arena_size),
            pool.lower_bound,
            pool.tensors.len(),
            pool.solver,
            if pool.optimal { " (optimal)" } else { "" },
        );
    }
    let members: usize = plan.chains.iter().map(Vec::len).sum();
    let _ = writeln!(
        out,
        "in place: {} alias chain(s) of {members} tensors | lower bound without sharing {} ({}){}",
        plan.chains.len(),
        plan.lower_bound_without_aliasing,
        format_byte_size(plan.lower_bound_without_aliasing),
        if model.inplace {
            ""
        } else {
            " | off (`inplace = false`)"
        }
    );
    let external: Vec<&str> = model
        .tensors
        .iter()
        .filter(|t| t.memory.external)
        .map(|t| t.name.as_str())
        .collect();
    if !external.is_empty() {
        let _ = writeln!(
            out,
            "external: {} tensor(s) owned by the application, not in any arena: {}",
            external.len(),
            external.join(", ")
        );
    }
    out
}
