#![doc = include_str!("../docs/user-guide.md")]
#![no_std]

/// Plans a model file at compile time: `memplan!("model.toml");` expands to
/// `pub mod <name> { ... }` with a statically sized `Arena`, its offset tables, a typed accessor
/// per tensor and an `op_<name>` method per op. The path is relative to the calling file.
#[cfg(feature = "macro")]
pub use memplan_macro::memplan;

/// Not public API: what generated code calls. Versioned with the macro (pinned exactly).
#[doc(hidden)]
pub mod __private {
    pub use bytemuck;

    /// A tensor's bytes as elements, shared. The generated code passes a slice at an offset
    /// that is a multiple of `T`'s alignment (the arena is aligned to every tensor's alignment)
    /// and a length that is a multiple of `size_of::<T>()`, so the cast never fails.
    #[inline]
    pub fn view<T: bytemuck::Pod>(bytes: &mut [u8]) -> &[T] {
        bytemuck::cast_slice(bytes)
    }

    /// A tensor's bytes as elements, mutable. Same invariant as [`view`].
    #[inline]
    pub fn view_mut<T: bytemuck::Pod>(bytes: &mut [u8]) -> &mut [T] {
        bytemuck::cast_slice_mut(bytes)
    }

    /// The `len` elements at byte `offset` of the arena, mutable. Same invariant as [`view`].
    #[inline]
    pub fn tensor_mut<T: bytemuck::Pod>(arena: &mut [u8], offset: usize, len: usize) -> &mut [T] {
        bytemuck::cast_slice_mut(&mut arena[offset..offset + len * core::mem::size_of::<T>()])
    }

    /// Cuts `N` disjoint pieces from `arena`, in offset order: piece `i` starts `cuts[i].0` bytes
    /// after the end of piece `i - 1` (after the start of the arena for the first) and is
    /// `cuts[i].1` bytes long. Safe code (`split_at_mut`); it panics only if the pieces run past
    /// the arena, which the generated code's constants rule out.
    #[inline]
    pub fn split<const N: usize>(arena: &mut [u8], cuts: [(usize, usize); N]) -> [&mut [u8]; N] {
        let mut rest = arena;
        core::array::from_fn(|i| {
            let (skip, size) = cuts[i];
            let (_, after) = core::mem::take(&mut rest).split_at_mut(skip);
            let (piece, after) = after.split_at_mut(size);
            rest = after;
            piece
        })
    }

    /// A [`Placement`](crate::Placement), in fewer tokens than the struct literal.
    pub const fn placement(
        name: &'static str,
        offset: usize,
        size: usize,
        start: usize,
        end: usize,
    ) -> crate::Placement {
        crate::Placement {
            name,
            offset,
            size,
            start,
            end,
        }
    }

    /// The bytes of a generated pool arena in a `static` of their own, reached only through the
    /// one [`crate::StaticArena`] made over it with [`crate::StaticArena::placed`].
    pub struct Placed<T>(pub(crate) core::cell::UnsafeCell<T>);

    // SAFETY: `Placed` has no accessor of its own; its value is reached only through the one
    // `StaticArena` made over it, whose `take` hands out a single `&mut` (see there).
    unsafe impl<T: Send> Sync for Placed<T> {}

    impl<T> Placed<T> {
        /// Wraps `value`; `const`, for `static`s.
        pub const fn new(value: T) -> Self {
            Self(core::cell::UnsafeCell::new(value))
        }
    }
}

/// An arena in a `static`, handed out at most once as `&'static mut` (no `unsafe` in user code).
///
/// The generated code of a model with `[[pools]]` declares one per pool (its bytes placed in the
/// pool's `link_section` when it has one); you can declare your own too:
///
/// ```
/// static SCRATCH: memplan::StaticArena<[u8; 64]> = memplan::StaticArena::new([0; 64]);
/// let first = SCRATCH.take();
/// assert!(first.is_some());
/// assert!(SCRATCH.take().is_none()); // never a second `&mut`
/// ```
pub struct StaticArena<T: 'static> {
    taken: core::sync::atomic::AtomicBool,
    slot: Slot<T>,
}

/// Where a [`StaticArena`]'s value is: inside it, or in a static of its own (in a linker section).
enum Slot<T: 'static> {
    Inline(core::cell::UnsafeCell<T>),
    Placed(&'static __private::Placed<T>),
}

// SAFETY: the value is only reached through `take`, which hands out one `&mut` for the whole
// program (the flag is set atomically before the reference is made), so sharing the `static`
// between threads shares no access to `T` beyond moving that one `&mut` (hence `T: Send`).
unsafe impl<T: Send> Sync for StaticArena<T> {}

impl<T> StaticArena<T> {
    /// Wraps `value`; `const`, for `static`s.
    pub const fn new(value: T) -> Self {
        Self {
            taken: core::sync::atomic::AtomicBool::new(false),
            slot: Slot::Inline(core::cell::UnsafeCell::new(value)),
        }
    }

    /// Not public API: an arena whose bytes live in `memory`, a `static` of their own (so a
    /// linker section holds only the bytes, and the flag stays in ordinary memory).
    ///
    /// # Safety
    /// No other `StaticArena` may be made over the same `memory`: generated code pairs each
    /// private `Placed` static with exactly one `StaticArena`.
    #[doc(hidden)]
    pub const unsafe fn placed(memory: &'static __private::Placed<T>) -> Self {
        Self {
            taken: core::sync::atomic::AtomicBool::new(false),
            slot: Slot::Placed(memory),
        }
    }

