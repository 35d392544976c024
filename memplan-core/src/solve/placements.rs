//! Buffers placed so far, kept in offset order, and the free gaps a new buffer could use.

use std::cell::RefCell;
use std::ops::ControlFlow;

use crate::model::{Plan, Problem, align_up};
use crate::solve::SolveError;
use crate::solve::live_index::LiveIndex;

/// A partial plan: the placed buffers, and the free gaps they leave for a new one.
///
/// A gap search needs the placed buffers live at the same time as the new one, sorted by
/// offset. There are two ways to get them, and each is the faster one somewhere:
///
/// - **Scan**: every placed buffer kept in offset order, one pass over all of them skipping
///   those live at other times (TFLite's method). `O(n)` a search, but in a row through memory
///   and with no sort: the faster one while most buffers are live together or `n` is small (the
///   18,692-buffer PanGu trace: 1.9x faster than the index).
/// - **Index**: the placed buffers indexed by lifetime ([`LiveIndex`]); a search finds the `k`
///   live with the new one and sorts them, `O(k log n)`. The faster one once `n` is large and
///   each buffer is live with few others (10^5 buffers: 40x faster than a scan).
///
/// [`Placements::new`] picks one from the problem's size and how many buffers are live together
/// (`choose`); both give the same gaps, so the same plans.
#[derive(Clone, Debug)]
pub(crate) struct Placements<'p> {
    problem: &'p Problem,
    placed: Placed,
    offsets: Vec<Option<u64>>,
}

/// The placed buffers, in the form [`Placements`] searches them.
#[derive(Clone, Debug)]
enum Placed {
    /// Sorted by `(offset, index)`.
    Scan(Vec<ScanEntry>),
    Index(Indexed),
}

/// The placed buffers indexed by lifetime, and the memory a search reuses.
#[derive(Clone, Debug)]
struct Indexed {
    live: LiveIndex,
    /// While every placed offset and size fit in 64 bits as `offset << bits | size` (`bits`,
    /// the largest size's), a search sorts the live buffers as such keys: one integer sorts
    /// faster than a pair (10^6 random buffers: best-fit 4.4 s -> 3.7 s), and the order of two
    /// buffers at one offset does not change a gap. `None` once an offset does not fit.
    bits: Option<u32>,
    /// The live placed buffers of the last search, as keys...
    keys: RefCell<Vec<u64>>,
    /// ... or as `(offset, size)` once they do not fit.
    pairs: RefCell<Vec<(u64, u64)>>,
}

/// A placed buffer as the scan reads it: everything it needs in 32 bytes, in a row.
#[derive(Clone, Copy, Debug)]
struct ScanEntry {
    offset: u64,
    size: u64,
    start: u64,
    end: u64,
}

/// How [`Placements`] searches for gaps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Search {
    Scan,
    Index,
}

/// Buffers a scan reads in the time the index takes to find and sort one live buffer. Measured
/// (best-fit, release, CPU time): a scan reads a placed buffer in 1–3 ns, the index finds and
/// sorts one in 26–36 ns. Between the two problems that bracket it: the 18,692-buffer PanGu
/// trace (each buffer live with 1,303 others on average; scan 0.175 s, index 0.326 s) needs more
/// than 14 to scan, a random 20,000-buffer problem live with 595 others (scan 0.60 s, index
/// 0.22 s) less than 33 to take the index.
const SCAN_ENTRIES_PER_INDEXED: u64 = 20;

/// Up to this many buffers a scan is never slower: it reads at most a few thousand placed
/// buffers a search, while the index first sorts and builds (on the idealloc traces of about
/// 1,000 buffers: 1–2 ms scanned, 5–6 ms indexed).
const ALWAYS_SCAN: usize = 2048;

