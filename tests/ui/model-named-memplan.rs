// a model named like a crate the generated code uses (`memplan`, `core`, `std`, ...) would make
// its paths ambiguous: refused at the name
memplan::memplan!("model-named-memplan.toml");

fn main() {}
