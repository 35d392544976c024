//! Models at the edges of what the schema allows still generate code that compiles: ops that
//! touch no tensor (no view fields), an op reading only a weight.

memplan::memplan!("edge/noop.toml");

#[test]
fn ops_without_tensors_compile_and_borrow_the_arena() {
    let mut arena = with_noop::Arena::new();
    let _fence: with_noop::op::fence<'_> = arena.op_fence();
    let _weight_only = arena.op_reads_a_weight_only();
    let copy = arena.op_copy();
    copy.y.copy_from_slice(copy.x);
    assert_eq!(with_noop::OPS.len(), 3);
    assert!(with_noop::OPS[0].cuts.is_empty());
    assert_eq!(
        with_noop::OPS[1].inputs,
        &[memplan::Operand::Weight(0), memplan::Operand::Absent]
    );
    let views = arena.views(0).unwrap();
    assert!(views.is_empty());
}
