//! The planning problem: buffers as rectangles (bytes x lifetime) and plans as offsets.

use std::fmt;

/// A half-open interval of execution steps, `[start, end)`, during which a buffer is live.
///
/// Two lifetimes that merely touch (`a.end == b.start`) do not overlap: the first buffer is dead
/// by the time the second one is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Lifetime {
    /// First step at which the buffer is live.
    pub start: u64,
    /// First step at which the buffer is no longer live.
    pub end: u64,
}

impl Lifetime {
    /// A lifetime `[start, end)`. Callers keep `start < end`; [`Problem::new`] rejects empty ones.
    pub const fn new(start: u64, end: u64) -> Self {
        Self { start, end }
    }

    /// Whether the two buffers are live at a common step.
    pub const fn overlaps(&self, other: &Lifetime) -> bool {
        self.start < other.end && other.start < self.end
    }

    /// Number of steps in the lifetime.
    pub const fn len(&self) -> u64 {
        self.end - self.start
    }

    /// Whether the lifetime contains no step.
    pub const fn is_empty(&self) -> bool {
        self.end <= self.start
    }
}

impl fmt::Display for Lifetime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}, {})", self.start, self.end)
    }
}

/// One rectangle of the patent's claim 1: `size` bytes along the address axis, `lifetime` along time.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Buffer {
    /// The buffer's name (a tensor name, or a CSV id).
    pub id: String,
    /// Bytes the buffer occupies. Never zero.
    pub size: u64,
    /// Steps during which the buffer is live.
    pub lifetime: Lifetime,
    /// Required alignment of the offset, a power of two. `1` means none.
    pub alignment: u64,
    /// A pinned offset the planner must use as is (for example a DMA buffer at 0), if any.
    pub fixed_offset: Option<u64>,
}

impl Buffer {
    /// A buffer with no alignment requirement and no pinned offset.
    pub fn new(id: impl Into<String>, size: u64, start: u64, end: u64) -> Self {
        Self {
            id: id.into(),
            size,
            lifetime: Lifetime::new(start, end),
            alignment: 1,
            fixed_offset: None,
        }
    }

    /// The same buffer with its offset aligned to `alignment` bytes.
    pub fn with_alignment(mut self, alignment: u64) -> Self {
        self.alignment = alignment;
        self
    }

    /// The same buffer pinned at `offset`.
    pub fn with_fixed_offset(mut self, offset: u64) -> Self {
        self.fixed_offset = Some(offset);
        self
    }

    /// The most bytes the buffer can take in a stack: its size plus the padding that aligning
    /// its offset can add below it (`alignment - 1`). Saturates instead of overflowing.
    pub fn padded_size(&self) -> u64 {
        self.size.saturating_add(self.alignment.saturating_sub(1))
    }

    /// `size * lifetime length`: the area of the rectangle, in byte-steps.
    pub fn area(&self) -> u128 {
        u128::from(self.size) * u128::from(self.lifetime.len())
    }
}

/// Why a list of buffers is not a well-formed problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProblemError {
    /// A buffer of zero bytes.
    ZeroSize {
        /// The buffer.
        id: String,
    },
    /// `end <= start`.
    EmptyLifetime {
        /// The buffer.
        id: String,
        /// Its lifetime.
        lifetime: Lifetime,
    },
    /// Alignment not a power of two.
    BadAlignment {
        /// The buffer.
        id: String,
        /// The alignment given.
        alignment: u64,
    },
    /// A pinned offset that breaks the buffer's own alignment.
    MisalignedPin {
        /// The buffer.
        id: String,
        /// The pinned offset.
        offset: u64,
        /// Its alignment.
        alignment: u64,
    },
    /// `offset + size`, or the sizes with their alignment padding, reach past 2^62 bytes.
    Overflow {
        /// The buffer.
        id: String,
    },
    /// Two buffers share an id.
    DuplicateId {
        /// The id.
        id: String,
    },
}

