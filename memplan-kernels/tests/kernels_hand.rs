//! Hand-checked values: small cases whose expected outputs are worked out by hand (in the
//! comments), one or more per operator family and attribute path, plus in-place and error
//! cases. Independent of the ONNX Runtime fixtures.

// A `KernelError` carries its message inline (no heap to box it in), as in the crate.
#![allow(clippy::result_large_err)]

use memplan_kernels::{Attr, Attrs, Data, DataMut, Input, KernelError, Output, scratch_len};

fn attrs<'a>(list: &'a [(&'a str, Attr<'a>)]) -> Attrs<'a> {
    Attrs::new(list)
}

/// Runs one node as `memplan_kernels::run` does, with the scratch memory `scratch_len` asks for.
fn run(
    op: &str,
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let in_shapes: Vec<Option<&[usize]>> = inputs
        .iter()
        .map(|i| match i {
            Input::Absent => None,
            Input::Value { shape, .. } | Input::InPlace { shape, .. } => Some(*shape),
        })
        .collect();
    let out_shapes: Vec<&[usize]> = outputs.iter().map(|o| o.shape).collect();
    let mut scratch = vec![0u64; scratch_len(op, attrs, &in_shapes, &out_shapes)?];
    memplan_kernels::run(op, attrs, inputs, outputs, &mut scratch)
}

/// An input: shape and data.
enum T<'a> {
    F(&'a [usize], &'a [f32]),
    I(&'a [usize], &'a [i64]),
    None,
}

fn inputs<'a>(list: &'a [T<'a>]) -> Vec<Input<'a>> {
    list.iter()
        .map(|t| match t {
            T::F(shape, data) => Input::Value {
                shape,
                data: Data::F32(data),
            },
            T::I(shape, data) => Input::Value {
                shape,
                data: Data::I64(data),
            },
            T::None => Input::Absent,
        })
        .collect()
}

/// Runs `op` with one f32 output of `shape`.
fn f32_out(op: &str, a: &Attrs, ins: &[T<'_>], shape: &[usize]) -> Result<Vec<f32>, String> {
    let mut y = vec![f32::NAN; shape.iter().product()];
    let mut outs = [Output {
        shape,
        data: DataMut::F32(&mut y),
    }];
    run(op, a, &inputs(ins), &mut outs).map_err(|e| e.to_string())?;
    Ok(y)
}

fn assert_close(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= 1e-6 + 1e-6 * w.abs(),
            "{got:?} vs {want:?}"
        );
    }
}

const NONE: &[(&str, Attr)] = &[];

#[test]
fn add_sub_div_broadcast() {
    let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    // [[1,2,3],[4,5,6]] + [10,20,30]
    let y = f32_out(
        "Add",
        &attrs(NONE),
        &[T::F(&[2, 3], &a), T::F(&[3], &[10.0, 20.0, 30.0])],
        &[2, 3],
    )
    .unwrap();
    assert_eq!(y, [11.0, 22.0, 33.0, 14.0, 25.0, 36.0]);
    // [[1,2,3],[4,5,6]] + [[100],[200]]
    let y = f32_out(
        "Add",
        &attrs(NONE),
        &[T::F(&[2, 3], &a), T::F(&[2, 1], &[100.0, 200.0])],
        &[2, 3],
    )
    .unwrap();
    assert_eq!(y, [101.0, 102.0, 103.0, 204.0, 205.0, 206.0]);
    // [3,1] - [2] -> [3,2]: row i minus column j.
    let y = f32_out(
        "Sub",
        &attrs(NONE),
        &[T::F(&[3, 1], &[1.0, 2.0, 3.0]), T::F(&[2], &[1.0, 10.0])],
        &[3, 2],
    )
    .unwrap();
    assert_eq!(y, [0.0, -9.0, 1.0, -8.0, 2.0, -7.0]);
    let y = f32_out(
        "Div",
        &attrs(NONE),
        &[T::F(&[], &[1.0]), T::F(&[2], &[2.0, 4.0])],
        &[2],
    )
    .unwrap();
    assert_eq!(y, [0.5, 0.25]);
    assert!(
        f32_out(
            "Add",
            &attrs(NONE),
            &[T::F(&[2, 3], &a), T::F(&[2], &[1.0, 2.0])],
            &[2, 3]
        )
        .is_err()
    );
}

#[test]
fn add_in_place_with_broadcast_operand() {
    // Input 0 ([1,2,3]) lives in the output buffer; input 1 is [10] broadcast.
    let mut y = [1.0f32, 2.0, 3.0];
    let ins = [
        Input::InPlace {
            output: 0,
            shape: &[3],
        },
        Input::Value {
            shape: &[1],
            data: Data::F32(&[10.0]),
        },
    ];
    let mut outs = [Output {
        shape: &[3],
        data: DataMut::F32(&mut y),
    }];
    run("Add", &Attrs::default(), &ins, &mut outs).unwrap();
    assert_eq!(y, [11.0, 12.0, 13.0]);
    // In place on the second operand of Sub: 10 - x.
    let mut y = [1.0f32, 2.0, 3.0];
    let ins = [
        Input::Value {
            shape: &[],
            data: Data::F32(&[10.0]),
        },
        Input::InPlace {
            output: 0,
            shape: &[3],
        },
    ];
    let mut outs = [Output {
        shape: &[3],
        data: DataMut::F32(&mut y),
    }];
    run("Sub", &Attrs::default(), &ins, &mut outs).unwrap();
    assert_eq!(y, [9.0, 8.0, 7.0]);
}

#[test]
fn activations() {
    let x = [-3.0, 0.0, 1.0, 3.0];
    let y = f32_out("Relu", &attrs(NONE), &[T::F(&[4], &x)], &[4]).unwrap();
    assert_eq!(y, [0.0, 0.0, 1.0, 3.0]);
    // 0.2x + 0.5 clamped: -0.1 -> 0, 0.5, 0.7, 1.1 -> 1.
    let y = f32_out("HardSigmoid", &attrs(NONE), &[T::F(&[4], &x)], &[4]).unwrap();
    assert_close(&y, &[0.0, 0.5, 0.7, 1.0]);
    let y = f32_out(
        "HardSigmoid",
        &attrs(&[("alpha", Attr::Float(0.5)), ("beta", Attr::Float(0.0))]),
        &[T::F(&[4], &x)],
        &[4],
    )
    .unwrap();
    assert_close(&y, &[0.0, 0.0, 0.5, 1.0]);
    // x * clamp(x/6 + 1/2): 0, 0, 1 * 2/3, 3.
    let y = f32_out("HardSwish", &attrs(NONE), &[T::F(&[4], &x)], &[4]).unwrap();
    assert_close(&y, &[0.0, 0.0, 2.0 / 3.0, 3.0]);
    let y = f32_out("Sigmoid", &attrs(NONE), &[T::F(&[4], &x)], &[4]).unwrap();
    assert_close(&y, &[0.047_425_87, 0.5, 0.731_058_6, 0.952_574_1]);
}

#[test]
fn clip_forms() {
    let x = [-1.0, 0.5, 3.0];
    let y = f32_out(
        "Clip",
        &attrs(NONE),
        &[T::F(&[3], &x), T::F(&[], &[0.0]), T::F(&[], &[1.0])],
        &[3],
    )
    .unwrap();
    assert_eq!(y, [0.0, 0.5, 1.0]);
    // Max only (min absent).
    let y = f32_out(
        "Clip",
        &attrs(NONE),
        &[T::F(&[3], &x), T::None, T::F(&[], &[0.0])],
        &[3],
    )
    .unwrap();
    assert_eq!(y, [-1.0, 0.0, 0.0]);
    // Attribute form (opset 6).
    let y = f32_out(
        "Clip",
        &attrs(&[("min", Attr::Float(-0.5))]),
        &[T::F(&[3], &x)],
        &[3],
    )
    .unwrap();
    assert_eq!(y, [-0.5, 0.5, 3.0]);
    // min > max: everything becomes max.
    let y = f32_out(
        "Clip",
        &attrs(NONE),
        &[T::F(&[3], &x), T::F(&[], &[2.0]), T::F(&[], &[1.0])],
        &[3],
    )
    .unwrap();
    assert_eq!(y, [1.0, 1.0, 1.0]);
}

