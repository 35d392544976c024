//! `memplan`: plan, check and benchmark memory plans from the command line.

mod bench;
mod diagnostic;
mod import;
mod input;
mod model_plan;
mod onnx;
mod output;
mod render;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use memplan_core::{DEFAULT_NODE_BUDGET, SolveOptions, Solver};

/// Plans the memory of a neural network: every tensor packed into one arena.
#[derive(Parser, Debug)]
#[command(name = "memplan", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Plans a problem and prints a summary (buffers, arena, lower bound, ratio, solver, time).
    Plan(PlanArgs),
    /// Validates a plan made by anyone and prints every violation.
    Check(CheckArgs),
    /// Runs solvers side by side on many inputs and prints a markdown table.
    Bench(bench::BenchArgs),
    /// Draws a plan as an SVG picture or a self-contained HTML report.
    Render(render::RenderArgs),
    /// Reads an ONNX model and writes a model TOML (activation tensors and ops).
    Import(import::ImportArgs),
}

#[derive(clap::Args, Debug)]
struct PlanArgs {
    /// The problem: a MiniMalloc CSV (`id,lower,upper,size[,alignment]`) or a model TOML.
    input: PathBuf,
    /// The solver (see `memplan-core` docs): naive, first-fit, best-fit, patent, patent:TIES, patent-literal, patent-literal:TIES,
    /// enumerate, exact, auto. Default: the model's `solver`, else auto.
    #[arg(long)]
    solver: Option<Solver>,
    /// An arena size the plan must fit; the exit code is non-zero when it does not.
    /// Default: the model's `budget`, if any.
    #[arg(long)]
    capacity: Option<u64>,
    /// Most nodes the exact search may expand.
    #[arg(long, default_value_t = DEFAULT_NODE_BUDGET)]
    nodes: u64,
    /// Writes the plan as CSV (the input's columns plus `offset`).
    #[arg(long)]
    out: Option<PathBuf>,
    /// What to print: the summary line (default), `table` (the summary and every buffer),
    /// `json` (the summary and the plan as one object) or `csv` (the plan; summary on stderr).
    #[arg(long, value_enum)]
    format: Option<output::Format>,
    /// Same as `--format json`.
    #[arg(long, conflicts_with = "format")]
    json: bool,
}

#[derive(clap::Args, Debug)]
struct CheckArgs {
    /// The problem: a MiniMalloc CSV or a model TOML.
    input: PathBuf,
    /// The plan: a CSV with `id` and `offset` columns (the problem's columns may repeat).
    plan: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Plan(args) => plan(&args),
        Command::Check(args) => check(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Render(args) => render::run(&args),
        Command::Import(args) => import::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // Input errors come drawn with their source snippet; everything else gets `error:`.
            match e.downcast_ref::<diagnostic::Rendered>() {
                Some(rendered) => eprintln!("{rendered}"),
                None => eprintln!("error: {e:#}"),
            }
            ExitCode::FAILURE
        }
    }
}

fn plan(args: &PlanArgs) -> anyhow::Result<ExitCode> {
    let model = input::read_model(&args.input)?;
    let problem = &model.problem;
    let capacity = args.capacity.or(model.budget);
    let options = SolveOptions {
        solver: args.solver.or(model.solver).unwrap_or(Solver::Auto),
        capacity,
        node_budget: args.nodes,
    };
    let run = bench::run_solver(problem, &options)?;
    let summary = output::Summary::new(problem, &run, capacity);
    let plan = &run.solution.plan;
    if let Some(out) = &args.out {
        output::write_atomically(out, &memplan_core::write_plan_csv(problem, plan))?;
    }
    let format = if args.json {
        Some(output::Format::Json)
    } else {
        args.format
    };
    // For a model TOML, also what `memplan!` generates: pools, pins, in-place chains.
    let generated = if input::is_model_toml(&args.input) && format.is_none() {
        let (model, plan) = model_plan::plan(&args.input, args.solver)?;
        Some(model_plan::describe(&model, &plan))
    } else {
        None
    };
    match format {
        None => {
            println!("{summary}");
            print!("{}", generated.unwrap_or_default());
        }
        Some(output::Format::Table) => {
            println!("{summary}");
            print!("{}", output::plan_table(problem, plan));
        }
        Some(output::Format::Json) => {
            println!("{}", output::plan_json(&summary, problem, plan)?);
        }
        Some(output::Format::Csv) => {
            print!("{}", memplan_core::write_plan_csv(problem, plan));
            eprintln!("{summary}");
        }
    }
    Ok(if summary.fits_capacity {
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "error: the plan needs {} bytes but the capacity is {} bytes",
            summary.arena_size,
            capacity.unwrap_or_default()
        );
        ExitCode::FAILURE
    })
}

fn check(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let problem = input::read_problem(&args.input)?;
    let offsets = input::read_offsets(&args.plan, &problem)?;
    let violations = memplan_core::validate_offsets(&problem, &offsets);
    let arena = problem
        .buffers()
        .iter()
        .zip(&offsets)
        .filter_map(|(b, o)| o.map(|o| o + b.size))
        .max()
        .unwrap_or(0);
    let lower_bound = memplan_core::lower_bound(&problem);
    if violations.is_empty() {
        println!(
            "ok: {} buffers, arena {arena} bytes, lower bound {lower_bound}, ratio {:.4}",
            problem.len(),
            output::ratio(arena, lower_bound)
        );
        return Ok(ExitCode::SUCCESS);
    }
    for violation in &violations {
        println!("violation: {}", violation.display(&problem, &offsets));
    }
    println!(
        "{} violation(s) in {} buffers",
        violations.len(),
        problem.len()
    );
    Ok(ExitCode::FAILURE)
}
