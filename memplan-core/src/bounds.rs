//! Lower bounds on the arena: no plan can be smaller than the bytes live at the busiest step.

use std::collections::BTreeMap;

use crate::model::{Buffer, Problem};

/// The bytes live at each step where that number changes: `(step, live_bytes)` pairs in step order.
///
/// A step not listed has the live bytes of the previous entry. This is the "lower-bound profile"
/// that pictures of a plan draw under the rectangles.
///
/// # Runtime
/// `O(n log n)` for `n` buffers.
pub fn live_profile(problem: &Problem) -> Vec<(u64, u64)> {
    // Half-open lifetimes: at a step where one buffer ends and another starts, the end comes first,
    // so the two are never counted together. An event is (step, tag): the tag is the size with
    // the top bit set for a start, so ends sort before starts at the same step (sizes stay below
    // 2^62, see `Problem::new`). 16 bytes an event: 32 MB at 10^6 buffers.
    const START: u64 = 1 << 63;
    let mut events: Vec<(u64, u64)> = Vec::with_capacity(problem.len() * 2);
    for buffer in problem.buffers() {
        events.push((buffer.lifetime.start, START | buffer.size));
        events.push((buffer.lifetime.end, buffer.size));
    }
    events.sort_unstable();
    let mut profile: Vec<(u64, u64)> = Vec::new();
    // Never below zero: a buffer's end sorts after its start.
    let mut live: u64 = 0;
    for (i, &(step, tag)) in events.iter().enumerate() {
        if tag & START != 0 {
            live += tag & !START;
        } else {
            live -= tag;
        }
        let last_at_step = events.get(i + 1).is_none_or(|&(next, _)| next != step);
        if last_at_step {
            match profile.last_mut() {
                Some(last) if last.1 == live => {}
                _ => profile.push((step, live)),
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

/// A lower bound on any plan's arena that also counts the padding alignment forces: at least
/// [`lower_bound`], and often more when buffers are aligned to more than their sizes' multiple.
///
/// # Why it holds
/// Take one step `t` and an alignment `A` (a power of two), and the free (unpinned) buffers live
/// at `t` whose alignment is at least `A`: each one's offset is a multiple of `A`. Order them by
/// offset, `x_1 < x_2 < ... < x_m`. They meet in time, so their bytes are disjoint: `x_{k+1} >=
/// x_k + s_k`. Both offsets are multiples of `A`, so their difference is too, and a multiple of
/// `A` that is at least `s_k` is at least `round_up(s_k, A)`. Summing, the last one starts at
/// `x_m >= sum_{k<m} round_up(s_k, A)` and the arena is at least `x_m + s_m`, that is
/// `sum_k round_up(s_k, A) - (round_up(s_m, A) - s_m)`. Whichever buffer is last, its padding
/// `round_up(s, A) - s` is at most the largest padding among them, so every plan is at least
/// `sum round_up(s, A) - max padding` high. Other buffers (smaller alignments, pins) may sit in
/// the padding, so they add nothing to it; they count in [`lower_bound`], which is the case
/// `A = 1` (every buffer, pins included). The bound is the largest of these over the steps and
/// the alignments the buffers use; and no plan is below a pinned buffer's top.
///
/// With 2,000 buffers of 48 bytes aligned to 64 and all live at once, it is `2000 * 64 - 16 =
/// 127,984`, which a plan reaches; [`lower_bound`] says 96,000.
///
/// # Runtime
/// `O(k n log n)` for `n` buffers of `k` distinct alignments.
pub(crate) fn aligned_lower_bound(problem: &Problem) -> u64 {
    let pin_top = problem
        .buffers()
        .iter()
        .filter_map(|b| b.fixed_offset.map(|offset| offset.saturating_add(b.size)))
        .max()
        .unwrap_or(0);
    aligned_peak(problem.buffers())
        .max(lower_bound(problem))
        .max(pin_top)
}

/// The largest `sum round_up(s, A) - max padding` over the steps and alignments `A > 1` (see
/// [`aligned_lower_bound`]) of the free buffers among `buffers`; 0 if none is aligned.
pub(crate) fn aligned_peak<'b>(buffers: impl IntoIterator<Item = &'b Buffer> + Clone) -> u64 {
    let mut alignments: Vec<u64> = buffers
        .clone()
        .into_iter()
        .filter(|b| b.fixed_offset.is_none() && b.alignment > 1)
        .map(|b| b.alignment)
        .collect();
    alignments.sort_unstable();
    alignments.dedup();
    let mut best: u128 = 0;
    for &a in &alignments {
        // (step, is_start, rounded size, padding); ends sort before starts at the same step
        // (lifetimes are half-open).
        let mut events: Vec<(u64, bool, u128, u64)> = Vec::new();
        for b in buffers.clone() {
            if b.fixed_offset.is_some() || b.alignment < a {
                continue;
            }
            let rounded = u128::from(b.size).div_ceil(u128::from(a)) * u128::from(a);
            let padding = u64::try_from(rounded - u128::from(b.size)).expect("below the alignment");
            events.push((b.lifetime.start, true, rounded, padding));
            events.push((b.lifetime.end, false, rounded, padding));
        }
        events.sort_unstable();
        let mut sum: u128 = 0;
        let mut paddings: BTreeMap<u64, usize> = BTreeMap::new();
        for (k, &(step, start, rounded, padding)) in events.iter().enumerate() {
            if start {
                sum += rounded;
                *paddings.entry(padding).or_insert(0) += 1;
            } else {
                sum -= rounded;
                if let Some(count) = paddings.get_mut(&padding) {
                    *count -= 1;
                    if *count == 0 {
                        paddings.remove(&padding);
                    }
                }
            }
            let last_at_step = events.get(k + 1).is_none_or(|&(next, ..)| next != step);
            if let (true, Some((&largest, _))) = (last_at_step, paddings.last_key_value()) {
                best = best.max(sum - u128::from(largest));
            }
        }
    }
    u64::try_from(best).unwrap_or(u64::MAX)
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
    fn alignment_padding_counts_between_aligned_buffers() {
        use crate::model::Buffer;
        // 2,000 buffers of 48 bytes aligned to 64, all live: each but the top one leaves 16
        // bytes of padding that nothing can use.
        let all_live: Vec<Buffer> = (0..2000)
            .map(|i| Buffer::new(format!("b{i}"), 48, 0, 1).with_alignment(64))
            .collect();
        let p = Problem::new(all_live).unwrap();
        assert_eq!(lower_bound(&p), 96_000);
        assert_eq!(aligned_lower_bound(&p), 2000 * 64 - 16);
        let options = crate::solve::SolveOptions {
            solver: crate::solve::Solver::BestFit,
            ..crate::solve::SolveOptions::default()
        };
        let best_fit = crate::solve::solve(&p, &options).unwrap().plan;
        assert_eq!(best_fit.arena_size, aligned_lower_bound(&p));
        // Unaligned buffers may sit in the padding: 8 bytes fit in 16, so nothing is added.
        let mut mixed: Vec<Buffer> = (0..2)
            .map(|i| Buffer::new(format!("a{i}"), 48, 0, 1).with_alignment(64))
            .collect();
        mixed.push(Buffer::new("small", 8, 0, 1));
        let p = Problem::new(mixed).unwrap();
        assert_eq!(aligned_lower_bound(&p), 112);
        // Pins are not aligned buffers: their bytes and their tops count.
        let p = Problem::new(vec![
            Buffer::new("pin", 48, 0, 1).with_fixed_offset(200),
            Buffer::new("a", 48, 0, 1).with_alignment(64),
        ])
        .unwrap();
        assert_eq!(aligned_lower_bound(&p), 248);
    }

    #[test]
    fn the_aligned_bound_never_exceeds_the_optimum_found_by_brute_force() {
        use crate::model::Buffer;
        use crate::solve::{SolveOptions, Solver};
        // Small random problems with mixed alignments, solved exactly by trying every stacking
        // order (`enumerate`, exact with alignment). The bound must never pass the optimum,
        // and should often beat the bytes live.
        let mut rng = crate::test_utils::Lcg::new(2024);
        let (mut above_live, mut tight) = (0, 0);
        let cases = 300;
        for _ in 0..cases {
            let n = 2 + rng.below(6);
            let buffers: Vec<Buffer> = (0..n)
                .map(|i| {
                    let start = rng.below(4);
                    let end = start + 1 + rng.below(3);
                    let alignment = 1 << rng.below(7);
                    Buffer::new(format!("b{i}"), 1 + rng.below(80), start, end)
                        .with_alignment(alignment)
                })
                .collect();
            let p = Problem::new(buffers).unwrap();
            let options = SolveOptions {
                solver: Solver::Enumerate,
                ..SolveOptions::default()
            };
            let optimum = crate::solve::solve(&p, &options).unwrap().plan.arena_size;
            let bound = aligned_lower_bound(&p);
            assert!(
                bound <= optimum,
                "bound {bound} above the optimum {optimum}: {p:?}"
            );
            above_live += usize::from(bound > lower_bound(&p));
            tight += usize::from(bound == optimum);
        }
        assert!(
            above_live > cases / 10,
            "only {above_live} bounds beat the bytes live"
        );
        assert!(tight > cases / 2, "only {tight} bounds are tight");
    }

    #[test]
    fn empty_problem_has_zero_bound() {
        assert_eq!(lower_bound(&Problem::default()), 0);
        assert_eq!(peak_step(&Problem::default()), None);
    }
}
