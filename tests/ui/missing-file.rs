// a model file that does not exist
memplan::memplan!("does-not-exist.toml");

fn main() {}
