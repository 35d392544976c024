//! The patent's greedy (CN113886090A, claims 3–6): always grow the arena as little as possible.
//!
//! Each round, every rectangle not yet placed is *stacked*: put at its lowest offset where it
//! overlaps no placed, time-overlapping rectangle. Its *tentative peak* is the arena height if it
//! were placed there, `max(height, offset + size)`. The rectangles with the smallest tentative
//! peak are the *first rectangles*. A single one is placed (claim 5); when several tie (claim 6),
//! each tied rectangle `r` is placed tentatively and every other rectangle `s` stacked on that
//! arrangement; the pair `(r, s)` whose *second length* (the peak after both) is smallest is placed.
//!
//! ```text
//!  address               round k: height 8, candidates stacked at their lowest fit
//!     ^
//!  12 |        +-----+              c: tentative peak max(8, 12) = 12
//!     |        |  c  |
//!   8 +--------+--+--+--+           a, b: placed
//!     |    a      |  d  |           d: tentative peak max(8, 8) = 8  <- first rectangle
//!   4 +------+----+--+--+
//!     |  b   |
//!   0 +------+----------------> step
//! ```

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use crate::model::{Buffer, Plan, Problem, align_up};
use crate::solve::live_index::LiveIndex;

/// Order among candidates that still tie after the patent's one-step lookahead.
///
/// The patent leaves this open. It matters: while the arena has room, every rectangle that fits
/// below the current height ties at that height, so the tie order decides which of them fills
/// the room first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TieOrder {
    /// Larger buffers first, then longer lifetimes, then input order.
    #[default]
    Size,
    /// Longer lifetimes first, then larger buffers, then input order.
    Lifetime,
    /// Larger areas (`size * lifetime`) first, then larger buffers, then input order.
    Area,
}

impl TieOrder {
    /// Every tie order.
    pub const ALL: &'static [TieOrder] = &[TieOrder::Size, TieOrder::Lifetime, TieOrder::Area];

    /// Buffer indices, most preferred first.
    fn rank(self, buffers: &[Buffer]) -> Vec<usize> {
        use std::cmp::Reverse;
        let mut order: Vec<usize> = (0..buffers.len()).collect();
        let (size, len, area) = (
            |i: usize| Reverse(buffers[i].size),
            |i: usize| Reverse(buffers[i].lifetime.len()),
            |i: usize| Reverse(buffers[i].area()),
        );
        match self {
            TieOrder::Size => order.sort_by_key(|&i| (size(i), len(i), i)),
            TieOrder::Lifetime => order.sort_by_key(|&i| (len(i), size(i), i)),
            TieOrder::Area => order.sort_by_key(|&i| (area(i), size(i), i)),
        }
        order
    }
}

impl fmt::Display for TieOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TieOrder::Size => "size",
            TieOrder::Lifetime => "lifetime",
            TieOrder::Area => "area",
        })
    }
}

impl FromStr for TieOrder {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, ()> {
        TieOrder::ALL
            .iter()
            .copied()
            .find(|t| t.to_string() == s)
            .ok_or(())
    }
}

/// The arena height the greedy's rounds start from.
///
/// Read literally, the claims start from an empty arrangement (height 0), so in the first rounds
/// the smallest rectangle always has the smallest tentative peak and small tensors are laid at
/// the bottom before the large ones they live beside. Every arrangement ends at least as high as
/// the lower bound, so measuring tentative peaks against a height that starts there changes no
/// comparison above it; below it, every rectangle that fits ties, and claim 6's lookahead and the
/// tie order choose among them. This is memplan's addition, and the default (`patent`); the
/// literal reading is `patent-literal`. Measured side by side in docs/benchmarks.md.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) enum StartHeight {
    /// The lower bound (peak live bytes): memplan's default.
    #[default]
    LowerBound,
    /// Zero: the claims read literally.
    Empty,
}

