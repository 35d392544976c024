//! How a search branches: at each node, which buffer to try at the lowest open offset (ranked
//! by the attempt's rule, [`super::rules`]), placing it there or barring it from there, and
//! cutting the rest apart where nothing crosses. The state it moves through is kept in
//! [`super::node`].

use super::node::{Search, UNPLACED};
use super::rules::{Preference, mix};

impl Search<'_, '_> {
    /// Places every buffer of `group` (unplaced, closed in time: no other unplaced buffer
    /// meets them) below the target. On success the placements stay; on failure the state is
    /// rolled back.
    pub(super) fn solve(&mut self, group: &[u32]) -> bool {
        if group.is_empty() {
            return true;
        }
        let mark = self.mark();
        let solved = self.branch(group);
        if !solved {
            self.undo(mark);
        }
        solved
    }

    fn branch(&mut self, group: &[u32]) -> bool {
        let sub = self.sub;
        // Barring loops back here rather than recursing, so the stack grows with placements only.
        loop {
            // The lowest offset of every buffer, and the lowest among those not barred from it:
            // every buffer of the group ends at or above that `next` offset.
            let mut next = UNPLACED;
            self.work += group.len() as u64;
            for &u in group {
                let u = u as usize;
                if self.cached_base[u] != self.base[u] {
                    // A pure function of the base: recomputed only when the base moved, which
                    // spares the scan of the pins a buffer meets (up to all of them, each node).
                    let (lowest, looked) = sub.lowest_offset_counted(u, self.base[u]);
                    self.work += looked;
                    self.cached_lowest[u] = lowest;
                    self.cached_base[u] = self.base[u];
                }
                let at = self.cached_lowest[u];
                if at + sub.size[u] > self.target {
                    return false; // it can only rise from here
                }
                self.lowest[u] = at;
                if at != self.barred[u] {
                    next = next.min(at);
                }
            }
            if next == UNPLACED {
                return false; // all barred from their lowest offsets, and none can rise
            }
            for &u in group {
                let u = u as usize;
                let at = self.lowest[u];
                if at != self.barred[u] {
                    continue;
                }
                // `u` is barred from `at`, so a buffer placed later (at `next` or above) must
                // block it there; if `u` fits below `next`, or no buffer can block it, every plan
                // below this node leaves `u` free to drop: none is canonical.
                // It then rests on such a blocker: at least as high as the lowest blocker's top.
                let top = at + sub.size[u];
                let mut resting = UNPLACED;
                self.work += sub.neighbours[u].len() as u64;
                for &v in &sub.neighbours[u] {
                    let v = v as usize;
                    if self.offset[v] == UNPLACED && self.lowest[v] < top {
                        resting = resting.min(self.lowest[v].max(next) + sub.size[v]);
                    }
                }
                if top <= next || resting == UNPLACED || resting + sub.size[u] > self.target {
                    return false;
                }
                self.raised[u] = resting;
            }
            // Per-section load: what is left in a section stacks above the lowest offset any of its
            // buffers can still take (and `next`): gaps below that stay empty.
            let (first, end) = group.iter().fold((u32::MAX, 0), |(f, e), &u| {
                let (a, b) = sub.sections[u as usize];
                (f.min(a), e.max(b))
            });
            let (first, end) = (first as usize, end as usize);
            self.work += 3 * (end - first) as u64;
            self.section_floor[first..end].fill(UNPLACED);
            self.crossing[first..=end].fill(0);
            let mut spanned = 0usize;
            let mut floors: Vec<(u64, u32)> = Vec::with_capacity(group.len());
            for &u in group {
                let u = u as usize;
                let mut at = self.lowest[u];
                if at == self.barred[u] {
                    at = self.raised[u];
                }
                floors.push((at.max(next), u as u32));
                let (a, b) = sub.sections[u];
                spanned += (b - a) as usize;
                self.crossing[a as usize + 1] += 1;
                self.crossing[b as usize] -= 1;
            }
            if spanned <= 8 * group.len() + (end - first) {
                self.work += spanned as u64;
                for &(at, u) in &floors {
                    let (a, b) = sub.sections[u as usize];
                    for slot in &mut self.section_floor[a as usize..b as usize] {
                        *slot = (*slot).min(at);
                    }
                }
            } else {
                // Long lifetimes: each run of sections is two overlapping runs of a power-of-two
                // length; record the floor at both, then push the minima down level by level.
                let width = end - first;
                let levels = (usize::BITS - width.leading_zeros()) as usize;
                // Counted as the sort of the floors this replaced was, plus the pushes down (a
                // few sections per unit: they run over whole slices).
                self.work += (2 * group.len() + levels * width / 8) as u64;
                let table = &mut self.run_minima;
                table[..levels * width].fill(UNPLACED);
                for &(at, u) in &floors {
                    let (a, b) = sub.sections[u as usize];
                    let (a, b) = (a as usize - first, b as usize - first);
                    let k = (usize::BITS - 1 - (b - a).leading_zeros()) as usize;
                    let row = &mut table[k * width..(k + 1) * width];
                    row[a] = row[a].min(at);
                    row[b - (1 << k)] = row[b - (1 << k)].min(at);
                }
                for k in (1..levels).rev() {
                    let (lower, upper) = table.split_at_mut(k * width);
                    let lower = &mut lower[(k - 1) * width..];
                    let runs = width + 1 - (1 << k);
                    let half = 1 << (k - 1);
                    for (low, &up) in lower[..runs].iter_mut().zip(&upper[..runs]) {
                        *low = (*low).min(up);
                    }
                    for (low, &up) in lower[half..half + runs].iter_mut().zip(&upper[..runs]) {
                        *low = (*low).min(up);
                    }
                }
                self.section_floor[first..end].copy_from_slice(&table[..width]);
            }
            for s in first..end {
                let floor = self.section_floor[s];
                if floor != UNPLACED && floor + self.load[s] > self.target {
                    return false;
                }
            }
            // Time cuts: where no buffer of the group is live across a section boundary, the two
            // sides are independent; solve each alone, and fail at once if one fails.
            let mut live = 0i64;
            let mut cuts: Vec<usize> = Vec::new();
            for s in first + 1..end {
                live += self.crossing[s];
                if live == 0 {
                    cuts.push(s);
                }
            }
            if !cuts.is_empty() {
                return self.solve_apart(group, &cuts);
            }
            // Branch on the preferred buffer that can take `next`: there, or barred from it.
            let focus = if self.rule.tightest_first() {
                self.tightest_section(group, next)
            } else {
                None
            };
            let b = group
                .iter()
                .map(|&u| u as usize)
                .filter(|&u| self.lowest[u] == next && self.barred[u] != next)
                .filter(|&u| {
                    focus.is_none_or(|s| {
                        let (a, b) = sub.sections[u];
                        a <= s && s < b
                    })
                })
                .max_by_key(|&u| (self.preference(u), self.tie_key(u)))
                .expect("some buffer takes `next`");
            if !self.spend_node() {
                return false;
            }
            let mark = self.mark();
            self.place(b, next);
            let rest: Vec<u32> = group.iter().copied().filter(|&u| u as usize != b).collect();
            if self.solve(&rest) {
                return true;
            }
            self.undo(mark);
            if self.out_of_budget || !self.spend_node() {
                return false;
            }
            self.bar(b, next);
        }
    }

