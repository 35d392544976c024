//! Folded values: the value of a constant (an initializer or a folded node's output), computed
//! within the budget one folded value may expand to, and within what the folded values of one
//! file may hold together.
//!
//! A folded value is a tree: each use of a constant or of another folded value is a copy of it
//! in the node that reads it. Protobuf has no shared references, but names do: a node may read
//! one initializer thousands of times, and a chain of nodes may read each other twice each.
//! [`FoldBudget`] bounds one value's tree (nodes, and the bytes of the constants it reads), and
//! [`HeldBudget`] what every folded value of the file holds together, so that a file of a few
//! kilobytes cannot make the importer copy gigabytes.

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
        budget: Option<&FoldBudget<'_>>,
    ) -> Result<WeightValue, String> {
        let graph = self.graph;
        let leaf = |value: Result<WeightValue, String>| match (value, budget) {
            (Ok(value), Some(budget)) => budget.read(value),
            (value, _) => value,
        };
        if let Some(tensor) = self.initializer(name) {
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
                let own = FoldBudget::new(&self.held);
                let budget = budget.unwrap_or(&own);
                if let Err(why) = budget.enter(node) {
                    // The outermost node says what it is (the file's budget may be spent
                    // before its first node).
                    let outermost = std::ptr::eq(budget, &own).then(|| own.exhausted(node));
                    return Err(outermost.flatten().unwrap_or(why));
                }
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

/// The folded values of one file may hold together this many times the file's length (each
/// use of a constant counted: its bytes, its shape, the node that reads it) ...
pub const BUDGET_PER_FILE_BYTE: u64 = 16;

/// ... plus this many bytes (16 MiB), for the fixed costs of a small file. The same budget as
/// the TFLite reader's (`memplan_tflite::BUDGET_PER_FILE_BYTE` and `BUDGET_SLACK`).
pub const BUDGET_SLACK: u64 = 16 << 20;

/// What the folded values of one file hold together, each use of a constant counted: the
/// copies of the constants they read (their bytes, or an external file's path), their shapes,
/// and each folded node with its attributes. Past `limit`, no folded value expands further.
pub(crate) struct HeldBudget {
    file_len: u64,
    limit: u64,
    used: std::cell::Cell<u64>,
}

impl HeldBudget {
    /// The budget of the folded values of a file of `file_len` bytes.
    pub(crate) fn new(file_len: u64) -> Self {
        Self {
            file_len,
            limit: file_len
                .saturating_mul(BUDGET_PER_FILE_BYTE)
                .saturating_add(BUDGET_SLACK),
            used: std::cell::Cell::new(0),
        }
    }

    /// The most bytes the folded values may hold together (and shape inference's values: see
    /// `shapes::infer`).
    pub(crate) fn limit(&self) -> u64 {
        self.limit
    }

    /// Takes `bytes`; why not, when they would take the folded values past the limit.
    fn take(&self, bytes: u64) -> Result<(), String> {
        match self.used.get().checked_add(bytes) {
            Some(used) if used <= self.limit => {
                self.used.set(used);
                Ok(())
            }
            _ => Err(format!(
                "constants that would take the folded values of this file past {} bytes \
                 together ({BUDGET_PER_FILE_BYTE} times its {} bytes, plus {} MiB; each use of a \
                 constant counted)",
                self.limit,
                self.file_len,
                BUDGET_SLACK >> 20
            )),
        }
    }
}

/// What one folded value has expanded to so far: folded nodes and the bytes of the constants
/// they read, each use counted; past [`MAX_FOLDED_NODES`] or [`MAX_FOLDED_INPUT_BYTES`], or
/// when the file's [`HeldBudget`] runs out, nothing more is expanded, and the value is refused
/// naming the node where it ran out.
pub(crate) struct FoldBudget<'h> {
    nodes: std::cell::Cell<usize>,
    bytes: std::cell::Cell<u64>,
    /// What every folded value of the file holds together.
    held: &'h HeldBudget,
    /// Why it ran out: the node and what was exceeded (the first time).
    exceeded: std::cell::RefCell<Option<String>>,
}

impl<'h> FoldBudget<'h> {
    fn new(held: &'h HeldBudget) -> Self {
        Self {
            nodes: std::cell::Cell::new(0),
            bytes: std::cell::Cell::new(0),
            held,
            exceeded: std::cell::RefCell::new(None),
        }
    }

    fn exceed(&self, why: String) -> String {
        self.exceeded.borrow_mut().get_or_insert(why).clone()
    }

    /// Counts the folded `node` (and what its copy holds); an error once the budget is spent.
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
        self.held
            .take(node_held_bytes(node))
            .map_err(|why| self.exceed(why))
    }

    /// Counts the bytes of a constant read by a folded node (and what its copy holds).
    fn read(&self, value: WeightValue) -> Result<WeightValue, String> {
        self.held
            .take(value_held_bytes(&value))
            .map_err(|why| self.exceed(why))?;
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

/// What a copy of `value` holds in memory: the value, its shape, and its bytes (or an external
/// file's path; a computed value's node is counted when it is made).
fn value_held_bytes(value: &WeightValue) -> u64 {
    let data = match &value.data {
        WeightData::Bytes(bytes) => bytes.len(),
        WeightData::External { path, .. } => path.as_os_str().len(),
        WeightData::Computed(_) => 0,
    };
    (size_of::<WeightValue>() + value.shape.len() * size_of::<u64>() + data) as u64
}

/// What the folded copy of `node` holds in memory: the node, its names, a slot per input and
/// output (each output's shape counted when it is read), and its attributes.
fn node_held_bytes(node: &proto::NodeProto) -> u64 {
    let attributes: usize = node
        .attribute
        .iter()
        .map(|a| {
            size_of::<(String, crate::AttrValue)>()
                + a.name.len()
                + a.s.len()
                + a.ints.len() * size_of::<i64>()
                + a.floats.len() * size_of::<f32>()
                + a.strings
                    .iter()
                    .map(|s| size_of::<String>() + s.len())
                    .sum::<usize>()
        })
        .sum();
    let slots = node.input.len() * size_of::<Option<Result<WeightValue, String>>>()
        + node.output.len() * size_of::<Option<Result<crate::TensorType, String>>>();
    (size_of::<weights::FoldedNode>() + node.name.len() + node.op_type.len() + slots + attributes)
        as u64
}
