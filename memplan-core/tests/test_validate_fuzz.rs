//! `validate` (what `memplan check` runs) against an independent brute-force checker, on
//! arbitrary plans for arbitrary problems: it never panics, and it accepts a plan exactly when
//! the brute force does (every pair compared in 128-bit arithmetic, every rule checked directly).
//! Offsets are often near 2^64 so that ends past the address space are exercised.
//!
//! Longer run: `PROPTEST_CASES=100000 cargo test -p memplan-core --test test_validate_fuzz`.

use memplan_core::{Buffer, Plan, Problem, validate};
use proptest::prelude::*;

/// Whether `plan` is valid for `problem`, by brute force over every pair.
fn brute_force_accepts(problem: &Problem, plan: &Plan) -> bool {
    let buffers = problem.buffers();
    if plan.offsets.len() != buffers.len() {
        return false;
    }
    let end = |i: usize| u128::from(plan.offsets[i]) + u128::from(buffers[i].size);
    for (i, b) in buffers.iter().enumerate() {
        let offset = plan.offsets[i];
        if !offset.is_multiple_of(b.alignment)
            || b.fixed_offset.is_some_and(|pin| pin != offset)
            || end(i) > u128::from(u64::MAX)
        {
            return false;
        }
        for (j, other) in buffers.iter().enumerate().skip(i + 1) {
            let live_together = (b.lifetime.start..b.lifetime.end)
                .any(|t| other.lifetime.start <= t && t < other.lifetime.end);
            let share_bytes =
                u128::from(plan.offsets[i]) < end(j) && u128::from(plan.offsets[j]) < end(i);
            if live_together && share_bytes {
                return false;
            }
        }
    }
    let arena = (0..buffers.len()).map(end).max().unwrap_or(0);
    arena == u128::from(plan.arena_size)
}

/// An offset: small, a multiple of 8, or near the top of the address space.
fn offset() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => 0u64..64,
        2 => (0u64..16).prop_map(|k| k * 8),
        1 => (0u64..64).prop_map(|k| u64::MAX - k),
        1 => any::<u64>(),
    ]
}

fn case() -> impl Strategy<Value = (Problem, Plan)> {
    let buffer = (1u64..24, 0u64..8, 1u64..6, 0u32..4, any::<bool>(), offset());
    (prop::collection::vec(buffer, 0..10), any::<bool>(), 0u64..3).prop_map(
        |(raw, honest_arena, arena_error)| {
            let mut buffers = Vec::new();
            let mut offsets = Vec::new();
            for (i, &(size, start, len, align_log, pinned, offset)) in raw.iter().enumerate() {
                let alignment = 1u64 << align_log;
                let mut buffer = Buffer::new(format!("b{i}"), size, start, start + len)
                    .with_alignment(alignment);
                // A pin where the plan puts it, or elsewhere (both must be judged right).
                if pinned && offset < 1 << 20 {
                    let pin = (offset / alignment) * alignment;
                    buffer = buffer.with_fixed_offset(pin);
                }
                buffers.push(buffer);
                offsets.push(offset);
            }
            let problem = Problem::new(buffers).expect("small sizes and pins are valid");
            let end = problem
                .buffers()
                .iter()
                .zip(&offsets)
                .map(|(b, &o)| o.saturating_add(b.size))
                .max()
                .unwrap_or(0);
            let arena_size = if honest_arena {
                end
            } else {
                end.wrapping_add(arena_error)
            };
            (
                problem,
                Plan {
                    offsets,
                    arena_size,
                },
            )
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn validate_agrees_with_brute_force((problem, plan) in case()) {
        let violations = validate(&problem, &plan);
        prop_assert_eq!(
            violations.is_empty(),
            brute_force_accepts(&problem, &plan),
            "violations {:?} for {:?} / {:?}", violations, problem, plan
        );
        // Every violation prints (no arithmetic overflow in the messages).
        let offsets: Vec<Option<u64>> = plan.offsets.iter().copied().map(Some).collect();
        for violation in &violations {
            prop_assert!(!violation.display(&problem, &offsets).to_string().is_empty());
        }
    }
}
