//! Owned tensor elements ([`OwnedData`], feature `alloc`): the heap-allocated counterpart of the
//! borrowed views [`Data`] and [`DataMut`], for callers on a host that keep values in buffers of
//! their own (memplan-runner's `--heap` run and its decoded input file, memplan-build's constant
//! folding, the kernels' integration tests). No kernel uses it: the kernels stay allocation-free.

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use crate::{DType, Data, DataMut, Input, Output};

/// The elements of one tensor, owned, one variant per [`DType`] (the same variants as [`Data`]).
/// The shape is the caller's: it is given when the buffer is viewed as an [`Input`] or an
/// [`Output`].
#[derive(Clone, Debug, PartialEq)]
pub enum OwnedData {
    /// `float32` elements.
    F32(Vec<f32>),
    /// `int64` elements.
    I64(Vec<i64>),
    /// `int32` elements.
    I32(Vec<i32>),
    /// `bool` elements, one byte each, 0 or 1.
    Bool(Vec<u8>),
    /// `int8` elements.
    I8(Vec<i8>),
    /// `uint8` elements.
    U8(Vec<u8>),
}

/// Bytes that are not a whole number of elements of their type ([`OwnedData::from_le_bytes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteLengthError {
    /// The element type the bytes were decoded as.
    pub dtype: DType,
    /// How many bytes there were.
    pub bytes: usize,
}

impl fmt::Display for ByteLengthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} bytes are not a whole number of {} elements ({} bytes each)",
            self.bytes,
            self.dtype.name(),
            self.dtype.size()
        )
    }
}

impl core::error::Error for ByteLengthError {}

/// `bytes` (a whole number of `N`-byte words) decoded by `decode`.
fn words<const N: usize, T>(bytes: &[u8], decode: fn([u8; N]) -> T) -> Vec<T> {
    bytes
        .chunks_exact(N)
        .map(|c| {
            let mut word = [0; N];
            word.copy_from_slice(c);
            decode(word)
        })
        .collect()
}

impl OwnedData {
    /// `n` zero elements of `dtype` (0.0 for `float32`, `false` for `bool`).
    pub fn zeroed(dtype: DType, n: usize) -> Self {
        match dtype {
            DType::F32 => Self::F32(vec![0.0; n]),
            DType::I64 => Self::I64(vec![0; n]),
            DType::I32 => Self::I32(vec![0; n]),
            DType::Bool => Self::Bool(vec![0; n]),
            DType::I8 => Self::I8(vec![0; n]),
            DType::U8 => Self::U8(vec![0; n]),
        }
    }

    /// `bytes` decoded as little-endian elements of `dtype`, one after the other (a `bool` or
    /// `uint8` byte is copied as it is, an `int8` one reinterpreted).
    ///
    /// # Errors
    /// When `bytes.len()` is not a multiple of the element's size (`dtype.size()`).
    pub fn from_le_bytes(dtype: DType, bytes: &[u8]) -> Result<Self, ByteLengthError> {
        if !bytes.len().is_multiple_of(dtype.size()) {
            return Err(ByteLengthError {
                dtype,
                bytes: bytes.len(),
            });
        }
        Ok(match dtype {
            DType::F32 => Self::F32(words(bytes, f32::from_le_bytes)),
            DType::I64 => Self::I64(words(bytes, i64::from_le_bytes)),
            DType::I32 => Self::I32(words(bytes, i32::from_le_bytes)),
            DType::Bool => Self::Bool(bytes.to_vec()),
            DType::I8 => Self::I8(bytes.iter().map(|&b| b.cast_signed()).collect()),
            DType::U8 => Self::U8(bytes.to_vec()),
        })
    }

