//! Bad input never gives a wrong answer: an ONNX file with an unsupported operator, a dynamic
//! shape, a missing weight, missing or truncated external data, or a truncated file stops the
//! build with a message naming the problem, and no binary is produced for it; a wrong-sized input
//! file stops the run with a message, and no output file is written.

mod common;

use std::path::{Path, PathBuf};

use common::{Runner, binary, scratch};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Builds for `model`, which must fail with every one of `expected` in cargo's output, and leave
/// no binary.
fn refused(runner: &Runner, model: &Path, expected: &[&str]) {
    let _ = std::fs::remove_file(binary());
    let stderr = runner
        .build(model, true)
        .err()
        .unwrap_or_else(|| panic!("{}: the build succeeded", model.display()));
    for text in expected {
        assert!(
            stderr.contains(text),
            "{}: `{text}` not in:\n{stderr}",
            model.display()
        );
    }
    assert!(
        !stderr.contains("panicked"),
        "{}: the build script panicked:\n{stderr}",
        model.display()
    );
    assert!(
        !binary().exists(),
        "{}: a binary was produced",
        model.display()
    );
}

#[test]
fn bad_models_fail_the_build_naming_the_problem() {
    let runner = Runner::lock();
    refused(
        &runner,
        &fixture("unsupported_op.onnx"),
        &[
            "node `/det/Det` (Det)",
            "operator type \"Det\" is not supported",
        ],
    );
    refused(
        &runner,
        &fixture("dynamic_shape.onnx"),
        &["graph input `x` has dynamic dimension `batch` (axis 0)"],
    );
    refused(
        &runner,
        &fixture("missing_weight.onnx"),
        &[
            "node `/add/Add` reads `bias`, which is not a graph input, a weight, or the output of any node",
        ],
    );
    refused(
        &runner,
        &fixture("missing_external_data.onnx"),
        &["weight `w`", "absent_weights.bin", "cannot be opened"],
    );

    let dir = scratch("bad-models");
    // External data shorter than the weight.
    std::fs::copy(
        fixture("missing_external_data.onnx"),
        dir.join("short_external_data.onnx"),
    )
    .unwrap();
    std::fs::write(dir.join("absent_weights.bin"), [0u8; 10]).unwrap();
    refused(
        &runner,
        &dir.join("short_external_data.onnx"),
        &["weight `w`", "runs past the end", "truncated"],
    );
    // A truncated ONNX file, at several lengths.
    let good = std::fs::read(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/default.onnx"))
        .unwrap();
    for keep in [good.len() / 3, good.len() - 1] {
        let path = dir.join(format!("truncated_{keep}.onnx"));
        std::fs::write(&path, &good[..keep]).unwrap();
        refused(&runner, &path, &["is not an ONNX model", "truncated"]);
    }
    // A missing file and a relative path.
    refused(
        &runner,
        &dir.join("no_such_model.onnx"),
        &["cannot read", "no_such_model.onnx"],
    );
    refused(
        &runner,
        Path::new("relative/model.onnx"),
        &["MEMPLAN_MODEL=`relative/model.onnx` is not an absolute path"],
    );
}

#[test]
fn a_wrong_sized_input_is_refused_and_writes_nothing() {
    let runner = Runner::lock();
    let model = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/default.onnx");
    runner
        .build(&model, true)
        .expect("the default model builds");
    let dir = scratch("bad-input");
    let input = dir.join("short.bin");
    std::fs::write(&input, [0u8; 100]).unwrap();
    let output = dir.join("out.bin");
    let _ = std::fs::remove_file(&output);
    let error = runner.run(&input, &output, false).unwrap_err();
    assert!(
        error.contains("the input file has 100 bytes, but the model's input `input` is float32 [1, 3, 32, 32] = 12288 bytes"),
        "{error}"
    );
    assert!(!output.exists());
    let error = runner
        .run(&dir.join("absent.bin"), &output, true)
        .unwrap_err();
    assert!(error.contains("cannot read"), "{error}");
    assert!(!output.exists());
}

/// OUT.bin is written the way the CLI writes its files (issue 19, item 2): a symlink stays a
/// link and its target gets the output, a 0600 file stays 0600, a temporary planted at the name
/// the runner once used (`OUT.bin.tmp`) redirects nothing, and a directory is refused.
#[cfg(unix)]
#[test]
fn the_output_file_is_never_clobbered() {
    use std::os::unix::fs::PermissionsExt;
    let runner = Runner::lock();
    let model = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/default.onnx");
    runner
        .build(&model, true)
        .expect("the default model builds");
    let dir = scratch("output-file");
    let input = dir.join("in.bin");
    std::fs::write(&input, [0u8; 12288]).unwrap();

    let real = dir.join("real.bin");
    std::fs::write(&real, "old").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = dir.join("out.bin");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink("real.bin", &link).unwrap();
    let victim = dir.join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let planted = dir.join("real.bin.tmp");
    let _ = std::fs::remove_file(&planted);
    std::os::unix::fs::symlink(&victim, &planted).unwrap();

    runner.run(&input, &link, false).expect("the run succeeds");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let written = std::fs::read(&real).unwrap();
    assert_eq!(
        written.len(),
        10 * 4,
        "the default model's 10 float32 outputs"
    );
    let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");

    let error = runner.run(&input, &dir, false).unwrap_err();
    assert!(error.contains("it is a directory"), "{error}");
    assert!(dir.is_dir());
}
