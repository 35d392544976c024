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

/// The runner's TFLite models (each checked against LiteRT there) and the keyword spotters.
fn real_models() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut models: Vec<PathBuf> =
        std::fs::read_dir(root.join("../memplan-runner/tests/fixtures/tflite"))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|p| {
                p.extension().is_some_and(|e| e == "tflite")
                    && !p
                        .file_name()
                        .unwrap()
                        .to_string_lossy()
                        .starts_with("unsupported")
            })
            .collect();
    models.sort();
    for name in ["kws_ref_model.tflite", "kws_ref_model_float32.tflite"] {
        let path = root.join("../../shared/bench/tinyml").join(name);
        if path.is_file() {
            models.push(path);
        } else {
            println!("skipped: {} is absent", path.display());
        }
    }
    models
}

#[test]
fn issue_36_the_build_time_checks_accept_every_real_model() {
    let models = real_models();
    assert!(models.len() >= 29, "{models:?}");
    for path in models {
        let name = path
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .replace('.', "_");
        let dir = dir(&format!("real_{name}"));
        let started = std::time::Instant::now();
        Network::from_tflite(&path)
            .name(&name)
            .out_dir(&dir)
            .emit_rerun_if_changed(false)
            .generate()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        println!("{name}: built in {:.2?}", started.elapsed());
    }
}