impl fmt::Display for ProblemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ZeroSize { id } => {
                write!(
                    f,
                    "buffer `{id}` has size 0; every buffer needs at least one byte"
                )
            }
            Self::EmptyLifetime { id, lifetime } => write!(
                f,
                "buffer `{id}` has an empty lifetime {lifetime}; `end` must be greater than `start`"
            ),
            Self::BadAlignment { id, alignment } => write!(
                f,
                "buffer `{id}` has alignment {alignment}, which is not a power of two"
            ),
            Self::MisalignedPin {
                id,
                offset,
                alignment,
            } => write!(
                f,
                "buffer `{id}` is pinned at offset {offset}, which is not a multiple of its \
                 alignment {alignment}"
            ),
            Self::Overflow { id } => write!(
                f,
                "buffer `{id}` is too large: with the sizes before it (each plus the padding its \
                 alignment can need), more than 2^62 bytes, so addresses could overflow 64 bits"
            ),
            Self::DuplicateId { id } => {
                write!(f, "two buffers are named `{id}`; ids must be unique")
            }
        }
    }
}

impl std::error::Error for ProblemError {}

/// A planning problem: the buffers to pack. Their order is the order of [`Plan::offsets`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Problem {
    buffers: Vec<Buffer>,
}

/// Headroom kept free above every buffer so that sums of offsets and sizes never overflow.
pub(crate) const MAX_ADDRESS: u64 = u64::MAX / 4;

impl Problem {
    /// Checks the buffers (non-zero sizes, non-empty lifetimes, power-of-two alignments, unique ids,
    /// no 64-bit overflow) and makes a problem of them.
    pub fn new(buffers: Vec<Buffer>) -> Result<Self, ProblemError> {
        // A hash set: which id is reported does not depend on its order (the first buffer whose
        // id came before), and it is 5x faster than a B-tree for 10^6 ids.
        let mut seen = std::collections::HashSet::with_capacity(buffers.len());
        // All sizes together, each with the most padding its alignment can need, stay below
        // the headroom: any stack of the buffers, in any order and on top of any pin, then ends
        // below 2 * 2^62, so sums of offsets, sizes and alignments never overflow a u64.
        let mut total: u64 = 0;
        for buffer in &buffers {
            check_buffer(buffer)?;
            total = total.saturating_add(buffer.padded_size());
            if total > MAX_ADDRESS {
                return Err(ProblemError::Overflow {
                    id: buffer.id.clone(),
                });
            }
            check_pin(buffer)?;
            if !seen.insert(buffer.id.as_str()) {
                return Err(ProblemError::DuplicateId {
                    id: buffer.id.clone(),
                });
            }
        }
        Ok(Self { buffers })
    }

    /// The buffers, in input order.
    pub fn buffers(&self) -> &[Buffer] {
        &self.buffers
    }

    /// Number of buffers.
    pub fn len(&self) -> usize {
        self.buffers.len()
    }

    /// Whether there is nothing to plan.
    pub fn is_empty(&self) -> bool {
        self.buffers.is_empty()
    }

    /// Sum of all sizes: the arena a plan with no reuse at all needs (ignoring alignment padding).
    pub fn total_size(&self) -> u64 {
        self.buffers.iter().map(|b| b.size).sum()
    }

    /// Whether any buffer is pinned.
    pub fn has_fixed_offsets(&self) -> bool {
        self.buffers.iter().any(|b| b.fixed_offset.is_some())
    }
}

/// The first checks of [`Problem::new`] on each buffer, which concern it alone: a non-zero
/// size, a non-empty lifetime, a power-of-two alignment (its pin is checked after the sizes'
/// total, by `check_pin`).
pub(crate) fn check_buffer(buffer: &Buffer) -> Result<(), ProblemError> {
    let id = || buffer.id.clone();
    if buffer.size == 0 {
        return Err(ProblemError::ZeroSize { id: id() });
    }
    if buffer.lifetime.is_empty() {
        return Err(ProblemError::EmptyLifetime {
            id: id(),
            lifetime: buffer.lifetime,
        });
    }
    if !buffer.alignment.is_power_of_two() {
        return Err(ProblemError::BadAlignment {
            id: id(),
            alignment: buffer.alignment,
        });
    }
    Ok(())
}

/// The check of [`Problem::new`] on a pinned buffer: its pin is aligned and the buffer ends
/// below the headroom.
fn check_pin(buffer: &Buffer) -> Result<(), ProblemError> {
    let id = || buffer.id.clone();
    if let Some(offset) = buffer.fixed_offset {
        if offset % buffer.alignment != 0 {
            return Err(ProblemError::MisalignedPin {
                id: id(),
                offset,
                alignment: buffer.alignment,
            });
        }
        if offset > MAX_ADDRESS - buffer.size {
            return Err(ProblemError::Overflow { id: id() });
        }
    }
    Ok(())
}

