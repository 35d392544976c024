// the only pool is limited and a tensor fits nowhere
memplan::memplan!("pool-nothing-fits.toml");

fn main() {}
