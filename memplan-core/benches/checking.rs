//! Reading and checking at scale: `read_csv`, `validate` and `lower_bound` on 1k to 100k buffers
//! (fixed seed).
//!
//! All three are `O(n log n)` (`read_csv` for its unique-id check); the figures show the time
//! per buffer staying nearly flat as `n` grows 100x. The CSV reader was quadratic twice while it
//! was written (15 s on 18,692 rows); this bench is where that would show.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use memplan_core::{
    Buffer, Problem, SolveOptions, Solver, lower_bound, read_csv, solve, validate,
    write_problem_csv,
};

/// A deterministic pseudo-random problem: short-lived activations along a long schedule, like a
/// compiler trace. xorshift64, seed fixed, so every run measures the same input.
fn trace(n: usize) -> Problem {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let steps = n as u64;
    let buffers = (0..n)
        .map(|i| {
            let start = next() % steps;
            let len = 1 + next() % 32;
            let size = 64 * (1 + next() % 1024);
            Buffer::new(format!("t{i}"), size, start, start + len)
        })
        .collect();
    Problem::new(buffers).expect("generated buffers are valid")
}

fn checking(c: &mut Criterion) {
    let mut group = c.benchmark_group("checking");
    group.sample_size(10);
    for n in [1_000usize, 10_000, 100_000] {
        let problem = trace(n);
        let options = SolveOptions {
            solver: Solver::FirstFit,
            ..SolveOptions::default()
        };
        let plan = solve(&problem, &options).expect("first-fit plans").plan;
        group.throughput(Throughput::Elements(n as u64));
        let csv = write_problem_csv(&problem);
        group.bench_with_input(BenchmarkId::new("read_csv", n), &n, |b, _| {
            b.iter(|| read_csv("trace.csv", &csv).expect("the written CSV reads back"))
        });
        group.bench_with_input(BenchmarkId::new("validate", n), &n, |b, _| {
            b.iter(|| validate(&problem, &plan))
        });
        group.bench_with_input(BenchmarkId::new("lower_bound", n), &n, |b, _| {
            b.iter(|| lower_bound(&problem))
        });
    }
    group.finish();
}

criterion_group!(benches, checking);
criterion_main!(benches);
