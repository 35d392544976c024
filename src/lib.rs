//! # memplan
//!
//! Compile-time memory planning for neural-network inference. See the README.
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
}

/// An arena in a `static`, handed out at most once as `&'static mut` (no `unsafe` in user code).
///
/// The generated code of a model with `[[pools]]` declares one per pool (placed in the pool's
/// `link_section` when it has one); you can declare your own too:
///
/// ```
/// static SCRATCH: memplan::StaticArena<[u8; 64]> = memplan::StaticArena::new([0; 64]);
/// let first = SCRATCH.take();
/// assert!(first.is_some());
/// assert!(SCRATCH.take().is_none()); // never a second `&mut`
/// ```
pub struct StaticArena<T> {
    taken: core::sync::atomic::AtomicBool,
    value: core::cell::UnsafeCell<T>,
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
            value: core::cell::UnsafeCell::new(value),
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
        // SAFETY: the swap above returned `false` exactly once for this static, so this is the
        // only `&mut` to the value ever made, and the value lives for `'static`.
        Some(unsafe { &mut *self.value.get() })
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
