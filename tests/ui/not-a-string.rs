// the argument must be a string literal
memplan::memplan!(model.toml);

fn main() {}
