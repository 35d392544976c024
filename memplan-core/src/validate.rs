//! Checking a plan made by anyone: every rule, every violation.

use std::collections::BTreeMap;
use std::fmt;

use crate::model::{Plan, Problem};

/// One broken rule of a plan. Indices refer to [`Problem::buffers`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Violation {
    /// The plan gives no offset for this buffer.
    MissingOffset {
        /// The buffer.
        buffer: usize,
    },
    /// The offset is not a multiple of the buffer's alignment.
    Misaligned {
        /// The buffer.
        buffer: usize,
        /// Its offset in the plan.
        offset: u64,
        /// The alignment it needs.
        alignment: u64,
    },
    /// The buffer is pinned, but the plan moved it.
    MovedPin {
        /// The buffer.
        buffer: usize,
        /// Its offset in the plan.
        offset: u64,
        /// The offset it is pinned at.
        pinned: u64,
    },
    /// The buffer's last byte is past the 64-bit address space (`offset + size > 2^64 - 1`).
    PastAddressSpace {
        /// The buffer.
        buffer: usize,
        /// Its offset in the plan.
        offset: u64,
    },
    /// Two buffers live at a common step share bytes.
    Overlap {
        /// The first buffer (lower index).
        first: usize,
        /// The second buffer.
        second: usize,
    },
    /// The recorded arena size is not the highest `offset + size`.
    WrongArenaSize {
        /// The size the plan states.
        stated: u64,
        /// The highest `offset + size`.
        actual: u64,
    },
}

/// A violation with the problem at hand, to print buffer ids instead of indices.
pub struct DisplayViolation<'a> {
    violation: &'a Violation,
    problem: &'a Problem,
    offsets: &'a [Option<u64>],
}

impl Violation {
    /// Something that prints the violation with buffer ids, offsets and lifetimes.
    pub fn display<'a>(
        &'a self,
        problem: &'a Problem,
        offsets: &'a [Option<u64>],
    ) -> DisplayViolation<'a> {
        DisplayViolation {
            violation: self,
            problem,
            offsets,
        }
    }
}

impl fmt::Display for DisplayViolation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = |i: usize| &self.problem.buffers()[i];
        match *self.violation {
            Violation::MissingOffset { buffer } => {
                write!(f, "buffer `{}` has no offset", b(buffer).id)
            }
            Violation::Misaligned {
                buffer,
                offset,
                alignment,
            } => write!(
                f,
                "buffer `{}` is at offset {offset}, not a multiple of its alignment {alignment}",
                b(buffer).id
            ),
            Violation::MovedPin {
                buffer,
                offset,
                pinned,
            } => write!(
                f,
                "buffer `{}` is pinned at offset {pinned} but placed at {offset}",
                b(buffer).id
            ),
            Violation::PastAddressSpace { buffer, offset } => write!(
                f,
                "buffer `{}` at offset {offset} ends past the 64-bit address space",
                b(buffer).id
            ),
            Violation::Overlap { first, second } => {
                let describe = |i: usize| {
                    let buffer = b(i);
                    let offset = self.offsets[i].unwrap_or_default();
                    format!(
                        "`{}` (bytes [{offset}, {}), steps {})",
                        buffer.id,
                        u128::from(offset) + u128::from(buffer.size),
                        buffer.lifetime
                    )
                };
                write!(
                    f,
                    "{} and {} are live at the same step and overlap",
                    describe(first),
                    describe(second)
                )
            }
            Violation::WrongArenaSize { stated, actual } => write!(
                f,
                "the plan states an arena of {stated} bytes but its buffers end at {actual}"
            ),
        }
    }
}

/// Every violation of `plan` for `problem`, sorted; empty when the plan is valid.
///
/// # Runtime
/// `O(n log n + v)` for `n` buffers and `v` violations (more when many violations are live at once).
pub fn validate(problem: &Problem, plan: &Plan) -> Vec<Violation> {
    let offsets: Vec<Option<u64>> = (0..problem.len())
        .map(|i| plan.offsets.get(i).copied())
        .collect();
    let mut violations = validate_offsets(problem, &offsets);
    let actual = problem
        .buffers()
        .iter()
        .zip(&plan.offsets)
        .map(|(b, &o)| o.saturating_add(b.size))
        .max()
        .unwrap_or(0);
    if actual != plan.arena_size {
        violations.push(Violation::WrongArenaSize {
            stated: plan.arena_size,
            actual,
        });
    }
    violations
}

/// Every violation of a partial assignment of offsets (`None` = missing), sorted.
pub fn validate_offsets(problem: &Problem, offsets: &[Option<u64>]) -> Vec<Violation> {
    let mut violations = Vec::new();
    for (i, buffer) in problem.buffers().iter().enumerate() {
        let Some(offset) = offsets.get(i).copied().flatten() else {
            violations.push(Violation::MissingOffset { buffer: i });
            continue;
        };
        // Why: an unaligned tensor cannot be read as its element type on most targets.
        if offset % buffer.alignment != 0 {
            violations.push(Violation::Misaligned {
                buffer: i,
                offset,
                alignment: buffer.alignment,
            });
        }
        // Why: an arena's bytes are addressed with 64 bits; an end past that wraps to 0.
        if offset.checked_add(buffer.size).is_none() {
            violations.push(Violation::PastAddressSpace { buffer: i, offset });
        }
        // Why: a pinned buffer is shared with hardware or the application at a fixed address.
        if let Some(pinned) = buffer.fixed_offset
            && pinned != offset
        {
            violations.push(Violation::MovedPin {
                buffer: i,
                offset,
                pinned,
            });
        }
    }
    // Why: two live buffers sharing bytes would corrupt each other.
    collect_overlaps(problem, offsets, &mut violations);
    violations.sort();
    violations
}

