//! What the kernels' integration tests hold their operands in: owned tensors ([`Buf`], viewed as
//! the kernels' `Data` and `DataMut`) and owned attributes ([`OwnedAttr`], borrowed as `Attr`s);
//! and the generator their pseudo-random runs draw from ([`Lcg`]). Shared by kernels_ort.rs and
//! kernels_never_panic.rs.

#![allow(dead_code)] // each test file uses part of this

use memplan_kernels::Attr;

/// An owned tensor's elements: the crate's own [`memplan_kernels::OwnedData`] (feature `alloc`, enabled for the
/// tests by the crate's dev-dependency on itself), under the tests' short name.
pub(crate) use memplan_kernels::OwnedData as Buf;

/// What only the tests need of a [`Buf`].
pub(crate) trait BufExt {
    /// Whether `other` has the same element type.
    fn same_type(&self, other: &Buf) -> bool;
    /// A buffer of the same type and length, filled with a sentinel.
    fn blank(&self) -> Buf;
}

impl BufExt for Buf {
    fn same_type(&self, other: &Buf) -> bool {
        self.dtype() == other.dtype()
    }
    fn blank(&self) -> Buf {
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
    /// Strings leaked for the test's run (`Attr::Strs` borrows a slice of `&str`).
    Strs(Vec<&'static str>),
}

impl OwnedAttr {
    pub(crate) fn borrow(&self) -> Attr<'_> {
        match self {
            OwnedAttr::Int(v) => Attr::Int(*v),
            OwnedAttr::Float(v) => Attr::Float(*v),
            OwnedAttr::Str(v) => Attr::Str(v),
            OwnedAttr::Ints(v) => Attr::Ints(v),
            OwnedAttr::Floats(v) => Attr::Floats(v),
            OwnedAttr::Strs(v) => Attr::Strs(v),
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
