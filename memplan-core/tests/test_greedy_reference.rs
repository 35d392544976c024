//! First-fit and best-fit find their gaps through a lifetime index (`solve/live_index.rs`) since
//! issue 12, item 10. They must give exactly the plans of the former implementation, which
//! scanned every placed buffer in offset order: it is kept in `common/former_greedy.rs` as the
//! reference, and compared on random problems with alignment, pins and ties.

#[path = "common/former_greedy.rs"]
mod former_greedy;

use memplan_core::{Buffer, Plan, Problem, SolveOptions, Solver, solve};
use proptest::prelude::*;

/// Buffers with many equal sizes and starts (ties), alignments up to 16, and some pins.
fn problem() -> impl Strategy<Value = Problem> {
    let buffer = (
        prop_oneof![1u64..4, 1u64..200],
        0u64..30,
        1u64..12,
        0u32..5,
        prop_oneof![6 => Just(None), 1 => (0u64..8).prop_map(Some)],
    );
    proptest::collection::vec(buffer, 0..120).prop_map(|raw| {
        let mut buffers: Vec<Buffer> = Vec::new();
        for (i, (size, start, len, align_log, pin)) in raw.into_iter().enumerate() {
            let alignment = 1u64 << align_log;
            let mut buffer =
                Buffer::new(format!("t{i}"), size, start, start + len).with_alignment(alignment);
            if let Some(k) = pin {
                let at = k * 64;
                let clear = buffers.iter().all(|o| {
                    o.fixed_offset.is_none_or(|p| {
                        !o.lifetime.overlaps(&buffer.lifetime) || p + o.size <= at || at + size <= p
                    })
                });
                if clear {
                    buffer = buffer.with_fixed_offset(at);
                }
            }
            buffers.push(buffer);
        }
        Problem::new(buffers).expect("generated buffers are well formed")
    })
}

fn plan(problem: &Problem, solver: Solver) -> Plan {
    let options = SolveOptions {
        solver,
        ..SolveOptions::default()
    };
    solve(problem, &options)
        .expect("a heuristic always plans")
        .plan
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn first_fit_matches_the_former_implementation(problem in problem()) {
        prop_assert_eq!(plan(&problem, Solver::FirstFit), former_greedy::first_fit(&problem));
    }

    #[test]
    fn best_fit_matches_the_former_implementation(problem in problem()) {
        prop_assert_eq!(plan(&problem, Solver::BestFit), former_greedy::best_fit(&problem));
    }
}
