//! A lowered node run once at build time, on zeros: the kernel's own checks of shapes, dtypes
//! and attributes (a filter that does not fit its input, a RESHAPE to another element count, a
//! bad TRANSPOSE permutation, an axis out of range, ...) run here, where the error can name the
//! operator and the user can fix the file, instead of in the first call of the generated `run`.
//!
//! The inputs are the node's constants (their real bytes) and zeros for its activations; no
//! `tflite.*` kernel refuses a value, only shapes and attributes, so what runs on zeros runs on
//! every input. Some ONNX kernels do refuse values (an integer division by zero, a Resize scale
//! of zero): the ONNX build (`prepare.rs`) does not dry-run a node with an integer activation or
//! a run-time parameter of that kind. A node whose run would take long is not run
//! ([`MAX_DRY_RUN_WORK`]); the TFLite lowering checks what such nodes may get wrong (their
//! windows, sizes and biases) itself.

use crate::graph::OpInput;
use memplan_core::DType;
use memplan_kernels::{Input, Output, OwnedData};

use crate::fold::with_attrs;
use crate::graph::{Constant, Node};

/// The most work one dry run may do: element visits, counting a convolution's or matrix
/// product's multiply-adds and a pool's taps (2^24, under a second in a debug build script).
/// Larger nodes are checked by the lowering alone.
pub(crate) const MAX_DRY_RUN_WORK: u64 = 1 << 24;

/// The most work the dry runs of one network may do together (2^26, about 3 s in a debug build
/// script: 2^28 steps of ADD took 12.6 s): the runs of a file of many thousand nodes, each just
/// below [`MAX_DRY_RUN_WORK`], would add up without bound. The nodes after it are checked by the
/// lowering alone.
pub(crate) const MAX_DRY_RUN_TOTAL: u64 = 1 << 26;

/// The kernels' dtype of a tensor.
fn kernel_dtype(dtype: DType) -> Option<memplan_kernels::DType> {
    Some(match dtype {
        DType::F32 => memplan_kernels::DType::F32,
        DType::I64 => memplan_kernels::DType::I64,
        DType::I32 => memplan_kernels::DType::I32,
        DType::Bool => memplan_kernels::DType::Bool,
        DType::I8 => memplan_kernels::DType::I8,
        DType::U8 => memplan_kernels::DType::U8,
        _ => return None,
    })
}

/// A value of the node: its shape and elements (zeros for an activation).
type Value = (Vec<usize>, OwnedData);

/// Runs `node` on zeros (its constants as they are): `Ok` when the kernel accepts it or the run
/// would take more than [`MAX_DRY_RUN_WORK`] or than the `work` left (which the run takes from),
/// else the kernel's message. `tensors` gives each model tensor's dtype and shape.
pub(crate) fn dry_run(
    node: &Node,
    tensors: &[(DType, Vec<usize>)],
    constants: &[Constant],
    work: &mut u64,
) -> Result<(), String> {
    let elements = |shape: &[usize]| -> Option<u64> {
        shape
            .iter()
            .try_fold(1u64, |n, &d| n.checked_mul(u64::try_from(d).ok()?))
    };
    // The node's size: every element of its operands, and each output's steps.
    let mut inputs: Vec<Option<Value>> = Vec::new();
    let mut shapes: Vec<Option<(DType, Vec<usize>)>> = Vec::new();
    for input in &node.inputs {
        shapes.push(match *input {
            OpInput::Absent => None,
            OpInput::Tensor(t) => tensors.get(t).cloned(),
            OpInput::Weight(w) => constants
                .get(w)
                .map(|c| (c.dtype, c.shape.iter().map(|&d| d as usize).collect())),
        });
    }
    let outputs: Vec<(DType, Vec<usize>)> = node
        .outputs
        .iter()
        .filter_map(|&t| tensors.get(t).cloned())
        .collect();
    let mut total = 0u64;
    for (_, shape) in shapes.iter().flatten().chain(&outputs) {
        let Some(n) = elements(shape) else {
            return Ok(());
        };
        total = total.saturating_add(n);
    }
    let out_elements = outputs
        .iter()
        .map(|(_, s)| elements(s).unwrap_or(u64::MAX))
        .fold(0u64, u64::saturating_add);
    let steps = total.saturating_add(out_elements.saturating_mul(taps_per_output(node, &shapes)));
    if steps > MAX_DRY_RUN_WORK.min(*work) {
        return Ok(());
    }
    *work -= steps;
    for (input, shape) in node.inputs.iter().zip(&shapes) {
        let Some((dtype, shape)) = shape else {
            inputs.push(None);
            continue;
        };
        let Some(kind) = kernel_dtype(*dtype) else {
            return Ok(());
        };
        let data = match *input {
            OpInput::Weight(w) => match OwnedData::from_le_bytes(kind, &constants[w].bytes) {
                Ok(data) => data,
                Err(e) => return Err(format!("a constant: {e}")),
            },
            _ => OwnedData::zeroed(kind, elements(shape).unwrap_or(0) as usize),
        };
        inputs.push(Some((shape.clone(), data)));
    }
    let mut buffers: Vec<Value> = Vec::new();
    for (dtype, shape) in &outputs {
        let Some(kind) = kernel_dtype(*dtype) else {
            return Ok(());
        };
        buffers.push((
            shape.clone(),
            OwnedData::zeroed(kind, elements(shape).unwrap_or(0) as usize),
        ));
    }
    // A kernel that panics on what the lowering let through (a bug of theirs, or a check the
    // lowering lacks) fails this node's build with a message, not the build script.
    let run = std::panic::AssertUnwindSafe(|| run_once(node, &inputs, &mut buffers));
    std::panic::catch_unwind(run).unwrap_or_else(|_| {
        Err("the kernel panicked on this node's shapes or attributes (a bug: please report it with the file)".to_owned())
    })
}

