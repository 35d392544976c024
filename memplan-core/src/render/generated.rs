//! The plan the generated code uses, drawn: one picture per pool, stacked top to bottom (the
//! fastest pool first), each in-place chain one rectangle labelled with its members (`a = b = c`),
//! pinned tensors outlined and marked `[pinned]`; app-owned (`external`) tensors take no space and
//! are not drawn.

use crate::model::{Buffer, Lifetime, Plan, Problem};
use crate::model_file::{Model, format_byte_size};
use crate::model_plan::ModelPlan;
use crate::render::{RenderOptions, picture};

/// One pool as a problem of its own: a buffer per chain or lone tensor, with its plan.
fn pool_problem(model: &Model, plan: &ModelPlan, pool: usize) -> (Problem, Plan) {
    let mut buffers = Vec::new();
    let mut offsets = Vec::new();
    let mut drawn = vec![false; model.tensors.len()];
    for &i in &plan.pools[pool].tensors {
        if drawn[i] {
            continue;
        }
        let members: Vec<usize> = plan.chain_of(i).map_or_else(|| vec![i], <[usize]>::to_vec);
        let mut id = members
            .iter()
            .map(|&m| model.tensors[m].name.as_str())
            .collect::<Vec<_>>()
            .join(" = ");
        let mut buffer = Buffer {
            id: String::new(),
            size: 0,
            lifetime: Lifetime::new(u64::MAX, 0),
            alignment: 1,
            fixed_offset: None,
        };
        for &m in &members {
            drawn[m] = true;
            let t = &model.tensors[m];
            buffer.size = buffer.size.max(t.size);
            buffer.lifetime.start = buffer.lifetime.start.min(t.lifetime.start);
            buffer.lifetime.end = buffer.lifetime.end.max(t.lifetime.end);
            if let Some(pin) = t.memory.offset {
                buffer.fixed_offset = Some(pin);
            }
        }
        if buffer.fixed_offset.is_some() {
            id.push_str(" [pinned]");
        }
        buffer.id = id;
        buffers.push(buffer);
        offsets.push(plan.offset(i));
    }
    let problem = Problem::new(buffers).unwrap_or_default();
    let offsets = if problem.is_empty() {
        Vec::new()
    } else {
        offsets
    };
    let plan = Plan::from_offsets(&problem, offsets);
    (problem, plan)
}

/// `width="…" height="…"` of an SVG's root element.
fn size_of_svg(svg: &str) -> (f64, f64) {
    let attribute = |name: &str| {
        svg.find(&format!(" {name}=\""))
            .and_then(|at| {
                let rest = &svg[at + name.len() + 3..];
                rest[..rest.find('"')?].parse::<f64>().ok()
            })
            .unwrap_or(0.0)
    };
    (attribute("width"), attribute("height"))
}

/// The generated plan of `model` as one SVG: a picture per pool, stacked, each titled with the
/// pool's name, its arena and limit, its in-place chains and pins.
///
/// # Runtime
/// That of [`crate::render::svg`] per pool.
pub fn generated_svg(model: &Model, plan: &ModelPlan, options: &RenderOptions<'_>) -> String {
    let base = options.title.unwrap_or(model.name.as_str());
    let mut pictures = Vec::new();
    for (p, pool) in plan.pools.iter().enumerate() {
        let (problem, pool_plan) = pool_problem(model, plan, p);
        let chains = plan
            .chains
            .iter()
            .filter(|c| pool.tensors.contains(&c[0]))
            .count();
        let pinned = pool.pinned_count(model);
        let limit = pool
            .capacity
            .map_or(String::new(), |c| format!(" of {}", format_byte_size(c)));
        let title = format!(
            "{base} · pool {}: {}{limit} · {chains} in-place chain(s) · {pinned} pinned",
            pool.name,
            format_byte_size(pool.arena_size),
        );
        let options = RenderOptions {
            title: Some(&title),
            ..*options
        };
        pictures.push(picture::draw(
            &problem,
            &pool_plan,
            &options,
            &picture::FULL,
        ));
    }
    if let [single] = pictures.as_slice() {
        return single.clone();
    }
    let sizes: Vec<(f64, f64)> = pictures.iter().map(|s| size_of_svg(s)).collect();
    let width = sizes.iter().map(|s| s.0).fold(0.0, f64::max);
    let height: f64 = sizes.iter().map(|s| s.1).sum();
    let mut out = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}">"#
    );
    let mut y = 0.0;
    for (svg, (_, h)) in pictures.iter().zip(&sizes) {
        out.push_str(&svg.replacen("<svg ", &format!("<svg y=\"{y}\" "), 1));
        y += h;
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model_plan::plan_model;
    use crate::parse_model;

    #[test]
    fn pools_stack_and_chains_and_pins_are_labelled() {
        let model = parse_model(
            "m.toml",
            r#"
[model]
name = "m"
inputs = ["x"]
outputs = ["y"]
[[pools]]
name = "sram"
size = 256
[[pools]]
name = "dram"
[tensors]
x = { bytes = 64, offset = 0 }
a = { bytes = 512 }
b = { bytes = 512 }
y = { bytes = 64 }
[[ops]]
name = "up"
inputs = ["x"]
outputs = ["a"]
[[ops]]
name = "relu"
kind = "Relu"
inputs = ["a"]
outputs = ["b"]
[[ops]]
name = "down"
inputs = ["b"]
outputs = ["y"]
"#,
        )
        .unwrap();
        let plan = plan_model(&model).unwrap();
        let svg = generated_svg(&model, &plan, &RenderOptions::default());
        assert!(svg.starts_with("<svg"));
        assert_eq!(svg.matches("<svg ").count(), 3, "outer + one per pool");
        assert!(svg.contains("pool sram: 64 B of 256 B"), "{svg}");
        assert!(svg.contains("pool dram"));
        assert!(svg.contains("a = b"), "the chain is one labelled rectangle");
        assert!(svg.contains("x [pinned]"));
        assert!(
            svg.contains("stroke-dasharray=\"4 2\""),
            "pinned rectangles are outlined"
        );
        assert_eq!(svg, generated_svg(&model, &plan, &RenderOptions::default()));
    }
}
