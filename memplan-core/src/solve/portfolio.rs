//! The portfolio of fast heuristics (best-fit, first-fit, the patent's greedies): run one, or
//! several and keep the lowest plan. `auto` runs it before and after the exact search, the exact
//! search seeds its incumbent with it ([`best_heuristic`]), and [`solve`](super::solve) runs a
//! single heuristic through it; it depends on neither, so data flows one way.

use crate::bounds::aligned_lower_bound;
use crate::model::{Plan, Problem};
use crate::solve::patent::StartHeight;
use crate::solve::{Solver, best_fit, first_fit, patent};

/// The lowest plan of `solvers` (heuristics only; the first on ties), stopping early at one
/// that reaches `bound`.
pub(crate) fn best_of(problem: &Problem, solvers: &[Solver], bound: u64) -> (Solver, Plan) {
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
/// `auto` still runs them after the search, up to
/// [`PATENT_MAX_BUFFERS`](super::auto::PATENT_MAX_BUFFERS), when the search
/// proves nothing.
pub(crate) const SEED_PATENT_MAX_BUFFERS: usize = 1000;
