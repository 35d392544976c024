//! Depth-first branch and bound over canonical placements of one [`Subproblem`].
//!
//! The search places buffers in order of non-decreasing offset (ties by index), each at the
//! lowest offset it can take above the buffers placed so far. Every canonical plan (no buffer can
//! move to a lower free spot) arises from exactly one such sequence, and some optimal plan is
//! canonical, so the search is exact. See the module docs of [`super`] for the pruning rules.

use super::subproblem::Subproblem;

/// Nodes the search may still expand; shared by the parts of one problem.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Budget {
    /// Nodes expanded so far.
    pub(crate) used: u64,
    /// The most nodes that may be expanded.
    pub(crate) limit: u64,
}

impl Budget {
    fn exhausted(&self) -> bool {
        self.used >= self.limit
    }
}

/// What one search found.
#[derive(Clone, Debug)]
pub(crate) struct Outcome {
    /// The best plan found below the starting height: an offset per free buffer, and its height.
    pub(crate) improved: Option<(Vec<u64>, u64)>,
    /// The search visited every branch (no budget stop, no early stop): no plan is lower than
    /// the best one (the improved plan, or else the starting one).
    pub(crate) complete: bool,
}

/// Looks for plans of `sub` lower than `start_height`, stopping early at one no higher than
/// `good_enough`, and within `budget`.
pub(crate) fn minimise(
    sub: &Subproblem,
    start_height: u64,
    good_enough: u64,
    budget: &mut Budget,
) -> Outcome {
    let n = sub.len();
    let mut search = Search {
        sub,
        floor: vec![0; sub.section_count],
        load: sub.section_load.clone(),
        base: vec![0; n],
        offset: vec![UNPLACED; n],
        placed: 0,
        last: None,
        height: sub.pin_top,
        target: start_height.saturating_sub(1),
        good_enough,
        best: None,
        budget,
        stopped: false,
        undo_floor: Vec::new(),
        undo_base: Vec::new(),
    };
    if search.height <= search.target {
        search.descend();
    }
    let stopped = search.stopped;
    Outcome {
        improved: search.best,
        complete: !stopped,
    }
}

const UNPLACED: u64 = u64::MAX;

struct Search<'s, 'b> {
    sub: &'s Subproblem,
    /// Per section: the top of the highest buffer placed in it.
    floor: Vec<u64>,
    /// Per section: bytes of unplaced buffers live in it.
    load: Vec<u64>,
    /// Per buffer: the top of the highest placed buffer it meets in time.
    base: Vec<u64>,
    offset: Vec<u64>,
    placed: usize,
    /// Offset and index of the buffer placed last.
    last: Option<(u64, usize)>,
    /// The highest top placed (pins included).
    height: u64,
    /// Only plans at most this high are sought.
    target: u64,
    good_enough: u64,
    best: Option<(Vec<u64>, u64)>,
    budget: &'b mut Budget,
    /// The search ended early (budget spent, or a good enough plan found).
    stopped: bool,
    undo_floor: Vec<(u32, u64)>,
    undo_base: Vec<(u32, u64)>,
}

impl Search<'_, '_> {
    fn descend(&mut self) {
        let n = self.sub.len();
        if self.placed == n {
            self.record();
            return;
        }
        let sub = self.sub;
        let (last_offset, last_index) = self.last.unwrap_or((0, 0));
        let is_first = self.last.is_none();
        // The lowest offset of every unplaced buffer; those that may come next in offset order.
        let mut lowest = vec![UNPLACED; n];
        let mut eligible: Vec<(u64, usize)> = Vec::new();
        for (u, slot) in lowest.iter_mut().enumerate() {
            if self.offset[u] != UNPLACED {
                continue;
            }
            let at = sub.lowest_offset(u, self.base[u]);
            if at + sub.size[u] > self.target {
                return; // it can only rise from here
            }
            *slot = at;
            if is_first || at > last_offset || (at == last_offset && u > last_index) {
                eligible.push((at, u));
            }
        }
        let Some(&(next_floor, _)) = eligible.iter().min() else {
            return; // every unplaced buffer waits for one below it, but none can come first
        };
        // Everything still to place ends at or above `next_floor`.
        for (u, &at) in lowest.iter().enumerate() {
            if at == UNPLACED || at >= next_floor {
                continue;
            }
            // `u` fits below every later buffer: any completion leaves it able to drop, so
            // the completion is not canonical.
            if at + sub.size[u] <= next_floor {
                return;
            }
            // `u` must rest on a buffer placed later; without one in its time it never can.
            if !sub.neighbours[u]
                .iter()
                .any(|&v| self.offset[v as usize] == UNPLACED)
            {
                return;
            }
        }
        // Per-section load: what is left in a section stacks above its floor and `next_floor`.
        for s in 0..sub.section_count {
            if self.load[s] > 0 && self.floor[s].max(next_floor) + self.load[s] > self.target {
                return;
            }
        }
        // Children: lowest offset first, then the larger area, then index.
        eligible.sort_by_key(|&(at, u)| (at, std::cmp::Reverse(self.area(u)), u));
        // Buffers by lowest top, to spot children that would leave one of them droppable.
        let mut by_top: Vec<(u64, usize)> = (0..n)
            .filter(|&u| lowest[u] != UNPLACED)
            .map(|u| (lowest[u] + sub.size[u], u))
            .collect();
        by_top.sort_unstable();
        for &(at, b) in &eligible {
            if by_top
                .iter()
                .take_while(|&&(top, _)| top <= at)
                .any(|&(_, u)| u != b && !sub.meet(u, b))
            {
                continue;
            }
            if self.budget.exhausted() {
                self.stopped = true;
                return;
            }
            self.budget.used += 1;
            let mark = self.place(b, at);
            self.descend();
            self.unplace(b, mark);
            if self.stopped {
                return;
            }
        }
    }

