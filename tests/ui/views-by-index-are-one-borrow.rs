// `views(k)` borrows the arena mutably like `op_<name>()`: two ops' views cannot be held at
// once, and a view cannot outlive the borrow
memplan::memplan!("views-by-index-are-one-borrow.toml");

fn main() {
    let mut arena = net::Arena::new();
    let mut first = arena.views(0).unwrap();
    let mut second = arena.views(1).unwrap();
    let x = first.input::<f32>(0).unwrap();
    let y = second.output::<f32>(1).unwrap();
    y[0] = x[0];
}
