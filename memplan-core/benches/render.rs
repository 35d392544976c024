//! What the rustdoc picture costs the macro: `expand_model` (parse, plan, generate, picture
//! included) beside `svg_for_rustdoc` alone, and the full-size `svg`, on generated 1,000- and
//! 10,000-tensor models (fixed shapes, no randomness).
//!
//! `cargo bench -p memplan-core --bench render`

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use std::fmt::Write as _;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use memplan_core::render::{self, RenderOptions};
use memplan_core::{Plan, expand_model, parse_model, solve};

/// A chain of `n` ops, each reading the previous tensor and, every 8th op, a tensor from 8 ops
/// back (a residual), with sizes cycling through 1-16 KiB.
fn model_text(n: usize) -> String {
    let mut text = format!(
        "[model]\nname = \"bench_{n}\"\nsolver = \"best-fit\"\ninputs = [\"t0\"]\noutputs = [\"t{n}\"]\n\n[tensors]\n"
    );
    for i in 0..=n {
        let _ = writeln!(
            text,
            "t{i} = {{ dtype = \"f32\", shape = [{}] }}",
            256 * (1 + i % 16)
        );
    }
    for i in 1..=n {
        let residual = if i % 8 == 0 && i >= 8 {
            format!(", \"t{}\"", i - 8)
        } else {
            String::new()
        };
        let _ = writeln!(
            text,
            "\n[[ops]]\nname = \"op{i}\"\ninputs = [\"t{}\"{residual}]\noutputs = [\"t{i}\"]",
            i - 1
        );
    }
    text
}

fn rendering(c: &mut Criterion) {
    let mut group = c.benchmark_group("render");
    group.sample_size(10);
    for n in [1_000usize, 10_000] {
        let text = model_text(n);
        let model = parse_model("bench.toml", &text).expect("the generated model is valid");
        let problem = model.to_problem();
        let options = memplan_core::SolveOptions {
            solver: memplan_core::Solver::BestFit,
            ..memplan_core::SolveOptions::default()
        };
        let plan: Plan = solve(&problem, &options)
            .expect("best-fit always plans")
            .plan;
        let picture = RenderOptions::default();
        group.bench_with_input(BenchmarkId::new("expand_model", n), &text, |b, text| {
            b.iter(|| expand_model("bench.toml", text).expect("expands"));
        });
        group.bench_with_input(BenchmarkId::new("svg_for_rustdoc", n), &n, |b, _| {
            b.iter(|| render::svg_for_rustdoc(&problem, &plan, &picture));
        });
        group.bench_with_input(BenchmarkId::new("svg", n), &n, |b, _| {
            b.iter(|| render::svg(&problem, &plan, &picture));
        });
        println!(
            "n = {n}: rustdoc svg {} bytes, full svg {} bytes",
            render::svg_for_rustdoc(&problem, &plan, &picture).len(),
            render::svg(&problem, &plan, &picture).len()
        );
    }
    group.finish();
}

criterion_group!(benches, rendering);
criterion_main!(benches);
