// TOML syntax error
memplan::memplan!("toml-syntax.toml");

fn main() {}
