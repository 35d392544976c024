//! Best-fit placement in orders other than size: cheap plans that seed the search on problems
//! too large to search whole.

use std::cmp::Reverse;
use std::ops::ControlFlow;

use crate::bounds::peak_step;
use crate::model::{Plan, Problem};
use crate::solve::placements::Placements;

/// Places the buffers in `order`, each in the smallest gap that holds it (else on top).
///
/// # Runtime
/// `O(n^2)`.
pub(crate) fn best_fit_in_order(problem: &Problem, order: &[usize]) -> Plan {
    let mut placed = Placements::with_pins(problem);
    for &i in order {
        if placed.is_placed(i) {
            continue;
        }
        let size = problem.buffers()[i].size;
        let mut best: Option<(u64, u64)> = None;
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

/// Orders that put the buffers live at the busiest step first (they must stack without a gap
/// for the plan to reach the lower bound), longest lifetimes lowest; then the rest.
pub(crate) fn peak_first_orders(problem: &Problem) -> Vec<Vec<usize>> {
    let buffers = problem.buffers();
    let peak = peak_step(problem).map_or(0, |(step, _)| step);
    let at_peak = |i: usize| {
        let l = buffers[i].lifetime;
        l.start <= peak && peak < l.end
    };
    let mut orders = Vec::new();
    let keys: [&dyn Fn(usize) -> (u128, u128); 3] = [
        &|i| {
            (
                u128::from(buffers[i].lifetime.len()),
                u128::from(buffers[i].size),
            )
        },
        &|i| {
            (
                u128::from(buffers[i].size),
                u128::from(buffers[i].lifetime.len()),
            )
        },
        &|i| (buffers[i].area(), u128::from(buffers[i].size)),
    ];
    for key in keys {
        let mut order: Vec<usize> = (0..buffers.len()).collect();
        order.sort_by_key(|&i| (!at_peak(i), Reverse(key(i)), i));
        orders.push(order);
    }
    orders
}
