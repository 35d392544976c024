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

use common::{assert_close, assert_same_bytes, build_and_run, f32s};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/onnx_int8")
        .join(name)
}

#[test]
fn quantized_onnx_networks_equal_onnx_runtime_bit_for_bit() {
    for name in ["qop_u8s8", "qop_s8s8", "qdq_u8", "qop_cnn_u8s8"] {
        let (ours, _) = build_and_run(
            name,
            &fixture(&format!("{name}.onnx")),
            &fixture(&format!("{name}.input.bin")),
            true,
            &format!("onnx-int8-{name}"),
        );
        let reference = std::fs::read(fixture(&format!("{name}.output.bin"))).unwrap();
        if name.starts_with("qop_u8") || name.starts_with("qop_s8") {
            // The quantised output's bytes.
            assert_same_bytes(name, &ours, &reference, "ONNX Runtime");
            println!(
                "{name}: 0 of {} elements differ from ONNX Runtime",
                ours.len()
            );
        } else {
            // A float32 output: qdq_u8's last QuantizeLinear makes it exact; qop_cnn_u8s8 ends in
            // a float Softmax, whose exp differs from ONNX Runtime's in the last bits.
            let worst = assert_close(name, &f32s(&ours), &f32s(&reference), "ONNX Runtime");
            if name == "qdq_u8" {
                assert!(worst == 0.0, "{name}: max abs diff {worst:e}");
            }
            println!("{name}: max abs diff {worst:.2e} from ONNX Runtime");
        }
    }
}
