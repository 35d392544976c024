//! Buffers placed so far, kept in offset order, and the free gaps a new buffer could use.

use std::ops::ControlFlow;

use crate::model::{Plan, Problem, align_up};
use crate::solve::SolveError;
use crate::solve::live_index::LiveIndex;

/// A partial plan. The placed buffers are indexed by lifetime ([`LiveIndex`]), so the gaps left
/// for a new buffer are found among the placed buffers live with it only, sorted by offset
/// (TFLite's method, without its scan of every placed buffer).
///
/// # Runtime
/// `place` is `O(log n)`; `for_each_gap` is `O(k log n)` for the `k` placed buffers live at the
/// same time as the new one (`O(n)` before: one pass over all of them).
#[derive(Clone, Debug)]
pub(crate) struct Placements<'p> {
    problem: &'p Problem,
    live: LiveIndex,
    offsets: Vec<Option<u64>>,
}

impl<'p> Placements<'p> {
    /// Nothing placed.
    pub(crate) fn new(problem: &'p Problem) -> Self {
        Self {
            problem,
            live: LiveIndex::new(problem),
            offsets: vec![None; problem.len()],
        }
    }

    /// The pinned buffers placed at their offsets, nothing else.
    pub(crate) fn with_pins(problem: &'p Problem) -> Self {
        let mut placements = Self::new(problem);
        for (i, buffer) in problem.buffers().iter().enumerate() {
            if let Some(offset) = buffer.fixed_offset {
                placements.place(i, offset);
            }
        }
        placements
    }

    /// Whether buffer `i` has an offset yet.
    pub(crate) fn is_placed(&self, i: usize) -> bool {
        self.offsets[i].is_some()
    }

    /// Puts buffer `i` at `offset`.
    pub(crate) fn place(&mut self, i: usize, offset: u64) {
        debug_assert!(self.offsets[i].is_none(), "buffer {i} placed twice");
        self.offsets[i] = Some(offset);
        let buffer = &self.problem.buffers()[i];
        self.live
            .insert(i, buffer.lifetime.end, [offset, buffer.size]);
    }

    /// Calls `visit(start, end)` for each free gap buffer `i` could use, lowest first: `start` is
    /// already aligned for `i`, `end` is the next time-overlapping placed buffer (`None` for the
    /// open space above all of them). Only gaps at least as large as buffer `i` are visited.
    pub(crate) fn for_each_gap<B>(
        &self,
        i: usize,
        mut visit: impl FnMut(u64, Option<u64>) -> ControlFlow<B>,
    ) -> Option<B> {
        let buffers = self.problem.buffers();
        let buffer = &buffers[i];
        // The placed buffers live with `i`, by `(offset, index)`: the order the gaps are met in.
        let mut live: Vec<(u64, usize, u64)> = Vec::new();
        self.live.for_each_live(
            buffer.lifetime.start,
            buffer.lifetime.end,
            |j, [offset, size]| {
                live.push((offset, j, size));
            },
        );
        live.sort_unstable();
        let mut cursor = 0u64;
        for (offset, _, size) in live {
            let start = align_up(cursor, buffer.alignment);
            if start + buffer.size <= offset
                && let ControlFlow::Break(b) = visit(start, Some(offset))
            {
                return Some(b);
            }
            cursor = cursor.max(offset + size);
        }
        match visit(align_up(cursor, buffer.alignment), None) {
            ControlFlow::Break(b) => Some(b),
            ControlFlow::Continue(()) => None,
        }
    }

    /// The lowest offset where buffer `i` fits: where the patent "stacks" a rectangle.
    pub(crate) fn lowest_fit(&self, i: usize) -> u64 {
        self.for_each_gap(i, |start, _| ControlFlow::Break(start))
            .expect("the space above all buffers always fits")
    }

    /// The plan, once every buffer is placed.
    pub(crate) fn into_plan(self) -> Plan {
        let offsets = self
            .offsets
            .into_iter()
            .map(|o| o.expect("every buffer is placed before the plan is taken"))
            .collect();
        Plan::from_offsets(self.problem, offsets)
    }
}

/// Fails when two pinned buffers are live together and overlap: no solver can help that.
pub(crate) fn check_pins(problem: &Problem) -> Result<(), SolveError> {
    if !problem.has_fixed_offsets() {
        return Ok(());
    }
    let pins: Vec<Option<u64>> = problem.buffers().iter().map(|b| b.fixed_offset).collect();
    let violations = crate::validate::validate_offsets(problem, &pins);
    for violation in violations {
        if let crate::validate::Violation::Overlap { first, second } = violation {
            return Err(SolveError::PinnedOverlap {
                first: problem.buffers()[first].id.clone(),
                second: problem.buffers()[second].id.clone(),
            });
        }
    }
    Ok(())
}

/// Buffer indices by size descending, then start, then index: the order of the TFLite greedies.
pub(crate) fn by_size_descending(problem: &Problem) -> Vec<usize> {
    let mut order: Vec<usize> = (0..problem.len()).collect();
    let buffers = problem.buffers();
    order.sort_by_key(|&i| {
        (
            std::cmp::Reverse(buffers[i].size),
            buffers[i].lifetime.start,
            i,
        )
    });
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Buffer;

    #[test]
    fn gaps_skip_buffers_live_at_other_times() {
        let p = Problem::new(vec![
            Buffer::new("low", 4, 0, 2),
            Buffer::new("high", 4, 0, 2),
            Buffer::new("later", 4, 5, 6),
            Buffer::new("new", 2, 1, 3).with_alignment(2),
        ])
        .unwrap();
        let mut placed = Placements::new(&p);
        placed.place(0, 0);
        placed.place(1, 8);
        placed.place(2, 4);
        let mut gaps = Vec::new();
        placed.for_each_gap::<()>(3, |s, e| {
            gaps.push((s, e));
            ControlFlow::Continue(())
        });
        assert_eq!(gaps, vec![(4, Some(8)), (12, None)]);
        assert_eq!(placed.lowest_fit(3), 4);
    }
}
