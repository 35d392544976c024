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
    for name in [
        "resnet8_like",
        "autoencoder_like",
        "mobilenet_like",
        "vww_like",
    ] {
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

/// A depthwise-separable int8 network (`memplan_tflite::fixture::separable_cnn_int8`) under RAM
/// budgets below its whole-tensor plan: its convolutions written over their own inputs, then
/// run band by band at the least arena reachable; the output (the last convolution's, 600
/// values) the same bytes as without a budget, and the arena within the budget.
#[test]
fn an_int8_network_under_a_ram_budget_computes_the_same_bytes() {
    let file = memplan_tflite::fixture::separable_cnn_int8(20, 10, [3, 24, 12], 11);
    let input: Vec<u8> = (0..20 * 10 * 3u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    under_budgets("separable", &file.bytes(), &input);
}

/// The same network in float32 (`separable_cnn_f32`): the float depthwise and pointwise
/// convolutions written over their inputs and run band by band; the output the same bits.
#[test]
fn a_float_network_under_a_ram_budget_computes_the_same_bits() {
    let file = memplan_tflite::fixture::separable_cnn_f32(20, 10, [3, 24, 12], 11);
    let input: Vec<u8> = (0..20 * 10 * 3u32)
        .flat_map(|i| {
            let r = (i.wrapping_mul(2_654_435_761) >> 22) as f32 / 1024.0 - 0.5;
            r.to_le_bytes()
        })
        .collect();
    under_budgets("separable_f32", &file.bytes(), &input);
}

/// Builds `model` without a budget, then under one just below its arena, about half of it and
/// the least any schedule reaches (from the build's refusal of 64 bytes): each output the
/// whole-tensor run's bytes, each arena within its budget.
fn under_budgets(name: &str, model: &[u8], input: &[u8]) {
    let dir = common::scratch(&format!("tflite-models-ram-budget-{name}"));
    let model_path = dir.join(format!("{name}.tflite"));
    std::fs::write(&model_path, model).unwrap();
    let input_path = dir.join(format!("{name}.input.bin"));
    std::fs::write(&input_path, input).unwrap();
    let arena = common::arena_of;
    let runner = common::Runner::lock();
    runner.build_with_budget(&model_path, true, None).unwrap();
    let (whole, summary) = runner.run_both("whole tensors", &input_path, &dir);
    let whole_arena = arena(&summary);
    // The least arena any schedule reaches, from the refusal of a budget below it: the
    // convolutions band by band.
    let refusal = runner
        .build_with_budget(&model_path, true, Some(64))
        .expect_err("64 bytes is below every schedule");
    let least: u64 = refusal
        .split("the least arena this network can run in is ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no least arena in {refusal}"));
    assert!(least < whole_arena / 2, "{name}: {refusal}");
    for budget in [whole_arena - 1, whole_arena / 2 + 512, least] {
        runner
            .build_with_budget(&model_path, true, Some(budget))
            .unwrap_or_else(|e| panic!("{name} under {budget} bytes: {e}"));
        let what = format!("{name} under {budget} bytes");
        let (ours, summary) = runner.run_both(&what, &input_path, &dir);
        assert_same_bytes(&what, &ours, &whole, "the whole-tensor run");
        assert!(arena(&summary) <= budget, "{summary}");
        println!("{what} (whole: {whole_arena}): same bytes\n{summary}");
    }
}

/// The MobileNet-like int8 networks under RAM budgets below what writing in place reaches (the
/// stem's expanding pointwise convolution sets the bound: 13,856 bytes for the narrow one,
/// 55,328 for the visual wake words one, here at half of it): the stem run band by band, the
/// output equal to LiteRT's byte for byte and the arena within the budget.
#[test]
fn mobilenet_like_int8_networks_run_band_by_band_equal_litert_byte_for_byte() {
    let dir = common::scratch("tflite-models-mobilenet-bands");
    let runner = common::Runner::lock();
    for (name, budget) in [
        ("mobilenet_like", 9_000u64),
        ("mobilenet_like", 7_000),
        ("vww_like", 27_664),
        // A residual network: its first block band by band, the ADD written over its input.
        ("resnet8_like", 35_000),
    ] {
        let litert = std::fs::read(fixture(&format!("{name}.output.bin"))).unwrap();
        runner
            .build_with_budget(&fixture(&format!("{name}.tflite")), true, Some(budget))
            .unwrap_or_else(|e| panic!("{name} under {budget} bytes: {e}"));
        let (ours, summary) = runner.run_both(
            &format!("{name} under {budget} bytes"),
            &fixture(&format!("{name}.input.bin")),
            &dir,
        );
        assert_same_bytes(
            &format!("{name} under {budget} bytes"),
            &ours,
            &litert,
            "LiteRT",
        );
        assert!(common::arena_of(&summary) <= budget, "{summary}");
        println!("{name} under {budget} bytes: equal to LiteRT\n{summary}");
    }
}
