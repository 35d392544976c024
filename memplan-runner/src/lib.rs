//! # memplan-runner: ONNX networks run out of a memplan arena
//!
//! A thin command over `memplan-build` (which generates the network into one planned arena at
//! build time) and `memplan-kernels` (which computes it, with no heap). The binary
//! `memplan-runner IN.bin OUT.bin` runs the network chosen at build time by `MEMPLAN_MODEL`; its
//! `--heap` run interprets the same network's tables with every value in a heap buffer of its
//! own, the differential oracle of the plan.
//!
//! The kernels are re-exported here as [`kernels`] for the benchmarks and tools that used them
//! from this crate.

pub use memplan_kernels as kernels;
