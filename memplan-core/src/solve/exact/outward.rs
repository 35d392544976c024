//! Planning huge problems outward from the busiest step, one window of time at a time, each
//! window packed by the exact search with what is already placed pinned.
//!
//! # Why
//! The exact search costs `O(n)` per node, and a single dive through `n` buffers `O(n^2)`
//! nodes' worth of work: on a compiler trace of 20,000 buffers even one dive takes minutes.
//! The greedies are fast, but on such traces they leave a hole or two in the busiest step's
//! column of buffers, and the arena ends that much above the lower bound.
//!
//! # How
//! The buffers live at the busiest step are packed first (they alone decide whether the lower
//! bound is reachable there). Then the planned stretch of time `[left, right)` grows one window
//! at a time, on the side whose next step holds more bytes: a window is the run of steps next to
//! the stretch that holds at least [`WINDOW_BUFFERS`] buffers not yet placed. Those buffers are
//! searched with their lifetimes clipped to the window, and every buffer already placed that is
//! live in the window is a pin there.
//!
//! Clipping loses nothing. A new buffer of a right-hand window starts inside it (it was not
//! live in the planned stretch), so whatever it meets after the window is either not placed yet
//! (a later window works around it) or was placed earlier and is live across the whole window,
//! so it is one of the pins. Two new buffers that meet after the window both live at its last
//! step, so they meet inside it too. The left side is the mirror image. The one exception is a
//! buffer the problem itself pins: it is placed from the start wherever it lives, so each new
//! buffer also clears the pins it meets outside the window. So the windows' plans together are
//! a valid plan of the whole problem.
//!
//! Each window gets at most [`NODES_PER_BUFFER`] nodes per buffer it places. A window that the
//! search cannot fit under the target within them is tried at a few heights up to just below
//! the incumbent's, and the lowest that fits becomes the target of the windows after it (the
//! arena is as high as its highest window anyway). If none fits, the attempt ends and the
//! caller keeps its other plans.

use super::node::{Budget, WORK_PER_NODE};
use super::search::{Decision, decide_window};
use super::subproblem::Subproblem;
use crate::model::{Buffer, Lifetime, Plan, Problem};

/// A window grows until it holds at least this many buffers not yet placed (or reaches the end
/// of time): large enough that the search sees how the buffers of a stretch fit together, small
/// enough that a node stays cheap.
pub(crate) const WINDOW_BUFFERS: usize = 256;

/// Nodes a window may use per buffer it places: a dive plus some backtracking.
const NODES_PER_BUFFER: u64 = 8;

/// Plans `problem` outward from its busiest step (see the module docs), as low as `target` if it
/// can and always below `ceiling`, or `None` when a window does not fit below `ceiling` within
/// its share of `budget`.
///
/// # Runtime
/// `O(n log n)` to set up, plus per window of `w` buffers with `p` pins `O(w p + w log w)` and
/// at most `8 w` search nodes of `O(w + p + S)` each (`S` the window's sections).
pub(crate) fn plan_outward(
    problem: &Problem,
    target: u64,
    ceiling: u64,
    budget: &mut Budget,
) -> Option<Plan> {
    if problem.buffers().is_empty() {
        return None;
    }
    let time = Sections::of(problem);
    let busiest = time.busiest();
    let mut first = (busiest, busiest + 1);
    for _ in 0..=RESTARTS {
        match plan_from(problem, &time, first, target, ceiling, budget) {
            Ok(plan) => return Some(plan),
            Err(failed) => {
                let wider = (first.0.min(failed.0), first.1.max(failed.1));
                let held = (0..problem.len())
                    .filter(|&i| time.run(i).0 < wider.1 && wider.0 < time.run(i).1)
                    .count();
                if wider == first || held > MAX_WINDOW_BUFFERS || budget.remaining() == 0 {
                    return None;
                }
                first = wider;
            }
        }
    }
    None
}

/// How many times [`plan_outward`] starts again with a wider first window.
const RESTARTS: usize = 4;

/// The most buffers a window may hold: a window with more new buffers gives up, and a first
/// window is widened after a failure only up to it (a window's search costs grow with the square
/// of its buffers).
const MAX_WINDOW_BUFFERS: usize = 4 * WINDOW_BUFFERS;

