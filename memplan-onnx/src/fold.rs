//! Folded values: the value of a constant (an initializer or a folded node's output), computed
//! within the budget one folded value may expand to.

use std::collections::BTreeMap;

use crate::proto::{self};
use crate::weights::{self, WeightData, WeightValue};
use crate::{Importer, attrs, dtype_of, node_label};

impl<'g> Importer<'g> {
    /// The value of the constant `name` (an initializer or a folded node's output).
    pub(crate) fn constant_value(
        &self,
        name: &str,
        folded_by: &BTreeMap<&str, usize>,
    ) -> Result<WeightValue, String> {
        self.constant_value_in(name, folded_by, 0, None)
    }

    /// [`Self::constant_value`] within a folded value: `depth` bounds the chain of nodes
    /// followed, `budget` (`None` outside a folded node) what the folded value may expand to.
    pub(crate) fn constant_value_in(
        &self,
        name: &str,
        folded_by: &BTreeMap<&str, usize>,
        depth: usize,
        budget: Option<&FoldBudget>,
    ) -> Result<WeightValue, String> {
        let graph = self.graph;
        let leaf = |value: Result<WeightValue, String>| match (value, budget) {
            (Ok(value), Some(budget)) => budget.read(value),
            (value, _) => value,
        };
        if let Some(tensor) = graph.initializer.iter().find(|t| t.name == name) {
            let dtype = dtype_of(tensor.data_type).map_err(|kind| {
                format!("its element type is {kind}, which memplan does not support")
            })?;
            return leaf(weights::from_tensor(tensor, dtype, &self.base_dir));
        }
        let Some(&k) = folded_by.get(name) else {
            return Err("it is a sparse initializer, which the importer does not read".to_owned());
        };
        let node = &graph.node[k];
        let attribute = |key: &str| node.attribute.iter().find(|a| a.name == key);
        let default_domain = node.domain.is_empty() || node.domain == "ai.onnx";
        match node.op_type.as_str() {
            "Constant" if default_domain => {
                if let Some(tensor) = attribute("value").and_then(|a| a.t.as_ref()) {
                    let dtype = dtype_of(tensor.data_type).map_err(|kind| {
                        format!("its element type is {kind}, which memplan does not support")
                    })?;
                    return leaf(weights::from_tensor(tensor, dtype, &self.base_dir));
                }
                if let Some(a) = attribute("value_float") {
                    return leaf(Ok(weights::f32s(&[a.f], vec![])));
                }
                if let Some(a) = attribute("value_floats") {
                    return leaf(Ok(weights::f32s(&a.floats, vec![a.floats.len() as u64])));
                }
                if let Some(a) = attribute("value_int") {
                    return leaf(Ok(weights::i64s(&[a.i], vec![])));
                }
                if let Some(a) = attribute("value_ints") {
                    return leaf(Ok(weights::i64s(&a.ints, vec![a.ints.len() as u64])));
                }
                Err(format!(
                    "it is made by `Constant` node `{}` with no tensor, float or int value",
                    node_label(node)
                ))
            }
            "Identity" if default_domain && depth < 64 => match node.input.first() {
                Some(input) => self.constant_value_in(input, folded_by, depth + 1, budget),
                None => Err(format!(
                    "`Identity` node `{}` has no input",
                    node_label(node)
                )),
            },
            "Shape" if default_domain => {
                let input = node.input.first().map_or("", String::as_str);
                let (_, dims) = self.onnx_shape_of(input, "value").map_err(|e| e.message)?;
                let rank = dims.len() as i64;
                let bound = |key: &str, default: i64| {
                    let v = attribute(key).map_or(default, |a| a.i);
                    (if v < 0 { v + rank } else { v }).clamp(0, rank) as usize
                };
                let (start, end) = (bound("start", 0), bound("end", rank));
                let values: Vec<i64> = dims
                    .get(start..end.max(start))
                    .unwrap_or_default()
                    .iter()
                    .map(|&d| d as i64)
                    .collect();
                let n = values.len() as u64;
                leaf(Ok(weights::i64s(&values, vec![n])))
            }
            op_type => {
                let (dtype, shape) = self
                    .onnx_shape_of(name, "folded value")
                    .map_err(|e| e.message)?;
                if depth >= 64 {
                    return Err("it is computed by a chain of more than 64 folded nodes".to_owned());
                }
                // The outermost folded node holds the budget of the whole value: its inputs are
                // copied into it once per use, so a node read twice by each of a chain of nodes
                // would otherwise expand to a tree of 2^depth nodes.
                let own = FoldBudget::default();
                let budget = budget.unwrap_or(&own);
                budget.enter(node)?;
                let inputs = node
                    .input
                    .iter()
                    .map(|input| {
                        (!input.is_empty()).then(|| {
                            self.constant_value_in(input, folded_by, depth + 1, Some(budget))
                        })
                    })
                    .collect();
                if std::ptr::eq(budget, &own)
                    && let Some(why) = own.exhausted(node)
                {
                    return Err(why);
                }
                let outputs = node
                    .output
                    .iter()
                    .map(|output| {
                        (!output.is_empty()).then(|| {
                            self.onnx_shape_of(output, "folded value")
                                .map_err(|e| e.message)
                        })
                    })
                    .collect();
                let attrs = node
                    .attribute
                    .iter()
                    .filter_map(|a| attrs::value(a).map(|v| (a.name.clone(), v)))
                    .collect();
                Ok(WeightValue {
                    dtype,
                    shape,
                    data: WeightData::Computed(Box::new(weights::FoldedNode {
                        node: node_label(node),
                        op_type: op_type.to_owned(),
                        inputs,
                        attrs,
                        outputs,
                        output: node.output.iter().position(|o| o == name).unwrap_or(0),
                    })),
                })
            }
        }
    }
}

