//! Property tests of `exact` and `auto` against a brute force over every stacking order.

use memplan_core::{Buffer, Plan, Problem, SolveOptions, Solver, TieOrder, solve, validate};
use proptest::prelude::*;

/// The lowest offset where buffer `i` fits among the `placed` ones (pins included).
fn lowest_fit(problem: &Problem, offsets: &[Option<u64>], i: usize) -> u64 {
    let buffers = problem.buffers();
    let me = &buffers[i];
    let others: Vec<(u64, u64)> = (0..buffers.len())
        .filter(|&j| j != i && buffers[j].lifetime.overlaps(&me.lifetime))
        .filter_map(|j| offsets[j].map(|o| (o, o + buffers[j].size)))
        .collect();
    let align = |v: u64| v.div_ceil(me.alignment) * me.alignment;
    let mut candidates: Vec<u64> = std::iter::once(0)
        .chain(others.iter().map(|&(_, top)| align(top)))
        .collect();
    candidates.sort_unstable();
    candidates
        .into_iter()
        .find(|&at| {
            others
                .iter()
                .all(|&(o, top)| top <= at || o >= at + me.size)
        })
        .expect("above everything is free")
}

/// The optimum by brute force: every order of the free buffers, each stacked at its lowest fit.
fn brute_force(problem: &Problem) -> u64 {
    let buffers = problem.buffers();
    let pins: Vec<Option<u64>> = buffers.iter().map(|b| b.fixed_offset).collect();
    let mut free: Vec<usize> = (0..buffers.len()).filter(|&i| pins[i].is_none()).collect();
    let mut best = u64::MAX;
    permute(&mut free, 0, &mut |order| {
        let mut offsets = pins.clone();
        for &i in order {
            offsets[i] = Some(lowest_fit(problem, &offsets, i));
        }
        let plan = Plan::from_offsets(problem, offsets.into_iter().map(Option::unwrap).collect());
        best = best.min(plan.arena_size);
    });
    best
}

fn permute(items: &mut Vec<usize>, k: usize, visit: &mut impl FnMut(&[usize])) {
    if k == items.len() {
        visit(items);
        return;
    }
    for j in k..items.len() {
        items.swap(k, j);
        permute(items, k + 1, visit);
        items.swap(k, j);
    }
}

/// Random problems of `1..=max` buffers; some aligned, some pinned (pins may clash: the caller
/// skips those problems).
fn problems(max: usize) -> impl Strategy<Value = Problem> {
    let buffer = (
        1u64..24,
        0u64..10,
        1u64..7,
        prop_oneof![4 => Just(1u64), 1 => Just(2u64), 1 => Just(4u64), 1 => Just(8u64)],
        prop_oneof![9 => Just(None), 1 => (0u64..6).prop_map(Some)],
    );
    prop::collection::vec(buffer, 1..=max).prop_map(|raw| {
        let buffers = raw
            .into_iter()
            .enumerate()
            .map(|(i, (size, start, len, alignment, pin))| {
                let b = Buffer::new(format!("b{i}"), size, start, start + len)
                    .with_alignment(alignment);
                match pin {
                    Some(slot) => b.with_fixed_offset(slot * 8),
                    None => b,
                }
            })
            .collect();
        Problem::new(buffers).expect("the generator makes well-formed buffers")
    })
}

fn options(solver: Solver, capacity: Option<u64>, node_budget: u64) -> SolveOptions {
    SolveOptions {
        solver,
        capacity,
        node_budget,
    }
}

const HEURISTICS: [Solver; 4] = [
    Solver::BestFit,
    Solver::FirstFit,
    Solver::Patent(TieOrder::Size),
    Solver::Patent(TieOrder::Lifetime),
];

