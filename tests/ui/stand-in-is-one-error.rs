// A model with a mistake (a missing comma) is its one error: the stand-in module has every name
// the code below uses (pools, aliases, `take`, views, `len`, `offset`, tables), and costs the
// compiler nothing whatever the model's size (issue 19, item 8).
memplan::memplan!("stand-in-is-one-error.toml");

#[unsafe(link_section = ".sram.kws")]
static SRAM: kws::sram::Memory = kws::sram::Memory::zeroed();

fn run(arenas: &mut kws::Arenas<'_>, features: &[f32; kws::len::features]) -> f32 {
    let v = arenas.op_fc1(features);
    v.hidden[0] = v.features[kws::offset::features];
    let mut scores = [0.0f32; kws::len::scores];
    let v = arenas.op_fc2(&mut scores);
    v.scores[0] + arenas.sram.hidden()[0]
}

fn main() {
    let mut arenas = kws::take(&SRAM).expect("taken once");
    let features = [0.5f32; kws::len::features];
    let _ = run(&mut arenas, &features);
    let _: &mut kws::SramArena = arenas.sram;
    let _ = kws::psram::ARENA.put_back(arenas.psram);
    let _ = kws::sram::ARENA_SIZE + kws::psram::TENSORS.len() + kws::sram::offset::hidden;
    let boxed: Box<kws::psram::Arena> = Box::new(kws::psram::Arena::new());
    drop(boxed);
    for op in kws::OPS {
        let _ = op.name;
    }
}
