//! Pictures of a plan: the arena as rectangles over time, as SVG or as a self-contained HTML page.
//!
//! ```text
//!  address                              peak
//!     ^  arena  ---------------------+--+-------
//!     |  bound  - - - - - - - - - - -|##|- - - -
//!     |        +------+   +----------|##|--+
//!     |        |  b   |   |    d     |##|  |    each buffer: a rectangle at its offset,
//!     |   +----+--+---+---+-----+----|##|--+    as wide as its lifetime
//!     |   |  a    |      c      |    |##|
//!     +---+-------+-------------+----+--+-----> step
//! ```
//!
//! The x axis is the step (ops in execution order), the y axis the address. Over the rectangles
//! run the bytes live at each step ([`crate::live_profile`]); its peak is the lower bound, which is
//! drawn as a dashed line beside the arena's height, and the peak step is highlighted.
//!
//! Pictures stay readable and small at any size: up to a few thousand buffers each gets its own
//! rectangle (labelled when the name fits, with a tooltip giving name, size, offset, lifetime and
//! op); beyond that the largest are drawn one by one and the rest are summed into a 4-pixel density
//! grid, and the live-bytes line keeps one stair per pixel column. Output is deterministic: the
//! same plan gives the same bytes.
//!
//! ## Example
//! ```
//! use memplan_core::{Buffer, Plan, Problem, render};
//!
//! let problem = Problem::new(vec![Buffer::new("a", 64, 0, 2), Buffer::new("b", 32, 1, 3)])?;
//! let plan = Plan::from_offsets(&problem, vec![0, 64]);
//! let svg = render::svg(&problem, &plan, &render::RenderOptions::default());
//! assert!(svg.starts_with("<svg") && svg.contains("<title>a\n64 bytes"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Runtime
//! `O(n log n)` for `n` buffers, plus the fixed-size density grid.

mod dense;
#[cfg(feature = "model-file")]
mod generated;
mod html;
mod picture;
mod scale;

use crate::model::{Plan, Problem};

#[cfg(feature = "model-file")]
pub use generated::generated_svg;

/// What to write on a picture besides the plan itself.
#[derive(Clone, Copy, Debug, Default)]
pub struct RenderOptions<'a> {
    /// The heading, for example the model's name. Default: `memory plan`.
    pub title: Option<&'a str>,
    /// A label per step, for example `Conv /layer1/conv1`: `step_labels[k]` names the op run at
    /// step `k`. Tooltips then say which op a buffer is live from and to. Default: none.
    pub step_labels: Option<&'a [String]>,
}

/// The plan as a standalone SVG image (about 1220 × 620 pixels).
///
/// `plan.offsets` has one offset per buffer of `problem`, in the same order; buffers without an
/// offset are left out.
pub fn svg(problem: &Problem, plan: &Plan, options: &RenderOptions<'_>) -> String {
    picture::draw(problem, plan, options, &picture::FULL)
}

/// The plan as one self-contained HTML page: figures, the picture with tooltips, and a table of
/// the buffers live at the peak step.
pub fn html(problem: &Problem, plan: &Plan, options: &RenderOptions<'_>) -> String {
    html::report(problem, plan, options)
}