/// A solution: one offset per buffer (same order as [`Problem::buffers`]) and the arena size.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Plan {
    /// `offsets[i]` is the first byte of buffer `i` in the arena.
    pub offsets: Vec<u64>,
    /// The highest `offset + size` over all buffers: the bytes the arena needs.
    pub arena_size: u64,
}

impl Plan {
    /// A plan from offsets, computing the arena size. `offsets` has one entry per buffer.
    pub fn from_offsets(problem: &Problem, offsets: Vec<u64>) -> Self {
        debug_assert_eq!(offsets.len(), problem.len());
        let arena_size = problem
            .buffers()
            .iter()
            .zip(&offsets)
            .map(|(b, &o)| o.saturating_add(b.size))
            .max()
            .unwrap_or(0);
        Self {
            offsets,
            arena_size,
        }
    }
}

/// Rounds `value` up to a multiple of `alignment` (a power of two).
///
/// # Panics
/// When the result does not fit in a `u64`, in every profile (it never wraps to a low offset).
/// Offsets and sizes of a [`Problem`] stay below 2^63, so the solvers never get there; use
/// [`checked_align_up`] for values from elsewhere.
pub const fn align_up(value: u64, alignment: u64) -> u64 {
    match checked_align_up(value, alignment) {
        Some(aligned) => aligned,
        None => panic!("align_up overflows u64"),
    }
}

/// Rounds `value` up to a multiple of `alignment` (a power of two), or `None` when the result
/// does not fit in a `u64`.
pub const fn checked_align_up(value: u64, alignment: u64) -> Option<u64> {
    match value.checked_add(alignment - 1) {
        Some(sum) => Some(sum & !(alignment - 1)),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touching_lifetimes_do_not_overlap() {
        assert!(!Lifetime::new(0, 3).overlaps(&Lifetime::new(3, 5)));
        assert!(Lifetime::new(0, 4).overlaps(&Lifetime::new(3, 5)));
        assert!(Lifetime::new(3, 5).overlaps(&Lifetime::new(0, 4)));
    }

    #[test]
    fn problem_rejects_malformed_buffers() {
        let bad = [
            Buffer::new("a", 0, 0, 1),
            Buffer::new("a", 1, 2, 2),
            Buffer::new("a", 1, 0, 1).with_alignment(3),
            Buffer::new("a", 8, 0, 1)
                .with_alignment(4)
                .with_fixed_offset(2),
            Buffer::new("a", u64::MAX, 0, 1),
        ];
        for buffer in bad {
            assert!(Problem::new(vec![buffer.clone()]).is_err(), "{buffer:?}");
        }
        let dup = vec![Buffer::new("a", 1, 0, 1), Buffer::new("a", 1, 0, 1)];
        assert_eq!(
            Problem::new(dup),
            Err(ProblemError::DuplicateId { id: "a".into() })
        );
    }

    #[test]
    fn align_up_rounds_to_power_of_two() {
        assert_eq!(align_up(0, 16), 0);
        assert_eq!(align_up(1, 16), 16);
        assert_eq!(align_up(16, 16), 16);
        assert_eq!(align_up(17, 1), 17);
        assert_eq!(checked_align_up(u64::MAX - 2, 4), None);
        assert_eq!(checked_align_up(u64::MAX - 3, 1), Some(u64::MAX - 3));
        assert_eq!(checked_align_up(1 << 62, 1 << 61), Some(1 << 62));
    }

    #[test]
    fn padding_counts_towards_the_overflow_limit() {
        // Sizes alone are tiny, but a stack of two buffers aligned to 2^61 may need 2^62 bytes.
        let huge = |i: usize| Buffer::new(format!("b{i}"), 1, 0, 1).with_alignment(1 << 61);
        assert!(Problem::new((0..1).map(huge).collect()).is_ok());
        assert_eq!(
            Problem::new((0..2).map(huge).collect()),
            Err(ProblemError::Overflow { id: "b1".into() })
        );
    }
}
