//! Patch-by-patch execution of a chain of convolutions: below the whole-tensor bound.
//!
//! A chain of int8 or float32 convolutions (each the only reader of the one before it: CONV_2D
//! and DEPTHWISE_CONV_2D, as MobileNet and DS-CNN stack them) needs its intermediate tensors only a
//! few rows at a time: output rows `r0..r1` of a layer read the input rows under their windows.
//! So the chain runs band by band of its last output's rows, and each intermediate tensor lives
//! as a *band buffer* of the rows still to be read (a line buffer): when a layer needs rows its
//! buffer does not hold, the layer before it computes just those (recursively, up the chain),
//! after the buffer drops the rows no later band reads. Every row of every layer is computed
//! once, by the same kernel with the same arithmetic (the kernels' band form: the input rows under
//! the band, the padding above them), so the bytes are the whole-tensor run's and the extra
//! work is only the calls and the moves of kept rows.
//!
//! ```text
//!  layer 1   [== rows 3..6 ==]            band buffers: the rows the next layer still reads
//!  layer 2      [= rows 2..4 =]           (kept rows moved to the front, new rows after them)
//!  output    rows 0..2 written ....       the chain's output is whole, its input too
//! ```
//!
//! Two layouts: TFLite's NHWC, where a band of rows is one run of bytes, and ONNX's NCHW, where
//! it is one run per channel: an NCHW band buffer holds the same few rows of every channel (its
//! channels that many rows apart), the kept rows move channel by channel, and the Conv reads and
//! writes planes that far apart ([`memplan_kernels::conv_band`]). The steps are the same.
//!
//! The build ([`crate::ram_budget`]) chooses the chains and the band height; this module finds
//! the chains ([`chains`]) and works out, at build time, every step the generated loop takes
//! ([`simulate`]).

use std::ops::Range;

use crate::graph::OpInput;
use memplan_core::model_file::Layout;
use memplan_core::{DType, Model};

use crate::fold;
use crate::graph::{Constant, Node, Step, Streamed};
use crate::specialise::{self, Kernel};

/// A chain of nodes run band by band: `nodes` (consecutive, each reading the one before),
/// `band` output rows of the last at a time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stage {
    pub(crate) nodes: Range<usize>,
    pub(crate) band: usize,
}

/// The rows of one layer: its input's and output's heights and its window along the height,
/// `[kernel, stride, dilation, pad above]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rows {
    pub(crate) input: usize,
    pub(crate) output: usize,
    pub(crate) window: [usize; 4],
}

/// The rows of `kernel`, if it is a convolution of one image.
pub(crate) fn rows(kernel: &Kernel) -> Option<Rows> {
    match kernel {
        Kernel::Conv(p) if p.batches == 1 => Some(Rows {
            input: p.input[0],
            output: p.output[0],
            window: [p.kernel[0], p.stride[0], p.dilation[0], p.pad[0]],
        }),
        Kernel::Depthwise(p) if p.batches == 1 => Some(Rows {
            input: p.input[0],
            output: p.output[0],
            window: [p.kernel[0], p.stride[0], p.dilation[0], p.pad[0]],
        }),
        Kernel::FloatConv(p) | Kernel::FloatDepthwise(p) if p.batches == 1 => Some(Rows {
            input: p.input[0],
            output: p.output[0],
            window: [p.kernel[0], p.stride[0], p.dilation[0], p.pad[0]],
        }),
        _ => None,
    }
}

/// The rows of `node` as the band loop runs it: a specialised TFLite convolution (NHWC), or an
/// ONNX float32 Conv of one image of 2-D planes (NCHW, [`memplan_kernels::conv_band`]) whose
/// weights and bias are constants.
pub(crate) fn layer_rows(
    model: &Model,
    shapes: &[Vec<u64>],
    constants: &[Constant],
    operands: &specialise::Operands<'_>,
    node: &Node,
) -> Option<Rows> {
    if !nchw(node) {
        return specialise::plan(node, operands).as_ref().and_then(rows);
    }
    let (x, w, y) = conv_operands(node)?;
    let constant_bias = match node.inputs.get(2) {
        None | Some(OpInput::Absent) => true,
        Some(&OpInput::Weight(b)) => constants.get(b)?.dtype == DType::F32,
        Some(OpInput::Tensor(_)) => false,
    };
    let float = |t: usize| {
        matches!(
            model.tensors[t].layout,
            Layout::Typed {
                dtype: DType::F32,
                ..
            }
        )
    };
    let weight = constants.get(w)?;
    if node.inputs.len() > 3
        || !constant_bias
        || !float(x)
        || !float(y)
        || weight.dtype != DType::F32
    {
        return None;
    }
    let (xs, ws, ys) = (
        dims(shapes.get(x)?)?,
        dims(&weight.shape)?,
        dims(shapes.get(y)?)?,
    );
    let window = fold::with_attrs(&node.attrs, |attrs| {
        memplan_kernels::conv_band_window(attrs, &xs, &ws, &ys)
    })?;
    Some(Rows {
        input: xs[2],
        output: ys[2],
        window,
    })
}

