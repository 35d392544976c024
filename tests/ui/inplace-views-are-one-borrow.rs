// an in-place op hands out one `&mut` view for its input and output (they are the same bytes):
// the input's accessor cannot be borrowed while that view lives
memplan::memplan!("inplace-views-are-one-borrow.toml");

fn main() {
    let mut arena = net::Arena::new();
    let views = arena.op_relu();
    let conv = arena.conv();
    views.act.copy_from_slice(conv);
}