/// Runs `node`'s kernel once on `inputs`, writing `buffers`.
fn run_once(node: &Node, inputs: &[Option<Value>], buffers: &mut [Value]) -> Result<(), String> {
    let input_views: Vec<Input<'_>> = inputs
        .iter()
        .map(|input| match input {
            None => Input::Absent,
            Some((shape, data)) => data.input(shape),
        })
        .collect();
    let input_shapes: Vec<Option<&[usize]>> = inputs
        .iter()
        .map(|i| i.as_ref().map(|(s, _)| s.as_slice()))
        .collect();
    let output_shapes: Vec<Vec<usize>> = buffers.iter().map(|(s, _)| s.clone()).collect();
    let output_refs: Vec<&[usize]> = output_shapes.iter().map(Vec::as_slice).collect();
    with_attrs(&node.attrs, |attrs| {
        let words = memplan_kernels::scratch_len(&node.op_type, attrs, &input_shapes, &output_refs)
            .map_err(|e| e.to_string())?;
        let mut scratch = vec![0u64; words];
        let mut output_views: Vec<Output<'_>> = buffers
            .iter_mut()
            .map(|(shape, data)| data.output(shape))
            .collect();
        memplan_kernels::run(
            &node.op_type,
            attrs,
            &input_views,
            &mut output_views,
            &mut scratch,
        )
        .map_err(|e| e.to_string())
    })
}

