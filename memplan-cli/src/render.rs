//! `memplan render`: the plan as a picture, SVG or self-contained HTML by the output's extension.
//!
//! For a model TOML the picture is the plan `memplan!` compiles (or the `--plan` given): one
//! picture per pool, each in-place chain one rectangle labelled with its members, pinned tensors
//! outlined, app-owned tensors left out. A plan that breaks the rules is still drawn, with every
//! violation printed on stderr.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::bail;
use memplan_core::model_plan::ModelPlan;
use memplan_core::render::{self, RenderOptions};
use memplan_core::{Model, Plan, Problem, SolveOptions, Violation, format_byte_size};

use crate::{check, console, input, model_plan, output, plan_csv, solver_run};

#[derive(clap::Args, Debug)]
pub(crate) struct RenderArgs {
    /// The problem: a MiniMalloc CSV or a model TOML.
    input: PathBuf,
    /// A plan CSV (at least `id` and `offset` columns; `pool` for a model with pools) to draw;
    /// without it, the plan `memplan!` compiles for a model TOML, the default solver's for a CSV.
    #[arg(long)]
    plan: Option<PathBuf>,
    /// Where to write: `.svg` for an image, `.html` for a report with tooltips and tables.
    #[arg(short, long, default_value = "plan.svg")]
    out: PathBuf,
    /// The heading; default: the model's name, or the input's file name without extension.
    #[arg(long)]
    title: Option<String>,
    /// For a model TOML: draw the plain problem (every tensor its own rectangle in one arena, no
    /// in-place sharing, pools, pins or app-owned tensors) instead of what `memplan!` compiles.
    #[arg(long, conflicts_with = "plan")]
    no_inplace: bool,
    /// Accepted for older scripts: drawing what `memplan!` compiles is the default.
    #[arg(long, hide = true, conflicts_with = "no_inplace")]
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

/// Prints a plan's violations on stderr (the picture is drawn anyway, to show them).
fn warn(violations: &[String], plan: &Path) {
    if violations.is_empty() {
        return;
    }
    for violation in violations {
        console::eprintln(&format!("warning: {violation}"));
    }
    console::eprintln(&format!(
        "warning: `{}` breaks {} rule(s) (`memplan check` lists them); drawn as given",
        plan.display(),
        violations.len()
    ));
}

pub(crate) fn run(args: &RenderArgs) -> anyhow::Result<ExitCode> {
    let format = format_of(&args.out)?;
    if args.generated && !input::is_model_toml(&args.input) {
        bail!(
            "`--generated` draws what `memplan!` generates for a model TOML; `{}` is not one",
            args.input.display()
        );
    }
    if input::is_model_toml(&args.input) && !args.no_inplace {
        return run_compiled(args, &format);
    }
    let model = input::read_model(&args.input)?;
    let mut marked = None;
    let plan = match &args.plan {
        Some(path) => {
            let file = plan_csv::read(path)?;
            let (offsets, violations) = check::problem_offsets(&model.problem, &file)?;
            warn(&violations, path);
            if let Some(missing) = offsets.iter().position(Option::is_none) {
                bail!(
                    "`{}` gives no offset for buffer `{}` (or one whose end passes 2^62); a \
                     picture needs one offset per buffer",
                    path.display(),
                    model.problem.buffers()[missing].id
                );
            }
            let offsets: Vec<u64> = offsets.into_iter().flatten().collect();
            if !violations.is_empty() {
                marked = Some(mark_overlaps(&model.problem, &offsets)?);
            }
            Plan::from_offsets(&model.problem, offsets)
        }
        None => {
            let options = SolveOptions {
                solver: model.solver.unwrap_or(memplan_core::Solver::Auto),
                ..SolveOptions::default()
            };
            solver_run::run_solver(&model.problem, &options)?
                .solution
                .plan
        }
    };
    // A plan that breaks the rules is drawn with its offending buffers marked in their labels.
    let problem = marked.as_ref().unwrap_or(&model.problem);
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
    console::println(&format!(
        "wrote {} ({} bytes): {} buffers, arena {} bytes, lower bound {}",
        args.out.display(),
        text.len(),
        problem.len(),
        plan.arena_size,
        memplan_core::lower_bound(problem)
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// `render` of a model TOML: the compiled plan (or the `--plan` given), per pool.
fn run_compiled(args: &RenderArgs, format: &Format) -> anyhow::Result<ExitCode> {
    let (model, plan) = match &args.plan {
        Some(path) => {
            let (model, _) = model_plan::read(&args.input)?;
            let file = plan_csv::read(path)?;
            let checked = check::model_plan_from_csv(&model, &file)?;
            let unplaced = (0..model.tensors.len())
                .find(|&i| !model.tensors[i].memory.external && checked.plan.tensors[i].is_none());
            if let Some(i) = unplaced {
                bail!(
                    "`{}` gives no offset for tensor `{}` (or one whose end passes 2^62); a \
                     picture needs one offset per arena tensor",
                    path.display(),
                    model.tensors[i].name
                );
            }
            warn(&checked.violations, path);
            (model, checked.plan)
        }
        None => {
            let compiled = model_plan::load(&args.input, None, None, None)?;
            (compiled.model, compiled.plan)
        }
    };
    let info = input::read_model(&args.input)?;
    let title = args.title.clone().unwrap_or_else(|| model.name.clone());
    let options = RenderOptions {
        title: Some(&title),
        step_labels: info.step_labels.as_deref(),
    };
    let picture = render::generated_svg(&model, &plan, &options);
    let text = match format {
        Format::Svg => picture,
        Format::Html => compiled_html(&model, &plan, &title, &picture),
    };
    output::write_atomically(&args.out, &text)?;
    console::println(&format!(
        "wrote {} ({} bytes): {} pool(s), {} in-place chain(s), arenas {} bytes in total",
        args.out.display(),
        text.len(),
        plan.pools.len(),
        plan.chains.len(),
        plan.total_arena_size()
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// `problem` with ` [overlaps]` or ` [misaligned]` added to the id of every buffer that breaks a
/// rule under `offsets`, so the picture's labels and tooltips show where a bad plan goes wrong.
fn mark_overlaps(problem: &Problem, offsets: &[u64]) -> anyhow::Result<Problem> {
    let placed: Vec<Option<u64>> = offsets.iter().map(|&o| Some(o)).collect();
    let mut marks: Vec<Option<&str>> = vec![None; problem.len()];
    for violation in memplan_core::validate_offsets(problem, &placed) {
        match violation {
            Violation::Overlap { first, second } => {
                marks[first] = Some(" [overlaps]");
                marks[second] = Some(" [overlaps]");
            }
            Violation::Misaligned { buffer, .. } => {
                marks[buffer] = marks[buffer].or(Some(" [misaligned]"));
            }
            _ => {}
        }
    }
    let buffers = problem
        .buffers()
        .iter()
        .zip(&marks)
        .map(|(buffer, mark)| {
            let mut buffer = buffer.clone();
            if let Some(mark) = mark {
                buffer.id.push_str(mark);
            }
            buffer
        })
        .collect();
    Ok(Problem::new(buffers)?)
}

/// `text` with `&`, `<`, `>` and `"` escaped for HTML.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A self-contained HTML page of a model's plan: the pools' figures, the picture, and every
/// tensor's pool, offset, size, lifetime (as `TENSORS` reports it) and chain.
fn compiled_html(model: &Model, plan: &ModelPlan, title: &str, picture: &str) -> String {
    let lifetimes = memplan_core::codegen::reported_lifetimes(model);
    let mut chain = vec![None; model.tensors.len()];
    for (c, members) in plan.chains.iter().enumerate() {
        for &i in members {
            chain[i] = Some(c);
        }
    }
    let mut html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>memplan: {t}</title>\n\
         <style>body{{font-family:Helvetica,Arial,sans-serif;margin:24px;color:#222}}\
         table{{border-collapse:collapse;font-size:13px}}td,th{{border-bottom:1px solid #ddd;padding:3px 10px;text-align:left}}\
         td.n,th.n{{text-align:right;font-variant-numeric:tabular-nums}}.note{{color:#555;font-size:13px}}</style>\n\
         </head>\n<body>\n<h1>memplan: {t}</h1>\n<p class=\"note\">The plan <code>memplan!</code> compiles: \
         one arena per pool, in-place chains drawn as one rectangle, app-owned tensors in no arena. \
         x = step, y = address.</p>\n<table>\n<tr><th>pool</th><th class=\"n\">arena bytes</th><th class=\"n\">lower bound</th>\
         <th class=\"n\">size limit</th><th>section</th><th class=\"n\">tensors</th></tr>\n",
        t = escape(title)
    );
    for pool in &plan.pools {
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td class=\"n\">{} ({})</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td></tr>",
            escape(&pool.name),
            pool.arena_size,
            format_byte_size(pool.arena_size),
            pool.lower_bound,
            pool.capacity.map_or(String::from("-"), |c| c.to_string()),
            escape(pool.link_section.as_deref().unwrap_or("-")),
            pool.tensors.len()
        );
    }
    html.push_str("</table>\n<div class=\"figure\">\n");
    html.push_str(picture);
    html.push_str(
        "\n</div>\n<h2>Tensors</h2>\n<table>\n<tr><th>tensor</th><th>pool</th><th class=\"n\">offset</th>\
         <th class=\"n\">bytes</th><th>lifetime</th><th>shares bytes in place with</th></tr>\n",
    );
    for (i, tensor) in model.tensors.iter().enumerate() {
        let (pool, offset) = match plan.tensors[i] {
            Some(place) => (
                plan.pools[place.pool].name.as_str(),
                place.offset.to_string(),
            ),
            None => ("external", "-".to_owned()),
        };
        let (start, end) = lifetimes[i];
        let shares: Vec<&str> = chain[i]
            .map_or(&[][..], |c| &plan.chains[c])
            .iter()
            .filter(|&&j| j != i)
            .map(|&j| model.tensors[j].name.as_str())
            .collect();
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{offset}</td><td class=\"n\">{}</td><td>[{start}, {end})</td><td>{}</td></tr>",
            escape(&tensor.name),
            escape(pool),
            tensor.size,
            escape(&shares.join(", "))
        );
    }
    html.push_str("</table>\n</body>\n</html>\n");
    html
}
