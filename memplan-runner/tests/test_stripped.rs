//! Models without `value_info` (as exporters that skip ONNX shape inference write them) built
//! into the runner and run: memplan infers every intermediate shape (`memplan-onnx`'s
//! `shapes.rs`), and the output is ONNX Runtime's. The stripped copies are written by
//! `memplan_onnx::strip_value_info` into a scratch directory: the graph's `value_info` and the
//! graph outputs' types removed, every other byte kept.
//!
//! - `unseen_cnn` (a fixture of this crate, always run): float32, within 1e-4 of ONNX Runtime.
//! - `../shared/bench/tinyml/kws_ref_model.onnx` (when present): tf2onnx's int8 QDQ conversion of
//!   MLPerf Tiny's keyword spotter, 68 nodes, equal to ONNX Runtime's output byte for byte.

mod common;

use std::path::{Path, PathBuf};

use common::{assert_close, assert_same_bytes, build_and_run, f32s, read_f32, scratch};

/// `model` without its shape information, written into the scratch directory `dir`.
fn stripped(model: &Path, dir: &str) -> PathBuf {
    let bytes = std::fs::read(model).unwrap();
    let bare = memplan_onnx::strip_value_info(&bytes, true).unwrap();
    assert!(
        bare.len() < bytes.len(),
        "{}: nothing stripped",
        model.display()
    );
    let path = scratch(dir).join(model.file_name().unwrap());
    std::fs::write(&path, bare).unwrap();
    path
}

#[test]
fn a_model_without_value_info_runs_as_onnx_runtime_does() {
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let model = stripped(&fixtures.join("unseen_cnn.onnx"), "stripped-unseen-cnn");
    let (arena, summary) = build_and_run(
        "unseen_cnn without value_info",
        &model,
        &fixtures.join("unseen_cnn.input.bin"),
        true,
        "stripped-unseen-cnn-run",
    );
    let reference = read_f32(&fixtures.join("unseen_cnn.output.bin"));
    let worst = assert_close("unseen_cnn", &f32s(&arena), &reference, "ONNX Runtime");
    println!("unseen_cnn without value_info: max abs diff {worst:.2e}\n{summary}");
}

#[test]
fn the_int8_keyword_spotter_without_value_info_equals_onnx_runtime() {
    let bench = std::env::var_os("MEMPLAN_BENCH_DIR").map_or_else(
        || common::workspace().join("../shared/bench"),
        PathBuf::from,
    );
    let dir = bench.join("tinyml");
    if !dir.join("kws_ref_model.onnx").is_file() {
        println!(
            "skipped: {} is absent (the MLPerf Tiny models)",
            dir.display()
        );
        return;
    }
    let model = stripped(&dir.join("kws_ref_model.onnx"), "stripped-kws");
    let (arena, summary) = build_and_run(
        "kws int8 ONNX without value_info",
        &model,
        &dir.join("kws_ref_model.input.bin"),
        true,
        "stripped-kws-run",
    );
    let ort = std::fs::read(dir.join("kws_ref_model.output.bin")).unwrap();
    assert_same_bytes(
        "kws int8 ONNX without value_info",
        &arena,
        &ort,
        "ONNX Runtime",
    );
    println!(
        "kws int8 ONNX without value_info: 0 of 12 elements differ from ONNX Runtime\n{summary}"
    );
}
