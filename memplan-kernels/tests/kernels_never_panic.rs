//! Bad input never panics a kernel: every supported operator is run on thousands of
//! pseudo-random combinations of shapes, dtypes, in-place inputs and attributes (most of them
//! nonsense), and must return `Ok` or `Err`, never unwind. Fixed seed, so a failure reproduces.
//! Each run gets the scratch [`scratch_len`] asks for (none when it refuses the node), and one
//! run in eight a word less, which a kernel that needs scratch must refuse.

mod common;

use common::{Buf, Lcg, OwnedAttr, attr_list};
use memplan_kernels::{Attrs, Data, DataMut, Input, Output, run, scratch_len, supported};

fn shape(rng: &mut Lcg) -> Vec<usize> {
    let rank = rng.below(5);
    (0..rank)
        .map(|_| usize::try_from(*rng.pick(&[1u64, 1, 2, 3, 4, 0])).unwrap())
        .collect()
}

fn buf(rng: &mut Lcg, n: usize) -> Buf {
    match rng.below(6) {
        0 => Buf::I64(
            (0..n)
                .map(|_| *rng.pick(&[-3i64, -1, 0, 1, 2, 3, i64::MAX, i64::MIN]))
                .collect(),
        ),
        1 => Buf::I32((0..n).map(|_| *rng.pick(&[-2i32, 0, 1, 2])).collect()),
        2 => Buf::Bool(
            (0..n)
                .map(|_| u8::try_from(rng.below(2)).unwrap())
                .collect(),
        ),
        _ => Buf::F32(
            (0..n)
                .map(|_| *rng.pick(&[0.0f32, 1.0, -1.5, 2.0, 0.5, f32::NAN, f32::INFINITY]))
                .collect(),
        ),
    }
}

fn attr(rng: &mut Lcg) -> (String, OwnedAttr) {
    let name = *rng.pick(&[
        "axis",
        "axes",
        "perm",
        "pads",
        "strides",
        "dilations",
        "kernel_shape",
        "group",
        "auto_pad",
        "ceil_mode",
        "count_include_pad",
        "keepdims",
        "noop_with_empty_axes",
        "to",
        "mode",
        "coordinate_transformation_mode",
        "nearest_mode",
        "alpha",
        "beta",
        "transA",
        "transB",
        "epsilon",
        "split",
        "num_outputs",
        "allowzero",
        "start",
        "end",
        "value",
        "min",
        "max",
        "starts",
        "ends",
    ]);
    let ints = |rng: &mut Lcg| -> Vec<i64> {
        (0..rng.below(5))
            .map(|_| *rng.pick(&[-3i64, -1, 0, 1, 2, 3, 7]))
            .collect()
    };
    let value = match rng.below(6) {
        0 => OwnedAttr::Int(*rng.pick(&[-2i64, -1, 0, 1, 2, 3, 7, 9, i64::MIN])),
        1 => OwnedAttr::Float(*rng.pick(&[0.0f32, 0.5, -1.0, f32::NAN])),
        2 => OwnedAttr::Str(
            (*rng.pick(&[
                "NOTSET",
                "VALID",
                "SAME_UPPER",
                "SAME_LOWER",
                "linear",
                "nearest",
                "cubic",
                "half_pixel",
                "align_corners",
                "asymmetric",
                "ceil",
                "floor",
                "bogus",
            ]))
            .to_string(),
        ),
        3 | 4 => OwnedAttr::Ints(ints(rng)),
        _ => OwnedAttr::Floats(vec![1.0, 2.0]),
    };
    (name.to_string(), value)
}

