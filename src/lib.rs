#![doc = include_str!("../docs/user-guide.md")]
#![no_std]

/// Plans a model file at compile time: `memplan!("model.toml");` expands to
/// `pub mod <name> { ... }` with a statically sized `Arena`, its offset tables, a typed accessor
/// per tensor and an `op_<name>` method per op. The path is relative to the calling file.
#[cfg(feature = "macro")]
pub use memplan_macro::memplan;

#[cfg(feature = "alloc")]
extern crate alloc;

/// The operator kernels generated networks run (`memplan-kernels`, re-exported so a crate that
/// uses `memplan-build` needs only `memplan` in its `[dependencies]`).
#[cfg(feature = "kernels")]
pub use memplan_kernels as kernels;

/// Includes the network a build script generated with `memplan_build::Network::..
/// .name("net").generate()`: `memplan::include_network!("net");` is
/// `include!(concat!(env!("OUT_DIR"), "/net.rs"))`, the module `net` with its `Arena`, tables and
/// `run`.
#[macro_export]
macro_rules! include_network {
    ($name:literal) => {
        include!(concat!(env!("OUT_DIR"), "/", $name, ".rs"));
    };
}

/// A generated `Arena` (or any other zeroable value) allocated zeroed on the heap, without ever
/// being built on the stack: `let arena: Box<net::Arena> = memplan::boxed();`. A large arena in
/// `Box::new(Arena::new())` may overflow the stack in a debug build (the value is built on the
/// stack, then moved); this allocates the zeroed bytes directly. Needs the `alloc` feature.
#[cfg(feature = "alloc")]
pub fn boxed<T: bytemuck::Zeroable>() -> alloc::boxed::Box<T> {
    bytemuck::zeroed_box()
}

mod tables;
mod views;

