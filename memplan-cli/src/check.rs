//! `memplan check`: whether a plan is one the problem allows, with every violation.
//!
//! For a MiniMalloc CSV problem, a plan is valid when every buffer has an offset that is a
//! multiple of its alignment and no two buffers live at a common step share a byte. For a model
//! TOML, a plan is valid when the code `memplan!` generates could use it: per pool, the same rules
//! with the `TENSORS` lifetimes, except that the tensors of one in-place chain share their bytes
//! by design (they must start at the same offset and stay in one pool); pinned tensors sit at
//! their `offset`; a tensor bound to a pool (`pool = "sram"`) is in that pool; app-owned
//! (`external`) tensors have no place; a pool's arena stays within its `size`, and all arenas
//! together within the model's `budget`. The plan's optional columns must agree with the model,
//! `chain` included (it must group the tensors as the model's in-place chains do).
//!
//! Offsets are checked before any arithmetic on them: a buffer that would end past
//! [`MAX_END`] is a violation, never a wrapped number.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use memplan_core::codegen::{ModelPlan, PlannedPool, TensorPlace};
use memplan_core::{AliasGroups, Model, Problem, Solver, Violation};

use crate::plan_csv::{PlanFile, PlanRow};
use crate::{console, input, model_plan, output, plan_csv};

/// The highest byte address a plan may reach: memplan-core plans at most 2^62 bytes (so that
/// sums and roundings of sizes and offsets never overflow `u64`).
const MAX_END: u64 = u64::MAX / 4;

#[derive(clap::Args, Debug)]
pub(crate) struct CheckArgs {
    /// The problem: a MiniMalloc CSV or a model TOML.
    input: PathBuf,
    /// The plan: a CSV with at least the columns `id` and `offset`, one row per buffer; for a
    /// model with several `[[pools]]` also `pool`. The other columns `plan --out` writes may be
    /// present and must then agree with the problem: `lower`, `upper`, `size` and `alignment`,
    /// and `chain`, which must group the tensors as the model's in-place chains do.
    plan: PathBuf,
}

/// `offset + size`, if it stays within [`MAX_END`].
fn end_of(offset: u64, size: u64) -> Option<u64> {
    offset.checked_add(size).filter(|&end| end <= MAX_END)
}

/// The violation text for a buffer that would end past [`MAX_END`].
fn past_the_end(id: &str, offset: u64, size: u64) -> String {
    format!(
        "`{id}` at offset {offset} with {size} bytes would end past byte {MAX_END} (2^62 - 1), the \
         largest arena memplan plans"
    )
}

pub(crate) fn run(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let plan = plan_csv::read(&args.plan)?;
    if input::is_model_toml(&args.input) {
        check_model(&args.input, &plan)
    } else {
        check_problem(&args.input, &plan)
    }
}

/// Prints the violations (or `ok_line` when there are none) and gives the exit code.
fn report(
    violations: &[String],
    buffers: usize,
    ok_line: impl FnOnce() -> String,
) -> anyhow::Result<ExitCode> {
    if violations.is_empty() {
        console::println(&ok_line())?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = String::new();
    for violation in violations {
        out.push_str(&format!("violation: {violation}\n"));
    }
    out.push_str(&format!(
        "{} violation(s) in {buffers} buffers\n",
        violations.len()
    ));
    console::print(&out)?;
    Ok(ExitCode::FAILURE)
}

/// The rows of `plan` matched to `names` (ids in problem order): the row of each name, or an
/// error located at a row naming something unknown or named twice.
fn match_rows<'p>(plan: &'p PlanFile, names: &[&str]) -> anyhow::Result<Vec<Option<&'p PlanRow>>> {
    let index: BTreeMap<&str, usize> = names.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    let mut rows: Vec<Option<&PlanRow>> = vec![None; names.len()];
    for row in &plan.rows {
        let Some(&i) = index.get(row.id.0.as_str()) else {
            return Err(plan.error(
                row.line,
                row.id.1,
                format!("the problem has no buffer `{}`", row.id.0),
                "a plan names the problem's buffers (tensors of a model); check that plan and \
                 problem belong together",
            ));
        };
        if let Some(first) = rows[i] {
            return Err(plan.error(
                row.line,
                row.id.1,
                format!(
                    "`{}` is placed twice (first on line {})",
                    row.id.0, first.line
                ),
                "give every buffer one row",
            ));
        }
        rows[i] = Some(row);
    }
    Ok(rows)
}

