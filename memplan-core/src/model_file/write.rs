//! Writing a [`Model`] back as a model file, for tools that make models (an ONNX importer).

use std::fmt::Write;

use crate::model_file::{AttrValue, DEFAULT_ALIGNMENT, Layout, Model, OpInput};

impl Model {
    /// The model as a model file that [`crate::parse_model`] reads back to an equal model (up to
    /// the locations and the file name).
    ///
    /// Tensors and weights are written one per line as inline tables; `align` only where it
    /// differs from what the model's alignment already gives. An op's `inputs` are its
    /// [`crate::Op::input_list`] (tensors, weights and `""`), its `attrs` one inline table.
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
        if !self.weights.is_empty() {
            let _ = writeln!(out, "\n[weights]");
        }
        for weight in &self.weights {
            let dims: Vec<String> = weight.shape.iter().map(u64::to_string).collect();
            let source = weight
                .source
                .as_ref()
                .map_or(String::new(), |s| format!(", source = {}", quote(s)));
            let _ = writeln!(
                out,
                "{} = {{ dtype = {}, shape = [{}]{source} }}",
                weight.name,
                quote(weight.dtype.name()),
                dims.join(", ")
            );
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
            let inputs: Vec<String> = op
                .input_list()
                .iter()
                .map(|input| match *input {
                    OpInput::Tensor(t) => quote(&self.tensors[t].name),
                    OpInput::Weight(w) => quote(&self.weights[w].name),
                    OpInput::Absent => quote(""),
                })
                .collect();
            let _ = writeln!(out, "inputs = [{}]", inputs.join(", "));
            let _ = writeln!(out, "outputs = {}", names(&op.outputs));
            if !op.scratch.is_empty() {
                let _ = writeln!(out, "scratch = {}", names(&op.scratch));
            }
            if op.inplace_any_kind && op.inplace.is_none() {
                let _ = writeln!(out, "inplace = true");
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
            if !op.attrs.is_empty() {
                let entries: Vec<String> = op
                    .attrs
                    .iter()
                    .map(|(name, value)| format!("{} = {}", quote(name), attr_value(value)))
                    .collect();
                let _ = writeln!(out, "attrs = {{ {} }}", entries.join(", "));
            }
        }
        out
    }
}

/// An attribute's value as TOML; floats always with a `.` or exponent (so they read back as
/// floats), `nan`/`inf` as TOML spells them.
fn attr_value(value: &AttrValue) -> String {
    let list = |items: Vec<String>| format!("[{}]", items.join(", "));
    match value {
        AttrValue::Int(i) => i.to_string(),
        AttrValue::Float(f) => float(*f),
        AttrValue::Str(s) => quote(s),
        AttrValue::Bool(b) => b.to_string(),
        AttrValue::Ints(v) => list(v.iter().map(i64::to_string).collect()),
        AttrValue::Floats(v) => list(v.iter().map(|&f| float(f)).collect()),
        AttrValue::Strs(v) => list(v.iter().map(|s| quote(s)).collect()),
    }
}

/// A TOML float that reads back to the same bits (`{:?}` is the shortest exact form).
fn float(value: f64) -> String {
    if value.is_nan() {
        return if value.is_sign_negative() {
            "-nan"
        } else {
            "nan"
        }
        .to_owned();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-inf" } else { "inf" }.to_owned();
    }
    // `1e20` is a valid TOML float, `1.0` too; Debug never prints a bare integer for a float.
    format!("{value:?}")
}

/// `text` as a TOML basic string: in double quotes, with `"`, `\\` and control characters
/// escaped. memplan-onnx writes its model files with it too.
pub fn quote(text: &str) -> String {
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
