//! The reference TFLite kernels against cases LiteRT computed.

use std::string::ToString;
use std::vec;
use std::vec::Vec;

use super::*;
use crate::attrs::Attr;
use crate::tensor::DataMut;

/// `op` on float32 `inputs`, its output of `shape`: the output, or the kernel's error.
fn run_f32(
    op: &str,
    attrs: &[(&str, Attr<'_>)],
    inputs: &[(&[usize], &[f32])],
    shape: &[usize],
) -> Result<Vec<f32>, KernelError> {
    let mut out = vec![0.0; shape.iter().product()];
    let inputs: Vec<Input<'_>> = inputs
        .iter()
        .map(|&(shape, data)| Input::Value {
            shape,
            data: Data::F32(data),
        })
        .collect();
    let mut outputs = [Output {
        shape,
        data: DataMut::F32(&mut out),
    }];
    run(op, &Attrs::new(attrs), &inputs, &mut outputs).expect("a tflite operator")?;
    Ok(out)
}

/// `op` on `inputs`, its int8 output of `shape`.
fn run_i8(
    op: &str,
    attrs: &[(&str, Attr<'_>)],
    inputs: &[Input<'_>],
    shape: &[usize],
) -> Result<Vec<i8>, KernelError> {
    let mut out = vec![0; shape.iter().product()];
    let mut outputs = [Output {
        shape,
        data: DataMut::I8(&mut out),
    }];
    run(op, &Attrs::new(attrs), inputs, &mut outputs).expect("a tflite operator")?;
    Ok(out)
}

fn int8<'a>(shape: &'a [usize], data: &'a [i8]) -> Input<'a> {
    Input::Value {
        shape,
        data: Data::I8(data),
    }
}

fn int32<'a>(shape: &'a [usize], data: &'a [i32]) -> Input<'a> {
    Input::Value {
        shape,
        data: Data::I32(data),
    }
}

#[test]
fn issue_36_pad_sizes_past_usize_are_an_error_not_a_panic() {
    let x = [1.0, 2.0];
    let pad = |pads: &[i64], out: &[usize]| {
        run_f32(
            "tflite.PAD",
            &[("pads", Attr::Ints(pads))],
            &[(&[2], &x)],
            out,
        )
    };
    assert_eq!(pad(&[1, 2], &[5]).unwrap(), [0.0, 1.0, 2.0, 0.0, 0.0]);
    // 2 + (2^63 - 1) + (2^63 - 1) is past `usize` (it panicked with overflow).
    let error = pad(&[i64::MAX, i64::MAX], &[1]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "axis 0: 2 + 9223372036854775807 + 9223372036854775807 is past the largest size"
    );
    let error = pad(&[-1, 0], &[1]).unwrap_err();
    assert!(error.to_string().contains("negative pads"), "{error}");
}

#[test]
fn issue_36_windows_reaching_past_usize_are_an_error_not_a_panic() {
    let x = [0.0f32; 9];
    let f = [0.0f32; 4];
    let conv = |attrs: &[(&str, Attr<'_>)]| {
        run_f32(
            "tflite.CONV_2D",
            attrs,
            &[(&[1, 3, 3, 1], &x), (&[1, 2, 2, 1], &f)],
            &[1, 3, 3, 1],
        )
    };
    assert!(conv(&[("pad_top", Attr::Int(1)), ("pad_left", Attr::Int(1))]).is_ok());
    // Output row 2, tap row 1: 2 (2^63 - 1) + (2^63 - 1) is past `usize` (it panicked with
    // overflow); either alone is not.
    let error = conv(&[
        ("stride_h", Attr::Int(i64::MAX)),
        ("dilation_h", Attr::Int(i64::MAX)),
    ])
    .unwrap_err();
    assert!(
        error.to_string().contains("reaches past the largest index"),
        "{error}"
    );
    assert!(conv(&[("dilation_w", Attr::Int(i64::MAX))]).is_ok());
    // Output column 3: 3 (2^63 - 1).
    let pool = run_f32(
        "tflite.MAX_POOL_2D",
        &[
            ("filter_h", Attr::Int(1)),
            ("filter_w", Attr::Int(1)),
            ("stride_w", Attr::Int(i64::MAX)),
        ],
        &[(&[1, 1, 4, 1], &x[..4])],
        &[1, 1, 4, 1],
    );
    let error = pool.unwrap_err();
    assert!(
        error.to_string().contains("reaches past the largest index"),
        "{error}"
    );
}

#[test]
fn issue_36_convolution_channels_past_usize_or_zero_are_an_error_not_a_panic() {
    // A depth multiplier of 2^63 - 1 times 2 input channels (it panicked with overflow).
    let x = [0.0f32; 2];
    let f = [0.0f32; 2];
    let error = run_f32(
        "tflite.DEPTHWISE_CONV_2D",
        &[("depth_multiplier", Attr::Int(i64::MAX))],
        &[(&[1, 1, 1, 2], &x), (&[1, 1, 1, 2], &f)],
        &[1, 1, 1, 2],
    )
    .unwrap_err();
    assert!(error.to_string().contains("does not fit"), "{error}");
    // No input channels: `ic / fi` was a division by zero.
    let error = run_f32(
        "tflite.CONV_2D",
        &[],
        &[(&[1, 1, 1, 0], &[]), (&[1, 1, 1, 1], &[0.0])],
        &[1, 1, 1, 1],
    )
    .unwrap_err();
    assert!(error.to_string().contains("does not fit"), "{error}");
}

#[test]
fn issue_36_offsets_and_zero_points_far_from_int8_never_panic() {
    // LiteRT's offsets are minus an 8-bit zero point; these are int32's ends (each of these
    // ran `i8 + offset` or `i8 - zero_point` with overflow checks).
    let (s, x) = ([1usize, 1, 1, 1], [1i8]);
    let one = [1i32];
    let mult = [1 << 30];
    let (zero, s1) = ([0i32], [1usize]);
    for offset in [i64::from(i32::MAX), i64::from(i32::MIN)] {
        let conv = run_i8(
            "tflite.CONV_2D",
            &[("input_offset", Attr::Int(offset))],
            &[
                int8(&s, &x),
                int8(&s, &x),
                Input::Absent,
                int32(&s1, &mult),
                int32(&s1, &zero),
            ],
            &s,
        );
        assert!(conv.is_ok(), "{conv:?}");
        for name in ["input_offset", "filter_offset"] {
            let fc = run_i8(
                "tflite.FULLY_CONNECTED",
                &[(name, Attr::Int(offset))],
                &[
                    int8(&s1, &x),
                    int8(&[1, 1], &x),
                    Input::Absent,
                    int32(&s1, &mult),
                    int32(&s1, &zero),
                ],
                &[1, 1],
            );
            assert!(fc.is_ok(), "{fc:?}");
            let matmul = run_i8(
                "tflite.BATCH_MATMUL",
                &[
                    (name, Attr::Int(offset)),
                    ("multiplier", Attr::Int(1 << 30)),
                ],
                &[int8(&[1, 1], &x), int8(&[1, 1], &x)],
                &[1, 1],
            );
            assert!(matmul.is_ok(), "{matmul:?}");
        }
        for op in ["tflite.ADD", "tflite.SUB", "tflite.MUL"] {
            let binary = run_i8(
                op,
                &[
                    ("input1_offset", Attr::Int(offset)),
                    ("input2_offset", Attr::Int(offset)),
                ],
                &[int8(&s1, &x), int8(&s1, &x)],
                &s1,
            );
            assert!(binary.is_ok(), "{op}: {binary:?}");
        }
        for op in ["tflite.RELU", "tflite.MEAN", "tflite.QUANTIZE"] {
            let unary = run_i8(
                op,
                &[
                    ("input_zero_point", Attr::Int(offset)),
                    ("multiplier", Attr::Int(1 << 30)),
                ],
                &[int8(&s1, &x)],
                &s1,
            );
            assert!(unary.is_ok(), "{op}: {unary:?}");
        }
        let mut out = [0.0f32];
        let mut outputs = [Output {
            shape: &s1,
            data: DataMut::F32(&mut out),
        }];
        let attrs = [("zero_point", Attr::Int(offset))];
        run(
            "tflite.DEQUANTIZE",
            &Attrs::new(&attrs),
            &[int8(&s1, &x)],
            &mut outputs,
        )
        .unwrap()
        .unwrap();
        assert_eq!(out[0], (1.0 - offset as f64) as f32);
    }
    let _ = one;
}

#[test]
fn issue_36_an_int8_average_past_int32_is_exact() {
    // 4113 x 4113 taps of 127: a sum of 2,148,429,663, past int32 (it panicked with
    // overflow; LiteRT's int32 sum would wrap). The mean is 127.
    let side = 4113usize;
    let x = vec![127i8; side * side];
    let shape = [1, side, side, 1];
    let side = i64::try_from(side).unwrap();
    let out = run_i8(
        "tflite.AVERAGE_POOL_2D",
        &[("filter_h", Attr::Int(side)), ("filter_w", Attr::Int(side))],
        &[int8(&shape, &x)],
        &[1, 1, 1, 1],
    );
    assert_eq!(out.unwrap(), [127]);
}

#[test]
fn issue_36_strided_slice_spans_past_int64_are_an_error_not_a_panic() {
    let x = [1.0f32, 2.0, 3.0];
    let slice = |begin: i64, stride: i64, len: i64, out: usize| {
        run_f32(
            "tflite.STRIDED_SLICE",
            &[
                ("begin", Attr::Ints(&[begin])),
                ("strides", Attr::Ints(&[stride])),
                ("out_shape", Attr::Ints(&[len])),
            ],
            &[(&[3], &x)],
            &[out],
        )
    };
    assert_eq!(slice(2, -1, 3, 3).unwrap(), [3.0, 2.0, 1.0]);
    // 2 + i64::MAX: past int64 (it panicked with overflow).
    let error = slice(2, i64::MAX, 2, 2).unwrap_err();
    assert!(
        error.to_string().contains("leaves axis 0 of size 3"),
        "{error}"
    );
    let error = slice(0, i64::MIN, 3, 3).unwrap_err();
    assert!(
        error.to_string().contains("leaves axis 0 of size 3"),
        "{error}"
    );
}

/// MEAN over one run of axes (NHWC's H and W, as a global average pool) takes the blocked
/// loop; its outputs are those of the element-by-element sums it replaces, for float32 bits
/// (the same order of additions) and int8 bytes (int32 sums of `x - zp_in`, requantised), with
/// more than 64 channels (several columns of sums) and a single pixel.
#[test]
fn a_mean_over_the_spatial_axes_equals_the_sums_element_by_element() {
    let axes = [1i64, 2];
    for (n, h, w, c) in [(1, 5, 3, 7), (2, 4, 4, 70), (1, 1, 1, 3), (3, 2, 6, 64)] {
        let xs = [n, h, w, c];
        let len = n * h * w * c;
        let xf: Vec<f32> = (0..len).map(|i| (i as f32 * 0.37).sin() * 3.0).collect();
        let got = run_f32(
            "tflite.MEAN",
            &[("axes", Attr::Ints(&axes))],
            &[(&xs, &xf)],
            &[n, 1, 1, c],
        )
        .unwrap();
        let mut want = vec![0.0f32; n * c];
        for (i, &v) in xf.iter().enumerate() {
            let (b, ch) = (i / (h * w * c), i % c);
            want[b * c + ch] += v;
        }
        for v in &mut want {
            *v /= (h * w) as f32;
        }
        assert_eq!(
            got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            "{xs:?}"
        );
        let xq: Vec<i8> = (0..len).map(|i| (i * 37 % 256) as u8 as i8).collect();
        let (zp_in, zp_out, m, sh) = (-5i64, 3i64, 1_518_500_250i64, -3i64);
        let attrs = [
            ("axes", Attr::Ints(&axes)),
            ("input_zero_point", Attr::Int(zp_in)),
            ("output_zero_point", Attr::Int(zp_out)),
            ("multiplier", Attr::Int(m)),
            ("shift", Attr::Int(sh)),
        ];
        let got = run_i8("tflite.MEAN", &attrs, &[int8(&xs, &xq)], &[n, 1, 1, c]).unwrap();
        let mut sums = vec![0i32; n * c];
        for (i, &v) in xq.iter().enumerate() {
            let (b, ch) = (i / (h * w * c), i % c);
            sums[b * c + ch] += i32::from(v) - zp_in as i32;
        }
        let want: Vec<i8> = sums
            .iter()
            .map(|&s| {
                let v = quant::multiply_by_quantized_multiplier(s, m as i32, sh as i32)
                    .saturating_add(zp_out as i32);
                v.clamp(-128, 127) as i8
            })
            .collect();
        assert_eq!(got, want, "{xs:?}");
    }
}