/// An error at the first of `row`'s optional columns that disagrees with `expected`
/// (`lower`, `upper`, `size`, `alignment`).
fn check_facts(plan: &PlanFile, row: &PlanRow, expected: [(&str, u64); 4]) -> anyhow::Result<()> {
    for &(name, value, column) in &row.facts {
        if let Some(&(_, want)) = expected.iter().find(|(n, _)| *n == name)
            && want != value
        {
            return Err(plan.error(
                row.line,
                column,
                format!(
                    "`{name}` of `{}` is {value}, but the problem says {want}",
                    row.id.0
                ),
                "this plan was made for another problem: plan it again, or remove the column",
            ));
        }
    }
    Ok(())
}

/// The offsets `plan` gives `problem`'s buffers (`None` for a missing row or one that would end
/// past [`MAX_END`]) and every violation, as text. Rows that name unknown buffers, name one twice,
/// or disagree with the problem's lifetimes and sizes are errors located in the plan file.
pub(crate) fn problem_offsets(
    problem: &Problem,
    plan: &PlanFile,
) -> anyhow::Result<(Vec<Option<u64>>, Vec<String>)> {
    let names: Vec<&str> = problem.buffers().iter().map(|b| b.id.as_str()).collect();
    let rows = match_rows(plan, &names)?;
    let mut offsets = Vec::with_capacity(problem.len());
    let mut too_far = Vec::new();
    for (buffer, row) in problem.buffers().iter().zip(&rows) {
        let Some(row) = row else {
            offsets.push(None);
            continue;
        };
        if !row.pool.0.is_empty() {
            return Err(plan.error(
                row.line,
                row.pool.1,
                "a `pool` in a plan for a CSV problem",
                "pools belong to model TOMLs; leave the column empty or remove it",
            ));
        }
        let l = buffer.lifetime;
        check_facts(
            plan,
            row,
            [
                ("lower", l.start),
                ("upper", l.end),
                ("size", buffer.size),
                ("alignment", buffer.alignment),
            ],
        )?;
        let offset = row.offset.0;
        if end_of(offset, buffer.size).is_none() {
            too_far.push(past_the_end(&buffer.id, offset, buffer.size));
            offsets.push(None);
        } else {
            offsets.push(Some(offset));
        }
    }
    let mut violations = too_far;
    let far: Vec<bool> = rows
        .iter()
        .zip(&offsets)
        .map(|(row, offset)| row.is_some() && offset.is_none())
        .collect();
    violations.extend(
        memplan_core::validate_offsets(problem, &offsets)
            .iter()
            // A buffer past the end was reported above, not as missing.
            .filter(|v| !matches!(v, Violation::MissingOffset { buffer } if far[*buffer]))
            .map(|v| v.display(problem, &offsets).to_string()),
    );
    Ok((offsets, violations))
}

/// `check` of a plan for a MiniMalloc CSV problem.
fn check_problem(path: &Path, plan: &PlanFile) -> anyhow::Result<ExitCode> {
    let problem = input::read_problem(path)?;
    let (offsets, violations) = problem_offsets(&problem, plan)?;
    let arena = problem
        .buffers()
        .iter()
        .zip(&offsets)
        .filter_map(|(b, o)| o.and_then(|o| end_of(o, b.size)))
        .max()
        .unwrap_or(0);
    let lower_bound = memplan_core::lower_bound(&problem);
    report(&violations, problem.len(), || {
        format!(
            "ok: {} buffers, arena {arena} bytes, lower bound {lower_bound}, ratio {:.4}",
            problem.len(),
            output::ratio(arena, lower_bound)
        )
    })
}

/// A model's plan read from a plan CSV, with what is wrong with it.
pub(crate) struct ModelPlanFromCsv {
    /// The plan: the rows' places, the pools' arenas as the rows make them.
    pub(crate) plan: ModelPlan,
    /// Every violation, as text; empty for a plan the generated code could use.
    pub(crate) violations: Vec<String>,
}

