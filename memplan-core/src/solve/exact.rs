//! Branch and bound (issue 4). Placeholder until the real solver lands.

use crate::model::Problem;
use crate::solve::{Solution, SolveOptions, Solver};

/// Placeholder: best-fit.
pub(crate) fn solve(problem: &Problem, _options: &SolveOptions) -> Solution {
    let plan = crate::solve::best_fit::solve(problem);
    let optimal = plan.arena_size == crate::bounds::lower_bound(problem);
    Solution {
        plan,
        optimal,
        nodes: 0,
        solver: Solver::Exact,
    }
}
