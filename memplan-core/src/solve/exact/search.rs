//! Depth-first search over canonical placements of one [`Subproblem`], and the loop of such
//! searches that minimises its height. This file is the loop (restart rounds, attempts, the
//! descent and the floor probe); one search's branching is in [`super::branch`] (by the rules
//! of [`super::rules`]), its node and budget bookkeeping (state, undo logs, what a node costs)
//! in [`super::node`].
//!
//! A search decides whether the buffers fit below a target height. At each node, `next` is the
//! lowest offset some unplaced buffer may take; the search picks one buffer that can take it and
//! branches: the buffer is placed there, or it is barred from that offset (so something placed
//! later must block it). Every canonical plan (no buffer can move to a lower free spot) is
//! reached, so the search is exact. See the module docs of [`super`] for the pruning rules.

use std::collections::BTreeMap;

use super::node::{Budget, Search};
use super::rules::{Preference, mix, tie_salt};
use super::subproblem::Subproblem;

/// What a search for a plan below a target found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    /// A plan: an offset per free buffer, and its height (pins included).
    Found(Vec<u64>, u64),
    /// The whole tree was searched: no plan is that low.
    Infeasible,
    /// The budget ran out first.
    OutOfBudget,
}

/// Decides whether `sub` has a plan no higher than `target`, within `budget`.
///
/// Searches restart with each branching rule in turn, the budget of an attempt doubling every
/// round: a search that went wrong early gets no chance to waste the whole budget.
#[cfg(test)]
pub(crate) fn decide(sub: &Subproblem, target: u64, budget: &mut Budget) -> Decision {
    // Ends when a round decides or the budget is spent (every round spends nodes).
    decide_rounds(
        sub,
        target,
        0..=u32::MAX,
        FIRST_ATTEMPT,
        Preference::ALL,
        budget,
    )
}

/// [`decide`] for a window of [`super::outward`]: the same rules, but the static rule that
/// suits the windows (slack around pinned neighbours, a few nodes a buffer) goes first.
pub(crate) fn decide_window(sub: &Subproblem, target: u64, budget: &mut Budget) -> Decision {
    decide_rounds(
        sub,
        target,
        0..=u32::MAX,
        FIRST_ATTEMPT,
        Preference::WINDOWS,
        budget,
    )
}

/// Round `round` of [`decide`]: one *long* attempt per branching rule, each with
/// `first_attempt << round` nodes and the round's keys (see [`tie_salt`]), then as many nodes
/// again in *short* attempts: [`SHORT_ATTEMPTS`] per rule, each an eighth as long and with keys
/// perturbed by a salt of its own (less if `budget` runs out first; [`decide`] starts at
/// [`FIRST_ATTEMPT`]).
///
/// The time a search needs to decide is heavy-tailed: on a packing that must be perfect, one
/// order of the buffers finds the plan in a few thousand nodes and the next stalls for
/// millions (planted instances of the generalisation families; MiniMalloc's own restarts
/// show the same over its three static orders). Long attempts give a rule that suits an
/// instance the depth it needs; the short ones draw many different trees for the price of one,
/// which is what finds the lucky order when no rule suits. Attempts are deterministic, so a
/// round that ran out of nodes fails again if repeated: [`minimise`] resumes a target at its
/// next round.
fn decide_round(
    sub: &Subproblem,
    target: u64,
    round: u32,
    first_attempt: u64,
    rules: &[Preference],
    budget: &mut Budget,
) -> Decision {
    let long = first_attempt << round.min(40);
    let long_attempts = rules.iter().map(|&rule| (rule, long, tie_salt(round)));
    let short_attempts = (0..rules.len() as u64 * SHORT_ATTEMPTS).map(|j| {
        let rule = rules[j as usize % rules.len()];
        // Never 0 (the unperturbed keys): the top bit is set.
        let salt = mix(u64::from(round) << 32 | j) | 1 << 63;
        (rule, long / SHORT_ATTEMPTS, salt)
    });
    for (rule, limit, salt) in long_attempts.chain(short_attempts) {
        let limit = budget.remaining().min(limit);
        let mut slice = Budget { used: 0, limit };
        let decision = attempt(sub, target, &mut slice, rule, salt);
        budget.used += slice.used;
        match decision {
            Decision::OutOfBudget if !budget.exhausted() => {}
            decision => return decision,
        }
    }
    Decision::OutOfBudget
}

