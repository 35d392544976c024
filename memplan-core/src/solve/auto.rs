//! The default solver: the fast heuristics, then exact search when none of them is provably
//! optimal.

use crate::bounds::aligned_lower_bound;
use crate::model::{Plan, Problem};
use crate::solve::patent::StartHeight;
use crate::solve::{Solution, SolveOptions, Solver, best_fit, exact, first_fit, patent};

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

/// The lowest plan of `solvers` (heuristics only; the first on ties), stopping early at one
/// that reaches `bound`.
fn best_of(problem: &Problem, solvers: &[Solver], bound: u64) -> (Solver, Plan) {
    let mut best: Option<(Solver, Plan)> = None;
    for &solver in solvers {
        let plan = run_heuristic(problem, solver);
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

/// The plan of one heuristic solver.
pub(crate) fn run_heuristic(problem: &Problem, solver: Solver) -> Plan {
    match solver {
        Solver::BestFit => best_fit::solve(problem),
        Solver::FirstFit => first_fit::solve(problem),
        Solver::Patent(ties) => patent::solve(problem, ties, StartHeight::LowerBound),
        Solver::PatentLiteral(ties) => patent::solve(problem, ties, StartHeight::Empty),
        _ => unreachable!("only heuristics are run here"),
    }
}

/// The lowest plan of the fast heuristics (the first one on ties, in the order best-fit,
/// first-fit, then [`Solver::patents`] up to [`SEED_PATENT_MAX_BUFFERS`] buffers); stops early
/// at a plan that reaches the lower bound.
pub(crate) fn best_heuristic(problem: &Problem) -> (Solver, Plan) {
    let mut all = vec![Solver::BestFit, Solver::FirstFit];
    if problem.len() <= SEED_PATENT_MAX_BUFFERS {
        all.extend(Solver::patents());
    }
    best_of(problem, &all, aligned_lower_bound(problem))
}

/// Above this many buffers the exact search's seed leaves out the patent's greedies. Their
/// lookahead grows faster than `n^2`: with pins they take seconds on 2,000 buffers (19 s of a
/// 20 s `exact` run on 1,000 pinned and 1,000 free tensors), more than the search they seed.
/// `auto` still runs them after the search, up to [`PATENT_MAX_BUFFERS`], when the search
/// proves nothing.
pub(crate) const SEED_PATENT_MAX_BUFFERS: usize = 1000;

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
