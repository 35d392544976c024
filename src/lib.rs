//! # memplan
//!
//! Compile-time memory planning for neural-network inference. See the README.
#![no_std]

/// Where one tensor lives in a generated arena: its bytes and the steps during which it is live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Placement {
    /// The tensor's name in the model file.
    pub name: &'static str,
    /// First byte in the arena.
    pub offset: usize,
    /// Bytes.
    pub size: usize,
    /// First step at which the tensor is live.
    pub start: usize,
    /// First step at which it is no longer live (`[start, end)`).
    pub end: usize,
}