pub use tables::{Attr, Cut, DType, OpInfo, Operand, TensorInfo, WeightInfo};
pub use views::Views;

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

    /// The views of one op by index: `cuts` out of the pools' bytes (see [`crate::Views`]).
    #[inline]
    pub fn views<'a, const P: usize, const N: usize>(
        pools: [&'a mut [u8]; P],
        cuts: &'static [crate::Cut],
    ) -> Option<crate::Views<'a, N>> {
        crate::Views::cut(pools, cuts)
    }

    /// `bytes` as `GAP` skipped bytes, `SIZE` bytes handed out, and the `REST` after them.
    ///
    /// With the constants known at compile time this is pure address arithmetic: no bounds
    /// check, no branch, no panic path, whatever the optimisation level. A mismatch of the sizes
    /// is a compile-time error, not a run-time one.
    #[inline(always)]
    pub fn cut<const GAP: usize, const SIZE: usize, const REST: usize, const N: usize>(
        bytes: &mut [u8; N],
    ) -> (&mut [u8; SIZE], &mut [u8; REST]) {
        let parts = Parts::<GAP, SIZE, REST>::of(bytes);
        (&mut parts.piece, &mut parts.rest)
    }

    /// A cut piece as shared elements. Its start is aligned for `T` (the arena is aligned to
    /// every tensor's alignment and offsets are multiples of it), and its size is a multiple of
    /// `size_of::<T>()`, checked at compile time; so the cast always succeeds, and the fallback
    /// (an empty slice, never a panic) is dead code that the optimiser removes.
    #[inline(always)]
    pub fn piece<T: bytemuck::Pod, const SIZE: usize>(bytes: &mut [u8; SIZE]) -> &[T] {
        piece_mut(bytes)
    }

    /// A cut piece as mutable elements. Same invariant as [`piece`].
    #[inline(always)]
    pub fn piece_mut<T: bytemuck::Pod, const SIZE: usize>(bytes: &mut [u8; SIZE]) -> &mut [T] {
        const {
            assert!(
                core::mem::size_of::<T>() != 0 && SIZE.is_multiple_of(core::mem::size_of::<T>()),
                "memplan: a view's bytes are not a whole number of elements (a bug in memplan)"
            );
        }
        bytemuck::try_cast_slice_mut(bytes.as_mut_slice()).unwrap_or_default()
    }

    /// `[u8; GAP + SIZE + REST]` in three named parts.
    #[repr(C)]
    struct Parts<const GAP: usize, const SIZE: usize, const REST: usize> {
        gap: [u8; GAP],
        piece: [u8; SIZE],
        rest: [u8; REST],
    }

    impl<const GAP: usize, const SIZE: usize, const REST: usize> Parts<GAP, SIZE, REST> {
        #[inline(always)]
        fn of<const N: usize>(bytes: &mut [u8; N]) -> &mut Self {
            const {
                assert!(
                    GAP + SIZE + REST == N && core::mem::size_of::<Self>() == N,
                    "memplan: a view's cut does not add up to its arena (a bug in memplan)"
                );
            }
            // SAFETY: `Self` is `repr(C)` with three `u8` arrays: alignment 1, no padding, size
            // `GAP + SIZE + REST`, which the assertion above makes `N` at compile time; every
            // bit pattern is valid for it, as for `[u8; N]`. So the cast reinterprets exactly
            // the same bytes, for the same lifetime, and the `&mut` stays unique.
            unsafe { &mut *core::ptr::from_mut(bytes).cast::<Self>() }
        }
    }

    /// A [`TensorInfo`](crate::TensorInfo), in fewer tokens than the struct literal.
    pub const fn tensor_info(
        name: &'static str,
        dtype: crate::DType,
        shape: &'static [usize],
        size: usize,
        pool: usize,
        offset: usize,
        external: bool,
    ) -> crate::TensorInfo {
        crate::TensorInfo {
            name,
            dtype,
            shape,
            size,
            pool,
            offset,
            external,
        }
    }

    /// A [`Cut`](crate::Cut); `absorbs` is `usize::MAX` for none.
    pub const fn view_cut(
        pool: usize,
        gap: usize,
        size: usize,
        tensor: usize,
        absorbs: usize,
    ) -> crate::Cut {
        crate::Cut {
            pool,
            gap,
            size,
            tensor,
            absorbs: if absorbs == usize::MAX {
                None
            } else {
                Some(absorbs)
            },
        }
    }

    /// An [`OpInfo`](crate::OpInfo); `kind` is `""` for none.
    #[allow(clippy::too_many_arguments)]
    pub const fn op_info(
        name: &'static str,
        kind: &'static str,
        step: usize,
        inputs: &'static [crate::Operand],
        outputs: &'static [usize],
        scratch: &'static [usize],
        inplace: &'static [(usize, usize)],
        attrs: &'static [(&'static str, crate::Attr)],
        cuts: &'static [crate::Cut],
    ) -> crate::OpInfo {
        crate::OpInfo {
            name,
            kind: if kind.is_empty() { None } else { Some(kind) },
            step,
            inputs,
            outputs,
            scratch,
            inplace,
            attrs,
            cuts,
        }
    }

    /// [`Operand::Tensor`](crate::Operand::Tensor).
    pub const fn tensor(index: usize) -> crate::Operand {
        crate::Operand::Tensor(index)
    }

    /// [`Operand::Weight`](crate::Operand::Weight).
    pub const fn weight(index: usize) -> crate::Operand {
        crate::Operand::Weight(index)
    }

    /// [`Operand::Absent`](crate::Operand::Absent).
    pub const ABSENT: crate::Operand = crate::Operand::Absent;

    pub use crate::DType::{
        Bf16 as BF16, Bool as BOOL, F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64,
    };

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
}