/// One pass of [`plan_outward`] whose first window is the sections `first`. On failure, returns
/// the window that did not fit.
fn plan_from(
    problem: &Problem,
    time: &Sections,
    first: (usize, usize),
    target: u64,
    ceiling: u64,
    budget: &mut Budget,
) -> Result<Plan, (usize, usize)> {
    let buffers = problem.buffers();
    let mut offsets: Vec<Option<u64>> = buffers.iter().map(|b| b.fixed_offset).collect();
    let mut heights = Heights { target, ceiling };
    // The planned stretch, in sections: every buffer live in it is placed.
    let (mut left, mut right) = first;
    let live_first: Vec<usize> = (0..buffers.len())
        .filter(|&i| offsets[i].is_none() && time.run(i).0 < right && left < time.run(i).1)
        .collect();
    pack_window(
        problem,
        time,
        first,
        &live_first,
        &mut offsets,
        &mut heights,
        budget,
    )
    .ok_or(first)?;
    while left > 0 || right < time.count() {
        let go_right =
            left == 0 || (right < time.count() && time.load[right] >= time.load[left - 1]);
        let (window, mut new) = if go_right {
            let mut end = right;
            let mut new = Vec::new();
            while end < time.count() && new.len() < WINDOW_BUFFERS {
                new.extend_from_slice(&time.starting[end]);
                end += 1;
            }
            let window = (right, end);
            right = end;
            (window, new)
        } else {
            let mut start = left;
            let mut new = Vec::new();
            while start > 0 && new.len() < WINDOW_BUFFERS {
                start -= 1;
                new.extend_from_slice(&time.ending[start]);
            }
            let window = (start, left);
            left = start;
            (window, new)
        };
        new.retain(|&i| offsets[i].is_none());
        new.sort_unstable();
        pack_window(
            problem,
            time,
            window,
            &new,
            &mut offsets,
            &mut heights,
            budget,
        )
        .ok_or(window)?;
    }
    let offsets: Vec<u64> = offsets.into_iter().map(|o| o.unwrap_or(0)).collect();
    Ok(Plan::from_offsets(problem, offsets))
}

/// Searches a plan of the buffers `new` (not placed yet) within the sections `window`, the
/// placed buffers live there pinned, and records their offsets. `None` if it finds none.
fn pack_window(
    problem: &Problem,
    time: &Sections,
    window: (usize, usize),
    new: &[usize],
    offsets: &mut [Option<u64>],
    heights: &mut Heights,
    budget: &mut Budget,
) -> Option<()> {
    if new.is_empty() {
        return Some(());
    }
    if new.len() > MAX_WINDOW_BUFFERS {
        return None; // too many buffers start together for a cheap search
    }
    let (from, to) = (time.steps[window.0], time.steps[window.1]);
    let clip = |buffer: &Buffer| {
        let mut clipped = buffer.clone();
        let l = buffer.lifetime;
        clipped.lifetime = Lifetime::new(l.start.max(from), l.end.min(to));
        clipped
    };
    let buffers = problem.buffers();
    let mut local: Vec<Buffer> = new.iter().map(|&i| clip(&buffers[i])).collect();
    // Placed buffers live in the window: a sweep would be faster, but windows are few. The
    // problem's own pins are placed from the start, also those not live in the window.
    let mut far_pins = Vec::new();
    for (i, buffer) in buffers.iter().enumerate() {
        let l = buffer.lifetime;
        let live = l.start < to && from < l.end;
        if let Some(offset) = offsets[i].filter(|_| live) {
            let mut pin = clip(buffer);
            pin.fixed_offset = Some(offset);
            local.push(pin);
        } else if let Some(offset) = buffer.fixed_offset {
            far_pins.push((l, offset, offset + buffer.size));
        }
    }
    let local = Problem::new(local).ok()?;
    let all: Vec<usize> = (0..local.len()).collect();
    let mut sub = Subproblem::new(&local, &all);
    // A pin that a new buffer meets outside the window, before or after it, is not one of the
    // window's pins, yet the new buffer must clear it too.
    for (u, pins) in sub.pins.iter_mut().enumerate() {
        let lifetime = buffers[new[sub.global[u]]].lifetime;
        let before = pins.len();
        pins.extend(
            far_pins
                .iter()
                .filter(|(l, _, _)| l.overlaps(&lifetime))
                .map(|&(_, offset, top)| (offset, top)),
        );
        if pins.len() > before {
            pins.sort_unstable();
        }
    }
    // The budget counts work in nodes of `WORK_PER_NODE` units (see there). A node of this
    // window scans its buffers, and placing a buffer moves the base of each of its neighbours,
    // which then looks through its pins again: up to `n + (1 + neighbours) * pins` units, with
    // pins and neighbours per buffer. The share pays for `NODES_PER_BUFFER` such nodes per
    // buffer (the whole budget still bounds the work of all windows together).
    let n = sub.len().max(1) as u64;
    let per_buffer = |lists: u64| lists / n;
    let pins = per_buffer(sub.pins.iter().map(|p| p.len() as u64).sum());
    let neighbours = per_buffer(sub.neighbours.total() as u64);
    let node_work = n + 4 * neighbours + (1 + neighbours) * pins;
    let node_weight = node_work.div_ceil(WORK_PER_NODE).max(1);
    let found = super::with_deep_stack(sub.len(), || {
        heights.targets().find_map(|target| {
            let share = (NODES_PER_BUFFER * new.len() as u64 * node_weight).min(budget.remaining());
            let mut slice = Budget {
                used: 0,
                limit: share,
            };
            let decision = decide_window(&sub, target, &mut slice);
            budget.used += slice.used;
            match decision {
                Decision::Found(found, height) => Some((found, height)),
                _ => None,
            }
        })
    });
    let (found, height) = found?;
    heights.target = heights.target.max(height);
    for (u, &offset) in found.iter().enumerate() {
        // The free buffers of `local` are `new`, in order (pins come after them).
        offsets[new[sub.global[u]]] = Some(offset);
    }
    Some(())
}