/// Sweeps time; keeps the live buffers ordered by offset. While no two live buffers overlap, the
/// live intervals are disjoint, so a new buffer can only meet its immediate predecessor and the
/// successors that start below its end. Once overlaps are live, it scans all predecessors.
fn collect_overlaps(problem: &Problem, offsets: &[Option<u64>], out: &mut Vec<Violation>) {
    let buffers = problem.buffers();
    let placed: Vec<usize> = (0..buffers.len())
        .filter(|&i| offsets.get(i).copied().flatten().is_some())
        .collect();
    let offset = |i: usize| offsets[i].unwrap_or_default();
    // Exact, in 128 bits: an end past 2^64 must not saturate onto a buffer at the very top.
    let end = |i: usize| u128::from(offset(i)) + u128::from(buffers[i].size);

    // (step, tag): the tag is the buffer with the top bit set for a start, so ends sort before
    // starts at the same step, each kind by buffer. 16 bytes an event, not 24 as a tuple with a
    // flag: at 10^6 buffers, 32 MB.
    const START: u64 = 1 << 63;
    let mut events: Vec<(u64, u64)> = Vec::with_capacity(placed.len() * 2);
    for &i in &placed {
        events.push((buffers[i].lifetime.start, START | i as u64));
        events.push((buffers[i].lifetime.end, i as u64));
    }
    drop(placed);
    events.sort_unstable();

    let mut live: BTreeMap<(u64, usize), ()> = BTreeMap::new();
    // Who overlaps whom, made only once an overlap is found: a valid plan needs none of it.
    let mut partners: Vec<Vec<usize>> = Vec::new();
    let mut is_live = vec![false; buffers.len()];
    let mut live_overlaps = 0usize;
    let mut found = Vec::new();

    for (_, tag) in events {
        let (is_start, i) = (tag & START != 0, (tag & !START) as usize);
        if !is_start {
            live.remove(&(offset(i), i));
            is_live[i] = false;
            if let Some(mine) = partners.get(i) {
                live_overlaps -= mine.iter().filter(|&&j| is_live[j]).count();
            }
            continue;
        }
        found.clear();
        for (&(o, j), _) in live.range((offset(i), 0)..) {
            if u128::from(o) >= end(i) {
                break;
            }
            found.push(j);
        }
        for (&(_, j), _) in live.range(..(offset(i), 0)).rev() {
            if end(j) > u128::from(offset(i)) {
                found.push(j);
            } else if live_overlaps == 0 {
                break;
            }
        }
        if !found.is_empty() && partners.is_empty() {
            partners = vec![Vec::new(); buffers.len()];
        }
        for &j in &found {
            out.push(Violation::Overlap {
                first: i.min(j),
                second: i.max(j),
            });
            partners[i].push(j);
            partners[j].push(i);
            live_overlaps += 1;
        }
        live.insert((offset(i), i), ());
        is_live[i] = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Buffer;

    fn problem() -> Problem {
        Problem::new(vec![
            Buffer::new("a", 4, 0, 2),
            Buffer::new("b", 4, 1, 3),
            Buffer::new("c", 4, 2, 4).with_alignment(4),
            Buffer::new("d", 2, 0, 4).with_fixed_offset(8),
        ])
        .unwrap()
    }

    #[test]
    fn valid_plan_has_no_violations() {
        let p = problem();
        let plan = Plan::from_offsets(&p, vec![0, 4, 0, 8]);
        assert_eq!(validate(&p, &plan), vec![]);
    }

    #[test]
    fn reports_every_violation() {
        let p = problem();
        let plan = Plan {
            offsets: vec![0, 2, 1, 0],
            arena_size: 7,
        };
        let v = validate(&p, &plan);
        assert!(v.contains(&Violation::Misaligned {
            buffer: 2,
            offset: 1,
            alignment: 4
        }));
        assert!(v.contains(&Violation::MovedPin {
            buffer: 3,
            offset: 0,
            pinned: 8
        }));
        for (first, second) in [(0, 1), (1, 2), (0, 3), (2, 3)] {
            assert!(
                v.contains(&Violation::Overlap { first, second }),
                "missing overlap {first}-{second} in {v:?}"
            );
        }
        // b [2,6) and d [0,2) touch but share no byte; a and c are never live together.
        for (first, second) in [(1, 3), (0, 2)] {
            assert!(!v.contains(&Violation::Overlap { first, second }));
        }
        assert!(v.contains(&Violation::WrongArenaSize {
            stated: 7,
            actual: 6
        }));
    }

    #[test]
    fn reports_missing_offsets() {
        let p = problem();
        let v = validate_offsets(&p, &[Some(0), None, Some(4), Some(8)]);
        assert_eq!(v, vec![Violation::MissingOffset { buffer: 1 }]);
    }

    #[test]
    fn nested_overlaps_behind_a_gap_are_found() {
        // A big buffer under two small ones: the small ones are disjoint, both overlap the big one,
        // and a fourth sits above the first small one but inside the big one.
        let p = Problem::new(vec![
            Buffer::new("big", 100, 0, 10),
            Buffer::new("s1", 10, 0, 10),
            Buffer::new("s2", 10, 0, 10),
            Buffer::new("late", 5, 5, 10),
        ])
        .unwrap();
        let v = validate_offsets(&p, &[Some(0), Some(10), Some(40), Some(60)]);
        let overlaps: Vec<_> = v
            .iter()
            .filter(|v| matches!(v, Violation::Overlap { .. }))
            .collect();
        assert_eq!(overlaps.len(), 3, "{v:?}");
    }
}
