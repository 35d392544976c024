//! Quantised ONNX networks against ONNX Runtime: small networks written by ONNX Runtime's own
//! quantiser (`tests/fixtures/onnx_int8`, made by `make_onnx_int8.py`), each built into the
//! runner and run out of the arena and from the heap.
//!
//! - `qdq_u8`: QuantizeLinear/DequantizeLinear pairs on uint8 around float operators (a CNN with
//!   BatchNormalization, MaxPool, Add, GlobalAveragePool, Gemm and Softmax): float32 output.
//! - `qop_cnn_u8s8`: the same CNN in the QOperator form (QLinearConv, com.microsoft's QLinearAdd
//!   and QGemm, float BatchNormalization, MaxPool and Softmax between the pairs): float32 output.
//! - `qop_u8s8`, `qop_s8s8`: the QOperator form (QLinearConv, com.microsoft's QLinearAdd,
//!   QLinearMatMul; uint8 activations with int8 weights, and int8 with per-channel int8
//!   weights): the quantised output's bytes.
//!
//! Every quantised output equals ONNX Runtime's byte for byte, `qdq_u8`'s float output bit for
//! bit; `qop_cnn_u8s8`'s float Softmax (after the quantised network) is within 1e-4.

mod common;

use std::path::PathBuf;

use common::{Runner, scratch};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/onnx_int8")
        .join(name)
}

#[test]
fn quantized_onnx_networks_equal_onnx_runtime_bit_for_bit() {
    for name in ["qop_u8s8", "qop_s8s8", "qdq_u8", "qop_cnn_u8s8"] {
        let runner = Runner::lock();
        runner
            .build(&fixture(&format!("{name}.onnx")), true)
            .unwrap_or_else(|e| panic!("{name}: the build failed:\n{e}"));
        let dir = scratch(&format!("onnx-int8-{name}"));
        let input = fixture(&format!("{name}.input.bin"));
        let (arena, heap) = (dir.join("arena.bin"), dir.join("heap.bin"));
        runner
            .run(&input, &arena, false)
            .unwrap_or_else(|e| panic!("{name}: the arena run failed: {e}"));
        runner
            .run(&input, &heap, true)
            .unwrap_or_else(|e| panic!("{name}: the heap run failed: {e}"));
        let (ours, heap) = (std::fs::read(arena).unwrap(), std::fs::read(heap).unwrap());
        assert_eq!(ours, heap, "{name}: the arena and heap runs differ");
        let reference = std::fs::read(fixture(&format!("{name}.output.bin"))).unwrap();
        assert_eq!(ours.len(), reference.len(), "{name}: output length");
        if name.starts_with("qop_u8") || name.starts_with("qop_s8") {
            // The quantised output's bytes.
            let differ = ours.iter().zip(&reference).filter(|(a, b)| a != b).count();
            assert_eq!(
                differ,
                0,
                "{name}: {differ} of {} elements differ from ONNX Runtime",
                ours.len()
            );
            println!(
                "{name}: 0 of {} elements differ from ONNX Runtime",
                ours.len()
            );
        } else {
            // A float32 output: qdq_u8's last QuantizeLinear makes it exact; qop_cnn_u8s8 ends in
            // a float Softmax, whose exp differs from ONNX Runtime's in the last bits.
            let floats = |b: &[u8]| -> Vec<f32> {
                b.chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect()
            };
            let (ours, reference) = (floats(&ours), floats(&reference));
            let mut worst = 0.0f32;
            for (i, (&x, &r)) in ours.iter().zip(&reference).enumerate() {
                worst = worst.max((x - r).abs());
                assert!(
                    (x - r).abs() <= 1e-4 + 1e-3 * r.abs(),
                    "{name}: element {i} is {x}, ONNX Runtime {r}"
                );
            }
            if name == "qdq_u8" {
                assert!(worst == 0.0, "{name}: max abs diff {worst:e}");
            }
            println!("{name}: max abs diff {worst:.2e} from ONNX Runtime");
        }
    }
}
