//! Sizes, offsets and alignments near the top of the 64-bit address space (issue 12, item 6).
//!
//! An alignment of 2^61 is a legal power of two, but a few such buffers stacked on each other
//! reach past 2^64. The library must never wrap: [`Problem::new`] refuses problems whose stack
//! could overflow, and [`solve`] returns only plans that [`validate`] accepts, for every solver.
//! The checks here do not rely on `debug_assert!`s, so they fail in any profile when a solver
//! wraps or panics.

use memplan_core::{Buffer, Problem, ProblemError, SolveError, Solver, solve, validate};
use proptest::prelude::*;

/// Every solver's answer on `problem`: a valid plan, or a refusal that is not a plan.
fn assert_every_solver_is_sound(problem: &Problem) {
    assert_solvers_are_sound(problem, &Solver::all());
}

fn assert_solvers_are_sound(problem: &Problem, solvers: &[Solver]) {
    for &solver in solvers {
        let options = memplan_core::SolveOptions {
            solver,
            node_budget: 2_000,
            ..Default::default()
        };
        let outcome = std::panic::catch_unwind(|| solve(problem, &options));
        let Ok(result) = outcome else {
            panic!("{solver} panicked on {problem:?}");
        };
        match result {
            Ok(solution) => assert_eq!(
                validate(problem, &solution.plan),
                vec![],
                "{solver} returned an invalid plan for {problem:?}"
            ),
            Err(SolveError::TooManyBuffers { .. }) => {}
            Err(error) => panic!("{solver} refused a solvable problem: {error}"),
        }
    }
}

#[test]
fn eight_buffers_aligned_to_2_pow_61_are_refused_not_wrapped() {
    // All live together, one byte each: stacking them needs 7 * 2^61 + 1 bytes, past 2^62.
    let buffers: Vec<Buffer> = (0..8)
        .map(|i| Buffer::new(format!("b{i}"), 1, 0, 1).with_alignment(1 << 61))
        .collect();
    let error = Problem::new(buffers).expect_err("the stack could overflow 64 bits");
    assert!(matches!(error, ProblemError::Overflow { .. }), "{error:?}");
}

#[test]
fn accepted_huge_alignments_give_valid_plans_from_every_solver() {
    // Three buffers aligned to 2^60, live together: offsets 0, 2^60, 2^61 (just below 2^62).
    let buffers: Vec<Buffer> = (0..3)
        .map(|i| Buffer::new(format!("b{i}"), 1, 0, 2).with_alignment(1 << 60))
        .collect();
    let problem = Problem::new(buffers).expect("the padded total stays below 2^62");
    assert_every_solver_is_sound(&problem);
}

#[test]
fn a_pin_near_the_top_and_aligned_buffers_above_it_give_valid_plans() {
    let top_pin = (1u64 << 62) - (1 << 59);
    let problem = Problem::new(vec![
        Buffer::new("pin", 1 << 58, 0, 4)
            .with_alignment(1 << 58)
            .with_fixed_offset(top_pin),
        Buffer::new("a", 1 << 58, 1, 3).with_alignment(1 << 59),
        Buffer::new("b", 3, 0, 2).with_alignment(1 << 57),
    ])
    .expect("pins below 2^62 and a small padded total are accepted");
    assert_every_solver_is_sound(&problem);
}

/// One buffer with a size and alignment anywhere from tiny to 2^61.
fn huge_buffer() -> impl Strategy<Value = (u32, u32, u64, u64, bool)> {
    (0u32..62, 0u32..62, 0u64..4, 1u64..4, any::<bool>())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Whatever `Problem::new` accepts, every solver plans validly or refuses cleanly.
    #[test]
    fn huge_values_never_wrap(raw in proptest::collection::vec(huge_buffer(), 1..7)) {
        let buffers: Vec<Buffer> = raw
            .iter()
            .enumerate()
            .map(|(i, &(size_log, align_log, start, len, pinned))| {
                let alignment = 1u64 << align_log;
                let buffer = Buffer::new(format!("b{i}"), 1u64 << size_log, start, start + len)
                    .with_alignment(alignment);
                if pinned { buffer.with_fixed_offset(alignment) } else { buffer }
            })
            .collect();
        if let Ok(problem) = Problem::new(buffers)
            && !matches!(
                memplan_core::solve(&problem, &memplan_core::SolveOptions {
                    solver: Solver::Naive,
                    ..Default::default()
                }),
                Err(SolveError::PinnedOverlap { .. })
            ) {
                assert_every_solver_is_sound(&problem);
            }
    }
}