/// An ONNX Conv's input value, weight constant and output value.
pub(crate) fn conv_operands(node: &Node) -> Option<(usize, usize, usize)> {
    match (
        node.inputs.first(),
        node.inputs.get(1),
        node.outputs.as_slice(),
    ) {
        (Some(&OpInput::Tensor(x)), Some(&OpInput::Weight(w)), &[y]) => Some((x, w, y)),
        _ => None,
    }
}

/// A shape as the kernels take it, `None` past `usize`.
pub(crate) fn dims(shape: &[u64]) -> Option<Vec<usize>> {
    shape.iter().map(|&d| usize::try_from(d).ok()).collect()
}

/// Whether `node` runs band by band on NCHW planes (an ONNX Conv) rather than NHWC rows.
pub(crate) fn nchw(node: &Node) -> bool {
    node.op_type == "Conv"
}

/// The maximal chains of two or more consecutive nodes that can run band by band: int8 or
/// float32 convolutions of one image ([`layer_rows`]), of one layout, each reading (as its input
/// 0) the one before it, whose output only it reads, in the arena and no graph output.
pub(crate) fn chains(
    model: &Model,
    shapes: &[Vec<u64>],
    nodes: &[Node],
    constants: &[Constant],
) -> Vec<Range<usize>> {
    let operands = specialise::operands(model, shapes, constants);
    let eligible: Vec<bool> = nodes
        .iter()
        .map(|node| {
            node.outputs.len() == 1
                && layer_rows(model, shapes, constants, &operands, node).is_some()
        })
        .collect();
    let readers = |t: usize| {
        model
            .ops
            .iter()
            .map(|op| op.inputs.iter().filter(|&&i| i == t).count())
            .sum::<usize>()
    };
    let linked = |k: usize| {
        let out = nodes[k].outputs[0];
        eligible[k]
            && eligible[k + 1]
            && nchw(&nodes[k]) == nchw(&nodes[k + 1])
            && nodes[k + 1].inputs.first() == Some(&OpInput::Tensor(out))
            && readers(out) == 1
            && !model.outputs.contains(&out)
            && !model.tensors[out].memory.external
    };
    let mut found = Vec::new();
    let mut start = 0;
    while start < nodes.len() {
        let mut end = start + 1;
        while end < nodes.len() && linked(end - 1) {
            end += 1;
        }
        if end - start >= 2 {
            found.push(start..end);
        }
        start = end;
    }
    found
}

/// The most scratch words any call of an NCHW stage's loop needs
/// ([`memplan_kernels::conv_band_scratch_len`] for the rows of that call: a depthwise Conv's
/// padded plane is its band's).
pub(crate) fn band_scratch_words(
    stage: &Streamed,
    shapes: &[Vec<u64>],
    constants: &[Constant],
) -> Option<usize> {
    let mut most = 0;
    for step in &stage.steps {
        let node = stage.nodes.get(step.node)?;
        let (x, w, y) = conv_operands(node)?;
        let (mut xs, ws, mut ys) = (
            dims(shapes.get(x)?)?,
            dims(&constants.get(w)?.shape)?,
            dims(shapes.get(y)?)?,
        );
        let band = memplan_kernels::ConvBand {
            input_rows: *xs.get(2)?,
            output_rows: *ys.get(2)?,
            above: step.above,
            input_stride: step.take.checked_mul(*xs.get(3)?)?,
            output_stride: step.rows.checked_mul(*ys.get(3)?)?,
        };
        xs[2] = step.take;
        ys[2] = step.rows;
        let words = fold::with_attrs(&node.attrs, |attrs| {
            memplan_kernels::conv_band_scratch_len(attrs, &xs, &ws, &ys, band)
        })
        .ok()?;
        most = most.max(words);
    }
    Some(most)
}

/// Every step of a stage of layers `layers` run `band` output rows at a time, and the rows
/// each band buffer must hold; `None` when the arithmetic overflows or `band` is 0.
pub(crate) fn simulate(layers: &[Rows], band: usize) -> Option<(Vec<Step>, Vec<usize>)> {
    let n = layers.len();
    if n < 2 || band == 0 {
        return None;
    }
    let mut run = Run {
        layers,
        held: vec![0..0; n - 1],
        capacity: vec![0; n - 1],
        steps: Vec::new(),
    };
    let last = &layers[n - 1];
    let mut r0 = 0;
    while r0 < last.output {
        let r1 = (r0 + band).min(last.output);
        let (under, above) = band_rows(r0..r1, last)?;
        run.ensure(n - 2, under.clone())?;
        run.steps.push(Step {
            node: n - 1,
            drop: 0,
            at: r0,
            rows: r1 - r0,
            from: under.start - run.held[n - 2].start,
            take: under.len(),
            above,
        });
        r0 = r1;
    }
    Some((run.steps, run.capacity))
}

/// The input rows output rows `out` of `layer` read, and the padding above them.
fn band_rows(out: Range<usize>, layer: &Rows) -> Option<(Range<usize>, usize)> {
    memplan_kernels::tflite::band_input_rows(out, layer.window, layer.input)
}

