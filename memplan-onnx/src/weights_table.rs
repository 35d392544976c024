//! The model file's `[weights]` table and each op's inputs in ONNX order and its `attrs`.

use memplan_core::Model;

use crate::{Graph, ImportError, OpInput, attrs, fail};

/// `plain` (a model file without weights, from `model`) with `[weights]`, and each op's inputs in
/// ONNX order and its `attrs`.
pub(crate) fn with_weights(
    plain: &str,
    model: &Model,
    graph: &Graph,
) -> Result<String, ImportError> {
    // A weight with no elements: a model file refuses it (as it refuses such a tensor). Where
    // ONNX defines an empty input as not given (`Resize`'s `roi` and `scales`), it is written as
    // an absent input (`""`); anywhere else the import stops, naming it.
    let empty: Vec<bool> = graph
        .weights
        .iter()
        .map(|w| w.value.as_ref().is_ok_and(|v| v.shape.contains(&0)))
        .collect();
    for (w, weight) in graph.weights.iter().enumerate() {
        if !empty[w] {
            continue;
        }
        let reader = graph
            .ops
            .iter()
            .find(|op| op.op_type != "Resize" && op.inputs.contains(&OpInput::Weight(w)));
        if let Some(op) = reader {
            return fail(format!(
                "weight `{}` has no elements (shape {:?}) and is an input of node `{}` ({}): a \
                 memplan model has no zero-element weights or tensors\n  = help: if the input is \
                 optional, leave it out (an empty name in the node's inputs); otherwise simplify \
                 the model (for example with `onnxsim`) and save it again",
                weight.source,
                weight
                    .value
                    .as_ref()
                    .map(|v| v.shape.clone())
                    .unwrap_or_default(),
                op.node,
                op.op_type
            ));
        }
    }
    let mut table = String::from("\n[weights]\n");
    for (w, weight) in graph.weights.iter().enumerate() {
        if empty[w] {
            continue;
        }
        let value = weight.value.as_ref().or_else(|why| {
            fail(format!(
                "weight `{}` cannot be described: {why}\n  = help: run ONNX shape inference and constant folding (for example `onnxsim`) and save the model again",
                weight.source
            ))
        })?;
        // The ONNX shape as is: `[]` for a scalar (weights keep their rank).
        let shape: Vec<String> = value.shape.iter().map(u64::to_string).collect();
        table.push_str(&format!(
            "{} = {{ dtype = {}, shape = [{}], source = {} }}\n",
            weight.name,
            attrs::quote(value.dtype.name()),
            shape.join(", "),
            attrs::quote(&weight.source)
        ));
    }
    let mut out = String::with_capacity(plain.len() * 2);
    let mut op: Option<usize> = None;
    let mut weights_written = graph.weights.is_empty();
    for line in plain.lines() {
        if line == "[[ops]]" {
            if !weights_written {
                // Before the first op's blank line.
                out.pop();
                out.push_str(&table);
                out.push('\n');
                weights_written = true;
            }
            op = Some(op.map_or(0, |k| k + 1));
        }
        match op {
            Some(k) if line.starts_with("inputs = ") => {
                let names: Vec<String> = graph.ops[k]
                    .inputs
                    .iter()
                    .map(|input| match *input {
                        OpInput::Absent => "\"\"".to_owned(),
                        OpInput::Tensor(t) => attrs::quote(&model.tensors[t].name),
                        OpInput::Weight(w) if empty[w] => "\"\"".to_owned(),
                        OpInput::Weight(w) => attrs::quote(&graph.weights[w].name),
                    })
                    .collect();
                out.push_str(&format!("inputs = [{}]\n", names.join(", ")));
            }
            Some(k) if line.starts_with("outputs = ") => {
                out.push_str(line);
                out.push('\n');
                if !graph.ops[k].attrs.is_empty() {
                    out.push_str(&format!("attrs = {}\n", attrs::table(&graph.ops[k].attrs)));
                }
            }
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    Ok(out)
}