#[test]
fn conv_paths() {
    let x: Vec<f32> = (1..=9).map(|v| v as f32).collect();
    let ones = [1.0; 4];
    // 2x2 ones over [[1,2,3],[4,5,6],[7,8,9]]: 1+2+4+5 = 12, 16, 24, 28.
    let y = f32_out(
        "Conv",
        &attrs(NONE),
        &[T::F(&[1, 1, 3, 3], &x), T::F(&[1, 1, 2, 2], &ones)],
        &[1, 1, 2, 2],
    )
    .unwrap();
    assert_eq!(y, [12.0, 16.0, 24.0, 28.0]);
    // pads 1, stride 2: windows {1}, {2,3}, {4,7}, {5,6,8,9}; bias 0.5.
    let a = attrs(&[
        ("pads", Attr::Ints(&[1, 1, 1, 1])),
        ("strides", Attr::Ints(&[2, 2])),
    ]);
    let y = f32_out(
        "Conv",
        &a,
        &[
            T::F(&[1, 1, 3, 3], &x),
            T::F(&[1, 1, 2, 2], &ones),
            T::F(&[1], &[0.5]),
        ],
        &[1, 1, 2, 2],
    )
    .unwrap();
    assert_eq!(y, [1.5, 5.5, 11.5, 28.5]);
    // dilation 2: the four corners 1+3+7+9.
    let a = attrs(&[("dilations", Attr::Ints(&[2, 2]))]);
    let y = f32_out(
        "Conv",
        &a,
        &[T::F(&[1, 1, 3, 3], &x), T::F(&[1, 1, 2, 2], &ones)],
        &[1, 1, 1, 1],
    )
    .unwrap();
    assert_eq!(y, [20.0]);
    // Depthwise (group 2, 1x1 kernels 2 and -1).
    let x2 = [1.0, 2.0, 3.0, 4.0, 10.0, 20.0, 30.0, 40.0];
    let a = attrs(&[("group", Attr::Int(2))]);
    let y = f32_out(
        "Conv",
        &a,
        &[T::F(&[1, 2, 2, 2], &x2), T::F(&[2, 1, 1, 1], &[2.0, -1.0])],
        &[1, 2, 2, 2],
    )
    .unwrap();
    assert_eq!(y, [2.0, 4.0, 6.0, 8.0, -10.0, -20.0, -30.0, -40.0]);
    // SAME_UPPER, stride 2 on 3: out 2, total pad 1 at the end: windows {1,2,4,5}, {3,6}, {7,8}, {9}.
    let a = attrs(&[
        ("auto_pad", Attr::Str("SAME_UPPER")),
        ("strides", Attr::Ints(&[2, 2])),
    ]);
    let y = f32_out(
        "Conv",
        &a,
        &[T::F(&[1, 1, 3, 3], &x), T::F(&[1, 1, 2, 2], &ones)],
        &[1, 1, 2, 2],
    )
    .unwrap();
    assert_eq!(y, [12.0, 9.0, 15.0, 9.0]);
    // SAME_LOWER puts the pad first: windows {1}, {2,3}, {4,7}, {5,6,8,9}.
    let a = attrs(&[
        ("auto_pad", Attr::Str("SAME_LOWER")),
        ("strides", Attr::Ints(&[2, 2])),
    ]);
    let y = f32_out(
        "Conv",
        &a,
        &[T::F(&[1, 1, 3, 3], &x), T::F(&[1, 1, 2, 2], &ones)],
        &[1, 1, 2, 2],
    )
    .unwrap();
    assert_eq!(y, [1.0, 5.0, 11.0, 28.0]);
    // 1-D: [1,2,3,4] * [1,-1] = [-1,-1,-1].
    let y = f32_out(
        "Conv",
        &attrs(NONE),
        &[
            T::F(&[1, 1, 4], &[1.0, 2.0, 3.0, 4.0]),
            T::F(&[1, 1, 2], &[1.0, -1.0]),
        ],
        &[1, 1, 3],
    )
    .unwrap();
    assert_eq!(y, [-1.0, -1.0, -1.0]);
    // Errors: channel mismatch, wrong output size, bias size, in place.
    assert!(
        f32_out(
            "Conv",
            &attrs(NONE),
            &[T::F(&[1, 1, 3, 3], &x), T::F(&[1, 2, 2, 2], &[1.0; 8])],
            &[1, 1, 2, 2]
        )
        .is_err()
    );
    assert!(
        f32_out(
            "Conv",
            &attrs(NONE),
            &[T::F(&[1, 1, 3, 3], &x), T::F(&[1, 1, 2, 2], &ones)],
            &[1, 1, 3, 3]
        )
        .is_err()
    );
    assert!(
        f32_out(
            "Conv",
            &attrs(NONE),
            &[
                T::F(&[1, 1, 3, 3], &x),
                T::F(&[1, 1, 2, 2], &ones),
                T::F(&[2], &[0.0; 2])
            ],
            &[1, 1, 2, 2]
        )
        .is_err()
    );
    let mut y = [0.0f32; 9];
    let ins = [
        Input::InPlace {
            output: 0,
            shape: &[1, 1, 3, 3],
        },
        Input::Value {
            shape: &[1, 1, 1, 1],
            data: Data::F32(&[1.0]),
        },
    ];
    let mut outs = [Output {
        shape: &[1, 1, 3, 3],
        data: DataMut::F32(&mut y),
    }];
    assert!(run("Conv", &Attrs::default(), &ins, &mut outs).is_err());
}

#[test]
fn pools() {
    let x = [1.0, 5.0, 2.0, 8.0, 3.0];
    let k = |c: i64| {
        [
            ("kernel_shape", Attr::Ints(&[1, 2])),
            ("strides", Attr::Ints(&[1, 2])),
            ("ceil_mode", Attr::Int(c)),
        ]
    };
    // Windows {1,5}, {2,8} and, with ceil_mode, the partial {3}.
    assert_eq!(
        f32_out(
            "MaxPool",
            &attrs(&k(0)),
            &[T::F(&[1, 1, 1, 5], &x)],
            &[1, 1, 1, 2]
        )
        .unwrap(),
        [5.0, 8.0]
    );
    assert_eq!(
        f32_out(
            "MaxPool",
            &attrs(&k(1)),
            &[T::F(&[1, 1, 1, 5], &x)],
            &[1, 1, 1, 3]
        )
        .unwrap(),
        [5.0, 8.0, 3.0]
    );
    assert_eq!(
        f32_out(
            "AveragePool",
            &attrs(&k(1)),
            &[T::F(&[1, 1, 1, 5], &x)],
            &[1, 1, 1, 3]
        )
        .unwrap(),
        [3.0, 5.0, 3.0]
    );
    // Pads 1 both sides, kernel 3 over [1,2,3]: windows {p,1,2}, {1,2,3}, {2,3,p}.
    let p = |inc: i64| {
        [
            ("kernel_shape", Attr::Ints(&[1, 3])),
            ("pads", Attr::Ints(&[0, 1, 0, 1])),
            ("count_include_pad", Attr::Int(inc)),
        ]
    };
    let x3 = [1.0, 2.0, 3.0];
    assert_close(
        &f32_out(
            "AveragePool",
            &attrs(&p(0)),
            &[T::F(&[1, 1, 1, 3], &x3)],
            &[1, 1, 1, 3],
        )
        .unwrap(),
        &[1.5, 2.0, 2.5],
    );
    assert_close(
        &f32_out(
            "AveragePool",
            &attrs(&p(1)),
            &[T::F(&[1, 1, 1, 3], &x3)],
            &[1, 1, 1, 3],
        )
        .unwrap(),
        &[1.0, 2.0, 5.0 / 3.0],
    );
    assert_eq!(
        f32_out(
            "MaxPool",
            &attrs(&p(0)),
            &[T::F(&[1, 1, 1, 3], &[-1.0, -2.0, -3.0])],
            &[1, 1, 1, 3]
        )
        .unwrap(),
        [-1.0, -1.0, -2.0]
    );
    // Global pools: one value per channel.
    let g = [1.0, 2.0, 3.0, 6.0, -1.0, -2.0, -3.0, -6.0];
    assert_eq!(
        f32_out(
            "GlobalAveragePool",
            &attrs(NONE),
            &[T::F(&[1, 2, 2, 2], &g)],
            &[1, 2, 1, 1]
        )
        .unwrap(),
        [3.0, -3.0]
    );
    assert_eq!(
        f32_out(
            "GlobalMaxPool",
            &attrs(NONE),
            &[T::F(&[1, 2, 2, 2], &g)],
            &[1, 2, 1, 1]
        )
        .unwrap(),
        [6.0, -1.0]
    );
    // MaxPool's Indices output is not supported: an error, not garbage.
    let mut y = [0.0f32; 2];
    let mut idx = [0i64; 2];
    let spec = [T::F(&[1, 1, 1, 5], &x)];
    let ins = inputs(&spec);
    let mut outs = [
        Output {
            shape: &[1, 1, 1, 2],
            data: DataMut::F32(&mut y),
        },
        Output {
            shape: &[1, 1, 1, 2],
            data: DataMut::I64(&mut idx),
        },
    ];
    assert!(run("MaxPool", &attrs(&k(0)), &ins, &mut outs).is_err());
}

