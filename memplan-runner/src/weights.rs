//! The weights, decoded once at start from the bytes the build script wrote (`include_bytes!`,
//! so the binary needs no file but its input) into typed vectors. They are constants: never in
//! the arena.

use memplan_runner::kernels::{DType, Data, Input};

use crate::network::{WEIGHT_BYTES, WEIGHTS};

/// One weight's elements.
enum Values {
    F32(Vec<f32>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    Bool(Vec<u8>),
}

/// Every weight of the network, typed.
pub(crate) struct Weights {
    values: Vec<Values>,
}

impl Weights {
    /// Decodes `WEIGHT_BYTES`.
    pub(crate) fn load() -> Self {
        let values = WEIGHTS
            .iter()
            .map(|w| {
                let bytes = &WEIGHT_BYTES[w.offset..w.offset + w.bytes];
                match w.dtype {
                    DType::F32 => Values::F32(
                        bytes
                            .chunks_exact(4)
                            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                            .collect(),
                    ),
                    DType::I64 => Values::I64(
                        bytes
                            .chunks_exact(8)
                            .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
                            .collect(),
                    ),
                    DType::I32 => Values::I32(
                        bytes
                            .chunks_exact(4)
                            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                            .collect(),
                    ),
                    DType::Bool => Values::Bool(bytes.to_vec()),
                }
            })
            .collect();
        Self { values }
    }

    /// Weight `w` as a kernel input.
    pub(crate) fn input(&self, w: usize) -> Input<'_> {
        let data = match &self.values[w] {
            Values::F32(v) => Data::F32(v),
            Values::I64(v) => Data::I64(v),
            Values::I32(v) => Data::I32(v),
            Values::Bool(v) => Data::Bool(v),
        };
        Input::Value {
            shape: WEIGHTS[w].shape,
            data,
        }
    }
}