/// The search [`Placements::new`] uses for `problem`: a scan when its cost (half the buffers
/// read per search, on average) is below the index's (the buffers live with the new one, on
/// average, each costing [`SCAN_ENTRIES_PER_INDEXED`]).
pub(crate) fn choose(problem: &Problem) -> Search {
    let n = problem.len();
    if n <= ALWAYS_SCAN {
        return Search::Scan;
    }
    // Pairs live together: each buffer counts those that start before it ends and do not end
    // before it starts (itself included, hence the `- n`), each pair counted twice.
    let mut starts: Vec<u64> = problem.buffers().iter().map(|b| b.lifetime.start).collect();
    let mut ends: Vec<u64> = problem.buffers().iter().map(|b| b.lifetime.end).collect();
    starts.sort_unstable();
    ends.sort_unstable();
    // Sum over buffers of the starts before its end, less the ends at or before its start:
    // both by one merge of the sorted lists.
    let count_below = |keys: &[u64], bounds: &[u64], strict: bool| -> u64 {
        let mut below = 0usize;
        let mut total = 0u64;
        for &bound in bounds {
            while below < keys.len() && (keys[below] < bound || (!strict && keys[below] == bound)) {
                below += 1;
            }
            total += below as u64;
        }
        total
    };
    let twice_pairs =
        count_below(&starts, &ends, true) - count_below(&ends, &starts, false) - n as u64;
    // Per search: a scan reads n / 2 placed buffers on average, the index finds half of the
    // `twice_pairs / n` buffers live with the new one.
    let scan = n as u64 / 2;
    let index = (twice_pairs / n as u64 / 2 + 1) * SCAN_ENTRIES_PER_INDEXED;
    if scan <= index {
        Search::Scan
    } else {
        Search::Index
    }
}

impl<'p> Placements<'p> {
    /// Nothing placed; the search [`choose`] picks.
    pub(crate) fn new(problem: &'p Problem) -> Self {
        Self::with_search(problem, choose(problem))
    }

