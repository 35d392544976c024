//! TFLite's greedy-by-size planner: largest buffer first, each in the smallest gap that fits.

use std::ops::ControlFlow;

use crate::model::{Plan, Problem};
use crate::solve::placements::{Placements, by_size_descending};

/// Places buffers by size descending (ties: earlier start, then input order), each in the
/// smallest gap between time-overlapping placed buffers that holds it (lowest such gap on ties),
/// or on top of them when no gap does. Pinned buffers are placed first.
///
/// Reference: TensorFlow Lite, `GreedyBySizePlanner` (Pisarchyk and Lee, "Efficient Memory
/// Management for Deep Neural Net Inference", 2020).
///
/// # Runtime
/// `O((n + P) log n)` for `P` pairs of buffers live together: each placement looks only at the
/// placed buffers live with it (see `live_index.rs`), sorted by offset.
pub(crate) fn solve(problem: &Problem) -> Plan {
    solve_in_order(problem, &by_size_descending(problem))
}

/// Best-fit placement of the buffers in `order` (pinned buffers first, at their pins): each in
/// the smallest gap that holds it (lowest on ties), or on top. Buffers not in `order` stay
/// unplaced, so `order` lists every unpinned buffer.
pub(crate) fn solve_in_order(problem: &Problem, order: &[usize]) -> Plan {
    let mut placed = Placements::with_pins(problem);
    for &i in order {
        if placed.is_placed(i) {
            continue;
        }
        let size = problem.buffers()[i].size;
        let mut best: Option<(u64, u64)> = None; // (gap size, offset)
        let mut top = 0;
        placed.for_each_gap::<()>(i, |start, end| {
            match end {
                Some(end) => {
                    let gap = end - start;
                    if gap >= size && best.is_none_or(|(g, _)| gap < g) {
                        best = Some((gap, start));
                    }
                }
                None => top = start,
            }
            ControlFlow::Continue(())
        });
        placed.place(i, best.map_or(top, |(_, offset)| offset));
    }
    placed.into_plan()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Buffer;

    #[test]
    fn takes_the_smallest_gap() {
        // Pins leave gaps [0,10) and [11,13) below the open space at 14: the smallest that
        // holds two bytes is the second (first-fit would take 0).
        let p = Problem::new(vec![
            Buffer::new("pin_a", 1, 0, 10).with_fixed_offset(10),
            Buffer::new("pin_b", 1, 0, 10).with_fixed_offset(13),
            Buffer::new("x", 2, 0, 10),
        ])
        .unwrap();
        assert_eq!(solve(&p).offsets, vec![10, 13, 11]);
        assert_eq!(crate::solve::first_fit::solve(&p).offsets, vec![10, 13, 0]);
    }

    #[test]
    fn goes_on_top_when_no_gap_holds_it() {
        let p = Problem::new(vec![
            Buffer::new("pin", 1, 0, 10).with_fixed_offset(1),
            Buffer::new("x", 2, 0, 10).with_alignment(2),
        ])
        .unwrap();
        assert_eq!(solve(&p).offsets, vec![1, 2]);
    }
}
