//! The default solver: the best of the heuristics, then exact search (issue 4). Placeholder.

use crate::model::Problem;
use crate::solve::{Solution, SolveOptions, Solver};

/// Placeholder: the better of best-fit and first-fit.
pub(crate) fn solve(problem: &Problem, _options: &SolveOptions) -> Solution {
    let candidates = [
        (Solver::BestFit, crate::solve::best_fit::solve(problem)),
        (Solver::FirstFit, crate::solve::first_fit::solve(problem)),
    ];
    let (solver, plan) = candidates
        .into_iter()
        .min_by_key(|(_, plan)| plan.arena_size)
        .expect("two candidates");
    let optimal = plan.arena_size == crate::bounds::lower_bound(problem);
    Solution {
        plan,
        optimal,
        nodes: 0,
        solver,
    }
}
