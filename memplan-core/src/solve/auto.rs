//! The default solver: the fast heuristics, then exact search when none of them is provably
//! optimal.

use crate::bounds::aligned_lower_bound;
use crate::model::Problem;
use crate::solve::portfolio::best_of;
use crate::solve::{Solution, SolveOptions, Solver, TieOrder, exact};

/// Runs best-fit and first-fit, and stops if one reaches the lower bound. Otherwise it hands
/// the better plan to [`exact`](super::exact) as the incumbent, within `options.node_budget`
/// nodes (and `options.capacity`, if given). Unless the search proves its plan optimal (then
/// no heuristic can beat it), the patent's greedy runs ([`patents_to_run`]): with every tie
/// order, from the lower bound and literally, up to [`PATENT_MAX_BUFFERS`] buffers; as
/// `patent` alone up to [`DEFAULT_PATENT_MAX_BUFFERS`]; and a lower plan of it is kept. So the
/// result is never higher than any plan auto computed, and up to
/// [`DEFAULT_PATENT_MAX_BUFFERS`] buffers never higher than best-fit's, first-fit's or
/// `patent`'s. [`Solution::solver`] names the solver whose plan was kept.
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
    let patents = patents_to_run(problem.len());
    if !optimal && !patents.is_empty() {
        let (patent, patent_plan) = best_of(problem, &patents, bound);
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

/// The patent's greedies `auto` runs on `n` buffers: every variant, `patent` alone, or none.
pub(crate) fn patents_to_run(n: usize) -> Vec<Solver> {
    if n <= PATENT_MAX_BUFFERS {
        Solver::patents()
    } else if n <= DEFAULT_PATENT_MAX_BUFFERS {
        vec![Solver::Patent(TieOrder::default())]
    } else {
        Vec::new()
    }
}

/// Up to this many buffers `auto` runs every variant of the patent's greedy (each tie order,
/// from the bound and literally).
pub(crate) const PATENT_MAX_BUFFERS: usize = 5000;

/// Up to this many buffers `auto` runs `patent` (the default tie order, from the bound). It
/// costs about what the rest of `auto` costs there: random problems (each buffer live with
/// about 160 others, release, CPU time) take 0.75 s at 10^5 buffers and 2.5 s at 250,000,
/// where the rest of `auto` takes about 1.5 s and 4 s; at 10^6 it would add 14 s.
pub(crate) const DEFAULT_PATENT_MAX_BUFFERS: usize = 250_000;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Buffer;
    use crate::solve::DEFAULT_OPTIONS;
    use crate::solve::portfolio::best_heuristic;

    #[test]
    fn runs_fewer_patent_variants_on_larger_problems() {
        assert_eq!(patents_to_run(PATENT_MAX_BUFFERS), Solver::patents());
        assert_eq!(
            patents_to_run(PATENT_MAX_BUFFERS + 1),
            vec![Solver::Patent(TieOrder::default())]
        );
        assert_eq!(
            patents_to_run(DEFAULT_PATENT_MAX_BUFFERS),
            vec![Solver::Patent(TieOrder::default())]
        );
        assert!(patents_to_run(DEFAULT_PATENT_MAX_BUFFERS + 1).is_empty());
    }

    /// Above the every-variant threshold, a problem where `patent` beats what the TFLite
    /// greedies and the exact search (given no nodes) reach: auto keeps `patent`'s plan.
    #[test]
    fn keeps_the_patents_plan_above_the_variant_threshold() {
        use crate::test_utils::Lcg;
        let mut rng = Lcg::new(3);
        let n = PATENT_MAX_BUFFERS + 1;
        let options = SolveOptions {
            node_budget: 0,
            ..DEFAULT_OPTIONS
        };
        let with = |solver| SolveOptions { solver, ..options };
        for _ in 0..20 {
            let buffers: Vec<Buffer> = (0..n)
                .map(|i| {
                    let start = rng.below(n as u64 / 4);
                    let end = start + 1 + rng.below(40);
                    Buffer::new(format!("b{i}"), 16 + rng.below(4080), start, end)
                })
                .collect();
            let p = Problem::new(buffers).unwrap();
            let solve_with = |solver| crate::solve::solve(&p, &with(solver)).unwrap().plan;
            let patent = solve_with(Solver::Patent(TieOrder::default())).arena_size;
            let auto = solve(&p, &options);
            assert!(auto.plan.arena_size <= patent);
            assert!(crate::validate(&p, &auto.plan).is_empty());
            let without_patent = best_heuristic(&p)
                .1
                .arena_size
                .min(solve_with(Solver::Exact).arena_size);
            if patent < without_patent {
                assert_eq!(auto.plan.arena_size, patent);
                return;
            }
        }
        panic!("no problem where patent beats the others: pick others");
    }

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
