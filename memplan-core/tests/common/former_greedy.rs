//! The former first-fit and best-fit (before issue 12, item 10): placed buffers sorted by offset,
//! one pass over all of them per gap search, `O(n^2)`. Kept as the reference the lifetime-indexed
//! solvers must match exactly (`tests/test_greedy_reference.rs`) and as the "before" column of
//! `benches/scale.rs`.

use memplan_core::{Plan, Problem, align_up};

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

pub(crate) fn first_fit(problem: &Problem) -> Plan {
    let mut placed = ScanAll::with_pins(problem);
    for i in by_size_descending(problem) {
        if placed.offsets[i].is_none() {
            let (gaps, top) = placed.gaps(i);
            placed.place(i, gaps.first().map_or(top, |&(start, _)| start));
        }
    }
    placed.into_plan()
}

pub(crate) fn best_fit(problem: &Problem) -> Plan {
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
