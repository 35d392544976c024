//! The `--heap` run: the same kernels on the same nodes, every value in a heap buffer of its own
//! (no sharing, no in-place), driven by the generated tables (`net::network`). Its outputs must
//! equal the arena run's bit for bit: any difference is a planning or aliasing bug.

use memplan_kernels::program::{Operand, RunError};
use memplan_kernels::{self as kernels, DType, Data, Input, KernelError, Output, OwnedData};

use crate::buffer;
use crate::network::net::network::{CONSTANTS, NODES, OUTPUTS, VALUES, constant_bytes};

/// Constant `c` as a kernel input, read in place.
fn constant(c: usize) -> Result<Input<'static>, KernelError> {
    let info = &CONSTANTS[c];
    let n: usize = info.shape.iter().product();
    let bytes = constant_bytes();
    let data = match info.dtype {
        DType::F32 => Data::F32(kernels::program::constant(bytes, info.offset, n)?),
        DType::I64 => Data::I64(kernels::program::constant(bytes, info.offset, n)?),
        DType::I32 => Data::I32(kernels::program::constant(bytes, info.offset, n)?),
        DType::Bool => Data::Bool(kernels::program::constant(bytes, info.offset, n)?),
        DType::I8 => Data::I8(kernels::program::constant(bytes, info.offset, n)?),
        DType::U8 => Data::U8(kernels::program::constant(bytes, info.offset, n)?),
    };
    Ok(Input::Value {
        shape: info.shape,
        data,
    })
}

/// Runs the network on `inputs` (graph order; value indices and buffers) and returns the graph
/// outputs' buffers, in graph order. With `profile`, adds each node's CPU seconds (its kernel
/// call only) to `profile[node]`.
#[allow(clippy::result_large_err)] // the kernels' error is a fixed-size message, never boxed
pub(crate) fn run(
    inputs: &[(usize, OwnedData)],
    mut profile: Option<&mut [f64]>,
) -> Result<Vec<OwnedData>, RunError> {
    let mut buffers: Vec<Option<OwnedData>> = vec![None; VALUES.len()];
    for (v, buffer) in inputs {
        buffers[*v] = Some(buffer.clone());
    }
    for (k, node) in NODES.iter().enumerate() {
        let fail = |e| RunError::new(k, node.name, e);
        let mut outs: Vec<OwnedData> = node
            .outputs
            .iter()
            .map(|&v| buffer::zeroed(&VALUES[v]))
            .collect();
        let mut scratch = vec![0u64; node.scratch];
        if profile.is_some() {
            // Fresh zeroed memory is mapped on its first write: touched before the clock
            // starts, so that a node's time is its kernel's, not the page faults'.
            for out in &mut outs {
                *out = OwnedData::from_le_bytes(out.dtype(), &vec![0; out.byte_len()])
                    .map_err(|_| fail(KernelError::new("an output buffer of the wrong size")))?;
            }
            for word in scratch.iter_mut().step_by(512) {
                // `black_box`: a zero the compiler cannot see, so the store into memory already
                // zeroed is not dropped.
                *word = std::hint::black_box(0);
            }
        }
        {
            let mut views = Vec::with_capacity(node.inputs.len());
            for operand in node.inputs {
                views.push(match *operand {
                    Operand::Absent => Input::Absent,
                    Operand::Constant(c) => constant(c).map_err(fail)?,
                    Operand::Value(v) => match &buffers[v] {
                        Some(buffer) => buffer.input(VALUES[v].shape),
                        None => {
                            return Err(fail(KernelError::new(
                                "an input is read before it is computed",
                            )));
                        }
                    },
                });
            }
            let mut outputs: Vec<Output<'_>> = outs
                .iter_mut()
                .zip(node.outputs)
                .map(|(b, &v)| b.output(VALUES[v].shape))
                .collect();
            let started = profile.as_ref().map(|_| crate::clock::cpu_seconds());
            kernels::run(
                node.op_type,
                &node.attrs,
                &views,
                &mut outputs,
                &mut scratch,
            )
            .map_err(fail)?;
            if let (Some(times), Some(started)) = (profile.as_deref_mut(), started) {
                times[k] += crate::clock::cpu_seconds() - started;
            }
        }
        for (buffer, &v) in outs.into_iter().zip(node.outputs) {
            buffers[v] = Some(buffer);
        }
    }
    OUTPUTS
        .iter()
        .map(|&v| {
            buffers[v].take().ok_or_else(|| {
                RunError::new(
                    usize::MAX,
                    "outputs",
                    KernelError::new("an output is never computed"),
                )
            })
        })
        .collect()
}