/// Plans with the patent's greedy (claims 3–6). Pinned buffers are placed first, at their pins.
///
/// Each round places the rectangle whose lowest fit raises the arena least, the arena's height
/// starting at `start` (see [`StartHeight`]). Ties go to the
/// one-step lookahead of claim 6; what still ties after it is settled by `ties`:
/// the pair with the smallest second length wins, then the pair whose first rectangle comes
/// first in `ties`, then the pair whose second rectangle does.
///
/// Measured (docs/benchmarks.md, "Heuristics"): from the lower bound with `size` ties (the
/// default, `patent`) every shared model reaches its lower bound and minimalloc A–F average
/// 1.346x; read literally (`patent-literal`) the means are 1.386x (`size`), 1.367x (`lifetime`),
/// 1.376x (`area`) and five models end 8–12.5% above their bound. No tie order wins everywhere.
///
/// Note that while rectangles fit under the current height, they all tie at that height, and a
/// pair of two of them that still fit under it reaches the smallest possible second length; the
/// tie order then simply picks which two fill the room first.
///
/// # Runtime
/// The literal rounds cost `O(n^3)` lowest-fit evaluations. Here each unplaced rectangle keeps
/// its lowest fit (its *candidate*) in an ordered set by tentative top, and rectangles that fit
/// under the height in a set by tie order, so a round's smallest peak and its tied rectangles are
/// read off in `O(log n)`. Placing a rectangle marks stale only the candidates it now overlaps (in
/// time and address); a stale candidate is refitted when a round looks at it, resuming above the
/// placements that overlapped it, since lowest fits only ever rise. The lookahead walks the other
/// candidates by tentative top and stops at the first one the tied rectangle does not disturb,
/// so it rarely looks past a handful. A round finds the candidates it overlaps among those live
/// with the placed rectangle only (a [`LiveIndex`] of the unplaced ones, `O(k log n)`), plus the
/// refits, each a walk by offset over the placed rectangles live with the refitted one (another
/// [`LiveIndex`]). 10^5 buffers take seconds (`benches/scale.rs`).
pub(crate) fn solve(problem: &Problem, ties: TieOrder, start: StartHeight) -> Plan {
    let mut greedy = Greedy::new(problem, ties, start);
    while let Some(choice) = greedy.choose() {
        match choice {
            Choice::One(r) => greedy.place(r),
            Choice::Pair(r, s) => {
                greedy.place(r);
                greedy.place(s);
            }
        }
    }
    let offsets = greedy
        .offset
        .into_iter()
        .map(|o| o.expect("every buffer is placed"))
        .collect();
    Plan::from_offsets(problem, offsets)
}

/// What a round places.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Choice {
    /// A unique first rectangle (claim 5).
    One(usize),
    /// The first and second rectangles of the best lookahead pair (claim 6), in that order.
    Pair(usize, usize),
}

/// The state between rounds.
struct Greedy<'p> {
    buffers: &'p [Buffer],
    /// `rank[i]`: position of buffer `i` in the tie order.
    rank: Vec<u32>,
    /// `by_rank[k]`: the buffer at position `k` of the tie order.
    by_rank: Vec<usize>,
    /// Offsets of the placed buffers.
    offset: Vec<Option<u64>>,
    /// `(offset, buffer)` of every placed buffer.
    placed: LiveIndex,
    /// Lowest fit of each unplaced buffer among the placed ones.
    candidate: Vec<u64>,
    /// How many buffers are not placed yet.
    unplaced: usize,
    /// The unplaced buffers by lifetime, to find those a placement may disturb.
    unplaced_live: LiveIndex,
    /// Candidates that a placement overlapped and that have not been refitted yet. Their entries
    /// in `by_top` and `under` are lower bounds; `resume[i]` is the offset their refit
    /// starts from (no lower offset is free any more).
    stale: Vec<bool>,
    resume: Vec<u64>,
    /// `(candidate + size, rank)` of every unplaced buffer.
    by_top: BTreeSet<(u64, u32)>,
    /// Ranks of the unplaced buffers whose candidate top is at most `height`.
    under: BTreeSet<u32>,
    /// The arena height so far.
    height: u64,
}

