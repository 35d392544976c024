//! The patent's exhaustive mode (claim 7): try the stacking orders, keep the lowest arrangement.
//!
//! *Stacking* a rectangle puts it at its lowest aligned offset where it overlaps no placed
//! rectangle live at the same time. Claim 7 stacks the rectangles in every order and keeps the
//! order whose arrangement is lowest. That is exact, alignment included:
//!
//! * Take any valid plan and stack its buffers in the order of their offsets (pins first, at
//!   their pins). Each buffer's own offset in the plan is still free when its turn comes (every
//!   buffer placed before it sits at or below its plan offset and below it in address wherever
//!   they meet in time) and aligned, so stacking puts it at or below that offset. The arena
//!   does not grow.
//! * Repeating this only lowers offsets, so it ends at a plan that stacking in its own offset
//!   order reproduces exactly. Some optimal plan is therefore reached by an order along which
//!   offsets never decrease, and buffers at equal offsets are never live together (so their
//!   order among themselves does not matter).
//!
//! The search uses both facts: it only extends an order with a buffer whose stacked offset is
//! above the last one's, or equal with a higher index. Branches already as high as the best
//! arrangement found are cut, and the search stops at the lower bound.

use crate::model::{Plan, Problem, align_up};
use crate::solve::{ENUMERATE_MAX_BUFFERS, Solution, SolveError, Solver};

/// Finds the lowest arrangement over all stacking orders (claim 7) for at most
/// [`ENUMERATE_MAX_BUFFERS`] buffers; more is an error. Pinned buffers stay at their pins.
///
/// The plan is optimal ([`Solution::optimal`] is `true`); [`Solution::nodes`] counts the
/// stackings tried.
///
/// # Runtime
/// `O(n! n^2)` in the worst case; the order restrictions and the bound cut most of it, so ten
/// buffers take milliseconds.
pub(crate) fn solve(problem: &Problem) -> Result<Solution, SolveError> {
    if problem.len() > ENUMERATE_MAX_BUFFERS {
        return Err(SolveError::TooManyBuffers {
            buffers: problem.len(),
            max: ENUMERATE_MAX_BUFFERS,
        });
    }
    let mut search = Search::new(problem);
    let height = search.height();
    search.descend(height, None);
    let offsets = search
        .best_offsets
        .expect("the search reaches at least one leaf");
    Ok(Solution {
        plan: Plan::from_offsets(problem, offsets),
        optimal: true,
        nodes: search.nodes,
        solver: Solver::Enumerate,
    })
}

struct Search<'p> {
    problem: &'p Problem,
    offset: Vec<Option<u64>>,
    /// The lower bound: the search stops once a plan reaches it.
    floor: u64,
    best: u64,
    best_offsets: Option<Vec<u64>>,
    nodes: u64,
}

impl<'p> Search<'p> {
    fn new(problem: &'p Problem) -> Self {
        Self {
            problem,
            offset: problem.buffers().iter().map(|b| b.fixed_offset).collect(),
            floor: crate::bounds::lower_bound(problem),
            best: u64::MAX,
            best_offsets: None,
            nodes: 0,
        }
    }

    /// Highest top among the placed buffers.
    fn height(&self) -> u64 {
        self.problem
            .buffers()
            .iter()
            .zip(&self.offset)
            .filter_map(|(b, o)| o.map(|o| o + b.size))
            .max()
            .unwrap_or(0)
    }

    /// The lowest aligned offset where buffer `i` overlaps no placed buffer live with it. It is
    /// 0 or the aligned top of a placed buffer, so only those are tried.
    fn lowest_fit(&self, i: usize) -> u64 {
        let buffers = self.problem.buffers();
        let buffer = &buffers[i];
        let fits = |at: u64| {
            buffers.iter().zip(&self.offset).all(|(other, o)| {
                o.is_none_or(|o| {
                    !other.lifetime.overlaps(&buffer.lifetime)
                        || o + other.size <= at
                        || at + buffer.size <= o
                })
            })
        };
        let tops = buffers
            .iter()
            .zip(&self.offset)
            .filter(|(other, _)| other.lifetime.overlaps(&buffer.lifetime))
            .filter_map(|(other, o)| o.map(|o| align_up(o + other.size, buffer.alignment)));
        std::iter::once(0)
            .chain(tops)
            .filter(|&at| fits(at))
            .min()
            .expect("above every placed buffer is free")
    }

