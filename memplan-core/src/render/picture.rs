//! Drawing one plan as SVG: the arena's rectangles, the live-bytes line, the arena height, the
//! lower bound and the peak step.

use std::fmt::{self, Write as _};

use crate::bounds::{live_profile, lower_bound, peak_step};
use crate::model::{Plan, Problem};
use crate::render::RenderOptions;
use crate::render::dense::{self, Grid};
use crate::render::scale::{Frame, Px, format_bytes, format_tick_bytes, ticks};

/// Sizes and limits of one kind of picture.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Style {
    /// Width of the plot area in pixels.
    pub(crate) plot_width: f64,
    /// Height of the plot area in pixels.
    pub(crate) plot_height: f64,
    /// Most buffers drawn as their own rectangle; the rest become density.
    pub(crate) max_individual: usize,
    /// Invisible per-step columns whose tooltip names the op (only with step labels).
    pub(crate) step_tooltips: bool,
    /// Resolution of the density grid of the buffers not drawn one by one.
    pub(crate) grid: Grid,
}

/// The full-size picture of `memplan render`.
pub(crate) const FULL: Style = Style {
    plot_width: 960.0,
    plot_height: 520.0,
    max_individual: 3000,
    step_tooltips: true,
    grid: Grid {
        cell: 4.0,
        levels: 8,
    },
};

/// The smaller picture embedded in rustdoc.
pub(crate) const RUSTDOC: Style = Style {
    plot_width: 600.0,
    plot_height: 260.0,
    max_individual: 250,
    step_tooltips: false,
    grid: Grid {
        cell: 8.0,
        levels: 4,
    },
};

/// Most steps that get per-step tooltip columns.
const MAX_STEP_TOOLTIPS: u64 = 2000;

const MARGIN_LEFT: f64 = 72.0;
const MARGIN_TOP: f64 = 58.0;
const MARGIN_RIGHT: f64 = 190.0;
const MARGIN_BOTTOM: f64 = 44.0;
const LABEL_FONT: f64 = 10.0;
/// Rough width of one character of the label font, in pixels.
const CHAR_WIDTH: f64 = 0.6 * LABEL_FONT;

const ARENA_COLOUR: &str = "#c0392b";
const BOUND_COLOUR: &str = "#1e8449";
const PEAK_COLOUR: &str = "#e67e22";
const DENSITY_COLOUR: &str = "#34495e";

/// Escapes text for XML content and attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text output that cannot fail (it goes to a `String`).
struct Out(String);

impl Out {
    fn put(&mut self, args: fmt::Arguments<'_>) {
        self.0
            .write_fmt(args)
            .expect("writing to a String cannot fail");
        self.0.push('\n');
    }
}

/// A fill colour for buffer `i`: hues a golden angle apart, so neighbours in input order differ.
fn colour(i: usize) -> String {
    let hue = (i as f64 * 137.507_764) % 360.0;
    let (s, l) = (0.55, if i.is_multiple_of(2) { 0.70 } else { 0.60 });
    let c = (1.0 - (2.0 * l - 1.0f64).abs()) * s;
    let h = hue / 60.0;
    let x = c * (1.0 - (h % 2.0 - 1.0).abs());
    let (r, g, b) = match h as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    let byte = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    format!("#{:02x}{:02x}{:02x}", byte(r), byte(g), byte(b))
}

/// The label to write inside a rectangle `width` pixels wide, or `None` when not even a few
/// characters fit. A name too long to fit keeps its start and its end around a `…` (the end of
/// a name such as `layer1_layer1_0_conv3_conv_output_0` says more than its start), after dropping
/// an ONNX-style `_output_0` suffix.
fn fitting_label(id: &str, width: f64, height: f64) -> Option<String> {
    if height < LABEL_FONT + 2.0 {
        return None;
    }
    let room = ((width - 4.0) / CHAR_WIDTH).floor();
    if room < 1.0 {
        return None;
    }
    let room = room as usize;
    if id.chars().count() <= room {
        return Some(id.to_string());
    }
    let short = id.strip_suffix("_output_0").unwrap_or(id);
    let chars: Vec<char> = short.chars().collect();
    if chars.len() <= room {
        return Some(short.to_string());
    }
    if room < 4 {
        return None;
    }
    let tail = (room - 1) / 2;
    let head = room - 1 - tail;
    let mut label: String = chars[..head].iter().collect();
    label.push('…');
    label.extend(&chars[chars.len() - tail..]);
    Some(label)
}

