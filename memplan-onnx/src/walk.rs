//! The graph walk: each node folded or kept as an op, its tensors and weights named, and the
//! model file put together.

use std::collections::{BTreeMap, BTreeSet};

use memplan_core::model_file::{Location, ModelLocations, TensorMemory};
use memplan_core::{Layout, Lifetime, Model, Op, Tensor, parse_model};

use crate::weights::{self};
use crate::weights_table::with_weights;
use crate::{
    Graph, ImportError, Imported, Importer, NodeFate, NodeOp, OpInput, attrs, dtype_of, fail,
    node_label, stem_file,
};
use memplan_core::model_file::names::{UniqueNames, snake_case};

impl<'g> Importer<'g> {
    pub(crate) fn run(&self, toml_name: &str) -> Result<Imported, ImportError> {
        let file = self.file;
        let graph = self.graph;
        let is_onnx_domain = |d: &str| d.is_empty() || d == "ai.onnx";
        self.check_options()?;
        self.check_structure()?;

        // 1. Fold what is known before inference.
        let mut constant: BTreeSet<&str> = self.initializers.clone();
        let mut fates = Vec::with_capacity(graph.node.len());
        for node in &graph.node {
            let inputs = node.input.iter().filter(|i| !i.is_empty());
            // Control flow (`If`, `Loop`, `Scan`, any node with a graph attribute) is never
            // folded: its branches may read values of the outer graph that its input list does
            // not name, so constant inputs do not make it constant.
            let control_flow = (is_onnx_domain(&node.domain)
                && matches!(node.op_type.as_str(), "If" | "Loop" | "Scan"))
                || node.attribute.iter().any(|a| matches!(a.r#type, 5 | 10));
            let fate = if !control_flow && inputs.clone().all(|i| constant.contains(i.as_str()))
                || (node.op_type == "Shape"
                    && is_onnx_domain(&node.domain)
                    && node.input.first().is_some_and(|i| self.is_static(i)))
            {
                constant.extend(node.output.iter().map(String::as_str));
                NodeFate::Folded
            } else {
                NodeFate::Op
            };
            fates.push(fate);
        }

        // 2. Tensors: graph inputs that are not weights, then every remaining node's outputs.
        let mut onnx_names: Vec<&str> = Vec::new();
        let mut index_of: BTreeMap<&str, usize> = BTreeMap::new();
        let mut notes = Vec::new();
        let graph_inputs: Vec<&str> = graph
            .input
            .iter()
            .map(|i| i.name.as_str())
            .filter(|n| !self.initializers.contains(n))
            .collect();
        let read: BTreeSet<&str> = graph
            .node
            .iter()
            .zip(&fates)
            .filter(|(_, f)| matches!(f, NodeFate::Op))
            .flat_map(|(n, _)| n.input.iter().map(String::as_str))
            .chain(graph.output.iter().map(|o| o.name.as_str()))
            .collect();
        for &name in &graph_inputs {
            if !read.contains(name) {
                notes.push(format!(
                    "graph input `{name}` is not read by any op; left out"
                ));
                continue;
            }
            if index_of.insert(name, onnx_names.len()).is_some() {
                return fail(format!(
                    "`{file}`: graph input `{name}` is listed twice\n  = help: the file is malformed; export it again"
                ));
            }
            onnx_names.push(name);
        }
        for (node, fate) in graph.node.iter().zip(&fates) {
            if matches!(fate, NodeFate::Folded) {
                continue;
            }
            for output in node.output.iter().filter(|o| !o.is_empty()) {
                if index_of.insert(output, onnx_names.len()).is_some() {
                    return fail(format!(
                        "`{file}`: value `{output}` is produced twice (again by node `{}`)\n  = help: every ONNX value has one producer; the file is malformed",
                        node_label(node)
                    ));
                }
                onnx_names.push(output);
            }
        }

        // Structure before types: every value read is known, every graph output is made.
        for (node, fate) in graph.node.iter().zip(&fates) {
            if matches!(fate, NodeFate::Folded) {
                continue;
            }
            for input in node.input.iter().filter(|i| !i.is_empty()) {
                if !constant.contains(input.as_str()) && !index_of.contains_key(input.as_str()) {
                    return fail(format!(
                        "`{file}`: node `{}` reads `{input}`, which is not a graph input, a weight, or the output of any node\n  = help: the file is malformed or its nodes are not in topological order; check it with `onnx.checker.check_model`",
                        node_label(node)
                    ));
                }
            }
        }
        for output in &graph.output {
            let name = output.name.as_str();
            if !index_of.contains_key(name) && !constant.contains(name) {
                return fail(format!(
                    "`{file}`: graph output `{name}` is not produced by any node\n  = help: the file is malformed; check it with `onnx.checker.check_model`"
                ));
            }
        }

        // 3. Names, dtypes, shapes.
        // The arenas' methods and the op views' locals (see `memplan_core`'s name check).
        let mut tensor_names = UniqueNames::reserving(&["new", "views", "rest"]);
        let mut tensors = Vec::with_capacity(onnx_names.len());
        let mut tensor_shapes = Vec::with_capacity(onnx_names.len());
        // A set: a list searched once per tensor is quadratic in a graph of many inputs.
        let input_set: BTreeSet<&str> = graph_inputs.iter().copied().collect();
        for &onnx_name in &onnx_names {
            let what = if input_set.contains(onnx_name) {
                "graph input"
            } else {
                "tensor"
            };
            let (dtype, shape) = self.shape_of(onnx_name, what)?;
            tensor_shapes.push(self.onnx_shape_of(onnx_name, what)?.1);
            let size = shape.iter().product::<u64>() * dtype.size();
            let name = tensor_names.claim(&snake_case(onnx_name, "tensor"));
            tensors.push(Tensor {
                source: (name != onnx_name).then(|| onnx_name.to_string()),
                name,
                layout: Layout::Typed { dtype, shape },
                size,
                alignment: self.options.alignment.max(dtype.alignment()),
                lifetime: Lifetime::new(0, 1),
                location: Location::default(),
                memory: TensorMemory::default(),
            });
        }

        // 4. Ops, and the weights they read (named in the tensors' namespace, after them).
        let mut op_names = UniqueNames::default();
        let mut ops = Vec::new();
        let mut node_ops = Vec::new();
        let mut weights: Vec<weights::Weight> = Vec::new();
        let mut weight_index: BTreeMap<&str, usize> = BTreeMap::new();
        let folded_by: BTreeMap<&str, usize> = graph
            .node
            .iter()
            .zip(&fates)
            .enumerate()
            .filter(|(_, (_, fate))| matches!(fate, NodeFate::Folded))
            .flat_map(|(k, (node, _))| node.output.iter().map(move |o| (o.as_str(), k)))
            .collect();
        for (k, (node, fate)) in graph.node.iter().zip(&fates).enumerate() {
            if matches!(fate, NodeFate::Folded) {
                continue;
            }
            let mut inputs = Vec::new();
            let mut full_inputs = Vec::new();
            for input in &node.input {
                if input.is_empty() {
                    full_inputs.push(OpInput::Absent);
                } else if constant.contains(input.as_str()) {
                    let w = *weight_index.entry(input.as_str()).or_insert_with(|| {
                        weights.push(weights::Weight {
                            name: tensor_names.claim(&snake_case(input, "weight")),
                            source: input.clone(),
                            value: self.constant_value(input, &folded_by),
                        });
                        weights.len() - 1
                    });
                    full_inputs.push(OpInput::Weight(w));
                } else {
                    let t = index_of[input.as_str()]; // checked above
                    inputs.push(t);
                    full_inputs.push(OpInput::Tensor(t));
                }
            }
            while full_inputs.last() == Some(&OpInput::Absent) {
                full_inputs.pop();
            }
            let mut node_attrs = Vec::new();
            let mut tensor_attrs = Vec::new();
            let mut other_attrs = Vec::new();
            for attribute in &node.attribute {
                match (attrs::value(attribute), &attribute.t) {
                    (Some(value), _) => node_attrs.push((attribute.name.clone(), value)),
                    (None, Some(tensor)) if attribute.ref_attr_name.is_empty() => {
                        let value = dtype_of(tensor.data_type)
                            .map_err(|kind| format!("its element type is {kind}"))
                            .and_then(|dtype| weights::from_tensor(tensor, dtype, &self.base_dir));
                        tensor_attrs.push((attribute.name.clone(), value));
                    }
                    (None, _) => other_attrs.push(attribute.name.clone()),
                }
            }
            let mut full_outputs: Vec<Option<usize>> = node
                .output
                .iter()
                .map(|o| (!o.is_empty()).then(|| index_of[o.as_str()]))
                .collect();
            while full_outputs.last() == Some(&None) {
                full_outputs.pop();
            }
            node_ops.push(NodeOp {
                op_type: node.op_type.clone(),
                domain: node.domain.clone(),
                node: node.name.clone(),
                inputs: full_inputs,
                outputs: full_outputs,
                attrs: node_attrs,
                tensor_attrs,
                other_attrs,
            });
            let outputs = node
                .output
                .iter()
                .filter(|o| !o.is_empty())
                .map(|o| index_of[o.as_str()])
                .collect();
            let fallback = format!("{}_{k}", node.op_type);
            let base = if node.name.is_empty() {
                snake_case(&fallback, "op")
            } else {
                snake_case(&node.name, "op")
            };
            let mut name = op_names.claim(&base);
            // The op's view method `op_<name>` must not be a tensor's accessor.
            while tensor_names.contains(&format!("op_{name}")) {
                name = op_names.claim(&base);
            }
            ops.push(Op {
                source: (!node.name.is_empty() && node.name != name).then(|| node.name.clone()),
                name,
                kind: (!node.op_type.is_empty()).then(|| node.op_type.clone()),
                inputs,
                outputs,
                scratch: Vec::new(),
                // Left to the op's kind: the planner knows which kinds may run in place.
                inplace: None,
                inplace_any_kind: false,
                location: Location::default(),
                // The plain file lists tensor inputs only; `with_weights` writes the rest.
                all_inputs: Vec::new(),
                attrs: Vec::new(),
            });
        }

        // 5. Graph inputs and outputs.
        let inputs = graph_inputs
            .iter()
            .filter_map(|n| index_of.get(n).copied())
            .collect();
        let mut outputs = Vec::new();
        for output in &graph.output {
            match index_of.get(output.name.as_str()) {
                Some(&t) => outputs.push(t),
                // Checked above: not a tensor, so a constant.
                None => notes.push(format!(
                    "graph output `{}` is a constant (known before inference); left out",
                    output.name
                )),
            }
        }
        if ops.is_empty() {
            return fail(format!(
                "`{file}`: every node is a constant (folded away), so there is nothing to plan\n  = help: memplan plans the tensors computed at inference time; check the graph's inputs"
            ));
        }

        let stem = file
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or(file)
            .split('.')
            .next()
            .unwrap_or("model");
        let name = match &self.options.name {
            Some(name) => name.clone(),
            None => memplan_core::model_file::names::model_name(stem),
        };
        let model = Model {
            file: toml_name.to_string(),
            name,
            alignment: self.options.alignment,
            budget: None,
            solver: None,
            nodes: None,
            inputs,
            outputs,
            tensors,
            ops,
            weights: Vec::new(),
            pools: Vec::new(),
            inplace: self.options.inplace,
            // Derived from the kinds when the written file is parsed back below.
            aliases: Vec::new(),
            locations: ModelLocations::default(),
        };
        for name in self.options.dims.keys() {
            if !self.used_dims.borrow().contains(name) {
                notes.push(format!(
                    "`--dim {name}=...` matches no dimension of the model (names are case-sensitive)"
                ));
            }
        }
        let folded = fates
            .iter()
            .filter(|f| matches!(f, NodeFate::Folded))
            .count();
        let header = format!(
            "# Imported by `memplan import` from {}: {} nodes, {} folded as constants,\n# {} ops and {} activation tensors. Tensor and op names are snake_case; `source` keeps the ONNX name.\n\n",
            stem_file(file),
            graph.node.len(),
            folded,
            model.ops.len(),
            model.tensors.len()
        );
        let plain = header + &model.to_toml();
        let graph_info = Graph {
            tensor_shapes,
            weights,
            ops: node_ops,
        };
        // The file must read back; if it does not, say what is wrong with the ONNX graph, without
        // pointing into a file that is never written.
        let check = |text: &str| {
            parse_model(toml_name, text).or_else(|e| {
                fail(format!(
                    "`{file}` cannot be planned: {}\n  = help: {}",
                    e.message, e.help
                ))
            })
        };
        let model = check(&plain)?;
        let toml = if self.options.with_weights {
            let text = with_weights(&plain, &model, &graph_info)?;
            check(&text)?;
            text
        } else {
            plain
        };
        Ok(Imported {
            toml,
            model,
            graph: graph_info,
            nodes: graph.node.len(),
            folded,
            notes,
        })
    }
}