/// An arena in a `static`, handed out at most once as `&'static mut` (no `unsafe` in user code).
///
/// The flag and the value are side by side, and a zeroed value (`Arena::new()`) makes the whole
/// `static` zero bytes: the linker puts it in `.bss`, which start-up code zeroes, and the image
/// stores none of it. The generated code of a model with `[[pools]]` declares one per pool
/// without a `link_section` (a pool with one is the application's [`Memory`]); you can declare
/// your own too:
///
/// ```
/// static SCRATCH: memplan::StaticArena<[u8; 64]> = memplan::StaticArena::new([0; 64]);
/// let first = SCRATCH.take();
/// assert!(first.is_some());
/// assert!(SCRATCH.take().is_none()); // never a second `&mut`
/// ```
///
/// Do not put a `StaticArena` in a section that start-up code leaves uninitialised (`NOLOAD`):
/// its flag must start as `false`. Put a [`Memory`] there instead.
///
/// Its value is built by the compiler: `StaticArena::new(net::Arena::new())` for an arena of
/// `N` bytes makes `rustc` evaluate `N` zero bytes, moved a few times (measured with rustc 1.95:
/// 15 s and 6.4 GB for 1 GiB). For a large arena in a `static`, give the model one `[[pools]]`
/// entry: its generated `take()` hands out a [`Memory`], which the compiler does not build (1 GiB
/// in under a second); or allocate it with `memplan::boxed()` (feature `alloc`).
pub struct StaticArena<T: 'static> {
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

    /// Gives back the value [`StaticArena::take`] handed out, so that a later `take` hands it
    /// out again: `Err(value)` (nothing changes) when `value` is not this arena's, or has no
    /// bytes.
    ///
    /// Generated `take()` functions use it to be all-or-nothing over several pools.
    #[cfg(target_has_atomic = "8")]
    pub fn put_back(&'static self, value: &'static mut T) -> Result<(), &'static mut T> {
        use core::sync::atomic::Ordering;
        // Zero-sized values of different statics may share an address, so they are never
        // taken back: identity by address holds only for values with bytes.
        if core::mem::size_of::<T>() == 0 || !core::ptr::eq(value, self.value.get()) {
            return Err(value);
        }
        // The `&mut` handed out by `take` is the only reference to the value, and it is moved
        // in here and ends now, so clearing the flag lets `take` make a new one without ever
        // having two.
        self.taken.store(false, Ordering::Release);
        Ok(())
    }

    /// Whether [`StaticArena::take`] has handed the value out.
    pub fn is_taken(&self) -> bool {
        self.taken.load(core::sync::atomic::Ordering::Acquire)
    }
}

/// An arena's bytes alone, in a `static` of their own, which costs the compiler almost nothing:
/// the memory of a pool. The generated code declares one per pool (`<pool>::MEMORY`); for a pool
/// whose model names a `link_section`, such as an SRAM bank or DTCM, you declare the `static`
/// and place it, since placing memory in a section is `unsafe` (the section decides whether
/// writing is sound), then hand it to the model's `take`:
///
/// ```ignore
/// #[unsafe(link_section = ".sram.kws")]
/// static SRAM: kws::sram::Memory = kws::sram::Memory::zeroed(); // memplan::Memory<kws::sram::Arena>
/// let arenas = kws::take(&SRAM).unwrap();
/// ```
///
/// It holds no flag, and the compiler does not build its bytes: [`Memory::zeroed`] is
/// uninitialised memory as far as `rustc` is concerned (so a 1 GiB pool is not a 1 GiB value
/// evaluated at compile time, which took `rustc` minutes and gigabytes), zero bytes in the
/// image (`.bss`, or a `NOLOAD` section that start-up code leaves as it is), and the pool's
/// [`PlacedArena`] writes the zeros when it first hands the memory out. So the bytes a `take`
/// hands out are always zeroed the first time, whatever the section held at start.
#[repr(transparent)]
pub struct Memory<T>(core::cell::UnsafeCell<core::mem::MaybeUninit<T>>);

// SAFETY: `Memory` has no accessor of its own; its value is reached only through a
// `PlacedArena<T>`, which hands out a single `&mut` to it (see there), so sharing the `static`
// shares no access to `T` beyond moving that one `&mut` between threads (hence `T: Send`).
unsafe impl<T: Send> Sync for Memory<T> {}

