//! Build-time work instead of run-time work: the graph rewritten before it is planned, so the
//! generated code (and the `--heap` interpreter, which reads the same tables) runs fewer nodes
//! on fewer tensors.
//!
//! In order:
//!
//! 1. **BatchNormalization folded into the Conv before it** (when the Conv's output has no other
//!    reader and the normalization's parameters are constants): `w' = w s`, `b' = (b - mean) s +
//!    beta` per output channel with `s = scale / sqrt(var + epsilon)`, computed in `f64` and
//!    rounded once.
//! 2. **A constant `Add` after a MatMul** (a bias of one element per output column) becomes the
//!    MatMul's third input, added in the product's epilogue: `sum + bias[j]`, the bits of the two
//!    nodes.
//! 3. **An activation** (`Relu`, `Clip` with constant bounds, `HardSigmoid`, `HardSwish`,
//!    `LeakyRelu`, `Sigmoid`, SiLU as PyTorch exports it: `Sigmoid` then `Mul` by the input, and
//!    GELU as PyTorch exports it: `Div`, `Erf`, `Add`, `Mul`, `Mul`)
//!    after a Conv, Gemm or MatMul becomes the attributes `activation` and
//!    `activation_params` of that node ([`memplan_kernels`]' fused activations compute exactly
//!    the standalone kernels' functions).
//! 4. **Constant weights packed** into the panels the matrix product reads
//!    ([`memplan_kernels::pack`]): a Conv's weights (all but depthwise ones), a ConvTranspose's
//!    (with its `kernel_shape`), a MatMul's constant right matrix, a Gemm's constant `B` (with
//!    `transB` applied); the node gets `packed = 16`
//!    and the constant is stored packed in the weight blob, read in place. An `LSTM`'s, `GRU`'s
//!    or `RNN`'s `W` is packed for the input product and its `R` turned for the steps' row
//!    products ([`memplan_kernels::pack::recurrent_weights`], with `hidden_size` set).
//!
//! A fused-away node's output tensor is gone from the model, so the plan has fewer tensors; every
//! fusion requires that tensor to have no other reader and not be a graph output.

use crate::graph::{AttrValue, OpInput};
use memplan_core::{DType, Model};

use crate::graph::{Constant, FuseReport, Node};

/// The graph being rewritten: the model's tensors and ops, their ONNX shapes, the nodes (one per
/// op) and the constants.
struct Graph<'g> {
    model: &'g mut Model,
    shapes: &'g mut Vec<Vec<u64>>,
    nodes: Vec<Option<Node>>,
    constants: &'g mut Vec<Constant>,
    /// Tensors no longer in the graph.
    dead: Vec<bool>,
}

/// Rewrites the graph (see the module's docs); `shapes` are the model tensors' ONNX shapes.
pub(crate) fn fuse(
    model: &mut Model,
    shapes: &mut Vec<Vec<u64>>,
    nodes: &mut Vec<Node>,
    constants: &mut Vec<Constant>,
) -> FuseReport {
    let dead = vec![false; model.tensors.len()];
    let mut g = Graph {
        model,
        shapes,
        nodes: nodes.drain(..).map(Some).collect(),
        constants,
        dead,
    };
    let mut report = FuseReport::default();
    for k in 0..g.nodes.len() {
        if g.fold_batch_norm(k) {
            report.batch_norms += 1;
        }
    }
    for k in 0..g.nodes.len() {
        if g.fold_bias(k) {
            report.biases += 1;
        }
    }
    for k in 0..g.nodes.len() {
        if g.fuse_activation(k) {
            report.activations += 1;
        } else if g.fuse_erf_gelu(k) {
            report.activations += 5;
        } else if g.fuse_silu(k) {
            report.activations += 2;
        }
    }
    for k in 0..g.nodes.len() {
        if g.pack(k) || g.pack_recurrent(k) {
            report.packed += 1;
        }
    }
    *nodes = g.compact();
    report
}

/// `v` without the elements whose index is `dead`.
fn keep<T>(v: &mut Vec<T>, dead: &[bool]) {
    let mut t = 0;
    v.retain(|_| {
        t += 1;
        !dead[t - 1]
    });
}

