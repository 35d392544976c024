//! End to end on TensorFlow Lite files: the MLPerf Tiny keyword spotter of
//! `../shared/bench/tinyml` (int8 and float32/hybrid `.tflite`) built into the runner through
//! `MEMPLAN_MODEL`, run out of the arena and from the heap, and compared with LiteRT's reference
//! kernels' output: the int8 output byte for byte (OUT.bin holds int8 bytes), the float one
//! within absolute 1e-4 plus relative 1e-3. Skipped with a message when `../shared` is absent.

mod common;

use std::path::{Path, PathBuf};

use common::{assert_close, assert_same_bytes, build_and_run, f32s, read_f32};

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

/// Builds `model`, runs it on `input` from the arena and from the heap (which must agree), and
/// returns the output's bytes and the arena run's summary.
fn run(model: &Path, input: &Path, inplace: bool) -> (Vec<u8>, String) {
    let name = model.file_stem().unwrap().to_string_lossy().into_owned();
    build_and_run(
        &name,
        model,
        input,
        inplace,
        &format!("tflite-{name}-{inplace}"),
    )
}

#[test]
fn the_int8_keyword_spotter_equals_litert_byte_for_byte() {
    let Some(dir) = tinyml() else {
        return;
    };
    let reference = std::fs::read(dir.join("kws_ref_model.tflite.output.bin")).unwrap();
    for inplace in [true, false] {
        let (arena, summary) = run(
            &dir.join("kws_ref_model.tflite"),
            &dir.join("kws_ref_model.input.bin"),
            inplace,
        );
        // 12 int8 scores: the file holds their bytes, not float32.
        assert_eq!(arena.len(), 12, "{summary}");
        assert_same_bytes(
            &format!("kws int8 (in place {inplace})"),
            &arena,
            &reference,
            "LiteRT",
        );
        // The arena is its lower bound: the int8 activations (16,000 bytes at the peak, a
        // quarter of float's) and the pointwise convolution's int16 columns there (256 bytes).
        assert!(
            summary.contains("arena 16256 bytes") && summary.contains("lower bound 16256 bytes"),
            "{summary}"
        );
        println!("kws int8 (in place {inplace}): 0 of 12 elements differ from LiteRT\n{summary}");
    }
}

#[test]
fn the_int8_keyword_spotter_under_a_ram_budget_equals_litert_byte_for_byte() {
    let Some(dir) = tinyml() else {
        return;
    };
    let reference = std::fs::read(dir.join("kws_ref_model.tflite.output.bin")).unwrap();
    let model = dir.join("kws_ref_model.tflite");
    // Below the whole-tensor bound (16,256 bytes): the pointwise convolutions write over their
    // input (16,000); the depthwise ones too, through two rows of ring each (8,640).
    for (budget, arena) in [(16_255, 16_000), (12_000, 8_640)] {
        let runner = common::Runner::lock();
        runner
            .build_with_budget(&model, true, Some(budget))
            .unwrap_or_else(|e| panic!("kws under {budget} bytes: the build failed:\n{e}"));
        let (ours, summary) = runner.run_both(
            &format!("kws under {budget} bytes"),
            &dir.join("kws_ref_model.input.bin"),
            &common::scratch(&format!("tflite-kws-budget-{budget}")),
        );
        assert_same_bytes(
            &format!("kws int8 under {budget} bytes"),
            &ours,
            &reference,
            "LiteRT",
        );
        assert!(
            summary.contains(&format!("arena {arena} bytes")),
            "{summary}"
        );
        println!("kws int8 under a RAM budget of {budget} bytes: equal to LiteRT\n{summary}");
    }
    // Below what writing in place reaches: the build says the least it can do.
    let error = common::Runner::lock()
        .build_with_budget(&model, true, Some(8_000))
        .expect_err("no schedule fits 8,000 bytes");
    assert!(
        error.contains("the arena cannot fit the RAM budget of 8000 bytes")
            && error.contains("the least arena this network can run in is 8640 bytes"),
        "{error}"
    );
}

#[test]
fn the_float_keyword_spotter_matches_litert() {
    let Some(dir) = tinyml() else {
        return;
    };
    let reference = read_f32(&dir.join("kws_ref_model_float32.tflite.output.bin"));
    let (arena, summary) = run(
        &dir.join("kws_ref_model_float32.tflite"),
        &dir.join("kws_ref_model_float32.input.bin"),
        true,
    );
    let worst = assert_close("kws float32", &f32s(&arena), &reference, "LiteRT");
    // The hybrid CONV_2D quantizes its input as LiteRT does: far closer than ONNX Runtime's
    // float convolution of the dequantized weights (5.5e-3).
    assert!(worst < 1e-6, "max abs diff {worst:e}");
    println!("kws float32 (hybrid): max abs diff {worst:.2e} from LiteRT\n{summary}");
}

/// The float keyword spotter below its whole-tensor bound (64,064 bytes): the float depthwise
/// and the hybrid pointwise convolutions write over their inputs (34,560); the output the same
/// bits as the whole-tensor run's (the same kernels compute every element the same way).
#[test]
fn the_float_keyword_spotter_under_a_ram_budget_computes_the_same_bits() {
    let Some(dir) = tinyml() else {
        return;
    };
    let model = dir.join("kws_ref_model_float32.tflite");
    let input = dir.join("kws_ref_model_float32.input.bin");
    let runner = common::Runner::lock();
    runner.build_with_budget(&model, true, None).unwrap();
    let scratch = common::scratch("tflite-kws-float-budget");
    let (whole, summary) = runner.run_both("kws float32", &input, &scratch);
    assert!(summary.contains("arena 64064 bytes"), "{summary}");
    runner
        .build_with_budget(&model, true, Some(40_000))
        .unwrap_or_else(|e| panic!("kws float32 under 40,000 bytes: the build failed:\n{e}"));
    let (ours, summary) = runner.run_both("kws float32 under 40,000 bytes", &input, &scratch);
    assert_same_bytes(
        "kws float32 under 40,000 bytes",
        &ours,
        &whole,
        "the whole-tensor run",
    );
    assert!(summary.contains("arena 34560 bytes"), "{summary}");
    println!("kws float32 under a RAM budget of 40,000 bytes: the same bits\n{summary}");
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
    let (arena, summary) = run(
        &dir.join("kws_ref_model.onnx"),
        &dir.join("kws_ref_model.input.bin"),
        true,
    );
    let ort = std::fs::read(dir.join("kws_ref_model.output.bin")).unwrap();
    assert_same_bytes("kws int8 ONNX (QDQ)", &arena, &ort, "ONNX Runtime");
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