#[test]
fn gemm_and_matmul() {
    // A = [[1,2]], B = [[1,0],[0,1],[1,1]] (transB): A B^T = [1,2,3]; alpha 2, C = [1] beta 0.5.
    let a = attrs(&[
        ("transB", Attr::Int(1)),
        ("alpha", Attr::Float(2.0)),
        ("beta", Attr::Float(0.5)),
    ]);
    let y = f32_out(
        "Gemm",
        &a,
        &[
            T::F(&[1, 2], &[1.0, 2.0]),
            T::F(&[3, 2], &[1.0, 0.0, 0.0, 1.0, 1.0, 1.0]),
            T::F(&[1], &[1.0]),
        ],
        &[1, 3],
    )
    .unwrap();
    assert_eq!(y, [2.5, 4.5, 6.5]);
    // transA: A stored [K=2, M=1] = [[1],[2]], B = [[1,2],[3,4]]: [1*1+2*3, 1*2+2*4] = [7, 10].
    let a = attrs(&[("transA", Attr::Int(1))]);
    let y = f32_out(
        "Gemm",
        &a,
        &[
            T::F(&[2, 1], &[1.0, 2.0]),
            T::F(&[2, 2], &[1.0, 2.0, 3.0, 4.0]),
        ],
        &[1, 2],
    )
    .unwrap();
    assert_eq!(y, [7.0, 10.0]);
    // MatMul 1-D x 2-D: [1,2] x [[1,2,3],[4,5,6]] = [9,12,15].
    let b = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let y = f32_out(
        "MatMul",
        &attrs(NONE),
        &[T::F(&[2], &[1.0, 2.0]), T::F(&[2, 3], &b)],
        &[3],
    )
    .unwrap();
    assert_eq!(y, [9.0, 12.0, 15.0]);
    // 2-D x 1-D: [[1,2],[3,4]] x [1,1] = [3,7].
    let y = f32_out(
        "MatMul",
        &attrs(NONE),
        &[
            T::F(&[2, 2], &[1.0, 2.0, 3.0, 4.0]),
            T::F(&[2], &[1.0, 1.0]),
        ],
        &[2],
    )
    .unwrap();
    assert_eq!(y, [3.0, 7.0]);
    // Batch broadcast: [2,1,2] x [2,1]: each batch row dotted with [1,-1].
    let y = f32_out(
        "MatMul",
        &attrs(NONE),
        &[
            T::F(&[2, 1, 2], &[1.0, 2.0, 5.0, 3.0]),
            T::F(&[2, 1], &[1.0, -1.0]),
        ],
        &[2, 1, 1],
    )
    .unwrap();
    assert_eq!(y, [-1.0, 2.0]);
    assert!(
        f32_out(
            "MatMul",
            &attrs(NONE),
            &[T::F(&[2, 3], &b), T::F(&[2, 3], &b)],
            &[2, 3]
        )
        .is_err()
    );
    assert!(
        f32_out(
            "Gemm",
            &attrs(NONE),
            &[T::F(&[2, 3], &b), T::F(&[3, 2], &b), T::F(&[3], &[0.0; 3])],
            &[2, 2]
        )
        .is_err()
    );
}

#[test]
fn normalizations_and_softmax() {
    // mean 2.5, var 1.25: (x - 2.5) / sqrt(1.25) * 2 + 1.
    let y = f32_out(
        "LayerNormalization",
        &attrs(&[("epsilon", Attr::Float(0.0))]),
        &[
            T::F(&[1, 4], &[1.0, 2.0, 3.0, 4.0]),
            T::F(&[4], &[2.0; 4]),
            T::F(&[4], &[1.0; 4]),
        ],
        &[1, 4],
    )
    .unwrap();
    assert_close(&y, &[-1.683_281_6, 0.105_572_81, 1.894_427_2, 3.683_281_6]);
    // BatchNorm: channel 0 (x - 2) / 1, channel 1 (x - 3) / 2 * 2 + 1.
    let y = f32_out(
        "BatchNormalization",
        &attrs(&[("epsilon", Attr::Float(0.0))]),
        &[
            T::F(&[1, 2, 2], &[1.0, 3.0, 2.0, 4.0]),
            T::F(&[2], &[1.0, 2.0]),
            T::F(&[2], &[0.0, 1.0]),
            T::F(&[2], &[2.0, 3.0]),
            T::F(&[2], &[1.0, 4.0]),
        ],
        &[1, 2, 2],
    )
    .unwrap();
    assert_eq!(y, [-1.0, 1.0, 0.0, 2.0]);
    let y = f32_out(
        "Softmax",
        &attrs(NONE),
        &[T::F(&[3], &[1.0, 2.0, 3.0])],
        &[3],
    )
    .unwrap();
    assert_close(&y, &[0.090_030_57, 0.244_728_47, 0.665_240_96]);
    // axis 0 of [[1,2],[1,2]]: every column is two equal values.
    let y = f32_out(
        "Softmax",
        &attrs(&[("axis", Attr::Int(0))]),
        &[T::F(&[2, 2], &[1.0, 2.0, 1.0, 2.0])],
        &[2, 2],
    )
    .unwrap();
    assert_eq!(y, [0.5; 4]);
    assert!(
        f32_out(
            "Softmax",
            &attrs(&[("axis", Attr::Int(2))]),
            &[T::F(&[2, 2], &[0.0; 4])],
            &[2, 2]
        )
        .is_err()
    );
}

