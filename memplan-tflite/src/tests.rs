//! The reader on files a converter never writes (issue 36).

use std::time::Instant;

use planus::Builder;

use crate::fixture::schema::{self, TensorType};
use crate::{Options, read};

/// `x -> RELU -> y` `n` times over, every operator with one shared options table
/// (`ConcatEmbeddingsOptions`, which the reader does not decode) holding `values` integers.
fn shared_options(n: usize, values: usize) -> Vec<u8> {
    let mut b = Builder::new();
    let list = vec![7i32; values];
    let table = schema::ConcatEmbeddingsOptions::create(&mut b, 1, list.as_slice(), ());
    let options = schema::BuiltinOptions::create_concat_embeddings_options(&mut b, table);
    let shape = [4i32];
    let tensors: Vec<_> = ["x", "y"]
        .iter()
        .map(|name| {
            schema::Tensor::create(
                &mut b,
                shape.as_slice(),
                TensorType::Float32,
                0u32,
                *name,
                (),
                false,
                (),
                (),
                false,
                (),
            )
        })
        .collect();
    let (inputs, outputs) = ([0i32], [1i32]);
    let ops: Vec<_> = (0..n)
        .map(|_| {
            schema::Operator::create(
                &mut b,
                0u32,
                inputs.as_slice(),
                outputs.as_slice(),
                options,
                (),
                schema::CustomOptionsFormat::Flexbuffers,
                (),
                (),
                0u64,
                0u64,
                (),
            )
        })
        .collect();
    let codes = vec![schema::OperatorCode {
        deprecated_builtin_code: 19,
        custom_code: None,
        version: 1,
        builtin_code: schema::BuiltinOperator::Relu,
    }];
    let subgraph = schema::SubGraph::create(
        &mut b,
        tensors.as_slice(),
        inputs.as_slice(),
        outputs.as_slice(),
        ops.as_slice(),
        "main",
    );
    let model = schema::Model::create(
        &mut b,
        3u32,
        codes,
        [subgraph].as_slice(),
        (),
        vec![schema::Buffer::default()],
        (),
        (),
        (),
    );
    let plain = b.finish(model, None).to_vec();
    let root = u32::from_le_bytes([plain[0], plain[1], plain[2], plain[3]]) + 8;
    let mut bytes = root.to_le_bytes().to_vec();
    bytes.extend_from_slice(b"TFL3");
    bytes.extend_from_slice(&plain);
    bytes
}

#[test]
fn issue_36_an_options_table_shared_by_every_operator_is_named_not_printed() {
    // 5,000 operators sharing a table of 20,000 integers: printing it for each was 10^8
    // integers formatted.
    let bytes = shared_options(5_000, 20_000);
    let started = Instant::now();
    let graph = read("options.tflite", &bytes).unwrap();
    println!("read in {:.2?}", started.elapsed());
    assert_eq!(graph.operators.len(), 5_000);
    for op in &graph.operators {
        assert_eq!(
            op.options,
            Options::Other("ConcatEmbeddingsOptions".to_owned())
        );
    }
}

#[test]
fn the_extension_decides_the_format_before_the_file_identifier() {
    use std::path::Path;
    let tfl3 = *b"\x1c\0\0\0TFL3";
    assert!(crate::is_tflite(Path::new("m.tflite"), b""));
    assert!(crate::is_tflite(Path::new("M.TFLITE"), b"onnx bytes"));
    // An ONNX file whose producer's name puts `TFL3` at bytes 4..8 is still ONNX.
    assert!(!crate::is_tflite(Path::new("m.onnx"), &tfl3));
    // Neither name: the identifier decides.
    assert!(crate::is_tflite(Path::new("model.bin"), &tfl3));
    assert!(!crate::is_tflite(
        Path::new("model"),
        b"\x08\x07\x12\x04onnx"
    ));
    assert!(!crate::is_tflite(Path::new("model"), b"TFL"));
}
