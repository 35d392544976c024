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

use common::{Runner, read_f32, scratch};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tflite")
        .join(name)
}

/// Builds `name`, runs it from the arena and the heap: (arena output path, runner's stdout).
fn run(name: &str) -> (PathBuf, String) {
    let runner = Runner::lock();
    runner
        .build(&fixture(&format!("{name}.tflite")), true)
        .unwrap_or_else(|e| panic!("{name}: the build failed:\n{e}"));
    let dir = scratch(&format!("tflite-models-{name}"));
    let input = fixture(&format!("{name}.input.bin"));
    let (arena, heap) = (dir.join("arena.bin"), dir.join("heap.bin"));
    let stdout = runner
        .run(&input, &arena, false)
        .unwrap_or_else(|e| panic!("{name}: the arena run failed: {e}"));
    runner
        .run(&input, &heap, true)
        .unwrap_or_else(|e| panic!("{name}: the heap run failed: {e}"));
    assert_eq!(
        std::fs::read(&arena).unwrap(),
        std::fs::read(heap).unwrap(),
        "{name}: the arena and heap runs differ"
    );
    (arena, stdout)
}

#[test]
fn mlperf_tiny_like_int8_networks_equal_litert_byte_for_byte() {
    for name in ["resnet8_like", "autoencoder_like", "mobilenet_like"] {
        let (arena, stdout) = run(name);
        let ours = std::fs::read(arena).unwrap();
        let litert = std::fs::read(fixture(&format!("{name}.output.bin"))).unwrap();
        assert_eq!(ours.len(), litert.len(), "{name}: output length");
        let differ = ours.iter().zip(&litert).filter(|(a, b)| a != b).count();
        assert_eq!(
            differ,
            0,
            "{name}: {differ} of {} elements differ from LiteRT",
            ours.len()
        );
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
        let (arena, stdout) = run(name);
        let (ours, litert) = (
            read_f32(&arena),
            read_f32(&fixture(&format!("{name}.output.bin"))),
        );
        assert_eq!(ours.len(), litert.len(), "{name}: output length");
        let mut worst = 0.0f32;
        for (i, (&x, &r)) in ours.iter().zip(&litert).enumerate() {
            let diff = (x - r).abs();
            worst = worst.max(diff);
            assert!(
                diff <= 1e-4 + 1e-3 * r.abs(),
                "{name}: element {i} is {x}, LiteRT {r}"
            );
        }
        let arena_line = stdout
            .lines()
            .find(|l| l.starts_with("arena "))
            .unwrap_or("");
        println!("{name}: max abs diff {worst:.2e} from LiteRT | {arena_line}");
    }
}
