//! Planning a parsed model: its solver, its budget, and a budget error that explains the peak.

use crate::bounds::{live_at, lower_bound, peak_step};
use crate::error::InputError;
use crate::model::align_up;
use crate::model_file::{Model, format_byte_size};
use crate::solve::{Solution, SolveOptions, solve};

/// How many of the largest live tensors a budget error names.
const NAMED_IN_BUDGET_ERROR: usize = 5;

/// Plans the model with its solver (default: [`crate::DEFAULT_OPTIONS`], i.e. `auto`) and checks
/// its budget against the arena the generated code would have (the plan's height rounded up to
/// the arena's alignment).
///
/// Over budget, the error gives the arena, the lower bound, the budget, the step at which the
/// most bytes are live and the largest tensors live then, located at the `budget` key.
pub fn plan_model(model: &Model) -> Result<Solution, InputError> {
    let problem = model.to_problem();
    let mut options = SolveOptions::default();
    if let Some(solver) = model.solver {
        options.solver = solver;
    }
    options.capacity = model.budget;
    let solution = solve(&problem, &options).map_err(|e| {
        InputError::new(
            &model.file,
            model.locations.model.line,
            model.locations.model.column,
            format!("the planner failed: {e}"),
            "use the default solver (remove `solver`) or `solver = \"auto\"`",
        )
    })?;
    let Some(budget) = model.budget else {
        return Ok(solution);
    };
    let arena = align_up(solution.plan.arena_size, model.arena_alignment());
    if arena <= budget {
        return Ok(solution);
    }
    let bound = lower_bound(&problem);
    let (step, live) = peak_step(&problem).unwrap_or((0, 0));
    let largest: Vec<String> = live_at(&problem, step)
        .into_iter()
        .take(NAMED_IN_BUDGET_ERROR)
        .map(|i| {
            let t = &model.tensors[i];
            format!("`{}` ({} bytes)", t.name, t.size)
        })
        .collect();
    let op = model
        .ops
        .get(usize::try_from(step).unwrap_or(usize::MAX))
        .map_or(String::new(), |op| format!(" (op `{}`)", op.name));
    let message = format!(
        "over budget: the arena needs {arena} bytes ({}), the budget is {budget} bytes ({}); \
         the lower bound is {bound} bytes ({}). At step {step}{op}, {live} bytes are live; \
         the largest tensors then: {}",
        format_byte_size(arena),
        format_byte_size(budget),
        format_byte_size(bound),
        largest.join(", "),
    );
    let help = if bound > budget {
        format!(
            "no plan can fit: even the lower bound is over budget. Raise `budget` to at least \
             {} bytes, or make the tensors live at step {step} smaller (split the op, use a \
             smaller dtype or shape)",
            align_up(bound, model.arena_alignment())
        )
    } else {
        format!(
            "raise `budget` to {arena} bytes, or try `solver = \"exact\"`, which may find a plan \
             down to the lower bound, or lower `alignment` to cut padding"
        )
    };
    let location = model.locations.budget.unwrap_or(model.locations.model);
    Err(InputError::new(
        &model.file,
        location.line,
        location.column,
        message,
        help,
    ))
}
