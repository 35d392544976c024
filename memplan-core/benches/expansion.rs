//! Macro expansion at scale: what `memplan!` does at compile time — parse the model file, plan
//! it (default solver), generate the code — on synthetic models of 1,000 and 10,000 tensors.
//! Targets: 100 ms and 1 s. Each phase is measured alone and then the whole `expand_model`.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

mod synthetic;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use memplan_core::codegen::{generate, plan_model};
use memplan_core::{expand_model, parse_model};

fn expansion(c: &mut Criterion) {
    let mut group = c.benchmark_group("expansion");
    group.sample_size(10);
    for n in [1_000usize, 10_000] {
        let text = synthetic::model_text(n);
        let model = parse_model("synthetic.toml", &text).expect("the synthetic model parses");
        assert_eq!(model.tensors.len(), n);
        let plan = plan_model(&model).expect("the synthetic model plans");
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("parse", n), &n, |b, _| {
            b.iter(|| parse_model("synthetic.toml", &text))
        });
        group.bench_with_input(BenchmarkId::new("plan", n), &n, |b, _| {
            b.iter(|| plan_model(&model))
        });
        group.bench_with_input(BenchmarkId::new("generate", n), &n, |b, _| {
            b.iter(|| generate(&model, &plan))
        });
        group.bench_with_input(BenchmarkId::new("expand_model", n), &n, |b, _| {
            b.iter(|| expand_model("synthetic.toml", &text))
        });
    }
    group.finish();
}

criterion_group!(benches, expansion);
criterion_main!(benches);
