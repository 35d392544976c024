//! End to end: each network is built into the runner (its arena planned at build time), run
//! out of the arena and with every tensor in its own heap buffer, and compared with ONNX
//! Runtime's output; with in-place ops on (the default) and off. The arena run must equal the
//! heap run bit for bit: a difference is a planning or aliasing bug.

mod common;

use std::path::PathBuf;

use common::{Runner, check_model};

fn shipped(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("models")
        .join(file)
}

#[test]
fn the_default_model_matches_onnx_runtime_in_place_and_not() {
    for inplace in [true, false] {
        let summary = check_model(
            &shipped("default.onnx"),
            &shipped("default.input.bin"),
            &shipped("default.output.bin"),
            inplace,
        );
        // In place never costs: at or below the bound without sharing (fusion leaves the
        // default model no in-place pair that saves bytes, see memplan-build's fuse.rs);
        // without, at it or above.
        let ratio: f64 = summary
            .split("ratio ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|r| r.parse().ok())
            .expect("the summary has a ratio");
        if inplace {
            assert!(ratio <= 1.0, "{summary}");
        } else {
            assert!(ratio >= 1.0, "{summary}");
        }
    }
}

/// The default model with every weight in an external data file beside it
/// (`tests/fixtures/default_external.onnx` + `.weights`): the same output.
#[test]
fn external_weights_give_the_same_output() {
    check_model(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/default_external.onnx"),
        &shipped("default.input.bin"),
        &shipped("default.output.bin"),
        true,
    );
}

fn runnable(name: &str) {
    let Some(dir) = common::runnable_dir() else {
        println!("skipping {name}: ../shared/bench/runnable not found");
        return;
    };
    for inplace in [true, false] {
        check_model(
            &dir.join(format!("{name}.onnx")),
            &dir.join(format!("{name}.input.bin")),
            &dir.join(format!("{name}.output.bin")),
            inplace,
        );
    }
}

#[test]
fn squeezenet1_1_matches_onnx_runtime() {
    runnable("squeezenet1_1");
}

#[test]
fn mobilenet_v3_small_matches_onnx_runtime() {
    runnable("mobilenet_v3_small");
}

#[test]
fn mobilenet_v2_matches_onnx_runtime() {
    runnable("mobilenet_v2");
}

#[test]
fn bert_mini_matches_onnx_runtime() {
    runnable("bert_mini");
}

/// Networks built by hand with `onnx.helper` (`tests/fixtures/make_unseen_models.py` and the
/// other `make_*.py` there), with
/// operators and patterns the runner was not developed on: AveragePool, BatchNormalization,
/// Resize, Split, Slice, Where with a causal mask, a tanh GELU, Cast, a Shape-derived Reshape.
/// In place only (the default), to keep CI short; both modes passed when they were added.
#[test]
fn hand_built_models_match_onnx_runtime() {
    let fixture = |file: String| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(file)
    };
    // `two_inputs` has graph inputs `x` and `y`, read from the input file one after the other,
    // and two graph outputs, of which the runner writes the first (`tests/fixtures/
    // make_two_inputs.py`).
    // `erf_gelu` has GELU as PyTorch exports it, fused into the MatMul before it
    // (`tests/fixtures/make_erf_gelu.py`); `silu` SiLU, fused into the Convs before it
    // (`tests/fixtures/make_silu.py`); `upsample` packed ConvTransposes (no overlap, overlapping
    // taps in groups, dilated) and a nearest Resize (`tests/fixtures/make_upsample.py`);
    // `recurrent` LSTMs, GRUs and an RNN (`tests/fixtures/make_recurrent.py`).
    for name in [
        "unseen_cnn",
        "unseen_transformer",
        "two_inputs",
        "erf_gelu",
        "silu",
        "upsample",
        "recurrent",
    ] {
        check_model(
            &fixture(format!("{name}.onnx")),
            &fixture(format!("{name}.input.bin")),
            &fixture(format!("{name}.output.bin")),
            true,
        );
    }
}

/// `--repeat N` runs the arena N times more after the run and prints their mean time; the
/// output file is the single run's, the same bytes as without it.
#[test]
fn repeat_runs_the_arena_again_for_a_profiler() {
    let runner = Runner::lock();
    runner
        .build(&shipped("default.onnx"), true)
        .unwrap_or_else(|e| panic!("the build failed:\n{e}"));
    let dir = common::scratch("repeat");
    let input = shipped("default.input.bin");
    let (once, repeated) = (dir.join("once.bin"), dir.join("repeated.bin"));
    runner.run(&input, &once, false).expect("one run");
    let out = std::process::Command::new(common::binary())
        .arg(&input)
        .arg(&repeated)
        .args(["--repeat", "3"])
        .output()
        .expect("the runner starts");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("repeat: 3 arena runs, mean "), "{stdout}");
    assert_eq!(
        std::fs::read(&once).unwrap(),
        std::fs::read(&repeated).unwrap()
    );
}