    /// The elements as little-endian bytes, one after the other: what
    /// [`from_le_bytes`](Self::from_le_bytes) decodes back to the same bits.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        match self {
            Self::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Self::I64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Self::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Self::Bool(v) | Self::U8(v) => v.clone(),
            Self::I8(v) => v.iter().map(|x| x.cast_unsigned()).collect(),
        }
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.data().dtype()
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.data().len()
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of its elements (`len() * dtype().size()`).
    pub fn byte_len(&self) -> usize {
        self.len() * self.dtype().size()
    }

    /// Its elements, read-only.
    pub fn data(&self) -> Data<'_> {
        match self {
            Self::F32(v) => Data::F32(v),
            Self::I64(v) => Data::I64(v),
            Self::I32(v) => Data::I32(v),
            Self::Bool(v) => Data::Bool(v),
            Self::I8(v) => Data::I8(v),
            Self::U8(v) => Data::U8(v),
        }
    }

    /// Its elements, writable.
    pub fn data_mut(&mut self) -> DataMut<'_> {
        match self {
            Self::F32(v) => DataMut::F32(v),
            Self::I64(v) => DataMut::I64(v),
            Self::I32(v) => DataMut::I32(v),
            Self::Bool(v) => DataMut::Bool(v),
            Self::I8(v) => DataMut::I8(v),
            Self::U8(v) => DataMut::U8(v),
        }
    }

    /// As a kernel input of `shape` ([`Input::Value`]).
    pub fn input<'a>(&'a self, shape: &'a [usize]) -> Input<'a> {
        Input::Value {
            shape,
            data: self.data(),
        }
    }

    /// As a kernel output of `shape`.
    pub fn output<'a>(&'a mut self, shape: &'a [usize]) -> Output<'a> {
        Output {
            shape,
            data: self.data_mut(),
        }
    }

    /// Whether `other` holds the same elements of the same type, bit for bit: a NaN equals a
    /// NaN of the same bits, -0.0 does not equal +0.0 (unlike `==`, which compares floats as
    /// IEEE 754 numbers).
    pub fn same_bits(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::F32(a), Self::F32(b)) => a
                .iter()
                .map(|x| x.to_bits())
                .eq(b.iter().map(|x| x.to_bits())),
            _ => self == other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    const ALL: [DType; 6] = [
        DType::F32,
        DType::I64,
        DType::I32,
        DType::Bool,
        DType::I8,
        DType::U8,
    ];

    #[test]
    fn zeroed_has_the_type_the_length_and_zero_bytes() {
        for dtype in ALL {
            let z = OwnedData::zeroed(dtype, 5);
            assert_eq!(z.dtype(), dtype);
            assert_eq!(z.data().dtype(), dtype);
            assert_eq!(z.len(), 5);
            assert!(!z.is_empty());
            assert_eq!(z.byte_len(), 5 * dtype.size());
            assert_eq!(z.to_le_bytes(), vec![0; 5 * dtype.size()]);
            assert!(OwnedData::zeroed(dtype, 0).is_empty());
        }
    }

    #[test]
    fn decodes_little_endian_elements() {
        let bytes = [0x01, 0x02, 0x03, 0x84, 0xff, 0x00, 0x00, 0x80];
        assert_eq!(
            OwnedData::from_le_bytes(DType::I32, &bytes),
            Ok(OwnedData::I32(vec![
                i32::from_le_bytes([0x01, 0x02, 0x03, 0x84]),
                i32::MIN + 255
            ]))
        );
        assert_eq!(
            OwnedData::from_le_bytes(DType::I64, &bytes),
            Ok(OwnedData::I64(vec![i64::from_le_bytes(bytes)]))
        );
        assert_eq!(
            OwnedData::from_le_bytes(DType::F32, &1.5f32.to_le_bytes()),
            Ok(OwnedData::F32(vec![1.5]))
        );
        assert_eq!(
            OwnedData::from_le_bytes(DType::I8, &[0xff, 0x80, 0x7f]),
            Ok(OwnedData::I8(vec![-1, -128, 127]))
        );
        assert_eq!(
            OwnedData::from_le_bytes(DType::U8, &[0xff, 0x80]),
            Ok(OwnedData::U8(vec![255, 128]))
        );
        assert_eq!(
            OwnedData::from_le_bytes(DType::Bool, &[1, 0]),
            Ok(OwnedData::Bool(vec![1, 0]))
        );
    }

    #[test]
    fn bytes_round_trip_bit_for_bit() {
        let bytes: Vec<u8> = (0..48u8).map(|b| b.wrapping_mul(37) ^ 0xa5).collect();
        for dtype in ALL {
            let decoded = OwnedData::from_le_bytes(dtype, &bytes).unwrap();
            assert_eq!(decoded.dtype(), dtype);
            assert_eq!(decoded.len(), 48 / dtype.size());
            assert_eq!(decoded.byte_len(), 48);
            assert_eq!(decoded.to_le_bytes(), bytes, "{dtype:?}");
        }
    }

    #[test]
    fn a_partial_element_is_an_error_naming_the_sizes() {
        for (dtype, len) in [(DType::F32, 6), (DType::I64, 4), (DType::I32, 1)] {
            let err = OwnedData::from_le_bytes(dtype, &vec![0; len]).unwrap_err();
            assert_eq!(err, ByteLengthError { dtype, bytes: len });
        }
        assert_eq!(
            OwnedData::from_le_bytes(DType::I64, &[0; 12])
                .unwrap_err()
                .to_string(),
            "12 bytes are not a whole number of int64 elements (8 bytes each)"
        );
        assert!(
            OwnedData::from_le_bytes(DType::I64, &[])
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn views_are_the_elements() {
        let mut t = OwnedData::I32(vec![1, 2, 3, 4, 5, 6]);
        let shape = [2, 3];
        match t.input(&shape) {
            Input::Value {
                shape,
                data: Data::I32(d),
            } => {
                assert_eq!(shape, &[2, 3]);
                assert_eq!(d, &[1, 2, 3, 4, 5, 6]);
            }
            other => panic!("{other:?}"),
        }
        {
            let out = t.output(&shape);
            assert_eq!(out.shape, &[2, 3]);
            let DataMut::I32(d) = out.data else {
                panic!("not int32")
            };
            d[4] = 50;
        }
        let DataMut::I32(d) = t.data_mut() else {
            panic!("not int32")
        };
        d[0] = 10;
        assert_eq!(t, OwnedData::I32(vec![10, 2, 3, 4, 50, 6]));
    }

    #[test]
    fn same_bits_tells_nans_and_signed_zeros_apart() {
        let a = OwnedData::F32(vec![f32::NAN, -0.0, 1.0]);
        assert!(a.same_bits(&a.clone()));
        // `==` says a NaN is never equal and -0 equals +0; the bits say the opposite.
        assert_ne!(a, a.clone());
        assert!(!a.same_bits(&OwnedData::F32(vec![f32::NAN, 0.0, 1.0])));
        assert!(OwnedData::F32(vec![-0.0]) == OwnedData::F32(vec![0.0]));
        assert!(!OwnedData::F32(vec![f32::NAN]).same_bits(&OwnedData::F32(vec![-f32::NAN])));
        assert!(!a.same_bits(&OwnedData::F32(vec![f32::NAN, -0.0])));
        // Same bytes, another type: not the same.
        assert!(!OwnedData::U8(vec![1]).same_bits(&OwnedData::Bool(vec![1])));
        assert!(!OwnedData::I8(vec![0]).same_bits(&OwnedData::U8(vec![0])));
        assert!(OwnedData::I64(vec![-5]).same_bits(&OwnedData::I64(vec![-5])));
        assert!(!OwnedData::I64(vec![-5]).same_bits(&OwnedData::I64(vec![5])));
    }
}
