//! Prints the plan; the workspace's test checks this binary does not contain memplan-core.
fn main() {
    let mut arena = memplan_client::kws::Arena::new();
    let label = memplan_client::pick(
        &mut arena,
        &[0.0, 1.0, 5.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    );
    println!(
        "kws: arena {} bytes, lower bound {}, {} tensors, label {label}",
        memplan_client::kws::ARENA_SIZE,
        memplan_client::kws::LOWER_BOUND,
        memplan_client::kws::TENSORS.len()
    );
}
