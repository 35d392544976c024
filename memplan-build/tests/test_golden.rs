//! The generated network, byte for byte: `Network::generate`'s Rust module and model file for
//! two small networks (an ONNX graph of two inputs, an int8 TFLite convolution with its
//! specialised kernel call) against files checked in under `tests/golden/`. A change to the
//! emitter shows up here as a diff to read in review; when it is meant, regenerate them with
//! `MEMPLAN_BLESS=1 cargo test -p memplan-build --test test_golden` and commit the new files.

use std::path::{Path, PathBuf};

use memplan_build::Network;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Generates `model` as network `name` and compares its `.rs` and `.toml` with the golden
/// files (the output directory written as `OUT`), or rewrites them under `MEMPLAN_BLESS`.
fn golden(name: &str, model: &Path) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("golden-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Network::from_file(model)
        .name(name)
        .out_dir(&dir)
        .emit_rerun_if_changed(false)
        .generate()
        .unwrap_or_else(|e| panic!("{e}"));
    let golden_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    for extension in ["rs", "toml"] {
        let file = format!("{name}.{extension}");
        let got = std::fs::read_to_string(dir.join(&file))
            .unwrap()
            .replace(&dir.display().to_string(), "OUT");
        let path = golden_dir.join(&file);
        if std::env::var_os("MEMPLAN_BLESS").is_some() {
            std::fs::create_dir_all(&golden_dir).unwrap();
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; run with MEMPLAN_BLESS=1", path.display()));
        if got != want {
            let line = got
                .lines()
                .zip(want.lines())
                .position(|(g, w)| g != w)
                .unwrap_or_else(|| got.lines().count().min(want.lines().count()));
            panic!(
                "{file} differs from {} from line {}:\n  generated: {:?}\n  golden:    {:?}\nif the change is meant, run with MEMPLAN_BLESS=1 and commit the files",
                path.display(),
                line + 1,
                got.lines().nth(line).unwrap_or("(end)"),
                want.lines().nth(line).unwrap_or("(end)"),
            );
        }
    }
}

#[test]
fn an_onnx_network_generates_its_golden_module() {
    golden(
        "two_inputs",
        &workspace().join("memplan-runner/tests/fixtures/two_inputs.onnx"),
    );
}

#[test]
fn an_int8_tflite_network_generates_its_golden_module() {
    golden(
        "conv_int8",
        &workspace().join("memplan-runner/tests/fixtures/tflite/conv_int8.tflite"),
    );
}