/// No input value makes `run` panic or fail: NaN, both infinities, signed zeros, the extremes
/// and subnormals of f32 go through the arena and heap runs of the default model, which both
/// succeed and agree bit for bit (NaN payloads included).
#[test]
fn any_input_values_run_without_a_panic() {
    let runner = Runner::lock();
    runner
        .build(&shipped("default.onnx"), true)
        .unwrap_or_else(|e| panic!("the build failed:\n{e}"));
    let elements = std::fs::metadata(shipped("default.input.bin"))
        .unwrap()
        .len() as usize
        / 4;
    let specials = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        f32::MAX,
        f32::MIN,
        f32::MIN_POSITIVE,
        1e-45,
        -1e-45,
        1.0,
    ];
    let dir = common::scratch("any-input");
    for (k, pattern) in [(0, 1), (3, 7), (1, 2)].into_iter().enumerate() {
        let values: Vec<f32> = (0..elements)
            .map(|i| specials[(i * pattern.1 + pattern.0) % specials.len()])
            .collect();
        let input = dir.join(format!("input{k}.bin"));
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(&input, bytes).unwrap();
        runner.run_both(&format!("pattern {k}"), &input, &dir);
    }
}

/// An ONNX network under a RAM budget below its whole-tensor arena
/// (`tests/fixtures/make_depthwise_budget.py`: its peak is a depthwise Conv's input and
/// output): the build writes the depthwise Conv over its input, the arena fits the budget, the
/// output is the whole-tensor run's bit for bit and ONNX Runtime's within tolerance; under half
/// the whole arena, the Convs run band by band, the same bits. A budget below what that reaches
/// fails the build, naming the least arena.
#[test]
fn an_onnx_depthwise_conv_is_written_over_its_input_under_a_ram_budget() {
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let model = fixtures.join("depthwise_budget.onnx");
    let input = fixtures.join("depthwise_budget.input.bin");
    let reference = common::read_f32(&fixtures.join("depthwise_budget.output.bin"));
    let dir = common::scratch("onnx-depthwise-budget");
    let arena = common::arena_of;
    let runner = Runner::lock();
    runner.build_with_budget(&model, true, None).unwrap();
    let (whole, summary) = runner.run_both("whole tensors", &input, &dir);
    let whole_arena = arena(&summary);
    // Two 16 x 32 x 32 float tensors at the depthwise Conv: 128 KiB and its padded plane.
    assert!(whole_arena >= 2 * 65_536, "{summary}");
    let budget = whole_arena - 1;
    runner
        .build_with_budget(&model, true, Some(budget))
        .unwrap_or_else(|e| panic!("under {budget} bytes: {e}"));
    let (ours, summary) = runner.run_both("under a budget", &input, &dir);
    common::assert_same_bytes("under a budget", &ours, &whole, "the whole-tensor run");
    common::assert_close(
        "under a budget",
        &common::f32s(&ours),
        &reference,
        "ONNX Runtime",
    );
    let fits = arena(&summary);
    assert!(fits <= budget, "{summary}");
    // The depthwise Conv's output needs no memory of its own: the peak moves to the pointwise
    // Conv after it (its 64 KiB input and 32 KiB output), 37 KiB below the whole-tensor one.
    assert!(
        fits + 32_768 <= whole_arena,
        "{fits} of {whole_arena}: {summary}"
    );
    assert!(summary.contains("(2 pairs)"), "{summary}");
    println!("depthwise_budget: whole {whole_arena} bytes, under the budget {fits}");
    // Below what writing in place reaches, the chain of Convs (stem, depthwise, pointwise:
    // NCHW) runs band by band: half the whole-tensor arena, the same bits.
    let half = whole_arena / 2;
    runner
        .build_with_budget(&model, true, Some(half))
        .unwrap_or_else(|e| panic!("under {half} bytes: {e}"));
    let (banded, summary) = runner.run_both("band by band", &input, &dir);
    common::assert_same_bytes("band by band", &banded, &whole, "the whole-tensor run");
    assert!(arena(&summary) <= half, "{summary}");
    assert!(summary.contains("band by band: `"), "{summary}");
    println!("depthwise_budget: under half of it {}", arena(&summary));
    let refusal = runner
        .build_with_budget(&model, true, Some(4_096))
        .expect_err("4 KiB is below every schedule");
    assert!(
        refusal.contains("the least arena this network can run in is"),
        "{refusal}"
    );
}