    fn area(&self, u: usize) -> u128 {
        let (first, end) = self.sub.sections[u];
        u128::from(self.sub.size[u]) * u128::from(end - first)
    }

    fn record(&mut self) {
        let height = self.height;
        if height > self.target {
            return;
        }
        self.best = Some((self.offset.clone(), height));
        self.target = height.saturating_sub(1);
        if height <= self.good_enough {
            self.stopped = true;
        }
    }

    fn place(&mut self, b: usize, at: u64) -> (usize, usize, Option<(u64, usize)>, u64) {
        let sub = self.sub;
        let mark = (
            self.undo_floor.len(),
            self.undo_base.len(),
            self.last,
            self.height,
        );
        let top = at + sub.size[b];
        let (first, end) = sub.sections[b];
        for s in first..end {
            self.undo_floor.push((s, self.floor[s as usize]));
            self.floor[s as usize] = top;
            self.load[s as usize] -= sub.size[b];
        }
        for &v in &sub.neighbours[b] {
            let v = v as usize;
            if self.offset[v] == UNPLACED && self.base[v] < top {
                self.undo_base.push((v as u32, self.base[v]));
                self.base[v] = top;
            }
        }
        self.offset[b] = at;
        self.placed += 1;
        self.last = Some((at, b));
        self.height = self.height.max(top);
        mark
    }

    fn unplace(&mut self, b: usize, mark: (usize, usize, Option<(u64, usize)>, u64)) {
        let (floors, bases, last, height) = mark;
        for (s, old) in self.undo_floor.drain(floors..).rev() {
            self.floor[s as usize] = old;
        }
        for (v, old) in self.undo_base.drain(bases..).rev() {
            self.base[v as usize] = old;
        }
        let (first, end) = self.sub.sections[b];
        for s in first..end {
            self.load[s as usize] += self.sub.size[b];
        }
        self.offset[b] = UNPLACED;
        self.placed -= 1;
        self.last = last;
        self.height = height;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Buffer, Problem};

    fn sub(buffers: Vec<Buffer>) -> Subproblem {
        let p = Problem::new(buffers).unwrap();
        let all: Vec<usize> = (0..p.len()).collect();
        Subproblem::new(&p, &all)
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
        let mut budget = Budget {
            used: 0,
            limit: 1000,
        };
        let outcome = minimise(&s, 100, 0, &mut budget);
        assert!(outcome.complete);
        let (_, height) = outcome.improved.unwrap();
        assert_eq!(height, 7);
        assert!(budget.used > 0 && budget.used <= 1000);
    }

    #[test]
    fn stops_when_the_budget_is_spent() {
        let s = sub((0..6)
            .map(|i| Buffer::new(format!("b{i}"), 1 + i, 0, 1 + i))
            .collect());
        let mut budget = Budget { used: 0, limit: 2 };
        let outcome = minimise(&s, 1000, 0, &mut budget);
        assert!(!outcome.complete);
        assert_eq!(budget.used, 2);
    }

    #[test]
    fn proves_nothing_is_lower() {
        let s = sub(vec![Buffer::new("a", 5, 0, 2), Buffer::new("b", 5, 1, 3)]);
        let mut budget = Budget {
            used: 0,
            limit: 1000,
        };
        let outcome = minimise(&s, 10, 0, &mut budget);
        assert!(outcome.complete && outcome.improved.is_none());
    }
}
