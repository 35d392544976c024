// A pool with `link_section` has no generated `static` (issue 19, item 1): `take` needs the
// application's memory for it, so safe code cannot get a pool placed by the model file alone.
#![forbid(unsafe_code)]

memplan::memplan!("link-section-memory-is-a-take-parameter.toml");

fn main() {
    let _ = net::take();
}