impl<'p> Greedy<'p> {
    fn new(problem: &'p Problem, ties: TieOrder, start: StartHeight) -> Self {
        let buffers = problem.buffers();
        let n = buffers.len();
        let by_rank = ties.rank(buffers);
        let mut rank = vec![0; n];
        for (k, &i) in by_rank.iter().enumerate() {
            rank[i] = u32::try_from(k).expect("fewer than 2^32 buffers");
        }
        let mut greedy = Self {
            buffers,
            rank,
            by_rank,
            offset: vec![None; n],
            placed: LiveIndex::new(problem),
            candidate: vec![0; n],
            unplaced: 0,
            unplaced_live: LiveIndex::new(problem),
            stale: vec![false; n],
            resume: vec![0; n],
            by_top: BTreeSet::new(),
            under: BTreeSet::new(),
            height: match start {
                StartHeight::LowerBound => crate::bounds::lower_bound(problem),
                StartHeight::Empty => 0,
            },
        };
        for (i, buffer) in buffers.iter().enumerate() {
            if let Some(pin) = buffer.fixed_offset {
                greedy.offset[i] = Some(pin);
                greedy
                    .placed
                    .insert(i, buffer.lifetime.end, [pin, buffer.size]);
                greedy.height = greedy.height.max(pin + buffer.size);
            }
        }
        for (i, buffer) in buffers.iter().enumerate() {
            if greedy.offset[i].is_none() {
                greedy.candidate[i] = greedy.fit(i, 0, 0);
                greedy.resume[i] = greedy.candidate[i];
                greedy.unplaced += 1;
                greedy.unplaced_live.insert(i, buffer.lifetime.end, [0; 2]);
                let top = greedy.top(i);
                greedy.by_top.insert((top, greedy.rank[i]));
                if top <= greedy.height {
                    greedy.under.insert(greedy.rank[i]);
                }
            }
        }
        greedy
    }

    /// Where unplaced buffer `i`'s candidate ends.
    fn top(&self, i: usize) -> u64 {
        self.candidate[i] + self.buffers[i].size
    }

    /// The lowest offset `>= y` where buffer `i` overlaps no placed buffer live with it.
    ///
    /// Only placed buffers at offsets `>= scan_from` are looked at: the caller knows that those
    /// below end at or below `y` (or do not meet `i` in time).
    fn fit(&self, i: usize, scan_from: u64, y: u64) -> u64 {
        let buffer = &self.buffers[i];
        let mut y = align_up(y, buffer.alignment);
        // The placed buffers live with `i` from `scan_from` up, by `(offset, index)`.
        let mut live: Vec<(u64, usize, u64)> = Vec::new();
        self.placed
            .for_each_live(i, buffer.lifetime.start, |j, [offset, size]| {
                if offset >= scan_from {
                    live.push((offset, j, size));
                }
            });
        live.sort_unstable();
        for (offset, _, size) in live {
            if offset >= y + buffer.size {
                break;
            }
            let end = offset + size;
            if end > y {
                y = align_up(end, buffer.alignment);
            }
        }
        y
    }

    /// Whether placing candidate `r` moves candidate `s`: they are live together and overlap.
    fn disturbs(&self, r: usize, s: usize) -> bool {
        self.candidate[r] < self.top(s)
            && self.candidate[s] < self.top(r)
            && self.buffers[r].lifetime.overlaps(&self.buffers[s].lifetime)
    }

    /// Top of `s`'s lowest fit once disturbing candidate `r` is placed: every offset from `s`'s
    /// candidate up to `r`'s top now overlaps `r`, so the search resumes at `r`'s top.
    fn refit_top(&self, r: usize, s: usize) -> u64 {
        self.fit(s, self.candidate[s], self.top(r)) + self.buffers[s].size
    }

    /// The peak of the arrangement with candidate `r` and then `s` placed (`peak`: with `r` only).
    fn second_length(&self, r: usize, s: usize, peak: u64) -> u64 {
        let top = if self.disturbs(r, s) {
            self.refit_top(r, s)
        } else {
            self.top(s)
        };
        peak.max(top)
    }

