// an arena in `.init_array` would be run by the loader before `main`: a section the loader or
// the code depends on is refused, with the pool's `link_section` located
memplan::memplan!("link-section-init-array.toml");

fn main() {}
