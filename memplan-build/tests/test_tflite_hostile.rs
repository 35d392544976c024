//! Hostile TFLite files (issue 36): values a converter never writes but a file may hold, each
//! written here with `memplan_tflite::fixture`, must be build errors that name the operator and
//! the tensor and say what to do. Never a panic: these tests run with overflow checks, as a
//! build script does under a plain `cargo build`.

use std::path::{Path, PathBuf};

use memplan_build::Network;
use memplan_tflite::fixture::FileBuilder;
use memplan_tflite::fixture::schema::{self, BuiltinOptions, TensorType};

const I8: TensorType = TensorType::Int8;
const F32: TensorType = TensorType::Float32;

fn dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("tflite-hostile")
        .join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `file` as `<name>.tflite` and generates it: the build's result, as its message.
fn generate(name: &str, file: &FileBuilder) -> Result<(), String> {
    let dir = dir(name);
    let path = dir.join(format!("{name}.tflite"));
    std::fs::write(&path, file.bytes()).unwrap();
    Network::from_tflite(&path)
        .name(name)
        .out_dir(&dir)
        .emit_rerun_if_changed(false)
        .generate()
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The build's error, which must contain every one of `parts` and a help line.
fn refused(name: &str, file: &FileBuilder, parts: &[&str]) -> String {
    let message = generate(name, file).expect_err("the file must be refused");
    for part in parts {
        assert!(message.contains(part), "`{part}` missing from: {message}");
    }
    assert!(message.contains("= help:"), "no help in: {message}");
    message
}

fn add_options() -> Option<BuiltinOptions> {
    Some(BuiltinOptions::AddOptions(Box::default()))
}

/// `y = ADD(a, b)`, all int8 `[1, 4]` with scale 0.5 and the given zero points.
fn int8_add(zero_points: [i64; 3]) -> FileBuilder {
    let mut file = FileBuilder::new();
    let a = file.tensor("a", I8, &[1, 4]);
    let b = file.tensor("b", I8, &[1, 4]);
    let y = file.tensor("y", I8, &[1, 4]);
    for (t, z) in [a, b, y].into_iter().zip(zero_points) {
        file.quantize(t, &[0.5], &[z], 0);
    }
    file.operator("ADD", &[a, b], &[y], add_options());
    file.inputs = vec![a, b];
    file.outputs = vec![y];
    file
}

#[test]
fn issue_36_an_int8_zero_point_out_of_range_is_refused_not_negated() {
    // The plain file builds: the fixture and the helper are sound.
    generate("add_ok", &int8_add([1, -2, 3])).unwrap();
    // `-zero_point` of i32::MIN overflowed (a panic in a build script).
    refused(
        "add_min",
        &int8_add([i64::from(i32::MIN), 0, 0]),
        &[
            "operator 0 (ADD)",
            "int8 tensor `a` has zero point -2147483648, outside -128..=127",
        ],
    );
    refused(
        "add_i64",
        &int8_add([0, 0, i64::MIN]),
        &["operator 0 (ADD)", "tensor `y` has zero point"],
    );
    refused(
        "add_128",
        &int8_add([0, 128, 0]),
        &["tensor `b` has zero point 128"],
    );
}

/// `y = <builtin>(x)`, int8 `[1, 8]`, with the given quantizations of x and y.
fn int8_unary(builtin: &str, x_q: (f32, i64), y_q: (f32, i64)) -> FileBuilder {
    let mut file = FileBuilder::new();
    let x = file.tensor("x", I8, &[1, 8]);
    let y = file.tensor("y", I8, &[1, 8]);
    file.quantize(x, &[x_q.0], &[x_q.1], 0);
    file.quantize(y, &[y_q.0], &[y_q.1], 0);
    file.operator(builtin, &[x], &[y], None);
    file.inputs = vec![x];
    file.outputs = vec![y];
    file
}

#[test]
fn issue_36_logistic_and_relu6_zero_points_are_checked() {
    generate(
        "logistic_ok",
        &int8_unary("LOGISTIC", (0.1, 3), (1.0 / 256.0, -128)),
    )
    .unwrap();
    refused(
        "logistic_min",
        &int8_unary("LOGISTIC", (0.1, i64::from(i32::MIN)), (1.0 / 256.0, -128)),
        &[
            "operator 0 (LOGISTIC)",
            "tensor `x` has zero point -2147483648",
        ],
    );
    refused(
        "relu6_max",
        &int8_unary("RELU6", (0.1, 0), (0.1, i64::from(i32::MAX))),
        &["operator 0 (RELU6)", "tensor `y` has zero point 2147483647"],
    );
    // A tiny output scale puts 6.0 past int32 before the zero point is added: saturated, not a
    // panic, and the range stays int8's.
    generate(
        "relu6_tiny_scale",
        &int8_unary("RELU6", (0.1, 0), (1e-30, 127)),
    )
    .unwrap();
}

/// `y = STRIDED_SLICE(x, begin, end, strides)` of float32 `x` `[4]` with int64 begin, end and
/// strides, and `offset`.
fn slice(begin: i64, end: i64, stride: i64, offset: bool, out: i32) -> FileBuilder {
    let mut file = FileBuilder::new();
    let x = file.tensor("x", F32, &[4]);
    let y = file.tensor("y", F32, &[out]);
    let int64 = |file: &mut FileBuilder, name: &str, v: i64| {
        file.constant(name, TensorType::Int64, &[1], &v.to_le_bytes())
    };
    let b = int64(&mut file, "begin", begin);
    let e = int64(&mut file, "end", end);
    let s = int64(&mut file, "strides", stride);
    let options = schema::StridedSliceOptions {
        offset,
        ..schema::StridedSliceOptions::default()
    };
    file.operator(
        "STRIDED_SLICE",
        &[x, b, e, s],
        &[y],
        Some(BuiltinOptions::StridedSliceOptions(Box::new(options))),
    );
    file.inputs = vec![x];
    file.outputs = vec![y];
    file
}

#[test]
fn issue_36_strided_slice_values_near_the_int64_limits_never_overflow() {
    generate("slice_ok", &slice(1, 4, 2, false, 2)).unwrap();
    // A stride longer than the axis takes one element, however long.
    generate("slice_long_stride", &slice(0, 4, i64::MAX, false, 1)).unwrap();
    generate("slice_min_stride", &slice(3, -5, i64::MIN, false, 1)).unwrap();
    generate("slice_min_begin", &slice(i64::MIN, i64::MAX, 1, false, 4)).unwrap();
    // `begin + end` with `offset` overflowed.
    refused(
        "slice_offset",
        &slice(i64::MAX, i64::MAX, 1, true, 1),
        &[
            "operator 0 (STRIDED_SLICE)",
            "begin 9223372036854775807 plus end 9223372036854775807 on axis 0 overflows int64",
        ],
    );
}

#[test]
fn issue_36_a_constant_whose_element_count_wraps_is_refused_by_the_reader() {
    let mut file = FileBuilder::new();
    let a = file.tensor("a", F32, &[1, 4]);
    // 2^31 - 1 cubed, times 4 bytes: more than 2^64 bytes, with 16 bytes of data.
    let huge = i32::MAX;
    let b = file.constant("b", F32, &[huge, huge, huge], &[0; 16]);
    let y = file.tensor("y", F32, &[1, 4]);
    file.operator("ADD", &[a, b], &[y], add_options());
    file.inputs = vec![a];
    file.outputs = vec![y];
    let shape =
        "tensor `b` has shape [2147483647, 2147483647, 2147483647], whose size in bytes overflows";
    refused("wrapping_constant", &file, &[shape]);
    // The reader alone says the same.
    let error = memplan_tflite::read("wrapping.tflite", &file.bytes()).unwrap_err();
    assert!(error.message.contains(shape), "{}", error.message);
}

#[test]
fn issue_36_fully_connected_weight_zero_point_is_checked() {
    let mut file = FileBuilder::new();
    let x = file.tensor("x", I8, &[1, 2]);
    let w = file.constant("w", I8, &[3, 2], &[1; 6]);
    let y = file.tensor("y", I8, &[1, 3]);
    file.quantize(x, &[0.5], &[0], 0);
    file.quantize(y, &[0.5], &[0], 0);
    file.quantize(w, &[0.25], &[i64::MIN], 0);
    file.operator(
        "FULLY_CONNECTED",
        &[x, w, -1],
        &[y],
        Some(BuiltinOptions::FullyConnectedOptions(Box::default())),
    );
    file.inputs = vec![x];
    file.outputs = vec![y];
    refused(
        "fc_weight_zero_point",
        &file,
        &[
            "operator 0 (FULLY_CONNECTED)",
            "int8 tensor `w` has zero point -9223372036854775808",
        ],
    );
}

/// `y = x + c0 + c1 + ...`: `n` float32 constants of `block` bytes, ADDed one after the other
/// to `x`, on `n` buffers that name bytes `k * step..` of one block after the flatbuffer
/// (`Buffer.offset` and `size`): with `step` 0 every constant is the same bytes.
fn constants_on_one_block(n: usize, block: usize, step: usize) -> Vec<u8> {
    let elements = i32::try_from(block / 4).unwrap();
    let mut file = FileBuilder::new();
    let x = file.tensor("x", F32, &[elements]);
    let mut sum = x;
    for k in 0..n {
        let c = file.tensor(&format!("c{k}"), F32, &[elements]);
        // A placeholder offset as wide as the real one (a field at its default is left out).
        file.buffers.push(schema::Buffer {
            data: None,
            offset: 1 << 40,
            size: block as u64,
        });
        file.tensors[c as usize].buffer = u32::try_from(file.buffers.len() - 1).unwrap();
        let y = file.tensor(&format!("y{k}"), F32, &[elements]);
        file.operator("ADD", &[sum, c], &[y], add_options());
        sum = y;
    }
    file.inputs = vec![x];
    file.outputs = vec![sum];
    let offset = file.bytes().len().div_ceil(16) * 16;
    for (k, b) in file.buffers.iter_mut().skip(1).enumerate() {
        b.offset = (offset + k * step) as u64;
    }
    let mut bytes = file.bytes();
    assert!(bytes.len() <= offset);
    bytes.resize(offset + block + n * step, 0);
    bytes
}

fn generate_bytes(name: &str, bytes: &[u8]) -> Result<memplan_build::Generated, String> {
    let dir = dir(name);
    let path = dir.join(format!("{name}.tflite"));
    std::fs::write(&path, bytes).unwrap();
    Network::from_tflite(&path)
        .name(name)
        .out_dir(&dir)
        .emit_rerun_if_changed(false)
        .generate()
        .map_err(|e| e.to_string())
}

#[test]
fn issue_36_constants_sharing_their_bytes_are_one_constant() {
    // 200 constants of 64 KiB, all the same bytes: one constant in the blob, not 12.8 MB.
    let generated = generate_bytes("one_block", &constants_on_one_block(200, 64 << 10, 0)).unwrap();
    assert!(
        (64 << 10..(64 << 10) + 64).contains(&generated.weight_bytes),
        "{} bytes of weights",
        generated.weight_bytes
    );
}

#[test]
fn issue_36_constants_past_the_files_budget_are_refused() {
    // 300 constants of 1 MiB, each 4 bytes further into one block of 1 MiB + 1.2 KB: 300 MiB of
    // distinct constants from a file of about 1.1 MB. The build stops at the budget (16 times
    // the file, plus 16 MiB), naming the constant that exceeded it.
    let bytes = constants_on_one_block(300, 1 << 20, 4);
    assert!(bytes.len() < 1_200_000, "{}", bytes.len());
    let message = generate_bytes("overlapping", &bytes).unwrap_err();
    assert!(
        message.contains("(ADD): the constants would hold more than")
            && message.contains("when it comes to `c")
            && message.contains("(16 times the file's")
            && message.contains("= help:"),
        "{message}"
    );
}