    /// Extends the order after `last` (`(offset, index)` of the last stacked buffer).
    fn descend(&mut self, height: u64, last: Option<(u64, usize)>) {
        if self.best <= self.floor {
            return;
        }
        let mut complete = true;
        for i in 0..self.offset.len() {
            if self.offset[i].is_some() {
                continue;
            }
            complete = false;
            let at = self.lowest_fit(i);
            if last.is_some_and(|last| (at, i) < last) {
                continue;
            }
            let top = height.max(at + self.problem.buffers()[i].size);
            if top >= self.best {
                continue;
            }
            self.nodes += 1;
            self.offset[i] = Some(at);
            self.descend(top, Some((at, i)));
            self.offset[i] = None;
        }
        if complete && height < self.best {
            self.best = height;
            self.best_offsets = Some(self.offset.iter().map(|o| o.expect("complete")).collect());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Buffer;

    use crate::test_utils::problem;

    #[test]
    fn refuses_more_than_the_limit() {
        let many: Vec<_> = (0..=ENUMERATE_MAX_BUFFERS as u64)
            .map(|i| (1, i, i + 1))
            .collect();
        assert_eq!(
            solve(&problem(&many)),
            Err(SolveError::TooManyBuffers {
                buffers: ENUMERATE_MAX_BUFFERS + 1,
                max: ENUMERATE_MAX_BUFFERS
            })
        );
    }

    #[test]
    fn beats_the_greedies_where_order_matters() {
        // Size-descending greedies stack this into 12 bytes; the best order needs 9.
        let p = problem(&[(4, 2, 5), (3, 4, 7), (2, 5, 8), (4, 5, 6), (5, 3, 4)]);
        let found = solve(&p).unwrap();
        assert!(found.optimal);
        assert!(found.nodes > 0);
        assert_eq!(crate::validate(&p, &found.plan), vec![]);
        assert_eq!(found.plan.arena_size, 9);
        assert!(crate::solve::best_fit::solve(&p).arena_size > found.plan.arena_size);
        assert!(crate::solve::first_fit::solve(&p).arena_size > found.plan.arena_size);
    }

    #[test]
    fn respects_pins_and_alignment() {
        let p = Problem::new(vec![
            Buffer::new("pin", 2, 0, 4).with_fixed_offset(2),
            Buffer::new("a", 2, 0, 4).with_alignment(4),
            Buffer::new("b", 2, 0, 4),
        ])
        .unwrap();
        let found = solve(&p).unwrap();
        assert_eq!(crate::validate(&p, &found.plan), vec![]);
        assert_eq!(found.plan.offsets[0], 2);
        assert_eq!(found.plan.offsets[1] % 4, 0);
        // a at 0 or 4, b in the other free 2 bytes: 6 bytes in all.
        assert_eq!(found.plan.arena_size, 6);
    }

    #[test]
    fn alignment_can_push_the_optimum_above_the_lower_bound() {
        // Two 3-byte buffers aligned to 4, live together: the best is 0 and 4, arena 7 > LB 6.
        let p = Problem::new(vec![
            Buffer::new("a", 3, 0, 2).with_alignment(4),
            Buffer::new("b", 3, 0, 2).with_alignment(4),
        ])
        .unwrap();
        assert_eq!(solve(&p).unwrap().plan.arena_size, 7);
    }

    #[test]
    fn ten_buffers_all_live_together() {
        // Every order is a stack; the search must still finish and find the sum.
        let all: Vec<(u64, u64, u64)> = (1..=10).map(|size| (size, 0, 1)).collect();
        let p = problem(&all);
        let found = solve(&p).unwrap();
        assert_eq!(found.plan.arena_size, 55);
    }
}
