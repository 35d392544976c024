//! Every `tflite.*` kernel against LiteRT's reference kernels: small TFLite models of one or two
//! operators each (`tests/fixtures/tflite`, written with LiteRT's own schema and run by its
//! `BUILTIN_REF` interpreter by `make_tflite_ops.py`), each built into the runner and run out of
//! the arena and from the heap. The int8 outputs must equal LiteRT's byte for byte; the float32
//! ones (two networks of every float form) within absolute 1e-4 plus relative 1e-3. An operator the
//! kernels do not run fails the build, naming it and listing the ones they do.

mod common;

use std::path::PathBuf;

use common::{Runner, assert_close, assert_same_bytes, build_and_run, f32s};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tflite")
        .join(name)
}

/// Builds `name`, runs it from the arena and the heap, and returns (arena bytes, LiteRT bytes).
fn run(name: &str) -> (Vec<u8>, Vec<u8>) {
    let (arena, _) = build_and_run(
        name,
        &fixture(&format!("{name}.tflite")),
        &fixture(&format!("{name}.input.bin")),
        true,
        &format!("tflite-ops-{name}"),
    );
    (
        arena,
        std::fs::read(fixture(&format!("{name}.output.bin"))).unwrap(),
    )
}

#[test]
fn every_int8_kernel_equals_litert_byte_for_byte() {
    for name in [
        "conv_int8",
        "conv_dilated_int8",
        "depthwise_int8",
        "fully_connected_int8",
        "pools_int8",
        "add_mul_int8",
        "logistic_int8",
        "tanh_int8",
        "softmax_int8",
        "concat_pad_int8",
        "sub_relu_int8",
        "relu_n1_int8",
        "mean_hw_int8",
        "mean_same_int8",
        "mean_rescaled_int8",
        "transpose_slice_int8",
        "batch_matmul_int8",
        "batch_matmul_adj_int8",
        "fc_rounding_int8",
        "conv_rounding_int8",
    ] {
        let (ours, litert) = run(name);
        assert_same_bytes(name, &ours, &litert, "LiteRT");
        println!("{name}: 0 of {} elements differ from LiteRT", ours.len());
    }
}

#[test]
fn the_float_kernels_and_quantize_dequantize_match_litert() {
    for name in ["float_chain", "float_more", "quantize_dequantize"] {
        let (ours, litert) = run(name);
        let worst = assert_close(name, &f32s(&ours), &f32s(&litert), "LiteRT");
        println!("{name}: max abs diff {worst:.2e} from LiteRT");
    }
}

#[test]
fn an_unsupported_builtin_is_refused_by_name() {
    let runner = Runner::lock();
    let error = runner
        .build(&fixture("unsupported_gelu.tflite"), true)
        .expect_err("GELU is refused");
    assert!(
        error.contains("operator 0 (GELU): TFLite builtin operator GELU is not supported"),
        "{error}"
    );
    assert!(
        error.contains("memplan runs these TFLite builtins: ADD AVERAGE_POOL_2D"),
        "{error}"
    );
}
