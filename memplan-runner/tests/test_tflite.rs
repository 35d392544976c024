//! End to end on TensorFlow Lite files: the MLPerf Tiny keyword spotter of
//! `../shared/bench/tinyml` (int8 and float32/hybrid `.tflite`) built into the runner through
//! `MEMPLAN_MODEL`, run out of the arena and from the heap, and compared with LiteRT's reference
//! kernels' output: the int8 output byte for byte (OUT.bin holds int8 bytes), the float one
//! within absolute 1e-4 plus relative 1e-3. Skipped with a message when `../shared` is absent.

mod common;

use std::path::PathBuf;

use common::{Runner, scratch};

/// `../shared/bench/tinyml` (or `MEMPLAN_BENCH_DIR/tinyml`), if present.
fn tinyml() -> Option<PathBuf> {
    let bench = std::env::var_os("MEMPLAN_BENCH_DIR").map_or_else(
        || common::workspace().join("../shared/bench"),
        PathBuf::from,
    );
    let dir = bench.join("tinyml");
    if dir.join("kws_ref_model.tflite").is_file() {
        Some(dir)
    } else {
        println!(
            "skipped: {} is absent (the MLPerf Tiny models of ../shared/bench/tinyml)",
            dir.display()
        );
        None
    }
}

/// Builds `model`, runs it on `input` from the arena and from the heap, and returns both
/// outputs' bytes and the arena run's summary.
fn run(
    model: &std::path::Path,
    input: &std::path::Path,
    inplace: bool,
) -> (Vec<u8>, Vec<u8>, String) {
    let runner = Runner::lock();
    runner
        .build(model, inplace)
        .unwrap_or_else(|e| panic!("{}: the build failed:\n{e}", model.display()));
    let name = model.file_stem().unwrap().to_string_lossy().into_owned();
    let dir = scratch(&format!("tflite-{name}-{inplace}"));
    let (arena_out, heap_out) = (dir.join("arena.bin"), dir.join("heap.bin"));
    let summary = runner
        .run(input, &arena_out, false)
        .unwrap_or_else(|e| panic!("{name}: the arena run failed: {e}"));
    runner
        .run(input, &heap_out, true)
        .unwrap_or_else(|e| panic!("{name}: the heap run failed: {e}"));
    (
        std::fs::read(&arena_out).unwrap(),
        std::fs::read(&heap_out).unwrap(),
        summary,
    )
}

#[test]
fn the_int8_keyword_spotter_equals_litert_byte_for_byte() {
    let Some(dir) = tinyml() else {
        return;
    };
    let reference = std::fs::read(dir.join("kws_ref_model.tflite.output.bin")).unwrap();
    for inplace in [true, false] {
        let (arena, heap, summary) = run(
            &dir.join("kws_ref_model.tflite"),
            &dir.join("kws_ref_model.input.bin"),
            inplace,
        );
        // 12 int8 scores: the file holds their bytes, not float32.
        assert_eq!(arena.len(), 12, "{summary}");
        let differ = arena.iter().zip(&reference).filter(|(a, b)| a != b).count();
        assert_eq!(
            arena, reference,
            "{differ} of 12 elements differ from LiteRT\n{summary}"
        );
        assert_eq!(arena, heap, "the arena and heap runs differ");
        // The arena is the int8 activations' lower bound (16,000 bytes: a quarter of float's).
        assert!(summary.contains("arena 16000 bytes"), "{summary}");
        println!("kws int8 (in place {inplace}): 0 of 12 elements differ from LiteRT\n{summary}");
    }
}

#[test]
fn the_float_keyword_spotter_matches_litert() {
    let Some(dir) = tinyml() else {
        return;
    };
    let reference = common::read_f32(&dir.join("kws_ref_model_float32.tflite.output.bin"));
    let (arena, heap, summary) = run(
        &dir.join("kws_ref_model_float32.tflite"),
        &dir.join("kws_ref_model_float32.input.bin"),
        true,
    );
    assert_eq!(arena, heap, "the arena and heap runs differ");
    let arena: Vec<f32> = arena
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(arena.len(), reference.len());
    let mut worst = 0.0f32;
    for (i, (&x, &r)) in arena.iter().zip(&reference).enumerate() {
        let diff = (x - r).abs();
        worst = worst.max(diff);
        assert!(
            diff <= 1e-4 + 1e-3 * r.abs(),
            "element {i}: {x}, LiteRT {r}"
        );
    }
    // The hybrid CONV_2D quantizes its input as LiteRT does: far closer than ONNX Runtime's
    // float convolution of the dequantized weights (5.5e-3).
    assert!(worst < 1e-6, "max abs diff {worst:e}");
    println!("kws float32 (hybrid): max abs diff {worst:.2e} from LiteRT\n{summary}");
}

/// The same network as ONNX Runtime runs tf2onnx's QDQ conversion of it (float operators between
/// QuantizeLinear and DequantizeLinear, evaluated in float32 and rounded at each
/// QuantizeLinear): memplan's int8 output equals ONNX Runtime's byte for byte, and is 2 quanta
/// from LiteRT's in 2 of 12 elements, as ONNX Runtime's own is.
#[test]
fn the_int8_keyword_spotter_as_onnx_qdq_equals_onnx_runtime() {
    let Some(dir) = tinyml() else {
        return;
    };
    let (arena, heap, summary) = run(
        &dir.join("kws_ref_model.onnx"),
        &dir.join("kws_ref_model.input.bin"),
        true,
    );
    assert_eq!(arena, heap, "the arena and heap runs differ");
    let ort = std::fs::read(dir.join("kws_ref_model.output.bin")).unwrap();
    let differ = arena.iter().zip(&ort).filter(|(a, b)| a != b).count();
    assert_eq!(
        arena, ort,
        "{differ} of 12 elements differ from ONNX Runtime\n{summary}"
    );
    let litert = std::fs::read(dir.join("kws_ref_model.tflite.output.bin")).unwrap();
    let worst = arena
        .iter()
        .zip(&litert)
        .map(|(&a, &b)| (i32::from(a.cast_signed()) - i32::from(b.cast_signed())).abs())
        .max()
        .unwrap_or(0);
    assert!(worst <= 2, "{worst} quanta from LiteRT");
    println!("kws int8 ONNX (QDQ): 0 of 12 elements differ from ONNX Runtime\n{summary}");
}