/// The heights a window is asked to fit under.
struct Heights {
    /// What every window fits under so far: the goal, raised to the highest window planned.
    target: u64,
    /// No plan at or above this height is of use (the incumbent's height).
    ceiling: u64,
}

impl Heights {
    /// The heights to try, lowest first: the target, then four steps up to just below the
    /// ceiling, each halving the distance left (a window that cannot fit the goal raises it only
    /// as far as it must).
    fn targets(&self) -> impl Iterator<Item = u64> + use<> {
        let (target, top) = (self.target, self.ceiling.saturating_sub(1));
        let gap = top.saturating_sub(target);
        std::iter::once(target)
            .chain([8, 4, 2, 1].map(|part| target + gap / part))
            .filter(move |&height| height <= top)
    }
}

/// Time cut into sections (between consecutive distinct start/end steps), with the bytes live
/// in each and the buffers that start or end in each.
struct Sections {
    /// The distinct start and end steps, ascending; section `s` is `[steps[s], steps[s + 1])`.
    steps: Vec<u64>,
    /// Per section: bytes live.
    load: Vec<u64>,
    /// Per section: the buffers whose first section it is.
    starting: Vec<Vec<usize>>,
    /// Per section: the buffers whose last section it is.
    ending: Vec<Vec<usize>>,
    /// Per buffer: its sections `(first, end)`.
    runs: Vec<(usize, usize)>,
}

impl Sections {
    fn of(problem: &Problem) -> Self {
        let buffers = problem.buffers();
        let mut steps: Vec<u64> = buffers
            .iter()
            .flat_map(|b| [b.lifetime.start, b.lifetime.end])
            .collect();
        steps.sort_unstable();
        steps.dedup();
        let count = steps.len() - 1;
        let section_of = |step: u64| steps.partition_point(|&s| s < step);
        let runs: Vec<(usize, usize)> = buffers
            .iter()
            .map(|b| (section_of(b.lifetime.start), section_of(b.lifetime.end)))
            .collect();
        let mut delta = vec![0i128; count + 1];
        let mut starting = vec![Vec::new(); count];
        let mut ending = vec![Vec::new(); count];
        for (i, (b, &(first, end))) in buffers.iter().zip(&runs).enumerate() {
            delta[first] += i128::from(b.size);
            delta[end] -= i128::from(b.size);
            starting[first].push(i);
            ending[end - 1].push(i);
        }
        let mut live = 0i128;
        let load = delta[..count]
            .iter()
            .map(|d| {
                live += d;
                u64::try_from(live).unwrap_or(u64::MAX)
            })
            .collect();
        Self {
            steps,
            load,
            starting,
            ending,
            runs,
        }
    }

    fn count(&self) -> usize {
        self.load.len()
    }

    fn run(&self, i: usize) -> (usize, usize) {
        self.runs[i]
    }

