//! What the kernels' integration tests hold their operands in: owned tensors ([`Buf`], viewed as
//! the kernels' `Data` and `DataMut`) and owned attributes ([`OwnedAttr`], borrowed as `Attr`s);
//! and the generator their pseudo-random runs draw from ([`Lcg`]). Shared by kernels_ort.rs and
//! kernels_never_panic.rs.

#![allow(dead_code)] // each test file uses part of this

use memplan_kernels::{Attr, Data, DataMut};

/// An owned tensor's elements.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Buf {
    F32(Vec<f32>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    Bool(Vec<u8>),
    I8(Vec<i8>),
    U8(Vec<u8>),
}

impl Buf {
    pub(crate) fn data(&self) -> Data<'_> {
        match self {
            Buf::F32(d) => Data::F32(d),
            Buf::I64(d) => Data::I64(d),
            Buf::I32(d) => Data::I32(d),
            Buf::Bool(d) => Data::Bool(d),
            Buf::I8(d) => Data::I8(d),
            Buf::U8(d) => Data::U8(d),
        }
    }
    pub(crate) fn data_mut(&mut self) -> DataMut<'_> {
        match self {
            Buf::F32(d) => DataMut::F32(d),
            Buf::I64(d) => DataMut::I64(d),
            Buf::I32(d) => DataMut::I32(d),
            Buf::Bool(d) => DataMut::Bool(d),
            Buf::I8(d) => DataMut::I8(d),
            Buf::U8(d) => DataMut::U8(d),
        }
    }
    pub(crate) fn len(&self) -> usize {
        match self {
            Buf::F32(d) => d.len(),
            Buf::I64(d) => d.len(),
            Buf::I32(d) => d.len(),
            Buf::Bool(d) => d.len(),
            Buf::I8(d) => d.len(),
            Buf::U8(d) => d.len(),
        }
    }
    pub(crate) fn same_type(&self, other: &Buf) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
    /// A buffer of the same type and length, filled with a sentinel.
    pub(crate) fn blank(&self) -> Buf {
        match self {
            Buf::F32(d) => Buf::F32(vec![f32::NAN; d.len()]),
            Buf::I64(d) => Buf::I64(vec![-12345; d.len()]),
            Buf::I32(d) => Buf::I32(vec![-12345; d.len()]),
            Buf::Bool(d) => Buf::Bool(vec![7; d.len()]),
            Buf::I8(d) => Buf::I8(vec![-77; d.len()]),
            Buf::U8(d) => Buf::U8(vec![77; d.len()]),
        }
    }
}

/// An owned attribute value (the kernels borrow them as [`Attr`]s).
#[derive(Debug, Clone)]
pub(crate) enum OwnedAttr {
    Int(i64),
    Float(f32),
    Str(String),
    Ints(Vec<i64>),
    Floats(Vec<f32>),
}

impl OwnedAttr {
    pub(crate) fn borrow(&self) -> Attr<'_> {
        match self {
            OwnedAttr::Int(v) => Attr::Int(*v),
            OwnedAttr::Float(v) => Attr::Float(*v),
            OwnedAttr::Str(v) => Attr::Str(v),
            OwnedAttr::Ints(v) => Attr::Ints(v),
            OwnedAttr::Floats(v) => Attr::Floats(v),
        }
    }
}

/// The `(name, value)` list [`Attrs::new`] borrows.
pub(crate) fn attr_list(attrs: &[(String, OwnedAttr)]) -> Vec<(&str, Attr<'_>)> {
    attrs
        .iter()
        .map(|(n, a)| (n.as_str(), a.borrow()))
        .collect()
}

/// A small deterministic generator (64-bit LCG, high bits).
pub(crate) struct Lcg(pub(crate) u64);

impl Lcg {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    /// A number below `n`.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// An index below `n`.
    pub(crate) fn index(&mut self, n: usize) -> usize {
        usize::try_from(self.next()).unwrap() % n
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[usize::try_from(self.below(items.len() as u64)).unwrap()]
    }
}
