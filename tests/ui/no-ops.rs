// a model without ops
memplan::memplan!("no-ops.toml");

fn main() {
    let mut arena = net::Arena::new();
    let _ = arena.hidden();
    let _ = net::ARENA_SIZE;
}
