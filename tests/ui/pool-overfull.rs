// a fast pool whose bound tensors need more than its size, with nothing allowed to spill; the
// pools' items still exist, so using them adds no second error
memplan::memplan!("pool-overfull.toml");

fn main() {
    let mut sram = net::SramArena::new();
    let mut dram = net::DramArena::new();
    let _ = sram.x();
    let mut arenas = net::Arenas::new(&mut sram, &mut dram);
    let v = arenas.op_dense();
    let _ = (v.x, v.hidden, net::sram::ARENA_SIZE, net::len::hidden, net::take());
}