#[test]
fn shape_operators() {
    let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    assert_eq!(
        f32_out(
            "Reshape",
            &attrs(NONE),
            &[T::F(&[2, 3], &a), T::I(&[2], &[0, -1])],
            &[2, 3]
        )
        .unwrap(),
        a
    );
    assert_eq!(
        f32_out(
            "Reshape",
            &attrs(NONE),
            &[T::F(&[2, 3], &a), T::I(&[1], &[-1])],
            &[6]
        )
        .unwrap(),
        a
    );
    assert!(
        f32_out(
            "Reshape",
            &attrs(NONE),
            &[T::F(&[2, 3], &a), T::I(&[2], &[-1, -1])],
            &[6]
        )
        .is_err()
    );
    assert!(
        f32_out(
            "Reshape",
            &attrs(NONE),
            &[T::F(&[2, 3], &a), T::I(&[2], &[4, -1])],
            &[4, 1]
        )
        .is_err()
    );
    // The output shape must be the one Reshape computes.
    assert!(
        f32_out(
            "Reshape",
            &attrs(NONE),
            &[T::F(&[2, 3], &a), T::I(&[1], &[-1])],
            &[3, 2]
        )
        .is_err()
    );
    assert_eq!(
        f32_out(
            "Flatten",
            &attrs(&[("axis", Attr::Int(0))]),
            &[T::F(&[2, 3], &a)],
            &[1, 6]
        )
        .unwrap(),
        a
    );
    assert_eq!(
        f32_out(
            "Squeeze",
            &attrs(NONE),
            &[T::F(&[1, 6, 1], &a), T::I(&[1], &[-1])],
            &[1, 6]
        )
        .unwrap(),
        a
    );
    assert!(
        f32_out(
            "Squeeze",
            &attrs(NONE),
            &[T::F(&[1, 6, 1], &a), T::I(&[1], &[1])],
            &[1, 1]
        )
        .is_err()
    );
    assert_eq!(
        f32_out(
            "Unsqueeze",
            &attrs(NONE),
            &[T::F(&[6], &a), T::I(&[2], &[0, -1])],
            &[1, 6, 1]
        )
        .unwrap(),
        a
    );
    // Transpose [[1,2,3],[4,5,6]].
    assert_eq!(
        f32_out("Transpose", &attrs(NONE), &[T::F(&[2, 3], &a)], &[3, 2]).unwrap(),
        [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]
    );
    assert!(
        f32_out(
            "Transpose",
            &attrs(&[("perm", Attr::Ints(&[0, 0]))]),
            &[T::F(&[2, 3], &a)],
            &[2, 2]
        )
        .is_err()
    );
    // Concat on axis 1: [[1],[2]] ++ [[3,4],[5,6]].
    let y = f32_out(
        "Concat",
        &attrs(&[("axis", Attr::Int(1))]),
        &[
            T::F(&[2, 1], &[1.0, 2.0]),
            T::F(&[2, 2], &[3.0, 4.0, 5.0, 6.0]),
        ],
        &[2, 3],
    )
    .unwrap();
    assert_eq!(y, [1.0, 3.0, 4.0, 2.0, 5.0, 6.0]);
    assert!(
        f32_out(
            "Concat",
            &attrs(&[("axis", Attr::Int(1))]),
            &[
                T::F(&[1, 2], &[1.0, 2.0]),
                T::F(&[2, 2], &[3.0, 4.0, 5.0, 6.0])
            ],
            &[2, 4]
        )
        .is_err()
    );
    // Slice 0..10 from -1 down to the start, step -3: 9, 6, 3, 0.
    let r: Vec<f32> = (0..10).map(|v| v as f32).collect();
    let y = f32_out(
        "Slice",
        &attrs(NONE),
        &[
            T::F(&[10], &r),
            T::I(&[1], &[-1]),
            T::I(&[1], &[-100]),
            T::I(&[1], &[0]),
            T::I(&[1], &[-3]),
        ],
        &[4],
    )
    .unwrap();
    assert_eq!(y, [9.0, 6.0, 3.0, 0.0]);
    // Gather on axis 1 with a negative index: [[3,1],[6,4]].
    let y = f32_out(
        "Gather",
        &attrs(&[("axis", Attr::Int(1))]),
        &[T::F(&[2, 3], &a), T::I(&[2], &[-1, 0])],
        &[2, 2],
    )
    .unwrap();
    assert_eq!(y, [3.0, 1.0, 6.0, 4.0]);
    assert!(
        f32_out(
            "Gather",
            &attrs(NONE),
            &[T::F(&[2, 3], &a), T::I(&[1], &[2])],
            &[1, 3]
        )
        .is_err()
    );
    // Expand [2,1] to [2,3].
    let y = f32_out(
        "Expand",
        &attrs(NONE),
        &[T::F(&[2, 1], &[1.0, 2.0]), T::I(&[2], &[1, 3])],
        &[2, 3],
    )
    .unwrap();
    assert_eq!(y, [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
    // ReduceMean over axis 1, dropped: [[1,2],[3,5]] -> [1.5, 4].
    let y = f32_out(
        "ReduceMean",
        &attrs(&[("axes", Attr::Ints(&[1])), ("keepdims", Attr::Int(0))]),
        &[T::F(&[2, 2], &[1.0, 2.0, 3.0, 5.0])],
        &[2],
    )
    .unwrap();
    assert_eq!(y, [1.5, 4.0]);
}

#[test]
fn split_by_output_sizes() {
    let x = [1.0f32, 2.0, 3.0, 4.0, 5.0];
    let split = |sizes: [i64; 2]| {
        let (mut a, mut b) = ([0.0f32; 2], [0.0f32; 3]);
        let spec = [T::F(&[5], &x), T::I(&[2], &sizes)];
        let ins = inputs(&spec);
        let mut outs = [
            Output {
                shape: &[2],
                data: DataMut::F32(&mut a),
            },
            Output {
                shape: &[3],
                data: DataMut::F32(&mut b),
            },
        ];
        run("Split", &Attrs::default(), &ins, &mut outs).map(|()| (a, b))
    };
    assert_eq!(split([2, 3]).unwrap(), ([1.0, 2.0], [3.0, 4.0, 5.0]));
    // A split input that disagrees with the outputs is an error.
    assert!(split([3, 2]).is_err());
}

#[test]
fn resize_modes() {
    let x = [1.0, 3.0];
    let up = [1.0f32, 1.0, 1.0, 2.0];
    let nearest = attrs(&[
        ("coordinate_transformation_mode", Attr::Str("asymmetric")),
        ("nearest_mode", Attr::Str("floor")),
    ]);
    let y = f32_out(
        "Resize",
        &nearest,
        &[T::F(&[1, 1, 1, 2], &x), T::None, T::F(&[4], &up)],
        &[1, 1, 1, 4],
    )
    .unwrap();
    assert_eq!(y, [1.0, 1.0, 3.0, 3.0]);
    // half_pixel linear x2: source coords -0.25 (clamped 0), 0.25, 0.75, 1.25 (clamped 1).
    let linear = attrs(&[("mode", Attr::Str("linear"))]);
    let y = f32_out(
        "Resize",
        &linear,
        &[T::F(&[1, 1, 1, 2], &x), T::None, T::F(&[4], &up)],
        &[1, 1, 1, 4],
    )
    .unwrap();
    assert_eq!(y, [1.0, 1.5, 2.5, 3.0]);
    // align_corners to 3 (sizes): 1, 2, 3.
    let corners = attrs(&[
        ("mode", Attr::Str("linear")),
        ("coordinate_transformation_mode", Attr::Str("align_corners")),
    ]);
    let y = f32_out(
        "Resize",
        &corners,
        &[
            T::F(&[1, 1, 1, 2], &x),
            T::None,
            T::None,
            T::I(&[4], &[1, 1, 1, 3]),
        ],
        &[1, 1, 1, 3],
    )
    .unwrap();
    assert_eq!(y, [1.0, 2.0, 3.0]);
    let cubic = attrs(&[("mode", Attr::Str("cubic"))]);
    assert!(
        f32_out(
            "Resize",
            &cubic,
            &[T::F(&[1, 1, 1, 2], &x), T::None, T::F(&[4], &up)],
            &[1, 1, 1, 4]
        )
        .is_err()
    );
}

#[test]
fn where_cast_equal() {
    let mut y = [0.0f32; 3];
    let ins = [
        Input::Value {
            shape: &[3],
            data: Data::Bool(&[1, 0, 1]),
        },
        Input::Value {
            shape: &[3],
            data: Data::F32(&[1.0, 2.0, 3.0]),
        },
        Input::Value {
            shape: &[],
            data: Data::F32(&[-1.0]),
        },
    ];
    let mut outs = [Output {
        shape: &[3],
        data: DataMut::F32(&mut y),
    }];
    run("Where", &Attrs::default(), &ins, &mut outs).unwrap();
    assert_eq!(y, [1.0, -1.0, 3.0]);
    let mut c = [0i64; 3];
    let ins = [Input::Value {
        shape: &[3],
        data: Data::F32(&[-2.7, 0.5, 3.9]),
    }];
    let mut outs = [Output {
        shape: &[3],
        data: DataMut::I64(&mut c),
    }];
    run("Cast", &attrs(&[("to", Attr::Int(7))]), &ins, &mut outs).unwrap();
    // `to` says float but the output is int64: an error.
    assert!(run("Cast", &attrs(&[("to", Attr::Int(1))]), &ins, &mut outs).is_err());
    assert_eq!(c, [-2, 0, 3]);
    let mut b = [9u8; 2];
    let ins = [
        Input::Value {
            shape: &[2],
            data: Data::I64(&[1, 2]),
        },
        Input::Value {
            shape: &[1],
            data: Data::I64(&[2]),
        },
    ];
    let mut outs = [Output {
        shape: &[2],
        data: DataMut::Bool(&mut b),
    }];
    run("Equal", &Attrs::default(), &ins, &mut outs).unwrap();
    assert_eq!(b, [0, 1]);
}

/// Runs `op` with one int64 output of `shape`.
fn i64_out(op: &str, a: &Attrs, ins: &[T<'_>], shape: &[usize]) -> Result<Vec<i64>, String> {
    let mut y = vec![-99; shape.iter().product()];
    let mut outs = [Output {
        shape,
        data: DataMut::I64(&mut y),
    }];
    run(op, a, &inputs(ins), &mut outs).map_err(|e| e.to_string())?;
    Ok(y)
}

#[test]
fn elementwise_math_and_variadic() {
    let x = [1.0, 4.0, 9.0];
    assert_eq!(
        f32_out("Sqrt", &attrs(NONE), &[T::F(&[3], &x)], &[3]).unwrap(),
        [1.0, 2.0, 3.0]
    );
    assert_eq!(
        f32_out("Reciprocal", &attrs(NONE), &[T::F(&[3], &x)], &[3]).unwrap(),
        [1.0, 0.25, 1.0 / 9.0]
    );
    assert_eq!(
        f32_out("Neg", &attrs(NONE), &[T::F(&[3], &x)], &[3]).unwrap(),
        [-1.0, -4.0, -9.0]
    );
    // [1,4,9] ^ [2] = [1,16,81]; 2^-1 = 0.5.
    assert_eq!(
        f32_out(
            "Pow",
            &attrs(NONE),
            &[T::F(&[3], &x), T::F(&[1], &[2.0])],
            &[3]
        )
        .unwrap(),
        [1.0, 16.0, 81.0]
    );
    assert_eq!(
        f32_out(
            "Pow",
            &attrs(NONE),
            &[T::F(&[1], &[2.0]), T::I(&[1], &[-1])],
            &[1]
        )
        .unwrap(),
        [0.5]
    );
    // A scalar exponent of 1, 2, 3 or 0.5 is computed as products or a square root: within
    // 1.5 ulps of powf, with powf's special values ((-0)^0.5 = +0, (-inf)^0.5 = +inf).
    let bases = [
        0.0f32,
        -0.0,
        1.5,
        -2.25,
        3.0e-20,
        7.0e15,
        0.1,
        -0.3,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        1.0e-40,
        123.456,
    ];
    for exponent in [1.0f32, 2.0, 3.0, 0.5, 0.25] {
        let got = f32_out(
            "Pow",
            &attrs(NONE),
            &[T::F(&[13], &bases), T::F(&[], &[exponent])],
            &[13],
        )
        .unwrap();
        for (&a, &g) in bases.iter().zip(&got) {
            let want = libm::powf(a, exponent);
            let ulps =
                (f64::from(g) - f64::from(want)).abs() / f64::from(want.abs()) * 2f64.powi(23);
            assert!(
                g.to_bits() == want.to_bits() || (want.is_nan() && g.is_nan()) || ulps <= 1.5,
                "{a}^{exponent}: {g} where powf gives {want}"
            );
        }
    }
    // Variadic with broadcasting: max/min/sum/mean of [1,4,9], [5], [[0],[10]].
    let ins = [
        T::F(&[3], &x),
        T::F(&[1], &[5.0]),
        T::F(&[2, 1], &[0.0, 10.0]),
    ];
    assert_eq!(
        f32_out("Max", &attrs(NONE), &ins, &[2, 3]).unwrap(),
        [5.0, 5.0, 9.0, 10.0, 10.0, 10.0]
    );
    assert_eq!(
        f32_out("Min", &attrs(NONE), &ins, &[2, 3]).unwrap(),
        [0.0, 0.0, 0.0, 1.0, 4.0, 5.0]
    );
    assert_eq!(
        f32_out("Sum", &attrs(NONE), &ins, &[2, 3]).unwrap(),
        [6.0, 9.0, 14.0, 16.0, 19.0, 24.0]
    );
    assert_eq!(
        f32_out("Mean", &attrs(NONE), &ins, &[2, 3]).unwrap(),
        [2.0, 3.0, 14.0 / 3.0, 16.0 / 3.0, 19.0 / 3.0, 8.0]
    );
    // PRelu with a per-channel slope: [-2, 2] by [0.5, 3] -> [-1, 2].
    assert_eq!(
        f32_out(
            "PRelu",
            &attrs(NONE),
            &[T::F(&[2], &[-2.0, 2.0]), T::F(&[2], &[0.5, 3.0])],
            &[2]
        )
        .unwrap(),
        [-1.0, 2.0]
    );
    // Mod: floored for integers (sign of the divisor), truncated with fmod.
    assert_eq!(
        i64_out(
            "Mod",
            &attrs(NONE),
            &[T::I(&[2], &[-7, 7]), T::I(&[2], &[3, -3])],
            &[2]
        )
        .unwrap(),
        [2, -2]
    );
    assert_eq!(
        i64_out(
            "Mod",
            &attrs(&[("fmod", Attr::Int(1))]),
            &[T::I(&[2], &[-7, 7]), T::I(&[2], &[3, -3])],
            &[2]
        )
        .unwrap(),
        [-1, 1]
    );
    assert!(
        i64_out(
            "Mod",
            &attrs(NONE),
            &[T::I(&[1], &[1]), T::I(&[1], &[0])],
            &[1]
        )
        .is_err()
    );
    assert!(
        i64_out(
            "Div",
            &attrs(NONE),
            &[T::I(&[1], &[1]), T::I(&[1], &[0])],
            &[1]
        )
        .is_err()
    );
    // Gelu(1) = 0.5 (1 + erf(1/sqrt 2)) = 0.841344746.
    assert_close(
        &f32_out("Gelu", &attrs(NONE), &[T::F(&[2], &[0.0, 1.0])], &[2]).unwrap(),
        &[0.0, 0.841_344_7],
    );
    // Softsign(3) = 0.75; ThresholdedRelu(alpha 1) keeps only x > 1.
    assert_eq!(
        f32_out("Softsign", &attrs(NONE), &[T::F(&[1], &[3.0])], &[1]).unwrap(),
        [0.75]
    );
    assert_eq!(
        f32_out(
            "ThresholdedRelu",
            &attrs(NONE),
            &[T::F(&[3], &[0.5, 1.0, 2.0])],
            &[3]
        )
        .unwrap(),
        [0.0, 0.0, 2.0]
    );
}

#[test]
fn reductions_and_arg() {
    // [[1,2,3],[4,5,6]].
    let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let red = |op: &str, axes: &[i64], shape: &[usize]| {
        f32_out(
            op,
            &attrs(&[("axes", Attr::Ints(axes))]),
            &[T::F(&[2, 3], &a)],
            shape,
        )
        .unwrap()
    };
    assert_eq!(red("ReduceSum", &[1], &[2, 1]), [6.0, 15.0]);
    assert_eq!(red("ReduceMax", &[0], &[1, 3]), [4.0, 5.0, 6.0]);
    assert_eq!(red("ReduceMin", &[-1], &[2, 1]), [1.0, 4.0]);
    assert_eq!(red("ReduceProd", &[1], &[2, 1]), [6.0, 120.0]);
    assert_eq!(red("ReduceSumSquare", &[0], &[1, 3]), [17.0, 29.0, 45.0]);
    assert_eq!(red("ReduceL1", &[0, 1], &[1, 1]), [21.0]);
    assert_eq!(
        red("ReduceL2", &[1], &[2, 1]),
        [14.0f32.sqrt(), 77.0f32.sqrt()]
    );
    // All axes by default (ReduceMean: 3.5), keepdims 1: [1, 1].
    assert_eq!(
        f32_out("ReduceMean", &attrs(NONE), &[T::F(&[2, 3], &a)], &[1, 1]).unwrap(),
        [3.5]
    );
    // Axes as an input (opset 18) and noop_with_empty_axes.
    assert_eq!(
        f32_out(
            "ReduceMean",
            &attrs(NONE),
            &[T::F(&[2, 3], &a), T::I(&[1], &[0])],
            &[1, 3]
        )
        .unwrap(),
        [2.5, 3.5, 4.5]
    );
    assert_eq!(
        f32_out(
            "ReduceMean",
            &attrs(&[("noop_with_empty_axes", Attr::Int(1))]),
            &[T::F(&[2, 3], &a)],
            &[2, 3]
        )
        .unwrap(),
        a
    );
    // ArgMax / ArgMin, ties: first index unless select_last_index.
    let t = [1.0, 3.0, 3.0, 0.0];
    assert_eq!(
        i64_out(
            "ArgMax",
            &attrs(&[("axis", Attr::Int(1))]),
            &[T::F(&[1, 4], &t)],
            &[1, 1]
        )
        .unwrap(),
        [1]
    );
    assert_eq!(
        i64_out(
            "ArgMax",
            &attrs(&[("axis", Attr::Int(1)), ("select_last_index", Attr::Int(1))]),
            &[T::F(&[1, 4], &t)],
            &[1, 1]
        )
        .unwrap(),
        [2]
    );
    assert_eq!(
        i64_out(
            "ArgMin",
            &attrs(&[("keepdims", Attr::Int(0))]),
            &[T::F(&[2, 3], &a)],
            &[3]
        )
        .unwrap(),
        [0, 0, 0]
    );
    // CumSum on axis 1 of [[1,2,3],[4,5,6]]; exclusive and reversed.
    assert_eq!(
        f32_out(
            "CumSum",
            &attrs(NONE),
            &[T::F(&[2, 3], &a), T::I(&[], &[1])],
            &[2, 3]
        )
        .unwrap(),
        [1.0, 3.0, 6.0, 4.0, 9.0, 15.0]
    );
    let er = attrs(&[("exclusive", Attr::Int(1)), ("reverse", Attr::Int(1))]);
    assert_eq!(
        f32_out(
            "CumSum",
            &er,
            &[T::F(&[2, 3], &a), T::I(&[], &[1])],
            &[2, 3]
        )
        .unwrap(),
        [5.0, 3.0, 0.0, 11.0, 6.0, 0.0]
    );
}

#[test]
fn generators_and_layout_ops() {
    let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    // Shape (with start/end) and ConstantOfShape / Range.
    assert_eq!(
        i64_out("Shape", &attrs(NONE), &[T::F(&[2, 3], &a)], &[2]).unwrap(),
        [2, 3]
    );
    assert_eq!(
        i64_out(
            "Shape",
            &attrs(&[("start", Attr::Int(-1))]),
            &[T::F(&[2, 3], &a)],
            &[1]
        )
        .unwrap(),
        [3]
    );
    assert_eq!(
        f32_out(
            "ConstantOfShape",
            &attrs(&[("value", Attr::Float(2.5))]),
            &[T::I(&[1], &[3])],
            &[3]
        )
        .unwrap(),
        [2.5; 3]
    );
    assert_eq!(
        i64_out(
            "Range",
            &attrs(NONE),
            &[T::I(&[], &[10]), T::I(&[], &[1]), T::I(&[], &[-4])],
            &[3]
        )
        .unwrap(),
        [10, 6, 2]
    );
    // Tile [[1,2,3],[4,5,6]] by [1, 2].
    assert_eq!(
        f32_out(
            "Tile",
            &attrs(NONE),
            &[T::F(&[2, 3], &a), T::I(&[2], &[1, 2])],
            &[2, 6]
        )
        .unwrap(),
        [1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 4.0, 5.0, 6.0]
    );
    // Trilu: upper keeps j >= i, lower with k = -1 keeps j <= i - 1.
    assert_eq!(
        f32_out("Trilu", &attrs(NONE), &[T::F(&[2, 3], &a)], &[2, 3]).unwrap(),
        [1.0, 2.0, 3.0, 0.0, 5.0, 6.0]
    );
    assert_eq!(
        f32_out(
            "Trilu",
            &attrs(&[("upper", Attr::Int(0))]),
            &[T::F(&[2, 3], &a), T::I(&[1], &[-1])],
            &[2, 3]
        )
        .unwrap(),
        [0.0, 0.0, 0.0, 4.0, 0.0, 0.0]
    );
    // Pad [1,2,3] by 2 before, 1 after.
    let x = [1.0, 2.0, 3.0];
    let pad = |mode: &str| {
        f32_out(
            "Pad",
            &attrs(&[("mode", Attr::Str(mode))]),
            &[T::F(&[3], &x), T::I(&[2], &[2, 1])],
            &[6],
        )
        .unwrap()
    };
    assert_eq!(pad("constant"), [0.0, 0.0, 1.0, 2.0, 3.0, 0.0]);
    assert_eq!(pad("edge"), [1.0, 1.0, 1.0, 2.0, 3.0, 3.0]);
    assert_eq!(pad("reflect"), [3.0, 2.0, 1.0, 2.0, 3.0, 2.0]);
    assert_eq!(pad("wrap"), [2.0, 3.0, 1.0, 2.0, 3.0, 1.0]);
    // Negative pads crop: [-1, 0] keeps [2,3].
    assert_eq!(
        f32_out(
            "Pad",
            &attrs(NONE),
            &[T::F(&[3], &x), T::I(&[2], &[-1, 0])],
            &[2]
        )
        .unwrap(),
        [2.0, 3.0]
    );
    // DepthToSpace DCR, 4 channels of 1x1 -> one 2x2 channel [c0 c1; c2 c3]; SpaceToDepth back.
    let d = [1.0, 2.0, 3.0, 4.0];
    assert_eq!(
        f32_out(
            "DepthToSpace",
            &attrs(&[("blocksize", Attr::Int(2))]),
            &[T::F(&[1, 4, 1, 1], &d)],
            &[1, 1, 2, 2]
        )
        .unwrap(),
        d
    );
    assert_eq!(
        f32_out(
            "SpaceToDepth",
            &attrs(&[("blocksize", Attr::Int(2))]),
            &[T::F(&[1, 1, 2, 2], &d)],
            &[1, 4, 1, 1]
        )
        .unwrap(),
        d
    );
    // GatherElements on axis 1: [[1,2,3],[4,5,6]] with [[2,0],[1,-1]] -> [[3,1],[5,6]].
    assert_eq!(
        f32_out(
            "GatherElements",
            &attrs(&[("axis", Attr::Int(1))]),
            &[T::F(&[2, 3], &a), T::I(&[2, 2], &[2, 0, 1, -1])],
            &[2, 2]
        )
        .unwrap(),
        [3.0, 1.0, 5.0, 6.0]
    );
}

#[test]
fn conv_transpose_and_other_normalizations() {
    // 1-D, stride 2, kernel [1, 10]: input [1, 2] spreads to [1, 10, 2, 20].
    let y = f32_out(
        "ConvTranspose",
        &attrs(&[("strides", Attr::Ints(&[2]))]),
        &[
            T::F(&[1, 1, 2], &[1.0, 2.0]),
            T::F(&[1, 1, 2], &[1.0, 10.0]),
        ],
        &[1, 1, 4],
    )
    .unwrap();
    assert_eq!(y, [1.0, 10.0, 2.0, 20.0]);
    // Stride 1, kernel [1, 1] overlaps: [1, 1+2, 2]; pads [1, 0] cut the first.
    let y = f32_out(
        "ConvTranspose",
        &attrs(&[("pads", Attr::Ints(&[1, 0]))]),
        &[T::F(&[1, 1, 2], &[1.0, 2.0]), T::F(&[1, 1, 2], &[1.0, 1.0])],
        &[1, 1, 2],
    )
    .unwrap();
    assert_eq!(y, [3.0, 2.0]);
    // InstanceNormalization of [1, 3] (mean 2, var 1) with scale 2, bias 1: [-1, 3].
    let y = f32_out(
        "InstanceNormalization",
        &attrs(&[("epsilon", Attr::Float(0.0))]),
        &[
            T::F(&[1, 1, 2], &[1.0, 3.0]),
            T::F(&[1], &[2.0]),
            T::F(&[1], &[1.0]),
        ],
        &[1, 1, 2],
    )
    .unwrap();
    assert_eq!(y, [-1.0, 3.0]);
    // LRN size 1, alpha 1, beta 1, bias 1: x / (1 + x^2) -> 2 / 5.
    let a = attrs(&[
        ("size", Attr::Int(1)),
        ("alpha", Attr::Float(1.0)),
        ("beta", Attr::Float(1.0)),
    ]);
    assert_eq!(
        f32_out("LRN", &a, &[T::F(&[1, 1, 1], &[2.0])], &[1, 1, 1]).unwrap(),
        [0.4]
    );
    // LogSoftmax of [0, 0] = [-ln 2, -ln 2].
    let y = f32_out("LogSoftmax", &attrs(NONE), &[T::F(&[2], &[0.0, 0.0])], &[2]).unwrap();
    assert_close(&y, &[-std::f32::consts::LN_2, -std::f32::consts::LN_2]);
}

#[test]
fn einsum_equations() {
    let a = [1.0, 2.0, 3.0, 4.0];
    let eq = |e: &'static str| [("equation", Attr::Str(e))];
    // [[1,2],[3,4]]: trace-diagonal, transpose, sum, matrix product with itself.
    assert_eq!(
        f32_out("Einsum", &attrs(&eq("ii->i")), &[T::F(&[2, 2], &a)], &[2]).unwrap(),
        [1.0, 4.0]
    );
    assert_eq!(
        f32_out(
            "Einsum",
            &attrs(&eq("ij->ji")),
            &[T::F(&[2, 2], &a)],
            &[2, 2]
        )
        .unwrap(),
        [1.0, 3.0, 2.0, 4.0]
    );
    assert_eq!(
        f32_out("Einsum", &attrs(&eq("ij->")), &[T::F(&[2, 2], &a)], &[]).unwrap(),
        [10.0]
    );
    assert_eq!(
        f32_out(
            "Einsum",
            &attrs(&eq("ij,jk")),
            &[T::F(&[2, 2], &a), T::F(&[2, 2], &a)],
            &[2, 2]
        )
        .unwrap(),
        [7.0, 10.0, 15.0, 22.0]
    );
    // Bad equations and shapes are errors.
    for bad in ["ij,jk->il", "ij->ii", "i.j->i", "ijk->i", "ij,jk->ik"] {
        assert!(
            f32_out("Einsum", &attrs(&eq(bad)), &[T::F(&[2, 2], &a)], &[2]).is_err(),
            "{bad}"
        );
    }
    assert!(
        f32_out(
            "Einsum",
            &attrs(&eq("ij,jk->ik")),
            &[T::F(&[2, 2], &a), T::F(&[4], &a)],
            &[2, 2]
        )
        .is_err()
    );
    assert!(
        f32_out(
            "Einsum",
            &attrs(&eq("ij,jk->ik")),
            &[T::F(&[2, 2], &a), T::F(&[1, 4], &a)],
            &[2, 4]
        )
        .is_err()
    );
}

#[test]
fn scatter_topk_onehot_hardmax() {
    // ScatterND rows: data [[0,0],[0,0],[0,0]], rows 2 and 0 get [1,2] and [3,4].
    let y = f32_out(
        "ScatterND",
        &attrs(NONE),
        &[
            T::F(&[3, 2], &[0.0; 6]),
            T::I(&[2, 1], &[2, 0]),
            T::F(&[2, 2], &[1.0, 2.0, 3.0, 4.0]),
        ],
        &[3, 2],
    )
    .unwrap();
    assert_eq!(y, [3.0, 4.0, 0.0, 0.0, 1.0, 2.0]);
    // ScatterElements on axis 1 with add: [[1,1,1]] + updates at columns [2, 2, 0].
    let a = attrs(&[("axis", Attr::Int(1)), ("reduction", Attr::Str("add"))]);
    let y = f32_out(
        "ScatterElements",
        &a,
        &[
            T::F(&[1, 3], &[1.0; 3]),
            T::I(&[1, 3], &[2, 2, 0]),
            T::F(&[1, 3], &[10.0, 20.0, 5.0]),
        ],
        &[1, 3],
    )
    .unwrap();
    assert_eq!(y, [6.0, 1.0, 31.0]);
    assert!(
        f32_out(
            "ScatterND",
            &attrs(NONE),
            &[
                T::F(&[3, 2], &[0.0; 6]),
                T::I(&[1, 1], &[3]),
                T::F(&[1, 2], &[1.0, 2.0])
            ],
            &[3, 2]
        )
        .is_err()
    );
    // TopK 2 of [1, 3, 3, 0]: values [3, 3], indices [1, 2] (lower index first).
    let mut v = [0.0f32; 2];
    let mut i = [0i64; 2];
    let spec = [T::F(&[4], &[1.0, 3.0, 3.0, 0.0]), T::I(&[1], &[2])];
    let ins = inputs(&spec);
    let mut outs = [
        Output {
            shape: &[2],
            data: DataMut::F32(&mut v),
        },
        Output {
            shape: &[2],
            data: DataMut::I64(&mut i),
        },
    ];
    run("TopK", &Attrs::default(), &ins, &mut outs).unwrap();
    assert_eq!((v, i), ([3.0, 3.0], [1, 2]));
    // OneHot depth 3, values [0, 1], indices [2, -1, 5]: rows [0,0,1], [0,0,1], [0,0,0].
    let y = f32_out(
        "OneHot",
        &attrs(NONE),
        &[
            T::I(&[3], &[2, -1, 5]),
            T::I(&[], &[3]),
            T::F(&[2], &[0.0, 1.0]),
        ],
        &[3, 3],
    )
    .unwrap();
    assert_eq!(y, [0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
    // Hardmax: first maximum of [1, 3, 3].
    assert_eq!(
        f32_out(
            "Hardmax",
            &attrs(NONE),
            &[T::F(&[3], &[1.0, 3.0, 3.0])],
            &[3]
        )
        .unwrap(),
        [0.0, 1.0, 0.0]
    );
    // LpNormalization p=2 of [3, 4] = [0.6, 0.8]; p=1 = [3/7, 4/7].
    assert_close(
        &f32_out(
            "LpNormalization",
            &attrs(NONE),
            &[T::F(&[2], &[3.0, 4.0])],
            &[2],
        )
        .unwrap(),
        &[0.6, 0.8],
    );
    assert_close(
        &f32_out(
            "LpNormalization",
            &attrs(&[("p", Attr::Int(1))]),
            &[T::F(&[2], &[3.0, 4.0])],
            &[2],
        )
        .unwrap(),
        &[3.0 / 7.0, 4.0 / 7.0],
    );
}

/// Bit-exact comparison (any NaN equals any NaN; the sign of a zero counts).
fn assert_bits(got: &[f32], want: &[f32]) {
    let same = |g: f32, w: f32| (g.is_nan() && w.is_nan()) || g.to_bits() == w.to_bits();
    assert!(
        got.len() == want.len() && got.iter().zip(want).all(|(&g, &w)| same(g, w)),
        "{got:?} vs {want:?}"
    );
}

/// The special-value behaviour the ONNX Runtime cases cannot pin (its own result depends on SIMD
/// lanes or code paths there; see the crate docs, "Semantics worth knowing").
#[test]
fn special_values_where_onnx_runtime_is_not_deterministic() {
    let (nan, inf, low) = (f32::NAN, f32::INFINITY, f32::MIN);
    // ReduceMax/ReduceMin along a row: a NaN first is the result, a NaN later is ignored; of -0
    // and +0 the first is kept.
    let x = [
        nan, 1.0, 2.0, 3.0, nan, -1.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0,
    ];
    let axes = [("axes", Attr::Ints(&[1]))];
    let red = |op| f32_out(op, &attrs(&axes), &[T::F(&[4, 3], &x)], &[4, 1]).unwrap();
    assert_bits(&red("ReduceMax"), &[nan, 3.0, -0.0, 0.0]);
    assert_bits(&red("ReduceMin"), &[nan, -1.0, -0.0, 0.0]);
    // Hardmax: nothing equals a NaN maximum, so the slice is all 0.
    let h = f32_out("Hardmax", &attrs(NONE), &[T::F(&[4, 3], &x)], &[4, 3]).unwrap();
    assert_bits(
        &h,
        &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0],
    );
    // 2-d MaxPool and GlobalMaxPool: NaN ignored, a window of only -inf or NaN is the lowest
    // finite float, ties keep the first.
    let p = [
        nan, 2.0, 1.0, nan, -inf, -inf, -inf, -inf, nan, nan, nan, nan, -0.0, 0.0, 0.0, -0.0,
    ];
    let k = [("kernel_shape", Attr::Ints(&[2, 2]))];
    let m = f32_out(
        "MaxPool",
        &attrs(&k),
        &[T::F(&[1, 4, 2, 2], &p)],
        &[1, 4, 1, 1],
    )
    .unwrap();
    assert_bits(&m, &[2.0, low, low, -0.0]);
    let g = f32_out(
        "GlobalMaxPool",
        &attrs(NONE),
        &[T::F(&[1, 4, 2, 2], &p)],
        &[1, 4, 1, 1],
    );
    assert_bits(&g.unwrap(), &[2.0, low, low, -0.0]);
    // An average of -0s is +0 (the sum starts from +0).
    let a = f32_out(
        "AveragePool",
        &attrs(&k),
        &[T::F(&[1, 1, 2, 2], &[-0.0; 4])],
        &[1, 1, 1, 1],
    );
    assert_bits(&a.unwrap(), &[0.0]);
    // Max and Min keep the first operand of -0 and +0.
    let two = |op, a: f32, b: f32| {
        f32_out(
            op,
            &attrs(NONE),
            &[T::F(&[1], &[a]), T::F(&[1], &[b])],
            &[1],
        )
        .unwrap()[0]
    };
    assert_bits(
        &[
            two("Max", -0.0, 0.0),
            two("Max", 0.0, -0.0),
            two("Min", 0.0, -0.0),
        ],
        &[-0.0, 0.0, 0.0],
    );
    // LRN: a NaN in channel 0 reaches channels 0 and 1 (size 3), not channel 2.
    let l = f32_out(
        "LRN",
        &attrs(&[("size", Attr::Int(3))]),
        &[T::F(&[1, 3, 1, 1], &[nan, 1.0, 1.0])],
        &[1, 3, 1, 1],
    )
    .unwrap();
    assert!(l[0].is_nan() && l[1].is_nan() && l[2].is_finite(), "{l:?}");
    // Resize: a tap of weight 0 is not read (height kept, so the NaN row does not reach row 0).
    let r = f32_out(
        "Resize",
        &attrs(&[("mode", Attr::Str("linear"))]),
        &[
            T::F(&[1, 1, 2, 2], &[1.0, 3.0, nan, inf]),
            T::None,
            T::F(&[4], &[1.0, 1.0, 1.0, 2.0]),
        ],
        &[1, 1, 2, 4],
    )
    .unwrap();
    assert_bits(&r[..4], &[1.0, 1.5, 2.5, 3.0]);
    // ReduceLogSumExp does not overflow: log(e^100 + e^100) = 100 + ln 2.
    let lse = f32_out(
        "ReduceLogSumExp",
        &attrs(NONE),
        &[T::F(&[2], &[100.0, 100.0])],
        &[1],
    )
    .unwrap();
    assert_close(&lse, &[100.0 + core::f32::consts::LN_2]);
}

/// An operand constant along the output's last dimensions (a per-channel `[C, 1, 1]`, with or
/// without leading 1s or batch) on either side of Sub and Div gives, element by element, the
/// value at its broadcast index; the operand whose trailing dimensions are not all broadcast
/// (`[C, 1, W]`) takes the general walk and agrees too.
#[test]
fn per_channel_operands_broadcast_by_index() {
    let out = [2usize, 3, 4, 5];
    let x: Vec<f32> = (0..120).map(|i| i as f32 * 0.5 - 7.0).collect();
    let index = |i: usize, shape: &[usize]| -> usize {
        // The operand's element for output element `i` (numpy broadcasting, aligned right).
        let mut rest = i;
        let mut coords = [0usize; 4];
        for d in (0..4).rev() {
            coords[d] = rest % out[d];
            rest /= out[d];
        }
        let pad = 4 - shape.len();
        shape.iter().enumerate().fold(0, |acc, (d, &n)| {
            acc * n + if n == 1 { 0 } else { coords[pad + d] }
        })
    };
    for shape in [
        &[3usize, 1, 1][..],
        &[1, 3, 1, 1],
        &[2, 3, 1, 1],
        &[2, 1, 1, 1],
        &[3, 1, 5],
    ] {
        let n: usize = shape.iter().product();
        let c: Vec<f32> = (0..n).map(|i| i as f32 + 1.5).collect();
        for (op, f) in [
            ("Sub", (|a: f32, b: f32| a - b) as fn(f32, f32) -> f32),
            ("Div", |a, b| a / b),
        ] {
            let y = f32_out(op, &attrs(NONE), &[T::F(&out, &x), T::F(shape, &c)], &out).unwrap();
            let z = f32_out(op, &attrs(NONE), &[T::F(shape, &c), T::F(&out, &x)], &out).unwrap();
            for i in 0..120 {
                let v = c[index(i, shape)];
                assert_eq!(
                    y[i].to_bits(),
                    f(x[i], v).to_bits(),
                    "{op} x, {shape:?} at {i}"
                );
                assert_eq!(
                    z[i].to_bits(),
                    f(v, x[i]).to_bits(),
                    "{op} {shape:?}, x at {i}"
                );
            }
        }
    }
}