proptest! {
    // Many cases: the branches that need the subtler rules are rare in small problems.
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn exact_and_auto_find_the_brute_force_optimum(problem in problems(7)) {
        let Ok(solution) = solve(&problem, &options(Solver::Exact, None, 1_000_000)) else {
            return Ok(()); // clashing pins: no plan exists, and `solve` says so
        };
        let optimum = brute_force(&problem);
        prop_assert!(validate(&problem, &solution.plan).is_empty());
        prop_assert_eq!(solution.plan.arena_size, optimum);
        prop_assert!(solution.optimal, "the search had budget to exhaust the tree");
        let auto = solve(&problem, &options(Solver::Auto, None, 1_000_000)).unwrap();
        prop_assert_eq!(auto.plan.arena_size, optimum);
        prop_assert!(auto.optimal);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn optimal_is_claimed_only_with_proof(problem in problems(7), budget in 0u64..40) {
        let Ok(solution) = solve(&problem, &options(Solver::Exact, None, budget)) else {
            return Ok(());
        };
        let optimum = brute_force(&problem);
        prop_assert!(validate(&problem, &solution.plan).is_empty());
        prop_assert!(solution.plan.arena_size >= optimum);
        prop_assert!(solution.nodes <= budget);
        if solution.optimal {
            prop_assert_eq!(solution.plan.arena_size, optimum);
        }
    }

    #[test]
    fn capacity_mode_fits_whenever_a_plan_fits(problem in problems(7), slack in 0u64..3) {
        let Ok(_) = solve(&problem, &options(Solver::Naive, None, 0)) else {
            return Ok(());
        };
        let optimum = brute_force(&problem);
        let capacity = optimum + slack;
        let solution = solve(&problem, &options(Solver::Exact, Some(capacity), 1_000_000)).unwrap();
        prop_assert!(validate(&problem, &solution.plan).is_empty());
        prop_assert!(solution.plan.arena_size <= capacity);
    }

    #[test]
    fn auto_is_never_worse_than_a_heuristic(problem in problems(40), budget in 0u64..2000) {
        let Ok(auto) = solve(&problem, &options(Solver::Auto, None, budget)) else {
            return Ok(());
        };
        prop_assert!(validate(&problem, &auto.plan).is_empty());
        prop_assert!(auto.nodes <= budget);
        for heuristic in HEURISTICS {
            let plan = solve(&problem, &options(heuristic, None, budget)).unwrap().plan;
            prop_assert!(auto.plan.arena_size <= plan.arena_size, "{} beat auto", heuristic);
        }
    }

    #[test]
    fn search_is_deterministic(problem in problems(40), budget in 0u64..5000) {
        let Ok(first) = solve(&problem, &options(Solver::Exact, None, budget)) else {
            return Ok(());
        };
        let second = solve(&problem, &options(Solver::Exact, None, budget)).unwrap();
        prop_assert_eq!(first, second);
    }
}

#[test]
fn tiny_budgets_still_give_valid_plans() {
    let problem = Problem::new(
        (0..30)
            .map(|i| {
                Buffer::new(
                    format!("b{i}"),
                    1 + (i * 7919) % 97,
                    i % 11,
                    i % 11 + 1 + i % 5,
                )
            })
            .collect(),
    )
    .unwrap();
    for budget in [0, 1, 2] {
        for solver in [Solver::Exact, Solver::Auto] {
            let solution = solve(&problem, &options(solver, None, budget)).unwrap();
            assert!(validate(&problem, &solution.plan).is_empty());
            assert!(solution.nodes <= budget);
        }
    }
}

#[test]
fn brute_force_knows_a_hand_solved_case() {
    // Six bytes live at every step and they pack without waste; naive needs 14.
    let problem = Problem::new(vec![
        Buffer::new("a", 2, 0, 2),
        Buffer::new("b", 3, 1, 3),
        Buffer::new("c", 2, 2, 4),
        Buffer::new("d", 3, 0, 1),
        Buffer::new("e", 3, 3, 4),
        Buffer::new("f", 1, 0, 4),
    ])
    .unwrap();
    assert_eq!(brute_force(&problem), 6);
}