/// Reads `plan` as a plan of `model` and checks it the way [`memplan_core::model_plan::check`]
/// checks the compiler's own plans, plus what a hand-made plan can get wrong besides (missing
/// rows, offsets past [`MAX_END`], a chain split over pools, the budget). Errors (a row that names
/// no tensor, an app-owned tensor, an unknown pool, a lifetime or size that disagrees) are located
/// in the plan file.
pub(crate) fn model_plan_from_csv(
    model: &Model,
    plan: &PlanFile,
) -> anyhow::Result<ModelPlanFromCsv> {
    let lifetimes = memplan_core::codegen::reported_lifetimes(model);
    let names: Vec<&str> = model.tensors.iter().map(|t| t.name.as_str()).collect();
    let rows = match_rows(plan, &names)?;
    let pool_names: Vec<&str> = if model.pools.is_empty() {
        vec!["arena"]
    } else {
        model.pools.iter().map(|p| p.name.as_str()).collect()
    };
    if !plan.has_pool && pool_names.len() > 1 {
        return Err(plan.error(
            1,
            1,
            format!(
                "the model has {} pools ({}) but the plan has no `pool` column",
                pool_names.len(),
                pool_names.join(", ")
            ),
            "add a `pool` column naming each tensor's pool (`memplan plan model.toml --out plan.csv` writes one)",
        ));
    }
    let mut violations = Vec::new();
    let mut places: Vec<Option<TensorPlace>> = vec![None; model.tensors.len()];
    for (i, (tensor, row)) in model.tensors.iter().zip(&rows).enumerate() {
        let Some(row) = row else {
            if !tensor.memory.external {
                violations.push(format!("tensor `{}` has no offset", tensor.name));
            }
            continue;
        };
        if tensor.memory.external {
            return Err(plan.error(
                row.line,
                row.id.1,
                format!(
                    "tensor `{}` is owned by the application (`external`): it has no place in an arena",
                    tensor.name
                ),
                "remove its row",
            ));
        }
        let pool = if plan.has_pool {
            let Some(pool) = pool_names.iter().position(|&p| p == row.pool.0) else {
                return Err(plan.error(
                    row.line,
                    row.pool.1,
                    format!("the model has no pool `{}`", row.pool.0),
                    format!("name one of its pools: {}", pool_names.join(", ")),
                ));
            };
            pool
        } else {
            0
        };
        let (start, end) = lifetimes[i];
        check_facts(
            plan,
            row,
            [
                ("lower", start),
                ("upper", end),
                ("size", tensor.size),
                ("alignment", tensor.alignment),
            ],
        )?;
        let offset = row.offset.0;
        if end_of(offset, tensor.size).is_none() {
            violations.push(past_the_end(&tensor.name, offset, tensor.size));
            continue;
        }
        places[i] = Some(TensorPlace { pool, offset });
    }
    let mut pools = Vec::with_capacity(pool_names.len());
    for (p, name) in pool_names.iter().enumerate() {
        let tensors: Vec<usize> = (0..model.tensors.len())
            .filter(|&i| places[i].is_some_and(|place| place.pool == p))
            .collect();
        let decl = model.pools.get(p);
        let alignment = if decl.is_some() {
            tensors
                .iter()
                .map(|&i| model.tensors[i].alignment)
                .fold(model.alignment, u64::max)
        } else {
            model.arena_alignment()
        };
        let height = tensors
            .iter()
            .filter_map(|&i| end_of(places[i]?.offset, model.tensors[i].size))
            .max()
            .unwrap_or(0);
        pools.push(PlannedPool {
            name: (*name).to_owned(),
            default: decl.is_none(),
            capacity: decl.and_then(|d| d.capacity),
            link_section: decl.and_then(|d| d.link_section.clone()),
            tensors,
            // Within MAX_END (2^62), so rounding up to an alignment (at most 2^29) cannot wrap.
            arena_size: memplan_core::align_up(height, alignment),
            alignment,
            lower_bound: 0,
            solver: Solver::Auto,
            optimal: false,
        });
    }
    let pairs: Vec<(usize, usize)> = model.aliases.iter().map(|a| (a.output, a.input)).collect();
    let chains: Vec<Vec<usize>> = AliasGroups::new(model.tensors.len(), &pairs)
        .map(|groups| {
            groups
                .groups()
                .iter()
                .filter(|members| members.len() > 1)
                .map(|members| {
                    members
                        .iter()
                        .copied()
                        .filter(|&i| !model.tensors[i].memory.external)
                        .collect::<Vec<usize>>()
                })
                .filter(|members| members.len() > 1)
                .collect()
        })
        .unwrap_or_default();
    check_chain_column(model, plan, &rows, &chains)?;
    for alias in &model.aliases {
        if let (Some(output), Some(input)) = (places[alias.output], places[alias.input])
            && output.pool != input.pool
        {
            violations.push(format!(
                "`{}` is written in place over `{}`, but they are in different pools ({} and {})",
                model.tensors[alias.output].name,
                model.tensors[alias.input].name,
                pool_names[output.pool],
                pool_names[input.pool]
            ));
        }
    }
    let model_plan = ModelPlan {
        pools,
        tensors: places,
        chains,
        lower_bound_without_aliasing: 0,
    };
    // Tensors reported above (no row, or past the end) have no place; the core check would call
    // them misplaced.
    let unplaced: std::collections::BTreeSet<String> = (0..model.tensors.len())
        .filter(|&i| model_plan.tensors[i].is_none() && !model.tensors[i].memory.external)
        .map(|i| {
            format!(
                "tensor `{}` is misplaced (external or not)",
                model.tensors[i].name
            )
        })
        .collect();
    violations.extend(
        memplan_core::model_plan::check(model, &model_plan)
            .into_iter()
            .filter(|v| !unplaced.contains(v)),
    );
    if let Some(budget) = model.budget {
        let total: u64 = model_plan.pools.iter().map(|p| p.arena_size).sum();
        if total > budget {
            violations.push(format!(
                "the arenas need {total} bytes but the model's budget is {budget} bytes"
            ));
        }
    }
    Ok(ModelPlanFromCsv {
        plan: model_plan,
        violations,
    })
}

