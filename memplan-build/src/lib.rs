//! # memplan-build: a network in your own crate, with no heap
//!
//! A build script turns an ONNX file into Rust at compile time, in the shape of `prost-build`:
//!
//! ```no_run
//! // build.rs
//! fn main() -> Result<(), memplan_build::Error> {
//!     memplan_build::Network::from_onnx("models/kws.onnx").name("kws").generate()?;
//!     Ok(())
//! }
//! ```
//!
//! ```ignore
//! // src/lib.rs (no_std works)
//! memplan::include_network!("kws");
//!
//! static ARENA: memplan::StaticArena<kws::Arena> = memplan::StaticArena::new(kws::Arena::new());
//!
//! pub fn classify(features: &[f32; kws::len::input_1], scores: &mut [f32; kws::len::identity]) {
//!     let arena = ARENA.take().expect("taken once");
//!     kws::run(arena, features, scores).expect("the build checked every node");
//! }
//! ```
//!
//! ## What the generated module holds
//!
//! Everything `memplan!` generates for the network's activations (`Arena`, `ARENA_SIZE`,
//! `TENSORS`, `offset::*`, `len::*`, a typed view per tensor and op: see the `memplan` crate),
//! plus:
//!
//! - `run(arena, &input, .., &mut output, ..)`: one `&[T; N]` per graph input, then one
//!   `&mut [T; M]` per graph output, in graph order, named after the ONNX values (snake_case).
//!   The inputs and outputs are the caller's buffers and take no arena space
//!   ([`Network::io_in_arena`] puts them in the arena instead). It allocates nothing and calls
//!   one kernel of `memplan-kernels` per node, on views cut from the arena at constant offsets.
//! - the constants: one `static` blob aligned to 16 bytes, `include_bytes!`d from the file
//!   `generate` writes, so the weights live in `.rodata` (flash on a microcontroller) and every
//!   kernel reads them in place as `&[f32]` (or `&[i64]`, ...): no decode, no copy, no heap.
//! - `network::{VALUES, CONSTANTS, NODES, INPUTS, OUTPUTS}`: the network as tables, for
//!   interpreters (the runner's heap oracle), and `run_dyn` for callers with slices.
//!
//! ## What is checked at build time
//!
//! Every node against the kernels (operator, domain, attributes), every value's dtype, the
//! shapes (all static, from the file's shape information: the importer refuses a value with no
//! static shape, saying to run ONNX shape inference), every weight's bytes, and the plan (and
//! its `budget`). Constant subgraphs (including `DequantizeLinear` of int8 weights) are folded
//! into constants here. Every node is also run once on zeros, its constants as they are, so
//! the kernel's own checks of shapes and attributes refuse at build time what every run would
//! refuse (nodes too large to run cheaply get the lowering's checks of their windows, strides,
//! sizes and biases only, for TFLite; an ONNX node whose kernel reads an input's values, an
//! integer activation or a run-time Resize scale, is not run on zeros). Each failure names the
//! node or value and says what to do.
//!
//! ## Scratch
//!
//! A kernel that needs a temporary as large as a tensor (TopK's sort order, Resize's taps) gets
//! it as a scratch tensor that this crate declares on the node, sized by
//! `memplan_kernels::scratch_len`; the planner places it in the arena like any tensor.

mod cache_bands;
mod dry_run;
mod emit;
mod error;
mod fold;
mod fuse;
mod graph;
mod network;
mod onnx;
mod options;
mod output;
mod patches;
mod planned;
mod prepare;
mod ram_budget;
mod specialise;
mod tflite;

pub use error::Error;
pub use fold::MAX_FOLDED_BYTES;
pub use network::{Generated, Io, Network};
pub use tflite::SUPPORTED_BUILTINS as TFLITE_BUILTINS;