    /// Brings stale candidate `i` up to date: its lowest fit, resumed from where the placements
    /// that disturbed it showed it cannot be lower.
    fn refresh(&mut self, i: usize) {
        let old_top = self.top(i);
        let offset = self.fit(i, self.candidate[i], self.resume[i]);
        self.stale[i] = false;
        self.resume[i] = offset;
        if offset == self.candidate[i] {
            return;
        }
        let k = self.rank[i];
        self.by_top.remove(&(old_top, k));
        self.candidate[i] = offset;
        let new_top = self.top(i);
        self.by_top.insert((new_top, k));
        if old_top <= self.height && new_top > self.height {
            self.under.remove(&k);
        }
    }

    /// The first entry of `by_top` at or after `from` whose candidate is up to date.
    fn next_by_top(&mut self, from: (u64, u32)) -> Option<(u64, u32)> {
        loop {
            let &(top, k) = self.by_top.range(from..).next()?;
            let i = self.by_rank[k as usize];
            if !self.stale[i] {
                return Some((top, k));
            }
            self.refresh(i);
        }
    }

    /// The next first rectangle at or after tie rank `from`, up to date: one that fits under the
    /// height (`room`) or one whose top is `peak`.
    fn next_tied(&mut self, room: bool, peak: u64, from: u32) -> Option<(usize, u32)> {
        loop {
            let k = if room {
                *self.under.range(from..).next()?
            } else {
                self.by_top.range((peak, from)..=(peak, u32::MAX)).next()?.1
            };
            let i = self.by_rank[k as usize];
            if !self.stale[i] {
                return Some((i, k + 1));
            }
            self.refresh(i);
        }
    }

    /// The rectangle(s) the next round places, or `None` when all are placed.
    fn choose(&mut self) -> Option<Choice> {
        let (min_top, first) = self.next_by_top((0, 0))?;
        let peak = self.height.max(min_top);
        let room = min_top <= self.height;
        if self.unplaced == 1 {
            return Some(Choice::One(self.by_rank[first as usize]));
        }
        // The first rectangles, in tie order: all that fit under the height, or those whose top
        // is the smallest.
        let (first_tied, after) = self
            .next_tied(room, peak, 0)
            .expect("the smallest top is among the first rectangles");
        let Some(second_tied) = self.next_tied(room, peak, after) else {
            return Some(Choice::One(first_tied));
        };
        let mut lookahead: Option<(u64, usize)> = None;
        let mut next = Some(second_tied);
        let mut r = first_tied;
        // A first rectangle identical to an earlier one (same size, lifetime, alignment and
        // candidate) has the same best second length, so it can only tie, and ties go to the
        // earlier one: it is skipped. Many equal buffers live together would otherwise make each
        // round quadratic.
        let mut seen = std::collections::BTreeSet::new();
        loop {
            let bound = lookahead.map_or(u64::MAX, |(length, _)| length);
            let buffer = &self.buffers[r];
            let signature = (
                self.candidate[r],
                buffer.size,
                buffer.lifetime,
                buffer.alignment,
            );
            if !seen.insert(signature) {
                // Skipped: see above.
            } else if let Some(length) = self.best_second_length(r, peak, bound) {
                lookahead = Some((length, r));
                if length == peak {
                    break; // no pair can do better, and earlier first rectangles did worse
                }
            }
            let Some((candidate, after)) = next else {
                break;
            };
            r = candidate;
            next = self.next_tied(room, peak, after);
        }
        let (length, r) = lookahead.expect("some pair has a finite second length");
        Some(Choice::Pair(r, self.partner(r, peak, length, room)))
    }

