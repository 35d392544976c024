// an in-place op's input is not a second field of its views: the output's `&mut` view holds it
memplan::memplan!("inplace-input-is-not-a-second-field.toml");

fn main() {
    let mut arena = net::Arena::new();
    let views = arena.op_relu();
    let _ = views.conv;
}
