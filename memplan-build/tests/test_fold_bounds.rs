//! Folded constants are bounded (issue 19, item 4): a network whose constants would be huge once
//! computed is an error naming the node, reported without allocating them. The ONNX files are
//! made by `tests/fixtures/make_fold_bombs.py`.
//!
//! The tests of this file run one after the other (one `#[test]`), so the process's peak memory
//! is theirs alone: it stays far below the 1 GiB that the smallest of these constants has (and
//! the 768 MiB of the three that are each within the bound of one folded value).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use memplan_build::Network;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The error of generating `name`, and how long it took.
fn error(name: &str) -> (String, Duration) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fold-bounds");
    std::fs::create_dir_all(&dir).unwrap();
    let start = Instant::now();
    let result = Network::from_onnx(fixture(name))
        .out_dir(&dir)
        .emit_rerun_if_changed(false)
        .generate();
    let elapsed = start.elapsed();
    let message = result.expect_err("must be refused").to_string();
    // One help line, the fold's own: the file is not incomplete.
    assert_eq!(message.matches("= help:").count(), 1, "{message}");
    (message, elapsed)
}

/// The process's peak resident memory in bytes (Linux: `VmHWM`), if known.
fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[test]
fn huge_folded_constants_are_refused_by_node_without_allocating_them() {
    // `ConstantOfShape([2^20, 2^20])`: 4 TiB of float32 (the allocation that aborted the
    // runner's build script), read by a `MatMul` whose output is small.
    let (message, elapsed) = error("constant_of_shape.onnx");
    assert!(
        message.contains("folded node `/bomb/ConstantOfShape` (ConstantOfShape)"),
        "{message}"
    );
    assert!(message.contains("[1048576, 1048576]"), "{message}");
    assert!(message.contains("256 MiB"), "{message}");
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");

    // 1 GiB, which an allocator would hand out (the bound is checked before, not after).
    let (message, _) = error("constant_of_shape_add.onnx");
    assert!(
        message.contains("folded node `/bomb/ConstantOfShape` (ConstantOfShape)"),
        "{message}"
    );
    assert!(message.contains("[16384, 16384]"), "{message}");

    // 48 folded nodes, each reading the one before twice: 2^48 nodes if each use were copied.
    let (message, elapsed) = error("doubling.onnx");
    assert!(message.contains("/double/Add_"), "{message}");
    assert!(message.contains("folded nodes"), "{message}");
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");

    // Three `ConstantOfShape([2^26])`, 256 MiB each (each within a folded value's bound), from
    // a file of 619 bytes: the build held 768 MiB of them (1.6 GB peak, 16.8 s in a debug
    // build; twenty of them, 10.5 GB and 133 s). What the constants take together is bounded
    // by 16 times the file plus 16 MiB (issue 36).
    let (message, elapsed) = error("constants_past_the_budget.onnx");
    let limit = 619 * memplan_onnx::BUDGET_PER_FILE_BYTE + memplan_onnx::BUDGET_SLACK;
    assert!(
        message.contains(&format!(
            "weight `c0`: the constants would take more than {limit} bytes at build time when it \
             comes to folded node `/bomb/ConstantOfShape_0` (ConstantOfShape)'s output (16 times \
             the 619 bytes of the ONNX file and its external data"
        )),
        "{message}"
    );
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");

    if let Some(peak) = peak_memory() {
        assert!(
            peak < 512 << 20,
            "peak memory {} MiB: a constant was materialised",
            peak >> 20
        );
    }
}