/// A smaller SVG (about 860 × 360 pixels, at most 250 buffers drawn one by one) meant to be pasted
/// into rustdoc as inline HTML, for example by generated code beside its plan table.
///
/// The text has no blank lines, so Markdown keeps it as one HTML block, and it uses no `id`s or
/// style sheets, so it cannot clash with the page around it.
pub fn svg_for_rustdoc(problem: &Problem, plan: &Plan, options: &RenderOptions<'_>) -> String {
    picture::draw(problem, plan, options, &picture::RUSTDOC)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Buffer;

    fn small() -> (Problem, Plan) {
        let problem = Problem::new(vec![
            Buffer::new("input", 1024, 0, 2),
            Buffer::new("conv<1>", 4096, 1, 3),
            Buffer::new("relu", 4096, 2, 4),
        ])
        .unwrap();
        let plan = Plan::from_offsets(&problem, vec![8192, 0, 4096]);
        (problem, plan)
    }

    fn count(haystack: &str, needle: &str) -> usize {
        haystack.matches(needle).count()
    }

    #[test]
    fn every_buffer_is_a_rectangle_with_a_tooltip() {
        let (problem, plan) = small();
        let labels = vec![
            "Conv a".to_string(),
            "Relu b".into(),
            "Add c".into(),
            "Out".into(),
        ];
        let options = RenderOptions {
            title: Some("tiny"),
            step_labels: Some(&labels),
        };
        let svg = svg(&problem, &plan, &options);
        assert!(svg.contains("<title>input\n1024 bytes (1.00 KiB)\noffset 8192 to 9216\nlive steps [0, 2)\nfirst step 0: Conv a\nlast step 1: Relu b</title>"));
        // Names are escaped, never raw markup.
        assert!(svg.contains("conv&lt;1&gt;"));
        assert!(!svg.contains("conv<1>"));
        assert!(svg.contains("arena 9.00 KiB"));
        assert!(svg.contains("lower bound 8.00 KiB"));
        assert!(svg.contains("peak: step 2, 8.00 KiB live"));
        // One tooltip per buffer plus one per step column.
        assert_eq!(count(&svg, "<title>"), 3 + 4);
        assert!(svg.ends_with("</svg>\n"));
    }

    #[test]
    fn rustdoc_svg_has_no_blank_line_and_no_ids() {
        let (problem, plan) = small();
        let svg = svg_for_rustdoc(&problem, &plan, &RenderOptions::default());
        assert!(!svg.contains("\n\n"));
        assert!(!svg.contains(" id="));
        assert!(svg.starts_with("<svg"));
    }

    #[test]
    fn html_is_self_contained() {
        let (problem, plan) = small();
        let html = html(&problem, &plan, &RenderOptions::default());
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<svg"));
        assert!(!html.contains("<script src") && !html.contains("<link"));
        assert!(html.contains("Live at the peak step 2: 2 buffers, 8192 bytes"));
    }

    #[test]
    fn rustdoc_pictures_of_long_chains_stay_small() {
        // 1,000 short-lived tensors of varied sizes one after another: every pixel column of the
        // density grid differs, the worst case for run merging.
        let buffers: Vec<Buffer> = (0..1000u64)
            .map(|i| Buffer::new(format!("t{i}"), 1024 * (1 + i % 16), i, i + 2))
            .collect();
        let problem = Problem::new(buffers).unwrap();
        let offsets = (0..1000u64).map(|i| (i % 2) * 16 * 1024).collect();
        let plan = Plan::from_offsets(&problem, offsets);
        let doc = svg_for_rustdoc(&problem, &plan, &RenderOptions::default());
        println!(
            "rustdoc picture of 1,000 chained tensors: {} bytes",
            doc.len()
        );
        assert!(doc.len() < 120_000, "{} bytes", doc.len());
    }

    #[test]
    fn empty_problem_renders() {
        let problem = Problem::default();
        let svg = svg(&problem, &Plan::default(), &RenderOptions::default());
        assert!(svg.contains("0 buffers"));
    }

    #[test]
    fn dense_plans_stay_small_and_deterministic() {
        // 20,000 buffers with varied sizes and lifetimes, in 400 lanes of 100,000 bytes, so the
        // plan is valid without running a solver.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut buffers = Vec::new();
        let mut offsets = Vec::new();
        for i in 0..20_000u64 {
            let start = (i / 400) * 60 + next() % 10;
            let len = 1 + next() % 50;
            buffers.push(Buffer::new(
                format!("t{i}"),
                1 + next() % 100_000,
                start,
                start + len,
            ));
            offsets.push((i % 400) * 100_000);
        }
        let problem = Problem::new(buffers).unwrap();
        let plan = Plan::from_offsets(&problem, offsets);
        assert!(crate::validate(&problem, &plan).is_empty());
        let first = svg(&problem, &plan, &RenderOptions::default());
        println!("svg of 20,000 buffers: {} bytes", first.len());
        assert!(first.len() < 5_000_000, "{} bytes", first.len());
        assert_eq!(count(&first, "<title>t"), picture::FULL.max_individual);
        assert!(first.contains("17000 smaller buffers"));
        assert_eq!(first, svg(&problem, &plan, &RenderOptions::default()));
        let doc = svg_for_rustdoc(&problem, &plan, &RenderOptions::default());
        assert!(doc.len() < 250_000, "{} bytes", doc.len());
    }
}
