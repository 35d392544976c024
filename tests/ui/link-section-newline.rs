// a section name is a conservative charset: no whitespace, control characters or quotes
memplan::memplan!("link-section-newline.toml");

fn main() {}