    /// The section where `next` is hardest to fill, among those where some buffer can take
    /// `next`: the earliest *full* one (its bytes still to place reach the target when
    /// stacked from `next`, so the spot cannot stay empty), else the one with the fewest
    /// buffers that can take `next` there (earliest on ties).
    ///
    /// # Runtime
    /// `O(L)` for the sections `L` the buffers that can take `next` span.
    fn tightest_section(&mut self, group: &[u32], next: u64) -> Option<u32> {
        let sub = self.sub;
        let mut touched: Vec<u32> = Vec::new();
        for &u in group {
            let u = u as usize;
            if self.lowest[u] != next || self.barred[u] == next {
                continue;
            }
            let (a, b) = sub.sections[u];
            self.work += u64::from(b - a);
            for s in a..b {
                if self.candidates[s as usize] == 0 {
                    touched.push(s);
                }
                self.candidates[s as usize] += 1;
            }
        }
        let best = touched.iter().copied().min_by_key(|&s| {
            let full = next + self.load[s as usize] >= self.target;
            if full {
                // The rule's own keys sweep full sections in time order; perturbed ones take
                // the full section with the fewest buffers that can fill it (first-fail).
                let fewest = if self.ties == 0 {
                    0
                } else {
                    self.candidates[s as usize]
                };
                (0, fewest, s)
            } else {
                (1, self.candidates[s as usize], s)
            }
        });
        for s in touched {
            self.candidates[s as usize] = 0;
        }
        best
    }