/// The most folded nodes one folded value may be computed from, each use of a shared one
/// counted (a folded value is a tree: each input is copied into the node that reads it).
pub const MAX_FOLDED_NODES: usize = 4096;

/// The most bytes of constants one folded value may be computed from, each use counted: what
/// a runner reads (initializers, external data, `Constant` values) to evaluate it (1 GiB).
pub const MAX_FOLDED_INPUT_BYTES: u64 = 1 << 30;

/// What one folded value has expanded to so far: folded nodes and the bytes of the constants
/// they read, each use counted; past [`MAX_FOLDED_NODES`] or [`MAX_FOLDED_INPUT_BYTES`] nothing
/// more is expanded, and the value is refused naming the node where it ran out.
#[derive(Default)]
pub(crate) struct FoldBudget {
    nodes: std::cell::Cell<usize>,
    bytes: std::cell::Cell<u64>,
    /// Why it ran out: the node and what was exceeded (the first time).
    exceeded: std::cell::RefCell<Option<String>>,
}

impl FoldBudget {
    fn exceed(&self, why: String) -> String {
        self.exceeded.borrow_mut().get_or_insert(why).clone()
    }

    /// Counts the folded `node`; an error once the budget is spent.
    fn enter(&self, node: &proto::NodeProto) -> Result<(), String> {
        if let Some(why) = self.exceeded.borrow().as_ref() {
            return Err(why.clone());
        }
        self.nodes.set(self.nodes.get() + 1);
        if self.nodes.get() > MAX_FOLDED_NODES {
            return Err(self.exceed(format!(
                "more than {MAX_FOLDED_NODES} folded nodes (each use of a shared one counted), \
                 the last at node `{}` ({})",
                node_label(node),
                node.op_type
            )));
        }
        Ok(())
    }

    /// Counts the bytes of a constant read by a folded node.
    fn read(&self, value: WeightValue) -> Result<WeightValue, String> {
        let bytes = value
            .shape
            .iter()
            .try_fold(value.dtype.size(), |n, &d| n.checked_mul(d))
            .and_then(|n| n.checked_add(self.bytes.get()));
        match bytes {
            Some(bytes) if bytes <= MAX_FOLDED_INPUT_BYTES => {
                self.bytes.set(bytes);
                Ok(value)
            }
            _ => Err(self.exceed(format!(
                "more than {} MiB of constant inputs (each use counted)",
                MAX_FOLDED_INPUT_BYTES >> 20
            ))),
        }
    }

    /// Why the value computed by `node` is refused, if the budget ran out.
    fn exhausted(&self, node: &proto::NodeProto) -> Option<String> {
        self.exceeded.borrow().as_ref().map(|why| {
            format!(
                "it is computed by folded node `{}` ({}) from {why}, which the importer does \
                 not expand\n  = help: a constant computed from this much is almost certainly a \
                 malformed graph; fold it offline (onnx-simplifier) or compute it at run time",
                node_label(node),
                node.op_type
            )
        })
    }
}
