// an op's inputs are shared views: the op cannot write them
memplan::memplan!("views-borrow-the-arena.toml");

fn main() {
    let mut arena = net::Arena::new();
    let views = arena.op_relu();
    views.input[0] = 1.0;
}
