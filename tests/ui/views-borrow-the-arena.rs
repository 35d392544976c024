// an op's views borrow the whole arena: no second mutable view while they live
memplan::memplan!("views-borrow-the-arena.toml");

fn main() {
    let mut arena = net::Arena::new();
    let views = arena.op_relu();
    let hidden = arena.hidden();
    views.hidden.copy_from_slice(hidden);
}
