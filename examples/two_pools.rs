//! Two memories, in-place ops, a pinned DMA buffer and app-owned input and output:
//! `cargo run --example two_pools`.
//!
//! The planner fills the 32 KiB SRAM pool first with the most byte-steps it can hold (here the
//! pinned DMA buffer, then the 32 KiB `hidden2 = act2` chain once that is dead) and spills the
//! rest to PSRAM; each pool is an arena of its own (`kws::SramArena`, `kws::PsramArena`), here
//! the SRAM `static` declared below in linker section `.sram.kws` and the generated PSRAM
//! `static`, both handed out by `kws::take`. `Relu` runs in place: its view has one `&mut`
//! field that holds its input on entry.
memplan::memplan!("models/two_pools.toml");

/// The SRAM pool's bytes, in the section the model names: placing memory in a section is
/// `unsafe` (the linker script decides what the section is), so it is written here, not generated.
#[unsafe(link_section = ".sram.kws")]
static SRAM: kws::sram::Memory = kws::sram::Memory::zeroed();

/// A fully connected layer with deterministic weights: `out[j] = sum_i in[i] * w(i, j)`.
fn dense(input: &[f32], output: &mut [f32]) {
    for (j, o) in output.iter_mut().enumerate() {
        *o = input
            .iter()
            .enumerate()
            .map(|(i, x)| x * (((i * 7 + j * 13) % 17) as f32 - 8.0) / 2048.0)
            .sum();
    }
}

fn relu_in_place(values: &mut [f32]) {
    for v in values {
        *v = v.max(0.0);
    }
}

fn main() {
    for (name, size, capacity, bound, tensors) in [
        (
            "sram",
            kws::sram::ARENA_SIZE,
            kws::sram::CAPACITY,
            kws::sram::LOWER_BOUND,
            kws::sram::TENSORS,
        ),
        (
            "psram",
            kws::psram::ARENA_SIZE,
            kws::psram::CAPACITY,
            kws::psram::LOWER_BOUND,
            kws::psram::TENSORS,
        ),
    ] {
        let limit = capacity.map_or(String::new(), |c| format!(" of {c}"));
        println!("pool {name}: {size} bytes{limit} (lower bound {bound})");
        for t in tensors {
            println!(
                "  {:>6} {:>6}  [{}, {})  {}",
                t.offset, t.size, t.start, t.end, t.name
            );
        }
        assert_eq!(memplan::check_plan(tensors, size), Ok(()));
    }

    let features: [f32; kws::len::features] =
        core::array::from_fn(|i| ((i % 10) as f32 - 4.5) / 10.0);
    let mut scores = [0f32; kws::len::scores];
    let mut arenas = kws::take(&SRAM).expect("the pools' memories, taken once");
    {
        let v = arenas.op_capture(&features);
        for (d, f) in v.dma.chunks_exact_mut(4).zip(v.features) {
            d.copy_from_slice(&f.to_le_bytes());
        }
    }
    {
        let v = arenas.op_fc1();
        let input: Vec<f32> = v
            .dma
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        dense(&input, v.hidden1);
    }
    relu_in_place(arenas.op_relu1().act1);
    {
        let v = arenas.op_fc2();
        dense(v.act1, v.hidden2);
    }
    relu_in_place(arenas.op_relu2().act2);
    {
        let v = arenas.op_fc3();
        dense(v.act2, v.logits);
    }
    {
        let v = arenas.op_softmax(&mut scores);
        let max = v.logits.iter().copied().fold(f32::MIN, f32::max);
        let sum: f32 = v.logits.iter().map(|l| (l - max).exp()).sum();
        for (s, l) in v.scores.iter_mut().zip(v.logits.iter()) {
            *s = (l - max).exp() / sum;
        }
    }
    let best = (0..scores.len())
        .max_by(|&a, &b| scores[a].total_cmp(&scores[b]))
        .unwrap_or(0);
    println!(
        "scores sum to {:.4}; keyword {best} ({:.3})",
        scores.iter().sum::<f32>(),
        scores[best]
    );
}
