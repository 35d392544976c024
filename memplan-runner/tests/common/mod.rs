//! Builds the runner for one ONNX file, as a user would (`cargo build --release -p
//! memplan-runner` with `MEMPLAN_MODEL`), in one dedicated target directory reused by every test
//! (`target/runner-e2e`), so that each build recompiles only memplan-runner, incrementally
//! (`CARGO_PROFILE_RELEASE_INCREMENTAL=true`: a rebuild for another model takes 5-15 s instead of
//! 20-40 s; the optimisations are the release ones). Builds and runs are serialised by a lock: the
//! binary's path is the same for every model.

#![allow(dead_code)] // each test file uses part of this

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

static BUILD: Mutex<()> = Mutex::new(());

/// Holds the build lock while a test builds and runs one model.
pub(crate) struct Runner {
    _lock: MutexGuard<'static, ()>,
}

/// The workspace root.
pub(crate) fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("memplan-runner is in the workspace")
        .to_path_buf()
}

/// `target/runner-e2e` of the workspace (or `CARGO_TARGET_DIR/runner-e2e`).
pub(crate) fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace().join("target"), PathBuf::from)
        .join("runner-e2e")
}

/// The runner binary the builds write.
pub(crate) fn binary() -> PathBuf {
    target_dir()
        .join("release")
        .join(format!("memplan-runner{}", std::env::consts::EXE_SUFFIX))
}

/// `../shared/bench/runnable` (or `MEMPLAN_BENCH_DIR/runnable`), if present.
pub(crate) fn runnable_dir() -> Option<PathBuf> {
    let bench = std::env::var_os("MEMPLAN_BENCH_DIR")
        .map_or_else(|| workspace().join("../shared/bench"), PathBuf::from);
    let dir = bench.join("runnable");
    dir.join("manifest.json").is_file().then_some(dir)
}

impl Runner {
    /// Takes the build lock.
    pub(crate) fn lock() -> Self {
        Self {
            _lock: BUILD
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        }
    }

    /// Builds the runner for `model` (absolute), in place or not: `Ok(binary)` or `Err(cargo's
    /// stderr)`.
    pub(crate) fn build(&self, model: &Path, inplace: bool) -> Result<PathBuf, String> {
        let output = Command::new(env!("CARGO"))
            .current_dir(workspace())
            .args(["build", "--release", "-p", "memplan-runner"])
            .env("CARGO_TARGET_DIR", target_dir())
            .env("CARGO_PROFILE_RELEASE_INCREMENTAL", "true")
            .env("MEMPLAN_MODEL", model)
            .env("MEMPLAN_INPLACE", if inplace { "1" } else { "0" })
            .output()
            .expect("cargo runs");
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        if output.status.success() {
            Ok(binary())
        } else {
            Err(stderr)
        }
    }

    /// Runs the built binary on `input`, writing `output`; `Ok(stdout)` or `Err(stderr)`.
    pub(crate) fn run(&self, input: &Path, output: &Path, heap: bool) -> Result<String, String> {
        let mut command = Command::new(binary());
        command.arg(input).arg(output);
        if heap {
            command.arg("--heap");
        }
        let result = command.output().expect("the runner starts");
        if result.status.success() {
            Ok(String::from_utf8_lossy(&result.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&result.stderr).into_owned())
        }
    }
}

/// Raw little-endian f32s.
pub(crate) fn read_f32(path: &Path) -> Vec<f32> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(bytes.len() % 4, 0, "{}", path.display());
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// A scratch directory for one test.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = target_dir().join("tests").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Builds for `model` (in place or not), runs arena and heap on `input`, and checks the arena
/// output against `reference` (absolute 1e-4 plus relative 1e-3) and the heap output bit for
/// bit. Returns the arena run's summary.
pub(crate) fn check_model(model: &Path, input: &Path, reference: &Path, inplace: bool) -> String {
    let runner = Runner::lock();
    let name = model.file_stem().unwrap().to_string_lossy().into_owned();
    let started = std::time::Instant::now();
    runner
        .build(model, inplace)
        .unwrap_or_else(|e| panic!("{name}: the build failed:\n{e}"));
    let build_seconds = started.elapsed().as_secs_f64();
    let dir = scratch(&format!("{name}-{inplace}"));
    let (arena_out, heap_out) = (dir.join("arena.bin"), dir.join("heap.bin"));
    let summary = runner
        .run(input, &arena_out, false)
        .unwrap_or_else(|e| panic!("{name}: the arena run failed: {e}"));
    runner
        .run(input, &heap_out, true)
        .unwrap_or_else(|e| panic!("{name}: the heap run failed: {e}"));
    let (arena, heap, want) = (
        read_f32(&arena_out),
        read_f32(&heap_out),
        read_f32(reference),
    );
    assert_eq!(arena.len(), want.len(), "{name}: output length");
    let mut worst = 0.0f32;
    for (i, (&x, &r)) in arena.iter().zip(&want).enumerate() {
        let diff = (x - r).abs();
        worst = worst.max(diff);
        assert!(
            diff <= 1e-4 + 1e-3 * r.abs(),
            "{name} (in place {inplace}): element {i} is {x}, the reference {r}"
        );
    }
    assert!(
        arena
            .iter()
            .map(|x| x.to_bits())
            .eq(heap.iter().map(|x| x.to_bits())),
        "{name} (in place {inplace}): the arena and heap runs differ"
    );
    let expected_mode = if inplace {
        "in place on"
    } else {
        "in place off"
    };
    assert!(summary.contains(expected_mode), "{summary}");
    println!(
        "{name}: in place {inplace}: build {build_seconds:.1} s, max abs diff {worst:.2e}, arena == heap\n{}",
        summary.lines().nth(1).unwrap_or_default()
    );
    summary
}
