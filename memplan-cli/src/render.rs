//! `memplan render`: the plan as a picture, SVG or self-contained HTML by the output's extension.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::bail;
use memplan_core::render::{self, RenderOptions};
use memplan_core::{Plan, SolveOptions};

use crate::{bench, input, output};

#[derive(clap::Args, Debug)]
pub(crate) struct RenderArgs {
    /// The problem: a MiniMalloc CSV or a model TOML.
    input: PathBuf,
    /// A plan CSV (`id` and `offset` columns) to draw; without it the default solver plans.
    #[arg(long)]
    plan: Option<PathBuf>,
    /// Where to write: `.svg` for an image, `.html` for a report with tooltips and tables.
    #[arg(short, long, default_value = "plan.svg")]
    out: PathBuf,
    /// The heading; default: the input's file name without extension.
    #[arg(long)]
    title: Option<String>,
    /// For a model TOML: draw the plan `memplan!` generates instead of the plain problem: one
    /// picture per pool (stacked, fastest first), each in-place chain as one rectangle labelled
    /// with its members, pinned tensors outlined, app-owned (`external`) tensors left out.
    #[arg(long, conflicts_with = "plan")]
    generated: bool,
}

/// The two things `render` can write.
enum Format {
    Svg,
    Html,
}

fn format_of(path: &Path) -> anyhow::Result<Format> {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("svg") => Ok(Format::Svg),
        Some(e) if e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm") => {
            Ok(Format::Html)
        }
        _ => bail!(
            "cannot tell the format of `{}`: name the output `*.svg` for an image or `*.html` for a report",
            path.display()
        ),
    }
}

pub(crate) fn run(args: &RenderArgs) -> anyhow::Result<ExitCode> {
    let format = format_of(&args.out)?;
    if args.generated {
        return run_generated(args, &format);
    }
    let model = input::read_model(&args.input)?;
    let problem = &model.problem;
    let plan = match &args.plan {
        Some(path) => {
            let offsets = input::read_offsets(path, problem)?;
            if let Some(missing) = offsets.iter().position(Option::is_none) {
                bail!(
                    "`{}` gives no offset for buffer `{}`; a plan needs one offset per buffer",
                    path.display(),
                    problem.buffers()[missing].id
                );
            }
            Plan::from_offsets(problem, offsets.into_iter().flatten().collect())
        }
        None => {
            let options = SolveOptions {
                solver: model.solver.unwrap_or(memplan_core::Solver::Auto),
                ..SolveOptions::default()
            };
            bench::run_solver(problem, &options)?.solution.plan
        }
    };
    let title = args.title.clone().unwrap_or_else(|| model.name.clone());
    let options = RenderOptions {
        title: Some(&title),
        step_labels: model.step_labels.as_deref(),
    };
    let text = match format {
        Format::Svg => render::svg(problem, &plan, &options),
        Format::Html => render::html(problem, &plan, &options),
    };
    output::write_atomically(&args.out, &text)?;
    println!(
        "wrote {} ({} bytes): {} buffers, arena {} bytes, lower bound {}",
        args.out.display(),
        text.len(),
        problem.len(),
        plan.arena_size,
        memplan_core::lower_bound(problem)
    );
    Ok(ExitCode::SUCCESS)
}

/// `render --generated`: the plan of the generated code, per pool.
fn run_generated(args: &RenderArgs, format: &Format) -> anyhow::Result<ExitCode> {
    if !input::is_model_toml(&args.input) {
        bail!(
            "`--generated` draws what `memplan!` generates for a model TOML; `{}` is not one",
            args.input.display()
        );
    }
    if matches!(format, Format::Html) {
        bail!("`--generated` writes an SVG picture; name the output `*.svg`");
    }
    let (model, plan) = crate::model_plan::plan(&args.input, None, None)?;
    let model_info = input::read_model(&args.input)?;
    let title = args.title.clone().unwrap_or_else(|| model.name.clone());
    let options = RenderOptions {
        title: Some(&title),
        step_labels: model_info.step_labels.as_deref(),
    };
    let text = render::generated_svg(&model, &plan, &options);
    output::write_atomically(&args.out, &text)?;
    println!(
        "wrote {} ({} bytes): {} pool(s), {} in-place chain(s), arenas {} bytes in total",
        args.out.display(),
        text.len(),
        plan.pools.len(),
        plan.chains.len(),
        plan.total_arena_size()
    );
    Ok(ExitCode::SUCCESS)
}
