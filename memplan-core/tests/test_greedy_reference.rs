//! First-fit and best-fit find their gaps through a lifetime index (`solve/live_index.rs`) since
//! issue 12, item 10. They must give exactly the plans of the former implementation, which
//! scanned every placed buffer in offset order: it is kept here, verbatim in behaviour, as the
//! reference, and compared on random problems with alignment, pins and ties.

use memplan_core::{Buffer, Plan, Problem, SolveOptions, Solver, align_up, solve};
use proptest::prelude::*;

/// The former `Placements`: placed buffers sorted by `(offset, index)`, one pass over all of
/// them per gap search.
struct ScanAll<'p> {
    problem: &'p Problem,
    by_offset: Vec<(u64, usize)>,
    offsets: Vec<Option<u64>>,
}

impl<'p> ScanAll<'p> {
    fn with_pins(problem: &'p Problem) -> Self {
        let mut placed = Self {
            problem,
            by_offset: Vec::new(),
            offsets: vec![None; problem.len()],
        };
        for (i, buffer) in problem.buffers().iter().enumerate() {
            if let Some(offset) = buffer.fixed_offset {
                placed.place(i, offset);
            }
        }
        placed
    }

    fn place(&mut self, i: usize, offset: u64) {
        self.offsets[i] = Some(offset);
        let at = self.by_offset.partition_point(|&entry| entry < (offset, i));
        self.by_offset.insert(at, (offset, i));
    }

    /// `(start, end)` of every gap that holds buffer `i`, lowest first, then the open top.
    fn gaps(&self, i: usize) -> (Vec<(u64, u64)>, u64) {
        let buffer = &self.problem.buffers()[i];
        let mut gaps = Vec::new();
        let mut cursor = 0u64;
        for &(offset, j) in &self.by_offset {
            let other = &self.problem.buffers()[j];
            if !other.lifetime.overlaps(&buffer.lifetime) {
                continue;
            }
            let start = align_up(cursor, buffer.alignment);
            if start + buffer.size <= offset {
                gaps.push((start, offset));
            }
            cursor = cursor.max(offset + other.size);
        }
        (gaps, align_up(cursor, buffer.alignment))
    }

    fn into_plan(self) -> Plan {
        let offsets = self.offsets.into_iter().map(Option::unwrap).collect();
        Plan::from_offsets(self.problem, offsets)
    }
}

fn by_size_descending(problem: &Problem) -> Vec<usize> {
    let b = problem.buffers();
    let mut order: Vec<usize> = (0..problem.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(b[i].size), b[i].lifetime.start, i));
    order
}

fn reference_first_fit(problem: &Problem) -> Plan {
    let mut placed = ScanAll::with_pins(problem);
    for i in by_size_descending(problem) {
        if placed.offsets[i].is_none() {
            let (gaps, top) = placed.gaps(i);
            placed.place(i, gaps.first().map_or(top, |&(start, _)| start));
        }
    }
    placed.into_plan()
}

fn reference_best_fit(problem: &Problem) -> Plan {
    let mut placed = ScanAll::with_pins(problem);
    for i in by_size_descending(problem) {
        if placed.offsets[i].is_none() {
            let (gaps, top) = placed.gaps(i);
            let mut best: Option<(u64, u64)> = None;
            for (start, end) in gaps {
                if best.is_none_or(|(gap, _)| end - start < gap) {
                    best = Some((end - start, start));
                }
            }
            placed.place(i, best.map_or(top, |(_, offset)| offset));
        }
    }
    placed.into_plan()
}

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
        prop_assert_eq!(plan(&problem, Solver::FirstFit), reference_first_fit(&problem));
    }

    #[test]
    fn best_fit_matches_the_former_implementation(problem in problem()) {
        prop_assert_eq!(plan(&problem, Solver::BestFit), reference_best_fit(&problem));
    }
}
