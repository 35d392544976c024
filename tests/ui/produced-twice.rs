// two ops write one tensor
memplan::memplan!("produced-twice.toml");

fn main() {
    let mut arena = net::Arena::new();
    let _ = arena.op_relu();
    let _ = arena.hidden();
    let _ = net::ARENA_SIZE;
}
