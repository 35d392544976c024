//! Which placed buffers are live at the same time as a given one, without looking at the others.
//!
//! The greedies place one buffer at a time, each in a gap among the placed buffers whose
//! lifetimes overlap its own. Scanning every placed buffer makes a placement `O(n)` and a plan
//! `O(n^2)`: 20–30 s at 100,000 buffers. A lifetime `[s, e)` overlaps `[s', e')` exactly when
//! `s' < e` and `e' > s`, so with every buffer sorted by start, the overlapping ones are, among
//! the prefix that starts before `e`, those that end after `s`. A max-tree over that order (each
//! leaf the end of a placed buffer, 0 while unplaced) finds them by descending only into subtrees
//! whose largest end is after `s`:
//!
//! ```text
//!  sorted by start:   a[0,4)  b[1,2)  c[2,9)  d[3,5)  e[6,8)      query [4, 7): prefix a..e
//!  max end (placed):     4       -       9       5       -        (b, e unplaced)
//!  subtree maxima:           4               9                    skip a's subtree (4 <= 4)
//!                                    9                            report c, d
//! ```
//!
//! The tree's leaves are blocks of 16 buffers, scanned in a row. Every query is for the
//! lifetime of one of the problem's buffers, so each buffer's prefix is counted once, when the
//! index is built.
//!
//! # Runtime
//! Building `O(n log n)` (two sorts and a merge); `insert` and `remove` `O(log n)`; a query
//! `O((k + 1) log n)` for `k` buffers found. Memory: `O(n)`, about 38 bytes a buffer.

use crate::model::Problem;

/// Buffers per leaf of the max-tree: a leaf's buffers are scanned in a row, which is faster than
/// descending to each one.
const BLOCK: usize = 16;

/// A set of buffers (the placed ones for the greedies, the unplaced ones for the patent's
/// rounds), indexed by lifetime.
#[derive(Clone, Debug)]
pub(crate) struct LiveIndex {
    /// Buffer indices sorted by `(start, index)`.
    by_start: Vec<u32>,
    /// `entries[k]`: the end of `by_start[k]` while it is in the set (else 0) and what the
    /// caller stored with it (for the greedies, its offset and size), side by side so that a
    /// query reads one stretch of memory in a row instead of missing the cache twice a buffer.
    entries: Vec<Entry>,
    /// `position[i]`: where buffer `i` is in `by_start`, and `prefix[i]` how many buffers start
    /// before `i` ends: those of `by_start[..prefix]`, the only ones that can be live with it.
    /// Counted once here rather than searched for at every query (at 10^6 buffers, a binary
    /// search of 8 MB of starts missed the cache at each of its last steps).
    position: Vec<Position>,
    /// Max-tree over blocks of [`BLOCK`] positions: `tree[leaves + b]` is the largest end in
    /// block `b`; `tree[v]` is the largest of its two children.
    tree: Vec<u64>,
    leaves: usize,
}

/// Where a buffer is in the index, and where the buffers that start after it ends begin.
#[derive(Clone, Copy, Debug, Default)]
struct Position {
    at: u32,
    prefix: u32,
}

/// A position of the index: the buffer's end while in the set (else 0), and its data.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    end: u64,
    data: [u64; 2],
}

impl LiveIndex {
    /// For the buffers of `problem`; the set is empty.
    pub(crate) fn new(problem: &Problem) -> Self {
        let buffers = problem.buffers();
        let n = buffers.len();
        assert!(u32::try_from(n).is_ok(), "fewer than 2^32 buffers");
        // Sorted as pairs, in a row, rather than indices whose keys are looked up in `buffers`
        // at every comparison.
        let mut keyed: Vec<(u64, u32)> = buffers
            .iter()
            .enumerate()
            .map(|(i, b)| (b.lifetime.start, i as u32))
            .collect();
        keyed.sort_unstable();
        let by_start: Vec<u32> = keyed.iter().map(|&(_, i)| i).collect();
        let starts: Vec<u64> = keyed.iter().map(|&(start, _)| start).collect();
        drop(keyed);
        let mut position = vec![Position::default(); n];
        for (k, &i) in by_start.iter().enumerate() {
            position[i as usize].at = k as u32;
        }
        // Every buffer's prefix by one merge of the sorted starts with the sorted ends.
        let mut by_end: Vec<(u64, u32)> = buffers
            .iter()
            .enumerate()
            .map(|(i, b)| (b.lifetime.end, i as u32))
            .collect();
        by_end.sort_unstable();
        let mut before = 0usize;
        for (end, i) in by_end {
            while before < n && starts[before] < end {
                before += 1;
            }
            position[i as usize].prefix = before as u32;
        }
        let leaves = n.div_ceil(BLOCK).next_power_of_two();
        Self {
            by_start,
            entries: vec![Entry::default(); n],
            position,
            tree: vec![0; 2 * leaves],
            leaves,
        }
    }