    /// Solves the pieces of `group` between the section boundaries `cuts`, the tightest first.
    fn solve_apart(&mut self, group: &[u32], cuts: &[usize]) -> bool {
        let sub = self.sub;
        self.work += group
            .iter()
            .map(|&u| u64::from(sub.sections[u as usize].1 - sub.sections[u as usize].0) + 1)
            .sum::<u64>();
        let mut pieces: Vec<Vec<u32>> = vec![Vec::new(); cuts.len() + 1];
        for &u in group {
            let start = sub.sections[u as usize].0 as usize;
            pieces[cuts.partition_point(|&c| c <= start)].push(u);
        }
        pieces.retain(|p| !p.is_empty());
        // Each piece is a problem of its own now: what is still to place in its sections is
        // what its buffers compete for.
        for &u in group {
            let (a, b) = sub.sections[u as usize];
            let left = self.load[a as usize..b as usize]
                .iter()
                .copied()
                .max()
                .unwrap_or(0);
            if left != self.still_to_place[u as usize] {
                self.still_to_place_log
                    .push((u, self.still_to_place[u as usize]));
                self.still_to_place[u as usize] = left;
            }
        }
        let slack = |piece: &Vec<u32>| {
            piece
                .iter()
                .map(|&u| {
                    let (a, b) = sub.sections[u as usize];
                    (a as usize..b as usize)
                        .map(|s| self.section_floor[s].saturating_add(self.load[s]))
                        .max()
                        .unwrap_or(0)
                })
                .max()
                .unwrap_or(0)
        };
        let mut order: Vec<(u64, usize)> = pieces
            .iter()
            .enumerate()
            .map(|(k, p)| (slack(p), k))
            .collect();
        order.sort_by_key(|&(fullest, k)| (std::cmp::Reverse(fullest), k));
        order.into_iter().all(|(_, k)| self.solve(&pieces[k]))
    }

    /// The last key among buffers of equal preference (the largest is branched on): the lower
    /// index first, or a salted hash of it.
    fn tie_key(&self, u: usize) -> u64 {
        if self.ties == 0 {
            u64::MAX - u as u64
        } else {
            mix(u as u64 ^ self.ties)
        }
    }

    /// The key of [`Preference`]: the buffer with the largest key is branched on.
    fn preference(&self, u: usize) -> (u128, u128, u128) {
        let size = u128::from(self.sub.size[u]);
        let lifetime = u128::from(self.sub.span_steps[u]);
        let busiest = u128::from(self.sub.peak_load[u]);
        let left = u128::from(self.still_to_place[u]);
        // Saturating: sizes near 2^62 times long lifetimes and busy steps pass 2^128 (such
        // keys only need to be large, not exact).
        let area = size.saturating_mul(lifetime);
        let (a, b, c) = match self.rule {
            Preference::AreaInBusyTimes | Preference::TightestThenArea => {
                (area.saturating_mul(busiest), size, 0)
            }
            Preference::TightestThenLongest => (lifetime, size, 0),
            Preference::BusiestThenLongest | Preference::TightestThenBusiest => {
                (busiest, lifetime, 0)
            }
            Preference::LeftThenLongest => (left, lifetime, area),
            Preference::LongestThenArea => (lifetime, area, left),
        };
        if self.ties == 0 {
            (a, b, c)
        } else {
            let noise = u128::from(mix(u as u64 ^ self.ties) % 64);
            (a.saturating_mul(64 + noise), b, c)
        }
    }
}
