//! The patent's exhaustive mode (claim 7). Placeholder until the real solver lands.

use crate::model::Problem;
use crate::solve::{ENUMERATE_MAX_BUFFERS, Solution, SolveError, Solver};

/// Placeholder: refuses large problems, otherwise best-fit.
pub(crate) fn solve(problem: &Problem) -> Result<Solution, SolveError> {
    if problem.len() > ENUMERATE_MAX_BUFFERS {
        return Err(SolveError::TooManyBuffers {
            buffers: problem.len(),
            max: ENUMERATE_MAX_BUFFERS,
        });
    }
    let plan = crate::solve::best_fit::solve(problem);
    Ok(Solution {
        plan,
        optimal: false,
        nodes: 0,
        solver: Solver::Enumerate,
    })
}
