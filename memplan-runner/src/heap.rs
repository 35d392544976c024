//! The `--heap` run: the same kernels on the same ops, every tensor in a heap buffer of its own
//! (no sharing, no in-place), driven by the `STEPS` table. Its output must equal the arena run's
//! bit for bit: any difference is a planning or aliasing bug.

use memplan_runner::kernels::{self, Attrs, Input, Output};

use crate::buffer::Buffer;
use crate::network::{INPUT, OUTPUT, STEPS, TENSORS};
use crate::tables::{Ref, StepError};
use crate::weights::Weights;

/// Runs the network on `input` and returns the graph output's buffer.
pub(crate) fn run(input: &Buffer, weights: &Weights, attrs: &[Attrs]) -> Result<Buffer, StepError> {
    let mut buffers: Vec<Option<Buffer>> = vec![None; TENSORS.len()];
    buffers[INPUT] = Some(input.clone());
    for (k, step) in STEPS.iter().enumerate() {
        let mut outs: Vec<Buffer> = step
            .outputs
            .iter()
            .map(|&t| Buffer::zeroed(&TENSORS[t]))
            .collect();
        {
            let inputs: Vec<Input<'_>> = step
                .inputs
                .iter()
                .map(|r| match *r {
                    Ref::Absent => Input::Absent,
                    Ref::Weight(w) => weights.input(w),
                    Ref::Tensor(t) => buffers[t]
                        .as_ref()
                        .expect("the build checks that every tensor is produced before it is read")
                        .input(TENSORS[t].shape),
                })
                .collect();
            let mut outputs: Vec<Output<'_>> = outs
                .iter_mut()
                .zip(step.outputs)
                .map(|(b, &t)| b.output(TENSORS[t].shape))
                .collect();
            kernels::run(step.op_type, &attrs[k], &inputs, &mut outputs)
                .map_err(|e| StepError::new(k, e))?;
        }
        for (buffer, &t) in outs.into_iter().zip(step.outputs) {
            buffers[t] = Some(buffer);
        }
    }
    Ok(buffers[OUTPUT]
        .take()
        .expect("the graph output is produced by some op"))
}