/// The op label of `step`, if the caller gave one.
fn op_at<'a>(options: &RenderOptions<'a>, step: u64) -> Option<&'a str> {
    let labels = options.step_labels?;
    labels
        .get(usize::try_from(step).ok()?)
        .map(String::as_str)
        .filter(|l| !l.is_empty())
}

/// The tooltip of buffer `i`.
pub(crate) fn tooltip(
    problem: &Problem,
    plan: &Plan,
    options: &RenderOptions<'_>,
    i: usize,
) -> String {
    let b = &problem.buffers()[i];
    let offset = plan.offsets.get(i).copied().unwrap_or(0);
    let (start, end) = (b.lifetime.start, b.lifetime.end);
    let mut text = format!(
        "{}\n{} bytes ({})\noffset {} to {}\nlive steps [{}, {})",
        b.id,
        b.size,
        format_bytes(b.size),
        offset,
        offset.saturating_add(b.size),
        start,
        end
    );
    if let Some(op) = op_at(options, start) {
        let _ = write!(text, "\nfirst step {start}: {op}");
    }
    if let Some(op) = op_at(options, end - 1) {
        let _ = write!(text, "\nlast step {}: {op}", end - 1);
    }
    text
}

/// Draws the picture.
pub(crate) fn draw(
    problem: &Problem,
    plan: &Plan,
    options: &RenderOptions<'_>,
    style: &Style,
) -> String {
    let lower = lower_bound(problem);
    let arena = plan.arena_size;
    let steps = problem
        .buffers()
        .iter()
        .map(|b| b.lifetime.end)
        .max()
        .unwrap_or(0)
        .max(1);
    let top_value = arena.max(lower).max(1);
    let frame = Frame {
        left: MARGIN_LEFT,
        top: MARGIN_TOP,
        width: style.plot_width,
        height: style.plot_height,
        steps,
        max_bytes: top_value.saturating_add(top_value / 12).max(1),
    };
    let width = MARGIN_LEFT + style.plot_width + MARGIN_RIGHT;
    let height = MARGIN_TOP + style.plot_height + MARGIN_BOTTOM;
    let peak = peak_step(problem);

    let mut out = Out(String::new());
    out.put(format_args!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="Helvetica, Arial, sans-serif" font-size="12" role="img">"#,
        w = Px(width),
        h = Px(height)
    ));
    out.put(format_args!(
        r##"<rect width="{}" height="{}" fill="#ffffff"/>"##,
        Px(width),
        Px(height)
    ));
    let title = options.title.unwrap_or("memory plan");
    out.put(format_args!(
        r##"<text x="{}" y="20" font-size="15" font-weight="bold" fill="#111">{}</text>"##,
        Px(MARGIN_LEFT),
        escape(title)
    ));
    let ratio = if lower == 0 {
        1.0
    } else {
        arena as f64 / lower as f64
    };
    let peak_text = peak.map_or(String::new(), |(step, _)| format!(" · peak at step {step}"));
    out.put(format_args!(
        r##"<text x="{}" y="38" fill="#333">{} buffers · {} steps · arena {} · lower bound {} · {:.4} × lower bound{}</text>"##,
        Px(MARGIN_LEFT),
        problem.len(),
        steps,
        format_bytes(arena),
        format_bytes(lower),
        ratio,
        peak_text
    ));

    draw_axes(&mut out, &frame);
    // The arena's extent, behind everything.
    out.put(format_args!(
        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="#eef1f4"/>"##,
        Px(frame.left),
        Px(frame.y(arena)),
        Px(frame.width),
        Px(frame.bottom() - frame.y(arena))
    ));
    if style.step_tooltips && options.step_labels.is_some() && steps <= MAX_STEP_TOOLTIPS {
        out.put(format_args!(r#"<g fill="transparent">"#));
        for step in 0..steps {
            if let Some(op) = op_at(options, step) {
                out.put(format_args!(
                    r#"<rect x="{}" y="{}" width="{}" height="{}"><title>step {step}: {}</title></rect>"#,
                    Px(frame.x(step)),
                    Px(frame.top),
                    Px(frame.step_width()),
                    Px(frame.height),
                    escape(op)
                ));
            }
        }
        out.put(format_args!("</g>"));
    }

    let (individual, rest) = dense::split_by_area(problem, &frame, style.max_individual);
    draw_buffers(&mut out, problem, plan, options, &frame, &individual);
    if !rest.is_empty() {
        let bytes: u64 = rest.iter().map(|&i| problem.buffers()[i].size).sum();
        out.put(format_args!(
            r#"<g fill="{DENSITY_COLOUR}"><title>{} smaller buffers ({} in all), drawn as density: the darker, the more of each cell they cover</title>"#,
            rest.len(),
            format_bytes(bytes)
        ));
        let Grid { cell, levels } = style.grid;
        for run in dense::density(problem, plan, &frame, &rest, style.grid) {
            let opacity = 0.12 + 0.78 * f64::from(run.level) / f64::from(levels);
            out.put(format_args!(
                r#"<rect x="{}" y="{}" width="{}" height="{}" fill-opacity="{:.2}"/>"#,
                Px(frame.left + run.column as f64 * cell),
                Px(frame.top + run.row as f64 * cell),
                Px((run.cells as f64 * cell).min(frame.width - run.column as f64 * cell)),
                Px(cell.min(frame.height - run.row as f64 * cell)),
                opacity
            ));
        }
        out.put(format_args!("</g>"));
    }

    if let Some((step, bytes)) = peak {
        let x = frame.x(step);
        let band = frame.step_width().max(2.0);
        out.put(format_args!(
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{PEAK_COLOUR}" fill-opacity="0.22" stroke="{PEAK_COLOUR}" stroke-width="1" pointer-events="none"/>"#,
            Px(x),
            Px(frame.top),
            Px(band),
            Px(frame.height)
        ));
        let anchor = if x > frame.left + frame.width * 0.7 {
            "end"
        } else {
            "start"
        };
        out.put(format_args!(
            r#"<text x="{}" y="{}" fill="{PEAK_COLOUR}" font-weight="bold" text-anchor="{anchor}">peak: step {step}, {} live</text>"#,
            Px(x + band / 2.0),
            Px(frame.top - 6.0),
            format_bytes(bytes)
        ));
    }
    draw_profile(&mut out, problem, &frame);
    draw_levels(&mut out, &frame, arena, lower);
    draw_legend(&mut out, &frame, rest.len());
    out.put(format_args!("</svg>"));
    out.0
}

fn draw_axes(out: &mut Out, frame: &Frame) {
    out.put(format_args!(r##"<g stroke="#d5dbe1" stroke-width="1">"##));
    for value in ticks(frame.max_bytes, 6, true) {
        let y = frame.y(value);
        out.put(format_args!(
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}"/>"#,
            Px(frame.left),
            Px(y),
            Px(frame.right()),
            Px(y)
        ));
    }
    out.put(format_args!("</g>"));
    out.put(format_args!(r##"<g fill="#333" text-anchor="end">"##));
    for value in ticks(frame.max_bytes, 6, true) {
        out.put(format_args!(
            r#"<text x="{}" y="{}">{}</text>"#,
            Px(frame.left - 6.0),
            Px(frame.y(value) + 4.0),
            format_tick_bytes(value, frame.max_bytes)
        ));
    }
    out.put(format_args!("</g>"));
    out.put(format_args!(
        r##"<g fill="#333" text-anchor="middle" stroke="none">"##
    ));
    for step in ticks(frame.steps, 10, false) {
        let x = frame.x(step);
        out.put(format_args!(
            r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#555"/><text x="{x}" y="{}">{step}</text>"##,
            Px(frame.bottom()),
            Px(frame.bottom() + 5.0),
            Px(frame.bottom() + 18.0),
            x = Px(x)
        ));
    }
    out.put(format_args!("</g>"));
    out.put(format_args!(
        r##"<path d="M{l} {t}V{b}H{r}" fill="none" stroke="#555"/>"##,
        l = Px(frame.left),
        t = Px(frame.top),
        b = Px(frame.bottom()),
        r = Px(frame.right())
    ));
    out.put(format_args!(
        r##"<text x="{}" y="{}" fill="#333" text-anchor="middle">step (ops in execution order)</text>"##,
        Px(frame.left + frame.width / 2.0),
        Px(frame.bottom() + 36.0)
    ));
    out.put(format_args!(
        r##"<text transform="translate({} {}) rotate(-90)" fill="#333" text-anchor="middle">address (offset in the arena)</text>"##,
        Px(16.0),
        Px(frame.top + frame.height / 2.0)
    ));
}

fn draw_buffers(
    out: &mut Out,
    problem: &Problem,
    plan: &Plan,
    options: &RenderOptions<'_>,
    frame: &Frame,
    individual: &[usize],
) {
    let mut labels = Vec::new();
    out.put(format_args!(r##"<g stroke="#ffffff" stroke-width="0.6">"##));
    for &i in individual {
        let b = &problem.buffers()[i];
        let Some(&offset) = plan.offsets.get(i) else {
            continue;
        };
        let x = frame.x(b.lifetime.start);
        let w = frame.x(b.lifetime.end) - x;
        let y = frame.y(offset.saturating_add(b.size));
        let h = frame.y(offset) - y;
        // Thin rectangles get no outline, or the outline would hide them.
        let outline = if b.fixed_offset.is_some() {
            // Pinned: a dark dashed outline.
            r##" stroke="#111111" stroke-width="1.5" stroke-dasharray="4 2""##
        } else if w >= 3.0 && h >= 3.0 {
            ""
        } else {
            r#" stroke="none""#
        };
        out.put(format_args!(
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{}"{outline}><title>{}</title></rect>"#,
            Px(x),
            Px(y),
            Px(w),
            Px(h),
            colour(i),
            escape(&tooltip(problem, plan, options, i))
        ));
        if let Some(label) = fitting_label(&b.id, w, h) {
            labels.push((x + w / 2.0, y + h / 2.0 + LABEL_FONT * 0.35, label));
        }
    }
    out.put(format_args!("</g>"));
    if !labels.is_empty() {
        out.put(format_args!(
            r##"<g font-size="{LABEL_FONT}" fill="#1b1b1b" text-anchor="middle" pointer-events="none">"##
        ));
        for (x, y, label) in labels {
            out.put(format_args!(
                r#"<text x="{}" y="{}">{}</text>"#,
                Px(x),
                Px(y),
                escape(&label)
            ));
        }
        out.put(format_args!("</g>"));
    }
}

fn draw_profile(out: &mut Out, problem: &Problem, frame: &Frame) {
    let stairs = dense::profile_stairs(&live_profile(problem), frame);
    if stairs.is_empty() {
        return;
    }
    let mut path = format!("M{} {}", Px(frame.x(0)), Px(frame.y(0)));
    for &(step, bytes) in &stairs {
        let _ = write!(path, "H{}V{}", Px(frame.x(step)), Px(frame.y(bytes)));
    }
    let _ = write!(path, "H{}", Px(frame.right()));
    out.put(format_args!(
        r##"<path d="{path}" fill="none" stroke="#111" stroke-width="1.6" stroke-linejoin="round" pointer-events="none"/>"##
    ));
}

fn draw_levels(out: &mut Out, frame: &Frame, arena: u64, lower: u64) {
    let (ya, yl) = (frame.y(arena), frame.y(lower));
    out.put(format_args!(
        r#"<line x1="{}" y1="{ya}" x2="{}" y2="{ya}" stroke="{ARENA_COLOUR}" stroke-width="1.6"/>"#,
        Px(frame.left),
        Px(frame.right() + 6.0),
        ya = Px(ya)
    ));
    out.put(format_args!(
        r#"<line x1="{}" y1="{yl}" x2="{}" y2="{yl}" stroke="{BOUND_COLOUR}" stroke-width="1.6" stroke-dasharray="6 4"/>"#,
        Px(frame.left),
        Px(frame.right() + 6.0),
        yl = Px(yl)
    ));
    // Keep the two labels apart when the lines (nearly) coincide: the arena's above, the bound's below.
    let (label_a, label_l) = if (yl - ya).abs() < 14.0 {
        (ya - 3.0, ya + 13.0)
    } else {
        (ya + 4.0, yl + 4.0)
    };
    out.put(format_args!(
        r#"<text x="{}" y="{}" fill="{ARENA_COLOUR}" font-weight="bold">arena {}</text>"#,
        Px(frame.right() + 10.0),
        Px(label_a),
        format_bytes(arena)
    ));
    out.put(format_args!(
        r#"<text x="{}" y="{}" fill="{BOUND_COLOUR}" font-weight="bold">lower bound {}</text>"#,
        Px(frame.right() + 10.0),
        Px(label_l),
        format_bytes(lower)
    ));
}

fn draw_legend(out: &mut Out, frame: &Frame, dense_buffers: usize) {
    let x = frame.right() + 10.0;
    let dense_text = format!("{dense_buffers} small buffers");
    let mut entries: Vec<(&str, &str)> = vec![("buffer", "buffer: offset × lifetime")];
    if dense_buffers > 0 {
        entries.push(("dense", &dense_text));
    }
    entries.push(("line", "bytes live at each step"));
    entries.push(("peak", "peak step"));
    let mut y = frame.bottom() - 17.0 * entries.len() as f64 + 8.0;
    for (kind, text) in entries {
        let (bx, by) = (Px(x), Px(y - 5.0));
        match kind {
            "buffer" => out.put(format_args!(
                r##"<rect x="{bx}" y="{by}" width="18" height="10" fill="{}" stroke="#fff"/>"##,
                colour(1)
            )),
            "dense" => out.put(format_args!(
                r#"<rect x="{bx}" y="{by}" width="18" height="10" fill="{DENSITY_COLOUR}" fill-opacity="0.5"/>"#
            )),
            "line" => out.put(format_args!(
                r##"<line x1="{bx}" y1="{y}" x2="{}" y2="{y}" stroke="#111" stroke-width="1.6"/>"##,
                Px(x + 18.0),
                y = Px(y)
            )),
            _ => out.put(format_args!(
                r#"<rect x="{bx}" y="{by}" width="18" height="10" fill="{PEAK_COLOUR}" fill-opacity="0.3" stroke="{PEAK_COLOUR}"/>"#
            )),
        }
        out.put(format_args!(
            r##"<text x="{}" y="{}" fill="#333" font-size="11">{}</text>"##,
            Px(x + 24.0),
            Px(y + 4.0),
            escape(text)
        ));
        y += 17.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_fit_or_shorten_or_vanish() {
        assert_eq!(fitting_label("conv1", 60.0, 20.0).as_deref(), Some("conv1"));
        assert_eq!(
            fitting_label("a_very_long_tensor_name", 40.0, 20.0).as_deref(),
            Some("a_v…me")
        );
        assert_eq!(
            fitting_label("layer1_layer1_0_conv3_conv_output_0", 100.0, 20.0).as_deref(),
            Some("layer1_l…v3_conv")
        );
        assert_eq!(fitting_label("conv1", 60.0, 5.0), None);
        assert_eq!(fitting_label("conv1", 10.0, 20.0), None);
    }

    #[test]
    fn escaping_keeps_markup_out() {
        assert_eq!(escape("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
    }

    #[test]
    fn colours_are_hex_and_neighbours_differ() {
        let c: Vec<String> = (0..4).map(colour).collect();
        assert!(c.iter().all(|c| c.len() == 7 && c.starts_with('#')));
        assert_ne!(c[0], c[1]);
        assert_ne!(c[1], c[2]);
    }
}
