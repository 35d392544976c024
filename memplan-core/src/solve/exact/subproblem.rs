//! One part of a problem, prepared for search: its free buffers, the time sections they span,
//! which of them meet in time, and the pinned buffers in their way.

use crate::model::{Problem, align_up};

/// The buffers of one part (see [`super::components`]) in the form the search reads fastest.
///
/// Time is cut into **sections**: the intervals between consecutive distinct start/end steps.
/// Each free buffer spans a run of sections `[first_section, end_section)`; two buffers meet in
/// time exactly when their runs intersect.
#[derive(Clone, Debug)]
pub(crate) struct Subproblem {
    /// Global index of each free (unpinned) buffer, ascending.
    pub(crate) global: Vec<usize>,
    /// Sizes of the free buffers.
    pub(crate) size: Vec<u64>,
    /// Alignments of the free buffers.
    pub(crate) alignment: Vec<u64>,
    /// Section runs `(first, end)` of the free buffers.
    pub(crate) sections: Vec<(u32, u32)>,
    /// Free buffers that meet buffer `i` in time (never `i` itself), ascending: `neighbours[i]`.
    pub(crate) neighbours: Neighbours,
    /// `(offset, top)` of the pinned buffers that meet buffer `i` in time, by offset.
    pub(crate) pins: Vec<Vec<(u64, u64)>>,
    /// The highest top of a pinned buffer of the part (0 if none).
    pub(crate) pin_top: u64,
    /// Number of sections.
    pub(crate) section_count: usize,
    /// Bytes of free buffers live in each section.
    pub(crate) section_load: Vec<u64>,
    /// Peak bytes live at one step, pinned buffers included, or more where alignment forces
    /// padding ([`crate::bounds::aligned_lower_bound`]): no plan of the part is lower.
    pub(crate) lower_bound: u64,
    /// Per free buffer: the most bytes live (free and pinned) in one of its sections.
    pub(crate) peak_load: Vec<u64>,
    /// Per free buffer: its lifetime in steps.
    pub(crate) span_steps: Vec<u64>,
}

/// Which free buffers meet which in time, every buffer's list in one vector (compressed sparse
/// rows): `list[first[i]..first[i + 1]]` are buffer `i`'s neighbours, ascending.
///
/// One vector of exactly the pairs' size, where a vector per buffer grew by doubling and cost
/// a header each: at 10^5 buffers each meeting 160 others, 64 MB instead of 87 MB.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Neighbours {
    first: Vec<usize>,
    list: Vec<u32>,
}

impl Neighbours {
    /// For the buffers spanning the section runs `sections`: two meet when their runs
    /// intersect. Found by a sweep over the runs by first section, twice (once to count each
    /// buffer's neighbours, once to write them), `O(n log n + E)` for `E` pairs.
    fn new(sections: &[(u32, u32)]) -> Self {
        let n = sections.len();
        let mut by_start: Vec<u32> = (0..n as u32).collect();
        by_start.sort_unstable_by_key(|&i| (sections[i as usize].0, i));
        let mut degree = vec![0usize; n];
        for_each_pair(sections, &by_start, |i, j| {
            degree[i] += 1;
            degree[j] += 1;
        });
        let mut first = Vec::with_capacity(n + 1);
        first.push(0);
        for d in &degree {
            first.push(first.last().copied().unwrap_or(0) + d);
        }
        drop(degree);
        let mut list = vec![0u32; first[n]];
        let mut next = first[..n].to_vec();
        for_each_pair(sections, &by_start, |i, j| {
            list[next[i]] = j as u32;
            next[i] += 1;
            list[next[j]] = i as u32;
            next[j] += 1;
        });
        for i in 0..n {
            list[first[i]..first[i + 1]].sort_unstable();
        }
        Self { first, list }
    }

    /// The number of (ordered) neighbour entries: twice the pairs.
    pub(crate) fn total(&self) -> usize {
        self.list.len()
    }
}

/// Calls `pair(i, j)` for every two buffers whose section runs intersect, once a pair: each
/// buffer `i` with those after it in `by_start` (the buffers by first section) that start
/// before `i` ends.
fn for_each_pair(sections: &[(u32, u32)], by_start: &[u32], mut pair: impl FnMut(usize, usize)) {
    for (k, &i) in by_start.iter().enumerate() {
        for &j in &by_start[k + 1..] {
            if sections[j as usize].0 >= sections[i as usize].1 {
                break;
            }
            pair(i as usize, j as usize);
        }
    }
}

impl std::ops::Index<usize> for Neighbours {
    type Output = [u32];

    fn index(&self, i: usize) -> &[u32] {
        &self.list[self.first[i]..self.first[i + 1]]
    }
}

