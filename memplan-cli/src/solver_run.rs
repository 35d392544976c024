//! One solver run, timed and checked: what `memplan plan`, `bench` and `render` solve with and
//! what the summaries of [`crate::output`] report. It uses no other module of the CLI.

use std::time::Instant;

use anyhow::bail;
use memplan_core::{Problem, Solution, SolveOptions};

/// A solver's result and its wall-clock time.
pub(crate) struct SolverRun {
    pub(crate) solution: Solution,
    pub(crate) seconds: f64,
}

/// Solves and times one run; also checks the plan, since a benchmark of invalid plans is void.
pub(crate) fn run_solver(problem: &Problem, options: &SolveOptions) -> anyhow::Result<SolverRun> {
    let start = Instant::now();
    let solution = memplan_core::solve(problem, options)?;
    let seconds = start.elapsed().as_secs_f64();
    let violations = memplan_core::validate(problem, &solution.plan);
    if let Some(first) = violations.first() {
        let offsets: Vec<Option<u64>> = solution.plan.offsets.iter().map(|&o| Some(o)).collect();
        bail!(
            "solver {} made an invalid plan ({} violations), first: {}",
            options.solver,
            violations.len(),
            first.display(problem, &offsets)
        );
    }
    Ok(SolverRun { solution, seconds })
}
