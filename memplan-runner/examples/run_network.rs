//! The README's main job in one command: `cargo run --release -p memplan-runner --example
//! run_network`.
//!
//! Picks a real network (`mobilenet_v2` from `../shared/bench/runnable` when the shared data is
//! there, else the small CNN shipped in `memplan-runner/models`), builds the runner for it
//! (`cargo build --release -p memplan-runner` with `MEMPLAN_MODEL`: its activations planned into
//! one arena at build time), and runs it on the reference input: it prints the arena against the
//! lower bound, the top classes and the checksum of the output, and how the output compares with
//! ONNX Runtime's. `MEMPLAN_EXAMPLE_MODEL=<name>` picks another runnable model (for example
//! `bert_mini`).

use std::path::PathBuf;
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let workspace = manifest.parent().expect("in the workspace").to_path_buf();
    let runnable = workspace.join("../shared/bench/runnable");
    let name = std::env::var("MEMPLAN_EXAMPLE_MODEL").unwrap_or_else(|_| "mobilenet_v2".into());
    let (dir, name) = if runnable.join(format!("{name}.onnx")).is_file() {
        (runnable, name)
    } else {
        println!(
            "note: {} not found; running the small CNN shipped in memplan-runner/models",
            runnable.join(format!("{name}.onnx")).display()
        );
        (manifest.join("models"), "default".to_owned())
    };
    let dir = dir.canonicalize().expect("the model's directory exists");
    let file = |suffix: &str| dir.join(format!("{name}{suffix}"));
    let out = std::env::temp_dir().join(format!("memplan-{name}.output.bin"));
    println!("building the runner for {} ...", file(".onnx").display());
    let status = Command::new(env!("CARGO"))
        .current_dir(&workspace)
        .args(["run", "--quiet", "--release", "-p", "memplan-runner", "--"])
        .arg(file(".input.bin"))
        .arg(&out)
        .arg("--expect")
        .arg(file(".output.bin"))
        .env("MEMPLAN_MODEL", file(".onnx"))
        .env_remove("MEMPLAN_INPLACE")
        .status();
    match status {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: cannot run cargo: {e}");
            ExitCode::FAILURE
        }
    }
}