impl<T: bytemuck::Zeroable> Memory<T> {
    /// The memory of one arena, zeroed when it is first handed out (a generated `Arena` is
    /// `Zeroable`); `const`, for `static`s, and free to compile whatever its size.
    pub const fn zeroed() -> Self {
        Self(core::cell::UnsafeCell::new(core::mem::MaybeUninit::uninit()))
    }
}

/// The hand-out flag of a pool whose bytes are a [`Memory`]: which memory is out, if any, and
/// which one was last handed out (its bytes are initialised). Null pointers at start, so it is
/// zero bytes (in `.bss`), apart from the memory it guards.
///
/// One is generated per pool (`<pool>::ARENA`); the model's `take` uses it with the pool's
/// memory (`<pool>::MEMORY`, or the application's for a pool with a `link_section`).
pub struct PlacedArena<T> {
    taken: core::sync::atomic::AtomicPtr<T>,
    /// The memory last handed out: its bytes are a valid `T` (zeroed, then written through the
    /// `&mut` handed out), so handing it out again keeps them.
    initialised: core::sync::atomic::AtomicPtr<T>,
}

impl<T: Send + bytemuck::Zeroable> PlacedArena<T> {
    /// Not public API: the flag of the one pool whose arena type is `T`.
    ///
    /// # Safety
    /// There is at most one `PlacedArena<T>` for each `T` in the program, and nothing else makes
    /// references into a `Memory<T>`: generated code makes one per pool, over the pool's own
    /// `Arena` type.
    #[doc(hidden)]
    pub const unsafe fn new() -> Self {
        Self {
            taken: core::sync::atomic::AtomicPtr::new(core::ptr::null_mut()),
            initialised: core::sync::atomic::AtomicPtr::new(core::ptr::null_mut()),
        }
    }

    /// The value of `memory`, mutably, if no memory of this pool is out; `None` otherwise.
    ///
    /// The first time a memory is handed out (and whenever the one handed out before was
    /// another), its bytes are zeroed here; given back and taken again, it keeps what was
    /// written.
    #[cfg(target_has_atomic = "ptr")]
    #[allow(clippy::mut_from_ref)] // the flag makes this the only `&mut` ever handed out
    pub fn take(&'static self, memory: &'static Memory<T>) -> Option<&'static mut T> {
        use core::sync::atomic::Ordering;
        let value: *mut T = memory.0.get().cast();
        self.taken
            .compare_exchange(
                core::ptr::null_mut(),
                value,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .ok()?;
        // The swap made this call the only one between a `take` and a `put_back`, so nothing
        // else reads or writes `initialised` or the memory until the `&mut` is given back.
        if self.initialised.load(Ordering::Relaxed) != value {
            // SAFETY: no reference into `memory` is live (every one is made here while
            // `taken` was null, and one given back through `put_back` has ended), and zero
            // bytes are a valid `T` (`T: Zeroable`).
            unsafe { value.write_bytes(0, 1) };
            self.initialised.store(value, Ordering::Relaxed);
        }
        // SAFETY: every `&mut` into a `Memory<T>` is made here, by the one `PlacedArena<T>`
        // (see `new`), while its pointer was null: so no other `&mut` into any `Memory<T>` is
        // live; its bytes are a valid `T` (zeroed above, or by the last `take` of this same
        // memory, and written only through valid `T`s since); it lives for `'static`.
        Some(unsafe { &mut *value })
    }

