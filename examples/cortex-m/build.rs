//! Puts `memory.x` where the linker finds it (cortex-m-rt's `link.x` includes it), and generates
//! the network the firmware runs with `memplan-build`, exactly as a user's crate would:
//!
//! - `MEMPLAN_FIRMWARE_MODEL` (an absolute path to an ONNX or TFLite file with its
//!   `<stem>.input.bin` beside it; float32 or int8 input and output), else the MLPerf Tiny keyword spotter `../shared/bench/tinyml/
//!   kws_ref_model_float32.onnx` when the shared data is there, else the runner's small CNN
//!   (`memplan-runner/models/default.onnx`);
//! - `MEMPLAN_FIRMWARE_RAM_BUDGET` (bytes; unset or empty: no budget): the most bytes the
//!   network's arena may take ([`memplan_build::Network::ram_budget`]); the build meets it by
//!   running convolutions in place, or fails saying the least arena the network can run in;
//! - `OUT_DIR/net.rs` (the module `net`), `OUT_DIR/input.bin` (the reference input, embedded in
//!   flash) and `OUT_DIR/io.rs` (the input and output lengths, and `run` on them).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() -> Result<(), memplan_build::Error> {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("memory.x"), include_bytes!("memory.x")).expect("OUT_DIR is writable");
    println!("cargo::rustc-link-search={}", out.display());
    println!("cargo::rerun-if-changed=memory.x");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=MEMPLAN_FIRMWARE_MODEL");
    println!("cargo::rerun-if-env-changed=MEMPLAN_FIRMWARE_RAM_BUDGET");

    let kws = Path::new("../../../shared/bench/tinyml/kws_ref_model_float32.onnx");
    let model = match std::env::var_os("MEMPLAN_FIRMWARE_MODEL") {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ if kws.is_file() => kws.to_path_buf(),
        _ => PathBuf::from("../../memplan-runner/models/default.onnx"),
    };
    let mut network = memplan_build::Network::from_file(&model).name("net");
    match std::env::var("MEMPLAN_FIRMWARE_RAM_BUDGET") {
        Ok(bytes) if !bytes.trim().is_empty() => {
            let bytes = bytes.trim().parse::<u64>().unwrap_or_else(|e| {
                panic!("MEMPLAN_FIRMWARE_RAM_BUDGET is `{bytes}`, not a number of bytes ({e})")
            });
            network = network.ram_budget(bytes);
        }
        _ => {}
    }
    let generated = network.generate()?;

    // The reference input beside the model: `<stem>.input.bin`.
    let stem = model
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("model");
    let input = model.with_file_name(format!("{stem}.input.bin"));
    println!("cargo::rerun-if-changed={}", input.display());
    let bytes = std::fs::read(&input).unwrap_or_else(|e| panic!("{}: {e}", input.display()));
    std::fs::write(out.join("input.bin"), bytes).expect("OUT_DIR is writable");

    let ([first_in], [first_out]) = (&generated.inputs[..], &generated.outputs[..]) else {
        panic!("the firmware runs networks with one input and one output");
    };
    for io in [first_in, first_out] {
        assert!(
            io.rust_type == "f32" || io.rust_type == "i8",
            "the firmware runs networks with a float32 or int8 input and output"
        );
    }
    let (input_type, output_type) = (first_in.rust_type, first_out.rust_type);
    let zero = if output_type == "f32" { "0.0" } else { "0" };
    let mut io = String::new();
    let _ = writeln!(
        io,
        "/// The input's element type.\npub type InputElem = {input_type};\n\
         /// The output's element type.\npub type OutputElem = {output_type};\n\
         /// A zero output element.\npub const OUTPUT_ZERO: OutputElem = {zero};\n\
         /// The reference input, decoded at compile time: a `static` in flash (`.rodata`), read in\n\
         /// place like the weights.\npub static INPUT: [InputElem; INPUT_LEN] = decode_{input_type}(INPUT_BYTES);\n\
         /// The model the firmware runs.\npub const MODEL: &str = {:?};\n\
         /// Elements of the input.\npub const INPUT_LEN: usize = net::len::{};\n\
         /// Elements of the output.\npub const OUTPUT_LEN: usize = net::len::{};\n\
         /// Bytes of the network's constants (the weights, in flash).\npub const WEIGHT_BYTES: usize = {};\n\
         /// The network's `run` on its one input and output.\n\
         pub fn run(arena: &mut net::Arena, input: &[InputElem; INPUT_LEN], output: &mut [OutputElem; OUTPUT_LEN]) -> Result<(), memplan::kernels::program::RunError> {{\n    net::run(arena, input, output)\n}}",
        model
            .file_name()
            .and_then(|s| s.to_str())
            .unwrap_or("model"),
        first_in.name,
        first_out.name,
        generated.weight_bytes,
    );
    std::fs::write(out.join("io.rs"), io).expect("OUT_DIR is writable");
    Ok(())
}
