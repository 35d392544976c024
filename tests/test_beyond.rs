//! In-place ops, pinned and app-owned tensors, and several pools, through the generated code of
//! the golden models `inplace` and `pools` (in `memplan-core/tests/golden`).

#[allow(missing_docs, unreachable_pub)]
mod inplace {
    include!("../memplan-core/tests/golden/inplace/expected.rs");
}
#[allow(missing_docs, unreachable_pub)]
mod pools {
    include!("../memplan-core/tests/golden/pools/expected.rs");
}

use memplan::{Placement, check_plan};

fn base<T>(arena: &T) -> usize {
    core::ptr::from_ref(arena) as usize
}

/// The in-place chains share offsets, the plan still validates (an overwritten input ends where
/// its output begins), the pin is kept, and external tensors take no arena space.
#[test]
fn inplace_plan_validates_and_shares_memory() {
    use inplace::inplace as m;
    assert_eq!(check_plan(m::TENSORS, m::ARENA_SIZE), Ok(()));
    const { assert!(m::ARENA_SIZE >= m::LOWER_BOUND) };
    assert_eq!(m::offset::conv, m::offset::act);
    assert_eq!(m::offset::act, m::offset::flat);
    assert_eq!(m::offset::logits, m::offset::scaled);
    assert_eq!(m::offset::dma, 0, "pinned");
    let names: Vec<&str> = m::TENSORS.iter().map(|p| p.name).collect();
    assert!(!names.contains(&"image") && !names.contains(&"probs"));
    // Without sharing, conv + act would be live together: 8192 * 2 bytes.
    const { assert!(m::ARENA_SIZE < 2 * 8192) };
    let conv: &Placement = m::TENSORS.iter().find(|p| p.name == "conv").unwrap();
    let act: &Placement = m::TENSORS.iter().find(|p| p.name == "act").unwrap();
    assert_eq!(
        conv.end, act.start,
        "conv hands its bytes to act at the relu step"
    );
}

/// Running the model through the op views: an in-place op sees its input in its output view,
/// app-owned buffers come in as parameters, and the result lands in the caller's buffer.
#[test]
fn inplace_views_run_the_model() {
    use inplace::inplace as m;
    let mut arena = Box::new(m::Arena::new());
    let image = [7u8; m::len::image];
    let mut probs = [0f32; m::len::probs];
    {
        let v = arena.op_load(&image);
        v.dma.copy_from_slice(v.image);
    }
    {
        let v = arena.op_conv1();
        for (c, &d) in v.conv.iter_mut().zip(v.dma.iter().cycle()) {
            *c = f32::from(d) - 10.0; // -3.0 everywhere
        }
    }
    {
        let v = arena.op_relu();
        // One view: on entry it holds conv.
        assert!(v.act.iter().all(|&x| x == -3.0));
        for x in v.act.iter_mut() {
            *x = x.max(0.0) + 1.0;
        }
    }
    assert!(
        arena.conv().iter().all(|&x| x == 1.0),
        "conv's bytes are act's"
    );
    {
        let v = arena.op_flatten();
        assert_eq!(v.flat.len(), 2048);
        assert!(v.flat.iter().all(|&x| x == 1.0));
    }
    {
        let v = arena.op_dense();
        let sum: f32 = v.flat.iter().sum();
        for (j, l) in v.logits.iter_mut().enumerate() {
            *l = sum / 2048.0 + j as f32;
        }
    }
    {
        let v = arena.op_scale();
        for x in v.scaled.iter_mut() {
            *x *= 2.0;
        }
    }
    {
        let v = arena.op_softmax(&mut probs);
        v.probs.copy_from_slice(v.scaled);
    }
    let expected: Vec<f32> = (0..10).map(|j| 2.0 * (1.0 + j as f32)).collect();
    assert_eq!(probs.to_vec(), expected);
}