/// About how many steps the kernel takes per output element: a window's taps for a pool, a
/// filter's for a convolution, the depth of a matrix product (1 otherwise).
fn taps_per_output(node: &Node, inputs: &[Option<(DType, Vec<usize>)>]) -> u64 {
    let attr = |name: &str| {
        node.attrs.iter().find_map(|(n, v)| match v {
            crate::graph::AttrValue::Int(i) if n == name => u64::try_from(*i).ok(),
            _ => None,
        })
    };
    let shape = |i: usize| inputs.get(i).cloned().flatten().map(|(_, s)| s);
    let product = |s: &[usize]| s.iter().fold(1u64, |n, &d| n.saturating_mul(d as u64));
    // The filter's elements over its output channels (axis `axis` of its shape).
    let per = |axis: usize| {
        shape(1).map_or(1, |s| {
            product(&s) / s.get(axis).map_or(1, |&d| (d as u64).max(1))
        })
    };
    let taps = match node.op_type.as_str() {
        "tflite.AVERAGE_POOL_2D" | "tflite.MAX_POOL_2D" => attr("filter_h")
            .unwrap_or(1)
            .saturating_mul(attr("filter_w").unwrap_or(1)),
        "tflite.CONV_2D" | "tflite.FULLY_CONNECTED" => per(0),
        "tflite.DEPTHWISE_CONV_2D" => per(3),
        "tflite.BATCH_MATMUL" | "MatMul" | "MatMulInteger" | "Gemm" | "FusedMatMul" => shape(0)
            .map_or(1, |s| {
                s.iter().rev().take(2).map(|&d| d as u64).max().unwrap_or(1)
            }),
        // ONNX: the weight `[O, I / group, k..]` (`[I, O / group, k..]` transposed) over its
        // output channels; a pool's window; a product's depth; each input in full for Einsum.
        "Conv" | "ConvInteger" => per(0),
        "ConvTranspose" => per(1),
        "QLinearConv" => shape(3).map_or(1, |s| {
            product(&s) / s.first().map_or(1, |&d| (d as u64).max(1))
        }),
        "QLinearMatMul" | "QGemm" => shape(0).map_or(1, |s| {
            s.iter().rev().take(2).map(|&d| d as u64).max().unwrap_or(1)
        }),
        // The kernel visits the taps inside the input only: at most the input's extent along
        // each spatial axis (a larger window is refused before any work, or mostly padding).
        "MaxPool" | "AveragePool" => {
            let spatial = shape(0).map(|s| s.get(2..).unwrap_or_default().to_vec());
            let kernel = node.attrs.iter().find_map(|(n, v)| match v {
                crate::graph::AttrValue::Ints(k) if n == "kernel_shape" => Some(k.clone()),
                _ => None,
            });
            match (spatial, kernel) {
                (Some(spatial), Some(kernel)) => {
                    kernel.iter().zip(&spatial).fold(1u64, |n, (&k, &d)| {
                        n.saturating_mul(u64::try_from(k).unwrap_or(0).min(d as u64))
                    })
                }
                _ => 1,
            }
        }
        // The channels in reach, at most all of them.
        "LRN" => attr("size").unwrap_or(1).min(
            shape(0)
                .and_then(|s| s.get(1).map(|&c| c as u64))
                .unwrap_or(1),
        ),
        // Each hidden unit of each step: its gates' rows of `W` (`[dirs, gates * hidden, input]`)
        // and `R` (`[dirs, gates * hidden, hidden]`).
        // Packed, `W` is `[dirs, panels, input, 16]` and `R` `[dirs, hidden, width]`.
        "LSTM" | "GRU" | "RNN" => match (shape(1), shape(2)) {
            (Some(w), Some(r)) if w.len() == 3 && r.len() == 3 => {
                let gates = (w[1] / r[2].max(1)) as u64;
                gates.saturating_mul((w[2] + r[2]) as u64)
            }
            (Some(w), Some(r)) if w.len() == 4 && r.len() == 3 => {
                let gates = (r[2] / r[1].max(1)) as u64;
                gates.saturating_mul((w[2] + r[1]) as u64)
            }
            _ => 1,
        },
        "Einsum" => inputs
            .iter()
            .flatten()
            .fold(1u64, |n, (_, s)| n.saturating_mul(product(s))),
        _ => 1,
    };
    taps.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::AttrValue;

    /// `tflite.PAD` of `[2, 3]` by `pads`, to `[3, 5]`.
    fn pad(pads: &[i64]) -> Node {
        Node {
            label: "PAD_0".to_owned(),
            op_type: "tflite.PAD".to_owned(),
            attrs: vec![
                ("pads".to_owned(), AttrValue::Ints(pads.to_vec())),
                ("value".to_owned(), AttrValue::Float(0.0)),
            ],
            inputs: vec![OpInput::Tensor(0)],
            outputs: vec![1],
            scratch: None,
            overwrites: false,
            stage: None,
        }
    }

    #[test]
    fn a_node_runs_once_on_zeros_and_the_kernels_refusal_is_its_error() {
        let tensors = [(DType::F32, vec![2, 3]), (DType::F32, vec![3, 5])];
        let mut work = 1 << 10;
        assert_eq!(
            dry_run(&pad(&[1, 0, 0, 2]), &tensors, &[], &mut work),
            Ok(())
        );
        // The run took its steps: 6 + 15 elements, and one step per output element.
        assert_eq!(work, (1 << 10) - 36);
        let error = dry_run(&pad(&[1, 0, 0, 3]), &tensors, &[], &mut work).unwrap_err();
        assert!(error.contains("does not fit input"), "{error}");
        // Too little work left: not run, so not refused.
        let mut work = 8;
        assert_eq!(
            dry_run(&pad(&[1, 0, 0, 3]), &tensors, &[], &mut work),
            Ok(())
        );
        assert_eq!(work, 8);
        let mut work = 1 << 10;
        // Pads whose sum overflows (the lowering refuses them before): the kernel panicked with
        // overflow checks, which was this node's error; it refuses them itself now.
        let error =
            dry_run(&pad(&[1, 0, i64::MAX, i64::MAX]), &tensors, &[], &mut work).unwrap_err();
        assert!(error.contains("is past the largest size"), "{error}");
    }
}
