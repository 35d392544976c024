//! Writing a [`Model`] back as a model file, for tools that make models (an ONNX importer).

use std::fmt::Write;

use crate::model_file::{DEFAULT_ALIGNMENT, Layout, Model};

impl Model {
    /// The model as a model file that [`crate::parse_model`] reads back to an equal model (up to
    /// the locations and the file name).
    ///
    /// Tensors are written one per line as inline tables; `align` only where it differs from
    /// what the model's alignment already gives.
    pub fn to_toml(&self) -> String {
        let mut out = String::new();
        let names = |list: &[usize]| {
            let quoted: Vec<String> = list.iter().map(|&t| quote(&self.tensors[t].name)).collect();
            format!("[{}]", quoted.join(", "))
        };
        // Writing to a String cannot fail.
        let _ = writeln!(out, "[model]");
        let _ = writeln!(out, "name = {}", quote(&self.name));
        if self.alignment != DEFAULT_ALIGNMENT {
            let _ = writeln!(out, "alignment = {}", self.alignment);
        }
        if let Some(budget) = self.budget {
            let _ = writeln!(out, "budget = {budget}");
        }
        if let Some(solver) = self.solver {
            let _ = writeln!(out, "solver = {}", quote(&solver.name()));
        }
        if let Some(nodes) = self.nodes {
            let _ = writeln!(out, "nodes = {nodes}");
        }
        let _ = writeln!(out, "inputs = {}", names(&self.inputs));
        let _ = writeln!(out, "outputs = {}", names(&self.outputs));
        if !self.inplace {
            let _ = writeln!(out, "inplace = false");
        }
        for pool in &self.pools {
            let _ = writeln!(out, "\n[[pools]]");
            let _ = writeln!(out, "name = {}", quote(&pool.name));
            if let Some(size) = pool.capacity {
                let _ = writeln!(out, "size = {size}");
            }
            if let Some(section) = &pool.link_section {
                let _ = writeln!(out, "link_section = {}", quote(section));
            }
        }
        let _ = writeln!(out, "\n[tensors]");
        for tensor in &self.tensors {
            let mut fields = Vec::new();
            let natural = match &tensor.layout {
                Layout::Typed { dtype, shape } => {
                    fields.push(format!("dtype = {}", quote(dtype.name())));
                    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
                    fields.push(format!("shape = [{}]", dims.join(", ")));
                    dtype.alignment()
                }
                Layout::Bytes => {
                    fields.push(format!("bytes = {}", tensor.size));
                    1
                }
            };
            if tensor.alignment != self.alignment.max(natural) {
                fields.push(format!("align = {}", tensor.alignment));
            }
            if let Some(source) = &tensor.source {
                fields.push(format!("source = {}", quote(source)));
            }
            if let Some(pool) = tensor.memory.pool {
                fields.push(format!("pool = {}", quote(&self.pools[pool].name)));
            }
            if let Some(offset) = tensor.memory.offset {
                fields.push(format!("offset = {offset}"));
            }
            if tensor.memory.external {
                fields.push("external = true".to_owned());
            }
            let _ = writeln!(out, "{} = {{ {} }}", tensor.name, fields.join(", "));
        }
        for op in &self.ops {
            let _ = writeln!(out, "\n[[ops]]");
            let _ = writeln!(out, "name = {}", quote(&op.name));
            if let Some(kind) = &op.kind {
                let _ = writeln!(out, "kind = {}", quote(kind));
            }
            if let Some(source) = &op.source {
                let _ = writeln!(out, "source = {}", quote(source));
            }
            let _ = writeln!(out, "inputs = {}", names(&op.inputs));
            let _ = writeln!(out, "outputs = {}", names(&op.outputs));
            if !op.scratch.is_empty() {
                let _ = writeln!(out, "scratch = {}", names(&op.scratch));
            }
            if let Some(pairs) = &op.inplace {
                let entries: Vec<String> = pairs
                    .iter()
                    .map(|&(o, i)| {
                        format!(
                            "{} = {}",
                            self.tensors[o].name,
                            quote(&self.tensors[i].name)
                        )
                    })
                    .collect();
                let _ = writeln!(out, "inplace = {{ {} }}", entries.join(", "));
            }
        }
        out
    }
}

/// A TOML basic string.
fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