#[test]
fn no_operator_panics_on_random_input() {
    let mut rng = Lcg(20_261_201);
    let mut ok = 0;
    let mut err = 0;
    for &op in supported::SUPPORTED_OPS {
        for iteration in 0..400 {
            let n_in = rng.below(5);
            let n_out = 1 + rng.below(3);
            let mut in_shapes: Vec<Vec<usize>> = (0..n_in).map(|_| shape(&mut rng)).collect();
            let out_shapes: Vec<Vec<usize>> = (0..n_out)
                .map(|o| {
                    // Often the output has the shape of an input, making in place possible.
                    if o == 0 && n_in > 0 && rng.below(2) == 0 {
                        in_shapes[0].clone()
                    } else {
                        shape(&mut rng)
                    }
                })
                .collect();
            if rng.below(4) == 0 && n_in > 1 {
                in_shapes[1] = vec![in_shapes[1].len().min(2)];
            }
            let in_bufs: Vec<Buf> = in_shapes
                .iter()
                .map(|s| buf(&mut rng, s.iter().product()))
                .collect();
            let mut out_bufs: Vec<Buf> = out_shapes
                .iter()
                .map(|s| buf(&mut rng, s.iter().product()))
                .collect();
            let absent = rng.below(6);
            let in_place = rng.below(4);
            let inputs: Vec<Input<'_>> = in_bufs
                .iter()
                .zip(&in_shapes)
                .enumerate()
                .map(|(i, (b, s))| {
                    if absent == i as u64 + 1 {
                        Input::Absent
                    } else if in_place == i as u64 + 1 && rng.below(2) == 0 {
                        Input::InPlace {
                            output: 0,
                            shape: s,
                        }
                    } else {
                        Input::Value {
                            shape: s,
                            data: b.data(),
                        }
                    }
                })
                .collect();
            let owned: Vec<(String, OwnedAttr)> =
                (0..rng.below(4)).map(|_| attr(&mut rng)).collect();
            let list = attr_list(&owned);
            let attrs = Attrs::new(&list);
            let in_views: Vec<Option<&[usize]>> = inputs
                .iter()
                .map(|i| match i {
                    Input::Absent => None,
                    Input::Value { shape, .. } | Input::InPlace { shape, .. } => Some(*shape),
                })
                .collect();
            let out_views: Vec<&[usize]> = out_shapes.iter().map(Vec::as_slice).collect();
            let mut words = match std::panic::catch_unwind(|| {
                scratch_len(op, &attrs, &in_views, &out_views)
            }) {
                Ok(r) => r.unwrap_or(0),
                Err(_) => panic!(
                    "scratch_len of {op} panicked on inputs {in_shapes:?}, outputs {out_shapes:?}, attrs {owned:?}"
                ),
            };
            if iteration % 8 == 7 {
                words = words.saturating_sub(1);
            }
            let mut scratch = vec![0u64; words];
            let mut outputs: Vec<Output<'_>> = out_bufs
                .iter_mut()
                .zip(&out_shapes)
                .map(|(b, s)| Output {
                    shape: s,
                    data: b.data_mut(),
                })
                .collect();
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run(op, &attrs, &inputs, &mut outputs, &mut scratch)
            }));
            match result {
                Ok(Ok(())) => ok += 1,
                Ok(Err(e)) => {
                    assert!(e.to_string().starts_with(op), "{e} does not name {op}");
                    err += 1;
                }
                Err(_) => panic!(
                    "{op} panicked on inputs {in_shapes:?}, outputs {out_shapes:?}, attrs {owned:?}, scratch {words} words, absent {absent}, in place {in_place}"
                ),
            }
        }
    }
    println!("{ok} Ok, {err} Err");
    assert!(
        ok > 100 && err > 1000,
        "{ok} Ok, {err} Err: the generator should hit both"
    );
}

#[test]
fn mismatched_views_are_errors() {
    let x = [1.0f32, 2.0, 3.0];
    let mut y = [0.0f32; 2];
    // Input slice shorter than its shape.
    let bad = [Input::Value {
        shape: &[4],
        data: Data::F32(&x),
    }];
    let mut outs = [Output {
        shape: &[2],
        data: DataMut::F32(&mut y),
    }];
    assert!(run("Relu", &Attrs::default(), &bad, &mut outs, &mut []).is_err());
    // In place on a missing output, or on an output of another size.
    let bad = [Input::InPlace {
        output: 1,
        shape: &[2],
    }];
    assert!(run("Relu", &Attrs::default(), &bad, &mut outs, &mut []).is_err());
    let bad = [Input::InPlace {
        output: 0,
        shape: &[3],
    }];
    assert!(run("Relu", &Attrs::default(), &bad, &mut outs, &mut []).is_err());
    // Wrong output shape for an elementwise op.
    let good = [Input::Value {
        shape: &[3],
        data: Data::F32(&x),
    }];
    let e = run("Relu", &Attrs::default(), &good, &mut outs, &mut []).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Relu: output 0 has shape [2], the operator computes [3]"
    );
    // Unknown operator.
    let e = run("Loop", &Attrs::default(), &good, &mut outs, &mut []).unwrap_err();
    assert_eq!(e.to_string(), "Loop: operator type not supported");
}

#[test]
fn too_little_scratch_is_an_error() {
    // Resize 1x1x2x2 -> 1x1x4x4, nearest: one tap per output index along each dimension.
    let x = [1.0f32, 2.0, 3.0, 4.0];
    let scales = [1.0f32, 1.0, 2.0, 2.0];
    let inputs = [
        Input::Value {
            shape: &[1, 1, 2, 2],
            data: Data::F32(&x),
        },
        Input::Absent,
        Input::Value {
            shape: &[4],
            data: Data::F32(&scales),
        },
    ];
    let out_shape = [1, 1, 4, 4];
    let attrs = Attrs::default();
    let words = scratch_len(
        "Resize",
        &attrs,
        &[Some(&[1, 1, 2, 2]), None, Some(&[4])],
        &[&out_shape],
    )
    .unwrap();
    assert!(words > 0);
    let mut y = [0.0f32; 16];
    {
        let mut outs = [Output {
            shape: &out_shape,
            data: DataMut::F32(&mut y),
        }];
        let mut scratch = vec![0u64; words - 1];
        let e = run("Resize", &attrs, &inputs, &mut outs, &mut scratch).unwrap_err();
        assert!(e.to_string().contains("scratch"), "{e}");
        let mut scratch = vec![0u64; words];
        run("Resize", &attrs, &inputs, &mut outs, &mut scratch).unwrap();
    }
    assert_eq!(
        y,
        [
            1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0, 3.0, 3.0, 4.0, 4.0
        ]
    );
}