/// Banded for a cache smaller than its tensors (`MEMPLAN_CACHE_BYTES`), the stem, depthwise and
/// pointwise Convs of `depthwise_budget` (16 channels at 32 x 32: 64 KiB tensors) run band by
/// band: the whole-tensor run's bits, an arena no larger. With a cache that holds them, or
/// none, nothing is banded.
#[test]
fn convolutions_run_band_by_band_for_a_cache_smaller_than_their_tensors() {
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let model = fixtures.join("depthwise_budget.onnx");
    let input = fixtures.join("depthwise_budget.input.bin");
    let dir = common::scratch("onnx-cache-bands");
    let arena = common::arena_of;
    let runner = Runner::lock();
    runner.build_with_budget(&model, true, None).unwrap();
    let (whole, summary) = runner.run_both("whole tensors", &input, &dir);
    assert!(!summary.contains("band by band: `"), "{summary}");
    let whole_arena = arena(&summary);
    runner
        .build_with_cache(&model, Some(32 * 1024))
        .unwrap_or_else(|e| panic!("a 32 KiB cache: {e}"));
    let (banded, summary) = runner.run_both("a 32 KiB cache", &input, &dir);
    common::assert_same_bytes("a 32 KiB cache", &banded, &whole, "the whole-tensor run");
    assert!(summary.contains("band by band: `"), "{summary}");
    let banded_arena = arena(&summary);
    assert!(banded_arena < whole_arena, "{summary}");
    println!("depthwise_budget: whole {whole_arena} bytes, banded for 32 KiB {banded_arena}");
    runner
        .build_with_cache(&model, Some(1 << 20))
        .unwrap_or_else(|e| panic!("a 1 MiB cache: {e}"));
    let (held, summary) = runner.run_both("a 1 MiB cache", &input, &dir);
    common::assert_same_bytes("a 1 MiB cache", &held, &whole, "the whole-tensor run");
    assert!(!summary.contains("band by band: `"), "{summary}");
}

/// MobileNetV2 (`../shared/bench/runnable`, skipped without it) under half its whole-tensor
/// bound: Convs written in place and a chain band by band (NCHW), the whole run's bits, ONNX
/// Runtime's within tolerance.
#[test]
fn mobilenet_v2_runs_in_half_its_whole_tensor_bound() {
    let Some(dir) = common::runnable_dir() else {
        println!("skipped: ../shared/bench/runnable is absent");
        return;
    };
    let model = dir.join("mobilenet_v2.onnx");
    let input = dir.join("mobilenet_v2.input.bin");
    let reference = common::read_f32(&dir.join("mobilenet_v2.output.bin"));
    let scratch = common::scratch("mobilenet-v2-budget");
    let arena = common::arena_of;
    let runner = Runner::lock();
    runner.build_with_budget(&model, true, None).unwrap();
    let (whole, summary) = runner.run_both("whole tensors", &input, &scratch);
    let whole_arena = arena(&summary);
    let half = whole_arena / 2;
    runner
        .build_with_budget(&model, true, Some(half))
        .unwrap_or_else(|e| panic!("under {half} bytes: {e}"));
    let (ours, summary) = runner.run_both("under half", &input, &scratch);
    common::assert_same_bytes("under half", &ours, &whole, "the whole-tensor run");
    common::assert_close(
        "under half",
        &common::f32s(&ours),
        &reference,
        "ONNX Runtime",
    );
    assert!(arena(&summary) <= half, "{summary}");
    assert!(summary.contains("band by band: `"), "{summary}");
    println!(
        "mobilenet_v2: whole {whole_arena} bytes, under half of it {}",
        arena(&summary)
    );
    // The runner's default cache bands the expansion to 96 channels at 112 x 112 (4.8 MB).
    runner
        .build_with_cache(&model, None)
        .unwrap_or_else(|e| panic!("the default cache: {e}"));
    let (banded, summary) = runner.run_both("the default cache", &input, &scratch);
    common::assert_same_bytes("the default cache", &banded, &whole, "the whole-tensor run");
    assert!(summary.contains("band by band: `"), "{summary}");
    assert!(arena(&summary) < whole_arena, "{summary}");
}
