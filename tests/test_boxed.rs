//! `memplan::boxed` allocates a generated arena zeroed on the heap without building it on the
//! stack: a 32 MiB arena in a test thread (2 MiB of stack) would overflow it through
//! `Box::new(Arena::new())` in a debug build. Needs the facade's `alloc` feature, which the
//! workspace turns on through `memplan-runner`; without it this file has no tests.
#![cfg(feature = "alloc")]
// The generated `unsafe impl Zeroable` does not trip a user's `forbid(unsafe_code)`.
#![forbid(unsafe_code)]

memplan::memplan!("boxed/large.toml");

/// The boxed arena is the full size, zeroed, and its views reach every byte of both tensors.
#[test]
fn a_large_arena_is_allocated_zeroed_on_the_heap() {
    let mut arena: Box<large::Arena> = memplan::boxed();
    assert_eq!(core::mem::size_of_val(&*arena), large::ARENA_SIZE);
    assert_eq!(large::ARENA_SIZE, 32 << 20);
    assert_eq!(
        core::ptr::from_ref(&*arena) as usize % large::ARENA_ALIGN,
        0,
        "aligned as the arena type says"
    );
    let input = arena.input();
    assert!(input.iter().all(|&x| x == 0.0), "zeroed");
    input
        .iter_mut()
        .enumerate()
        .for_each(|(i, x)| *x = i as f32);
    let v = arena.op_copy();
    v.output.copy_from_slice(v.input);
    assert_eq!(arena.output()[4_194_303], 4_194_303.0);
}
