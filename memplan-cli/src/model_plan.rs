//! What `memplan!` would generate for a model TOML, in lines: its pools, pinned and app-owned
//! tensors, and in-place chains (`memplan plan model.toml` prints them under the summary).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;
use memplan_core::codegen::{ModelPlan, plan_model};
use memplan_core::{Model, Solver, format_byte_size};

use crate::diagnostic;
use crate::output::column_width;

/// The model file at `path`, planned as the generated code plans it (with `solver` and the
/// node budget `nodes` if given).
pub(crate) fn plan(
    path: &Path,
    solver: Option<Solver>,
    nodes: Option<u64>,
) -> anyhow::Result<(Model, ModelPlan)> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read `{}`", path.display()))?;
    let file = path.display().to_string();
    let mut model = memplan_core::parse_model(&file, &text)
        .map_err(|e| anyhow::Error::new(diagnostic::render(&e, &text)))?;
    if solver.is_some() {
        model.solver = solver;
    }
    if nodes.is_some() {
        model.nodes = nodes;
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

/// Whether the generated code places tensors differently from one plain arena: several pools,
/// in-place chains, or app-owned tensors.
pub(crate) fn differs_from_one_arena(model: &Model, plan: &ModelPlan) -> bool {
    plan.pools.len() > 1
        || !plan.chains.is_empty()
        || model.tensors.iter().any(|t| t.memory.external)
}

/// The pool, offset and chain of every tensor as the generated code has them, one row each.
pub(crate) fn table(model: &Model, plan: &ModelPlan) -> String {
    let width = column_width("tensor", model.tensors.iter().map(|t| t.name.as_str()));
    let pool_width = column_width("external", plan.pools.iter().map(|p| p.name.as_str()));
    let mut out = format!(
        "{:<width$}  {:<pool_width$}  {:>14}  {:>14}  lifetime  shares with\n",
        "tensor", "pool", "offset", "bytes"
    );
    for (i, tensor) in model.tensors.iter().enumerate() {
        let (pool, offset) = match plan.tensors[i] {
            Some(place) => (
                plan.pools[place.pool].name.as_str(),
                place.offset.to_string(),
            ),
            None => ("external", "-".to_string()),
        };
        let shares: Vec<&str> = plan
            .chain_of(i)
            .unwrap_or(&[])
            .iter()
            .filter(|&&j| j != i)
            .map(|&j| model.tensors[j].name.as_str())
            .collect();
        let _ = writeln!(
            out,
            "{:<width$}  {pool:<pool_width$}  {offset:>14}  {:>14}  {}  {}",
            tensor.name,
            tensor.size,
            tensor.lifetime,
            shares.join(", ")
        );
    }
    out
}

/// The generated plan as JSON: `pools` (name, arena size, lower bound, alignment, limit, section,
/// solver, optimal, tensor count) and `tensors` (id, pool name or null for an app-owned tensor,
/// offset or null, size, start, end, and the chain index it shares memory in, or null).
pub(crate) fn json(model: &Model, plan: &ModelPlan) -> serde_json::Value {
    let pools: Vec<serde_json::Value> = plan
        .pools
        .iter()
        .map(|pool| {
            serde_json::json!({
                "name": pool.name,
                "arena_size": pool.arena_size,
                "lower_bound": pool.lower_bound,
                "alignment": pool.alignment,
                "size_limit": pool.capacity,
                "link_section": pool.link_section,
                "solver": pool.solver.to_string(),
                "optimal": pool.optimal,
                "tensors": pool.tensors.len(),
            })
        })
        .collect();
    let tensors: Vec<serde_json::Value> = model
        .tensors
        .iter()
        .enumerate()
        .map(|(i, tensor)| {
            let place = plan.tensors[i];
            serde_json::json!({
                "id": tensor.name,
                "pool": place.map(|p| plan.pools[p.pool].name.as_str()),
                "offset": place.map(|p| p.offset),
                "size": tensor.size,
                "start": tensor.lifetime.start,
                "end": tensor.lifetime.end,
                "chain": plan.chains.iter().position(|c| c.contains(&i)),
            })
        })
        .collect();
    serde_json::json!({ "pools": pools, "tensors": tensors })
}
