//! `memplan bench`: solvers side by side on many inputs, as a markdown table of ratios and times.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, bail};
use memplan_core::{Problem, Solution, SolveOptions, Solver};

use crate::output::ratio;

#[derive(clap::Args, Debug)]
pub(crate) struct BenchArgs {
    /// CSV or model TOML files, or folders whose `.csv` and `.toml` files are all taken (sorted
    /// by name).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Comma-separated solvers to compare.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "best-fit,first-fit,patent,patent:lifetime,patent-literal,auto"
    )]
    solver: Vec<Solver>,
    /// Most nodes the exact search may expand.
    #[arg(long, default_value_t = memplan_core::DEFAULT_NODE_BUDGET)]
    nodes: u64,
    /// An arena size every plan should fit (decision mode for `exact` and `auto`: they stop at
    /// the first plan that fits). Adds a `fits` column per solver and a count of fits.
    #[arg(long)]
    capacity: Option<u64>,
    /// Skips instances with more buffers than this for the named slow solvers (`enumerate`).
    #[arg(long, default_value_t = memplan_core::solve::ENUMERATE_MAX_BUFFERS)]
    enumerate_max: usize,
}

/// A solver's result and its wall-clock time.
pub(crate) struct SolverRun {
    pub(crate) solution: Solution,
    pub(crate) seconds: f64,
}

/// Solves and times one run; also checks the plan, since a benchmark of invalid plans is void.
pub(crate) fn run_solver(problem: &Problem, options: &SolveOptions) -> anyhow::Result<SolverRun> {
    let start = Instant::now();
    let solution = memplan_core::solve(problem, options)?;
    let seconds = start.elapsed().as_secs_f64();
    let violations = memplan_core::validate(problem, &solution.plan);
    if let Some(first) = violations.first() {
        let offsets: Vec<Option<u64>> = solution.plan.offsets.iter().map(|&o| Some(o)).collect();
        bail!(
            "solver {} made an invalid plan ({} violations), first: {}",
            options.solver,
            violations.len(),
            first.display(problem, &offsets)
        );
    }
    Ok(SolverRun { solution, seconds })
}

fn collect_inputs(inputs: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(input)
                .with_context(|| format!("cannot list `{}`", input.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "csv" || e == "toml"))
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(input.clone());
        }
    }
    Ok(files)
}

fn instance_name(path: &Path) -> String {
    let parent = path
        .parent()
        .and_then(Path::file_name)
        .map(|p| format!("{}/", p.to_string_lossy()))
        .unwrap_or_default();
    format!(
        "{parent}{}",
        path.file_stem().unwrap_or_default().to_string_lossy()
    )
}

/// Runs every solver on every input and prints the table, then the mean ratio per solver.
pub(crate) fn run(args: &BenchArgs) -> anyhow::Result<ExitCode> {
    let files = collect_inputs(&args.inputs)?;
    let mut header = String::from("| instance | buffers | lower bound |");
    let mut rule = String::from("|---|---:|---:|");
    for solver in &args.solver {
        header.push_str(&format!(" {solver} ratio | {solver} ms |"));
        rule.push_str("---:|---:|");
        if args.capacity.is_some() {
            header.push_str(&format!(" {solver} fits |"));
            rule.push_str(":---:|");
        }
    }
    println!("{header}\n{rule}");
    let mut sums = vec![(0.0f64, 0usize); args.solver.len()];
    let mut fits = vec![0usize; args.solver.len()];
    for file in &files {
        let problem = crate::input::read_problem(file)?;
        let lower_bound = memplan_core::lower_bound(&problem);
        let mut row = format!(
            "| {} | {} | {lower_bound} |",
            instance_name(file),
            problem.len()
        );
        for (k, &solver) in args.solver.iter().enumerate() {
            if solver == Solver::Enumerate && problem.len() > args.enumerate_max {
                row.push_str(" – | – |");
                if args.capacity.is_some() {
                    row.push_str(" – |");
                }
                continue;
            }
            let options = SolveOptions {
                solver,
                capacity: args.capacity,
                node_budget: args.nodes,
            };
            let run = run_solver(&problem, &options)?;
            let r = ratio(run.solution.plan.arena_size, lower_bound);
            sums[k].0 += r;
            sums[k].1 += 1;
            let mark = if run.solution.optimal { "*" } else { "" };
            row.push_str(&format!(" {r:.4}{mark} | {:.1} |", run.seconds * 1e3));
            if let Some(capacity) = args.capacity {
                let fit = run.solution.plan.arena_size <= capacity;
                fits[k] += usize::from(fit);
                row.push_str(if fit { " yes |" } else { " no |" });
            }
        }
        println!("{row}");
    }
    let mut mean = String::from("| **mean** | | |");
    for (k, (sum, count)) in sums.iter().enumerate() {
        if *count == 0 {
            mean.push_str(" – | |");
        } else {
            mean.push_str(&format!(" {:.4} | |", sum / *count as f64));
        }
        if args.capacity.is_some() {
            mean.push_str(&format!(" {}/{count} |", fits[k]));
        }
    }
    println!("{mean}");
    println!("\n`*` = proven optimal (arena = lower bound, or search exhausted).");
    if let Some(capacity) = args.capacity {
        println!(
            "`fits` = arena <= {capacity} bytes; `exact` and `auto` stop at the first plan that fits."
        );
    }
    Ok(ExitCode::SUCCESS)
}
