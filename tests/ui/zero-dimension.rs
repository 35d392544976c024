// a zero dimension
memplan::memplan!("zero-dimension.toml");

fn main() {
    let mut arena = net::Arena::new();
    let _ = arena.op_relu();
    let _ = arena.hidden();
    let _ = net::ARENA_SIZE;
}
