//! The heuristic solvers side by side: the shared benchmark files (when present) and fixed-seed
//! random problems. Quality (ratio to the lower bound) is printed once per input; criterion
//! measures the time.
//!
//! `cargo bench -p memplan-core --bench solvers`. The shared files are looked up in
//! `$MEMPLAN_BENCH_DIR`, else `<workspace>/../shared/bench`; without them only the random
//! problems run.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use std::path::PathBuf;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use memplan_core::{Buffer, Problem, SolveOptions, Solver, TieOrder, lower_bound, read_csv, solve};

/// Files larger than this are left to `memplan bench` (one run each), to keep this bench short.
const MAX_BUFFERS: usize = 5_000;

fn heuristics() -> Vec<Solver> {
    let mut solvers = vec![Solver::FirstFit, Solver::BestFit];
    solvers.extend(TieOrder::ALL.iter().map(|&t| Solver::Patent(t)));
    solvers
}

fn bench_dir() -> PathBuf {
    std::env::var_os("MEMPLAN_BENCH_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/bench"),
        PathBuf::from,
    )
}

/// `(name, problem)` for every CSV in the shared subfolders, sorted by path.
fn shared_problems() -> Vec<(String, Problem)> {
    let root = bench_dir();
    let mut found = Vec::new();
    for folder in ["minimalloc", "idealloc", "models"] {
        let dir = root.join(folder);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            println!("skipping: {} not found", dir.display());
            continue;
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "csv"))
            .collect();
        paths.sort();
        for path in paths {
            let name = format!(
                "{folder}/{}",
                path.file_stem().unwrap_or_default().to_string_lossy()
            );
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) => {
                    println!("skipping: {}: {e}", path.display());
                    continue;
                }
            };
            match read_csv(&path.display().to_string(), &text) {
                Ok(input) if input.problem.len() <= MAX_BUFFERS => {
                    found.push((name, input.problem));
                }
                Ok(input) => println!(
                    "skipping: {name} has {} buffers (use `memplan bench` for it)",
                    input.problem.len()
                ),
                Err(e) => println!("skipping: {e}"),
            }
        }
    }
    found
}

/// A fixed-seed random problem of `n` buffers: lifetimes of 1 to 40 steps over `n / 4` steps,
/// sizes 1 to 4096 in multiples of 16, one in eight aligned to 64. xorshift64.
fn random_problem(n: usize, seed: u64) -> Problem {
    let mut state = seed.max(1);
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let steps = (n as u64 / 4).max(1);
    let buffers = (0..n)
        .map(|i| {
            let start = next() % steps;
            let len = 1 + next() % 40;
            let size = 16 * (1 + next() % 256);
            let buffer = Buffer::new(format!("t{i}"), size, start, start + len);
            if next() % 8 == 0 {
                buffer.with_alignment(64)
            } else {
                buffer
            }
        })
        .collect();
    Problem::new(buffers).expect("generated buffers are valid")
}

fn solvers(c: &mut Criterion) {
    let mut inputs = shared_problems();
    for (n, seed) in [(200, 1), (1_000, 2), (3_000, 3)] {
        inputs.push((format!("random/{n}"), random_problem(n, seed)));
    }
    let mut group = c.benchmark_group("solvers");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(1));
    for (name, problem) in &inputs {
        let floor = lower_bound(problem);
        let mut line = format!("{name}: {} buffers, LB {floor}", problem.len());
        for solver in heuristics() {
            let options = SolveOptions {
                solver,
                ..SolveOptions::default()
            };
            let arena = solve(problem, &options)
                .expect("heuristics plan")
                .plan
                .arena_size;
            line += &format!(", {solver} {:.4}", arena as f64 / floor.max(1) as f64);
            group.bench_with_input(BenchmarkId::new(solver.name(), name), problem, |b, p| {
                b.iter(|| solve(p, &options).expect("heuristics plan"))
            });
        }
        println!("{line}");
    }
    group.finish();
}

criterion_group!(benches, solvers);
criterion_main!(benches);
