// a pinned offset must be a multiple of the tensor's alignment
memplan::memplan!("pinned-offset-misaligned.toml");

fn main() {}
