//! Exact search: branch and bound over canonical placements, within a node budget.
//!
//! # The algorithm
//! A plan is **canonical** when no buffer can move to a lower free spot. Moving buffers down
//! never raises the arena, so some optimal plan is canonical. List a canonical plan's buffers by
//! offset (ties by index) and place them in that order, each at the lowest offset where it
//! meets none of the buffers already placed (nor a pinned one), respecting its alignment:
//! every buffer lands exactly where the plan has it. So the search only decides *which buffer
//! comes next*; its offset follows, and the offsets of successive choices never decrease
//! (MiniMalloc's canonical solutions and monotonic floor; Moffitt, "MiniMalloc: A Lightweight
//! Memory Allocator for Hardware-Accelerated Machine Learning", ASPLOS 2024).
//!
//! Time is cut into **sections** (the intervals between consecutive start/end steps). The search
//! keeps, per section, the top of the highest buffer placed in it (its floor) and the bytes still
//! to place there (its load), and per buffer the lowest offset it can still take. At each node,
//! with `next` the lowest offset of a buffer that may come next, a branch is cut when
//! - a buffer's lowest offset plus its size exceeds the target (offsets only rise);
//! - a section's `max(floor, next) + load` exceeds the target (section inference: what is left
//!   there stacks above both);
//! - a buffer waiting below `next` would fit entirely under it: every completion leaves it
//!   free to drop, so none is canonical (no unfillable gap is left under a buffer that fits
//!   it); or it has no unplaced buffer in its time to rest on;
//! - no buffer may come next.
//!
//! Children are tried lowest offset first, then larger area (dynamic ordering). Before the
//! search, the problem is split where no buffer is live across a time cut; each part is searched
//! alone, highest first, and parts already no higher than what the others must reach are left
//! alone.
//!
//! The search is **anytime**: it starts from the best heuristic plan, and every plan it finds
//! becomes the new incumbent, the target dropping to one byte below it. It stops when the budget
//! of nodes (placements) is spent, when the plan reaches the lower bound or fits the capacity
//! asked for, or when the tree is exhausted, which proves the incumbent optimal.

mod components;
mod search;
mod subproblem;

use crate::bounds::lower_bound;
use crate::model::{Plan, Problem};
use crate::solve::{Solution, SolveOptions, Solver};

use search::{Budget, minimise};
use subproblem::Subproblem;

/// Branch and bound from the best heuristic plan (see the module docs).
///
/// # Runtime
/// The heuristics', plus at most `options.node_budget` nodes of `O(n + S + d)` each (`n`
/// buffers, `S` sections, `d` buffers meeting the one placed).
pub(crate) fn solve(problem: &Problem, options: &SolveOptions) -> Solution {
    let (_, incumbent) = crate::solve::auto::best_heuristic(problem);
    let (plan, optimal, nodes, _) = improve(problem, incumbent, options);
    Solution {
        plan,
        optimal,
        nodes,
        solver: Solver::Exact,
    }
}