    /// The first section holding the most bytes.
    fn busiest(&self) -> usize {
        let top = self.load.iter().copied().max().unwrap_or(0);
        self.load.iter().position(|&l| l == top).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::lower_bound;
    use crate::validate;

    #[test]
    fn a_staircase_is_planned_window_by_window_at_its_lower_bound() {
        // Many more buffers than one window holds: overlapping pairs marching through time.
        let buffers: Vec<Buffer> = (0..3 * WINDOW_BUFFERS as u64)
            .map(|i| Buffer::new(format!("b{i}"), 1 + i % 7, i, i + 3))
            .collect();
        let p = Problem::new(buffers).unwrap();
        let bound = lower_bound(&p);
        let mut budget = Budget {
            used: 0,
            limit: 1_000_000,
        };
        let plan = plan_outward(&p, bound, u64::MAX, &mut budget).expect("a plan at the bound");
        assert!(validate(&p, &plan).is_empty());
        assert_eq!(plan.arena_size, bound);
        assert!(budget.used > 0 && budget.used <= 1_000_000);
    }

    #[test]
    fn new_buffers_clear_the_pins_they_meet_outside_their_window() {
        // The busiest step is 3 (b0, b1, b2: 12 bytes); the pin lives only at steps 0-1, so it
        // is not in the first window, but b0 and b1 meet it at step 1. A long tail of unit
        // buffers keeps the problem large. The optimum is 13 (b0 above or below the pin).
        let mut buffers = vec![
            Buffer::new("b0", 7, 1, 4),
            Buffer::new("b1", 1, 1, 4),
            Buffer::new("b2", 4, 3, 4),
            Buffer::new("pin", 3, 0, 2).with_fixed_offset(3),
        ];
        buffers.extend((0..253u64).map(|i| Buffer::new(format!("f{i}"), 1, 4 + i, 5 + i)));
        let p = Problem::new(buffers).unwrap();
        let mut budget = Budget {
            used: 0,
            limit: 100_000,
        };
        let plan = plan_outward(&p, lower_bound(&p), u64::MAX, &mut budget).expect("a plan");
        assert!(validate(&p, &plan).is_empty(), "{:?}", validate(&p, &plan));
        assert_eq!(plan.offsets[3], 3);
        assert!(plan.arena_size >= 13);
    }

    #[test]
    fn random_problems_with_pins_and_alignment_get_valid_plans() {
        // Pseudo-random problems (a fixed LCG), several windows each, with alignments and pins
        // anywhere in time: every plan found must validate, and the budget must hold.
        let mut rng = crate::test_utils::Lcg::new(7);
        let mut next = move |n: u64| rng.below(n);
        let mut found = 0;
        for case in 0..24 {
            let n = 150 + next(450);
            let steps = 10 + next(n / 2);
            let longest = 2 + next(steps / 3 + 1);
            let mut buffers: Vec<Buffer> = (0..n)
                .map(|i| {
                    let start = next(steps);
                    let end = (start + 1 + next(longest)).min(steps + 1);
                    let buffer = Buffer::new(format!("b{i}"), 1 + next(64), start, end);
                    if next(3) == 0 {
                        buffer.with_alignment(1 << next(5))
                    } else {
                        buffer
                    }
                })
                .collect();
            // Pins in disjoint stretches of time, so they never overlap each other.
            let pins = 1 + next(3);
            let slot = (steps + 1) / pins;
            for j in 0..pins {
                let start = j * slot + next(slot / 2 + 1);
                let end = (start + 1 + next(slot / 2 + 1))
                    .min((j + 1) * slot)
                    .max(start + 1);
                let pin = Buffer::new(format!("pin{j}"), 1 + next(100), start, end);
                buffers.push(pin.with_fixed_offset(next(200)));
            }
            let p = Problem::new(buffers).unwrap();
            let limit = 1 + next(50_000);
            let mut budget = Budget { used: 0, limit };
            if let Some(plan) = plan_outward(&p, lower_bound(&p), u64::MAX, &mut budget) {
                found += 1;
                let violations = validate(&p, &plan);
                assert!(violations.is_empty(), "case {case}: {violations:?}");
            }
            assert!(budget.used <= limit, "case {case}");
        }
        assert!(found >= 12, "only {found} of 24 planned");
    }

    #[test]
    fn keeps_pins_and_gives_up_when_the_target_is_too_low() {
        let p = Problem::new(vec![
            Buffer::new("pin", 4, 0, 6).with_fixed_offset(2),
            Buffer::new("a", 2, 0, 3),
            Buffer::new("b", 3, 2, 8),
            Buffer::new("c", 2, 5, 9),
        ])
        .unwrap();
        let mut budget = Budget {
            used: 0,
            limit: 10_000,
        };
        let plan = plan_outward(&p, 9, 10, &mut budget).expect("fits in 9");
        assert!(validate(&p, &plan).is_empty());
        assert_eq!(plan.offsets[0], 2);
        assert!(plan.arena_size <= 9);
        // Nothing fits in 8, and a ceiling of 9 asks for plans of at most 8.
        assert_eq!(plan_outward(&p, 8, 9, &mut budget), None);
        // With room up to the ceiling, a window that cannot fit 8 raises the target.
        let raised = plan_outward(&p, 8, 12, &mut budget).expect("fits below 12");
        assert!(validate(&p, &raised).is_empty());
        assert!(raised.arena_size <= 11);
    }
}
