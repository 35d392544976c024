//! The recurrent layers `LSTM`, `GRU` and `RNN`: a state vector carried along a sequence, each
//! step's gates computed from the step's input and the previous state.
//!
//! ONNX writes each gate as `act(X_t W^T + H_(t-1) R^T + Wb + Rb)`, gates stacked along the
//! rows of `W` (`[directions, gates * hidden, input]`) and `R` (`[directions, gates * hidden,
//! hidden]`): `i, o, f, c` for LSTM, `z, r, h` for GRU, one for RNN. The input part does not
//! depend on the state, so it is one matrix product for the whole sequence (every step and batch
//! row at once, [`crate::gemm`], the biases added as it is stored); only the recurrent part runs
//! step by step, one row of the state times `R^T` ([`crate::matmul`]'s row product, its sums in
//! registers), dispatched to AVX2 or AVX-512 with the gates' functions. memplan-build packs `W`
//! and turns `R` at build time (`packed = 16`, [`crate::pack::recurrent_weights`]); plain
//! weights are packed a panel at a time and `R` turned into the scratch once per direction.
//! Then the gates' activations and the state update, elementwise:
//!
//! - LSTM: `i = f(.. + P_i c)`, `f = f(.. + P_f c)`, `c' = f c + i g(..)`, `o = f(.. + P_o c')`,
//!   `h' = o h(c')` (peepholes `P` optional);
//! - GRU: `z = f(..)`, `r = f(..)`, `h~ = g(X W_h + (r H) R_h^T + Rb_h + Wb_h)`, or with
//!   `linear_before_reset` `g(X W_h + r (H R_h^T + Rb_h) + Wb_h)`; `h' = (1 - z) h~ + z H`;
//! - RNN: `h' = f(..)`.
//!
//! `direction` `forward`, `reverse` (the sequence read from its end) or `bidirectional` (both,
//! each its own weights, their outputs side by side); `layout` 0 (`[seq, batch, ..]`) or 1
//! (`[batch, seq, ..]`); `sequence_lens` (a batch row's steps past its length give zeros in `Y`
//! and leave its state alone, so `Y_h` is its last real state); `clip` (bounds every gate's
//! input); `activations` with `activation_alpha` and `activation_beta` (each function that takes
//! an alpha or a beta consumes the next of the list, with ONNX Runtime's values when the list
//! runs out: [`NAMES`]). A batch row of no steps gives zeros in `Y` and in the last states, as
//! ONNX Runtime does (not its initial state). The optional outputs `Y_h` (and `Y_c`) are the
//! last states. `input_forget` is not supported.
//!
//! The scratch holds the input product of one direction (`seq * batch * gates * hidden`
//! floats), `R^T` and a panel unless packed, one step's gates, the states and the biases
//! ([`scratch_len`]).

use crate::activation;
use crate::attrs::Attrs;
use crate::error::{KernelError, bail};
use crate::fast_math;
use crate::gemm::{self, A, B, Bias, Product, Transposed};
use crate::matmul::row_times_with;
use crate::simd::{MulAdd, ScalarFma, dispatch};
use crate::tensor::{Data, Dims, Input, Output, collect, expect_shape, opt_value, output, typed};

/// The kind of recurrent cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cell {
    Rnn,
    Gru,
    Lstm,
}

impl Cell {
    /// The ONNX operator's cell.
    pub(crate) fn of(op: &str) -> Option<Cell> {
        match op {
            "RNN" => Some(Cell::Rnn),
            "GRU" => Some(Cell::Gru),
            "LSTM" => Some(Cell::Lstm),
            _ => None,
        }
    }

    /// Gates per hidden unit (rows of `W` per hidden unit).
    fn gates(self) -> usize {
        match self {
            Cell::Rnn => 1,
            Cell::Gru => 3,
            Cell::Lstm => 4,
        }
    }

    /// Activation functions per direction, and their defaults.
    fn default_functions(self) -> &'static [Function] {
        match self {
            Cell::Rnn => &[Function::Tanh],
            Cell::Gru => &[Function::Sigmoid, Function::Tanh],
            Cell::Lstm => &[Function::Sigmoid, Function::Tanh, Function::Tanh],
        }
    }

    fn name(self) -> &'static str {
        match self {
            Cell::Rnn => "RNN",
            Cell::Gru => "GRU",
            Cell::Lstm => "LSTM",
        }
    }
}

/// One of the activation functions ONNX's recurrent operators name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Function {
    Sigmoid,
    Tanh,
    Relu,
    /// `alpha x + beta`.
    Affine(f32, f32),
    /// `x < 0 ? alpha x : x`.
    LeakyRelu(f32),
    /// `x > alpha ? x : 0`.
    ThresholdedRelu(f32),
    /// `alpha tanh(beta x)`.
    ScaledTanh(f32, f32),
    /// `clamp(alpha x + beta, 0, 1)`.
    HardSigmoid(f32, f32),
    /// `x >= 0 ? x : alpha (e^x - 1)`.
    Elu(f32),
    /// `x / (1 + |x|)`.
    Softsign,
    /// `ln(1 + e^x)`, without overflow for large `x` (the `Softplus` kernel's).
    Softplus,
}

/// The functions by name: whether each takes an alpha and a beta, and the value it gets when
/// the lists run out, as ONNX Runtime reads them: LeakyRelu 0.01, HardSigmoid 0.2 and 0.5, Elu
/// 1, and 0 for the others (Affine, ThresholdedRelu, ScaledTanh; not their operators' own
/// defaults).
const NAMES: &[(&str, Option<f32>, Option<f32>)] = &[
    ("sigmoid", None, None),
    ("tanh", None, None),
    ("relu", None, None),
    ("affine", Some(0.0), Some(0.0)),
    ("leakyrelu", Some(0.01), None),
    ("thresholdedrelu", Some(0.0), None),
    ("scaledtanh", Some(0.0), Some(0.0)),
    ("hardsigmoid", Some(0.2), Some(0.5)),
    ("elu", Some(1.0), None),
    ("softsign", None, None),
    ("softplus", None, None),
];