/// An error at the first `chain` cell (if the plan has the column) that groups the tensors
/// otherwise than the model's in-place chains do: a number on a tensor in no chain, no number on a
/// chain's member, one number on two chains, or two numbers on one chain. The numbers are labels
/// (`plan --out` numbers the chains from 0); what must agree is which tensors share bytes.
fn check_chain_column(
    model: &Model,
    plan: &PlanFile,
    rows: &[Option<&PlanRow>],
    chains: &[Vec<usize>],
) -> anyhow::Result<()> {
    let mut chain_of: Vec<Option<usize>> = vec![None; model.tensors.len()];
    for (c, members) in chains.iter().enumerate() {
        for &i in members {
            chain_of[i] = Some(c);
        }
    }
    let names = |c: usize| {
        chains[c]
            .iter()
            .map(|&i| format!("`{}`", model.tensors[i].name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let wrong = |row: &PlanRow, column: usize, message: String| {
        plan.error(
            row.line,
            column,
            message,
            "the model defines the in-place chains: give the members of each chain one number \
             and the other tensors none (or remove the column)",
        )
    };
    // Per label, the chain and the row that gave it first; per chain, its label and that row.
    let mut by_label: BTreeMap<u64, (usize, &PlanRow)> = BTreeMap::new();
    let mut label_of: Vec<Option<(u64, &PlanRow)>> = vec![None; chains.len()];
    for (i, row) in rows.iter().enumerate() {
        let Some(row) = row else { continue };
        let Some((label, column)) = row.chain else {
            continue;
        };
        let name = &model.tensors[i].name;
        match (label, chain_of[i]) {
            (None, None) => {}
            (None, Some(c)) => {
                return Err(wrong(
                    row,
                    column,
                    format!(
                        "`chain` of `{name}` is empty, but the model makes it share its bytes in \
                         place: it is in the chain {}",
                        names(c)
                    ),
                ));
            }
            (Some(label), None) => {
                return Err(wrong(
                    row,
                    column,
                    format!(
                        "`chain` of `{name}` is {label}, but the model writes no tensor in place \
                         over `{name}` nor `{name}` over another: it is in no chain"
                    ),
                ));
            }
            (Some(label), Some(c)) => {
                if let Some(&(other, first)) = by_label.get(&label)
                    && other != c
                {
                    return Err(wrong(
                        row,
                        column,
                        format!(
                            "`chain` of `{name}` is {label}, as for `{}` (line {}), but they are \
                             in different chains ({} and {})",
                            first.id.0,
                            first.line,
                            names(c),
                            names(other)
                        ),
                    ));
                }
                if let Some((other, first)) = label_of[c]
                    && other != label
                {
                    return Err(wrong(
                        row,
                        column,
                        format!(
                            "`chain` of `{name}` is {label}, but `{}` (line {}), in the same \
                             chain ({}), has {other}",
                            first.id.0,
                            first.line,
                            names(c)
                        ),
                    ));
                }
                by_label.entry(label).or_insert((c, row));
                label_of[c].get_or_insert((label, row));
            }
        }
    }
    Ok(())
}

/// `check` of a plan for a model TOML.
fn check_model(path: &Path, plan: &PlanFile) -> anyhow::Result<ExitCode> {
    let (model, _) = model_plan::read(path)?;
    let checked = model_plan_from_csv(&model, plan)?;
    let placed = checked.plan.tensors.iter().flatten().count();
    report(&checked.violations, model.tensors.len(), || {
        let arena = model_plan::arena_text(&checked.plan);
        format!(
            "ok: {placed} tensors, {arena}, {} in-place chain(s), as `memplan!` can compile it",
            checked.plan.chains.len()
        )
    })
}