impl Subproblem {
    /// Prepares the buffers `part` (global indices, ascending) of `problem`.
    ///
    /// # Runtime
    /// `O(n log n + E)` for `n` buffers meeting in `E` pairs.
    pub(crate) fn new(problem: &Problem, part: &[usize]) -> Self {
        let buffers = problem.buffers();
        let mut steps: Vec<u64> = part
            .iter()
            .flat_map(|&i| [buffers[i].lifetime.start, buffers[i].lifetime.end])
            .collect();
        steps.sort_unstable();
        steps.dedup();
        let section_of = |step: u64| steps.partition_point(|&s| s < step) as u32;
        let section_count = steps.len().saturating_sub(1);

        let global: Vec<usize> = part
            .iter()
            .copied()
            .filter(|&i| buffers[i].fixed_offset.is_none())
            .collect();
        let size: Vec<u64> = global.iter().map(|&i| buffers[i].size).collect();
        let alignment = global.iter().map(|&i| buffers[i].alignment).collect();
        let sections: Vec<(u32, u32)> = global
            .iter()
            .map(|&i| {
                let l = buffers[i].lifetime;
                (section_of(l.start), section_of(l.end))
            })
            .collect();

        let neighbours = Neighbours::new(&sections);

        let pinned: Vec<usize> = part
            .iter()
            .copied()
            .filter(|&i| buffers[i].fixed_offset.is_some())
            .collect();
        let pins = global
            .iter()
            .map(|&i| {
                let mut list: Vec<(u64, u64)> = pinned
                    .iter()
                    .filter(|&&p| buffers[p].lifetime.overlaps(&buffers[i].lifetime))
                    .map(|&p| {
                        let offset = buffers[p].fixed_offset.unwrap_or(0);
                        (offset, offset + buffers[p].size)
                    })
                    .collect();
                list.sort_unstable();
                list
            })
            .collect();
        let pin_top = pinned
            .iter()
            .map(|&p| buffers[p].fixed_offset.unwrap_or(0) + buffers[p].size)
            .max()
            .unwrap_or(0);

        let mut section_load = vec![0u64; section_count];
        let mut all_load = vec![0u64; section_count];
        for &i in part {
            let l = buffers[i].lifetime;
            for s in section_of(l.start)..section_of(l.end) {
                all_load[s as usize] += buffers[i].size;
                if buffers[i].fixed_offset.is_none() {
                    section_load[s as usize] += buffers[i].size;
                }
            }
        }
        let lower_bound =
            all_load
                .iter()
                .copied()
                .max()
                .unwrap_or(0)
                .max(crate::bounds::aligned_peak(
                    part.iter().map(|&i| &buffers[i]),
                ));
        let peak_load = sections
            .iter()
            .map(|&(first, end)| {
                all_load[first as usize..end as usize]
                    .iter()
                    .copied()
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let span_steps = global.iter().map(|&i| buffers[i].lifetime.len()).collect();
        Self {
            peak_load,
            span_steps,
            global,
            size,
            alignment,
            sections,
            neighbours,
            pins,
            pin_top,
            section_count,
            section_load,
            lower_bound,
        }
    }

    /// Number of free buffers.
    pub(crate) fn len(&self) -> usize {
        self.global.len()
    }

    /// The lowest offset of buffer `i` at or above `floor`, aligned and clear of the pins.
    #[cfg(test)]
    pub(crate) fn lowest_offset(&self, i: usize, floor: u64) -> u64 {
        self.lowest_offset_counted(i, floor).0
    }

    /// [`Self::lowest_offset`], and how many pins it looked at.
    pub(crate) fn lowest_offset_counted(&self, i: usize, floor: u64) -> (u64, u64) {
        let alignment = self.alignment[i];
        let mut offset = align_up(floor, alignment);
        let mut looked = 0;
        for &(pin, top) in &self.pins[i] {
            looked += 1;
            if top <= offset {
                continue;
            }
            if pin >= offset + self.size[i] {
                break;
            }
            offset = align_up(top, alignment);
        }
        (offset, looked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Buffer;

    #[test]
    fn sections_neighbours_and_pins() {
        let p = Problem::new(vec![
            Buffer::new("a", 4, 0, 2),
            Buffer::new("pin", 2, 1, 3).with_fixed_offset(3),
            Buffer::new("b", 3, 1, 5).with_alignment(2),
            Buffer::new("c", 1, 2, 5),
        ])
        .unwrap();
        let sub = Subproblem::new(&p, &[0, 1, 2, 3]);
        assert_eq!(sub.global, vec![0, 2, 3]);
        // Steps 0,1,2,3,5: sections [0,1) [1,2) [2,3) [3,5).
        assert_eq!(sub.sections, vec![(0, 2), (1, 4), (2, 4)]);
        let neighbours: Vec<&[u32]> = (0..3).map(|i| &sub.neighbours[i]).collect();
        assert_eq!(neighbours, vec![&[1][..], &[0, 2][..], &[1][..]]);
        assert_eq!(sub.neighbours.total(), 4);
        assert_eq!(sub.section_load, vec![4, 7, 4, 4]);
        assert_eq!(sub.lower_bound, 9);
        assert_eq!(sub.pin_top, 5);
        // b (3 bytes, aligned to 2) cannot start at 0..=4 without touching the pin at [3,5).
        assert_eq!(sub.lowest_offset(1, 0), 0);
        assert_eq!(sub.lowest_offset(1, 1), 6);
        assert_eq!(sub.lowest_offset(2, 3), 5);
    }
}