    /// The smallest second length over all partners of first rectangle `r`, if below `bound`.
    ///
    /// Walks the other candidates by top: one that `r` does not disturb keeps its top, and every
    /// later one has a top at least as high, so the walk ends there.
    fn best_second_length(&mut self, r: usize, peak: u64, bound: u64) -> Option<u64> {
        let mut best = bound;
        let r_top = self.top(r);
        let mut from = (0, 0);
        while let Some((top, k)) = self.next_by_top(from) {
            from = (top, k + 1);
            if peak.max(top) >= best {
                break;
            }
            let s = self.by_rank[k as usize];
            if s == r {
                continue;
            }
            if !self.disturbs(r, s) {
                best = peak.max(top);
                break;
            }
            let buffer = &self.buffers[s];
            let lowest = peak.max(align_up(r_top, buffer.alignment) + buffer.size);
            if lowest < best {
                best = best.min(peak.max(self.refit_top(r, s)));
                if best == peak {
                    break;
                }
            }
        }
        (best < bound).then_some(best)
    }

    /// The partner `s` of first rectangle `r` with second length `length` (the smallest), first
    /// in tie order.
    fn partner(&mut self, r: usize, peak: u64, length: u64, room: bool) -> usize {
        if room && length == peak {
            // Every partner reaching the height fits under it now: walk those in tie order.
            let mut from = 0;
            while let Some((s, after)) = self.next_tied(true, peak, from) {
                from = after;
                if s != r && self.second_length(r, s, peak) == length {
                    return s;
                }
            }
            unreachable!("a partner reaches the smallest second length");
        }
        let mut pick: Option<(u32, usize)> = None;
        let mut from = (0, 0);
        while let Some((top, k)) = self.next_by_top(from) {
            from = (top, k + 1);
            if top > length {
                break;
            }
            let s = self.by_rank[k as usize];
            if s == r || pick.is_some_and(|(best, _)| best < k) {
                continue;
            }
            if self.second_length(r, s, peak) == length {
                pick = Some((k, s));
            }
        }
        pick.expect("a partner reaches the smallest second length")
            .1
    }

