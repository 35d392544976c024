//! `take()` of a model with several pools is all or nothing (issue 12, item 9): when one pool's
//! `static` was already taken, it returns `None` and consumes none of the others.

#[allow(missing_docs, unreachable_pub)]
mod pools {
    include!("../memplan-core/tests/golden/pools/expected.rs");
}

use memplan::StaticArena;
use pools::pools as m;

/// The memory of pool `sram` (the model's `link_section`): the application's to declare and place;
/// here in ordinary memory.
static SRAM: m::sram::Memory = m::sram::Memory::zeroed();

#[test]
fn take_consumes_nothing_when_one_pool_is_already_taken() {
    let sram = m::sram::ARENA
        .take(&SRAM)
        .expect("the sram static, taken alone");
    assert!(m::take(&SRAM).is_none(), "one pool is out, so take() fails");
    assert!(
        !m::dram::ARENA.is_taken(),
        "the failed take() consumed dram"
    );
    assert!(m::sram::ARENA.is_taken(), "sram is still the caller's");

    assert!(m::sram::ARENA.put_back(sram).is_ok());

    // A pool placed in memory of its own hands out one of its memories at a time, and takes
    // back only the one that is out.
    static OTHER: memplan::Memory<m::sram::Arena> = memplan::Memory::zeroed();
    let other = m::sram::ARENA
        .take(&OTHER)
        .expect("a free pool hands out a memory");
    assert!(m::sram::ARENA.take(&SRAM).is_none(), "one memory at a time");
    let stranger: &'static mut m::sram::Arena = Box::leak(Box::new(m::sram::Arena::new()));
    assert!(
        m::sram::ARENA.put_back(stranger).is_err(),
        "not the memory out"
    );
    assert!(m::sram::ARENA.put_back(other).is_ok());
    let arenas = m::take(&SRAM).expect("every pool is free again");
    assert!(m::sram::ARENA.is_taken() && m::dram::ARENA.is_taken());
    assert_eq!(core::mem::size_of_val(&*arenas.dram), m::dram::ARENA_SIZE);
    assert!(m::take(&SRAM).is_none(), "handed out once");
}

#[test]
fn put_back_refuses_another_arenas_value() {
    static A: StaticArena<[u8; 4]> = StaticArena::new([0; 4]);
    static B: StaticArena<[u8; 4]> = StaticArena::new([0; 4]);
    let a = A.take().expect("first take");
    let a = B.put_back(a).expect_err("not B's value");
    assert!(A.is_taken() && !B.is_taken());
    assert!(A.put_back(a).is_ok());
    assert!(!A.is_taken());
    assert!(A.take().is_some());
    // Zero-sized values cannot be told apart by address: never taken back.
    static Z: StaticArena<()> = StaticArena::new(());
    let z = Z.take().expect("first take");
    assert!(Z.put_back(z).is_err());
    assert!(Z.is_taken());
}

/// A pool's `Memory` is bytes the compiler does not build (issue 19, item 4): the first `take`
/// zeroes them; given back and taken again, they keep what was written; after another memory of
/// the pool was out, they are zeroed again (the flag remembers only the last one).
#[test]
fn memories_are_zeroed_when_first_handed_out() {
    // A model of its own, so the other tests' takes do not interleave with these.
    memplan::memplan!("zeroed/pool_memory.toml");
    static A: m2::sram::Memory = m2::sram::Memory::zeroed();
    static B: m2::sram::Memory = m2::sram::Memory::zeroed();

    let arenas = m2::take(&A).expect("first take");
    assert!(arenas.sram.hidden().iter().all(|&x| x == 0.0));
    assert!(arenas.dram.out().iter().all(|&x| x == 0.0));
    arenas.sram.hidden()[3] = 1.5;
    arenas.dram.out()[1] = 2.5;
    assert!(m2::sram::ARENA.put_back(arenas.sram).is_ok());
    assert!(m2::dram::ARENA.put_back(arenas.dram).is_ok());

    let arenas = m2::take(&A).expect("given back");
    assert_eq!(
        arenas.sram.hidden()[3],
        1.5,
        "the same memory keeps its bytes"
    );
    assert_eq!(
        arenas.dram.out()[1],
        2.5,
        "the generated memory keeps its bytes"
    );
    assert!(m2::sram::ARENA.put_back(arenas.sram).is_ok());

    let b = m2::sram::ARENA
        .take(&B)
        .expect("another memory of the pool");
    assert!(
        b.hidden().iter().all(|&x| x == 0.0),
        "zeroed when first out"
    );
    b.hidden()[0] = 4.0;
    assert!(m2::sram::ARENA.put_back(b).is_ok());
    let a = m2::sram::ARENA.take(&A).expect("the first memory again");
    assert!(
        a.hidden().iter().all(|&x| x == 0.0),
        "another memory was out since: zeroed again"
    );
}