/// Short attempts per rule in a round of [`decide_round`], each `1 / SHORT_ATTEMPTS` of a long
/// attempt: together as many nodes as the long attempts.
const SHORT_ATTEMPTS: u64 = 8;

/// Runs the rounds `rounds` of [`decide`] (see [`decide_round`]) until one decides.
fn decide_rounds(
    sub: &Subproblem,
    target: u64,
    rounds: std::ops::RangeInclusive<u32>,
    first_attempt: u64,
    rules: &[Preference],
    budget: &mut Budget,
) -> Decision {
    for round in rounds {
        match decide_round(sub, target, round, first_attempt, rules, budget) {
            Decision::OutOfBudget if !budget.exhausted() => {}
            decision => return decision,
        }
    }
    Decision::OutOfBudget
}

/// The most nodes the rounds `0..=last` of [`decide_round`] spend (the long attempts, and as
/// many again in short ones).
fn rounds_cost(last: u32, first_attempt: u64) -> u64 {
    let rules = Preference::ALL.len() as u64;
    2 * rules * first_attempt * ((2u64 << last.min(40)) - 1)
}

/// Nodes of one full first round of [`decide`] (every branching rule once).
pub(crate) fn first_round_nodes() -> u64 {
    rounds_cost(0, FIRST_ATTEMPT)
}

/// Nodes of each rule's first attempt in [`decide`].
const FIRST_ATTEMPT: u64 = 2000;

/// [`minimise`] makes its restart rounds small enough that this many fit in its budget.
const ROUNDS_IN_BUDGET: u32 = 4;

/// One depth-first search for a plan no higher than `target`, branching by `rule` with keys
/// perturbed by `ties` (0: the rule's own keys; see [`tie_salt`]).
fn attempt(
    sub: &Subproblem,
    target: u64,
    budget: &mut Budget,
    rule: Preference,
    ties: u64,
) -> Decision {
    attempt_metered(sub, target, budget, rule, ties).0
}

/// [`attempt`], also returning the nodes it expanded and the units of work it did (see
/// [`WORK_PER_NODE`](super::node::WORK_PER_NODE)).
fn attempt_metered(
    sub: &Subproblem,
    target: u64,
    budget: &mut Budget,
    rule: Preference,
    ties: u64,
) -> (Decision, u64, u64) {
    if sub.pin_top > target {
        return (Decision::Infeasible, 0, 0);
    }
    if budget.exhausted() {
        // Even the root's work (a scan of every buffer) must be paid for.
        return (Decision::OutOfBudget, 0, 0);
    }
    let n = sub.len();
    let mut search = Search::new(sub, target, budget, rule, ties);
    let all: Vec<u32> = (0..n as u32).collect();
    let solved = search.solve(&all);
    // Work since the last node is charged too (a search that fails at its root spends no node).
    search.charge();
    let (nodes, work) = (search.nodes, search.work);
    let decision = if solved {
        Decision::Found(search.offset, search.height)
    } else if search.out_of_budget {
        Decision::OutOfBudget
    } else {
        Decision::Infeasible
    };
    (decision, nodes, work)
}

/// What minimising one part found.
#[derive(Clone, Debug)]
pub(crate) struct Outcome {
    /// The best plan found below the starting height: an offset per free buffer, and its height.
    pub(crate) improved: Option<(Vec<u64>, u64)>,
    /// No plan is lower than the best one (the improved plan, or else the starting one).
    pub(crate) proven_optimal: bool,
}

