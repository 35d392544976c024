// a tensor named with a keyword
memplan::memplan!("keyword-tensor-name.toml");

fn main() {
    let mut arena = net::Arena::new();
    let _ = arena.op_relu();
    let _ = net::ARENA_SIZE;
}