    /// Gives back the value [`PlacedArena::take`] handed out, so that a later `take` hands a
    /// memory out again: `Err(value)` (nothing changes) when `value` is not the one out, or has
    /// no bytes.
    #[cfg(target_has_atomic = "ptr")]
    pub fn put_back(&'static self, value: &'static mut T) -> Result<(), &'static mut T> {
        use core::sync::atomic::Ordering;
        // Zero-sized values of different statics may share an address: never taken back.
        let out = self.taken.load(Ordering::Acquire);
        if core::mem::size_of::<T>() == 0 || out.is_null() || !core::ptr::eq(value, out) {
            return Err(value);
        }
        // `value` is the `&mut` handed out for the memory at `out`, the only reference into it;
        // it is moved in here and ends now.
        self.taken.store(core::ptr::null_mut(), Ordering::Release);
        Ok(())
    }

    /// Whether [`PlacedArena::take`] has handed a memory out.
    pub fn is_taken(&self) -> bool {
        !self
            .taken
            .load(core::sync::atomic::Ordering::Acquire)
            .is_null()
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
    use super::__private::{cut, piece, piece_mut, tensor_mut, view, view_mut, views};
    use crate::Cut;

    /// The one `unsafe` cast of the crate's view cutting (`Parts::of`): run under Miri with
    /// `cargo +nightly miri test -p memplan --lib`.
    #[test]
    fn cut_hands_out_the_exact_bytes_and_the_rest() {
        let mut arena = [0u8; 32];
        for (i, byte) in arena.iter_mut().enumerate() {
            *byte = i as u8;
        }
        let (a, rest) = cut::<2, 4, 26, 32>(&mut arena);
        let (b, rest) = cut::<0, 8, 18, 26>(rest);
        let (c, rest) = cut::<6, 2, 10, 18>(rest);
        assert_eq!(a, &[2, 3, 4, 5]);
        assert_eq!(b, &[6, 7, 8, 9, 10, 11, 12, 13]);
        assert_eq!(c, &[20, 21]);
        assert_eq!(rest[0], 22);
        // Writing through every piece at once: they are disjoint.
        a.fill(100);
        b.fill(101);
        c.fill(102);
        rest.fill(103);
        assert_eq!(arena[0..2], [0, 1]);
        assert_eq!(arena[2..6], [100; 4]);
        assert_eq!(arena[20..22], [102; 2]);
        assert_eq!(arena[31], 103);
        let (empty, all) = cut::<0, 0, 32, 32>(&mut arena);
        assert!(empty.is_empty());
        assert_eq!(all.len(), 32);
    }

    #[test]
    fn pieces_are_typed_in_place() {
        let mut arena = Aligned([0; 32]);
        let (_, rest) = cut::<16, 8, 8, 32>(&mut arena.0);
        piece_mut::<f32, 8>(rest).copy_from_slice(&[1.0, 2.0]);
        let (floats, _) = cut::<24, 8, 0, 32>(&mut arena.0);
        assert_eq!(piece::<f32, 8>(floats), &[1.0, 2.0]);
    }

    #[test]
    fn views_by_index_are_disjoint_and_taken_once() {
        static CUTS: [Cut; 3] = [
            Cut {
                pool: 0,
                gap: 4,
                size: 4,
                tensor: 7,
                absorbs: None,
            },
            Cut {
                pool: 0,
                gap: 0,
                size: 8,
                tensor: 3,
                absorbs: Some(2),
            },
            Cut {
                pool: 1,
                gap: 2,
                size: 2,
                tensor: 5,
                absorbs: None,
            },
        ];
        let mut first = [0u8; 16];
        let mut second = [0u8; 4];
        let mut v = views::<2, 4>([&mut first[..], &mut second[..]], &CUTS).unwrap();
        assert_eq!(v.len(), 3);
        let a = v.take_bytes(7).unwrap();
        let b = v.take_bytes(2).unwrap(); // the in-place input: its output's bytes
        assert!(v.take_bytes(3).is_none());
        assert!(v.take_bytes(7).is_none());
        assert!(v.take_bytes(9).is_none());
        let c = v.take_bytes(5).unwrap();
        a.fill(1);
        b.fill(2);
        c.fill(3);
        assert_eq!(first, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2]);
        assert_eq!(second, [0, 0, 3, 3]);
        // A table that does not fit the arena, or more cuts than the capacity: `None`, no panic.
        let mut small = [0u8; 8];
        assert!(views::<1, 4>([&mut small[..]], &CUTS[..1]).is_some());
        assert!(views::<1, 4>([&mut small[..]], &CUTS[..2]).is_none());
        assert!(views::<2, 2>([&mut first[..], &mut second[..]], &CUTS).is_none());
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
