//! `memplan::DType` (the facade, what generated code and interpreters use) and
//! `memplan_core::DType` (the planner's) are one table written twice, because the facade must
//! not depend on memplan-core; this checks that they say the same: the same dtypes, in the same
//! order, with the same names and sizes.

use memplan::DType;

/// Every facade dtype; the match makes this list fail to compile when a variant is added.
fn facade_dtypes() -> Vec<DType> {
    let all = [
        DType::F32,
        DType::F64,
        DType::F16,
        DType::Bf16,
        DType::I8,
        DType::U8,
        DType::I16,
        DType::U16,
        DType::I32,
        DType::U32,
        DType::I64,
        DType::U64,
        DType::Bool,
    ];
    for dtype in all {
        match dtype {
            DType::F32
            | DType::F64
            | DType::F16
            | DType::Bf16
            | DType::I8
            | DType::U8
            | DType::I16
            | DType::U16
            | DType::I32
            | DType::U32
            | DType::I64
            | DType::U64
            | DType::Bool => {}
        }
    }
    all.to_vec()
}

#[test]
fn the_facade_and_the_planner_have_the_same_dtypes() {
    let facade: Vec<(&str, u64)> = facade_dtypes()
        .into_iter()
        .map(|d| (d.name(), d.size() as u64))
        .collect();
    let core: Vec<(&str, u64)> = memplan_core::DType::ALL
        .into_iter()
        .map(|d| (d.name(), d.size()))
        .collect();
    assert_eq!(facade, core);
}