/// Looks for plans of `sub` lower than `height` (the incumbent's), stopping at one no higher
/// than `good_enough`, within `budget`.
///
/// With `decision`, it asks [`decide`] once for a plan no higher than `good_enough`, with the
/// whole budget (if that height is proven impossible, it goes on minimising with what is left).
/// Otherwise two searches take turns on the budget. Heights are counted in multiples of the
/// [`granularity`] (every plan's lowest height is one), and no restart round of [`decide`] is
/// repeated for the same target: rounds are deterministic, so one that ran out of nodes would
/// again.
/// - The **floor probe** asks for the lowest height not proven impossible (the lower bound, or
///   `good_enough` if higher), one restart round per turn, resuming at its next round. It goes
///   first, so an instance whose lower bound is easy to reach (most models) ends in one short
///   round.
/// - The **descent** gallops down from the best plan: it asks for `best - step` with the restart
///   rounds `0..=level`; the step doubles after a plan is found and halves after a failure,
///   always asking for more than the floor. When the probe one grain below the best plan runs
///   out of nodes, `level` rises by one (doubling what a probe may spend) and the step starts
///   again from the widest, so every level sweeps from near the floor up to the best plan. A
///   height that decision mode reaches within `k` rounds is thus asked for with enough nodes
///   by level `k` at the latest, unless a lower plan was found first.
///
/// The descent starts a probe only if, even spending all it may, it will not have used more
/// nodes than the floor probe, so each gets about half the budget: at most about twice what
/// the better of the two needs alone. A height proven impossible (a search that covered its
/// whole tree) raises the floor; the result is proven optimal when the best plan meets the
/// floor. Neither search discards the best plan, so the loop is anytime.
///
/// The restart rounds are [`decide`]'s, except that a budget too small for the floor probe's
/// first [`ROUNDS_IN_BUDGET`] rounds shrinks them (every attempt proportionally), so both
/// searches still get several turns.
///
/// # Runtime
/// At most `budget.remaining()` nodes, each `O(n + L + S)` (see [`super`]).
pub(crate) fn minimise(
    sub: &Subproblem,
    height: u64,
    good_enough: u64,
    decision: bool,
    budget: &mut Budget,
) -> Outcome {
    let grain = granularity(sub);
    // Rounds as [`decide`]'s, but small enough that the floor probe's first
    // `ROUNDS_IN_BUDGET` fit in the budget, so both searches get several turns; yet never
    // below two nodes a buffer, or no attempt could place every buffer once (a dive).
    let first_attempt = FIRST_ATTEMPT
        .min(budget.remaining() / rounds_cost(ROUNDS_IN_BUDGET - 1, 1))
        .max(2 * sub.len() as u64)
        .max(1);
    // The lowest multiple of `grain` above `h`.
    let lattice_above = |h: u64| (h / grain + 1) * grain;
    let mut best: Option<(Vec<u64>, u64)> = None;
    let mut best_height = height;
    // Proven: no plan is lower (every plan holds the bytes of its busiest step, and its pins).
    let mut impossible_below = sub.lower_bound.max(sub.pin_top);
    let mut floor = good_enough.max(impossible_below); // the lowest height still worth a probe
    // Restart rounds that ran out of nodes, per target: `failed_rounds[t]` is the first not run.
    let mut failed_rounds: BTreeMap<u64, u32> = BTreeMap::new();
    let (mut floor_used, mut descent_used) = (0u64, 0u64);
    if decision && floor < best_height {
        // Three quarters of the budget ask for the capacity itself, as [`decide`] would. If
        // they run out, the last quarter goes on towards it from the best plan (the descent
        // below, which may use as much as the floor probe has), so a part that does not fit
        // still comes back lower than its seed.
        let total = budget.remaining();
        let mut asking = Budget {
            used: 0,
            limit: total - total / 4,
        };
        let mut rounds_done = 0u32;
        let mut outcome = Decision::OutOfBudget;
        for round in 0..=u32::MAX {
            match decide_round(
                sub,
                floor,
                round,
                FIRST_ATTEMPT,
                Preference::ALL,
                &mut asking,
            ) {
                Decision::OutOfBudget if !asking.exhausted() => rounds_done = round + 1,
                decision => {
                    outcome = decision;
                    break;
                }
            }
        }
        budget.used += asking.used;
        match outcome {
            Decision::Found(offsets, found) => {
                best_height = found;
                best = Some((offsets, found));
            }
            Decision::Infeasible => {
                impossible_below = lattice_above(floor);
                floor = impossible_below;
            }
            Decision::OutOfBudget => {
                floor_used = asking.used;
                if first_attempt == FIRST_ATTEMPT {
                    failed_rounds.insert(floor, rounds_done);
                }
            }
        }
        if best.is_some() || budget.exhausted() {
            return Outcome {
                proven_optimal: best_height <= impossible_below,
                improved: best,
            };
        }
    }
    let mut step = grain;
    let mut widen = false; // start the next probe with the widest step
    let mut level = 0u32;
    while floor < best_height && !budget.exhausted() {
        // Plans are multiples of `grain` high: `below` is the highest that beats the best plan.
        let below = (best_height - 1) / grain * grain;
        let mut descent = None;
        if lattice_above(floor) <= below {
            let asks_above_floor = |step: u64| (below + grain).saturating_sub(step) > floor;
            while widen && step.checked_mul(2).is_some_and(asks_above_floor) {
                step *= 2;
            }
            widen = false;
            while step > grain && !asks_above_floor(step) {
                step /= 2;
            }
            let target = below + grain - step;
            let first = failed_rounds.get(&target).copied().unwrap_or(0);
            let done = first
                .checked_sub(1)
                .map_or(0, |r| rounds_cost(r, first_attempt));
            let most = rounds_cost(level, first_attempt).saturating_sub(done);
            if most == 0 || descent_used < floor_used {
                descent = Some((target, first..=level));
            }
        }
        let descend = descent.is_some();
        let (target, rounds) = descent.unwrap_or_else(|| {
            let round = failed_rounds.get(&floor).copied().unwrap_or(0);
            (floor, round..=round)
        });
        let next_round = *rounds.end() + 1;
        let used_before = budget.used;
        // An empty range (every round up to `level` already failed there) decides nothing.
        let outcome = decide_rounds(sub, target, rounds, first_attempt, Preference::ALL, budget);
        // A probe refuted without expanding a node (the pins alone are too high) still costs
        // one: otherwise the floor could walk up one grain per probe across 2^60 bytes, for
        // free, and the loop would never end.
        if budget.used == used_before {
            budget.used += 1;
        }
        let used = budget.used - used_before;
        if descend {
            descent_used += used;
        } else {
            floor_used += used;
        }
        let (found_one, proven) = (
            matches!(outcome, Decision::Found(..)),
            matches!(outcome, Decision::Infeasible),
        );
        match outcome {
            Decision::Found(offsets, found) => {
                best_height = found;
                best = Some((offsets, found));
                if found <= good_enough {
                    break;
                }
            }
            Decision::Infeasible => {
                // No plan is `target` high or lower, so none is below the next multiple of
                // `grain` above it.
                impossible_below = impossible_below.max(lattice_above(target));
                floor = floor.max(impossible_below);
            }
            Decision::OutOfBudget => {
                let failed = failed_rounds.entry(target).or_insert(0);
                *failed = (*failed).max(next_round);
            }
        }
        if descend {
            if found_one {
                step = step.checked_mul(2).unwrap_or(step);
            } else if step > grain {
                step /= 2;
            } else if !proven {
                level += 1;
                widen = true;
            }
        }
    }
    Outcome {
        improved: best,
        proven_optimal: best_height <= impossible_below,
    }
}