fn f32s(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// `y = CONV_2D(x, filter, bias)`, float32: x `[1, 4, 4, 1]`, a 3 x 3 filter of 2 output
/// channels, `bias` values, VALID padding with `stride` and `dilation`; y as TFLite computes it
/// for stride and dilation 1 (`[1, 2, 2, 2]`).
fn conv(stride: [i32; 2], dilation: [i32; 2], bias: usize) -> FileBuilder {
    let mut file = FileBuilder::new();
    let x = file.tensor("x", F32, &[1, 4, 4, 1]);
    let f = file.constant("filter", F32, &[2, 3, 3, 1], &f32s(&[0.5; 18]));
    let b = file.constant("bias", F32, &[bias as i32], &f32s(&vec![1.0; bias]));
    let y = file.tensor("y", F32, &[1, 2, 2, 2]);
    let options = schema::Conv2DOptions {
        padding: schema::Padding::Valid,
        stride_h: stride[0],
        stride_w: stride[1],
        dilation_h_factor: dilation[0],
        dilation_w_factor: dilation[1],
        ..schema::Conv2DOptions::default()
    };
    file.operator(
        "CONV_2D",
        &[x, f, b],
        &[y],
        Some(BuiltinOptions::Conv2DOptions(Box::new(options))),
    );
    file.inputs = vec![x];
    file.outputs = vec![y];
    file
}

#[test]
fn issue_36_convolution_strides_dilations_and_biases_are_checked_at_build_time() {
    generate("conv_ok", &conv([1, 1], [1, 1], 2)).unwrap();
    for (name, file, part) in [
        (
            "conv_stride_0",
            conv([0, 1], [1, 1], 2),
            "its stride is 0 x 1",
        ),
        (
            "conv_stride_neg",
            conv([1, -2], [1, 1], 2),
            "its stride is 1 x 0",
        ),
        (
            "conv_dilation_0",
            conv([1, 1], [0, 1], 2),
            "its dilation is 0 x 1",
        ),
        (
            "conv_short_bias",
            conv([1, 1], [1, 1], 1),
            "the bias `bias` has shape [1]; it must have one value per output channels, [2]",
        ),
    ] {
        refused(name, &file, &["operator 0 (CONV_2D)", part]);
    }
}

/// `y = MAX_POOL_2D(x)` of float32 x `[1, 4, 4, 1]` with a `filter` window, SAME padding,
/// stride 1.
fn pool(filter: [i32; 2], stride: i32) -> FileBuilder {
    let mut file = FileBuilder::new();
    let x = file.tensor("x", F32, &[1, 4, 4, 1]);
    let y = file.tensor("y", F32, &[1, 4, 4, 1]);
    let options = schema::Pool2DOptions {
        padding: schema::Padding::Same,
        stride_h: stride,
        stride_w: stride,
        filter_height: filter[0],
        filter_width: filter[1],
        ..schema::Pool2DOptions::default()
    };
    file.operator(
        "MAX_POOL_2D",
        &[x],
        &[y],
        Some(BuiltinOptions::Pool2DOptions(Box::new(options))),
    );
    file.inputs = vec![x];
    file.outputs = vec![y];
    file
}

#[test]
fn issue_36_a_pool_window_of_zero_or_far_past_its_input_is_refused() {
    generate("pool_ok", &pool([3, 3], 1)).unwrap();
    // A window larger than the input still builds when SAME padding covers it: 9 over 4.
    generate("pool_padded", &pool([9, 9], 1)).unwrap();
    refused(
        "pool_filter_0",
        &pool([0, 3], 1),
        &["operator 0 (MAX_POOL_2D)", "its filter is 0 x 3"],
    );
    refused(
        "pool_stride_0",
        &pool([3, 3], 0),
        &["operator 0 (MAX_POOL_2D)", "its stride is 0 x 0"],
    );
    // The run-time hang: every output visited (2^31 - 1)^2 taps.
    let message = refused(
        "pool_huge",
        &pool([i32::MAX, i32::MAX], 1),
        &[
            "operator 0 (MAX_POOL_2D)",
            "its window 2147483647 x 2147483647 is larger than its 4 x 4 input padded on both sides (9 x 9)",
        ],
    );
    assert!(!message.contains("the kernel refuses it"), "{message}");
    refused(
        "pool_2_30",
        &pool([1 << 30, 1], 1),
        &["its window 1073741824 x 1"],
    );
}

/// `y = op(a, b)`, int8 `[1, 4]`, with scales `scales` (a, b, y) and zero points 0.
fn int8_binary(op: &str, scales: [f32; 3]) -> FileBuilder {
    let mut file = FileBuilder::new();
    let a = file.tensor("a", I8, &[1, 4]);
    let b = file.tensor("b", I8, &[1, 4]);
    let y = file.tensor("y", I8, &[1, 4]);
    for (t, scale) in [a, b, y].into_iter().zip(scales) {
        file.quantize(t, &[scale], &[0], 0);
    }
    let options = if op == "MUL" {
        BuiltinOptions::MulOptions(Box::default())
    } else {
        BuiltinOptions::AddOptions(Box::default())
    };
    file.operator(op, &[a, b], &[y], Some(options));
    file.inputs = vec![a, b];
    file.outputs = vec![y];
    file
}

#[test]
fn issue_36_int8_arithmetic_scales_litert_refuses_are_refused() {
    // ADD: LiteRT's output multiplier 2 max(s_a, s_b) / (2^20 s_y) must be below 1 (its
    // QuantizeMultiplierSmallerThanOneExp aborts otherwise); both built before.
    generate("add_scales_ok", &int8_binary("ADD", [1.0, 1.0, 1.0])).unwrap();
    refused(
        "add_scales_far",
        &int8_binary("ADD", [1e-30, 1e10, 1.0]),
        &[
            "operator 0 (ADD)",
            "its output scale 1.0 is too small for its input scales 1e-30 and 10000000000.0",
        ],
    );
    // MUL: s_a s_b / s_y past float32.
    refused(
        "mul_scales_inf",
        &int8_binary("MUL", [1e30, 1e30, 1e-30]),
        &["operator 0 (MUL)", "is not a finite float32 (inf)"],
    );
}

#[test]
fn issue_36_a_reshape_litert_refuses_is_refused() {
    // x [1, 4] -> y [2, 2], the requested shape in a constant operand or in the options.
    let reshape = |operand: Option<&[i32]>, new_shape: Option<Vec<i32>>| {
        let mut file = FileBuilder::new();
        let x = file.tensor("x", F32, &[1, 4]);
        let mut inputs = vec![x];
        if let Some(values) = operand {
            inputs.push(file.ints("shape", values));
        }
        let y = file.tensor("y", F32, &[2, 2]);
        let options = schema::ReshapeOptions { new_shape };
        file.operator(
            "RESHAPE",
            &inputs,
            &[y],
            Some(BuiltinOptions::ReshapeOptions(Box::new(options))),
        );
        file.inputs = vec![x];
        file.outputs = vec![y];
        file
    };
    generate("reshape_ok", &reshape(Some(&[2, -1]), None)).unwrap();
    generate("reshape_options_ok", &reshape(None, Some(vec![-1, 2]))).unwrap();
    // The operand wins over stale options, as in LiteRT.
    generate(
        "reshape_stale_options",
        &reshape(Some(&[2, 2]), Some(vec![3])),
    )
    .unwrap();
    // Two -1s, another element count, a size below -1 (all built before).
    for (name, operand, new_shape, asked) in [
        (
            "reshape_two_stretches",
            Some(&[-1, -1][..]),
            None,
            "[-1, -1]",
        ),
        (
            "reshape_options_max",
            None,
            Some(vec![i32::MAX, -1]),
            "[2147483647, -1]",
        ),
        ("reshape_negative", Some(&[-2, -2][..]), None, "[-2, -2]"),
        ("reshape_zero_stretch", Some(&[0, -1][..]), None, "[0, -1]"),
    ] {
        refused(
            name,
            &reshape(operand, new_shape),
            &[
                "operator 0 (RESHAPE)",
                &format!("it asks for shape {asked} for the 4 elements of `x` [1, 4]"),
            ],
        );
    }
}

#[test]
fn issue_36_an_int8_average_past_what_an_int32_sum_holds_is_refused() {
    // A global int8 average over `side` x `side`: the kernel's int32 sum, rounded with `-+ n / 2`,
    // holds 4088 x 4088 inputs at -128 but not 4089 x 4089. Too large for the dry run, the
    // latter built, and the rounded sum overflowed (a panic in a debug build of the user's crate, a
    // wrong mean in release; LiteRT's int32 sum overflows too).
    let average = |side: i32| {
        let mut file = FileBuilder::new();
        let x = file.tensor("x", I8, &[1, side, side, 1]);
        let y = file.tensor("y", I8, &[1, 1, 1, 1]);
        for t in [x, y] {
            file.quantize(t, &[0.5], &[0], 0);
        }
        let options = schema::Pool2DOptions {
            padding: schema::Padding::Valid,
            stride_h: 1,
            stride_w: 1,
            filter_height: side,
            filter_width: side,
            ..schema::Pool2DOptions::default()
        };
        file.operator(
            "AVERAGE_POOL_2D",
            &[x],
            &[y],
            Some(BuiltinOptions::Pool2DOptions(Box::new(options))),
        );
        file.inputs = vec![x];
        file.outputs = vec![y];
        file
    };
    generate("average_4088", &average(4088)).unwrap();
    refused(
        "average_4089",
        &average(4089),
        &[
            "operator 0 (AVERAGE_POOL_2D)",
            "reads up to 16719921 inputs (4089 x 4089 of its 4089 x 4089 input)",
            "past 16711935 of them",
        ],
    );
}

/// One `builtin` node reading `x` (float32, `x_shape`) and the int32 constant `ints` (when
/// given), writing float32 `y` of `y_shape`.
fn one_node(
    builtin: &str,
    x_shape: &[i32],
    ints: Option<&[i32]>,
    y_shape: &[i32],
    options: Option<BuiltinOptions>,
) -> FileBuilder {
    let mut file = FileBuilder::new();
    let x = file.tensor("x", F32, x_shape);
    let mut inputs = vec![x];
    if let Some(values) = ints {
        let c = file.ints("operand", values);
        file.tensors[c as usize].shape = Some(if builtin == "PAD" {
            vec![i32::try_from(values.len() / 2).unwrap(), 2]
        } else {
            vec![i32::try_from(values.len()).unwrap()]
        });
        inputs.push(c);
    }
    let y = file.tensor("y", F32, y_shape);
    file.operator(builtin, &inputs, &[y], options);
    file.inputs = vec![x];
    file.outputs = vec![y];
    file
}

#[test]
fn issue_36_what_every_run_would_refuse_is_refused_by_the_build() {
    let reducer = || Some(BuiltinOptions::ReducerOptions(Box::default()));
    let concat = |axis: i32| {
        Some(BuiltinOptions::ConcatenationOptions(Box::new(
            schema::ConcatenationOptions {
                axis,
                ..schema::ConcatenationOptions::default()
            },
        )))
    };
    let fc = || Some(BuiltinOptions::FullyConnectedOptions(Box::default()));
    // Each accepted form first, so the refusal is the operator's, not the helper's.
    generate(
        "pad_ok",
        &one_node("PAD", &[2, 3], Some(&[1, 0, 0, 2]), &[3, 5], None),
    )
    .unwrap();
    generate(
        "mean_ok",
        &one_node("MEAN", &[2, 3], Some(&[1]), &[2], reducer()),
    )
    .unwrap();
    generate(
        "transpose_ok",
        &one_node("TRANSPOSE", &[2, 3], Some(&[1, 0]), &[3, 2], None),
    )
    .unwrap();
    generate(
        "reshape_ok",
        &one_node("RESHAPE", &[2, 3], None, &[6], None),
    )
    .unwrap();
    generate(
        "concat_ok",
        &one_node("CONCATENATION", &[2, 3], None, &[2, 3], concat(1)),
    )
    .unwrap();
    for (name, file, parts) in [
        (
            "pad_negative",
            one_node("PAD", &[2, 3], Some(&[-1, 0, 0, 2]), &[1, 5], None),
            &[
                "operator 0 (PAD): its paddings `operand` [-1, 0, 0, 2] (before and after, per axis, none negative) do not take `x` [2, 3] to `y` [1, 5]",
            ][..],
        ),
        (
            "pad_short",
            one_node("PAD", &[2, 3], Some(&[1, 0]), &[3, 3], None),
            &["operator 0 (PAD): its paddings `operand` [1, 0]"],
        ),
        (
            "mean_axis_7",
            one_node("MEAN", &[2, 3], Some(&[7]), &[2], reducer()),
            &[
                "operator 0 (MEAN): its axis 7 (in `operand`) is out of range for `x` of 2 dimensions",
            ],
        ),
        (
            "transpose_bad_perm",
            one_node("TRANSPOSE", &[2, 3], Some(&[0, 0]), &[2, 3], None),
            &[
                "operator 0 (TRANSPOSE): its permutation `operand` [0, 0] is not a permutation of the axes of `x` [2, 3]",
            ],
        ),
        (
            "reshape_count",
            one_node("RESHAPE", &[2, 3], None, &[7], None),
            &[
                "operator 0 (RESHAPE): it reshapes `x` [2, 3] to `y` [7], another number of elements",
            ],
        ),
        (
            "concat_axis_7",
            one_node("CONCATENATION", &[2, 3], None, &[2, 3], concat(7)),
            &[
                "operator 0 (CONCATENATION): axis 7 is out of range for its output `y` of 2 dimensions",
            ],
        ),
        (
            "rank_9",
            one_node("RELU", &[1; 9], None, &[1; 9], None),
            &["operator 0 (RELU): tensor `x` has 9 dimensions; the kernels take at most 8"],
        ),
    ] {
        let message = refused(name, &file, parts);
        println!("{name}: {message}");
    }
    // Int64 paddings near the limit: the kernel would overflow adding them to the input's size
    // (a panic in the dry run, which runs it in the build script).
    let mut file = one_node("PAD", &[2, 3], None, &[3, 5], None);
    let pads: Vec<u8> = [1i64, 0, i64::MAX, i64::MAX]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let p = file.constant("paddings", TensorType::Int64, &[2, 2], &pads);
    file.operators[0].inputs = Some(vec![0, p]);
    refused(
        "pad_i64_max",
        &file,
        &[
            "operator 0 (PAD): its paddings `paddings` [1, 0, 9223372036854775807, 9223372036854775807]",
        ],
    );
    // FULLY_CONNECTED: weights [3, 2] against an input of 5 elements.
    let mut file = FileBuilder::new();
    let x = file.tensor("x", F32, &[1, 5]);
    let w = file.constant("w", F32, &[3, 2], &f32s(&[1.0; 6]));
    let y = file.tensor("y", F32, &[1, 3]);
    file.operator("FULLY_CONNECTED", &[x, w, -1], &[y], fc());
    file.inputs = vec![x];
    file.outputs = vec![y];
    refused(
        "fc_sizes",
        &file,
        &[
            "operator 0 (FULLY_CONNECTED): its input `x` [1, 5] is not a whole number of rows of the weights' depth 2",
        ],
    );
    // CONCATENATION without inputs.
    let mut file = FileBuilder::new();
    let x = file.tensor("x", F32, &[2]);
    let y = file.tensor("y", F32, &[2]);
    file.operator("RELU", &[x], &[y], None);
    let z = file.tensor("z", F32, &[2]);
    file.operator("CONCATENATION", &[], &[z], concat(0));
    file.inputs = vec![x];
    file.outputs = vec![y, z];
    refused(
        "concat_no_inputs",
        &file,
        &["operator 1 (CONCATENATION): it has no inputs"],
    );
    // BATCH_MATMUL of [2, 3] by [4, 5].
    let mut file = FileBuilder::new();
    let a = file.tensor("a", F32, &[2, 3]);
    let b = file.tensor("b", F32, &[4, 5]);
    let y = file.tensor("y", F32, &[2, 5]);
    let options = BuiltinOptions::BatchMatMulOptions(Box::default());
    file.operator("BATCH_MATMUL", &[a, b], &[y], Some(options));
    file.inputs = vec![a, b];
    file.outputs = vec![y];
    refused(
        "batch_matmul_k",
        &file,
        &[
            "operator 0 (BATCH_MATMUL): `a` [2, 3] and `b` [4, 5] do not multiply: 3 columns against 4 rows",
        ],
    );
}

/// `int8_add` with the output's scale `scale`.
fn int8_add_scaled(scale: f32) -> FileBuilder {
    let mut file = int8_add([0, 0, 0]);
    file.quantize(2, &[scale], &[0], 0);
    file
}

#[test]
fn issue_36_zero_or_nan_scales_and_a_nan_softmax_beta_are_refused() {
    generate("add_scale_ok", &int8_add_scaled(0.25)).unwrap();
    for (name, scale, shown) in [
        ("add_scale_0", 0.0, "scale 0;"),
        ("add_scale_nan", f32::NAN, "scale NaN;"),
        ("add_scale_negative", -1.0, "scale -1;"),
        ("add_scale_inf", f32::INFINITY, "scale inf;"),
    ] {
        refused(
            name,
            &int8_add_scaled(scale),
            &[
                "operator 0 (ADD)",
                "tensor `y` has",
                shown,
                "a scale must be a positive, finite number",
            ],
        );
    }
    let softmax = |beta: f32| {
        let options = schema::SoftmaxOptions { beta };
        let mut file = one_node(
            "SOFTMAX",
            &[1, 4],
            None,
            &[1, 4],
            Some(BuiltinOptions::SoftmaxOptions(Box::new(options))),
        );
        file.inputs = vec![0];
        file
    };
    generate("softmax_ok", &softmax(1.0)).unwrap();
    refused(
        "softmax_nan",
        &softmax(f32::NAN),
        &["operator 0 (SOFTMAX): its beta is NaN; it must be a finite number"],
    );
}

#[test]
fn issue_36_quantized_dimension_is_validated_as_litert_does() {
    // A per-axis quantized filter [2, 1, 1, 1] of a CONV_2D: two scales along axis `axis`.
    let per_axis = |axis: i32, scales: &[f32], zero_points: &[i64]| {
        let mut file = FileBuilder::new();
        let x = file.tensor("x", I8, &[1, 2, 2, 1]);
        let f = file.constant("filter", I8, &[2, 1, 1, 1], &[1, 2]);
        let y = file.tensor("y", I8, &[1, 2, 2, 2]);
        file.quantize(x, &[0.5], &[0], 0);
        file.quantize(y, &[0.5], &[0], 0);
        file.quantize(f, scales, zero_points, axis);
        let options = schema::Conv2DOptions {
            stride_h: 1,
            stride_w: 1,
            dilation_h_factor: 1,
            dilation_w_factor: 1,
            ..schema::Conv2DOptions::default()
        };
        file.operator(
            "CONV_2D",
            &[x, f, -1],
            &[y],
            Some(BuiltinOptions::Conv2DOptions(Box::new(options))),
        );
        file.inputs = vec![x];
        file.outputs = vec![y];
        file
    };
    generate("per_axis_ok", &per_axis(0, &[0.5, 0.25], &[0, 0])).unwrap();
    for (name, file, part) in [
        (
            "quantized_dimension_negative",
            per_axis(-1, &[0.5, 0.25], &[0, 0]),
            "tensor `filter` has quantized dimension -1, which is negative",
        ),
        (
            "quantized_dimension_past_rank",
            per_axis(4, &[0.5, 0.25], &[0, 0]),
            "tensor `filter` has quantized dimension 4, outside its shape [2, 1, 1, 1]",
        ),
        (
            "quantized_dimension_wrong_axis",
            per_axis(3, &[0.5, 0.25], &[0, 0]),
            "tensor `filter` has 2 scales along quantized dimension 3, but its shape is [2, 1, 1, 1]",
        ),
        (
            "zero_points_long",
            per_axis(0, &[0.5, 0.25], &[0, 0, 0]),
            "tensor `filter` has 3 zero points for 2 scales",
        ),
    ] {
        refused(name, &file, &[part]);
        let error = memplan_tflite::read("q.tflite", &file.bytes()).unwrap_err();
        assert!(error.message.contains(part), "{}", error.message);
    }
}

#[test]
fn issue_36_from_file_chooses_the_format_by_extension_first() {
    let dir = dir("extension_first");
    // An ONNX ModelProto (ir_version 8, producer `TFL3`) whose bytes 4..8 are `TFL3`.
    let onnx = dir.join("producer.onnx");
    std::fs::write(&onnx, b"\x08\x08\x12\x04TFL3").unwrap();
    let message = Network::from_file(&onnx)
        .out_dir(&dir)
        .emit_rerun_if_changed(false)
        .generate()
        .unwrap_err()
        .to_string();
    assert!(
        !message.contains("TensorFlow Lite"),
        "read as TFLite: {message}"
    );
    // A TFLite file under another name is still found by its identifier.
    let tflite = dir.join("relu.model");
    std::fs::write(&tflite, one_node("RELU", &[4], None, &[4], None).bytes()).unwrap();
    Network::from_file(&tflite)
        .name("relu")
        .out_dir(&dir)
        .emit_rerun_if_changed(false)
        .generate()
        .unwrap();
    // Given to the ONNX reader, it is still recognised.
    let message = Network::from_onnx(&tflite)
        .out_dir(&dir)
        .emit_rerun_if_changed(false)
        .generate()
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("it is a TensorFlow Lite flatbuffer"),
        "{message}"
    );
}
