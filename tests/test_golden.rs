//! The golden files of `memplan-core/tests/golden` compile against this crate, and their plans
//! and views are what they claim.

#[allow(missing_docs, unreachable_pub)]
mod tiny {
    include!("../memplan-core/tests/golden/tiny/expected.rs");
}
#[allow(missing_docs, unreachable_pub)]
mod dtypes {
    include!("../memplan-core/tests/golden/dtypes/expected.rs");
}
#[allow(missing_docs, unreachable_pub)]
mod residual {
    include!("../memplan-core/tests/golden/residual/expected.rs");
}

use memplan::{Placement, check_plan};

/// Every golden plan validates, fits its arena, and is no smaller than its lower bound.
#[test]
fn golden_plans_validate() {
    let plans: [(&[Placement], usize, usize); 3] = [
        (
            tiny::tiny::TENSORS,
            tiny::tiny::ARENA_SIZE,
            tiny::tiny::LOWER_BOUND,
        ),
        (
            dtypes::dtypes::TENSORS,
            dtypes::dtypes::ARENA_SIZE,
            dtypes::dtypes::LOWER_BOUND,
        ),
        (
            residual::residual::TENSORS,
            residual::residual::ARENA_SIZE,
            residual::residual::LOWER_BOUND,
        ),
    ];
    for (tensors, arena, bound) in plans {
        assert_eq!(check_plan(tensors, arena), Ok(()));
        assert!(arena >= bound);
    }
}

/// Writing through every accessor lands at its planned offset, with the planned length, and the
/// arena type has exactly the planned size and alignment.
#[test]
fn accessors_point_at_their_planned_bytes() {
    use dtypes::dtypes as d;
    let mut arena = d::Arena::new();
    assert_eq!(core::mem::size_of::<d::Arena>(), d::ARENA_SIZE);
    assert_eq!(core::mem::align_of::<d::Arena>(), d::ARENA_ALIGN);
    assert_eq!(d::ARENA_ALIGN, 64);
    let base = core::ptr::from_ref(&arena) as usize;
    let at = |ptr: *const u8| ptr as usize - base;
    assert_eq!(at(arena.a_f32().as_ptr().cast()), d::offset::a_f32);
    assert_eq!(arena.a_f32().len(), 3);
    assert_eq!(at(arena.b_f64().as_ptr().cast()), d::offset::b_f64);
    assert_eq!(arena.c_f16().len(), 5);
    assert_eq!(arena.m_bool().len(), 9);
    assert_eq!(arena.work().len(), 100);
    assert_eq!(d::offset::work % 64, 0);
    for (p, expected) in d::TENSORS.iter().zip([
        d::offset::a_f32,
        d::offset::b_f64,
        d::offset::c_f16,
        d::offset::d_bf16,
    ]) {
        assert_eq!(p.offset, expected, "{}", p.name);
    }
    // Every view starts at a multiple of its element's alignment.
    assert_eq!(at(arena.k_i64().as_ptr().cast()) % 8, 0);
}

/// An op's views are the tensors' own bytes: what the op writes, the next op reads.
#[test]
fn op_views_alias_the_accessors() {
    use residual::residual as r;
    let mut arena = r::Arena::new();
    arena.x().fill(1.5);
    {
        let v = arena.op_conv1();
        assert_eq!(v.x.len(), 16 * 8 * 8);
        assert!(v.x.iter().all(|&e| e == 1.5));
        v.c1.fill(2.0);
        v.im2col.fill(7);
    }
    assert!(arena.c1().iter().all(|&e| e == 2.0));
    {
        let v = arena.op_relu1();
        v.r1.copy_from_slice(v.c1);
    }
    {
        let v = arena.op_conv2();
        v.c2.copy_from_slice(v.r1);
    }
    {
        let v = arena.op_add();
        for ((s, c), x) in v.sum.iter_mut().zip(v.c2.iter()).zip(v.x.iter()) {
            *s = c + x;
        }
    }
    {
        let v = arena.op_relu2();
        v.y.copy_from_slice(v.sum);
    }
    assert!(arena.y().iter().all(|&e| e == 3.5));
}
