//! `memplan import model.tflite`: the MLPerf Tiny keyword spotter's activations and operators
//! as a model file that plans to its lower bound; a truncated or foreign file is refused with a
//! message and writes nothing. The KWS test is skipped with a message when `../shared` is absent.

mod common;

use std::path::PathBuf;

use common::{memplan, scratch, text};

fn kws(name: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/bench/tinyml")
        .join(name);
    if path.is_file() {
        Some(path)
    } else {
        println!("skipped: {} is absent", path.display());
        None
    }
}

#[test]
fn the_int8_keyword_spotter_imports_and_plans_to_its_lower_bound() {
    let Some(model) = kws("kws_ref_model.tflite") else {
        return;
    };
    let dir = scratch("import_tflite", "kws");
    let out = dir.join("kws.toml");
    let result = memplan(&[
        "import",
        model.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(result.status.success(), "{}", text(&result.stderr));
    assert!(
        text(&result.stderr)
            .contains("13 TFLite operators; 13 ops, 14 tensors, bound without sharing 16000 bytes, lower bound 16000 bytes"),
        "{}",
        text(&result.stderr)
    );
    let toml = std::fs::read_to_string(&out).unwrap();
    assert!(
        toml.contains("input_1 = { dtype = \"i8\", shape = [1, 49, 10, 1] }"),
        "{toml}"
    );
    assert!(
        toml.contains("kind = \"tflite.DEPTHWISE_CONV_2D\""),
        "{toml}"
    );
    assert!(toml.contains("name = \"conv_2d_0\""), "{toml}");
    let plan = memplan(&["plan", out.to_str().unwrap()]);
    assert!(plan.status.success(), "{}", text(&plan.stderr));
    assert!(
        text(&plan.stdout).contains("arena 16000 bytes | lower bound 16000"),
        "{}",
        text(&plan.stdout)
    );
}

#[test]
fn a_truncated_tflite_file_is_refused_and_nothing_is_written() {
    let dir = scratch("import_tflite", "truncated");
    let model = dir.join("broken.tflite");
    // The file identifier, then nothing a flatbuffer needs.
    std::fs::write(&model, b"\x10\x00\x00\x00TFL3\x00\x00").unwrap();
    let out = dir.join("broken.toml");
    let result = memplan(&[
        "import",
        model.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!result.status.success());
    let stderr = text(&result.stderr);
    assert!(
        stderr.contains("is not a valid TensorFlow Lite flatbuffer"),
        "{stderr}"
    );
    assert!(!out.exists());
    // An ONNX file named .tflite is not TFLite.
    std::fs::write(&model, b"\x08\x07\x12\x04test").unwrap();
    let result = memplan(&["import", model.to_str().unwrap()]);
    assert!(!result.status.success());
    assert!(
        text(&result.stderr).contains("does not have the `TFL3` file identifier"),
        "{}",
        text(&result.stderr)
    );
}

#[test]
fn issue_36_the_extension_chooses_the_format_before_the_identifier() {
    let dir = scratch("import_tflite", "extension_first");
    // An ONNX ModelProto (ir_version 8, producer `TFL3`) whose bytes 4..8 are `TFL3`.
    let onnx = b"\x08\x08\x12\x04TFL3";
    let model = dir.join("producer.onnx");
    std::fs::write(&model, onnx).unwrap();
    let result = memplan(&["import", model.to_str().unwrap()]);
    let stderr = text(&result.stderr);
    assert!(!result.status.success());
    assert!(
        !stderr.contains("TensorFlow Lite") && !stderr.contains("TFLite"),
        "read as TFLite: {stderr}"
    );
    // Named neither way, the identifier decides: the same bytes are taken for TFLite.
    let model = dir.join("producer.bin");
    std::fs::write(&model, onnx).unwrap();
    let result = memplan(&["import", model.to_str().unwrap()]);
    assert!(
        text(&result.stderr).contains("is not a valid TensorFlow Lite flatbuffer"),
        "{}",
        text(&result.stderr)
    );
}
