// `.text.*` holds code: an arena there would make code writable
memplan::memplan!("link-section-text-subsection.toml");

fn main() {}