impl Function {
    /// The function `name` (any case), its alpha and beta the next of `alphas` and `betas`
    /// when it takes them.
    fn parse(
        name: &str,
        alphas: &mut core::slice::Iter<'_, f32>,
        betas: &mut core::slice::Iter<'_, f32>,
    ) -> Result<Function, KernelError> {
        let Some(&(known, alpha, beta)) = NAMES.iter().find(|(n, ..)| n.eq_ignore_ascii_case(name))
        else {
            bail!(
                "activation function {name:?} is not supported (Sigmoid, Tanh, Relu, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus)"
            );
        };
        let a = alpha.map(|d| alphas.next().copied().unwrap_or(d));
        let b = beta.map(|d| betas.next().copied().unwrap_or(d));
        let (a, b) = (a.unwrap_or(0.0), b.unwrap_or(0.0));
        Ok(match known {
            "sigmoid" => Function::Sigmoid,
            "tanh" => Function::Tanh,
            "relu" => Function::Relu,
            "affine" => Function::Affine(a, b),
            "leakyrelu" => Function::LeakyRelu(a),
            "thresholdedrelu" => Function::ThresholdedRelu(a),
            "scaledtanh" => Function::ScaledTanh(a, b),
            "hardsigmoid" => Function::HardSigmoid(a, b),
            "elu" => Function::Elu(a),
            "softsign" => Function::Softsign,
            _ => Function::Softplus,
        })
    }

    /// The function on every element of `xs`, after bounding each to `[-clip, clip]`. Plain
    /// loops (inlined into the caller's vector build), no closures: a closure left out of line
    /// is built for the baseline.
    #[inline(always)]
    fn apply(self, xs: &mut [f32], clip: Option<f32>) {
        if let Some(c) = clip {
            for x in xs.iter_mut() {
                *x = x.clamp(-c, c);
            }
        }
        match self {
            Function::Sigmoid => {
                for x in xs {
                    *x = fast_math::logistic(*x);
                }
            }
            Function::Tanh => {
                for x in xs {
                    *x = fast_math::tanh(*x);
                }
            }
            Function::Relu => {
                for x in xs {
                    *x = activation::relu(*x);
                }
            }
            Function::Affine(a, b) => {
                for x in xs {
                    *x = a * *x + b;
                }
            }
            Function::LeakyRelu(a) => {
                for x in xs {
                    *x = activation::leaky_relu(*x, a);
                }
            }
            Function::ThresholdedRelu(a) => {
                for x in xs {
                    *x = if *x > a { *x } else { 0.0 };
                }
            }
            Function::ScaledTanh(a, b) => {
                for x in xs {
                    *x = a * fast_math::tanh(b * *x);
                }
            }
            Function::HardSigmoid(a, b) => {
                for x in xs {
                    *x = activation::hard_sigmoid(*x, a, b);
                }
            }
            Function::Elu(a) => {
                for x in xs {
                    if *x < 0.0 {
                        *x = a * (fast_math::exp(*x) - 1.0);
                    }
                }
            }
            Function::Softsign => {
                for x in xs {
                    *x /= 1.0 + x.abs();
                }
            }
            Function::Softplus => {
                for x in xs {
                    *x = crate::unary::softplus(*x);
                }
            }
        }
    }
}

/// A recurrent node's attributes and shapes.
struct Layer {
    cell: Cell,
    /// Steps, batch rows, input features, hidden units, directions.
    seq: usize,
    batch: usize,
    input: usize,
    hidden: usize,
    dirs: usize,
    /// The last direction is the reverse one (`reverse` or `bidirectional`).
    reverse_last: bool,
    /// `[seq, batch, ..]` (false) or `[batch, seq, ..]` (true).
    batch_first: bool,
    clip: Option<f32>,
    linear_before_reset: bool,
    /// `W` and `R` packed at build time ([`crate::pack::recurrent_weights`]).
    packed: bool,
    /// Each direction's functions (`f`, `g`, `h`; the cell's count used).
    functions: [[Function; 3]; 2],
}

