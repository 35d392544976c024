//! The specialised int8 kernels against the reference `tflite.*` kernels, byte for byte, on
//! random shapes, geometries and quantisations, by both inner-loop methods ([`Plain`] and the
//! DSP instructions emulated, [`Packed`]`<`[`Emulated`]`>`; the Cortex-M firmware test runs the
//! real instructions).

use std::vec;
use std::vec::Vec;

use proptest::prelude::*;

use super::conv::{conv_in_place_with, conv_with};
use super::depthwise::{depthwise_in_place_with, depthwise_with};
use super::dot::{Packed, Plain};
use super::dsp::Emulated;
use super::fully_connected::fully_connected_with;
use super::*;
use crate::attrs::{Attr, Attrs};
use crate::tensor::{Data, DataMut, Input, Output};

type Emu = Packed<Emulated>;

/// The reference kernel `op` on int8 `x` and `filter`, int32 `bias`, `mult`, `shift`.
#[allow(clippy::too_many_arguments)]
fn reference(
    op: &str,
    attrs: &[(&str, Attr<'_>)],
    (xs, x): (&[usize], &[i8]),
    (fs, filter): (&[usize], &[i8]),
    bias: Option<&[i32]>,
    mult: &[i32],
    shift: &[i32],
    os: &[usize],
) -> Vec<i8> {
    let mut out = vec![0i8; os.iter().product()];
    let (bs, ms) = ([bias.map_or(0, <[i32]>::len)], [mult.len()]);
    let inputs = [
        Input::Value {
            shape: xs,
            data: Data::I8(x),
        },
        Input::Value {
            shape: fs,
            data: Data::I8(filter),
        },
        bias.map_or(Input::Absent, |b| Input::Value {
            shape: &bs,
            data: Data::I32(b),
        }),
        Input::Value {
            shape: &ms,
            data: Data::I32(mult),
        },
        Input::Value {
            shape: &ms,
            data: Data::I32(shift),
        },
    ];
    let mut outputs = [Output {
        shape: os,
        data: DataMut::I8(&mut out),
    }];
    crate::tflite::run(op, &Attrs::new(attrs), &inputs, &mut outputs)
        .expect("a tflite operator")
        .expect("the reference runs");
    out
}

fn bytes(len: usize) -> impl Strategy<Value = Vec<i8>> {
    proptest::collection::vec(any::<i8>(), len)
}

/// Per-channel quantisation: bias, multipliers in `[2^30, 2^31)`, shifts, for `n` channels.
fn quantisation(
    n: usize,
    bias_range: i32,
) -> impl Strategy<Value = (Vec<i32>, Vec<i32>, Vec<i32>)> {
    (
        proptest::collection::vec(-bias_range..=bias_range, n),
        proptest::collection::vec(1i32 << 30..=i32::MAX, n),
        proptest::collection::vec(-12i32..=1, n),
    )
}

/// Offsets and an activation range: `(input_offset, output_offset, act_min, act_max)`.
fn offsets() -> impl Strategy<Value = (i32, i32, i32, i32)> {
    (-127i32..=128, -128i32..=127, -128i32..=0)
        .prop_flat_map(|(i, o, lo)| (Just(i), Just(o), Just(lo), lo..=127))
}

/// A convolution's geometry: `[batches, ih, iw, ic, oh, ow, oc, kh, kw, sh, sw, dh, dw, pt, pl]`.
fn geometry() -> impl Strategy<Value = [usize; 15]> {
    (
        (
            1usize..=2,
            1usize..=7,
            1usize..=7,
            1usize..=9,
            1usize..=5,
            1usize..=5,
            1usize..=7,
        ),
        (
            1usize..=3,
            1usize..=3,
            1usize..=2,
            1usize..=2,
            1usize..=2,
            1usize..=2,
            0usize..=2,
            0usize..=2,
        ),
    )
        .prop_map(
            |((n, ih, iw, ic, oh, ow, oc), (kh, kw, sh, sw, dh, dw, pt, pl))| {
                [n, ih, iw, ic, oh, ow, oc, kh, kw, sh, sw, dh, dw, pt, pl]
            },
        )
}

fn window_attrs(
    g: &[usize; 15],
    (io, oo, lo, hi): (i32, i32, i32, i32),
) -> Vec<(&'static str, Attr<'static>)> {
    let int = |v: usize| Attr::Int(i64::try_from(v).unwrap());
    vec![
        ("stride_h", int(g[9])),
        ("stride_w", int(g[10])),
        ("dilation_h", int(g[11])),
        ("dilation_w", int(g[12])),
        ("pad_top", int(g[13])),
        ("pad_left", int(g[14])),
        ("act_min", Attr::Int(lo.into())),
        ("act_max", Attr::Int(hi.into())),
        ("input_offset", Attr::Int(io.into())),
        ("output_offset", Attr::Int(oo.into())),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn conv_equals_the_reference(
        (g, x, filter, (bias, mult, shift), has_bias) in geometry().prop_flat_map(|g| {
            let k = g[7] * g[8] * g[3];
            (Just(g), bytes(g[0] * g[1] * g[2] * g[3]), bytes(g[6] * k), quantisation(g[6], 1 << 20), any::<bool>())
        }),
        q in offsets(),
    ) {
        let [n, ih, iw, ic, oh, ow, oc, kh, kw, sh, sw, dh, dw, pt, pl] = g;
        let want = reference(
            "tflite.CONV_2D",
            &window_attrs(&g, q),
            (&[n, ih, iw, ic], &x),
            (&[oc, kh, kw, ic], &filter),
            has_bias.then_some(&bias[..]),
            &mult,
            &shift,
            &[n, oh, ow, oc],
        );
        let p = Conv {
            batches: n,
            input: [ih, iw, ic],
            output: [oh, ow, oc],
            kernel: [kh, kw],
            stride: [sh, sw],
            dilation: [dh, dw],
            pad: [pt, pl],
            input_offset: q.0,
            output_offset: q.1,
            act: [q.2, q.3],
        };
        let mut folded = vec![0; oc];
        fold_input_offset(&filter, has_bias.then_some(&bias[..]), q.0, &mut folded).unwrap();
        let mut scratch = vec![0u64; p.scratch_bytes().div_ceil(8)];
        let mut plain = vec![0i8; want.len()];
        conv_with::<Plain>(&p, &x, &filter, &folded, &mult, &shift, &mut plain, &mut scratch).unwrap();
        prop_assert_eq!(&plain, &want);
        let mut packed = vec![0i8; want.len()];
        conv_with::<Emu>(&p, &x, &filter, &folded, &mult, &shift, &mut packed, &mut scratch).unwrap();
        prop_assert_eq!(&packed, &want);
    }

    #[test]
    fn pointwise_conv_equals_the_reference(
        (n, pixels, ic, oc) in (1usize..=2, 1usize..=9, 1usize..=20, 1usize..=9),
        seed in any::<u64>(),
        q in offsets(),
    ) {
        // A 1 x 1 convolution reads its rows in place (no scratch at all).
        let g = [n, pixels, 1, ic, pixels, 1, oc, 1, 1, 1, 1, 1, 1, 0, 0];
        let x: Vec<i8> = (0..n * pixels * ic).map(|i| (seed.rotate_left(i as u32 % 64) as i8) ^ i as i8).collect();
        let filter: Vec<i8> = (0..oc * ic).map(|i| (seed >> (i % 57)) as i8).collect();
        let bias: Vec<i32> = (0..oc).map(|o| (seed as i32).wrapping_mul(o as i32 + 1) >> 12).collect();
        let mult = vec![1_518_500_250; oc];
        let shift: Vec<i32> = (0..oc).map(|o| -(o as i32 % 9)).collect();
        let want = reference(
            "tflite.CONV_2D",
            &window_attrs(&g, q),
            (&[n, pixels, 1, ic], &x),
            (&[oc, 1, 1, ic], &filter),
            Some(&bias),
            &mult,
            &shift,
            &[n, pixels, 1, oc],
        );
        let p = Conv {
            batches: n,
            input: [pixels, 1, ic],
            output: [pixels, 1, oc],
            kernel: [1, 1],
            stride: [1, 1],
            dilation: [1, 1],
            pad: [0, 0],
            input_offset: q.0,
            output_offset: q.1,
            act: [q.2, q.3],
        };
        prop_assert!(p.pointwise());
        let mut scratch = vec![0u64; p.scratch_bytes().div_ceil(8)];
        let mut folded = vec![0; oc];
        fold_input_offset(&filter, Some(&bias), q.0, &mut folded).unwrap();
        for packed in [false, true] {
            let mut got = vec![0i8; want.len()];
            if packed {
                conv_with::<Emu>(&p, &x, &filter, &folded, &mult, &shift, &mut got, &mut scratch).unwrap();
            } else {
                conv_with::<Plain>(&p, &x, &filter, &folded, &mult, &shift, &mut got, &mut scratch).unwrap();
            }
            prop_assert_eq!(&got, &want);
        }
        // Written over its own input, when it has no more output than input channels.
        prop_assert_eq!(p.in_place(), oc <= ic);
        for packed in [false, true] {
            let mut data = x.clone();
            let run = if packed {
                conv_in_place_with::<Emu>(&p, &mut data, &filter, &folded, &mult, &shift, &mut scratch)
            } else {
                conv_in_place_with::<Plain>(&p, &mut data, &filter, &folded, &mult, &shift, &mut scratch)
            };
            if oc <= ic {
                run.unwrap();
                prop_assert_eq!(&data[..want.len()], &want[..]);
            } else {
                prop_assert!(run.is_err());
            }
        }
    }

    #[test]
    fn depthwise_equals_the_reference(
        (g, x, filter, (bias, mult, shift), has_bias) in geometry().prop_flat_map(|g| {
            // Depth multiplier 1: as many output channels as input channels.
            (Just(g), bytes(g[0] * g[1] * g[2] * g[3]), bytes(g[7] * g[8] * g[3]), quantisation(g[3], 1 << 20), any::<bool>())
        }),
        q in offsets(),
    ) {
        let [n, ih, iw, c, oh, ow, _, kh, kw, sh, sw, dh, dw, pt, pl] = g;
        let mut attrs = window_attrs(&g, q);
        attrs.push(("depth_multiplier", Attr::Int(1)));
        let want = reference(
            "tflite.DEPTHWISE_CONV_2D",
            &attrs,
            (&[n, ih, iw, c], &x),
            (&[1, kh, kw, c], &filter),
            has_bias.then_some(&bias[..]),
            &mult,
            &shift,
            &[n, oh, ow, c],
        );
        let p = Depthwise {
            batches: n,
            input: [ih, iw],
            output: [oh, ow],
            channels: c,
            kernel: [kh, kw],
            stride: [sh, sw],
            dilation: [dh, dw],
            pad: [pt, pl],
            input_offset: q.0,
            output_offset: q.1,
            act: [q.2, q.3],
        };
        let bias = if has_bias { bias } else { vec![0; c] };
        let mut plain = vec![0i8; want.len()];
        depthwise_with::<Plain>(&p, &x, &filter, &bias, &mult, &shift, &mut plain).unwrap();
        prop_assert_eq!(&plain, &want);
        let mut packed = vec![0i8; want.len()];
        depthwise_with::<Emu>(&p, &x, &filter, &bias, &mult, &shift, &mut packed).unwrap();
        prop_assert_eq!(&packed, &want);
        // Written over its own input, when the output is no larger.
        if let Some(bytes) = p.in_place_scratch_bytes() {
            let mut ring = vec![0u64; bytes.div_ceil(8)];
            let mut data = x.clone();
            depthwise_in_place_with::<Plain>(&p, &mut data, &filter, &bias, &mult, &shift, &mut ring).unwrap();
            prop_assert_eq!(&data[..want.len()], &want[..]);
            let mut data = x.clone();
            depthwise_in_place_with::<Emu>(&p, &mut data, &filter, &bias, &mult, &shift, &mut ring).unwrap();
            prop_assert_eq!(&data[..want.len()], &want[..]);
            // One byte of ring short is an error, not a wrong answer.
            if bytes > 0 {
                let mut short = vec![0u64; (bytes - 1) / 8];
                prop_assert!(depthwise_in_place_with::<Plain>(&p, &mut x.clone(), &filter, &bias, &mult, &shift, &mut short).is_err());
            }
        } else {
            prop_assert!(want.len() > x.len());
        }
    }

    #[test]
    fn fully_connected_equals_the_reference(
        ((batches, depth, units), x, filter, (bias, mult, shift), has_bias) in
            (1usize..=3, 1usize..=40, 1usize..=9).prop_flat_map(|(b, d, u)| {
                (Just((b, d, u)), bytes(b * d), bytes(u * d), quantisation(u, 1 << 20), any::<bool>())
            }),
        q in offsets(),
    ) {
        let attrs = [
            ("act_min", Attr::Int(q.2.into())),
            ("act_max", Attr::Int(q.3.into())),
            ("input_offset", Attr::Int(q.0.into())),
            ("filter_offset", Attr::Int(0)),
            ("output_offset", Attr::Int(q.1.into())),
        ];
        let want = reference(
            "tflite.FULLY_CONNECTED",
            &attrs,
            (&[batches, depth], &x),
            (&[units, depth], &filter),
            has_bias.then_some(&bias[..]),
            &mult,
            &shift,
            &[batches, units],
        );
        let p = FullyConnected {
            batches,
            depth,
            units,
            input_offset: q.0,
            output_offset: q.1,
            act: [q.2, q.3],
        };
        let mut folded = vec![0; units];
        fold_input_offset(&filter, has_bias.then_some(&bias[..]), q.0, &mut folded).unwrap();
        let mut plain = vec![0i8; want.len()];
        fully_connected_with::<Plain>(&p, &x, &filter, &folded, &mult, &shift, &mut plain).unwrap();
        prop_assert_eq!(&plain, &want);
        let mut packed = vec![0i8; want.len()];
        fully_connected_with::<Emu>(&p, &x, &filter, &folded, &mult, &shift, &mut packed).unwrap();
        prop_assert_eq!(&packed, &want);
    }
}

#[test]
fn bad_parameters_and_lengths_are_errors() {
    let p = Conv {
        batches: 1,
        input: [3, 3, 2],
        output: [3, 3, 2],
        kernel: [3, 3],
        stride: [1, 1],
        dilation: [1, 1],
        pad: [1, 1],
        input_offset: 5,
        output_offset: 0,
        act: [-128, 127],
    };
    let (x, f, q) = ([0i8; 18], [1i8; 36], [1 << 30; 2]);
    let mut out = [0i8; 18];
    // K = 18: five quads of 16 bytes.
    assert_eq!(p.scratch_bytes(), 80);
    let mut scratch = [0u64; 10];
    assert!(conv(&p, &x, &f, &[0; 2], &q, &[0; 2], &mut out, &mut scratch).is_ok());
    assert!(
        conv(
            &p,
            &x[1..],
            &f,
            &[0; 2],
            &q,
            &[0; 2],
            &mut out,
            &mut scratch
        )
        .is_err()
    );
    assert!(
        conv(
            &p,
            &x,
            &f,
            &[0; 2],
            &q,
            &[0; 2],
            &mut out,
            &mut scratch[..9]
        )
        .is_err()
    );
    for bad in [
        Conv {
            stride: [0, 1],
            ..p
        },
        Conv {
            input_offset: 129,
            ..p
        },
        Conv { act: [10, 5], ..p },
    ] {
        assert!(bad.check().is_err(), "{bad:?}");
        assert!(conv(&bad, &x, &f, &[0; 2], &q, &[0; 2], &mut out, &mut scratch).is_err());
    }
    // No input channels: the outputs are the biases, requantised.
    let empty = Conv {
        input: [3, 3, 0],
        ..p
    };
    let mut out = [9i8; 18];
    conv(
        &empty,
        &[],
        &[],
        &[0, 1 << 16],
        &q,
        &[0, -10],
        &mut out,
        &mut [],
    )
    .unwrap();
    assert_eq!(out[..2], [0, 32]);
    // The folded bias: 7 + 5 * (1 + 2 + 3) for one row.
    let mut folded = [0; 1];
    fold_input_offset(&[1, 2, 3], Some(&[7]), 5, &mut folded).unwrap();
    assert_eq!(folded, [37]);
    assert!(fold_input_offset(&[1, 2, 3], None, 5, &mut [0; 2]).is_err());
    // An average window past what an int32 sum holds (a max one is fine).
    let wide = Pool {
        max: false,
        batches: 1,
        input: [4089, 4089],
        output: [1, 1],
        channels: 1,
        filter: [4089, 4089],
        stride: [1, 1],
        pad: [0, 0],
        act: [-128, 127],
    };
    assert!(wide.check().is_err());
    assert!(Pool { max: true, ..wide }.check().is_ok());
    assert!(
        Pool {
            input: [4088, 4088],
            filter: [4088, 4088],
            ..wide
        }
        .check()
        .is_ok()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    /// The branch-free requantisation equals TFLite's for every multiplier but `i32::MIN`.
    #[test]
    fn requantisation_equals_tflites(
        x in any::<i32>(),
        m in prop_oneof![1i32 << 30..=i32::MAX, i32::MIN + 1..=i32::MAX, Just(0)],
        shift in -40i32..=40,
    ) {
        prop_assert_eq!(
            multiply_by_quantized_multiplier(x, m, shift),
            crate::tflite::quant::multiply_by_quantized_multiplier(x, m, shift)
        );
        prop_assert_eq!(
            multiply_by_quantized_multiplier_single(x, m, shift),
            crate::tflite::quant::multiply_by_quantized_multiplier_single(x, m, shift)
        );
    }
}

#[test]
fn requantisation_edges_equal_tflites() {
    let edges = [
        0,
        1,
        -1,
        2,
        -2,
        (1 << 30),
        -(1 << 30),
        i32::MAX,
        i32::MIN,
        i32::MIN + 1,
    ];
    for &x in &edges {
        for &m in &edges[..9] {
            if m == i32::MIN {
                continue;
            }
            for shift in -33..=33 {
                assert_eq!(
                    multiply_by_quantized_multiplier(x, m, shift),
                    crate::tflite::quant::multiply_by_quantized_multiplier(x, m, shift),
                    "x {x} m {m} shift {shift}"
                );
                assert_eq!(
                    multiply_by_quantized_multiplier_single(x, m, shift),
                    crate::tflite::quant::multiply_by_quantized_multiplier_single(x, m, shift),
                    "single: x {x} m {m} shift {shift}"
                );
            }
        }
    }
}

/// The reference kernel `op` on int8 operands `xs` (shape, values) into an output of `os`.
fn reference_plain(
    op: &str,
    attrs: &[(&str, Attr<'_>)],
    xs: &[(&[usize], &[i8])],
    os: &[usize],
) -> Result<Vec<i8>, crate::error::KernelError> {
    let mut out = vec![0i8; os.iter().product()];
    let inputs: Vec<Input<'_>> = xs
        .iter()
        .map(|&(shape, x)| Input::Value {
            shape,
            data: Data::I8(x),
        })
        .collect();
    let mut outputs = [Output {
        shape: os,
        data: DataMut::I8(&mut out),
    }];
    crate::tflite::run(op, &Attrs::new(attrs), &inputs, &mut outputs)
        .expect("a tflite operator")?;
    Ok(out)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn pools_equal_the_reference(
        (n, ih, iw, c, fh, fw, sh, sw, pt, pl) in (1usize..=2, 1usize..=6, 1usize..=6, 1usize..=70, 1usize..=4, 1usize..=4, 1usize..=3, 1usize..=3, 0usize..=2, 0usize..=2),
        (oh, ow) in (1usize..=5, 1usize..=5),
        max in any::<bool>(),
        seed in any::<u64>(),
        (lo, hi) in (-128i32..=0).prop_flat_map(|lo| (Just(lo), lo..=127)),
    ) {
        let x: Vec<i8> = (0..n * ih * iw * c).map(|i| (seed.rotate_left((i % 64) as u32) as i8) ^ (i as i8)).collect();
        let int = |v: usize| Attr::Int(i64::try_from(v).unwrap());
        let attrs = [
            ("filter_h", int(fh)), ("filter_w", int(fw)), ("stride_h", int(sh)), ("stride_w", int(sw)),
            ("pad_top", int(pt)), ("pad_left", int(pl)), ("act_min", Attr::Int(lo.into())), ("act_max", Attr::Int(hi.into())),
        ];
        let op = if max { "tflite.MAX_POOL_2D" } else { "tflite.AVERAGE_POOL_2D" };
        let want = reference_plain(op, &attrs, &[(&[n, ih, iw, c], &x)], &[n, oh, ow, c]);
        let p = Pool { max, batches: n, input: [ih, iw], output: [oh, ow], channels: c, filter: [fh, fw], stride: [sh, sw], pad: [pt, pl], act: [lo, hi] };
        let mut got = vec![0i8; n * oh * ow * c];
        match want {
            // A window wholly in the padding: both refuse it.
            Err(_) => prop_assert!(pool(&p, &x, &mut got).is_err()),
            Ok(want) => {
                pool(&p, &x, &mut got).unwrap();
                prop_assert_eq!(got, want);
            }
        }
    }

    #[test]
    fn elementwise_equals_the_reference(
        (a, b) in (0usize..=40).prop_flat_map(|len| (bytes(len), bytes(len))),
        which in 0usize..3,
        (o1, o2, oo) in (-127i32..=128, -127i32..=128, -128i32..=127),
        (m1, m2, mo) in (1i32 << 30..=i32::MAX, 1i32 << 30..=i32::MAX, 1i32 << 30..=i32::MAX),
        (s1, s2, so) in (-8i32..=0, -8i32..=0, -24i32..=0),
        left in 0i32..=20,
        (lo, hi) in (-128i32..=0).prop_flat_map(|lo| (Just(lo), lo..=127)),
    ) {
        let op = [Operator::Add, Operator::Sub, Operator::Mul][which];
        let name = ["tflite.ADD", "tflite.SUB", "tflite.MUL"][which];
        let attrs = [
            ("act_min", Attr::Int(lo.into())), ("act_max", Attr::Int(hi.into())),
            ("input1_offset", Attr::Int(o1.into())), ("input2_offset", Attr::Int(o2.into())),
            ("output_offset", Attr::Int(oo.into())), ("left_shift", Attr::Int(left.into())),
            ("input1_multiplier", Attr::Int(m1.into())), ("input1_shift", Attr::Int(s1.into())),
            ("input2_multiplier", Attr::Int(m2.into())), ("input2_shift", Attr::Int(s2.into())),
            ("output_multiplier", Attr::Int(mo.into())), ("output_shift", Attr::Int(so.into())),
        ];
        let shape = [a.len()];
        let want = reference_plain(name, &attrs, &[(&shape, &a), (&shape, &b)], &shape).unwrap();
        let mul = op == Operator::Mul;
        let p = Elementwise {
            op, len: a.len(), input1_offset: o1, input2_offset: o2,
            left_shift: if mul { 0 } else { left },
            input1: [m1, s1], input2: [m2, s2], output: [mo, so], output_offset: oo, act: [lo, hi],
        };
        let mut got = vec![0i8; a.len()];
        elementwise(&p, &a, &b, &mut got).unwrap();
        prop_assert_eq!(&got, &want);
        // Written over its first operand.
        let mut data = a.clone();
        elementwise_in_place(&p, &mut data, &b).unwrap();
        prop_assert_eq!(data, want);
    }
}
