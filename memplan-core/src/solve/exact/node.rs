//! The bookkeeping of one search: the node budget and what a node costs, the state of a
//! node (floors, bases, bars, offsets, the height) and the undo logs that take it back to an
//! earlier node. The branching that moves from node to node is in [`super::branch`]; the
//! small steps they take at every node (`place`, `bar`, `mark`, `undo`, `spend_node`) are
//! `#[inline]`, so a codegen unit of their own does not keep them from being inlined there.

use super::rules::Preference;
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
    pub(super) fn exhausted(&self) -> bool {
        self.used >= self.limit
    }

    /// Nodes left.
    pub(crate) fn remaining(&self) -> u64 {
        self.limit.saturating_sub(self.used)
    }
}

/// Units of work a node may do on average: the budget counts work, in nodes of this size.
///
/// A node's work (buffers, neighbours, pins and sections it looks at) grows with the part: on
/// 2,000 buffers live together it reaches millions of units, and a budget of nodes alone would
/// not bound time. So an attempt costs its nodes or its work divided by `WORK_PER_NODE`,
/// whichever is more, counted as it goes (the root's work included): a budget of `N` nodes
/// bounds the search to about `N * WORK_PER_NODE` units whatever the instance (about 4 ns
/// each). The nodes of the MiniMalloc instances average 600 to 2,300 units, so there a
/// node still costs one.
pub(crate) const WORK_PER_NODE: u64 = 4096;

/// An offset not (yet) given: an unplaced buffer, no bar, nothing cached.
pub(super) const UNPLACED: u64 = u64::MAX;

/// Lengths of the undo logs and the height: where to roll back to.
pub(super) type Mark = (usize, usize, usize, usize, usize, u64);

/// One search in progress: the node it is at, what it has spent, and the logs to undo it.
pub(super) struct Search<'s, 'b> {
    pub(super) sub: &'s Subproblem,
    /// Only plans at most this high are sought.
    pub(super) target: u64,
    /// Per section: the top of the highest buffer placed in it.
    pub(super) floor: Vec<u64>,
    /// Per section: bytes of unplaced buffers live in it.
    pub(super) load: Vec<u64>,
    /// Per buffer: the top of the highest placed buffer it meets in time.
    pub(super) base: Vec<u64>,
    pub(super) offset: Vec<u64>,
    /// Per buffer: an offset it is barred from (the search decided it is not there).
    pub(super) barred: Vec<u64>,
    /// The highest top placed (pins included).
    pub(super) height: u64,
    pub(super) rule: Preference,
    /// 0, or the salt of a pseudo-random factor on each buffer's preference and of the order
    /// among equal ones (see [`tie_salt`]).
    pub(super) ties: u64,
    pub(super) budget: &'b mut Budget,
    pub(super) out_of_budget: bool,
    /// Nodes this attempt has expanded.
    pub(super) nodes: u64,
    /// Units of work (buffers, neighbours, pins and sections looked at) this attempt has done.
    pub(super) work: u64,
    /// Nodes the budget had used when this attempt started.
    pub(super) budget_at_start: u64,
    /// Per buffer: the base its cached lowest offset was computed from (`UNPLACED`: none).
    pub(super) cached_base: Vec<u64>,
    /// Per buffer: its lowest offset at or above `cached_base` (clear of pins, aligned).
    pub(super) cached_lowest: Vec<u64>,
    pub(super) floor_log: Vec<(u32, u64)>,
    pub(super) base_log: Vec<(u32, u64)>,
    pub(super) barred_log: Vec<(u32, u64)>,
    pub(super) placed_log: Vec<u32>,
    /// Scratch: per buffer, its lowest offset at the current node.
    pub(super) lowest: Vec<u64>,
    /// Scratch: per barred buffer, the lowest offset it can still rest at.
    pub(super) raised: Vec<u64>,
    /// Scratch: per section, the lowest offset an unplaced buffer in it can take.
    pub(super) section_floor: Vec<u64>,
    /// Scratch: per section boundary, unplaced buffers live across it.
    pub(super) crossing: Vec<i64>,
    /// Per buffer: the most bytes still to place in one of its sections, when the piece of a
    /// time cut it belongs to was made (the peak load at the root).
    pub(super) still_to_place: Vec<u64>,
    pub(super) still_to_place_log: Vec<(u32, u64)>,
    /// Scratch: per section, buffers that can take `next` there.
    pub(super) candidates: Vec<u32>,
    /// Scratch: per power of two `2^k` and section `s`, the lowest floor of a buffer whose
    /// run of sections was cut into two runs of `2^k` sections, one starting at `s`.
    pub(super) run_minima: Vec<u64>,
}