    /// Places unplaced buffer `p` at its candidate and refits the candidates it now overlaps.
    fn place(&mut self, p: usize) {
        if self.stale[p] {
            self.refresh(p); // the second of a pair, disturbed by the first
        }
        let offset = self.candidate[p];
        let top = self.top(p);
        self.by_top.remove(&(top, self.rank[p]));
        self.under.remove(&self.rank[p]);
        self.unplaced -= 1;
        self.unplaced_live.remove(p);
        self.offset[p] = Some(offset);
        let buffer = &self.buffers[p];
        self.placed
            .insert(p, buffer.lifetime.end, [offset, buffer.size]);
        if top > self.height {
            let newly_under = self
                .by_top
                .range((self.height + 1, 0)..=(top, u32::MAX))
                .map(|&(_, k)| k);
            self.under.extend(newly_under.collect::<Vec<_>>());
            self.height = top;
        }
        let lifetime = self.buffers[p].lifetime;
        let mut disturbed = Vec::new();
        self.unplaced_live.for_each_live(p, lifetime.start, |s, _| {
            if self.candidate[s] < top && offset < self.top(s) {
                disturbed.push(s);
            }
        });
        for s in disturbed {
            // Every offset from its candidate up to `top` now overlaps `p`; the refit waits
            // until the candidate is looked at.
            self.resume[s] = self.resume[s].max(top);
            self.stale[s] = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_utils::problem;

    /// The patent's rounds written out literally (`O(n^3)` lowest fits and more): the reference
    /// the fast solver must match exactly.
    fn literal(problem: &Problem, ties: TieOrder, start: StartHeight) -> Plan {
        use crate::solve::placements::Placements;
        let order = ties.rank(problem.buffers());
        let mut placed = Placements::with_pins(problem);
        let top =
            |placed: &Placements<'_>, i: usize| placed.lowest_fit(i) + problem.buffers()[i].size;
        let floor = match start {
            StartHeight::LowerBound => crate::bounds::lower_bound(problem),
            StartHeight::Empty => 0,
        };
        let mut height = problem
            .buffers()
            .iter()
            .filter_map(|b| b.fixed_offset.map(|o| o + b.size))
            .max()
            .unwrap_or(0)
            .max(floor);
        loop {
            let unplaced: Vec<usize> = order
                .iter()
                .copied()
                .filter(|&i| !placed.is_placed(i))
                .collect();
            let Some(peak) = unplaced.iter().map(|&i| height.max(top(&placed, i))).min() else {
                break;
            };
            let tied: Vec<usize> = unplaced
                .iter()
                .copied()
                .filter(|&i| height.max(top(&placed, i)) == peak)
                .collect();
            if tied.len() == 1 {
                let offset = placed.lowest_fit(tied[0]);
                placed.place(tied[0], offset);
                height = peak;
                continue;
            }
            let mut best: Option<(u64, usize, usize)> = None;
            for &r in &tied {
                let mut with_r = placed.clone();
                with_r.place(r, placed.lowest_fit(r));
                for &s in &unplaced {
                    if s != r {
                        let length = peak.max(top(&with_r, s));
                        if best.is_none_or(|(b, _, _)| length < b) {
                            best = Some((length, r, s));
                        }
                    }
                }
            }
            let (length, r, s) = best.unwrap();
            placed.place(r, placed.lowest_fit(r));
            placed.place(s, placed.lowest_fit(s));
            height = length;
        }
        placed.into_plan()
    }

    fn offsets(problem: &Problem, ties: TieOrder) -> Vec<u64> {
        let plan = solve(problem, ties, StartHeight::Empty);
        assert_eq!(crate::validate(problem, &plan), vec![]);
        plan.offsets
    }

    #[test]
    fn starting_at_the_lower_bound_lets_large_rectangles_go_first() {
        // All three are live together (lower bound 10). From the lower bound every one fits
        // under the height, so all tie and the size order places the largest lowest; read
        // literally, the smallest goes first (see the next test).
        let p = problem(&[(5, 0, 3), (2, 0, 3), (3, 0, 3)]);
        let plan = solve(&p, TieOrder::Size, StartHeight::LowerBound);
        assert_eq!(plan.offsets, vec![0, 8, 5]);
        assert_eq!(plan.arena_size, 10);
    }

    #[test]
    fn places_the_rectangle_that_raises_the_peak_least() {
        // All three are live together. Stacked on nothing, the 2-byte one peaks lowest and goes
        // first, whatever the tie order says (a unique first rectangle, claim 5).
        let p = problem(&[(5, 0, 3), (2, 0, 3), (3, 0, 3)]);
        for &ties in TieOrder::ALL {
            assert_eq!(offsets(&p, ties), vec![5, 0, 2]);
        }
    }

    #[test]
    fn lookahead_places_the_pair_with_the_lowest_second_peak() {
        // b0 and b1 are live together, b1 and b2 too, b0 and b2 are not. All three tie at peak 4.
        // Placing b0 first lets b2 sit beside it at 0 (second length 4); placing b1 first pushes
        // both others above it (8). The lookahead places b0, then b2; b1 goes on top.
        let p = problem(&[(4, 0, 2), (4, 1, 4), (4, 2, 4)]);
        let mut greedy = Greedy::new(&p, TieOrder::Size, StartHeight::Empty);
        assert_eq!(greedy.choose(), Some(Choice::Pair(0, 2)));
        let plan = solve(&p, TieOrder::Size, StartHeight::Empty);
        assert_eq!(plan.offsets, vec![0, 4, 0]);
        assert_eq!(plan.arena_size, 8);
    }

    #[test]
    fn tie_order_decides_between_equal_pairs() {
        // A 10-byte pin sets the height; a, b and c all fit under it, so all tie at peak 10 and
        // every pair keeps it at 10. Size order places the largest first (a, then b above it);
        // lifetime order the longest-lived (b, then a above it).
        let p = Problem::new(vec![
            Buffer::new("pin", 10, 100, 101).with_fixed_offset(0),
            Buffer::new("a", 4, 0, 1),
            Buffer::new("b", 2, 0, 5),
            Buffer::new("c", 1, 1, 2),
        ])
        .unwrap();
        assert_eq!(
            Greedy::new(&p, TieOrder::Size, StartHeight::Empty).choose(),
            Some(Choice::Pair(1, 2))
        );
        assert_eq!(offsets(&p, TieOrder::Size), vec![0, 0, 4, 0]);
        assert_eq!(
            Greedy::new(&p, TieOrder::Lifetime, StartHeight::Empty).choose(),
            Some(Choice::Pair(2, 1))
        );
        assert_eq!(offsets(&p, TieOrder::Lifetime), vec![0, 2, 0, 2]);
    }

    #[test]
    fn pins_stay_and_others_stack_around_them() {
        let p = Problem::new(vec![
            Buffer::new("pin", 4, 0, 10).with_fixed_offset(4),
            Buffer::new("a", 4, 0, 10),
            Buffer::new("b", 4, 0, 10),
        ])
        .unwrap();
        let plan = solve(&p, TieOrder::Size, StartHeight::Empty);
        assert_eq!(crate::validate(&p, &plan), vec![]);
        assert_eq!(plan.offsets[0], 4);
        assert_eq!(plan.arena_size, 12);
    }

    #[test]
    fn respects_alignment() {
        let p = Problem::new(vec![
            Buffer::new("a", 3, 0, 10),
            Buffer::new("b", 8, 0, 10).with_alignment(8),
            Buffer::new("c", 5, 0, 10).with_alignment(4),
        ])
        .unwrap();
        let plan = solve(&p, TieOrder::Size, StartHeight::Empty);
        assert_eq!(crate::validate(&p, &plan), vec![]);
        assert_eq!(plan.offsets[1] % 8, 0);
        assert_eq!(plan.offsets[2] % 4, 0);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 300,
            rng_seed: proptest::test_runner::RngSeed::Fixed(7),
            failure_persistence: None,
            ..Default::default()
        })]

