//! The solvers at scale: time and peak heap of one run each on 10^4, 10^5 and 10^6 buffers, as a
//! table, with the growth exponent between sizes (`log(t2 / t1) / log(n2 / n1)`: 1 is linear,
//! 2 quadratic). The former first-fit and best-fit (`tests/common/former_greedy.rs`, which
//! scanned every placed buffer) run beside the current ones up to 10^5 buffers.
//!
//! ```text
//! cargo bench -p memplan-core --bench scale
//! MEMPLAN_SCALE_SIZES=10000,100000 MEMPLAN_SCALE_SOLVERS=best-fit,patent cargo bench -p memplan-core --bench scale
//! ```
//!
//! Two fixed-seed shapes: `random` (lifetimes of 1 to 40 steps over `n / 4` steps, sizes 16 B
//! to 4 KiB, one in eight aligned to 64) and `trace` (one tensor per step, most read by the next
//! one or two ops, one in 16 kept for 50 to 500 steps like a skip connection, sizes from a few
//! layer widths). A solver is skipped above the size given by `MEMPLAN_SCALE_LIMIT_<NAME>` (for
//! example `MEMPLAN_SCALE_LIMIT_PATENT=100000`); the defaults keep a full run within minutes.
//! Peak heap is measured by a counting allocator around each run (the problem itself excluded).

#![allow(missing_docs)]

#[path = "../tests/common/former_greedy.rs"]
mod former_greedy;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use memplan_core::{Buffer, Plan, Problem, SolveOptions, Solver, lower_bound, solve};

/// The system allocator, counting the bytes in use and their peak.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` unchanged; the counters are only statistics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as `System.alloc`.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = IN_USE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        // SAFETY: same contract as `System.dealloc`.
        unsafe { System.dealloc(p, layout) };
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// xorshift64 from `seed`.
fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed.max(1);
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

fn random_problem(n: usize) -> Problem {
    let mut next = rng(n as u64 + 1);
    let steps = (n as u64 / 4).max(1);
    let buffers = (0..n)
        .map(|i| {
            let start = next() % steps;
            let buffer = Buffer::new(
                format!("t{i}"),
                16 * (1 + next() % 256),
                start,
                start + 1 + next() % 40,
            );
            if next().is_multiple_of(8) {
                buffer.with_alignment(64)
            } else {
                buffer
            }
        })
        .collect();
    Problem::new(buffers).expect("generated buffers are valid")
}

fn trace_problem(n: usize) -> Problem {
    let mut next = rng(3 * n as u64 + 7);
    let widths = [64u64, 128, 256, 512, 1024];
    let buffers = (0..n as u64)
        .map(|t| {
            let len = if next().is_multiple_of(16) {
                50 + next() % 451
            } else {
                1 + next() % 2
            };
            let width = widths[(next() % widths.len() as u64) as usize];
            Buffer::new(format!("t{t}"), 4 * width * (1 + next() % 8), t, t + len)
                .with_alignment(16)
        })
        .collect();
    Problem::new(buffers).expect("generated buffers are valid")
}

/// What one row runs.
#[derive(Clone, Copy)]
enum Run {
    Current(Solver),
    FormerFirstFit,
    FormerBestFit,
}

impl Run {
    fn name(self) -> String {
        match self {
            Run::Current(solver) => solver.name(),
            Run::FormerFirstFit => "first-fit (former)".into(),
            Run::FormerBestFit => "best-fit (former)".into(),
        }
    }

    /// The largest size run by default.
    fn default_limit(self) -> usize {
        match self {
            Run::Current(Solver::FirstFit | Solver::BestFit) => 1_000_000,
            Run::FormerFirstFit | Run::FormerBestFit => 100_000,
            Run::Current(_) => 100_000,
        }
    }

    fn limit(self) -> usize {
        let key = self
            .name()
            .to_uppercase()
            .replace([' ', '-'], "_")
            .replace(['(', ')'], "");
        std::env::var(format!("MEMPLAN_SCALE_LIMIT_{key}"))
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(self.default_limit())
    }

    fn run(self, problem: &Problem) -> (Plan, u64) {
        match self {
            Run::Current(solver) => {
                let options = SolveOptions {
                    solver,
                    ..SolveOptions::default()
                };
                let solution = solve(problem, &options).expect("the solver plans");
                (solution.plan, solution.nodes)
            }
            Run::FormerFirstFit => (former_greedy::first_fit(problem), 0),
            Run::FormerBestFit => (former_greedy::best_fit(problem), 0),
        }
    }
}

fn main() {
    // `cargo bench` passes `--bench`; any other argument filters by solver name.
    let sizes: Vec<usize> = std::env::var("MEMPLAN_SCALE_SIZES")
        .unwrap_or_else(|_| "10000,100000,1000000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let mut runs = vec![
        Run::Current(Solver::FirstFit),
        Run::FormerFirstFit,
        Run::Current(Solver::BestFit),
        Run::FormerBestFit,
        Run::Current(Solver::Patent(Default::default())),
        Run::Current(Solver::Auto),
    ];
    if let Ok(only) = std::env::var("MEMPLAN_SCALE_SOLVERS") {
        let only: Vec<&str> = only.split(',').collect();
        runs.retain(|run| only.iter().any(|o| run.name().starts_with(o)));
    }
    println!(
        "| shape | solver | buffers | time (s) | peak heap (MiB) | arena / LB | nodes | growth |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (shape, make) in [
        ("random", random_problem as fn(usize) -> Problem),
        ("trace", trace_problem),
    ] {
        let problems: Vec<(usize, Problem, u64)> = sizes
            .iter()
            .map(|&n| {
                let problem = make(n);
                let bound = lower_bound(&problem);
                (n, problem, bound)
            })
            .collect();
        for &run in &runs {
            let mut previous: Option<(usize, f64)> = None;
            for (n, problem, bound) in &problems {
                if *n > run.limit() {
                    println!(
                        "| {shape} | {} | {n} | skipped (above its limit) | | | | |",
                        run.name()
                    );
                    continue;
                }
                let base = IN_USE.load(Ordering::Relaxed);
                PEAK.store(base, Ordering::Relaxed);
                let started = Instant::now();
                let (plan, nodes) = run.run(problem);
                let seconds = started.elapsed().as_secs_f64();
                let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
                let growth = previous.map_or(String::new(), |(m, t)| {
                    format!("{:.2}", (seconds / t).ln() / (*n as f64 / m as f64).ln())
                });
                println!(
                    "| {shape} | {} | {n} | {seconds:.3} | {:.1} | {:.4} | {nodes} | {growth} |",
                    run.name(),
                    peak as f64 / (1 << 20) as f64,
                    plan.arena_size as f64 / (*bound).max(1) as f64,
                );
                previous = Some((*n, seconds));
                drop(plan);
            }
        }
    }
}