impl<'s, 'b> Search<'s, 'b> {
    /// The root of an attempt: nothing placed but the pins, every log empty.
    pub(super) fn new(
        sub: &'s Subproblem,
        target: u64,
        budget: &'b mut Budget,
        rule: Preference,
        ties: u64,
    ) -> Self {
        let n = sub.len();
        let budget_at_start = budget.used;
        Search {
            sub,
            target,
            floor: vec![0; sub.section_count],
            load: sub.section_load.clone(),
            base: vec![0; n],
            offset: vec![UNPLACED; n],
            barred: vec![UNPLACED; n],
            height: sub.pin_top,
            rule,
            ties,
            budget,
            out_of_budget: false,
            nodes: 0,
            work: 0,
            budget_at_start,
            cached_base: vec![UNPLACED; n],
            cached_lowest: vec![0; n],
            floor_log: Vec::new(),
            base_log: Vec::new(),
            barred_log: Vec::new(),
            placed_log: Vec::new(),
            lowest: vec![UNPLACED; n],
            raised: vec![UNPLACED; n],
            section_floor: vec![UNPLACED; sub.section_count],
            crossing: vec![0; sub.section_count + 1],
            still_to_place: sub.peak_load.clone(),
            candidates: vec![0; sub.section_count],
            run_minima: vec![
                UNPLACED;
                sub.section_count
                    * (usize::BITS - sub.section_count.leading_zeros()) as usize
            ],
            still_to_place_log: Vec::new(),
        }
    }

    /// Charges one node (see [`WORK_PER_NODE`] for what a node costs); `false` (and out of
    /// budget) when none is left.
    #[inline]
    pub(super) fn spend_node(&mut self) -> bool {
        if self.budget.exhausted() {
            self.out_of_budget = true;
            return false;
        }
        self.nodes += 1;
        self.charge();
        true
    }

    /// Brings the budget up to date: this attempt has cost its nodes, or its work in units of
    /// [`WORK_PER_NODE`] if that is more, but never more than the budget holds.
    #[inline]
    pub(super) fn charge(&mut self) {
        let cost = self.nodes.max(self.work / WORK_PER_NODE);
        self.budget.used = (self.budget_at_start + cost)
            .min(self.budget.limit)
            .max(self.budget.used);
    }

    #[inline]
    pub(super) fn mark(&self) -> Mark {
        (
            self.floor_log.len(),
            self.base_log.len(),
            self.barred_log.len(),
            self.placed_log.len(),
            self.still_to_place_log.len(),
            self.height,
        )
    }

    #[inline]
    pub(super) fn undo(&mut self, mark: Mark) {
        let (floors, bases, barred, placed, still, height) = mark;
        for (v, old) in self.still_to_place_log.drain(still..).rev() {
            self.still_to_place[v as usize] = old;
        }
        for (s, old) in self.floor_log.drain(floors..).rev() {
            self.floor[s as usize] = old;
        }
        for (v, old) in self.base_log.drain(bases..).rev() {
            self.base[v as usize] = old;
        }
        for (v, old) in self.barred_log.drain(barred..).rev() {
            self.barred[v as usize] = old;
        }
        for b in self.placed_log.drain(placed..) {
            let b = b as usize;
            let (first, end) = self.sub.sections[b];
            for s in first..end {
                self.load[s as usize] += self.sub.size[b];
            }
            self.offset[b] = UNPLACED;
        }
        self.height = height;
    }

    #[inline]
    pub(super) fn place(&mut self, b: usize, at: u64) {
        let sub = self.sub;
        let top = at + sub.size[b];
        let (first, end) = sub.sections[b];
        // Undone later at the same cost.
        self.work += 2 * (u64::from(end - first) + sub.neighbours[b].len() as u64);
        for s in first..end {
            self.floor_log.push((s, self.floor[s as usize]));
            self.floor[s as usize] = top;
            self.load[s as usize] -= sub.size[b];
        }
        for &v in &sub.neighbours[b] {
            let v = v as usize;
            if self.offset[v] == UNPLACED && self.base[v] < top {
                self.base_log.push((v as u32, self.base[v]));
                self.base[v] = top;
            }
        }
        self.offset[b] = at;
        self.placed_log.push(b as u32);
        self.height = self.height.max(top);
    }

    #[inline]
    pub(super) fn bar(&mut self, b: usize, at: u64) {
        self.barred_log.push((b as u32, self.barred[b]));
        self.barred[b] = at;
    }
}