impl Layer {
    /// The layer of a node with these attributes, input `X` of `x_shape` and `R` of `r_shape`
    /// (where `hidden_size` is absent, the units are `R`'s last dimension).
    fn of(
        cell: Cell,
        attrs: &Attrs<'_>,
        x_shape: &[usize],
        r_shape: Option<&[usize]>,
    ) -> Result<Layer, KernelError> {
        let packed = crate::pack::is_packed(attrs)?;
        // `R` is `[dirs, width, hidden]`, packed `[dirs, hidden, width]`.
        let from_r = r_shape
            .and_then(|r| if packed { r.get(1) } else { r.get(2) })
            .map_or(-1, |&h| h as i64);
        let hidden = attrs.int("hidden_size", from_r)?;
        let direction = attrs.str("direction", "forward")?;
        let (dirs, reverse_last) = match direction {
            "forward" => (1, false),
            "reverse" => (1, true),
            "bidirectional" => (2, true),
            other => bail!("direction {other:?} is not forward, reverse or bidirectional"),
        };
        let batch_first = match attrs.int("layout", 0)? {
            0 => false,
            1 => true,
            other => bail!("layout = {other} is not 0 or 1"),
        };
        if attrs.int("input_forget", 0)? != 0 {
            bail!("input_forget = 1 (coupled input and forget gates) is not supported");
        }
        let Ok(hidden) = usize::try_from(hidden) else {
            bail!("hidden_size {hidden} is negative");
        };
        if hidden.checked_mul(cell.gates()).is_none() {
            bail!("hidden_size {hidden} overflows the gate rows");
        }
        let &[a, b, input] = x_shape else {
            bail!("input X has shape {x_shape:?}, expected rank 3");
        };
        let (seq, batch) = if batch_first { (b, a) } else { (a, b) };
        let clip = attrs.opt_float("clip")?;
        if let Some(c) = clip
            && (c.is_nan() || c <= 0.0)
        {
            bail!("clip = {c} must be positive");
        }
        let per = cell.default_functions();
        let mut functions = [[Function::Sigmoid; 3]; 2];
        match attrs.strs("activations")? {
            None => {
                for f in &mut functions {
                    f[..per.len()].copy_from_slice(per);
                }
            }
            Some(names) => {
                if names.len() != per.len() * dirs {
                    bail!(
                        "activations has {} functions, {} takes {} per direction ({} for {dirs} direction(s))",
                        names.len(),
                        cell.name(),
                        per.len(),
                        per.len() * dirs
                    );
                }
                let alphas = attrs.floats("activation_alpha")?.unwrap_or(&[]);
                let betas = attrs.floats("activation_beta")?.unwrap_or(&[]);
                let (mut alphas, mut betas) = (alphas.iter(), betas.iter());
                for (i, name) in names.iter().enumerate() {
                    functions[i / per.len()][i % per.len()] =
                        Function::parse(name, &mut alphas, &mut betas)?;
                }
            }
        }
        Ok(Layer {
            cell,
            seq,
            batch,
            input,
            hidden,
            dirs,
            reverse_last,
            batch_first,
            clip,
            linear_before_reset: attrs.int("linear_before_reset", 0)? != 0,
            packed,
            functions,
        })
    }

    /// Gate rows: `gates * hidden`.
    fn width(&self) -> usize {
        self.cell.gates() * self.hidden
    }

    /// The row of `X` (and of the input product) of step `t`, batch row `b`.
    fn row(&self, t: usize, b: usize) -> usize {
        if self.batch_first {
            b * self.seq + t
        } else {
            t * self.batch + b
        }
    }

    /// Where `Y`'s vector of step `t`, direction `d`, batch row `b` starts.
    fn y_at(&self, t: usize, d: usize, b: usize) -> usize {
        let h = self.hidden;
        if self.batch_first {
            ((b * self.seq + t) * self.dirs + d) * h
        } else {
            ((t * self.dirs + d) * self.batch + b) * h
        }
    }

    /// Where a last state's (and an initial state's) vector of direction `d`, row `b` starts.
    fn state_at(&self, d: usize, b: usize) -> usize {
        let h = self.hidden;
        if self.batch_first {
            (b * self.dirs + d) * h
        } else {
            (d * self.batch + b) * h
        }
    }

    /// The shapes of `Y` and of the last states.
    fn output_shapes(&self) -> ([usize; 4], [usize; 3]) {
        let (s, b, d, h) = (self.seq, self.batch, self.dirs, self.hidden);
        if self.batch_first {
            ([b, s, d, h], [b, d, h])
        } else {
            ([s, d, b, h], [d, b, h])
        }
    }

    /// Scratch floats, in the order [`run`] cuts them: the input product's panel (in words of
    /// two floats), the input product, `R^T`, a step's gates, the state `h` and the LSTM's `c`,
    /// the biases, GRU's `r H`.
    fn scratch_floats(&self) -> Option<[usize; 7]> {
        let (w, h, bt) = (self.width(), self.hidden, self.batch);
        // Packed weights need neither a panel nor `R^T` of their own.
        let unpacked = usize::from(!self.packed);
        let panel = gemm::scratch_words(self.input, true).checked_mul(2 * unpacked)?;
        let product = self.seq.checked_mul(bt)?.checked_mul(w)?;
        let turned = h.checked_mul(w)?.checked_mul(unpacked)?;
        let gates = bt.checked_mul(w)?;
        let states = bt.checked_mul(h)?.checked_mul(2)?;
        let biases = w.checked_add(h)?;
        let reset = bt.checked_mul(h)?;
        Some([panel, product, turned, gates, states, biases, reset])
    }

    /// All of [`Layer::scratch_floats`], or `None` when it does not fit in memory.
    fn scratch_total(&self) -> Option<usize> {
        self.scratch_floats()?
            .iter()
            .try_fold(0usize, |a, &p| a.checked_add(p))
    }
}

/// Scratch words (`u64`) of a recurrent node, from its attributes and the shape of `X`.
pub(crate) fn scratch_len(
    cell: Cell,
    attrs: &Attrs<'_>,
    input_shapes: &[Option<&[usize]>],
) -> Result<usize, KernelError> {
    let Some(Some(x)) = input_shapes.first() else {
        return Ok(0);
    };
    let layer = Layer::of(cell, attrs, x, input_shapes.get(2).copied().flatten())?;
    let Some(floats) = layer.scratch_total() else {
        bail!("the recurrent layer's scratch does not fit in memory");
    };
    Ok(floats.div_ceil(2))
}

/// An optional float input `i` of `shape`, or `None` when absent.
fn optional<'a>(
    inputs: &[Input<'a>],
    i: usize,
    shape: &[usize],
    what: &str,
) -> Result<Option<&'a [f32]>, KernelError> {
    if opt_value(inputs, i)?.is_none() {
        return Ok(None);
    }
    let (s, v) = typed::<f32>(inputs, i)?;
    if s != shape {
        bail!("{what} has shape {s:?}, expected {shape:?}");
    }
    Ok(Some(v))
}

