//! Lifetimes from a schedule (the patent's claim 2): when each tensor must be in memory.
//!
//! Ops run in order, op `k` at step `k`. A tensor is live from the step of the op that produces
//! it through the step of the last op that reads it, so its lifetime is `[producer, last_read + 1)`.
//! Graph inputs are live from step 0 (the caller fills them before the first op), graph outputs
//! through the last step (the caller reads them after the last op), and an op's scratch tensors
//! only while it runs: `[k, k + 1)`.
//!
//! ```text
//!  op:      0: conv   1: relu   2: dense
//!  input    [=======)                    graph input: from step 0
//!  conv     [=================)          produced at 0, last read at 1
//!  relu               [=================) read at 2, and a graph output: through the end
//!  scratch                      [=======) scratch of op 2
//! ```

use std::fmt;

use crate::model::Lifetime;

/// The tensor references of one op, as indices into the model's tensors.
#[derive(Clone, Copy, Debug)]
pub struct OpTensors<'a> {
    /// Tensors the op reads; the same one may appear twice.
    pub inputs: &'a [usize],
    /// Tensors the op writes.
    pub outputs: &'a [usize],
    /// Tensors live only while the op runs.
    pub scratch: &'a [usize],
}

/// The schedule lifetimes are derived from: how many tensors, which are graph inputs and outputs,
/// and the ops in execution order.
#[derive(Clone, Copy, Debug)]
pub struct Schedule<'a> {
    /// Number of tensors; references are indices below it.
    pub tensors: usize,
    /// Graph inputs, live from step 0.
    pub inputs: &'a [usize],
    /// Graph outputs, live through the last step.
    pub outputs: &'a [usize],
    /// The ops, op `k` running at step `k`.
    pub ops: &'a [OpTensors<'a>],
}

/// Which list of an op a reference is in, and where in that list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `inputs[i]`.
    Input(usize),
    /// `outputs[i]`.
    Output(usize),
    /// `scratch[i]`.
    Scratch(usize),
}

/// Who first produced a tensor that is produced again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Producer {
    /// It is a graph input: the caller writes it.
    GraphInput,
    /// The op with this index writes it.
    Op(usize),
}

/// Why a schedule gives no lifetimes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LifetimeError {
    /// There are no ops, so there is nothing to run.
    NoOps,
    /// Op `op` reads `tensor` before any op produced it (`produced_at` is the op that produces it
    /// later, or the same op, if any), and it is not a graph input.
    ReadBeforeProduced {
        /// The reading op.
        op: usize,
        /// Where in its inputs.
        role: Role,
        /// The tensor.
        tensor: usize,
        /// The op that produces it, at or after `op`, if any.
        produced_at: Option<usize>,
    },
    /// Op `op` writes `tensor`, which already has a producer.
    ProducedTwice {
        /// The second producer.
        op: usize,
        /// Where in its outputs.
        role: Role,
        /// The tensor.
        tensor: usize,
        /// The first producer.
        first: Producer,
    },
    /// A scratch tensor is also used elsewhere (another op, an input or output, or the graph's
    /// inputs or outputs): scratch is private to one op.
    SharedScratch {
        /// The op where the conflicting reference is.
        op: usize,
        /// The conflicting reference.
        role: Role,
        /// The tensor.
        tensor: usize,
    },
    /// No op touches a tensor that is neither a graph input nor a graph output.
    Untouched {
        /// The tensor.
        tensor: usize,
    },
    /// A graph output that no op produces and that is not a graph input.
    OutputNeverProduced {
        /// Its index in the graph outputs.
        position: usize,
        /// The tensor.
        tensor: usize,
    },
}

impl fmt::Display for LifetimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoOps => f.write_str("the model has no ops"),
            Self::ReadBeforeProduced { op, tensor, .. } => {
                write!(f, "op {op} reads tensor {tensor} before it is produced")
            }
            Self::ProducedTwice { op, tensor, .. } => {
                write!(
                    f,
                    "op {op} produces tensor {tensor}, which is already produced"
                )
            }
            Self::SharedScratch { op, tensor, .. } => {
                write!(
                    f,
                    "scratch tensor {tensor} of op {op} is also used elsewhere"
                )
            }
            Self::Untouched { tensor } => write!(f, "no op touches tensor {tensor}"),
            Self::OutputNeverProduced { tensor, .. } => {
                write!(f, "graph output {tensor} is never produced")
            }
        }
    }
}

