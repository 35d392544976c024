//! Quantised ONNX networks against ONNX Runtime: small networks written by ONNX Runtime's own
//! quantiser (`tests/fixtures/onnx_int8`, made by `make_onnx_int8.py`), each built into the
//! runner and run out of the arena and from the heap.
//!
//! - `qdq_u8`: QuantizeLinear/DequantizeLinear pairs on uint8 around float operators (a CNN with
//!   BatchNormalization, MaxPool, Add, GlobalAveragePool, Gemm and Softmax): float32 output.
//! - `qop_u8s8`, `qop_s8s8`: the QOperator form (QLinearConv, com.microsoft's QLinearAdd,
//!   QLinearMatMul; uint8 activations with int8 weights, and int8 with per-channel int8
//!   weights): the quantised output's bytes.
//!
//! Every output equals ONNX Runtime's bit for bit.

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
    for name in ["qop_u8s8", "qop_s8s8", "qdq_u8"] {
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
        // Bytes for the quantised outputs; float32 compared as bits (4 bytes an element).
        let size = if name.starts_with("qdq") { 4 } else { 1 };
        let differ = ours
            .chunks(size)
            .zip(reference.chunks(size))
            .filter(|(a, b)| a != b)
            .count();
        assert_eq!(
            differ,
            0,
            "{name}: {differ} of {} elements differ from ONNX Runtime",
            ours.len() / size
        );
        println!(
            "{name}: 0 of {} elements differ from ONNX Runtime",
            ours.len() / size
        );
    }
}
