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
        self.build_with_budget(model, inplace, None)
    }

    /// [`Runner::build`] with the arena's RAM budget (`MEMPLAN_RAM_BUDGET`), if any, and no
    /// bands for the cache (`MEMPLAN_CACHE_BYTES=0`): whole tensors unless the budget says.
    pub(crate) fn build_with_budget(
        &self,
        model: &Path,
        inplace: bool,
        ram_budget: Option<u64>,
    ) -> Result<PathBuf, String> {
        self.build_with_options(model, inplace, ram_budget, Some(0))
    }

    /// [`Runner::build`] with the chains of convolutions banded for a cache of `bytes`
    /// (`MEMPLAN_CACHE_BYTES`; `None`: the runner's default).
    pub(crate) fn build_with_cache(
        &self,
        model: &Path,
        bytes: Option<u64>,
    ) -> Result<PathBuf, String> {
        self.build_with_options(model, true, None, bytes)
    }

    fn build_with_options(
        &self,
        model: &Path,
        inplace: bool,
        ram_budget: Option<u64>,
        cache_bytes: Option<u64>,
    ) -> Result<PathBuf, String> {
        let output = Command::new(env!("CARGO"))
            .current_dir(workspace())
            .args(["build", "--release", "-p", "memplan-runner"])
            .env("CARGO_TARGET_DIR", target_dir())
            .env("CARGO_PROFILE_RELEASE_INCREMENTAL", "true")
            .env("MEMPLAN_MODEL", model)
            .env("MEMPLAN_INPLACE", if inplace { "1" } else { "0" })
            .env(
                "MEMPLAN_RAM_BUDGET",
                ram_budget.map_or_else(String::new, |b| b.to_string()),
            )
            .env(
                "MEMPLAN_CACHE_BYTES",
                cache_bytes.map_or_else(String::new, |b| b.to_string()),
            )
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

    /// Runs the built binary on `input` out of the arena and from the heap (`arena.bin` and
    /// `heap.bin` in `dir`) and checks that both wrote the same bytes: the arena run's output
    /// and its stdout (the summary). Panics, naming `what`, when a run fails or the two differ.
    pub(crate) fn run_both(&self, what: &str, input: &Path, dir: &Path) -> (Vec<u8>, String) {
        let (arena_out, heap_out) = (dir.join("arena.bin"), dir.join("heap.bin"));
        let summary = self
            .run(input, &arena_out, false)
            .unwrap_or_else(|e| panic!("{what}: the arena run failed: {e}"));
        self.run(input, &heap_out, true)
            .unwrap_or_else(|e| panic!("{what}: the heap run failed: {e}"));
        let (arena, heap) = (
            std::fs::read(&arena_out).unwrap(),
            std::fs::read(&heap_out).unwrap(),
        );
        assert!(arena == heap, "{what}: the arena and heap runs differ");
        (arena, summary)
    }
}

/// Builds the runner for `model` (in place or not) and runs it on `input` out of the arena and
/// from the heap ([`Runner::run_both`]) in the scratch directory `dir`: the arena run's output
/// bytes and summary. `name` labels every failure.
pub(crate) fn build_and_run(
    name: &str,
    model: &Path,
    input: &Path,
    inplace: bool,
    dir: &str,
) -> (Vec<u8>, String) {
    let runner = Runner::lock();
    runner
        .build(model, inplace)
        .unwrap_or_else(|e| panic!("{name}: the build failed:\n{e}"));
    runner.run_both(name, input, &scratch(dir))
}

/// Little-endian f32s.
pub(crate) fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Asserts that `ours` has `reference`'s length and each element is within absolute 1e-4 plus
/// relative 1e-3 of the reference's (`whose`: "LiteRT", "ONNX Runtime", ...); returns the
/// largest absolute difference. `what` names the output in the messages.
pub(crate) fn assert_close(what: &str, ours: &[f32], reference: &[f32], whose: &str) -> f32 {
    assert_eq!(ours.len(), reference.len(), "{what}: output length");
    let mut worst = 0.0f32;
    for (i, (&x, &r)) in ours.iter().zip(reference).enumerate() {
        let diff = (x - r).abs();
        worst = worst.max(diff);
        assert!(
            diff <= 1e-4 + 1e-3 * r.abs(),
            "{what}: element {i} is {x}, {whose} {r}"
        );
    }
    worst
}

/// Asserts that an int8 or uint8 output (`ours`) equals `reference` byte for byte, saying how
/// many of its elements differ from `whose`'s.
pub(crate) fn assert_same_bytes(what: &str, ours: &[u8], reference: &[u8], whose: &str) {
    assert_eq!(ours.len(), reference.len(), "{what}: output length");
    let differ = ours.iter().zip(reference).filter(|(a, b)| a != b).count();
    assert_eq!(
        differ,
        0,
        "{what}: {differ} of {} elements differ from {whose}",
        ours.len()
    );
}

/// Raw little-endian f32s.
pub(crate) fn read_f32(path: &Path) -> Vec<f32> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(bytes.len() % 4, 0, "{}", path.display());
    f32s(&bytes)
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
    let what = format!("{name} (in place {inplace})");
    let (arena, summary) = runner.run_both(&what, input, &scratch(&format!("{name}-{inplace}")));
    let worst = assert_close(&what, &f32s(&arena), &read_f32(reference), "the reference");
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

/// The arena bytes a runner's summary reports (`arena N bytes ...`).
pub(crate) fn arena_of(summary: &str) -> u64 {
    summary
        .split("arena ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no arena in {summary}"))
}