    /// Nothing placed; gaps found by `search`.
    pub(crate) fn with_search(problem: &'p Problem, search: Search) -> Self {
        let placed = match search {
            Search::Scan => Placed::Scan(Vec::new()),
            Search::Index => Placed::Index(Indexed {
                live: LiveIndex::new(problem),
                bits: packing(problem),
                keys: RefCell::new(Vec::new()),
                pairs: RefCell::new(Vec::new()),
            }),
        };
        Self {
            problem,
            placed,
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
        match &mut self.placed {
            Placed::Scan(entries) => {
                // After every entry at a lower offset, or at the same one and placed before:
                // the order of equal offsets does not change a gap.
                let at = entries.partition_point(|e| e.offset <= offset);
                let entry = ScanEntry {
                    offset,
                    size: buffer.size,
                    start: buffer.lifetime.start,
                    end: buffer.lifetime.end,
                };
                entries.insert(at, entry);
            }
            Placed::Index(indexed) => {
                if let Some(bits) = indexed.bits
                    && offset >> (u64::BITS - bits) != 0
                {
                    // Too high to pack: searches sort pairs from now on.
                    indexed.bits = None;
                }
                let data = [offset, buffer.size];
                indexed.live.insert(i, buffer.lifetime.end, data);
            }
        }
    }

    /// Calls `visit(start, end)` for each free gap buffer `i` could use, lowest first: `start` is
    /// already aligned for `i`, `end` is the next time-overlapping placed buffer (`None` for the
    /// open space above all of them). Only gaps at least as large as buffer `i` are visited.
    pub(crate) fn for_each_gap<B>(
        &self,
        i: usize,
        mut visit: impl FnMut(u64, Option<u64>) -> ControlFlow<B>,
    ) -> Option<B> {
        let buffer = &self.problem.buffers()[i];
        let (start, end) = (buffer.lifetime.start, buffer.lifetime.end);
        let mut cursor = 0u64;
        // One placed buffer met in offset order: a gap below it, if it holds `i`, then the
        // cursor above it.
        let mut meet = |offset: u64, size: u64| {
            let gap = align_up(cursor, buffer.alignment);
            if gap + buffer.size <= offset
                && let ControlFlow::Break(b) = visit(gap, Some(offset))
            {
                return Some(b);
            }
            cursor = cursor.max(offset + size);
            None
        };
        match &self.placed {
            Placed::Scan(entries) => {
                for e in entries {
                    if e.start < end
                        && e.end > start
                        && let Some(b) = meet(e.offset, e.size)
                    {
                        return Some(b);
                    }
                }
            }
            Placed::Index(Indexed {
                live: index,
                bits: Some(bits),
                keys,
                ..
            }) => {
                let bits = *bits;
                let mut live = keys.borrow_mut();
                live.clear();
                index.for_each_live_data(i, start, |[offset, size]| {
                    live.push(offset << bits | size)
                });
                live.sort_unstable();
                let mask = (1u64 << bits) - 1;
                for &key in live.iter() {
                    if let Some(b) = meet(key >> bits, key & mask) {
                        return Some(b);
                    }
                }
            }
            Placed::Index(Indexed {
                live: index, pairs, ..
            }) => {
                let mut live = pairs.borrow_mut();
                live.clear();
                index.for_each_live_data(i, start, |[offset, size]| live.push((offset, size)));
                live.sort_unstable_by_key(|&(offset, _)| offset);
                for &(offset, size) in live.iter() {
                    if let Some(b) = meet(offset, size) {
                        return Some(b);
                    }
                }
            }
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

/// The bits the largest size takes, for keys `offset << bits | size`: they hold every offset
/// below `2^(64 - bits)` ([`Placements::place`] stops packing at the first offset above).
/// `None` when the largest size takes every bit (or none: every size is 0).
fn packing(problem: &Problem) -> Option<u32> {
    let largest = problem.buffers().iter().map(|b| b.size).max().unwrap_or(0);
    let bits = u64::BITS - largest.leading_zeros();
    (1..u64::BITS).contains(&bits).then_some(bits)
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
    // Sorted as keys in a row, rather than indices whose keys are looked up in the buffers at
    // every comparison (at 10^6 buffers, a cache miss each). The index makes every key distinct.
    let mut keyed: Vec<(std::cmp::Reverse<u64>, u64, usize)> = problem
        .buffers()
        .iter()
        .enumerate()
        .map(|(i, b)| (std::cmp::Reverse(b.size), b.lifetime.start, i))
        .collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, _, i)| i).collect()
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

    /// Both searches find the same gaps, so the greedies make the same plans whichever
    /// [`choose`] picks; and the choice follows the problem's shape.
    #[test]
    fn scan_and_index_find_the_same_gaps() {
        use crate::test_utils::Lcg;
        let mut rng = Lcg::new(11);
        for round in 0..40 {
            let n = 1 + rng.below(120) as usize;
            let horizon = 1 + rng.below(60);
            // Every fourth round's sizes are too large to pack with their offsets, so the index
            // stops packing its keys after the first placement above 2^13.
            let scale = if round % 4 == 3 { 1 << 50 } else { 1 };
            let buffers: Vec<Buffer> = (0..n)
                .map(|i| {
                    let start = rng.below(horizon);
                    let mut b = Buffer::new(
                        format!("b{i}"),
                        (1 + rng.below(64)) * scale,
                        start,
                        start + 1 + rng.below(1 + horizon / 2),
                    );
                    if rng.below(4) == 0 {
                        b = b.with_alignment(1 << rng.below(5));
                    }
                    b
                })
                .collect();
            let p = Problem::new(buffers).unwrap();
            let mut scan = Placements::with_search(&p, Search::Scan);
            let mut index = Placements::with_search(&p, Search::Index);
            for i in by_size_descending(&p) {
                let gaps = |placed: &Placements<'_>| {
                    let mut gaps = Vec::new();
                    placed.for_each_gap::<()>(i, |s, e| {
                        gaps.push((s, e));
                        ControlFlow::Continue(())
                    });
                    gaps
                };
                let found = gaps(&scan);
                assert_eq!(found, gaps(&index), "round {round}, buffer {i}");
                // Somewhere in the middle of the gaps, so later searches meet ragged stacks.
                let (offset, _) = found[(i * 7) % found.len()];
                scan.place(i, offset);
                index.place(i, offset);
            }
            let Placed::Index(indexed) = &index.placed else {
                panic!("round {round}: built with Search::Index");
            };
            assert_eq!(
                indexed.bits.is_some(),
                scale == 1 || n == 1,
                "round {round}"
            );
            assert_eq!(scan.into_plan(), index.into_plan());
        }
    }

    #[test]
    fn small_or_crowded_problems_are_scanned() {
        let chain = |n: u64, length: u64| {
            let buffers = (0..n)
                .map(|i| Buffer::new(format!("b{i}"), 8, i, i + length))
                .collect();
            Problem::new(buffers).unwrap()
        };
        assert_eq!(choose(&chain(100, 2)), Search::Scan);
        // 100,000 buffers each live with 3 others: the index.
        assert_eq!(choose(&chain(100_000, 2)), Search::Index);
        // 10,000 buffers each live with 2,000 others: a scan.
        assert_eq!(choose(&chain(10_000, 1_000)), Search::Scan);
    }
}