/// Searches for a plan lower than `incumbent` (a valid plan of `problem`). Returns the best plan
/// known, whether it is proven optimal, the nodes expanded, and whether the search improved on
/// the incumbent.
pub(crate) fn improve(
    problem: &Problem,
    incumbent: Plan,
    options: &SolveOptions,
) -> (Plan, bool, u64, bool) {
    let bound = lower_bound(problem);
    let good_enough = bound.max(options.capacity.unwrap_or(0));
    if incumbent.arena_size <= good_enough {
        let optimal = incumbent.arena_size <= bound;
        return (incumbent, optimal, 0, false);
    }
    let buffers = problem.buffers();
    let top_of = |plan: &Plan, part: &[usize]| {
        part.iter()
            .map(|&i| plan.offsets[i] + buffers[i].size)
            .max()
            .unwrap_or(0)
    };
    let parts = components::split_at_time_cuts(problem);
    let mut heights: Vec<u64> = parts.iter().map(|p| top_of(&incumbent, p)).collect();
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by_key(|&k| (std::cmp::Reverse(heights[k]), k));

    let mut offsets = incumbent.offsets;
    let mut proven = vec![false; parts.len()];
    let mut budget = Budget {
        used: 0,
        limit: options.node_budget,
    };
    let mut improved = false;
    // Every part must come down to this; parts already there are left alone.
    let mut settled = good_enough;
    for k in order {
        if heights[k] <= settled {
            continue;
        }
        let sub = Subproblem::new(problem, &parts[k]);
        if heights[k] <= sub.lower_bound {
            proven[k] = true;
        } else {
            let outcome = minimise(&sub, heights[k], settled, &mut budget);
            if let Some((local, height)) = outcome.improved {
                for (u, &offset) in local.iter().enumerate() {
                    offsets[sub.global[u]] = offset;
                }
                heights[k] = height;
                improved = true;
            }
            proven[k] = outcome.complete || heights[k] <= sub.lower_bound;
        }
        if proven[k] {
            settled = settled.max(heights[k]);
        }
    }
    let plan = Plan::from_offsets(problem, offsets);
    let optimal = plan.arena_size <= bound
        || (0..parts.len()).any(|k| proven[k] && heights[k] == plan.arena_size);
    (plan, optimal, budget.used, improved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Buffer;
    use crate::validate;

    fn options(capacity: Option<u64>, node_budget: u64) -> SolveOptions {
        SolveOptions {
            solver: Solver::Exact,
            capacity,
            node_budget,
        }
    }

    /// Two pairs that only pack without waste when the small buffers share a level.
    fn tricky() -> Problem {
        Problem::new(vec![
            Buffer::new("a", 2, 0, 2),
            Buffer::new("b", 3, 1, 3),
            Buffer::new("c", 2, 2, 4),
            Buffer::new("d", 3, 0, 1),
            Buffer::new("e", 3, 3, 4),
            Buffer::new("f", 1, 0, 4),
        ])
        .unwrap()
    }

    #[test]
    fn improves_a_bad_incumbent_to_the_optimum() {
        let p = tricky();
        let naive = crate::solve::naive::solve(&p);
        let (plan, optimal, nodes, improved) = improve(&p, naive, &options(None, 10_000));
        assert!(validate(&p, &plan).is_empty());
        assert_eq!(plan.arena_size, lower_bound(&p));
        assert!(optimal && improved && nodes > 0);
    }

    #[test]
    fn a_zero_budget_keeps_the_incumbent() {
        let p = tricky();
        let naive = crate::solve::naive::solve(&p);
        let (plan, optimal, nodes, improved) = improve(&p, naive.clone(), &options(None, 0));
        assert_eq!(plan, naive);
        assert!(!optimal && !improved);
        assert_eq!(nodes, 0);
    }

    #[test]
    fn stops_as_soon_as_the_capacity_is_met() {
        let p = tricky();
        let naive = crate::solve::naive::solve(&p);
        let capacity = naive.arena_size - 1;
        let (plan, _, _, _) = improve(&p, naive, &options(Some(capacity), 10_000));
        assert!(plan.arena_size <= capacity);
        assert!(validate(&p, &plan).is_empty());
    }

    #[test]
    fn works_around_pins_and_alignment() {
        let p = Problem::new(vec![
            Buffer::new("pin", 4, 0, 4).with_fixed_offset(4),
            Buffer::new("a", 4, 0, 2).with_alignment(4),
            Buffer::new("b", 3, 1, 3).with_alignment(2),
            Buffer::new("c", 2, 2, 4),
        ])
        .unwrap();
        let solution = solve(&p, &options(None, 10_000));
        assert!(validate(&p, &solution.plan).is_empty());
        // a under the pin; b cannot (a is there until step 2), so b above it at 8; c under the
        // pin after a is gone.
        assert_eq!(solution.plan.arena_size, 11);
        assert!(solution.optimal);
    }
}
