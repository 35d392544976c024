//! `memplan`: plan, check and benchmark memory plans from the command line.

mod bench;
mod check;
mod console;
mod diagnostic;
mod import;
mod input;
mod model_plan;
mod output;
mod plan_csv;
mod render;
mod solver_run;

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
    /// For a model TOML: the plan `memplan!` compiles (pools, pins, in-place chains, budget).
    ///
    /// The ratio is the arena over the lower bound: the most bytes live at one step, each
    /// in-place chain counted once, alignment padding ignored (the generated `LOWER_BOUND`;
    /// with padding an optimal plan can be above it). For a model, the `in place:` line also
    /// gives the bound without sharing (every tensor its own bytes), which `memplan import`
    /// prints.
    Plan(PlanArgs),
    /// Validates a plan made by anyone and prints every violation.
    Check(check::CheckArgs),
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
    /// Default: the model's `budget`, if any (checked as `cargo build` checks it).
    #[arg(long)]
    capacity: Option<u64>,
    /// Most nodes the exact search may expand. Default: the model's `nodes` (the budget
    /// `memplan!` uses), else 500000.
    #[arg(long)]
    nodes: Option<u64>,
    /// For a model TOML: plan the plain problem instead of what `memplan!` compiles: every
    /// tensor its own rectangle in one arena, no in-place sharing, pools, pins or app-owned
    /// tensors.
    #[arg(long)]
    no_inplace: bool,
    /// Writes the plan as CSV: the input's columns plus `offset`; for a model TOML,
    /// `id,lower,upper,size,alignment,offset,pool,chain` (what `check` and `render --plan` read).
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Plan(args) => plan(&args),
        Command::Check(args) => check::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Render(args) => render::run(&args),
        Command::Import(args) => import::run(&args),
    };
    match result {
        Ok(code) => code,
        // The reader of stdout is gone (`memplan plan x | head -1`): nothing left to say.
        Err(e) if e.downcast_ref::<console::StdoutClosed>().is_some() => ExitCode::SUCCESS,
        Err(e) => {
            // Input errors come drawn with their source snippet; everything else gets `error:`.
            match e.downcast_ref::<diagnostic::Rendered>() {
                Some(rendered) => console::eprintln(&rendered.to_string()),
                None => console::eprintln(&format!("error: {e:#}")),
            }
            ExitCode::FAILURE
        }
    }
}

fn format_of(args: &PlanArgs) -> Option<output::Format> {
    if args.json {
        Some(output::Format::Json)
    } else {
        args.format
    }
}

fn plan(args: &PlanArgs) -> anyhow::Result<ExitCode> {
    if input::is_model_toml(&args.input) && !args.no_inplace {
        return plan_compiled(args);
    }
    let model = input::read_model(&args.input)?;
    let problem = &model.problem;
    let capacity = args.capacity.or(model.budget);
    let options = SolveOptions {
        solver: args.solver.or(model.solver).unwrap_or(Solver::Auto),
        capacity,
        node_budget: args.nodes.or(model.nodes).unwrap_or(DEFAULT_NODE_BUDGET),
    };
    let run = solver_run::run_solver(problem, &options)?;
    let summary = output::Summary::new(problem, &run, capacity);
    let plan = &run.solution.plan;
    if let Some(out) = &args.out {
        output::write_atomically(out, &memplan_core::write_plan_csv(problem, plan))?;
    }
    let label = if input::is_model_toml(&args.input) {
        " | no in-place sharing, pools, pins or app-owned tensors (--no-inplace)"
    } else {
        ""
    };
    match format_of(args) {
        None => console::println(&format!("{summary}{label}"))?,
        Some(output::Format::Table) => console::print(&format!(
            "{summary}{label}\n{}",
            output::plan_table(problem, plan)
        ))?,
        Some(output::Format::Json) => {
            let mut value = output::plan_json(&summary, problem, plan)?;
            if args.no_inplace {
                value["no_inplace"] = serde_json::Value::Bool(true);
            }
            console::println(&serde_json::to_string(&value)?)?;
        }
        Some(output::Format::Csv) => {
            console::print(&memplan_core::write_plan_csv(problem, plan))?;
            console::eprintln(&format!("{summary}{label}"));
        }
    }
    Ok(if summary.fits_capacity {
        ExitCode::SUCCESS
    } else {
        let capacity = capacity.unwrap_or_default();
        console::eprintln(&does_not_fit(&run.solution, capacity, options.node_budget));
        ExitCode::FAILURE
    })
}

/// Why a plan over `capacity` is all there is, and what to do about it.
fn does_not_fit(solution: &memplan_core::Solution, capacity: u64, node_budget: u64) -> String {
    let arena = solution.plan.arena_size;
    let over = arena.saturating_sub(capacity);
    let head = format!(
        "error: does not fit: the best plan found needs {arena} bytes, {over} more than the \
         capacity of {capacity} bytes ({:.4}x)",
        arena as f64 / capacity.max(1) as f64
    );
    let why = if solution.optimal {
        format!("no plan is smaller: {arena} bytes is proven to be the least this problem needs")
    } else if solution.nodes > 0 {
        format!(
            "the exact search spent {} of its {node_budget} nodes without reaching the \
             capacity, nor proving that no plan reaches it; raise `--nodes` (or the model's \
             `nodes`) or the capacity",
            solution.nodes
        )
    } else {
        format!(
            "the {} heuristic does not search; `--solver exact` looks for a plan that fits",
            solution.solver
        )
    };
    format!("{head}\n  = note: {why}")
}

/// `plan` of a model TOML: the plan `memplan!` compiles, with its budget check.
fn plan_compiled(args: &PlanArgs) -> anyhow::Result<ExitCode> {
    let compiled = model_plan::load(&args.input, args.solver, args.capacity, args.nodes)?;
    let csv = plan_csv::write_compiled(&compiled);
    if let Some(out) = &args.out {
        output::write_atomically(out, &csv)?;
    }
    let summary = compiled.summary_line();
    match format_of(args) {
        None => console::print(&format!("{summary}\n{}", compiled.describe()))?,
        Some(output::Format::Table) => console::print(&format!(
            "{summary}\n{}{}",
            compiled.describe(),
            compiled.table()
        ))?,
        Some(output::Format::Json) => {
            console::println(&serde_json::to_string(&compiled.json())?)?;
        }
        Some(output::Format::Csv) => {
            console::print(&csv)?;
            console::eprintln(&summary);
        }
    }
    Ok(ExitCode::SUCCESS)
}
