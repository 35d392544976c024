// a weight is a constant: an op may read it but not write it
memplan::memplan!("weight-as-output.toml");

fn main() {}
