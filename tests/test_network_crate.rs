//! A user's crate outside the workspace (`tests/network-crate`) that depends on `memplan` and
//! `memplan-build` by path, exactly as the README's "Run a network in your own crate" says, and
//! generates several networks in one build script (two or more `generate` calls, one module
//! each): every network runs through its typed `run` and matches ONNX Runtime's reference.
//!
//! The shipped small CNN always runs; the networks of `../shared/bench` (runnable and the float
//! MLPerf Tiny KWS) join when the shared data is there, and are reported as skipped when not.

use std::path::Path;
use std::process::Command;

#[test]
fn networks_run_in_a_users_own_crate_and_match_onnx_runtime() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let krate = root.join("tests/network-crate");
    let target = root.join("target/network-crate");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["run", "--release", "--quiet"])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains(" | max abs diff "))
        .collect();
    for name in [
        "default_cnn",
        "default_cnn_copies",
        "default_cnn_io_in_arena",
        "default_cnn_pools",
        "awkward_names",
    ] {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&format!("{name}: match"))),
            "{name}:\n{stdout}"
        );
    }
    for line in &lines {
        assert!(line.contains(": match |"), "{line}");
    }
    let shared = root.join("../shared/bench/runnable/manifest.json");
    if shared.is_file() {
        assert_eq!(lines.len(), 10, "every shared network ran:\n{stdout}");
    } else {
        println!(
            "skipped the shared networks: {} not found",
            shared.display()
        );
    }
}
