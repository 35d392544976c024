//! No reuse at all: each buffer above the previous one. The baseline every planner must beat.

use crate::model::{Plan, Problem};
use crate::solve::placements::Placements;

/// Stacks the buffers in input order, each on top of all placed ones (pins placed first).
///
/// # Runtime
/// `O(n)` (plus `O(n)` per pin).
pub(crate) fn solve(problem: &Problem) -> Plan {
    let mut placed = Placements::with_pins(problem);
    // Everything goes above the highest pin, so nothing can collide with a pin.
    let mut top = problem
        .buffers()
        .iter()
        .filter_map(|b| b.fixed_offset.map(|pin| pin + b.size))
        .max()
        .unwrap_or(0);
    for (i, buffer) in problem.buffers().iter().enumerate() {
        if placed.is_placed(i) {
            continue;
        }
        let offset = crate::model::align_up(top, buffer.alignment);
        placed.place(i, offset);
        top = offset + buffer.size;
    }
    placed.into_plan()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Buffer;

    #[test]
    fn naive_is_the_sum_of_sizes() {
        let p = Problem::new(vec![Buffer::new("a", 3, 0, 1), Buffer::new("b", 5, 1, 2)]).unwrap();
        let plan = solve(&p);
        assert_eq!(plan.offsets, vec![0, 3]);
        assert_eq!(plan.arena_size, 8);
    }
}
