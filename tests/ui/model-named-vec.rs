// a model named like a name of Rust's prelude (`Vec`, `Option`, `u8`, ...) would hide it from the
// code around the call: refused at the name, and no stand-in module is declared, so the code's
// own `Vec` below is still the prelude's and the model's error is the only one (issue 36)
memplan::memplan!("model-named-vec.toml");

fn main() {
    let v: Vec<u8> = Vec::new();
    drop(v);
}