/// Runs an `LSTM`, `GRU` or `RNN` node.
pub(crate) fn run(
    cell: Cell,
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    let (xs, x) = typed::<f32>(inputs, 0)?;
    let (rs, r) = typed::<f32>(inputs, 2)?;
    let layer = Layer::of(cell, attrs, xs, Some(rs))?;
    let (seq, batch, input, hidden, dirs) = (
        layer.seq,
        layer.batch,
        layer.input,
        layer.hidden,
        layer.dirs,
    );
    let width = layer.width();
    let (ws, w) = typed::<f32>(inputs, 1)?;
    let (want_w, want_r): (Dims, Dims) = if layer.packed {
        let Some((pw, pr)) =
            crate::pack::recurrent_weights_shape(&[dirs, width, input], &[dirs, width, hidden])
        else {
            bail!("the packed weights of {dirs} x {width} gate rows do not fit in memory");
        };
        (collect(pw)?, collect(pr)?)
    } else {
        (
            collect([dirs, width, input])?,
            collect([dirs, width, hidden])?,
        )
    };
    if ws != &want_w[..] {
        bail!("W has shape {ws:?}, expected {want_w:?}");
    }
    if rs != &want_r[..] {
        bail!("R has shape {rs:?}, expected {want_r:?}");
    }
    let biases = optional(inputs, 3, &[dirs, 2 * width], "B")?;
    let lengths = match opt_value(inputs, 4)? {
        None => None,
        Some((s, data @ (Data::I32(_) | Data::I64(_)))) if s == [batch] => Some(data),
        Some((s, data)) => bail!(
            "sequence_lens is {} {s:?}, expected int32 or int64 [{batch}]",
            data.dtype().name()
        ),
    };
    // Each batch row's steps (`seq` without `sequence_lens`).
    let steps = |b: usize| -> i64 {
        match lengths {
            Some(Data::I32(v)) => i64::from(v[b]),
            Some(Data::I64(v)) => v[b],
            _ => seq as i64,
        }
    };
    // (Without `sequence_lens`, `batch` need not be bounded by anything in memory yet.)
    if lengths.is_some()
        && let Some(len) = (0..batch).map(steps).find(|&n| n < 0 || n > seq as i64)
    {
        bail!("a sequence length is {len}, outside 0..={seq}");
    }
    let (y_shape, state_shape) = layer.output_shapes();
    let initial_h = optional(inputs, 5, &state_shape, "initial_h")?;
    let (initial_c, peepholes) = if cell == Cell::Lstm {
        (
            optional(inputs, 6, &state_shape, "initial_c")?,
            optional(inputs, 7, &[dirs, 3 * hidden], "P")?,
        )
    } else {
        (None, None)
    };
    let wanted = if cell == Cell::Lstm { 3 } else { 2 };
    if outputs.len() > wanted {
        bail!("{} has at most {wanted} outputs", cell.name());
    }
    for (o, out) in outputs.iter().enumerate() {
        let want: &[usize] = if o == 0 { &y_shape } else { &state_shape };
        expect_shape(o, out.shape, want)?;
    }
    if hidden == 0 {
        // Every output is empty (and nothing in memory bounds the steps and rows).
        return Ok(());
    }

    // The scratch, cut as `scratch_floats` counts it.
    let (Some(parts), Some(need)) = (layer.scratch_floats(), layer.scratch_total()) else {
        bail!("the recurrent layer's scratch does not fit in memory");
    };
    if scratch.len().saturating_mul(2) < need {
        bail!(
            "the scratch holds {} words, {} are needed",
            scratch.len(),
            need.div_ceil(2)
        );
    }
    // The panel first, in whole words (so the floats after it start on a word too).
    let (panel, rest) = scratch.split_at_mut(parts[0] / 2);
    let panel = gemm::panel_buffer(panel);
    let rest: &mut [f32] = bytemuck::cast_slice_mut(rest);
    let (product, rest) = rest.split_at_mut(parts[1]);
    let (turned, rest) = rest.split_at_mut(parts[2]);
    let (gates, rest) = rest.split_at_mut(parts[3]);
    let (states, rest) = rest.split_at_mut(parts[4]);
    let (bias, rest) = rest.split_at_mut(parts[5]);
    let reset = &mut rest[..parts[6]];
    let (h_state, c_state) = states.split_at_mut(batch * hidden);
    let (bias, bias_h) = bias.split_at_mut(width);

    for d in 0..dirs {
        let reverse = layer.reverse_last && d == dirs - 1;
        let functions = layer.functions[d];
        // The biases: `Wb + Rb` on each gate, but GRU's `Rb_h` inside the reset with
        // `linear_before_reset`.
        let apart = cell == Cell::Gru && layer.linear_before_reset;
        match biases {
            Some(all) => {
                let (wb, rb) = all[d * 2 * width..][..2 * width].split_at(width);
                for (j, (b, (&wbj, &rbj))) in bias.iter_mut().zip(wb.iter().zip(rb)).enumerate() {
                    *b = if apart && j >= 2 * hidden {
                        wbj
                    } else {
                        wbj + rbj
                    };
                }
                if apart {
                    bias_h.copy_from_slice(&rb[2 * hidden..]);
                } else {
                    bias_h.fill(0.0);
                }
            }
            None => {
                bias.fill(0.0);
                bias_h.fill(0.0);
            }
        }
        // The input part of every step at once: `X W^T + bias`.
        let mut p = Product {
            m: seq * batch,
            n: width,
            k: input,
            c: product,
            ldc: width,
            bias: Bias::Col(bias),
            act: crate::activation::Activation::None,
        };
        let per_w = w.len() / dirs.max(1);
        let wd = &w[d * per_w..][..per_w];
        let rd = &r[d * width * hidden..][..width * hidden];
        let a = A::Rows { a: x, lda: input };
        let turned: &[f32] = if layer.packed {
            gemm::product::<Transposed<'_>>(&mut p, a, B::Packed(wd.as_chunks().0), panel)?;
            rd
        } else {
            gemm::product(&mut p, a, B::Pack(&Transposed { b: wd, ld: input }), panel)?;
            // `R^T`, row `k` the `k`-th column of every gate row.
            for (g, row) in rd.chunks_exact(hidden.max(1)).enumerate().take(width) {
                for (k, &v) in row.iter().enumerate() {
                    turned[k * width + g] = v;
                }
            }
            turned
        };
        // The initial states.
        for b in 0..batch {
            let at = layer.state_at(d, b);
            let hs = &mut h_state[b * hidden..][..hidden];
            match initial_h {
                Some(v) => hs.copy_from_slice(&v[at..][..hidden]),
                None => hs.fill(0.0),
            }
            let cs = &mut c_state[b * hidden..][..hidden];
            match initial_c {
                Some(v) => cs.copy_from_slice(&v[at..][..hidden]),
                None => cs.fill(0.0),
            }
        }
        let peep = peepholes.map(|p| &p[d * 3 * hidden..][..3 * hidden]);
        let y = match outputs.first_mut() {
            Some(out) => Some(output::<f32>(core::slice::from_mut(out), 0)?.1),
            None => None,
        };
        let mut walk = Walk {
            layer: &layer,
            d,
            reverse,
            steps: &steps,
            product,
            cells: Step {
                layer: &layer,
                functions,
                xw: &[],
                turned,
                bias_h,
                peep,
            },
            gates: &mut *gates,
            h_state: &mut *h_state,
            c_state: &mut *c_state,
            reset: &mut *reset,
            y,
        };
        dispatch!(walk_portable, walk_avx2, walk_avx512, (&mut walk));
        // The last states (zeros for a row of no steps, as ONNX Runtime gives).
        for b in 0..batch {
            let at = layer.state_at(d, b);
            let ran = steps(b) > 0;
            for (o, state) in [(1, &*h_state), (2, &*c_state)] {
                if let Some(out) = outputs.get_mut(o) {
                    let (_, y) = output::<f32>(core::slice::from_mut(out), 0)?;
                    let y = &mut y[at..][..hidden];
                    if ran {
                        y.copy_from_slice(&state[b * hidden..][..hidden]);
                    } else {
                        y.fill(0.0);
                    }
                }
            }
        }
    }
    Ok(())
}