    /// Adds buffer `i`, live until `end`, with `data` handed back by queries.
    pub(crate) fn insert(&mut self, i: usize, end: u64, data: [u64; 2]) {
        let k = self.position[i].at as usize;
        self.entries[k] = Entry { end, data };
        self.update(k / BLOCK);
    }

    /// Takes buffer `i` out of the set.
    pub(crate) fn remove(&mut self, i: usize) {
        let k = self.position[i].at as usize;
        self.entries[k].end = 0;
        self.update(k / BLOCK);
    }

    /// Recomputes the maxima of block `b` and its ancestors, stopping where nothing changes.
    fn update(&mut self, b: usize) {
        let block = &self.entries[b * BLOCK..((b + 1) * BLOCK).min(self.entries.len())];
        let mut v = self.leaves + b;
        self.tree[v] = block.iter().map(|e| e.end).max().unwrap_or(0);
        while v > 1 {
            v /= 2;
            let larger = self.tree[2 * v].max(self.tree[2 * v + 1]);
            if self.tree[v] == larger {
                break;
            }
            self.tree[v] = larger;
        }
    }

    /// Calls `found(j, data)` for every buffer `j` in the set live at a step of buffer `i`'s
    /// lifetime, with the data inserted with it, in no particular order. `start` is the start
    /// of buffer `i`, which the caller has at hand.
    pub(crate) fn for_each_live(
        &self,
        i: usize,
        start: u64,
        mut found: impl FnMut(usize, [u64; 2]),
    ) {
        self.for_each_position(i, start, |k, data| found(self.by_start[k] as usize, data));
    }

    /// Calls `found(data)` for every buffer in the set live with buffer `i` (which starts at
    /// `start`): as [`for_each_live`](Self::for_each_live), without reading which buffer it is.
    pub(crate) fn for_each_live_data(&self, i: usize, start: u64, mut found: impl FnMut([u64; 2])) {
        self.for_each_position(i, start, |_, data| found(data));
    }

    /// Calls `found(k, data)` for every position `k` in the set whose buffer is live with
    /// buffer `i`, lowest position first.
    #[inline]
    fn for_each_position(&self, i: usize, start: u64, mut found: impl FnMut(usize, [u64; 2])) {
        // Only the positions `[0, prefix)` start before `i` ends.
        let prefix = self.position[i].prefix as usize;
        if prefix == 0 {
            return;
        }
        // Nodes whose blocks meet the prefix `[0, prefix)` and may end after `start`:
        // `(node, first block, blocks below)`. The depth is at most 64, so the stack is too.
        let mut stack = [(0usize, 0usize, 0usize); 64];
        stack[0] = (1, 0, self.leaves);
        let mut depth = 1;
        while depth > 0 {
            depth -= 1;
            let (v, first, width) = stack[depth];
            if first * BLOCK >= prefix || self.tree[v] <= start {
                continue;
            }
            if width == 1 {
                let from = first * BLOCK;
                let to = (from + BLOCK).min(prefix);
                for (k, entry) in self.entries[from..to].iter().enumerate() {
                    if entry.end > start {
                        found(from + k, entry.data);
                    }
                }
                continue;
            }
            let half = width / 2;
            stack[depth] = (2 * v + 1, first + half, half);
            stack[depth + 1] = (2 * v, first, half);
            depth += 2;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Buffer;
    use crate::test_utils::Lcg;

    #[test]
    fn finds_exactly_the_placed_buffers_live_in_the_window() {
        let mut rng = Lcg::new(7);
        let buffers: Vec<Buffer> = (0..200)
            .map(|i| {
                let start = rng.below(100);
                Buffer::new(format!("b{i}"), 1, start, start + 1 + rng.below(20))
            })
            .collect();
        let problem = Problem::new(buffers).unwrap();
        let mut index = LiveIndex::new(&problem);
        let mut placed = vec![false; problem.len()];
        for i in (0..problem.len()).step_by(2) {
            index.insert(i, problem.buffers()[i].lifetime.end, [i as u64, 0]);
            placed[i] = true;
        }
        for i in (0..problem.len()).step_by(6) {
            index.remove(i);
            placed[i] = false;
        }
        for (i, buffer) in problem.buffers().iter().enumerate() {
            let (start, end) = (buffer.lifetime.start, buffer.lifetime.end);
            let mut got = Vec::new();
            index.for_each_live(i, start, |j, data| {
                assert_eq!(data[0], j as u64);
                got.push(j);
            });
            got.sort_unstable();
            let query = crate::model::Lifetime::new(start, end);
            let expected: Vec<usize> = (0..problem.len())
                .filter(|&j| placed[j] && problem.buffers()[j].lifetime.overlaps(&query))
                .collect();
            assert_eq!(got, expected, "buffer {i}, [{start}, {end})");
            let mut data = Vec::new();
            index.for_each_live_data(i, start, |d| data.push(d[0] as usize));
            data.sort_unstable();
            assert_eq!(data, expected, "buffer {i}, data only");
        }
    }
}
