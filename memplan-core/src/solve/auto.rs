//! The default solver: the fast heuristics, then exact search when none of them is provably
//! optimal.

use crate::bounds::aligned_lower_bound;
use crate::model::Problem;
use crate::solve::portfolio::best_of;
use crate::solve::{Solution, SolveOptions, Solver, exact};

/// Runs best-fit and first-fit, and stops if one reaches the lower bound. Otherwise it hands
/// the better plan to [`exact`](super::exact) as the incumbent, within `options.node_budget`
/// nodes (and `options.capacity`, if given). Unless the search proves its plan optimal (then
/// no heuristic can beat it), the patent's greedy runs with every tie order, from the lower bound and literally, and a lower plan
/// of it is kept. So the result is never higher than any heuristic's plan, except that the
/// patent's greedy (seconds on tens of thousands of buffers) is skipped above
/// [`PATENT_MAX_BUFFERS`] buffers. [`Solution::solver`] names the solver whose plan was kept.
///
/// # Runtime
/// `O((n + P) log n)` for the greedies (`P` pairs of buffers live together), plus the exact search's budget, plus the patent greedy's.
pub(crate) fn solve(problem: &Problem, options: &SolveOptions) -> Solution {
    let bound = aligned_lower_bound(problem);
    let (mut solver, plan) = best_of(problem, &[Solver::BestFit, Solver::FirstFit], bound);
    if plan.arena_size <= bound {
        return Solution {
            plan,
            optimal: true,
            nodes: 0,
            solver,
        };
    }
    let (mut plan, mut optimal, nodes, improved) = exact::improve(problem, plan, options);
    if improved {
        solver = Solver::Exact;
    }
    if !optimal && problem.len() <= PATENT_MAX_BUFFERS {
        let (patent, patent_plan) = best_of(problem, &Solver::patents(), bound);
        if patent_plan.arena_size < plan.arena_size {
            optimal = patent_plan.arena_size <= bound;
            plan = patent_plan;
            solver = patent;
        }
    }
    Solution {
        plan,
        optimal,
        nodes,
        solver,
    }
}

/// Above this many buffers `auto` leaves out the patent's greedy: it takes seconds there and
/// has not beaten best-fit on such instances.
pub(crate) const PATENT_MAX_BUFFERS: usize = 5000;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Buffer;
    use crate::solve::DEFAULT_OPTIONS;
    use crate::solve::portfolio::best_heuristic;

    #[test]
    fn stops_at_the_first_heuristic_that_reaches_the_bound() {
        let p = Problem::new(vec![Buffer::new("a", 4, 0, 2), Buffer::new("b", 4, 2, 3)]).unwrap();
        let solution = solve(&p, &DEFAULT_OPTIONS);
        assert_eq!(solution.plan.arena_size, 4);
        assert!(solution.optimal);
        assert_eq!(solution.nodes, 0);
        assert_eq!(solution.solver, Solver::BestFit);
    }

    #[test]
    fn searches_when_the_heuristics_fall_short() {
        // Five bytes live at every step: a plan of 5 is optimal.
        let p = Problem::new(vec![
            Buffer::new("tall", 3, 0, 2),
            Buffer::new("wide", 2, 1, 4),
            Buffer::new("late", 3, 2, 4),
            Buffer::new("early", 2, 0, 1),
        ])
        .unwrap();
        let heuristic = best_heuristic(&p).1.arena_size;
        let solution = solve(&p, &DEFAULT_OPTIONS);
        assert!(solution.plan.arena_size <= heuristic);
        assert_eq!(solution.plan.arena_size, 5);
        assert!(solution.optimal);
        assert!(crate::validate(&p, &solution.plan).is_empty());
    }
}
