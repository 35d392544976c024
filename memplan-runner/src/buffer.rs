//! A tensor in a heap buffer of its own: the `--heap` run's storage, and the decoded input file.

use memplan_runner::kernels::{DType, Data, DataMut, Input, Output};

use crate::tables::TensorInfo;

/// Elements of one tensor.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Buffer {
    F32(Vec<f32>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    Bool(Vec<u8>),
}

impl Buffer {
    /// A zeroed buffer for `tensor`.
    pub(crate) fn zeroed(tensor: &TensorInfo) -> Self {
        let n = tensor.elements();
        match tensor.dtype {
            DType::F32 => Self::F32(vec![0.0; n]),
            DType::I64 => Self::I64(vec![0; n]),
            DType::I32 => Self::I32(vec![0; n]),
            DType::Bool => Self::Bool(vec![0; n]),
        }
    }

    /// `bytes` (little-endian elements of `tensor`, row-major) decoded; an error names the
    /// expected size when the length is wrong.
    pub(crate) fn from_le_bytes(tensor: &TensorInfo, bytes: &[u8]) -> Result<Self, String> {
        let size = match tensor.dtype {
            DType::F32 | DType::I32 => 4,
            DType::I64 => 8,
            DType::Bool => 1,
        };
        let expected = tensor.elements() * size;
        if bytes.len() != expected {
            return Err(format!(
                "the input file has {} bytes, but the model's input `{}` is {} {:?} = {expected} bytes (raw little-endian, row-major)",
                bytes.len(),
                tensor.name,
                tensor.dtype.name(),
                tensor.shape
            ));
        }
        let word4 = |c: &[u8]| [c[0], c[1], c[2], c[3]];
        Ok(match tensor.dtype {
            DType::F32 => Self::F32(
                bytes
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes(word4(c)))
                    .collect(),
            ),
            DType::I32 => Self::I32(
                bytes
                    .chunks_exact(4)
                    .map(|c| i32::from_le_bytes(word4(c)))
                    .collect(),
            ),
            DType::I64 => Self::I64(
                bytes
                    .chunks_exact(8)
                    .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
                    .collect(),
            ),
            DType::Bool => Self::Bool(bytes.to_vec()),
        })
    }

    /// Its elements.
    pub(crate) fn data(&self) -> Data<'_> {
        match self {
            Self::F32(v) => Data::F32(v),
            Self::I64(v) => Data::I64(v),
            Self::I32(v) => Data::I32(v),
            Self::Bool(v) => Data::Bool(v),
        }
    }

    /// As a kernel input of `shape`.
    pub(crate) fn input<'a>(&'a self, shape: &'a [usize]) -> Input<'a> {
        Input::Value {
            shape,
            data: self.data(),
        }
    }

    /// As a kernel output of `shape`.
    pub(crate) fn output<'a>(&'a mut self, shape: &'a [usize]) -> Output<'a> {
        let data = match self {
            Self::F32(v) => DataMut::F32(v),
            Self::I64(v) => DataMut::I64(v),
            Self::I32(v) => DataMut::I32(v),
            Self::Bool(v) => DataMut::Bool(v),
        };
        Output { shape, data }
    }

    /// Copies its elements into `view` (same type and length, checked by the build).
    pub(crate) fn copy_into(&self, view: DataMut<'_>) -> Result<(), String> {
        match (self, view) {
            (Self::F32(s), DataMut::F32(d)) if s.len() == d.len() => d.copy_from_slice(s),
            (Self::I64(s), DataMut::I64(d)) if s.len() == d.len() => d.copy_from_slice(s),
            (Self::I32(s), DataMut::I32(d)) if s.len() == d.len() => d.copy_from_slice(s),
            (Self::Bool(s), DataMut::Bool(d)) if s.len() == d.len() => d.copy_from_slice(s),
            _ => return Err("the input does not fit its arena view".to_owned()),
        }
        Ok(())
    }
}

/// `data` as f32 values (integers converted), for the output file.
#[allow(clippy::cast_precision_loss)] // an integer output is written as float32, as documented
pub(crate) fn to_f32(data: Data<'_>) -> Vec<f32> {
    match data {
        Data::F32(v) => v.to_vec(),
        Data::I64(v) => v.iter().map(|&x| x as f32).collect(),
        Data::I32(v) => v.iter().map(|&x| x as f32).collect(),
        Data::Bool(v) => v.iter().map(|&x| f32::from(x)).collect(),
    }
}
