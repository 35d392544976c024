//! The default solver: the fast heuristics, then exact search when none of them is provably
//! optimal.

use crate::bounds::lower_bound;
use crate::model::{Plan, Problem};
use crate::solve::{Solution, SolveOptions, Solver, TieOrder, best_fit, exact, first_fit, patent};

/// Runs best-fit, first-fit and the patent's greedy with every [`TieOrder`], stopping at the
/// first plan that reaches the lower bound. Otherwise it hands the best of them to
/// [`exact`](super::exact) as the incumbent, within `options.node_budget` nodes (and
/// `options.capacity`, if given). The result is never higher than any heuristic's plan;
/// [`Solution::solver`] names the solver whose plan was kept.
///
/// # Runtime
/// The heuristics' (`O(n^2)` and the patent greedy's), plus the exact search's budget.
pub(crate) fn solve(problem: &Problem, options: &SolveOptions) -> Solution {
    let (solver, plan) = best_heuristic(problem);
    let (plan, optimal, nodes, improved) = exact::improve(problem, plan, options);
    Solution {
        plan,
        optimal,
        nodes,
        solver: if improved { Solver::Exact } else { solver },
    }
}

/// The lowest plan of the fast heuristics (the first one on ties, in the order best-fit,
/// first-fit, patent by [`TieOrder::ALL`]); stops early at a plan that reaches the lower bound.
pub(crate) fn best_heuristic(problem: &Problem) -> (Solver, Plan) {
    let bound = lower_bound(problem);
    let heuristics = [Solver::BestFit, Solver::FirstFit]
        .into_iter()
        .chain(TieOrder::ALL.iter().map(|&ties| Solver::Patent(ties)));
    let mut best: Option<(Solver, Plan)> = None;
    for solver in heuristics {
        let plan = match solver {
            Solver::BestFit => best_fit::solve(problem),
            Solver::FirstFit => first_fit::solve(problem),
            Solver::Patent(ties) => patent::solve(problem, ties),
            _ => unreachable!("only heuristics are listed"),
        };
        if best
            .as_ref()
            .is_none_or(|(_, b)| plan.arena_size < b.arena_size)
        {
            best = Some((solver, plan));
        }
        if best.as_ref().is_some_and(|(_, b)| b.arena_size <= bound) {
            break;
        }
    }
    best.expect("at least one heuristic runs")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Buffer;
    use crate::solve::DEFAULT_OPTIONS;

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