/// One direction's steps: the sequence read forward or from its end, every batch row.
struct Walk<'a, 's> {
    layer: &'a Layer,
    d: usize,
    reverse: bool,
    /// Each batch row's steps (`sequence_lens`).
    steps: &'a dyn Fn(usize) -> i64,
    /// The input part of every step and row.
    product: &'a [f32],
    cells: Step<'a>,
    gates: &'s mut [f32],
    h_state: &'s mut [f32],
    c_state: &'s mut [f32],
    reset: &'s mut [f32],
    y: Option<&'s mut [f32]>,
}

fn walk_portable(w: &mut Walk<'_, '_>) {
    // As `matmul`'s portable row product: no blocks on a Cortex-M4F.
    const G: usize = if cfg!(target_arch = "arm") { 0 } else { 1 };
    walk::<_, G>(ScalarFma, w);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn walk_avx2(w: &mut Walk<'_, '_>) {
    walk::<_, 4>(crate::simd::Avx2Fma::new(), w);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn walk_avx512(w: &mut Walk<'_, '_>) {
    walk::<_, 8>(crate::simd::Avx512Fma::new(), w);
}

/// The steps of one direction, with the vector instructions of `fma` (the row products, `G`
/// vectors of sums in registers, and, inlined here, the gates' functions).
#[inline(always)]
fn walk<F: MulAdd, const G: usize>(fma: F, w: &mut Walk<'_, '_>) {
    let layer = w.layer;
    let (seq, hidden, width) = (layer.seq, layer.hidden, layer.width());
    for step in 0..seq {
        let t = if w.reverse { seq - 1 - step } else { step };
        for b in 0..layer.batch {
            let y_at = layer.y_at(t, w.d, b);
            let hs = &mut w.h_state[b * hidden..][..hidden];
            if (t as i64) >= (w.steps)(b) {
                if let Some(y) = w.y.as_deref_mut() {
                    y[y_at..][..hidden].fill(0.0);
                }
                continue;
            }
            let g = &mut w.gates[b * width..][..width];
            let cells = Step {
                xw: &w.product[layer.row(t, b) * width..][..width],
                ..w.cells
            };
            match layer.cell {
                Cell::Rnn => cells.rnn::<F, G>(fma, g, hs),
                Cell::Gru => cells.gru::<F, G>(fma, g, hs, &mut w.reset[b * hidden..][..hidden]),
                Cell::Lstm => {
                    cells.lstm::<F, G>(fma, g, hs, &mut w.c_state[b * hidden..][..hidden])
                }
            }
            if let Some(y) = w.y.as_deref_mut() {
                y[y_at..][..hidden].copy_from_slice(hs);
            }
        }
    }
}

/// One step of one batch row: its input part, `R^T`, and the direction's functions.
#[derive(Clone, Copy)]
struct Step<'a> {
    layer: &'a Layer,
    functions: [Function; 3],
    /// `X_t W^T + biases`, every gate.
    xw: &'a [f32],
    /// `R^T`, `hidden` rows of `gates * hidden`.
    turned: &'a [f32],
    /// GRU's `Rb_h` with `linear_before_reset` (zeros otherwise).
    bias_h: &'a [f32],
    /// LSTM's peepholes `P_i, P_o, P_f`.
    peep: Option<&'a [f32]>,
}

impl Step<'_> {
    /// `g[..n] = H R^T` over the first `n` gate columns, plus the input part.
    #[inline(always)]
    fn recurrent<F: MulAdd, const G: usize>(&self, fma: F, g: &mut [f32], hs: &[f32], n: usize) {
        let width = self.layer.width();
        row_times_with::<F, G>(fma, hs, self.turned, width, &mut g[..n]);
        for (v, &x) in g[..n].iter_mut().zip(self.xw) {
            *v += x;
        }
    }

    #[inline(always)]
    fn rnn<F: MulAdd, const G: usize>(&self, fma: F, g: &mut [f32], hs: &mut [f32]) {
        let h = self.layer.hidden;
        self.recurrent::<F, G>(fma, g, hs, h);
        self.functions[0].apply(&mut g[..h], self.layer.clip);
        hs.copy_from_slice(&g[..h]);
    }

    #[inline(always)]
    fn gru<F: MulAdd, const G: usize>(
        &self,
        fma: F,
        g: &mut [f32],
        hs: &mut [f32],
        reset: &mut [f32],
    ) {
        let (h, width, clip) = (self.layer.hidden, self.layer.width(), self.layer.clip);
        let [f, gf, _] = self.functions;
        if self.layer.linear_before_reset {
            // `r (H R_h^T + Rb_h)`: the whole product first, the input part after the reset.
            row_times_with::<F, G>(fma, hs, self.turned, width, g);
            for (v, &x) in g[..2 * h].iter_mut().zip(self.xw) {
                *v += x;
            }
            f.apply(&mut g[..2 * h], clip);
            let (zr, hh) = g.split_at_mut(2 * h);
            let r = &zr[h..];
            for (((v, &ri), &rb), &x) in
                hh.iter_mut().zip(r).zip(self.bias_h).zip(&self.xw[2 * h..])
            {
                *v = x + ri * (*v + rb);
            }
        } else {
            self.recurrent::<F, G>(fma, g, hs, 2 * h);
            f.apply(&mut g[..2 * h], clip);
            // `(r H) R_h^T`, the reset applied to the state before its product.
            for ((v, &ri), &hv) in reset.iter_mut().zip(&g[h..2 * h]).zip(hs.iter()) {
                *v = ri * hv;
            }
            let hh = &mut g[2 * h..];
            row_times_with::<F, G>(fma, reset, &self.turned[2 * h..], width, hh);
            for (v, &x) in hh.iter_mut().zip(&self.xw[2 * h..]) {
                *v += x;
            }
        }
        gf.apply(&mut g[2 * h..], clip);
        let (z, rest) = g.split_at(h);
        let candidate = &rest[h..];
        for ((s, &zi), &c) in hs.iter_mut().zip(z).zip(candidate) {
            *s = (1.0 - zi) * c + zi * *s;
        }
    }

    #[inline(always)]
    fn lstm<F: MulAdd, const G: usize>(
        &self,
        fma: F,
        g: &mut [f32],
        hs: &mut [f32],
        cs: &mut [f32],
    ) {
        let (h, clip) = (self.layer.hidden, self.layer.clip);
        let [f, gf, hf] = self.functions;
        self.recurrent::<F, G>(fma, g, hs, 4 * h);
        let (i, rest) = g.split_at_mut(h);
        let (o, rest) = rest.split_at_mut(h);
        let (fg, c) = rest.split_at_mut(h);
        if let Some(p) = self.peep {
            for ((iv, fv), (&cv, (&pi, &pf))) in i
                .iter_mut()
                .zip(fg.iter_mut())
                .zip(cs.iter().zip(p.iter().zip(&p[2 * h..])))
            {
                *iv += pi * cv;
                *fv += pf * cv;
            }
        }
        f.apply(i, clip);
        f.apply(fg, clip);
        gf.apply(c, clip);
        for (((cv, &iv), &fv), &gv) in cs.iter_mut().zip(i.iter()).zip(fg.iter()).zip(c.iter()) {
            *cv = fv * *cv + iv * gv;
        }
        if let Some(p) = self.peep {
            for ((ov, &cv), &po) in o.iter_mut().zip(cs.iter()).zip(&p[h..2 * h]) {
                *ov += po * cv;
            }
        }
        f.apply(o, clip);
        // `h' = o h(c')`, `h(c')` computed in the candidate's place.
        c.copy_from_slice(cs);
        hf.apply(c, None);
        for ((s, &ov), &hv) in hs.iter_mut().zip(o.iter()).zip(c.iter()) {
            *s = ov * hv;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::test_values::values;
    use crate::{Attr, Attrs, Data, DataMut, Input, Output, run, scratch_len};
    use std::vec;
    use std::vec::Vec;

    /// An operand: its shape and values, or `None` (absent).
    type Operand = Option<(Vec<usize>, Vec<f32>)>;

    /// A recurrent node's run: `inputs` as `(shape, values)` (`None` absent; the lengths
    /// int32), outputs of `out_shapes`.
    fn recurrent(
        op: &str,
        attrs: &[(&str, Attr<'_>)],
        inputs: &[Operand],
        lengths: Option<&[i32]>,
        out_shapes: &[Vec<usize>],
    ) -> Result<Vec<Vec<f32>>, crate::KernelError> {
        let attrs = Attrs::new(attrs);
        let len_shape = [lengths.map_or(0, <[i32]>::len)];
        let mut views: Vec<Input<'_>> = inputs
            .iter()
            .map(|i| match i {
                None => Input::Absent,
                Some((shape, v)) => Input::Value {
                    shape,
                    data: Data::F32(v),
                },
            })
            .collect();
        if let Some(l) = lengths {
            while views.len() < 5 {
                views.push(Input::Absent);
            }
            views[4] = Input::Value {
                shape: &len_shape,
                data: Data::I32(l),
            };
        }
        let shapes: Vec<Option<&[usize]>> = inputs
            .iter()
            .map(|i| i.as_ref().map(|(s, _)| &s[..]))
            .collect();
        let outs: Vec<&[usize]> = out_shapes.iter().map(|s| &s[..]).collect();
        let words = scratch_len(op, &attrs, &shapes, &outs)?;
        let mut scratch = vec![0x7fc0_0000_7fc0_0000u64; words];
        let mut bufs: Vec<Vec<f32>> = out_shapes
            .iter()
            .map(|s| vec![f32::NAN; s.iter().product()])
            .collect();
        let mut outputs: Vec<Output<'_>> = bufs
            .iter_mut()
            .zip(out_shapes)
            .map(|(b, s)| Output {
                shape: s,
                data: DataMut::F32(b),
            })
            .collect();
        run(op, &attrs, &views, &mut outputs, &mut scratch)?;
        Ok(bufs)
    }

    /// `[a, b, rest..]` turned to `[b, a, rest..]` (`inner` elements per `rest`).
    fn swap01(v: &[f32], a: usize, b: usize, inner: usize) -> Vec<f32> {
        let mut out = vec![0.0; v.len()];
        for i in 0..a {
            for j in 0..b {
                out[(j * a + i) * inner..][..inner]
                    .copy_from_slice(&v[(i * b + j) * inner..][..inner]);
            }
        }
        out
    }

    /// `layout` 1 (batch first) gives the bits of `layout` 0 on the transposed operands, for
    /// every cell, both directions, initial states, peepholes and sequence lengths.
    #[test]
    fn batch_first_layout_is_the_transposed_sequence() {
        let (seq, batch, input, hidden, dirs) = (5, 3, 4, 6, 2);
        for (op, gates, lbr) in [("LSTM", 4, 0), ("GRU", 3, 0), ("GRU", 3, 1), ("RNN", 1, 0)] {
            let w = values(dirs * gates * hidden * input, 1);
            let r = values(dirs * gates * hidden * hidden, 2);
            let b = values(dirs * 2 * gates * hidden, 3);
            let x = values(seq * batch * input, 4);
            let h0 = values(dirs * batch * hidden, 5);
            let c0 = values(dirs * batch * hidden, 6);
            let p = values(dirs * 3 * hidden, 7);
            let lengths = [5, 2, 0];
            let operands = |batch_first: bool| {
                let (xs, xv) = if batch_first {
                    (vec![batch, seq, input], swap01(&x, seq, batch, input))
                } else {
                    (vec![seq, batch, input], x.clone())
                };
                let state = |v: &[f32]| {
                    if batch_first {
                        (vec![batch, dirs, hidden], swap01(v, dirs, batch, hidden))
                    } else {
                        (vec![dirs, batch, hidden], v.to_vec())
                    }
                };
                let mut all = vec![
                    Some((xs, xv)),
                    Some((vec![dirs, gates * hidden, input], w.clone())),
                    Some((vec![dirs, gates * hidden, hidden], r.clone())),
                    Some((vec![dirs, 2 * gates * hidden], b.clone())),
                    None,
                    Some(state(&h0)),
                ];
                if op == "LSTM" {
                    all.push(Some(state(&c0)));
                    all.push(Some((vec![dirs, 3 * hidden], p.clone())));
                }
                all
            };
            let outs = |batch_first: bool| {
                let (y, s) = if batch_first {
                    (vec![batch, seq, dirs, hidden], vec![batch, dirs, hidden])
                } else {
                    (vec![seq, dirs, batch, hidden], vec![dirs, batch, hidden])
                };
                let mut v = vec![y, s.clone()];
                if op == "LSTM" {
                    v.push(s);
                }
                v
            };
            let attrs = |layout: i64| {
                vec![
                    ("hidden_size", Attr::Int(hidden as i64)),
                    ("direction", Attr::Str("bidirectional")),
                    ("layout", Attr::Int(layout)),
                    ("linear_before_reset", Attr::Int(lbr)),
                ]
            };
            let plain = recurrent(
                op,
                &attrs(0),
                &operands(false),
                Some(&lengths),
                &outs(false),
            )
            .unwrap();
            let first =
                recurrent(op, &attrs(1), &operands(true), Some(&lengths), &outs(true)).unwrap();
            // Y: [seq, dirs, batch, h] against [batch, seq, dirs, h].
            let mut want = vec![0.0; plain[0].len()];
            for t in 0..seq {
                for d in 0..dirs {
                    for bi in 0..batch {
                        let from = ((t * dirs + d) * batch + bi) * hidden;
                        let to = ((bi * seq + t) * dirs + d) * hidden;
                        want[to..to + hidden].copy_from_slice(&plain[0][from..from + hidden]);
                    }
                }
            }
            assert_eq!(bits(&first[0]), bits(&want), "{op} Y");
            for o in 1..plain.len() {
                let want = swap01(&plain[o], dirs, batch, hidden);
                assert_eq!(bits(&first[o]), bits(&want), "{op} output {o}");
            }
            // The third row has no steps: zeros in Y and in Y_h (ONNX Runtime's).
            for t in 0..seq {
                for d in 0..dirs {
                    let at = ((t * dirs + d) * batch + 2) * hidden;
                    assert!(plain[0][at..at + hidden].iter().all(|&v| v == 0.0));
                }
            }
            for d in 0..dirs {
                let at = (d * batch + 2) * hidden;
                assert!(plain[1][at..at + hidden].iter().all(|&v| v == 0.0));
            }
        }
    }

    /// `W` and `R` packed at build time (`packed = 16`, without `hidden_size`: from the turned
    /// `R`) give the bits of the plain weights.
    #[test]
    fn packed_weights_give_the_same_bits() {
        let (seq, batch, input, hidden) = (7, 2, 20, 24);
        for (op, gates, dirs) in [("LSTM", 4, 2), ("GRU", 3, 1), ("RNN", 1, 2)] {
            let width = gates * hidden;
            let (ws, rs) = ([dirs, width, input], [dirs, width, hidden]);
            let w = values(dirs * width * input, 1);
            let r = values(dirs * width * hidden, 2);
            let b = values(dirs * 2 * width, 3);
            let x = values(seq * batch * input, 4);
            let (pw, pr) = crate::pack::recurrent_weights_shape(&ws, &rs).unwrap();
            let mut w_packed = vec![0.0; pw.iter().product()];
            let mut r_turned = vec![0.0; pr.iter().product()];
            crate::pack::recurrent_weights(&w, &ws, &r, &rs, &mut w_packed, &mut r_turned).unwrap();
            let direction = Attr::Str(if dirs == 2 {
                "bidirectional"
            } else {
                "forward"
            });
            let outs = [vec![seq, dirs, batch, hidden], vec![dirs, batch, hidden]];
            let plain = recurrent(
                op,
                &[
                    ("hidden_size", Attr::Int(hidden as i64)),
                    ("direction", direction),
                ],
                &[
                    Some((vec![seq, batch, input], x.clone())),
                    Some((ws.to_vec(), w.clone())),
                    Some((rs.to_vec(), r.clone())),
                    Some((vec![dirs, 2 * width], b.clone())),
                ],
                None,
                &outs,
            )
            .unwrap();
            let packed = recurrent(
                op,
                &[("packed", Attr::Int(16)), ("direction", direction)],
                &[
                    Some((vec![seq, batch, input], x.clone())),
                    Some((pw.to_vec(), w_packed)),
                    Some((pr.to_vec(), r_turned)),
                    Some((vec![dirs, 2 * width], b.clone())),
                ],
                None,
                &outs,
            )
            .unwrap();
            for (a, b) in plain.iter().zip(&packed) {
                assert_eq!(bits(a), bits(b), "{op}");
            }
        }
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// Without `hidden_size` the units are `R`'s; a forward RNN of one unit with Relu and no
    /// bias is `h' = max(0, w x + r h)`, step by step.
    #[test]
    fn hidden_size_from_r_and_one_unit_by_hand() {
        let x = [1.0f32, -2.0, 3.0];
        let out = recurrent(
            "RNN",
            &[("activations", Attr::Strs(&["Relu"]))],
            &[
                Some((vec![3, 1, 1], x.to_vec())),
                Some((vec![1, 1, 1], vec![0.5])),
                Some((vec![1, 1, 1], vec![2.0])),
            ],
            None,
            &[vec![3, 1, 1, 1], vec![1, 1, 1]],
        )
        .unwrap();
        // h1 = 0.5, h2 = max(0, -1 + 1) = 0, h3 = 1.5.
        assert_eq!(out[0], [0.5, 0.0, 1.5]);
        assert_eq!(out[1], [1.5]);
    }

    /// Operands and attributes that do not fit are errors, never panics.
    #[test]
    #[allow(clippy::type_complexity)]
    fn misfits_are_errors() {
        let x = Some((vec![2, 1, 3], values(6, 1)));
        let w = Some((vec![1, 8, 3], values(24, 2)));
        let r = Some((vec![1, 8, 2], values(16, 3)));
        let ok_attrs = [("hidden_size", Attr::Int(2))];
        let outs = [vec![2, 1, 1, 2], vec![1, 1, 2], vec![1, 1, 2]];
        let base = [x.clone(), w.clone(), r.clone()];
        assert!(recurrent("LSTM", &ok_attrs, &base, None, &outs).is_ok());
        let bad: [(&[(&str, Attr<'_>)], Vec<Operand>, Option<&[i32]>); 9] = [
            (&[("hidden_size", Attr::Int(3))], base.to_vec(), None),
            (&[("hidden_size", Attr::Int(-1))], base.to_vec(), None),
            (
                &[
                    ("hidden_size", Attr::Int(2)),
                    ("direction", Attr::Str("sideways")),
                ],
                base.to_vec(),
                None,
            ),
            (
                &[("hidden_size", Attr::Int(2)), ("layout", Attr::Int(2))],
                base.to_vec(),
                None,
            ),
            (
                &[
                    ("hidden_size", Attr::Int(2)),
                    ("input_forget", Attr::Int(1)),
                ],
                base.to_vec(),
                None,
            ),
            (
                &[
                    ("hidden_size", Attr::Int(2)),
                    ("activations", Attr::Strs(&["Sigmoid", "Tanh"])),
                ],
                base.to_vec(),
                None,
            ),
            (
                &[
                    ("hidden_size", Attr::Int(2)),
                    ("activations", Attr::Strs(&["Sigmoid", "Tanh", "Cube"])),
                ],
                base.to_vec(),
                None,
            ),
            (&ok_attrs, base.to_vec(), Some(&[3])),
            (
                &ok_attrs,
                vec![Some((vec![2, 3], values(6, 1))), w.clone(), r.clone()],
                None,
            ),
        ];
        for (attrs, inputs, lengths) in bad {
            assert!(
                recurrent("LSTM", attrs, &inputs, lengths, &outs).is_err(),
                "{attrs:?}"
            );
        }
        // An output of the wrong shape.
        let wrong = [vec![2, 1, 1, 3]];
        assert!(recurrent("LSTM", &ok_attrs, &base, None, &wrong).is_err());
    }
}
