//! Property tests: random pins, pools and alias chains always give plans that validate.

use memplan_core::{
    AliasGroups, Buffer, Pool, PoolError, Problem, SolveOptions, Solver, lower_bound, plan_pools,
    solve, validate,
};
use proptest::prelude::*;

/// Random buffers; some pinned at non-overlapping offsets (each pin gets its own band of the
/// address space, so pins never collide).
fn problem_with_pins() -> impl Strategy<Value = Problem> {
    prop::collection::vec(
        (
            1u64..64,
            0u64..12,
            1u64..6,
            0u32..4,
            prop::bool::weighted(0.2),
        ),
        1..14,
    )
    .prop_map(|rows| {
        let buffers = rows
            .into_iter()
            .enumerate()
            .map(|(i, (size, start, len, align_log, pinned))| {
                let alignment = 1u64 << align_log;
                let mut b = Buffer::new(format!("t{i}"), size, start, start + len)
                    .with_alignment(alignment);
                if pinned {
                    b = b.with_fixed_offset(1024 * (i as u64 + 1));
                }
                b
            })
            .collect();
        Problem::new(buffers).unwrap()
    })
}

fn solvers() -> impl Strategy<Value = Solver> {
    prop::sample::select(vec![
        Solver::Naive,
        Solver::FirstFit,
        Solver::BestFit,
        Solver::Patent(Default::default()),
        Solver::Auto,
    ])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn pinned_offsets_are_respected(problem in problem_with_pins(), solver in solvers()) {
        let options = SolveOptions { solver, ..SolveOptions::default() };
        let solution = solve(&problem, &options).unwrap();
        prop_assert_eq!(validate(&problem, &solution.plan), vec![]);
        for (b, &offset) in problem.buffers().iter().zip(&solution.plan.offsets) {
            if let Some(pin) = b.fixed_offset {
                prop_assert_eq!(offset, pin);
            }
        }
        prop_assert!(solution.plan.arena_size >= lower_bound(&problem));
    }

    #[test]
    fn pools_validate_and_respect_capacities(
        problem in problem_with_pins(),
        fast in 1u64..4096,
        binds in prop::collection::vec(prop::option::weighted(0.2, 0usize..2), 14),
        solver in solvers(),
    ) {
        let pools = vec![
            Pool { name: "fast".into(), capacity: Some(fast) },
            Pool { name: "slow".into(), capacity: None },
        ];
        let bound: Vec<Option<usize>> = binds[..problem.len()].to_vec();
        let options = SolveOptions { solver, ..SolveOptions::default() };
        match plan_pools(&problem, &pools, &bound, &options) {
            Ok(plan) => {
                let mut seen = vec![false; problem.len()];
                for (p, pool_plan) in plan.pools.iter().enumerate() {
                    prop_assert_eq!(validate(&pool_plan.problem, &pool_plan.solution.plan), vec![]);
                    if let Some(c) = pools[p].capacity {
                        prop_assert!(pool_plan.solution.plan.arena_size <= c);
                    }
                    for &i in &pool_plan.buffers {
                        prop_assert!(!seen[i]);
                        seen[i] = true;
                        prop_assert_eq!(plan.pool_of[i], p);
                        if let Some(b) = bound[i] {
                            prop_assert_eq!(b, p);
                        }
                    }
                }
                prop_assert!(seen.iter().all(|&s| s));
            }
            // Only the fast pool is limited, so only its bound buffers (or pins) can overflow.
            Err(PoolError::BoundBuffersOverflow { pool, capacity, needed, .. }) => {
                prop_assert_eq!(pool, "fast");
                prop_assert!(needed > capacity);
            }
            Err(e) => prop_assert!(false, "unexpected error {e}"),
        }
    }

    #[test]
    fn alias_chains_share_offsets_and_validate(
        problem in problem_with_pins(),
        links in prop::collection::vec((0usize..14, 0usize..14), 0..6),
        solver in solvers(),
    ) {
        let n = problem.len();
        let pairs: Vec<(usize, usize)> = links
            .into_iter()
            .filter(|&(a, b)| a < n && b < n && a != b)
            .collect();
        let groups = AliasGroups::new(n, &pairs).unwrap();
        let Ok(merged) = groups.merge(&problem) else {
            // Two differently pinned members in one chain: rejected, nothing to plan.
            return Ok(());
        };
        let options = SolveOptions { solver, ..SolveOptions::default() };
        let Ok(solution) = solve(&merged, &options) else {
            // A chain widened a pinned rectangle onto another pin: rejected as a pin overlap.
            return Ok(());
        };
        let plan = groups.expand(&problem, &solution.plan);
        prop_assert_eq!(groups.validate(&problem, &plan), vec![]);
        for &(a, b) in &pairs {
            prop_assert_eq!(plan.offsets[a], plan.offsets[b]);
        }
        prop_assert!(plan.arena_size >= lower_bound(&merged));
    }
}
