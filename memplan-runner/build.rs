//! Generates the network chosen by `MEMPLAN_MODEL` (an absolute path to an ONNX file; without
//! it, the small model in `models/default.onnx`) with `memplan-build`, exactly as a user's build
//! script would: `OUT_DIR/net.rs` (the arena module, the constants read in place, the tables and
//! `run`), with `inplace` off when `MEMPLAN_INPLACE=0`, the build-time rewriting (fusion,
//! packed weights: `memplan_build::Network::fuse`) off when `MEMPLAN_FUSE=0`, and a RAM budget
//! the arena must meet when `MEMPLAN_RAM_BUDGET` is a number of bytes
//! (`memplan_build::Network::ram_budget`; unset or empty: none). Chains of convolutions whose
//! tensors are larger than a host core's cache run band by band
//! (`memplan_build::Network::cache_bytes`): `MEMPLAN_CACHE_BYTES` bytes, 2 MiB when unset or
//! empty, none when `0`.
//!
//! Every problem with the model (an operator the kernels do not implement, a dynamic shape, a
//! missing weight, a truncated file) stops the build with `memplan-build`'s message, naming the
//! node or value, so the binary never computes a wrong answer.

use std::path::PathBuf;

/// The cache the runner's bands keep tensors in when `MEMPLAN_CACHE_BYTES` does not say: a
/// server core's L2 (1.25 to 2 MiB on recent x86-64). On MobileNetV2 a 1 MiB figure also bands
/// its 1.2 to 1.8 MB tensors, which an L2 of 2 MiB holds, and gained half as much (3% against
/// 6-8%); 512 KiB lost 4%.
const DEFAULT_CACHE_BYTES: u64 = 2 << 20;

fn main() {
    println!("cargo::rerun-if-env-changed=MEMPLAN_MODEL");
    println!("cargo::rerun-if-env-changed=MEMPLAN_INPLACE");
    println!("cargo::rerun-if-env-changed=MEMPLAN_FUSE");
    println!("cargo::rerun-if-env-changed=MEMPLAN_RAM_BUDGET");
    println!("cargo::rerun-if-env-changed=MEMPLAN_CACHE_BYTES");
    println!("cargo::rerun-if-changed=build.rs");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let model = match std::env::var_os("MEMPLAN_MODEL") {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => manifest.join("models/default.onnx"),
    };
    if !model.is_absolute() {
        fail(&format!(
            "MEMPLAN_MODEL=`{}` is not an absolute path\n  = help: cargo runs build scripts in another directory; pass the full path, e.g. MEMPLAN_MODEL=$PWD/{}",
            model.display(),
            model.display()
        ));
    }
    // For `--bench`: the model's path and size, to find ONNX Runtime's figure for it.
    println!("cargo::rustc-env=MEMPLAN_RUNNER_MODEL={}", model.display());
    println!(
        "cargo::rustc-env=MEMPLAN_RUNNER_MODEL_BYTES={}",
        std::fs::metadata(&model).map_or(0, |m| m.len())
    );
    let inplace = std::env::var("MEMPLAN_INPLACE").map_or(true, |v| v != "0");
    let fuse = std::env::var("MEMPLAN_FUSE").map_or(true, |v| v != "0");
    // A `.tflite` file (or one with TFLite's identifier) is read as TFLite, anything else as ONNX.
    let mut network = memplan_build::Network::from_file(&model)
        .name("net")
        .inplace(inplace)
        .fuse(fuse);
    match std::env::var("MEMPLAN_RAM_BUDGET") {
        Ok(bytes) if !bytes.trim().is_empty() => match bytes.trim().parse::<u64>() {
            Ok(bytes) => network = network.ram_budget(bytes),
            Err(e) => fail(&format!(
                "MEMPLAN_RAM_BUDGET=`{bytes}` is not a number of bytes ({e})\n  = help: give the most bytes the arena may take, e.g. MEMPLAN_RAM_BUDGET=65536, or leave it empty for no budget"
            )),
        },
        _ => {}
    }
    match std::env::var("MEMPLAN_CACHE_BYTES") {
        Ok(bytes) if !bytes.trim().is_empty() => match bytes.trim().parse::<u64>() {
            Ok(0) => {}
            Ok(bytes) => network = network.cache_bytes(bytes),
            Err(e) => fail(&format!(
                "MEMPLAN_CACHE_BYTES=`{bytes}` is not a number of bytes ({e})\n  = help: give a core's data cache (its L2), e.g. MEMPLAN_CACHE_BYTES=2097152, 0 for no bands, or leave it empty for 2 MiB"
            )),
        },
        _ => network = network.cache_bytes(DEFAULT_CACHE_BYTES),
    }
    let generated = network.generate();
    if let Err(error) = generated {
        fail(error.message());
    }
}

/// Stops the build with `message`: its first line as cargo's error, all of it on stderr.
fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    let first = message.lines().next().unwrap_or(message);
    println!("cargo::error={first}");
    std::process::exit(1);
}
