// a tensor declared twice
memplan::memplan!("duplicate-tensor.toml");

fn main() {}
