//! The plan `memplan!` compiles for a model TOML, as the CLI shows it: every command that reads a
//! model TOML (`plan`, `check`, `render`, `bench`) works on this one plan, made by the very
//! function the macro calls ([`memplan_core::model_plan::plan_model`]): its pools, pinned and
//! app-owned tensors and in-place chains, and the budget check that fails `cargo build`.
//!
//! Each tensor's lifetime is the one the generated `TENSORS` table reports
//! ([`memplan_core::codegen::reported_lifetimes`]): an input that an op overwrites in place ends at
//! that op's step, where its bytes become the output's.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use memplan_core::codegen::{ModelPlan, plan_model, reported_lifetimes};
use memplan_core::{Model, Solver, format_byte_size};

use crate::diagnostic;
use crate::output::{column_width, ratio};

/// A model and the plan the generated code uses for it.
pub(crate) struct Compiled {
    /// The parsed model.
    pub(crate) model: Model,
    /// Its plan, as `memplan!` makes it.
    pub(crate) plan: ModelPlan,
    /// `[start, end)` of every tensor as `TENSORS` reports it.
    pub(crate) lifetimes: Vec<(u64, u64)>,
    /// The in-place chain (index into `plan.chains`) of every tensor, if any.
    pub(crate) chain: Vec<Option<usize>>,
    /// Seconds the planning took.
    pub(crate) seconds: f64,
}

/// Reads and parses the model file at `path`; errors come drawn with their source line.
pub(crate) fn read(path: &Path) -> anyhow::Result<(Model, String)> {
    let text = crate::input::read_model_text(path)?;
    let model = memplan_core::parse_model(&path.display().to_string(), &text)
        .map_err(|e| anyhow::Error::new(diagnostic::render(&e, &text)))?;
    Ok((model, text))
}

/// Plans `model` (whose source is `text`) exactly as `memplan!` does, including its budget check.
pub(crate) fn compile(model: Model, text: &str) -> anyhow::Result<Compiled> {
    let start = Instant::now();
    let plan = plan_model(&model).map_err(|e| anyhow::Error::new(diagnostic::render(&e, text)))?;
    let seconds = start.elapsed().as_secs_f64();
    let lifetimes = reported_lifetimes(&model);
    let mut chain = vec![None; model.tensors.len()];
    for (c, members) in plan.chains.iter().enumerate() {
        for &i in members {
            chain[i] = Some(c);
        }
    }
    Ok(Compiled {
        model,
        plan,
        lifetimes,
        chain,
        seconds,
    })
}

/// The model at `path` planned as the generated code plans it; `solver`, `budget` and `nodes`
/// (the exact search's node budget), when given, replace the model's own.
pub(crate) fn load(
    path: &Path,
    solver: Option<Solver>,
    budget: Option<u64>,
    nodes: Option<u64>,
) -> anyhow::Result<Compiled> {
    let (mut model, text) = read(path)?;
    if solver.is_some() {
        model.solver = solver;
    }
    if nodes.is_some() {
        model.nodes = nodes;
    }
    if budget.is_some() {
        model.budget = budget;
    }
    compile(model, &text)
}

/// `arena N bytes`, or with pools `arena N bytes in K pools: a X, b Y`: the compiled arena as the
/// first line of `plan` and the verdict of `check` say it.
pub(crate) fn arena_text(plan: &ModelPlan) -> String {
    let total = plan.total_arena_size();
    match plan.pools.as_slice() {
        [pool] if pool.default => format!("arena {total} bytes"),
        pools => {
            let each: Vec<String> = pools
                .iter()
                .map(|p| format!("{} {}", p.name, p.arena_size))
                .collect();
            format!(
                "arena {total} bytes in {} pools: {}",
                pools.len(),
                each.join(", ")
            )
        }
    }
}

impl Compiled {
    /// Tensors that live in an arena (all but the app-owned ones).
    pub(crate) fn arena_tensors(&self) -> usize {
        self.plan.tensors.iter().flatten().count()
    }

    /// The sum of the pools' lower bounds (each chain counted as one rectangle, alignment
    /// ignored): what the arena is measured against.
    pub(crate) fn lower_bound(&self) -> u64 {
        self.plan.pools.iter().map(|p| p.lower_bound).sum()
    }

    /// Whether every pool's plan is proven smallest.
    fn optimal(&self) -> bool {
        self.plan.pools.iter().all(|p| p.optimal)
    }

