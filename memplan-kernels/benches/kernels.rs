//! The heaviest kernels at the sizes of the runnable models: MobileNetV2's stem, pointwise and
//! depthwise convolutions, BERT-mini's feed-forward and attention matrix products, its GELU's
//! Erf and its attention Softmax, and the other transcendental activations at the Erf's size.
//! Throughput is reported in multiply-accumulates (as "elements"), for the elementwise
//! operators and Softmax in elements.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use memplan_kernels::{Attr, Attrs, Data, DataMut, Input, Output, run, scratch_len};

/// Deterministic values in [-1, 3): 24 random bits over 2^23 give [0, 2), doubled less one (the
/// range only has to be free of subnormals and infinities; kept so the timed inputs stay the same).
fn values(n: usize, seed: u32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(2_654_435_761).max(1);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            let v = (s >> 8) as f32 / (1u32 << 23) as f32;
            v * 2.0 - 1.0
        })
        .collect()
}

/// Benchmarks one node with f32 inputs of the given shapes.
fn bench_node(
    c: &mut Criterion,
    name: &str,
    op: &str,
    attrs: &Attrs,
    in_shapes: &[&[usize]],
    out_shape: &[usize],
    macs: u64,
) {
    let data: Vec<Vec<f32>> = in_shapes
        .iter()
        .enumerate()
        .map(|(i, s)| values(s.iter().product(), u32::try_from(i).unwrap() + 1))
        .collect();
    let inputs: Vec<Input<'_>> = in_shapes
        .iter()
        .zip(&data)
        .map(|(s, d)| Input::Value {
            shape: s,
            data: Data::F32(d),
        })
        .collect();
    let mut y = vec![0.0f32; out_shape.iter().product()];
    let shapes: Vec<Option<&[usize]>> = in_shapes.iter().map(|&s| Some(s)).collect();
    let mut scratch = vec![0u64; scratch_len(op, attrs, &shapes, &[out_shape]).unwrap()];
    let mut group = c.benchmark_group("kernels");
    group.throughput(Throughput::Elements(macs));
    group.bench_function(name, |b| {
        b.iter(|| {
            let mut outs = [Output {
                shape: out_shape,
                data: DataMut::F32(&mut y),
            }];
            run(op, attrs, &inputs, &mut outs, &mut scratch).unwrap();
        });
    });
    group.finish();
}

fn kernels(c: &mut Criterion) {
    let stem = Attrs::new(&[
        ("strides", Attr::Ints(&[2, 2])),
        ("pads", Attr::Ints(&[1, 1, 1, 1])),
    ]);
    bench_node(
        c,
        "conv_stem_3x3_s2_3to32_224",
        "Conv",
        &stem,
        &[&[1, 3, 224, 224], &[32, 3, 3, 3], &[32]],
        &[1, 32, 112, 112],
        112 * 112 * 32 * 27,
    );
    bench_node(
        c,
        "conv_pointwise_96to24_56",
        "Conv",
        &Attrs::default(),
        &[&[1, 96, 56, 56], &[24, 96, 1, 1], &[24]],
        &[1, 24, 56, 56],
        56 * 56 * 24 * 96,
    );
    let dw = Attrs::new(&[
        ("group", Attr::Int(144)),
        ("pads", Attr::Ints(&[1, 1, 1, 1])),
    ]);
    bench_node(
        c,
        "conv_depthwise_3x3_144_56",
        "Conv",
        &dw,
        &[&[1, 144, 56, 56], &[144, 1, 3, 3], &[144]],
        &[1, 144, 56, 56],
        56 * 56 * 144 * 9,
    );
    bench_node(
        c,
        "matmul_ffn_128x256x1024",
        "MatMul",
        &Attrs::default(),
        &[&[1, 128, 256], &[256, 1024]],
        &[1, 128, 1024],
        128 * 256 * 1024,
    );
    bench_node(
        c,
        "matmul_attention_4x128x64x128",
        "MatMul",
        &Attrs::default(),
        &[&[1, 4, 128, 64], &[1, 4, 64, 128]],
        &[1, 4, 128, 128],
        4 * 128 * 64 * 128,
    );
    let gemm = Attrs::new(&[("transB", Attr::Int(1))]);
    bench_node(
        c,
        "gemm_classifier_1280to1000",
        "Gemm",
        &gemm,
        &[&[1, 1280], &[1000, 1280], &[1000]],
        &[1, 1000],
        1280 * 1000,
    );
}

fn transcendentals(c: &mut Criterion) {
    let none = Attrs::default();
    let ffn: &[usize] = &[1, 128, 1024];
    for (name, op) in [
        ("erf_128x1024", "Erf"),
        ("tanh_128x1024", "Tanh"),
        ("sigmoid_128x1024", "Sigmoid"),
        ("exp_128x1024", "Exp"),
        ("gelu_128x1024", "Gelu"),
    ] {
        bench_node(c, name, op, &none, &[ffn], ffn, 128 * 1024);
    }
    let scores: &[usize] = &[1, 4, 128, 128];
    bench_node(
        c,
        "softmax_attention_4x128x128",
        "Softmax",
        &none,
        &[scores],
        scores,
        4 * 128 * 128,
    );
}

criterion_group!(benches, kernels, transcendentals);
criterion_main!(benches);