/// The simulation's state: the rows each band buffer holds.
struct Run<'a> {
    layers: &'a [Rows],
    /// Rows of layer `i`'s output in its band buffer.
    held: Vec<Range<usize>>,
    capacity: Vec<usize>,
    steps: Vec<Step>,
}

impl Run<'_> {
    /// Makes rows `need` of layer `i`'s output be in its band buffer.
    fn ensure(&mut self, i: usize, need: Range<usize>) -> Option<()> {
        let held = self.held[i].clone();
        if need.start < held.start {
            return None; // a row already dropped: never, the bands move down
        }
        if need.end <= held.end {
            return Some(());
        }
        let first = held.end.max(need.start);
        let (under, above) = band_rows(first..need.end, &self.layers[i])?;
        let from = if i > 0 {
            self.ensure(i - 1, under.clone())?;
            under.start - self.held[i - 1].start
        } else {
            under.start
        };
        let keep = need.start.min(held.end);
        self.steps.push(Step {
            node: i,
            drop: keep - held.start,
            at: held.end - keep,
            rows: need.end - first,
            from,
            take: under.len(),
            above,
        });
        self.held[i] = need.start..need.end;
        self.capacity[i] = self.capacity[i].max(need.len());
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A layer on rows of numbers, as the kernels run a window along the height: output row
    /// `q` mixes input rows `q * stride + tap * dilation - above` of `input`, rows outside it
    /// being padding.
    fn layer(input: &[u64], out_rows: usize, window: [usize; 4], above: usize) -> Vec<u64> {
        let [kernel, stride, dilation, _] = window;
        (0..out_rows)
            .map(|q| {
                (0..kernel).fold(17u64, |acc, tap| {
                    let row = (q * stride + tap * dilation).checked_sub(above);
                    let x = row.and_then(|r| input.get(r)).copied().unwrap_or(0);
                    acc.wrapping_mul(31).wrapping_add(x ^ (tap as u64 + 1))
                })
            })
            .collect()
    }

    /// Runs `layers` whole and by the steps of `band`-row bands; the outputs must be equal,
    /// each row of each layer computed once, and no band buffer above its rows.
    fn check(layers: &[Rows], band: usize) {
        let input: Vec<u64> = (0..layers[0].input as u64).map(|r| r * 7919 + 1).collect();
        let mut whole = input.clone();
        for l in layers {
            whole = layer(&whole, l.output, l.window, l.window[3]);
        }
        let (steps, capacity) = simulate(layers, band).unwrap();
        let n = layers.len();
        let mut buffers: Vec<Vec<u64>> = vec![Vec::new(); n - 1];
        let mut output = vec![0u64; layers[n - 1].output];
        let mut computed = vec![0usize; n];
        for step in &steps {
            let l = &layers[step.node];
            let source = if step.node == 0 {
                &input
            } else {
                &buffers[step.node - 1]
            };
            let read = source[step.from..step.from + step.take].to_vec();
            let rows = layer(&read, step.rows, l.window, step.above);
            computed[step.node] += step.rows;
            if step.node == n - 1 {
                output[step.at..step.at + step.rows].copy_from_slice(&rows);
            } else {
                let buffer = &mut buffers[step.node];
                let kept = buffer[step.drop..step.drop + step.at].to_vec();
                *buffer = kept.into_iter().chain(rows).collect();
                assert!(buffer.len() <= capacity[step.node]);
            }
        }
        assert_eq!(output, whole, "band {band}");
        for (i, l) in layers.iter().enumerate() {
            assert!(computed[i] <= l.output, "layer {i}: a row computed twice");
        }
    }

    const SAME3: [usize; 4] = [3, 1, 1, 1];
    const DOWN3: [usize; 4] = [3, 2, 1, 1];
    const POINT: [usize; 4] = [1, 1, 1, 0];

    fn rows(input: usize, output: usize, window: [usize; 4]) -> Rows {
        Rows {
            input,
            output,
            window,
        }
    }

    #[test]
    fn a_mobilenet_stem_runs_band_by_band_computing_each_row_once() {
        // conv 3x3/2, depthwise 3x3, pointwise, depthwise 3x3/2, pointwise: 48 rows -> 12.
        let layers = [
            rows(48, 24, DOWN3),
            rows(24, 24, SAME3),
            rows(24, 24, POINT),
            rows(24, 12, DOWN3),
            rows(12, 12, POINT),
        ];
        for band in [1, 2, 3, 5, 12, 20] {
            check(&layers, band);
        }
        // Band buffers of a few rows, not 24.
        let (_, capacity) = simulate(&layers, 1).unwrap();
        assert!(capacity.iter().all(|&c| c <= 4), "{capacity:?}");
    }

    #[test]
    fn wide_dilated_and_skipping_windows_are_covered() {
        let layers = [
            rows(20, 20, [5, 1, 1, 2]),
            rows(20, 10, [3, 2, 2, 2]),
            rows(10, 10, SAME3),
            // A 1x1 window of stride 2 skips rows its input computed.
            rows(10, 5, [1, 2, 1, 0]),
        ];
        for band in [1, 4, 10] {
            check(&layers, band);
        }
    }
}