    /// The solver, or one per pool when they differ.
    fn solver(&self) -> String {
        let pools = &self.plan.pools;
        let first = pools.first().map(|p| p.solver);
        if pools.iter().all(|p| Some(p.solver) == first) {
            let optimal = if self.optimal() { " (optimal)" } else { "" };
            format!(
                "{}{optimal}",
                first.map_or(String::new(), |s| s.to_string())
            )
        } else {
            let each: Vec<String> = pools
                .iter()
                .map(|p| {
                    let optimal = if p.optimal { " (optimal)" } else { "" };
                    format!("{} {}{optimal}", p.name, p.solver)
                })
                .collect();
            each.join(", ")
        }
    }

    /// The first line of `memplan plan`: the compiled arena (per pool when there are pools).
    pub(crate) fn summary_line(&self) -> String {
        let total = self.plan.total_arena_size();
        let arena = arena_text(&self.plan);
        let lower_bound = self.lower_bound();
        format!(
            "tensors {} | {arena} | lower bound {lower_bound} (in-place chains merged, alignment \
             ignored) | ratio {:.4} | solver {} | {:.2} ms",
            self.arena_tensors(),
            ratio(total, lower_bound),
            self.solver(),
            self.seconds * 1e3
        )
    }

    /// The lines under the summary: one per declared pool, the in-place chains, the app-owned
    /// tensors and the budget.
    pub(crate) fn describe(&self) -> String {
        let (model, plan) = (&self.model, &self.plan);
        let mut out = String::new();
        for pool in plan.pools.iter().filter(|p| !p.default) {
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
        if let [pool] = plan.pools.as_slice()
            && pool.default
        {
            let pinned = pool.pinned_count(model);
            if pinned > 0 {
                let _ = writeln!(out, "pinned: {pinned} tensor(s) at their `offset`");
            }
        }
        let members: usize = plan.chains.iter().map(Vec::len).sum();
        let _ = writeln!(
            out,
            "in place: {} alias chain(s) of {members} tensors | bound without sharing {} ({}){}",
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
        if let Some(budget) = model.budget {
            let _ = writeln!(
                out,
                "budget: {budget} bytes ({}), met",
                format_byte_size(budget)
            );
        }
        out
    }

    /// The pool, offset, lifetime and chain of every tensor, one row each.
    pub(crate) fn table(&self) -> String {
        let (model, plan) = (&self.model, &self.plan);
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
            let shares: Vec<&str> = self.chain[i]
                .map_or(&[][..], |c| &plan.chains[c])
                .iter()
                .filter(|&&j| j != i)
                .map(|&j| model.tensors[j].name.as_str())
                .collect();
            let (start, end) = self.lifetimes[i];
            let _ = writeln!(
                out,
                "{:<width$}  {pool:<pool_width$}  {offset:>14}  {:>14}  [{start}, {end})  {}",
                tensor.name,
                tensor.size,
                shares.join(", ")
            );
        }
        out
    }

    /// The plan as one JSON object. Top level: the compiled arena (`arena_size`, the sum over
    /// pools), `lower_bound`, `ratio`, `solver`, `optimal`, `time_ms`, `budget`; `pools` (name,
    /// arena size, lower bound, alignment, limit, section, solver, optimal, tensor count); `plan`
    /// (id, pool or null for an app-owned tensor, offset or null, size, start, end as `TENSORS`
    /// has them, and the chain it shares bytes in, or null); `lower_bound_without_inplace`.
    pub(crate) fn json(&self) -> serde_json::Value {
        let (model, plan) = (&self.model, &self.plan);
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
                let (start, end) = self.lifetimes[i];
                serde_json::json!({
                    "id": tensor.name,
                    "pool": place.map(|p| plan.pools[p.pool].name.as_str()),
                    "offset": place.map(|p| p.offset),
                    "size": tensor.size,
                    "start": start,
                    "end": end,
                    "chain": self.chain[i],
                })
            })
            .collect();
        let total = plan.total_arena_size();
        let lower_bound = self.lower_bound();
        serde_json::json!({
            "buffers": self.arena_tensors(),
            "arena_size": total,
            "lower_bound": lower_bound,
            "ratio": ratio(total, lower_bound),
            "solver": self.solver(),
            "optimal": self.optimal(),
            "time_ms": self.seconds * 1e3,
            "budget": model.budget,
            "fits_capacity": true,
            "pools": pools,
            "plan": tensors,
            "lower_bound_without_inplace": plan.lower_bound_without_aliasing,
        })
    }
}