        #[test]
        fn matches_the_literal_rounds(
            buffers in proptest::collection::vec((1u64..12, 0u64..8, 1u64..5, 0u32..4, 0u8..8), 1..14)
        ) {
            let buffers = buffers
                .into_iter()
                .enumerate()
                .map(|(i, (size, start, len, align_log, pin))| {
                    let b = Buffer::new(format!("b{i}"), size, start, start + len)
                        .with_alignment(1 << align_log);
                    // A few buffers pinned, on their own steps so pins never collide.
                    if pin == 0 {
                        Buffer::new(format!("b{i}"), size, 100 + 2 * i as u64, 101 + 2 * i as u64)
                            .with_alignment(1 << align_log)
                            .with_fixed_offset(size << align_log)
                    } else {
                        b
                    }
                })
                .collect();
            let problem = Problem::new(buffers).unwrap();
            for &ties in TieOrder::ALL {
                for start in [StartHeight::LowerBound, StartHeight::Empty] {
                    let fast = solve(&problem, ties, start);
                    proptest::prop_assert_eq!(crate::validate(&problem, &fast), vec![]);
                    proptest::prop_assert_eq!(fast, literal(&problem, ties, start), "{} {:?}", ties, start);
                }
            }
        }
    }

    #[test]
    fn identical_buffers_match_the_literal_rounds() {
        // Equal buffers live together: the lookahead evaluates one of each kind per round.
        let mut buffers: Vec<(u64, u64, u64)> = vec![(4, 0, 6); 12];
        buffers.extend([(4, 3, 9); 8]);
        buffers.extend([(2, 5, 7); 6]);
        let p = problem(&buffers);
        for &ties in TieOrder::ALL {
            for start in [StartHeight::LowerBound, StartHeight::Empty] {
                let plan = solve(&p, ties, start);
                assert_eq!(crate::validate(&p, &plan), vec![]);
                assert_eq!(plan, literal(&p, ties, start), "{ties} {start:?}");
            }
        }
    }

    #[test]
    fn tie_order_names_round_trip() {
        for &ties in TieOrder::ALL {
            assert_eq!(ties.to_string().parse::<TieOrder>(), Ok(ties));
        }
        assert!("nope".parse::<TieOrder>().is_err());
    }
}