/// Each pool validates on its own, fits its limit, and the fast pool took what it could.
#[test]
fn two_pool_plan_validates_per_pool() {
    use pools::pools as m;
    assert_eq!(check_plan(m::sram::TENSORS, m::sram::ARENA_SIZE), Ok(()));
    assert_eq!(check_plan(m::dram::TENSORS, m::dram::ARENA_SIZE), Ok(()));
    assert!(m::sram::ARENA_SIZE <= m::sram::CAPACITY.unwrap());
    assert_eq!(m::sram::CAPACITY, Some(8192));
    assert_eq!(m::dram::CAPACITY, None);
    assert_eq!(core::mem::size_of::<m::SramArena>(), m::sram::ARENA_SIZE);
    assert_eq!(core::mem::size_of::<m::DramArena>(), m::dram::ARENA_SIZE);
    let in_pool = |tensors: &[Placement], name: &str| tensors.iter().any(|p| p.name == name);
    // `dma` is pinned in SRAM at 0; `big` (16 KiB) cannot fit in 8 KiB; `slow` is bound to DRAM.
    assert_eq!(m::sram::offset::dma, 0);
    assert!(in_pool(m::sram::TENSORS, "dma"));
    assert!(in_pool(m::dram::TENSORS, "big"));
    assert!(in_pool(m::dram::TENSORS, "slow"));
    // The small tensors fit in SRAM, so they are not spilled.
    assert!(in_pool(m::sram::TENSORS, "input"));
    assert!(in_pool(m::sram::TENSORS, "small"));
    assert_eq!(
        m::sram::TENSORS.len() + m::dram::TENSORS.len(),
        7,
        "every tensor in exactly one pool"
    );
}

/// Accessors point into their own pool's arena; op views reach across pools; the pool statics
/// are handed out once.
#[test]
fn two_pool_views_reach_across_pools() {
    use pools::pools as m;
    let mut sram = m::SramArena::new();
    let mut dram = Box::new(m::DramArena::new());
    let (sram_base, dram_base) = (base(&sram), base(&*dram));
    assert_eq!(
        sram.dma().as_ptr() as usize - sram_base,
        m::sram::offset::dma
    );
    assert_eq!(
        dram.big().as_ptr() as usize - dram_base,
        m::dram::offset::big
    );
    sram.input().fill(1.0);
    let mut arenas = m::Arenas::new(&mut sram, &mut dram);
    {
        let v = arenas.op_expand();
        v.big.fill(v.input[0] * -2.0);
        v.dma.fill(3);
    }
    {
        let v = arenas.op_relu();
        assert!(v.act.iter().all(|&x| x == -2.0), "act is big's memory");
        v.act.iter_mut().for_each(|x| *x = x.max(0.0) + 0.5);
    }
    {
        let v = arenas.op_reduce();
        let total: f32 = v.act.iter().sum::<f32>() + f32::from(v.dma[0]);
        v.small.fill(total);
    }
    assert!(sram.small().iter().all(|&x| x == 4096.0 * 0.5 + 3.0));

    static SRAM: m::sram::Memory = m::sram::Memory::zeroed();
    let first = m::take(&SRAM);
    assert!(first.is_some());
    assert!(m::take(&SRAM).is_none(), "the statics are handed out once");
    let statics = first.unwrap();
    assert_eq!(core::mem::size_of_val(&*statics.sram), m::sram::ARENA_SIZE);
}

/// The same two-pool model through the `memplan!` macro itself: it compiles, each pool validates,
/// and the expansion is the golden one.
mod via_macro {
    memplan::memplan!("../memplan-core/tests/golden/pools/model.toml");
}

#[test]
fn two_pool_model_compiles_through_the_macro() {
    use via_macro::pools as m;
    assert_eq!(check_plan(m::sram::TENSORS, m::sram::ARENA_SIZE), Ok(()));
    assert_eq!(check_plan(m::dram::TENSORS, m::dram::ARENA_SIZE), Ok(()));
    assert_eq!(m::sram::TENSORS, pools::pools::sram::TENSORS);
    assert_eq!(m::dram::TENSORS, pools::pools::dram::TENSORS);
    static SRAM: m::sram::Memory = m::sram::Memory::zeroed();
    let arenas = m::take(&SRAM).expect("the macro's statics are its own");
    assert_eq!(core::mem::size_of_val(&*arenas.dram), m::dram::ARENA_SIZE);
    assert!(m::sram::ARENA.is_taken() && m::dram::ARENA.is_taken());
}
