//! A self-contained HTML report: the picture with tooltips, the figures, and the buffers live at
//! the peak step.

use std::fmt::Write as _;

use crate::bounds::{live_at, lower_bound, peak_step};
use crate::model::{Plan, Problem};
use crate::render::RenderOptions;
use crate::render::picture::{self, escape};
use crate::render::scale::format_bytes;

/// Most rows of the "live at the peak step" table.
const PEAK_ROWS: usize = 40;

const CSS: &str = "body{font-family:Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1280px}\
h1{font-size:20px;margin:0 0 8px}h2{font-size:16px;margin:24px 0 8px}\
table{border-collapse:collapse;font-size:13px}td,th{border-bottom:1px solid #ddd;padding:3px 10px;text-align:left}\
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}\
.figure{overflow-x:auto}.figure svg rect:hover{stroke:#000;stroke-width:1.5}\
.note{color:#555;font-size:13px}";

/// The report as one HTML document (no external files, scripts or fonts).
pub(crate) fn report(problem: &Problem, plan: &Plan, options: &RenderOptions<'_>) -> String {
    let title = options.title.unwrap_or("memory plan");
    let lower = lower_bound(problem);
    let mut html = String::new();
    let mut put = |text: String| {
        html.push_str(&text);
        html.push('\n');
    };
    put(format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>memplan: {}</title>\n<style>{CSS}</style>\n</head>\n<body>",
        escape(title)
    ));
    put(format!("<h1>memplan: {}</h1>", escape(title)));
    let ratio = if lower == 0 {
        1.0
    } else {
        plan.arena_size as f64 / lower as f64
    };
    put(format!(
        "<table>\n<tr><th>buffers</th><td class=\"n\">{}</td></tr>\n<tr><th>arena</th><td class=\"n\">{} bytes ({})</td></tr>\n<tr><th>lower bound</th><td class=\"n\">{} bytes ({})</td></tr>\n<tr><th>arena / lower bound</th><td class=\"n\">{ratio:.4}</td></tr>\n<tr><th>no reuse (sum of sizes)</th><td class=\"n\">{} bytes ({})</td></tr>\n</table>",
        problem.len(),
        plan.arena_size,
        format_bytes(plan.arena_size),
        lower,
        format_bytes(lower),
        problem.total_size(),
        format_bytes(problem.total_size()),
    ));
    put("<p class=\"note\">x = step, y = address. Each rectangle is a buffer at its offset during its lifetime; hover it for its name, size, lifetime and op. The black line is the bytes live at each step: no plan can be lower than its peak (the lower bound).</p>".into());
    put("<div class=\"figure\">".into());
    put(picture::draw(problem, plan, options, &picture::FULL));
    put("</div>".into());
    if let Some((step, bytes)) = peak_step(problem) {
        let live = live_at(problem, step);
        let mut table = format!(
            "<h2>Live at the peak step {step}: {} buffers, {} bytes ({})</h2>\n<table>\n<tr><th>buffer</th><th class=\"n\">bytes</th><th class=\"n\">offset</th><th>lifetime</th><th>first op</th></tr>",
            live.len(),
            bytes,
            format_bytes(bytes)
        );
        for &i in live.iter().take(PEAK_ROWS) {
            let b = &problem.buffers()[i];
            let op = options
                .step_labels
                .and_then(|labels| labels.get(usize::try_from(b.lifetime.start).ok()?))
                .map_or("", String::as_str);
            let _ = write!(
                table,
                "\n<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td></tr>",
                escape(&b.id),
                b.size,
                plan.offsets.get(i).copied().unwrap_or(0),
                b.lifetime,
                escape(op)
            );
        }
        table.push_str("\n</table>");
        if live.len() > PEAK_ROWS {
            let _ = write!(
                table,
                "\n<p class=\"note\">… and {} smaller buffers.</p>",
                live.len() - PEAK_ROWS
            );
        }
        put(table);
    }
    put("</body>\n</html>".into());
    html
}
