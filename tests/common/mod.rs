//! Scratch crates for tests that must build generated code the way a user does: outside the
//! workspace, in release or for another target, with the compiler's output inspected.

#![allow(dead_code)] // each test file uses part of it

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A crate `name` under this test binary's `CARGO_TARGET_TMPDIR`, depending on `memplan` by path,
/// with `lib.rs` and `model.toml` as given. Files are rewritten only when changed, so cargo's
/// fingerprints stay fresh between runs; the workspace's `Cargo.lock` pins the same versions, so
/// the build works offline. Only the `macro` feature: these crates plan model files with
/// `memplan!` and run no network, so they never compile the kernels (the crate's largest
/// build).
pub(crate) fn scratch_crate(name: &str, lib: &str, model: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let manifest = format!(
        "[package]\nname = {name:?}\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\nmemplan = {{ path = {:?}, default-features = false, features = [\"macro\"] }}\n\n\
         [workspace]\n",
        root.display().to_string()
    );
    let lock = std::fs::read(root.join("Cargo.lock")).unwrap();
    for (file, bytes) in [
        ("Cargo.toml", manifest.as_bytes()),
        ("Cargo.lock", &lock[..]),
        ("src/lib.rs", lib.as_bytes()),
        ("model.toml", model.as_bytes()),
    ] {
        write_if_changed(&dir.join(file), bytes);
    }
    dir
}

/// Writes `bytes` to `path` unless it already holds them (so cargo's fingerprints stay fresh).
pub(crate) fn write_if_changed(path: &Path, bytes: &[u8]) {
    if std::fs::read(path).ok().as_deref() != Some(bytes) {
        std::fs::write(path, bytes).unwrap();
    }
}

/// Runs `cargo <args>` in `dir` with its own target directory, offline; returns the output
/// whether or not it succeeded.
pub(crate) fn cargo(dir: &Path, args: &[&str]) -> Output {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let (command, rest) = args.split_first().expect("a cargo command");
    Command::new(cargo)
        .arg(command)
        .arg("--offline")
        .args(rest)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .expect("cargo runs")
}

/// Says why a test returns early, where `cargo test` shows it: written to the process's stderr
/// directly, which the test harness does not capture (`println!` would be shown only with
/// `--nocapture`, so a skipped test would pass silently).
pub(crate) fn skip(reason: &str) {
    use std::io::Write;
    // The harness names each test's thread after the test.
    let test = std::thread::current()
        .name()
        .filter(|name| *name != "main")
        .map_or(String::new(), |name| format!("{name}: "));
    let _ = writeln!(std::io::stderr(), "skipped: {test}{reason}");
}

/// Whether the standard library for `target` is installed (`rustup target add <target>`).
pub(crate) fn target_installed(target: &str) -> bool {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let Ok(output) = Command::new(rustc)
        .args(["--print", "target-libdir", "--target", target])
        .output()
    else {
        return false;
    };
    let libdir = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    output.status.success()
        && std::fs::read_dir(libdir).is_ok_and(|mut entries| {
            entries.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with("libcore")))
        })
}
