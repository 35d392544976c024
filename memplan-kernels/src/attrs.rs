//! Node attributes: the ONNX `AttributeProto`s of one node, with typed getters.
//!
//! Everything is borrowed: generated code keeps a node's attributes in a `static`
//! (`Attrs::new(&[("strides", Attr::Ints(&[2, 2])), ..])`), a build script borrows them from the
//! values it decoded.

use crate::error::{KernelError, bail, error};
use crate::tensor::{Dims, dims_filled, push};

/// One attribute value, as ONNX stores it.
///
/// Tensor-valued attributes (`Constant.value`, `ConstantOfShape.value`) are passed as the
/// one-element `Float` or `Int` they hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Attr<'a> {
    /// `INT`.
    Int(i64),
    /// `FLOAT`.
    Float(f32),
    /// `STRING`.
    Str(&'a str),
    /// `INTS`.
    Ints(&'a [i64]),
    /// `FLOATS`.
    Floats(&'a [f32]),
    /// `STRINGS`.
    Strs(&'a [&'a str]),
}

impl Attr<'_> {
    fn type_name(&self) -> &'static str {
        match self {
            Attr::Int(_) => "an int",
            Attr::Float(_) => "a float",
            Attr::Str(_) => "a string",
            Attr::Ints(_) => "a list of ints",
            Attr::Floats(_) => "a list of floats",
            Attr::Strs(_) => "a list of strings",
        }
    }
}

/// The attributes of one node, in file order. Getters look a name up and check its type: an
/// attribute of the wrong type is an error, a missing one gets the default.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Attrs<'a> {
    list: &'a [(&'a str, Attr<'a>)],
}

impl<'a> Attrs<'a> {
    /// Attributes from `(name, value)` pairs; `const`, for `static` tables.
    pub const fn new(list: &'a [(&'a str, Attr<'a>)]) -> Self {
        Attrs { list }
    }

    /// The attribute `name`, if present (the first one, should a name repeat).
    pub fn get(&self, name: &str) -> Option<&'a Attr<'a>> {
        self.list.iter().find(|(n, _)| *n == name).map(|(_, a)| a)
    }

