//! Code generation: a planned [`Model`](crate::Model) as Rust items, a pure function of the model and the plan.
//!
//! The `memplan!` macro and a `build.rs` both call [`expand_model`] (or [`plan_model`] then
//! [`generate`]); nothing here reads files or the environment, so the same model text always gives
//! the same tokens, byte for byte.
//!
//! For a model named `tiny` the output is one module:
//!
//! ```text
//! pub mod tiny {
//!     pub const ARENA_SIZE: usize;  pub const ARENA_ALIGN: usize;  pub const LOWER_BOUND: usize;
//!     pub const STEPS: usize;       pub const TENSORS: &[memplan::Placement];
//!     pub mod offset { pub const <tensor>: usize; }   // byte offset of each tensor
//!     pub mod len    { pub const <tensor>: usize; }   // element count of each tensor's view
//!     pub struct Arena;             // #[repr(C, align(ARENA_ALIGN))], ARENA_SIZE bytes
//!     impl Arena {
//!         pub const fn new() -> Self;
//!         pub fn <tensor>(&mut self) -> &mut [T];      // one typed accessor per tensor
//!         pub fn op_<op>(&mut self) -> op::<op><'_>;   // all views of one op at once
//!     }
//!     pub mod op { pub struct <op><'a> { pub <input>: &'a [T], pub <output>: &'a mut [T], .. } }
//!     // For interpreters (see `tables`):
//!     pub mod shape { pub const <tensor>: [usize; R]; }  pub mod dtype { pub const <tensor>: memplan::DType; }
//!     pub const TENSOR_INFO: &[memplan::TensorInfo];  pub const WEIGHTS: &[memplan::WeightInfo];
//!     pub mod weight_shape { .. }  pub mod weight_dtype { .. }  pub mod attrs { pub mod <op> { pub const <NAME>: T; } }
//!     pub const OPS: &[memplan::OpInfo];  pub const MAX_VIEWS: usize;
//!     impl Arena { pub fn views(&mut self, k: usize) -> Option<memplan::Views<'_, MAX_VIEWS>>; }
//! }
//! ```
//!
//! A model with `[[pools]]` gets instead one module per pool (`pub mod sram { ARENA_SIZE, TENSORS,
//! offset, Arena, static MEMORY, static ARENA }`), an alias per pool (`SramArena`), and
//! `Arenas<'a>`, which holds every pool's arena and has the `op_<name>` views; `take(..)` hands
//! out the pools' arenas once. `MEMORY` is a `memplan::Memory`, bytes the compiler does not
//! build (uninitialised to `rustc`, zero in `.bss`, zeroed by the first `take`), so a pool of
//! gigabytes costs the compiler next to nothing; `ARENA` is its hand-out flag. A pool with a
//! `link_section` gets no `MEMORY`: its `Memory` is the application's to declare in the section
//! (the `unsafe` is the application's), and `take` takes it.
//! App-owned (`external`) tensors are parameters of the op views; an output written in place over
//! an input is one `&mut` field (named after the output).
//!
//! The generated code is `no_std`, allocates nothing, and reaches only `::memplan::Placement` and
//! `::memplan::__private` (safe byte-to-element casts); it never names `memplan-core`.
//!
//! Features: with `model-file` alone this module re-exports the planning of a model
//! ([`plan_model`], [`check`], [`lower_bounds`], from [`crate::model_plan`]) and checks the
//! names the code would declare; generating the code
//! ([`generate`], [`expand_model`] and the rest) needs `codegen` (on by default), which brings
//! `proc-macro2` and `quote`.

#[cfg(feature = "codegen")]
mod docs;
#[cfg(feature = "codegen")]
mod expand;
#[cfg(feature = "codegen")]
mod extend;
#[cfg(feature = "codegen")]
mod items;
#[cfg(feature = "codegen")]
mod layout;
pub(crate) mod names;
#[cfg(feature = "codegen")]
mod placeholder;
#[cfg(feature = "codegen")]
mod source;
#[cfg(feature = "codegen")]
mod tables;

#[cfg(feature = "codegen")]
pub use expand::{MAX_MACRO_TENSORS, expand_model, expand_model_for_macro, expand_model_source};
#[cfg(feature = "codegen")]
pub use extend::append_to_module;
#[cfg(feature = "codegen")]
pub use items::{generate, generate_with};
#[cfg(feature = "codegen")]
pub use layout::reported_lifetimes;
#[cfg(feature = "codegen")]
pub use placeholder::placeholder;
// Planning lives in `crate::model_plan`; its items are here too, where the code generation that
// consumes them is.
pub use crate::model_plan::{
    LowerBounds, MAX_ARENA_BYTES, ModelPlan, PlannedPool, TensorPlace, check, lower_bounds,
    plan_model, single_arena_solution,
};
#[cfg(feature = "codegen")]
pub use source::to_source;
#[cfg(feature = "codegen")]
pub use tables::Tables;
