//! # memplan-runner: ONNX networks run out of a memplan arena
//!
//! [`kernels`] holds the operators: one plain, deterministic f32 (and integer) implementation per
//! ONNX operator type, reading their inputs and writing their outputs through borrowed views, so
//! that the caller decides where every tensor lives (its own heap buffer, or a slice of a planned
//! arena, possibly shared in place with an input).

pub mod kernels;
