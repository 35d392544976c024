//! `memplan bench`: solvers side by side on many inputs, as a markdown table of ratios and times.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use memplan_core::{Problem, SolveOptions, Solver};

use crate::output::ratio;
use crate::solver_run::run_solver;
use crate::{console, input, model_plan};

#[derive(clap::Args, Debug)]
pub(crate) struct BenchArgs {
    /// CSV or model TOML files, or folders whose `.csv` and `.toml` files are all taken (sorted
    /// by name). A model TOML is benchmarked as `memplan!` compiles it (in-place chains, pools,
    /// pins): its arena is the sum of its pools' arenas.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Comma-separated solvers to compare.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "best-fit,first-fit,patent,patent:lifetime,patent-literal,auto"
    )]
    solver: Vec<Solver>,
    /// Most nodes the exact search may expand (CSV problems; a model TOML is planned as
    /// `memplan!` plans it, with the macro's node budget).
    #[arg(long, default_value_t = memplan_core::DEFAULT_NODE_BUDGET)]
    nodes: u64,
    /// An arena size every plan should fit. Adds a `fits` column per solver and a count of fits.
    /// For CSV problems `exact` and `auto` run in decision mode (they stop at the first plan that
    /// fits); a model TOML's compiled plan is made without a budget and compared.
    #[arg(long)]
    capacity: Option<u64>,
    /// Skips instances with more buffers than this for the named slow solvers (`enumerate`).
    #[arg(long, default_value_t = memplan_core::solve::ENUMERATE_MAX_BUFFERS)]
    enumerate_max: usize,
}

/// One bench input: a CSV problem, or a model TOML benchmarked as `memplan!` compiles it.
struct Instance {
    /// The problem (for a model: the plain problem, unused).
    problem: Problem,
    /// For a model TOML: the parsed model (budget removed) and its source text.
    compiled: Option<(memplan_core::Model, String)>,
    /// Buffers planned (a model's arena tensors).
    buffers: usize,
    /// The lower bound the ratios divide by (a model's: its compiled pools' lower bounds).
    lower_bound: u64,
}

impl Instance {
    fn load(file: &Path) -> anyhow::Result<Self> {
        if input::is_model_toml(file) {
            let (mut model, text) = model_plan::read(file)?;
            // Every solver is measured, fitting the budget or not (`--capacity` counts fits).
            model.budget = None;
            let base = model_plan::compile(model.clone(), &text)?;
            return Ok(Self {
                problem: Problem::default(),
                buffers: base.arena_tensors(),
                lower_bound: base.lower_bound(),
                compiled: Some((model, text)),
            });
        }
        let problem = input::read_problem(file)?;
        Ok(Self {
            buffers: problem.len(),
            lower_bound: memplan_core::lower_bound(&problem),
            problem,
            compiled: None,
        })
    }

    /// The arena, whether it is proven smallest, and the seconds taken, for `options.solver`.
    fn measure(&self, options: &SolveOptions) -> anyhow::Result<(u64, bool, f64)> {
        match &self.compiled {
            Some((model, text)) => {
                let mut model = model.clone();
                model.solver = Some(options.solver);
                let compiled = model_plan::compile(model, text)?;
                let optimal = compiled.plan.pools.iter().all(|p| p.optimal);
                Ok((compiled.plan.total_arena_size(), optimal, compiled.seconds))
            }
            None => {
                let run = run_solver(&self.problem, options)?;
                Ok((
                    run.solution.plan.arena_size,
                    run.solution.optimal,
                    run.seconds,
                ))
            }
        }
    }
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
    console::println(&format!("{header}\n{rule}"))?;
    let mut sums = vec![(0.0f64, 0usize); args.solver.len()];
    let mut fits = vec![0usize; args.solver.len()];
    let mut models = 0;
    for file in &files {
        let instance = Instance::load(file)?;
        models += usize::from(instance.compiled.is_some());
        let mut row = format!(
            "| {}{} | {} | {} |",
            instance_name(file),
            if instance.compiled.is_some() {
                " (compiled)"
            } else {
                ""
            },
            instance.buffers,
            instance.lower_bound
        );
        for (k, &solver) in args.solver.iter().enumerate() {
            if solver == Solver::Enumerate && instance.buffers > args.enumerate_max {
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
            let (arena, optimal, seconds) = instance.measure(&options)?;
            let r = ratio(arena, instance.lower_bound);
            sums[k].0 += r;
            sums[k].1 += 1;
            let mark = if optimal { "*" } else { "" };
            row.push_str(&format!(" {r:.4}{mark} | {:.1} |", seconds * 1e3));
            if let Some(capacity) = args.capacity {
                let fit = arena <= capacity;
                fits[k] += usize::from(fit);
                row.push_str(if fit { " yes |" } else { " no |" });
            }
        }
        console::println(&row)?;
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
    console::println(&mean)?;
    console::println("\n`*` = proven optimal (arena = lower bound, or search exhausted).")?;
    if models > 0 {
        console::println(
            "`(compiled)` = a model TOML planned as `memplan!` compiles it (in-place chains, pools, \
             pins; the macro's node budget): arena = all pools' arenas, lower bound = the sum of \
             theirs (each in-place chain counted once, alignment ignored; the generated \
             `LOWER_BOUND`s).",
        )?;
    }
    if let Some(capacity) = args.capacity {
        console::println(&format!(
            "`fits` = arena <= {capacity} bytes; `exact` and `auto` stop at the first plan that fits."
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}
