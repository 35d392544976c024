//! Plans the network chosen by `MEMPLAN_MODEL` (an absolute path to an ONNX file; without it, the
//! small model in `models/default.onnx`) and writes to `OUT_DIR`:
//!
//! - `plan.rs`: the arena module `memplan_core::codegen` generates for its activations (the same
//!   code `memplan!` expands to), with `inplace = false` when `MEMPLAN_INPLACE=0`;
//! - `program.rs`: the network as a straight-line program, one kernel call per op on the views of
//!   `op_<name>()`, plus the tables the heap run and the input/output code use;
//! - `weights.bin`: every weight's little-endian bytes, one after the other, which the binary
//!   includes with `include_bytes!` and decodes once at start. Folded constant nodes that the
//!   importer does not compute itself (a `Gather` from a constant table) are evaluated here with
//!   the runner's own kernels (`src/kernels`, included as a module).
//!
//! Every node is checked against the kernels' list (`src/kernels/supported.rs`) first: an
//! operator the kernels do not implement, a dynamic shape, a missing weight or a truncated file
//! stops the build with a message naming the node or value, so the binary never computes a wrong
//! answer.

#[path = "build/fold.rs"]
mod fold;
// The runner's kernels, to evaluate folded constant nodes at build time.
#[path = "src/kernels/mod.rs"]
#[allow(dead_code, unreachable_pub, missing_docs, unused_imports)]
mod kernels;
#[path = "build/program.rs"]
mod program;

use kernels::supported;

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo::rerun-if-env-changed=MEMPLAN_MODEL");
    println!("cargo::rerun-if-env-changed=MEMPLAN_INPLACE");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=build");
    println!("cargo::rerun-if-changed=src/kernels");
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
    println!("cargo::rerun-if-changed={}", model.display());
    let inplace = std::env::var("MEMPLAN_INPLACE").map_or(true, |v| v != "0");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    match program::build(&model, inplace) {
        Ok(built) => {
            for file in &built.rerun_files {
                println!("cargo::rerun-if-changed={}", file.display());
            }
            write(&out, "plan.rs", built.plan.as_bytes());
            write(&out, "program.rs", built.program.as_bytes());
            write(&out, "weights.bin", &built.weights);
        }
        Err(message) => fail(&format!(
            "cannot build the runner for `{}`: {message}",
            model.display()
        )),
    }
}

/// Writes `OUT_DIR/name` through a temporary file, so an interrupted build never leaves half a
/// file.
fn write(out: &Path, name: &str, bytes: &[u8]) {
    let temporary = out.join(format!("{name}.tmp"));
    std::fs::write(&temporary, bytes).expect("OUT_DIR is writable");
    std::fs::rename(&temporary, out.join(name)).expect("OUT_DIR is writable");
}

/// Stops the build with `message`: its first line as cargo's error, all of it on stderr.
fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    let first = message.lines().next().unwrap_or(message);
    println!("cargo::error={first}");
    std::process::exit(1);
}
