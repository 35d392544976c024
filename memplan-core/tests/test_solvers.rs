//! Property tests over random problems: every solver's plan is valid, no solver beats the
//! exhaustive `enumerate`, which equals the best over all stacking orders, and output is
//! deterministic. Random problems include alignment and pinned buffers.

use memplan_core::solve::ENUMERATE_MAX_BUFFERS;
use memplan_core::{
    Buffer, Plan, Problem, SolveOptions, Solver, align_up, lower_bound, solve, validate,
};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

/// One random buffer: size, start, lifetime length, log2 alignment, pin (`Some(k)`: pinned at
/// `k` times its alignment).
type Raw = (u64, u64, u64, u32, Option<u64>);

fn raw_buffer() -> impl Strategy<Value = Raw> {
    (
        1u64..16,
        0u64..10,
        1u64..6,
        prop_oneof![4 => Just(0u32), 1 => 1u32..4],
        prop_oneof![5 => Just(None), 1 => (0u64..6).prop_map(Some)],
    )
}

/// A problem from raw buffers; a pin that would overlap an earlier pin is dropped, since such
/// problems have no plan at all.
fn build(raw: Vec<Raw>) -> Problem {
    let mut buffers: Vec<Buffer> = Vec::with_capacity(raw.len());
    for (i, (size, start, len, align_log, pin)) in raw.into_iter().enumerate() {
        let alignment = 1u64 << align_log;
        let mut buffer =
            Buffer::new(format!("t{i}"), size, start, start + len).with_alignment(alignment);
        if let Some(k) = pin {
            let at = k * alignment;
            let collides = buffers.iter().any(|other| {
                other.fixed_offset.is_some_and(|o| {
                    other.lifetime.overlaps(&buffer.lifetime)
                        && o < at + size
                        && at < o + other.size
                })
            });
            if !collides {
                buffer = buffer.with_fixed_offset(at);
            }
        }
        buffers.push(buffer);
    }
    Problem::new(buffers).expect("generated buffers are well formed")
}

fn small_problem() -> impl Strategy<Value = Problem> {
    proptest::collection::vec(raw_buffer(), 0..=8).prop_map(build)
}

fn large_problem() -> impl Strategy<Value = Problem> {
    proptest::collection::vec(raw_buffer(), 9..60).prop_map(build)
}

fn run(problem: &Problem, solver: Solver) -> Plan {
    // A small budget keeps `exact` and `auto` quick in debug builds; their plans must be valid
    // and no better than `enumerate` whatever the budget.
    let options = SolveOptions {
        solver,
        node_budget: 5_000,
        ..SolveOptions::default()
    };
    solve(problem, &options)
        .unwrap_or_else(|e| panic!("{solver} failed: {e}"))
        .plan
}

/// The lowest arrangement over every order of the unpinned buffers, each stacked at its lowest
/// aligned fit: claim 7 written out by brute force, independent of the library.
fn best_over_all_orders(problem: &Problem) -> u64 {
    let buffers = problem.buffers();
    let free: Vec<usize> = (0..buffers.len())
        .filter(|&i| buffers[i].fixed_offset.is_none())
        .collect();
    let mut best = u64::MAX;
    let mut order = free.clone();
    permutations(&mut order, 0, &mut |order| {
        let mut offsets: Vec<Option<u64>> = buffers.iter().map(|b| b.fixed_offset).collect();
        for &i in order {
            let b = &buffers[i];
            let mut at = 0;
            // Raise `at` past every conflict until none is left.
            loop {
                let conflict = buffers.iter().zip(&offsets).find_map(|(o, off)| {
                    let off = (*off)?;
                    (o.lifetime.overlaps(&b.lifetime) && off < at + b.size && at < off + o.size)
                        .then_some(off + o.size)
                });
                match conflict {
                    Some(end) => at = align_up(end, b.alignment),
                    None => break,
                }
            }
            offsets[i] = Some(at);
        }
        let height = buffers
            .iter()
            .zip(&offsets)
            .map(|(b, o)| o.expect("all placed") + b.size)
            .max()
            .unwrap_or(0);
        best = best.min(height);
    });
    best
}

fn permutations(items: &mut Vec<usize>, k: usize, visit: &mut impl FnMut(&[usize])) {
    if k == items.len() {
        visit(items);
        return;
    }
    for i in k..items.len() {
        items.swap(k, i);
        permutations(items, k + 1, visit);
        items.swap(k, i);
    }
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        rng_seed: RngSeed::Fixed(0x6d65_6d70),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn every_solver_gives_a_valid_deterministic_plan(problem in small_problem()) {
        let floor = lower_bound(&problem);
        for solver in Solver::all() {
            let plan = run(&problem, solver);
            prop_assert_eq!(validate(&problem, &plan), vec![], "{}", solver);
            prop_assert!(plan.arena_size >= floor, "{} below the lower bound", solver);
            prop_assert_eq!(&plan, &run(&problem, solver), "{} is not deterministic", solver);
        }
    }

    #[test]
    fn enumerate_is_optimal(problem in small_problem()) {
        let exhaustive = run(&problem, Solver::Enumerate).arena_size;
        for solver in Solver::all() {
            let arena = run(&problem, solver).arena_size;
            prop_assert!(exhaustive <= arena, "{} beat enumerate: {} < {}", solver, arena, exhaustive);
        }
        if problem.len() <= 6 {
            prop_assert_eq!(exhaustive, best_over_all_orders(&problem));
        }
    }

}

proptest! {
    // Fewer cases: every solver, `exact` and `auto` included, on up to 60 buffers.
    #![proptest_config(ProptestConfig { cases: 48, ..config() })]

    #[test]
    fn heuristics_stay_valid_on_larger_problems(problem in large_problem()) {
        let floor = lower_bound(&problem);
        for solver in Solver::all() {
            if solver == Solver::Enumerate && problem.len() > ENUMERATE_MAX_BUFFERS {
                continue;
            }
            let plan = run(&problem, solver);
            prop_assert_eq!(validate(&problem, &plan), vec![], "{}", solver);
            prop_assert!(plan.arena_size >= floor, "{} below the lower bound", solver);
            prop_assert_eq!(&plan, &run(&problem, solver), "{} is not deterministic", solver);
        }
    }
}

#[test]
fn enumerate_refuses_large_problems() {
    let buffers = (0..=ENUMERATE_MAX_BUFFERS as u64)
        .map(|i| Buffer::new(format!("t{i}"), 1, i, i + 1))
        .collect();
    let problem = Problem::new(buffers).unwrap();
    let options = SolveOptions {
        solver: Solver::Enumerate,
        ..SolveOptions::default()
    };
    let error = solve(&problem, &options).unwrap_err().to_string();
    assert!(error.contains("at most 10 buffers"), "{error}");
}
