// an op cannot write over an input that a later op still reads; the app-owned output is still a
// parameter of the op view, so the call below adds no second error
memplan::memplan!("inplace-input-read-later.toml");

fn main() {
    let mut arena = net::Arena::new();
    let mut y = [0f32; net::len::y];
    let v = arena.op_add(&mut y);
    v.y.copy_from_slice(v.act);
}