/// The largest number dividing every size, alignment (above 1) and pin edge of `sub`. A
/// canonical plan puts every offset and top on its multiples (each offset is 0, a top or a
/// pin's top, aligned up), and every plan can be made canonical without rising, so the lowest
/// height is one too.
fn granularity(sub: &Subproblem) -> u64 {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 { a } else { gcd(b, a % b) }
    }
    let alignments = sub.alignment.iter().copied().filter(|&a| a > 1);
    let pin_edges = sub
        .pins
        .iter()
        .flatten()
        .flat_map(|&(offset, top)| [offset, top]);
    sub.size
        .iter()
        .copied()
        .chain(alignments)
        .chain(pin_edges)
        .fold(sub.pin_top, gcd)
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Buffer, Problem};
    use crate::solve::exact::node::WORK_PER_NODE;

    fn sub(buffers: Vec<Buffer>) -> Subproblem {
        let p = Problem::new(buffers).unwrap();
        let all: Vec<usize> = (0..p.len()).collect();
        Subproblem::new(&p, &all)
    }

    fn budget(limit: u64) -> Budget {
        Budget { used: 0, limit }
    }

    #[test]
    fn reaches_the_lower_bound() {
        // Peak 7 at every step; the search stacks the pairs without a gap.
        let s = sub(vec![
            Buffer::new("big", 4, 0, 2),
            Buffer::new("left", 3, 0, 1),
            Buffer::new("right", 3, 1, 3),
            Buffer::new("late", 4, 2, 3),
        ]);
        let mut budget = budget(1000);
        let Decision::Found(offsets, height) = decide(&s, 7, &mut budget) else {
            panic!("a plan of height 7 exists");
        };
        assert_eq!(height, 7);
        assert_eq!(offsets.len(), 4);
        assert!(budget.used > 0 && budget.used <= 1000);
    }

    #[test]
    fn stops_when_the_budget_is_spent() {
        let s = sub((0..6)
            .map(|i| Buffer::new(format!("b{i}"), 1 + i, 0, 1 + i))
            .collect());
        let mut budget = budget(2);
        assert_eq!(decide(&s, 21, &mut budget), Decision::OutOfBudget);
        assert_eq!(budget.used, 2);
    }

    #[test]
    fn a_far_pin_is_a_lower_bound_not_a_ladder() {
        // The pin's top (2^40 + 1) bounds every plan from below. Probing upwards one height at a
        // time from the bytes live at once (9) would take 2^40 probes, each failing at the root
        // without spending a node.
        let p = Problem::new(vec![
            Buffer::new("dma", 1, 0, 2).with_fixed_offset(1 << 40),
            Buffer::new("a", 3, 0, 1),
            Buffer::new("b", 5, 0, 2),
        ])
        .unwrap();
        let all: Vec<usize> = (0..p.len()).collect();
        let s = Subproblem::new(&p, &all);
        let outcome = minimise(&s, (1 << 40) + 1 + 8, 0, false, &mut budget(1000));
        assert!(outcome.proven_optimal);
        assert_eq!(outcome.improved.map(|(_, h)| h), Some((1 << 40) + 1));
    }

    #[test]
    fn proves_nothing_is_lower() {
        let s = sub(vec![Buffer::new("a", 5, 0, 2), Buffer::new("b", 5, 1, 3)]);
        assert_eq!(decide(&s, 9, &mut budget(1000)), Decision::Infeasible);
        let outcome = minimise(&s, 10, 0, false, &mut budget(1000));
        assert!(outcome.proven_optimal && outcome.improved.is_none());
    }

    #[test]
    fn minimising_walks_down_to_the_optimum() {
        // Two stacks of three that fit side by side in time: optimum 6, lower bound 6.
        let s = sub(crate::test_utils::two_pairs_sharing_a_level());
        let outcome = minimise(&s, 14, 0, false, &mut budget(10_000));
        assert!(outcome.proven_optimal);
        assert_eq!(outcome.improved.map(|(_, h)| h), Some(6));
    }

    fn pseudo_random(seed: u64, n: u64, steps: u64) -> Problem {
        Problem::new(crate::test_utils::pseudo_random_buffers(seed, n, steps, 0)).unwrap()
    }

    #[test]
    fn minimising_reaches_what_decision_mode_reaches_when_the_bound_is_out_of_reach() {
        let p = pseudo_random(127, 57, 30);
        let all: Vec<usize> = (0..p.len()).collect();
        let s = Subproblem::new(&p, &all);
        let incumbent = crate::solve::best_fit::solve(&p).arena_size;
        assert_eq!((s.lower_bound, incumbent), (420, 499));
        // 2,000 nodes do not reach the lower bound...
        let bound = decide(&s, s.lower_bound, &mut budget(2_000));
        assert_eq!(bound, Decision::OutOfBudget);
        // ... while decision mode finds 424 with half of them.
        let Decision::Found(_, reachable) = decide(&s, 424, &mut budget(1_000)) else {
            panic!("decision mode reaches 424 in 1,000 nodes");
        };
        assert_eq!(reachable, 424);
        // Minimising must get there too. (Spending three quarters of the budget on the lower
        // bound, then bisecting with halving shares, ended at 434; a descent that waited for
        // the floor probe's whole next round before each probe ended at 496.)
        let mut spent = budget(5_000);
        let outcome = minimise(&s, incumbent, 0, false, &mut spent);
        let height = outcome.improved.map(|(_, h)| h).unwrap_or(incumbent);
        assert!(height <= reachable, "minimising ended at {height}");
        assert!(spent.used <= 5_000);
        assert!(!outcome.proven_optimal || height == s.lower_bound);
    }

    #[test]
    fn the_granularity_divides_sizes_alignments_and_pins() {
        let sub_of = |buffers: Vec<Buffer>| {
            let p = Problem::new(buffers).unwrap();
            let all: Vec<usize> = (0..p.len()).collect();
            Subproblem::new(&p, &all)
        };
        let plain = sub_of(vec![
            Buffer::new("a", 1024, 0, 2),
            Buffer::new("b", 3072, 1, 3),
        ]);
        assert_eq!(granularity(&plain), 1024);
        let aligned = sub_of(vec![
            Buffer::new("a", 1024, 0, 2).with_alignment(256),
            Buffer::new("b", 3072, 1, 3),
        ]);
        assert_eq!(granularity(&aligned), 256);
        let pinned = sub_of(vec![
            Buffer::new("a", 1024, 0, 2),
            Buffer::new("pin", 1024, 1, 3).with_fixed_offset(100),
        ]);
        assert_eq!(granularity(&pinned), 4);
    }

    #[test]
    fn decision_mode_returns_its_best_plan_when_the_capacity_is_out_of_reach() {
        // The capacity 420 (the lower bound) is out of reach of 2,000 nodes (test above).
        // Asked for it, decision mode used to spend them all there and give back the seed
        // (499); now the last quarter descends from the seed towards the capacity.
        let p = pseudo_random(127, 57, 30);
        let all: Vec<usize> = (0..p.len()).collect();
        let s = Subproblem::new(&p, &all);
        let incumbent = crate::solve::best_fit::solve(&p).arena_size;
        let mut spent = budget(2_000);
        let outcome = minimise(&s, incumbent, s.lower_bound, true, &mut spent);
        let (_, height) = outcome.improved.expect("a plan below the seed");
        assert!(height < incumbent && height > s.lower_bound, "{height}");
        assert!(!outcome.proven_optimal);
        assert!(spent.used <= 2_000);
    }

    /// `n` buffers of 48 bytes aligned to 64, all live at once: the optimum is `64 n - 16`.
    fn all_live_aligned(n: u64) -> Subproblem {
        sub((0..n)
            .map(|i| Buffer::new(format!("b{i}"), 48, 0, 1).with_alignment(64))
            .collect())
    }

    #[test]
    fn the_budget_counts_work_so_large_nodes_cost_more() {
        // 2,000 buffers live together: each node scans all of them, and each buffer barred from
        // the lowest offset scans its 1,999 neighbours for one that could block it. At the
        // bytes live (what the floor probe asked before the bound counted alignment) no buffer
        // can be placed, so nodes bar buffer after buffer, each costing more than the last.
        // Counted in nodes alone, the 62,500 nodes a part this size gets took 83 s; now the
        // work runs out, after a few hundred nodes.
        let n = 2000;
        let s = all_live_aligned(n);
        let limit = 20_000;
        let mut spent = budget(limit);
        let target = 48 * n;
        let (decision, nodes, work) =
            attempt_metered(&s, target, &mut spent, Preference::AreaInBusyTimes, 0);
        assert_eq!(decision, Decision::OutOfBudget);
        assert_eq!(spent.used, limit);
        assert!(nodes < limit / 10, "{nodes} nodes expanded, {work} units");
        // At most one node's work (a scan of the buffers and the neighbours of each) beyond
        // what the budget pays for.
        assert!(
            work <= limit * WORK_PER_NODE + n * n + 8 * n,
            "{work} units"
        );
    }

    #[test]
    fn small_nodes_still_cost_one_node_each() {
        // The MiniMalloc-like random problem of the test above: its nodes do far less than
        // `WORK_PER_NODE`, so the budget counts nodes as it always did.
        let p = pseudo_random(127, 57, 30);
        let all: Vec<usize> = (0..p.len()).collect();
        let s = Subproblem::new(&p, &all);
        let mut spent = budget(5_000);
        let (_, nodes, work) = attempt_metered(
            &s,
            s.lower_bound,
            &mut spent,
            Preference::AreaInBusyTimes,
            0,
        );
        assert_eq!(spent.used, nodes);
        assert!(work < nodes * WORK_PER_NODE);
    }

    #[test]
    fn pins_a_buffer_must_clear_are_counted_as_work() {
        // 300 free buffers, each meeting 400 pins stacked from 0 with gaps of 16 bytes, too
        // small for any of them: finding a buffer's lowest offset scans all the pins.
        let mut buffers: Vec<Buffer> = (0..400)
            .map(|k| Buffer::new(format!("p{k}"), 48, 0, 600).with_fixed_offset(64 * k))
            .collect();
        buffers.extend((0..300).map(|i| Buffer::new(format!("f{i}"), 17 + i % 7, i, i + 3)));
        let s = sub(buffers);
        let mut spent = budget(2_000);
        // Below the pins' top: impossible, found at once without a node.
        let (decision, nodes, _) =
            attempt_metered(&s, 64 * 399, &mut spent, Preference::TightestThenLongest, 0);
        assert_eq!((decision, nodes), (Decision::Infeasible, 0));
        let (_, nodes, work) = attempt_metered(
            &s,
            64 * 400 + 40,
            &mut spent,
            Preference::TightestThenLongest,
            0,
        );
        assert!(work >= 300 * 400, "the root scans every buffer's pins");
        assert!(spent.used >= nodes.max(work / WORK_PER_NODE).min(2_000));
    }

    #[test]
    fn decision_mode_goes_on_minimising_when_the_capacity_is_proven_impossible() {
        // Only 5 bytes are ever live, but the pin leaves 3 bytes below it, too few for `a`,
        // which must rest on it: 8 high.
        let s = sub(vec![
            Buffer::new("pin", 1, 0, 2).with_fixed_offset(3),
            Buffer::new("a", 4, 0, 2),
        ]);
        assert_eq!(s.lower_bound, 5);
        assert_eq!(decide(&s, 7, &mut budget(1000)), Decision::Infeasible);
        let mut spent = budget(1000);
        let outcome = minimise(&s, 12, 6, true, &mut spent);
        assert_eq!(outcome.improved.map(|(_, h)| h), Some(8));
        assert!(outcome.proven_optimal);
        assert!(spent.used <= 1000);
    }
}
