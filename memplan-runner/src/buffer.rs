//! A value in a heap buffer of its own: the `--heap` run's storage, the decoded input file and
//! the arena run's outputs.

use memplan_kernels::program::Value as TensorInfo;
use memplan_kernels::{DType, Data, DataMut, Input, Output};

/// Elements of one tensor.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Buffer {
    F32(Vec<f32>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    Bool(Vec<u8>),
    I8(Vec<i8>),
    U8(Vec<u8>),
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
            DType::I8 => Self::I8(vec![0; n]),
            DType::U8 => Self::U8(vec![0; n]),
        }
    }

    /// `bytes` (little-endian elements of `tensor`, row-major) decoded; an error names the
    /// expected size when the length is wrong.
    pub(crate) fn from_le_bytes(tensor: &TensorInfo, bytes: &[u8]) -> Result<Self, String> {
        let size = tensor.dtype.size();
        let expected = tensor.elements() * size;
        if bytes.len() != expected {
            return Err(format!(
                "the input file has {} bytes, but the model's input `{}` is {} {:?} = {expected} bytes (raw little-endian, row-major)",
                bytes.len(),
                tensor.onnx,
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
            DType::I8 => Self::I8(bytes.iter().map(|&b| b.cast_signed()).collect()),
            DType::U8 => Self::U8(bytes.to_vec()),
        })
    }

    /// Its elements.
    pub(crate) fn data(&self) -> Data<'_> {
        match self {
            Self::F32(v) => Data::F32(v),
            Self::I64(v) => Data::I64(v),
            Self::I32(v) => Data::I32(v),
            Self::Bool(v) => Data::Bool(v),
            Self::I8(v) => Data::I8(v),
            Self::U8(v) => Data::U8(v),
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
        Output {
            shape,
            data: self.data_mut(),
        }
    }

    /// Bytes of its elements.
    pub(crate) fn byte_len(&self) -> usize {
        match self {
            Self::F32(v) => v.len() * 4,
            Self::I64(v) => v.len() * 8,
            Self::I32(v) => v.len() * 4,
            Self::Bool(v) => v.len(),
            Self::I8(v) => v.len(),
            Self::U8(v) => v.len(),
        }
    }

    /// Whether `other` holds the same elements, bit for bit (NaNs and signed zeros included).
    pub(crate) fn same_bits(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::F32(a), Self::F32(b)) => a
                .iter()
                .map(|x| x.to_bits())
                .eq(b.iter().map(|x| x.to_bits())),
            _ => self == other,
        }
    }

    /// Its elements, writable.
    pub(crate) fn data_mut(&mut self) -> DataMut<'_> {
        match self {
            Self::F32(v) => DataMut::F32(v),
            Self::I64(v) => DataMut::I64(v),
            Self::I32(v) => DataMut::I32(v),
            Self::Bool(v) => DataMut::Bool(v),
            Self::I8(v) => DataMut::I8(v),
            Self::U8(v) => DataMut::U8(v),
        }
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
        Data::I8(v) => v.iter().map(|&x| f32::from(x)).collect(),
        Data::U8(v) => v.iter().map(|&x| f32::from(x)).collect(),
    }
}
