//! Every `tflite.*` kernel against LiteRT's reference kernels: small TFLite models of one or two
//! operators each (`tests/fixtures/tflite`, written with LiteRT's own schema and run by its
//! `BUILTIN_REF` interpreter by `make_tflite_ops.py`), each built into the runner and run out of
//! the arena and from the heap. The int8 outputs must equal LiteRT's byte for byte; the float32
//! ones (two networks of every float form) within absolute 1e-4 plus relative 1e-3. An operator the
//! kernels do not run fails the build, naming it and listing the ones they do.

mod common;

use std::path::PathBuf;

use common::{Runner, scratch};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tflite")
        .join(name)
}

/// Builds `name`, runs it from the arena and the heap, and returns (arena bytes, LiteRT bytes).
fn run(name: &str) -> (Vec<u8>, Vec<u8>) {
    let runner = Runner::lock();
    runner
        .build(&fixture(&format!("{name}.tflite")), true)
        .unwrap_or_else(|e| panic!("{name}: the build failed:\n{e}"));
    let dir = scratch(&format!("tflite-ops-{name}"));
    let input = fixture(&format!("{name}.input.bin"));
    let (arena, heap) = (dir.join("arena.bin"), dir.join("heap.bin"));
    runner
        .run(&input, &arena, false)
        .unwrap_or_else(|e| panic!("{name}: the arena run failed: {e}"));
    runner
        .run(&input, &heap, true)
        .unwrap_or_else(|e| panic!("{name}: the heap run failed: {e}"));
    let (arena, heap) = (std::fs::read(arena).unwrap(), std::fs::read(heap).unwrap());
    assert_eq!(arena, heap, "{name}: the arena and heap runs differ");
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
        let differ = ours.iter().zip(&litert).filter(|(a, b)| a != b).count();
        assert_eq!(ours.len(), litert.len(), "{name}: output length");
        assert_eq!(
            differ,
            0,
            "{name}: {differ} of {} elements differ from LiteRT",
            ours.len()
        );
        println!("{name}: 0 of {} elements differ from LiteRT", ours.len());
    }
}

#[test]
fn the_float_kernels_and_quantize_dequantize_match_litert() {
    for name in ["float_chain", "float_more", "quantize_dequantize"] {
        let (ours, litert) = run(name);
        let floats = |b: &[u8]| -> Vec<f32> {
            b.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        };
        let (ours, litert) = (floats(&ours), floats(&litert));
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
