//! Runs every network the build generated on its reference input and compares the output with
//! ONNX Runtime's (absolute 1e-4 plus relative 1e-3 per element), printing one line per network:
//! `<name>: match | max abs diff D | arena A bytes | lower bound L bytes`. Exits non-zero on a
//! mismatch. Each network is called through its typed `run`, as an application would.

// The generated networks compile without a warning too (issue 36: one whose nodes have no
// attributes, such as `awkward_names`, warned of an unused import).
#![deny(warnings)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use memplan::StaticArena;

memplan::include_network!("default_cnn");
memplan::include_network!("default_cnn_copies");
memplan::include_network!("default_cnn_io_in_arena");
memplan::include_network!("default_cnn_pools");
memplan::include_network!("awkward_names");
#[cfg(has_squeezenet1_1)]
memplan::include_network!("squeezenet1_1");
#[cfg(has_mobilenet_v3_small)]
memplan::include_network!("mobilenet_v3_small");
#[cfg(has_mobilenet_v2)]
memplan::include_network!("mobilenet_v2");
#[cfg(has_bert_mini)]
memplan::include_network!("bert_mini");
#[cfg(has_kws_ref_model_float32)]
memplan::include_network!("kws_ref_model_float32");

/// An element type of an input file: raw little-endian values.
trait Element: Sized + Copy + Default {
    const SIZE: usize;
    fn from_le(bytes: &[u8]) -> Self;
}

impl Element for f32 {
    const SIZE: usize = 4;
    fn from_le(b: &[u8]) -> Self {
        f32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
}

impl Element for i64 {
    const SIZE: usize = 8;
    fn from_le(b: &[u8]) -> Self {
        i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
    }
}

fn read<T: Element>(path: &Path) -> Vec<T> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    bytes.chunks_exact(T::SIZE).map(T::from_le).collect()
}

/// Compares `output` with the reference in `path`; prints the line and returns whether it matched.
fn report(name: &str, output: &[f32], path: &Path, arena: usize, bound: usize) -> bool {
    let want: Vec<f32> = read(path);
    let mut worst = 0.0f32;
    let mut ok = want.len() == output.len();
    for (&x, &r) in output.iter().zip(&want) {
        let diff = (x - r).abs();
        worst = worst.max(diff);
        ok &= diff <= 1e-4 + 1e-3 * r.abs();
    }
    println!(
        "{name}: {} | max abs diff {worst:.3e} | arena {arena} bytes | lower bound {bound} bytes",
        if ok { "match" } else { "MISMATCH" }
    );
    ok
}

/// Runs network `$net` (one input, one output) on `$dir/$file.input.bin`.
macro_rules! check {
    ($net:ident, $dir:expr, $file:literal, $input:ident: $t:ty, $output:ident) => {{
        static ARENA: StaticArena<$net::Arena> = StaticArena::new($net::Arena::new());
        let arena = ARENA.take().expect("taken once");
        let input: Vec<$t> = read(&$dir.join(concat!($file, ".input.bin")));
        let input: &[$t; $net::len::$input] = input.as_slice().try_into().expect("input size");
        let mut output = vec![0.0f32; $net::len::$output];
        let out: &mut [f32; $net::len::$output] = output.as_mut_slice().try_into().unwrap();
        $net::run(arena, input, out).expect("the network runs");
        report(
            stringify!($net),
            &output,
            &$dir.join(concat!($file, ".output.bin")),
            $net::ARENA_SIZE,
            $net::LOWER_BOUND,
        )
    }};
}

fn main() -> ExitCode {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let models = root.join("../../memplan-runner/models");
    #[allow(unused_variables)]
    let shared = root.join("../../../shared/bench");
    let mut ok = check!(default_cnn, models, "default", input: f32, probs);
    ok &= check!(default_cnn_copies, models, "default", input: f32, probs);
    ok &= check!(awkward_names, root.join("models"), "awkward_names", arena: f32, outputs);
    ok &= check!(default_cnn_io_in_arena, models, "default", input: f32, probs);
    {
        // Two pools: `take()` hands out both arenas at once, `run` takes them all.
        let mut arenas = default_cnn_pools::take().expect("taken once");
        let input: Vec<f32> = read(&models.join("default.input.bin"));
        let input: &[f32; default_cnn_pools::len::input] = input.as_slice().try_into().unwrap();
        let mut output = [0.0f32; default_cnn_pools::len::probs];
        default_cnn_pools::run(&mut arenas, input, &mut output).expect("the network runs");
        ok &= report(
            "default_cnn_pools",
            &output,
            &models.join("default.output.bin"),
            default_cnn_pools::sram::ARENA_SIZE + default_cnn_pools::psram::ARENA_SIZE,
            default_cnn_pools::sram::LOWER_BOUND,
        );
    }
    #[cfg(has_squeezenet1_1)]
    {
        ok &= check!(squeezenet1_1, shared.join("runnable"), "squeezenet1_1", input: f32, logits);
    }
    #[cfg(has_mobilenet_v3_small)]
    {
        ok &= check!(mobilenet_v3_small, shared.join("runnable"), "mobilenet_v3_small", input: f32, logits);
    }
    #[cfg(has_mobilenet_v2)]
    {
        ok &= check!(mobilenet_v2, shared.join("runnable"), "mobilenet_v2", input: f32, logits);
    }
    #[cfg(has_bert_mini)]
    {
        ok &= check!(bert_mini, shared.join("runnable"), "bert_mini", input_ids: i64, last_hidden_state);
    }
    #[cfg(has_kws_ref_model_float32)]
    {
        ok &= check!(kws_ref_model_float32, shared.join("tinyml"), "kws_ref_model_float32", input_1: f32, identity);
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
