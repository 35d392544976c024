//! Hostile ONNX nodes (issue 36, what to build 3): shapes and attributes an exporter never
//! writes but a file may hold, which every run of the kernels refuses, must be build errors that
//! name the node and say what to do, as for TFLite: the build runs each node once on zeros, its
//! constants as they are. A node whose kernel reads its inputs' values (an integer divisor, a
//! Resize's scales) is not run on zeros, so a valid network is never refused for them. The files
//! are made by `tests/fixtures/hostile_onnx/make_hostile_onnx.py` (a folder of their own: they are
//! no models for the importer's tests of every fixture); each of the first kind built before and
//! failed in the first call of `run`.

use std::path::{Path, PathBuf};

use memplan_build::Network;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hostile_onnx")
        .join(format!("{name}.onnx"))
}

/// Generates the ONNX file at `path`: the build's result, as its message.
fn generate(path: &Path) -> Result<(), String> {
    let name = path
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .replace('.', "_");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("onnx-hostile")
        .join(&name);
    std::fs::create_dir_all(&dir).unwrap();
    Network::from_onnx(path)
        .name(&name)
        .out_dir(&dir)
        .emit_rerun_if_changed(false)
        .generate()
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn issue_36_what_every_run_would_refuse_is_refused_by_the_build() {
    for (name, node, why) in [
        (
            "concat_axis",
            "node `/concat` (Concat)",
            "axis 9223372036854775807 is out of range for rank 4",
        ),
        (
            "gather_index",
            "node `/gather` (Gather)",
            "index 9223372036854775807 is out of range for dimension 4",
        ),
        (
            "transpose_perm",
            "node `/transpose` (Transpose)",
            "perm [0, 0, 1, 2] is not a permutation of 0..4",
        ),
        (
            "gemm_sizes",
            "node `/gemm` (Gemm)",
            "cannot multiply [1, 4] by [3, 5]",
        ),
        (
            "softmax_axis",
            "node `/softmax` (Softmax)",
            "axis -9223372036854775808 is out of range for rank 4",
        ),
        ("slice_step", "node `/slice` (Slice)", "step 0 on axis 2"),
        (
            "space_to_depth_block",
            "node `/s2d` (SpaceToDepth)",
            "blocksize must be positive",
        ),
        ("where_shapes", "node `/where` (Where)", "do not broadcast"),
        (
            "instance_norm_channels",
            "node `/norm` (InstanceNormalization)",
            "scale [3] and bias [3] must be [1]",
        ),
        // A window of (2^63 - 1)^2 taps over a 4 x 4 input: refused before any work, so the
        // dry run's estimate of a pool's work is what it reads, not its window.
        (
            "max_pool_kernel",
            "node `/pool` (MaxPool)",
            "exceeds 1048576",
        ),
        // Refused before too, by the scratch's sizing, with no help line.
        ("conv_stride", "node `/conv` (Conv)", "exceeds 1048576"),
    ] {
        let message = generate(&fixture(&format!("hostile_{name}")))
            .expect_err(&format!("{name} must be refused"));
        for part in [node, "the kernel refuses it", why, "= help: every run"] {
            assert!(
                message.contains(part),
                "{name}: `{part}` missing from: {message}"
            );
        }
    }
}

#[test]
fn issue_36_nodes_that_read_values_are_not_run_on_zeros() {
    // An int64 division (the kernel refuses a zero divisor) and a Resize whose scales are an
    // input (a zero scale is refused): zeros are not their inputs, so they build.
    for name in ["int_div", "resize_scales"] {
        generate(&fixture(&format!("hostile_{name}"))).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn issue_36_the_build_time_checks_accept_every_real_onnx_model() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut models: Vec<PathBuf> = [
        "memplan-runner/models/default.onnx",
        "memplan-runner/tests/fixtures/default_external.onnx",
        "memplan-runner/tests/fixtures/two_inputs.onnx",
        "memplan-runner/tests/fixtures/unseen_cnn.onnx",
        "memplan-runner/tests/fixtures/unseen_transformer.onnx",
        "memplan-runner/tests/fixtures/onnx_int8/qdq_u8.onnx",
        "memplan-runner/tests/fixtures/onnx_int8/qop_cnn_u8s8.onnx",
        "memplan-runner/tests/fixtures/onnx_int8/qop_s8s8.onnx",
        "memplan-runner/tests/fixtures/onnx_int8/qop_u8s8.onnx",
        "tests/network-crate/models/awkward_names.onnx",
    ]
    .iter()
    .map(|p| root.join(p))
    .collect();
    let shared = root.join("../shared/bench");
    for name in [
        "runnable/mobilenet_v2.onnx",
        "runnable/mobilenet_v3_small.onnx",
        "runnable/squeezenet1_1.onnx",
        "runnable/bert_mini.onnx",
        "tinyml/kws_ref_model.onnx",
    ] {
        let path = shared.join(name);
        if path.is_file() {
            models.push(path);
        } else {
            println!("skipped: {} is absent", path.display());
        }
    }
    for path in models {
        let started = std::time::Instant::now();
        generate(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        println!("{}: built in {:.2?}", path.display(), started.elapsed());
    }
}
