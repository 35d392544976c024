// a fast pool whose bound tensors need more than its size, with nothing allowed to spill
memplan::memplan!("pool-overfull.toml");

fn main() {}
