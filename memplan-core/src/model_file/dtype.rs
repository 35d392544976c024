//! Element types of typed tensors, their sizes, and the Rust types the generated views use.

use std::fmt;
use std::str::FromStr;

/// The element type of a tensor, as written in a model file (`dtype = "f32"`).
///
/// Half-precision floats (`f16`, `bf16`) are exposed to Rust as their raw bits in a `u16`, and
/// `bool` as a `u8` holding 0 or 1: the arena's bytes are reused by other tensors, so a view may
/// see any bit pattern, which is only sound for types where every pattern is valid.
// The facade has the same table (`memplan::DType`, src/tables.rs), written twice on purpose: a
// user's binary links the facade and never this crate, and this crate cannot depend on the
// facade (the facade depends on the macro, which depends on this crate). The generated code
// names the facade's variants after these (`codegen::tables`), and the root crate's
// tests/test_dtype_tables.rs checks that both have the same dtypes, names and sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// 32-bit IEEE float.
    F32,
    /// 64-bit IEEE float.
    F64,
    /// 16-bit IEEE float, viewed as `u16` bits.
    F16,
    /// 16-bit brain float, viewed as `u16` bits.
    Bf16,
    /// Signed byte.
    I8,
    /// Unsigned byte.
    U8,
    /// Signed 16-bit integer.
    I16,
    /// Unsigned 16-bit integer.
    U16,
    /// Signed 32-bit integer.
    I32,
    /// Unsigned 32-bit integer.
    U32,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 64-bit integer.
    U64,
    /// Boolean, one byte, viewed as `u8` (0 or 1).
    Bool,
}

impl DType {
    /// Every dtype, in the order of the README's table.
    pub const ALL: [DType; 13] = [
        DType::F32,
        DType::F64,
        DType::F16,
        DType::Bf16,
        DType::I8,
        DType::U8,
        DType::I16,
        DType::U16,
        DType::I32,
        DType::U32,
        DType::I64,
        DType::U64,
        DType::Bool,
    ];

    /// The name used in model files.
    pub const fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::F16 => "f16",
            DType::Bf16 => "bf16",
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::I16 => "i16",
            DType::U16 => "u16",
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::I64 => "i64",
            DType::U64 => "u64",
            DType::Bool => "bool",
        }
    }

    /// Bytes per element.
    pub const fn size(self) -> u64 {
        match self {
            DType::I8 | DType::U8 | DType::Bool => 1,
            DType::F16 | DType::Bf16 | DType::I16 | DType::U16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 | DType::U64 => 8,
        }
    }

    /// The alignment the element type needs: its size (true of every dtype here on the targets
    /// Rust supports, and never more than the 16 bytes models default to).
    pub const fn alignment(self) -> u64 {
        self.size()
    }

    /// The Rust element type of the generated views (`f32`, `u16` for `f16`, `u8` for `bool`, ...).
    pub const fn rust_type(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::F16 | DType::Bf16 | DType::U16 => "u16",
            DType::I8 => "i8",
            DType::U8 | DType::Bool => "u8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::I64 => "i64",
            DType::U64 => "u64",
        }
    }

    /// The dtype names, comma separated, for error messages.
    pub fn known_names() -> String {
        DType::ALL
            .iter()
            .map(|d| d.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A dtype name that is not known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownDType(pub String);

impl fmt::Display for UnknownDType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown dtype `{}`", self.0)
    }
}

impl std::error::Error for UnknownDType {}

impl FromStr for DType {
    type Err = UnknownDType;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        DType::ALL
            .into_iter()
            .find(|d| d.name() == name)
            .ok_or_else(|| UnknownDType(name.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for dtype in DType::ALL {
            assert_eq!(dtype.name().parse::<DType>(), Ok(dtype));
            assert!(dtype.size().is_power_of_two());
        }
        assert!("float32".parse::<DType>().is_err());
    }
}
