//! Orders other than size for best-fit placement ([`crate::solve::best_fit::solve_in_order`]):
//! cheap plans that seed the search on problems too large to search whole.

use std::cmp::Reverse;

use crate::bounds::peak_step;
use crate::model::Problem;

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
