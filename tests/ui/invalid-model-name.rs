// a model name that is not an identifier
memplan::memplan!("invalid-model-name.toml");

fn main() {}
