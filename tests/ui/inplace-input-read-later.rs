// an op cannot write over an input that a later op still reads
memplan::memplan!("inplace-input-read-later.toml");

fn main() {}
