//! The plan generated for this crate's model validates, checked here from first principles.

use memplan_client::kws;

#[test]
fn no_two_live_tensors_share_bytes() {
    let tensors = kws::TENSORS;
    assert_eq!(tensors.len(), 11);
    for (i, a) in tensors.iter().enumerate() {
        for b in &tensors[i + 1..] {
            let live_together = a.start < b.end && b.start < a.end;
            let share_bytes = a.offset < b.offset + b.size && b.offset < a.offset + a.size;
            assert!(!(live_together && share_bytes), "{a:?} and {b:?} overlap");
        }
    }
}

#[test]
fn every_tensor_fits_and_the_arena_is_at_least_the_lower_bound() {
    for t in kws::TENSORS {
        assert!(t.size > 0 && t.start < t.end, "{t:?}");
        assert!(t.offset + t.size <= kws::ARENA_SIZE, "{t:?}");
        assert_eq!(t.offset % 32, 0, "{t:?} keeps the model's alignment");
    }
    assert!(kws::ARENA_SIZE >= kws::LOWER_BOUND);
    assert!(kws::ARENA_SIZE <= 48 * 1024);
    assert_eq!(core::mem::size_of::<kws::Arena>(), kws::ARENA_SIZE);
    assert_eq!(memplan::check_plan(kws::TENSORS, kws::ARENA_SIZE), Ok(()));
    // The lower bound is the most bytes live at one step, recomputed here.
    let steps = kws::TENSORS.iter().map(|t| t.end).max().unwrap();
    let peak = (0..steps)
        .map(|s| {
            kws::TENSORS
                .iter()
                .filter(|t| t.start <= s && s < t.end)
                .map(|t| t.size)
                .sum::<usize>()
        })
        .max()
        .unwrap();
    assert_eq!(peak, kws::LOWER_BOUND);
}

#[test]
fn views_work_in_the_arena() {
    let mut arena = kws::Arena::new();
    let label = memplan_client::pick(
        &mut arena,
        &[0.0, 1.0, 5.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    );
    assert_eq!(label, 2);
    assert_eq!(arena.label(), &[2]);
    assert_eq!(arena.workspace().len(), 2048);
    assert_eq!(arena.conv1_acc().len(), 64 * 20);
}