/// A float32 constant's elements.
fn floats(c: &Constant) -> Option<Vec<f32>> {
    (c.dtype == DType::F32).then(|| {
        c.bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    })
}

fn to_bytes(xs: &[f32]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn attr<'a>(node: &'a Node, name: &str) -> Option<&'a AttrValue> {
    node.attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v)
}

fn int_attr(node: &Node, name: &str, default: i64) -> i64 {
    match attr(node, name) {
        Some(AttrValue::Int(i)) => *i,
        _ => default,
    }
}

fn float_attr(node: &Node, name: &str, default: f32) -> f32 {
    match attr(node, name) {
        Some(AttrValue::Float(x)) => *x,
        _ => default,
    }
}

/// Sets attribute `name` to `value`, replacing it if present.
fn set_attr(node: &mut Node, name: &str, value: AttrValue) {
    match node.attrs.iter_mut().find(|(n, _)| n == name) {
        Some((_, v)) => *v = value,
        None => node.attrs.push((name.to_owned(), value)),
    }
}

impl Graph<'_> {
    fn node(&self, k: usize) -> Option<&Node> {
        self.nodes.get(k).and_then(Option::as_ref)
    }

    /// The one node that reads tensor `t`, reading it once, when `t` is not a graph output.
    fn only_reader(&self, t: usize) -> Option<usize> {
        if self.model.outputs.contains(&t) {
            return None;
        }
        let mut found = None;
        for (k, node) in self.nodes.iter().enumerate() {
            let Some(node) = node else { continue };
            let uses = node
                .inputs
                .iter()
                .filter(|i| **i == OpInput::Tensor(t))
                .count();
            if uses == 0 {
                continue;
            }
            if uses > 1 || found.is_some() {
                return None;
            }
            found = Some(k);
        }
        found
    }

    /// The node after `k` that is the only reader of `k`'s only output.
    fn consumer(&self, k: usize) -> Option<(usize, usize)> {
        let node = self.node(k)?;
        let [t] = node.outputs[..] else {
            return None;
        };
        let j = self.only_reader(t)?;
        (j > k).then_some((j, t))
    }

    /// The constant at input `i` of node `k`.
    fn constant_at(&self, k: usize, i: usize) -> Option<usize> {
        match self.node(k)?.inputs.get(i)? {
            OpInput::Weight(w) => Some(*w),
            _ => None,
        }
    }

    fn constant_floats(&self, k: usize, i: usize) -> Option<Vec<f32>> {
        floats(&self.constants[self.constant_at(k, i)?])
    }

    /// Adds a float32 constant, returning its index.
    fn add_constant(&mut self, onnx: String, shape: Vec<u64>, xs: &[f32]) -> usize {
        self.constants.push(Constant {
            onnx,
            dtype: DType::F32,
            shape,
            bytes: to_bytes(xs),
        });
        self.constants.len() - 1
    }

    /// Node `j` (reading the tensor `t` that node `k` writes) removed: `k` writes `j`'s output
    /// instead, and `t` is gone.
    fn absorb(&mut self, k: usize, j: usize, t: usize) {
        let Some(consumer) = self.nodes[j].take() else {
            return;
        };
        if let Some(node) = self.nodes[k].as_mut() {
            node.outputs = consumer.outputs.clone();
            self.model.ops[k].outputs = consumer.outputs;
        }
        self.dead[t] = true;
    }

    /// 1. `Conv -> BatchNormalization` as one Conv.
    fn fold_batch_norm(&mut self, k: usize) -> bool {
        if self.node(k).is_none_or(|n| n.op_type != "Conv") {
            return false;
        }
        let Some((j, _)) = self.consumer(k) else {
            return false;
        };
        let Some(bn) = self.node(j) else { return false };
        if bn.op_type != "BatchNormalization"
            || bn.inputs.len() != 5
            || bn.outputs.len() != 1
            || int_attr(bn, "training_mode", 0) != 0
        {
            return false;
        }
        let eps = f64::from(float_attr(bn, "epsilon", 1e-5));
        let params: Option<Vec<Vec<f32>>> = (1..5).map(|i| self.constant_floats(j, i)).collect();
        let Some(params) = params else { return false };
        let Some(wi) = self.constant_at(k, 1) else {
            return false;
        };
        let Some(w) = floats(&self.constants[wi]) else {
            return false;
        };
        let w_shape = self.constants[wi].shape.clone();
        let m = w_shape.first().copied().unwrap_or(0) as usize;
        if m == 0 || w.len() % m != 0 || params.iter().any(|p| p.len() != m) {
            return false;
        }
        let conv = self.node(k).map_or(0, |n| n.inputs.len());
        let bias: Vec<f32> = match conv {
            2 => vec![0.0; m],
            3 => match self.constant_floats(k, 2) {
                Some(b) if b.len() == m => b,
                _ => return false,
            },
            _ => return false,
        };
        let (scale, beta, mean, var) = (&params[0], &params[1], &params[2], &params[3]);
        let per = w.len() / m;
        let mut w2 = vec![0.0f32; w.len()];
        let mut b2 = vec![0.0f32; m];
        for o in 0..m {
            let s = f64::from(scale[o]) / (f64::from(var[o]) + eps).sqrt();
            for (d, &x) in w2[o * per..][..per].iter_mut().zip(&w[o * per..][..per]) {
                *d = (f64::from(x) * s) as f32;
            }
            b2[o] = ((f64::from(bias[o]) - f64::from(mean[o])) * s + f64::from(beta[o])) as f32;
        }
        let onnx = self.constants[wi].onnx.clone();
        let new_w = self.add_constant(format!("{onnx} (BatchNormalization folded)"), w_shape, &w2);
        let new_b = self.add_constant(
            format!("{onnx} (bias, BatchNormalization folded)"),
            vec![m as u64],
            &b2,
        );
        let Some((_, t)) = self.consumer(k) else {
            return false;
        };
        if let Some(node) = self.nodes[k].as_mut() {
            node.inputs.truncate(1);
            node.inputs.push(OpInput::Weight(new_w));
            node.inputs.push(OpInput::Weight(new_b));
        }
        self.absorb(k, j, t);
        true
    }

    /// 2. `MatMul -> Add(constant bias)` as one MatMul with a bias.
    fn fold_bias(&mut self, k: usize) -> bool {
        let Some(node) = self.node(k) else {
            return false;
        };
        if node.op_type != "MatMul" || node.inputs.len() != 2 || attr(node, "activation").is_some()
        {
            return false;
        }
        let Some((j, t)) = self.consumer(k) else {
            return false;
        };
        let Some(add) = self.node(j) else {
            return false;
        };
        if add.op_type != "Add" || add.inputs.len() != 2 || add.outputs.len() != 1 {
            return false;
        }
        let c = match add.inputs[..] {
            [OpInput::Tensor(x), OpInput::Weight(c)] | [OpInput::Weight(c), OpInput::Tensor(x)]
                if x == t =>
            {
                c
            }
            _ => return false,
        };
        let y = add.outputs[0];
        let out = &self.shapes[t];
        let cs = &self.constants[c].shape;
        let n = out.last().copied().unwrap_or(0);
        // One element per output column, broadcast along every other dimension, the output's
        // shape unchanged.
        let per_column = cs.last() == Some(&n)
            && cs.iter().rev().skip(1).all(|&d| d == 1)
            && cs.len() <= out.len();
        if self.constants[c].dtype != DType::F32 || !per_column || self.shapes[y] != *out {
            return false;
        }
        if let Some(node) = self.nodes[k].as_mut() {
            node.inputs.push(OpInput::Weight(c));
        }
        self.absorb(k, j, t);
        true
    }

    /// 3. `Conv | Gemm | MatMul -> activation` as one node.
    fn fuse_activation(&mut self, k: usize) -> bool {
        let Some(node) = self.node(k) else {
            return false;
        };
        if !matches!(node.op_type.as_str(), "Conv" | "Gemm" | "MatMul")
            || attr(node, "activation").is_some()
        {
            return false;
        }
        let Some((j, t)) = self.consumer(k) else {
            return false;
        };
        let Some(act) = self.node(j) else {
            return false;
        };
        if act.outputs.len() != 1 || act.inputs.first() != Some(&OpInput::Tensor(t)) {
            return false;
        }
        let scalar = |i: usize| -> Option<Option<f32>> {
            match act.inputs.get(i) {
                None | Some(OpInput::Absent) => Some(None),
                Some(OpInput::Weight(w)) => match floats(&self.constants[*w])?[..] {
                    [x] => Some(Some(x)),
                    _ => None,
                },
                Some(OpInput::Tensor(_)) => None,
            }
        };
        let params: Vec<f32> = match (act.op_type.as_str(), act.inputs.len()) {
            ("Relu" | "HardSwish" | "Sigmoid", 1) => Vec::new(),
            ("LeakyRelu", 1) => vec![float_attr(act, "alpha", 0.01)],
            ("HardSigmoid", 1) => vec![float_attr(act, "alpha", 0.2), float_attr(act, "beta", 0.5)],
            ("Clip", 1..=3) => {
                let (Some(lo), Some(hi)) = (scalar(1), scalar(2)) else {
                    return false;
                };
                vec![
                    lo.unwrap_or_else(|| float_attr(act, "min", f32::MIN)),
                    hi.unwrap_or_else(|| float_attr(act, "max", f32::MAX)),
                ]
            }
            _ => return false,
        };
        let name = act.op_type.clone();
        if let Some(node) = self.nodes[k].as_mut() {
            node.attrs
                .push(("activation".to_owned(), AttrValue::Str(name)));
            if !params.is_empty() {
                node.attrs
                    .push(("activation_params".to_owned(), AttrValue::Floats(params)));
            }
        }
        self.absorb(k, j, t);
        true
    }

    /// The output of node `k` that an activation of several nodes after it may fuse into: `k`
    /// a Conv, Gemm or MatMul with no fused activation yet, of one output that is not a graph
    /// output.
    fn fusable_output(&self, k: usize) -> Option<usize> {
        let node = self.node(k)?;
        if !matches!(node.op_type.as_str(), "Conv" | "Gemm" | "MatMul")
            || attr(node, "activation").is_some()
        {
            return None;
        }
        let [x] = node.outputs[..] else {
            return None;
        };
        (!self.model.outputs.contains(&x)).then_some(x)
    }

    /// Whether node `j` is an `op` of `inputs` inputs and one output.
    fn is_op(&self, j: usize, op: &str, inputs: usize) -> bool {
        self.node(j)
            .is_some_and(|n| n.op_type == op && n.inputs.len() == inputs && n.outputs.len() == 1)
    }

    /// The nodes that read tensor `t`, in order.
    fn readers(&self, t: usize) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&j| {
                self.node(j)
                    .is_some_and(|n| n.inputs.contains(&OpInput::Tensor(t)))
            })
            .collect()
    }

    /// 3b. `Conv | Gemm | MatMul` followed by GELU as PyTorch exports it, five nodes on its
    /// output `x`: `Div(x, c1) -> Erf -> Add(·, c2) -> Mul(x, ·) -> Mul(·, c3)` (constant
    /// scalars; either operand order of the commutative ones), as one node with the fused
    /// activation `ErfGelu [c1, c2, c3]` ([`memplan_kernels`]' activation computes the five
    /// kernels' bits in their order). `x` and the four tensors between the nodes must have no
    /// other reader.
    fn fuse_erf_gelu(&mut self, k: usize) -> bool {
        self.erf_gelu(k).is_some()
    }

    fn erf_gelu(&mut self, k: usize) -> Option<()> {
        let x = self.fusable_output(k)?;
        let is = |j: usize, op: &str, inputs: usize| self.is_op(j, op, inputs);
        // A constant scalar at input `i` of node `j`.
        let scalar = |j: usize, i: usize| -> Option<f32> {
            match floats(&self.constants[self.constant_at(j, i)?])?[..] {
                [v] => Some(v),
                _ => None,
            }
        };
        // The other input of a two-input node `j` that reads tensor `t`.
        let other = |j: usize, t: usize| -> Option<usize> {
            match self.node(j)?.inputs[..] {
                [OpInput::Tensor(a), _] if a == t => Some(1),
                [_, OpInput::Tensor(b)] if b == t => Some(0),
                _ => None,
            }
        };
        // `x` read by exactly a Div (as its dividend) and a Mul, once each.
        let readers = self.readers(x);
        let div = *readers.iter().find(|&&j| is(j, "Div", 2))?;
        let mul = *readers.iter().find(|&&j| is(j, "Mul", 2))?;
        if readers.len() != 2 || other(div, x)? != 1 {
            return None;
        }
        let divisor = scalar(div, 1)?;
        let (erf, d) = self.consumer(div)?;
        if !is(erf, "Erf", 1) {
            return None;
        }
        let (add, e) = self.consumer(erf)?;
        if !is(add, "Add", 2) {
            return None;
        }
        let addend = scalar(add, other(add, e)?)?;
        let (mul_again, a) = self.consumer(add)?;
        if mul_again != mul || self.node(mul)?.inputs[other(mul, a)?] != OpInput::Tensor(x) {
            return None;
        }
        let (last, m) = self.consumer(mul)?;
        if !is(last, "Mul", 2) {
            return None;
        }
        let scale = scalar(last, other(last, m)?)?;
        let y = *self.node(last)?.outputs.first()?;
        if self.shapes[y] != self.shapes[x] {
            return None;
        }
        for j in [div, erf, add, mul, last] {
            self.nodes[j] = None;
        }
        for t in [x, d, e, a, m] {
            self.dead[t] = true;
        }
        let node = self.nodes[k].as_mut()?;
        node.attrs.push((
            "activation".to_owned(),
            AttrValue::Str("ErfGelu".to_owned()),
        ));
        node.attrs.push((
            "activation_params".to_owned(),
            AttrValue::Floats(vec![divisor, addend, scale]),
        ));
        node.outputs = vec![y];
        self.model.ops[k].outputs = vec![y];
        Some(())
    }

    /// 3c. `Conv | Gemm | MatMul` followed by SiLU (Swish) as PyTorch exports it, two nodes on
    /// its output `x`: `Sigmoid(x) -> Mul(x, ·)` (either operand order), as one node with the
    /// fused activation `Silu` ([`memplan_kernels`]' activation computes the two kernels' bits).
    /// `x` must be read by those two nodes only (the Mul once), the Sigmoid's output by the Mul
    /// only.
    fn fuse_silu(&mut self, k: usize) -> bool {
        self.silu(k).is_some()
    }

    fn silu(&mut self, k: usize) -> Option<()> {
        let x = self.fusable_output(k)?;
        let is = |j: usize, op: &str, inputs: usize| self.is_op(j, op, inputs);
        let [first, second] = self.readers(x)[..] else {
            return None;
        };
        let (sigmoid, mul) = if is(first, "Sigmoid", 1) {
            (first, second)
        } else {
            (second, first)
        };
        if !is(sigmoid, "Sigmoid", 1) || !is(mul, "Mul", 2) {
            return None;
        }
        let (after, s) = self.consumer(sigmoid)?;
        let operands = &self.node(mul)?.inputs;
        let by_input = [OpInput::Tensor(x), OpInput::Tensor(s)];
        let by_input_swapped = [OpInput::Tensor(s), OpInput::Tensor(x)];
        if after != mul || (operands[..] != by_input && operands[..] != by_input_swapped) {
            return None;
        }
        let y = *self.node(mul)?.outputs.first()?;
        if self.shapes[y] != self.shapes[x] {
            return None;
        }
        for j in [sigmoid, mul] {
            self.nodes[j] = None;
        }
        for t in [x, s] {
            self.dead[t] = true;
        }
        let node = self.nodes[k].as_mut()?;
        node.attrs
            .push(("activation".to_owned(), AttrValue::Str("Silu".to_owned())));
        node.outputs = vec![y];
        self.model.ops[k].outputs = vec![y];
        Some(())
    }

    /// 4. A constant weight of node `k` packed into panels.
    fn pack(&mut self, k: usize) -> bool {
        let Some(node) = self.node(k) else {
            return false;
        };
        if int_attr(node, "packed", 0) != 0 {
            return false;
        }
        let Some(wi) = self.constant_at(k, 1) else {
            return false;
        };
        let Some(w) = floats(&self.constants[wi]) else {
            return false;
        };
        let shape: Vec<usize> = self.constants[wi]
            .shape
            .iter()
            .map(|&d| d as usize)
            .collect();
        let onnx = format!("{} (packed)", self.constants[wi].onnx);
        let (packed, packed_shape, kernel_shape, untranspose) = match node.op_type.as_str() {
            "Conv" => {
                let group = int_attr(node, "group", 1);
                let Ok(g) = usize::try_from(group) else {
                    return false;
                };
                let c = match node.inputs.first() {
                    Some(OpInput::Tensor(x)) => self.shapes[*x].get(1).copied().unwrap_or(0),
                    _ => return false,
                };
                // Depthwise Convs read their weights unpacked.
                if (g > 1 && g as u64 == c) || shape.len() < 3 {
                    return false;
                }
                let Some(ps) = memplan_kernels::pack::conv_weights_shape(&shape, g) else {
                    return false;
                };
                let mut out = vec![0.0f32; ps.iter().product()];
                if memplan_kernels::pack::conv_weights(&w, &shape, g, &mut out).is_err() {
                    return false;
                }
                let ks: Vec<i64> = shape[2..].iter().map(|&d| d as i64).collect();
                (out, ps.to_vec(), Some(ks), false)
            }
            "ConvTranspose" => {
                let Ok(g) = usize::try_from(int_attr(node, "group", 1)) else {
                    return false;
                };
                let Some(ps) = memplan_kernels::pack::conv_transpose_weights_shape(&shape, g)
                else {
                    return false;
                };
                let mut out = vec![0.0f32; ps.iter().product()];
                if memplan_kernels::pack::conv_transpose_weights(&w, &shape, g, &mut out).is_err() {
                    return false;
                }
                let ks: Vec<i64> = shape[2..].iter().map(|&d| d as i64).collect();
                (out, ps.to_vec(), Some(ks), false)
            }
            "MatMul" | "Gemm" => {
                let gemm = node.op_type == "Gemm";
                if shape.len() != 2 || (gemm && int_attr(node, "transA", 0) != 0) {
                    return false;
                }
                let trans = gemm && int_attr(node, "transB", 0) != 0;
                let (kk, n) = if trans {
                    (shape[1], shape[0])
                } else {
                    (shape[0], shape[1])
                };
                let Some(ps) = memplan_kernels::pack::matrix_shape(kk, n) else {
                    return false;
                };
                let mut out = vec![0.0f32; ps.iter().product()];
                if memplan_kernels::pack::matrix(&w, kk, n, trans, &mut out).is_err() {
                    return false;
                }
                (out, ps.to_vec(), None, trans)
            }
            _ => return false,
        };
        let shape = packed_shape.iter().map(|&d| d as u64).collect();
        let c = self.add_constant(onnx, shape, &packed);
        let Some(node) = self.nodes[k].as_mut() else {
            return false;
        };
        node.inputs[1] = OpInput::Weight(c);
        set_attr(
            node,
            "packed",
            AttrValue::Int(memplan_kernels::pack::PANEL as i64),
        );
        if let Some(ks) = kernel_shape {
            set_attr(node, "kernel_shape", AttrValue::Ints(ks));
        }
        if untranspose {
            set_attr(node, "transB", AttrValue::Int(0));
        }
        true
    }

    /// Step 4 for a recurrent node: its constant `W` and `R` packed, `W` into the panels of
    /// the whole sequence's input product, `R` turned for the steps' row products.
    fn pack_recurrent(&mut self, k: usize) -> bool {
        let Some(node) = self.node(k) else {
            return false;
        };
        if !matches!(node.op_type.as_str(), "LSTM" | "GRU" | "RNN")
            || int_attr(node, "packed", 0) != 0
        {
            return false;
        }
        let (Some(wi), Some(ri)) = (self.constant_at(k, 1), self.constant_at(k, 2)) else {
            return false;
        };
        let (Some(w), Some(r)) = (floats(&self.constants[wi]), floats(&self.constants[ri])) else {
            return false;
        };
        let dims = |c: &Constant| -> Vec<usize> { c.shape.iter().map(|&d| d as usize).collect() };
        let (w_shape, r_shape) = (dims(&self.constants[wi]), dims(&self.constants[ri]));
        let Some((pw, pr)) = memplan_kernels::pack::recurrent_weights_shape(&w_shape, &r_shape)
        else {
            return false;
        };
        let hidden = r_shape[2] as i64;
        if int_attr(node, "hidden_size", hidden) != hidden {
            return false;
        }
        let mut w_out = vec![0.0f32; pw.iter().product()];
        let mut r_out = vec![0.0f32; pr.iter().product()];
        if memplan_kernels::pack::recurrent_weights(
            &w, &w_shape, &r, &r_shape, &mut w_out, &mut r_out,
        )
        .is_err()
        {
            return false;
        }
        let (w_name, r_name) = (
            format!("{} (packed)", self.constants[wi].onnx),
            format!("{} (turned)", self.constants[ri].onnx),
        );
        let to_u64 = |s: &[usize]| s.iter().map(|&d| d as u64).collect::<Vec<u64>>();
        let wc = self.add_constant(w_name, to_u64(&pw), &w_out);
        let rc = self.add_constant(r_name, to_u64(&pr), &r_out);
        let Some(node) = self.nodes[k].as_mut() else {
            return false;
        };
        node.inputs[1] = OpInput::Weight(wc);
        node.inputs[2] = OpInput::Weight(rc);
        set_attr(node, "hidden_size", AttrValue::Int(hidden));
        set_attr(
            node,
            "packed",
            AttrValue::Int(memplan_kernels::pack::PANEL as i64),
        );
        true
    }

    /// The nodes left, the model's ops and tensors without the fused-away ones, and the
    /// constants without the unused ones, every index renumbered.
    fn compact(&mut self) -> Vec<Node> {
        // Tensors.
        let mut new_index = vec![usize::MAX; self.dead.len()];
        let mut next = 0;
        for (t, &dead) in self.dead.iter().enumerate() {
            if !dead {
                new_index[t] = next;
                next += 1;
            }
        }
        keep(&mut self.model.tensors, &self.dead);
        keep(self.shapes, &self.dead);
        let remap = |t: &mut usize| *t = new_index[*t];
        // Ops and nodes.
        let mut ops = Vec::new();
        let mut nodes = Vec::new();
        for (op, node) in std::mem::take(&mut self.model.ops)
            .into_iter()
            .zip(self.nodes.drain(..))
        {
            if let Some(node) = node {
                ops.push(op);
                nodes.push(node);
            }
        }
        for op in &mut ops {
            op.inputs.iter_mut().for_each(remap);
            for input in &mut op.all_inputs {
                if let memplan_core::OpInput::Tensor(t) = input {
                    remap(t);
                }
            }
            op.outputs.iter_mut().for_each(remap);
            op.scratch.iter_mut().for_each(remap);
        }
        self.model.ops = ops;
        self.model.inputs.iter_mut().for_each(remap);
        self.model.outputs.iter_mut().for_each(remap);
        // Constants still read, in order of first use.
        let mut constant_index = vec![usize::MAX; self.constants.len()];
        let mut order = Vec::new();
        for node in &mut nodes {
            for input in &mut node.inputs {
                match input {
                    OpInput::Tensor(t) => remap(t),
                    OpInput::Weight(w) => {
                        if constant_index[*w] == usize::MAX {
                            constant_index[*w] = order.len();
                            order.push(*w);
                        }
                        *w = constant_index[*w];
                    }
                    OpInput::Absent => {}
                }
            }
            node.outputs.iter_mut().for_each(remap);
        }
        let mut old: Vec<Option<Constant>> = self.constants.drain(..).map(Some).collect();
        for w in order {
            if let Some(c) = old[w].take() {
                self.constants.push(c);
            }
        }
        nodes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_bytes_round_trip() {
        let xs = [1.5f32, -0.0, f32::MIN_POSITIVE];
        let c = Constant {
            onnx: "c".to_owned(),
            dtype: DType::F32,
            shape: vec![3],
            bytes: to_bytes(&xs),
        };
        assert_eq!(floats(&c).unwrap(), xs);
    }
}
