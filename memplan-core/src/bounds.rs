//! Lower bounds on the arena: no plan can be smaller than the bytes live at the busiest step.

use crate::model::Problem;

/// The bytes live at each step where that number changes: `(step, live_bytes)` pairs in step order.
///
/// A step not listed has the live bytes of the previous entry. This is the "lower-bound profile"
/// that pictures of a plan draw under the rectangles.
///
/// # Runtime
/// `O(n log n)` for `n` buffers.
pub fn live_profile(problem: &Problem) -> Vec<(u64, u64)> {
    // Half-open lifetimes: at a step where one buffer ends and another starts, the end comes first,
    // so the two are never counted together. Sorting (step, delta) with deltas as i128 puts the
    // negative deltas (ends) before the positive ones (starts) at the same step.
    let mut events: Vec<(u64, i128)> = Vec::with_capacity(problem.len() * 2);
    for buffer in problem.buffers() {
        events.push((buffer.lifetime.start, i128::from(buffer.size)));
        events.push((buffer.lifetime.end, -i128::from(buffer.size)));
    }
    events.sort_unstable();
    let mut profile: Vec<(u64, u64)> = Vec::new();
    let mut live: i128 = 0;
    for (i, &(step, delta)) in events.iter().enumerate() {
        live += delta;
        let last_at_step = events.get(i + 1).is_none_or(|&(next, _)| next != step);
        if last_at_step {
            let bytes = u64::try_from(live).expect("live bytes are a sum of u64 sizes");
            match profile.last_mut() {
                Some(last) if last.1 == bytes => {}
                _ => profile.push((step, bytes)),
            }
        }
    }
    profile
}

/// The peak over time of the summed sizes of live buffers: a lower bound on any plan's arena.
///
/// A plan whose arena equals it is provably optimal. Alignment padding is not counted, so with
/// alignment the true optimum may lie above it.
///
/// # Runtime
/// `O(n log n)` for `n` buffers.
pub fn lower_bound(problem: &Problem) -> u64 {
    peak_step(problem).map_or(0, |(_, bytes)| bytes)
}

/// The first step at which the most bytes are live, and that number of bytes.
pub fn peak_step(problem: &Problem) -> Option<(u64, u64)> {
    live_profile(problem)
        .into_iter()
        .fold(None, |best: Option<(u64, u64)>, (step, bytes)| match best {
            Some((_, top)) if top >= bytes => best,
            _ => Some((step, bytes)),
        })
}

/// Indices of the buffers live at `step`, largest first (ties by input order).
pub fn live_at(problem: &Problem, step: u64) -> Vec<usize> {
    let mut live: Vec<usize> = (0..problem.len())
        .filter(|&i| {
            let l = problem.buffers()[i].lifetime;
            l.start <= step && step < l.end
        })
        .collect();
    live.sort_by_key(|&i| (std::cmp::Reverse(problem.buffers()[i].size), i));
    live
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_utils::problem;

    #[test]
    fn touching_buffers_are_not_counted_together() {
        let p = problem(&[(4, 0, 3), (4, 3, 5)]);
        assert_eq!(lower_bound(&p), 4);
    }

    #[test]
    fn peak_is_the_busiest_step() {
        let p = problem(&[(4, 0, 3), (3, 1, 2), (5, 2, 6), (1, 5, 7)]);
        assert_eq!(peak_step(&p), Some((2, 9)));
        assert_eq!(lower_bound(&p), 9);
        assert_eq!(
            live_profile(&p),
            vec![(0, 4), (1, 7), (2, 9), (3, 5), (5, 6), (6, 1), (7, 0)]
        );
        assert_eq!(live_at(&p, 2), vec![2, 0]);
    }

    #[test]
    fn empty_problem_has_zero_bound() {
        assert_eq!(lower_bound(&Problem::default()), 0);
        assert_eq!(peak_step(&Problem::default()), None);
    }
}