impl std::error::Error for LifetimeError {}

/// The lifetime of every tensor (in tensor order) of a schedule, or the first reason there is
/// none. Every lifetime is non-empty.
///
/// # Runtime
/// `O(t + r)` for `t` tensors and `r` references.
pub fn derive_lifetimes(schedule: &Schedule<'_>) -> Result<Vec<Lifetime>, LifetimeError> {
    if schedule.ops.is_empty() {
        return Err(LifetimeError::NoOps);
    }
    let n = schedule.tensors;
    let last_step = schedule.ops.len() as u64;
    let mut is_input = vec![false; n];
    let mut is_output = vec![false; n];
    for &t in schedule.inputs {
        is_input[t] = true;
    }
    for &t in schedule.outputs {
        is_output[t] = true;
    }
    let mut producer: Vec<Option<usize>> = vec![None; n];
    let mut scratch_of: Vec<Option<usize>> = vec![None; n];
    let mut touched = vec![false; n];
    // The last step (exclusive end) at which an op uses the tensor.
    let mut end: Vec<u64> = vec![0; n];

    let later_producer = |tensor: usize, from: usize| {
        (from..schedule.ops.len()).find(|&j| schedule.ops[j].outputs.contains(&tensor))
    };

    for (k, op) in schedule.ops.iter().enumerate() {
        let step_end = k as u64 + 1;
        for (i, &t) in op.inputs.iter().enumerate() {
            if scratch_of[t].is_some() {
                return Err(LifetimeError::SharedScratch {
                    op: k,
                    role: Role::Input(i),
                    tensor: t,
                });
            }
            if !is_input[t] && producer[t].is_none() {
                return Err(LifetimeError::ReadBeforeProduced {
                    op: k,
                    role: Role::Input(i),
                    tensor: t,
                    produced_at: later_producer(t, k),
                });
            }
            touched[t] = true;
            end[t] = step_end;
        }
        for (i, &t) in op.outputs.iter().enumerate() {
            if scratch_of[t].is_some() {
                return Err(LifetimeError::SharedScratch {
                    op: k,
                    role: Role::Output(i),
                    tensor: t,
                });
            }
            let first = match producer[t] {
                Some(j) => Some(Producer::Op(j)),
                None if is_input[t] => Some(Producer::GraphInput),
                None => None,
            };
            if let Some(first) = first {
                return Err(LifetimeError::ProducedTwice {
                    op: k,
                    role: Role::Output(i),
                    tensor: t,
                    first,
                });
            }
            producer[t] = Some(k);
            touched[t] = true;
            end[t] = step_end;
        }
        for (i, &t) in op.scratch.iter().enumerate() {
            if touched[t] || is_input[t] || is_output[t] {
                return Err(LifetimeError::SharedScratch {
                    op: k,
                    role: Role::Scratch(i),
                    tensor: t,
                });
            }
            scratch_of[t] = Some(k);
            touched[t] = true;
            end[t] = step_end;
        }
    }

    for (position, &t) in schedule.outputs.iter().enumerate() {
        if producer[t].is_none() && !is_input[t] {
            return Err(LifetimeError::OutputNeverProduced {
                position,
                tensor: t,
            });
        }
    }

    (0..n)
        .map(|t| {
            if !touched[t] && !is_input[t] && !is_output[t] {
                return Err(LifetimeError::Untouched { tensor: t });
            }
            let start = if is_input[t] {
                0
            } else {
                producer[t].or(scratch_of[t]).map_or(0, |k| k as u64)
            };
            let mut stop = end[t].max(start + 1);
            if is_output[t] {
                stop = last_step.max(start + 1);
            }
            Ok(Lifetime::new(start, stop))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op<'a>(inputs: &'a [usize], outputs: &'a [usize], scratch: &'a [usize]) -> OpTensors<'a> {
        OpTensors {
            inputs,
            outputs,
            scratch,
        }
    }

    #[test]
    fn lifetimes_follow_claim_two() {
        // tensors: 0 input, 1 conv, 2 relu, 3 scratch
        let ops = [
            op(&[0], &[1], &[]),
            op(&[1], &[2], &[]),
            op(&[2, 2], &[], &[3]),
        ];
        let schedule = Schedule {
            tensors: 4,
            inputs: &[0],
            outputs: &[2],
            ops: &ops,
        };
        assert_eq!(
            derive_lifetimes(&schedule).unwrap(),
            vec![
                Lifetime::new(0, 1),
                Lifetime::new(0, 2),
                Lifetime::new(1, 3),
                Lifetime::new(2, 3),
            ]
        );
    }

    #[test]
    fn an_output_nobody_reads_lives_through_its_op() {
        let ops = [op(&[0], &[1, 2], &[]), op(&[1], &[3], &[])];
        let schedule = Schedule {
            tensors: 4,
            inputs: &[0],
            outputs: &[3],
            ops: &ops,
        };
        let lifetimes = derive_lifetimes(&schedule).unwrap();
        assert_eq!(lifetimes[2], Lifetime::new(0, 1));
        assert_eq!(lifetimes[3], Lifetime::new(1, 2));
    }

    #[test]
    fn bad_schedules_name_the_reference() {
        let read_early = [op(&[1], &[2], &[]), op(&[0], &[1], &[])];
        let schedule = Schedule {
            tensors: 3,
            inputs: &[0],
            outputs: &[2],
            ops: &read_early,
        };
        assert_eq!(
            derive_lifetimes(&schedule),
            Err(LifetimeError::ReadBeforeProduced {
                op: 0,
                role: Role::Input(0),
                tensor: 1,
                produced_at: Some(1)
            })
        );

        let twice = [op(&[0], &[1], &[]), op(&[0], &[1], &[])];
        let schedule = Schedule {
            tensors: 2,
            inputs: &[0],
            outputs: &[1],
            ops: &twice,
        };
        assert_eq!(
            derive_lifetimes(&schedule),
            Err(LifetimeError::ProducedTwice {
                op: 1,
                role: Role::Output(0),
                tensor: 1,
                first: Producer::Op(0)
            })
        );

        let writes_input = [op(&[], &[0], &[])];
        let schedule = Schedule {
            tensors: 1,
            inputs: &[0],
            outputs: &[],
            ops: &writes_input,
        };
        assert!(matches!(
            derive_lifetimes(&schedule),
            Err(LifetimeError::ProducedTwice {
                first: Producer::GraphInput,
                ..
            })
        ));

        let untouched = [op(&[0], &[1], &[])];
        let schedule = Schedule {
            tensors: 3,
            inputs: &[0],
            outputs: &[1],
            ops: &untouched,
        };
        assert_eq!(
            derive_lifetimes(&schedule),
            Err(LifetimeError::Untouched { tensor: 2 })
        );

        let shared = [op(&[0], &[1], &[2]), op(&[1], &[3], &[2])];
        let schedule = Schedule {
            tensors: 4,
            inputs: &[0],
            outputs: &[3],
            ops: &shared,
        };
        assert!(matches!(
            derive_lifetimes(&schedule),
            Err(LifetimeError::SharedScratch { op: 1, .. })
        ));

        let never = [op(&[0], &[1], &[])];
        let schedule = Schedule {
            tensors: 3,
            inputs: &[0],
            outputs: &[2],
            ops: &never,
        };
        assert!(matches!(
            derive_lifetimes(&schedule),
            Err(LifetimeError::OutputNeverProduced { tensor: 2, .. })
        ));

        let schedule = Schedule {
            tensors: 0,
            inputs: &[],
            outputs: &[],
            ops: &[],
        };
        assert_eq!(derive_lifetimes(&schedule), Err(LifetimeError::NoOps));
    }
}
