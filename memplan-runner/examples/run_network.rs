//! The README's main job in one command: `cargo run --release -p memplan-runner --example
//! run_network`.
//!
//! Picks a real network (`mobilenet_v2` from `../shared/bench/runnable` when the shared data is
//! there, else the small CNN shipped in `memplan-runner/models`), builds the runner for it
//! (`cargo build --release -p memplan-runner` with `MEMPLAN_MODEL`: its activations planned into
//! one arena at build time), and runs it on the reference input: it prints the arena against its
//! two bounds, the top classes and the checksum of the output, and how the output compares with
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
    // The build is quiet (cargo's own lines would bury the summary) but not silent: say what it
    // does and how long it takes before it starts, and how long it took after.
    println!(
        "building the runner for {}: its build script reads the network, plans its activations \
         into one arena and writes the Rust code, then rustc compiles it in release (`cargo \
         build --release -p memplan-runner` with MEMPLAN_MODEL set). On two cores this takes \
         about 15 s for mobilenet_v2 (up to a minute the first time, a second when nothing \
         changed) and prints nothing until it is done ...",
        file(".onnx").display()
    );
    let cargo = |command: &str| {
        let mut cargo = Command::new(env!("CARGO"));
        cargo
            .current_dir(&workspace)
            .args([command, "--quiet", "--release", "-p", "memplan-runner"])
            .env("MEMPLAN_MODEL", file(".onnx"))
            .env_remove("MEMPLAN_INPLACE");
        cargo
    };
    let started = std::time::Instant::now();
    match cargo("build").status() {
        Ok(status) if status.success() => {}
        Ok(_) => return ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: cannot run cargo: {e}");
            return ExitCode::FAILURE;
        }
    }
    println!(
        "built in {:.0} s; running it on {}",
        started.elapsed().as_secs_f64(),
        file(".input.bin").display()
    );
    // Already built: `cargo run` only runs it.
    let status = cargo("run")
        .arg("--")
        .arg(file(".input.bin"))
        .arg(&out)
        .arg("--expect")
        .arg(file(".output.bin"))
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
