//! Networks shaped like the MLPerf Tiny models, converted by TensorFlow's own TFLite converter
//! (`tests/fixtures/tflite/make_tinyml_like.py`: random weights, full int8 with int8 input and
//! output as the MLPerf Tiny reference submissions convert theirs, and float32): a ResNet-8 like
//! image classification's, a fully connected autoencoder like anomaly detection's and a narrowed
//! MobileNetV1 like visual wake words' (its global average pool is an int8 MEAN). Each is built
//! into the runner and run out of the arena and from the heap; the int8 outputs must equal
//! LiteRT's (`BUILTIN_REF`) byte for byte, the float32 ones within absolute 1e-4 plus relative
//! 1e-3.

mod common;

use std::path::PathBuf;

use common::{assert_close, assert_same_bytes, build_and_run, f32s, read_f32};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tflite")
        .join(name)
}

/// Builds `name`, runs it from the arena and the heap: (arena output bytes, runner's stdout).
fn run(name: &str) -> (Vec<u8>, String) {
    build_and_run(
        name,
        &fixture(&format!("{name}.tflite")),
        &fixture(&format!("{name}.input.bin")),
        true,
        &format!("tflite-models-{name}"),
    )
}

#[test]
fn mlperf_tiny_like_int8_networks_equal_litert_byte_for_byte() {
    for name in ["resnet8_like", "autoencoder_like", "mobilenet_like"] {
        let (ours, stdout) = run(name);
        let litert = std::fs::read(fixture(&format!("{name}.output.bin"))).unwrap();
        assert_same_bytes(name, &ours, &litert, "LiteRT");
        let arena_line = stdout
            .lines()
            .find(|l| l.starts_with("arena "))
            .unwrap_or("");
        println!(
            "{name}: 0 of {} elements differ from LiteRT | {arena_line}",
            ours.len()
        );
    }
}

#[test]
fn mlperf_tiny_like_float_networks_match_litert() {
    for name in [
        "resnet8_like_f32",
        "autoencoder_like_f32",
        "mobilenet_like_f32",
    ] {
        let (ours, stdout) = run(name);
        let litert = read_f32(&fixture(&format!("{name}.output.bin")));
        let worst = assert_close(name, &f32s(&ours), &litert, "LiteRT");
        let arena_line = stdout
            .lines()
            .find(|l| l.starts_with("arena "))
            .unwrap_or("");
        println!("{name}: max abs diff {worst:.2e} from LiteRT | {arena_line}");
    }
}