    /// The names and values, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&'a str, &'a Attr<'a>)> {
        self.list.iter().map(|(n, a)| (*n, a))
    }

    fn wrong(name: &str, want: &str, got: &Attr<'_>) -> KernelError {
        error!(
            "attribute `{name}` must be {want}, found {}",
            got.type_name()
        )
    }

    /// The int attribute `name`, or `default`.
    pub fn int(&self, name: &str, default: i64) -> Result<i64, KernelError> {
        Ok(self.opt_int(name)?.unwrap_or(default))
    }

    /// The int attribute `name`, if present.
    pub fn opt_int(&self, name: &str) -> Result<Option<i64>, KernelError> {
        match self.get(name) {
            None => Ok(None),
            Some(Attr::Int(v)) => Ok(Some(*v)),
            Some(a) => Err(Self::wrong(name, "an int", a)),
        }
    }

    /// The float attribute `name` (an int is converted), or `default`.
    pub fn float(&self, name: &str, default: f32) -> Result<f32, KernelError> {
        Ok(self.opt_float(name)?.unwrap_or(default))
    }

    /// The float attribute `name` (an int is converted), if present.
    pub fn opt_float(&self, name: &str) -> Result<Option<f32>, KernelError> {
        match self.get(name) {
            None => Ok(None),
            Some(Attr::Float(v)) => Ok(Some(*v)),
            // an int attribute read as a float
            Some(Attr::Int(v)) => Ok(Some(*v as f32)),
            Some(a) => Err(Self::wrong(name, "a float", a)),
        }
    }

    /// The string attribute `name`, or `default`.
    pub fn str(&self, name: &str, default: &'a str) -> Result<&'a str, KernelError> {
        match self.get(name) {
            None => Ok(default),
            Some(Attr::Str(v)) => Ok(v),
            Some(a) => Err(Self::wrong(name, "a string", a)),
        }
    }

    /// The ints attribute `name`, if present.
    pub fn ints(&self, name: &str) -> Result<Option<&'a [i64]>, KernelError> {
        match self.get(name) {
            None => Ok(None),
            Some(Attr::Ints(v)) => Ok(Some(v)),
            Some(a) => Err(Self::wrong(name, "a list of ints", a)),
        }
    }

    /// The floats attribute `name`, if present.
    pub fn floats(&self, name: &str) -> Result<Option<&'a [f32]>, KernelError> {
        match self.get(name) {
            None => Ok(None),
            Some(Attr::Floats(v)) => Ok(Some(v)),
            Some(a) => Err(Self::wrong(name, "a list of floats", a)),
        }
    }

    /// The strings attribute `name`, if present.
    pub fn strs(&self, name: &str) -> Result<Option<&'a [&'a str]>, KernelError> {
        match self.get(name) {
            None => Ok(None),
            Some(Attr::Strs(v)) => Ok(Some(v)),
            Some(a) => Err(Self::wrong(name, "a list of strings", a)),
        }
    }

    /// The ints attribute `name` as `usize`s of length `len` (at most [`Dims`]' capacity), or
    /// `len` copies of `default`; negative values are an error.
    pub(crate) fn usizes(
        &self,
        name: &str,
        len: usize,
        default: usize,
    ) -> Result<Dims, KernelError> {
        match self.ints(name)? {
            None => dims_filled(default, len),
            Some(v) => {
                if v.len() != len {
                    bail!("attribute `{name}` has {} values, expected {len}", v.len());
                }
                let mut out = Dims::new();
                for &x in v {
                    let Ok(x) = usize::try_from(x) else {
                        bail!("attribute `{name}` has a negative value {x}");
                    };
                    push(&mut out, x)?;
                }
                Ok(out)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ATTRS: Attrs<'static> = Attrs::new(&[
        ("axis", Attr::Int(-1)),
        ("epsilon", Attr::Float(1e-5)),
        ("mode", Attr::Str("linear")),
        ("pads", Attr::Ints(&[1, 1, 2, 2])),
        ("neg", Attr::Ints(&[1, -1])),
    ]);

    #[test]
    fn getters_return_values_or_defaults() {
        let a = ATTRS;
        assert_eq!(a.int("axis", 0).unwrap(), -1);
        assert_eq!(a.int("missing", 7).unwrap(), 7);
        assert_eq!(a.float("epsilon", 0.0).unwrap(), 1e-5);
        assert_eq!(a.float("axis", 0.0).unwrap(), -1.0);
        assert_eq!(a.str("mode", "nearest").unwrap(), "linear");
        assert_eq!(a.str("other", "nearest").unwrap(), "nearest");
        assert_eq!(a.ints("pads").unwrap(), Some(&[1, 1, 2, 2][..]));
        assert_eq!(a.ints("strides").unwrap(), None);
        assert_eq!(&a.usizes("pads", 4, 0).unwrap()[..], &[1, 1, 2, 2]);
        assert_eq!(&a.usizes("strides", 2, 1).unwrap()[..], &[1, 1]);
    }

    #[test]
    fn wrong_types_and_values_are_errors() {
        let a = ATTRS;
        let e = a.int("mode", 0).unwrap_err();
        assert_eq!(
            e.message(),
            "attribute `mode` must be an int, found a string"
        );
        assert!(a.float("pads", 0.0).is_err());
        assert!(a.str("axis", "").is_err());
        assert!(a.ints("axis").is_err());
        assert!(a.floats("pads").is_err());
        assert!(a.strs("mode").is_err());
        assert!(a.usizes("pads", 2, 0).is_err());
        assert!(a.usizes("neg", 2, 0).is_err());
        assert!(
            a.usizes("strides", 99, 1).is_err(),
            "more than MAX_RANK values"
        );
    }
}