    /// The value, mutably, the first time; `None` every later time.
    #[cfg(target_has_atomic = "8")]
    #[allow(clippy::mut_from_ref)] // the flag makes this the only `&mut` ever handed out
    pub fn take(&'static self) -> Option<&'static mut T> {
        use core::sync::atomic::Ordering;
        if self.taken.swap(true, Ordering::AcqRel) {
            return None;
        }
        let cell = match &self.slot {
            Slot::Inline(cell) => cell,
            Slot::Placed(placed) => &placed.0,
        };
        // SAFETY: the swap above returned `false` exactly once for this static, so this is the
        // only `&mut` to the value ever made (a `Placed` value belongs to this one arena, see
        // `placed`), and the value lives for `'static`.
        Some(unsafe { &mut *cell.get() })
    }

    /// Whether [`StaticArena::take`] has handed the value out.
    pub fn is_taken(&self) -> bool {
        self.taken.load(core::sync::atomic::Ordering::Acquire)
    }
}

/// Where one tensor lives in a generated arena: its bytes and the steps during which it is live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Placement {
    /// The tensor's name in the model file.
    pub name: &'static str,
    /// First byte in the arena.
    pub offset: usize,
    /// Bytes.
    pub size: usize,
    /// First step at which the tensor is live.
    pub start: usize,
    /// First step at which it is no longer live (`[start, end)`).
    pub end: usize,
}

impl Placement {
    /// Whether the two tensors are live at a common step (lifetimes are half-open).
    pub const fn live_together(&self, other: &Placement) -> bool {
        self.start < other.end && other.start < self.end
    }

    /// Whether the two tensors share a byte.
    pub const fn shares_bytes(&self, other: &Placement) -> bool {
        self.offset < other.offset + other.size && other.offset < self.offset + self.size
    }
}

/// What is wrong with a plan, as found by [`check_plan`]. Indices refer to the placements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanError {
    /// Two tensors live at the same step share bytes.
    Overlap(usize, usize),
    /// A tensor ends past the arena.
    OutOfArena(usize),
    /// A tensor of zero bytes or with an empty lifetime.
    Empty(usize),
}

/// Checks a generated plan (`TENSORS` and `ARENA_SIZE` of a `memplan!` module): every tensor is
/// non-empty and fits in the arena, and no two tensors live at the same step share bytes.
/// `O(n^2)` and allocation-free, for tests and start-up checks.
///
/// ```
/// use memplan::{Placement, PlanError, check_plan};
/// let a = Placement { name: "a", offset: 0, size: 8, start: 0, end: 2 };
/// let b = Placement { name: "b", offset: 0, size: 8, start: 2, end: 3 };
/// assert_eq!(check_plan(&[a, b], 8), Ok(()));
/// let c = Placement { name: "c", offset: 4, size: 8, start: 1, end: 3 };
/// assert_eq!(check_plan(&[a, c], 16), Err(PlanError::Overlap(0, 1)));
/// ```
pub const fn check_plan(tensors: &[Placement], arena_size: usize) -> Result<(), PlanError> {
    let mut i = 0;
    while i < tensors.len() {
        let t = &tensors[i];
        if t.size == 0 || t.start >= t.end {
            return Err(PlanError::Empty(i));
        }
        if t.offset > arena_size || t.size > arena_size - t.offset {
            return Err(PlanError::OutOfArena(i));
        }
        let mut j = i + 1;
        while j < tensors.len() {
            if t.live_together(&tensors[j]) && t.shares_bytes(&tensors[j]) {
                return Err(PlanError::Overlap(i, j));
            }
            j += 1;
        }
        i += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::__private::{split, tensor_mut, view, view_mut};

    #[test]
    fn split_cuts_disjoint_pieces_in_offset_order() {
        let mut arena = [0u8; 32];
        for (i, byte) in arena.iter_mut().enumerate() {
            *byte = i as u8;
        }
        let [a, b, c] = split(&mut arena, [(2, 4), (0, 8), (6, 2)]);
        assert_eq!(a, &[2, 3, 4, 5]);
        assert_eq!(b, &[6, 7, 8, 9, 10, 11, 12, 13]);
        assert_eq!(c, &[20, 21]);
        let [] = split(&mut arena, []);
    }

    #[test]
    #[should_panic]
    fn split_never_hands_out_bytes_past_the_arena() {
        let mut arena = [0u8; 8];
        let _ = split(&mut arena, [(4, 8)]);
    }

    #[repr(C, align(16))]
    struct Aligned([u8; 32]);

    #[test]
    fn views_cast_aligned_bytes_to_elements() {
        let mut arena = Aligned([0; 32]);
        tensor_mut::<f32>(&mut arena.0, 16, 4).copy_from_slice(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(
            tensor_mut::<f32>(&mut arena.0, 16, 4),
            &[1.0, 2.0, 3.0, 4.0]
        );
        assert_eq!(view::<u32>(&mut arena.0[16..20]), &[1.0f32.to_bits()]);
        view_mut::<u16>(&mut arena.0[0..4]).copy_from_slice(&[1, 2]);
        assert_eq!(arena.0[..2], 1u16.to_ne_bytes());
        assert_eq!(arena.0[2..4], 2u16.to_ne_bytes());
    }
}
