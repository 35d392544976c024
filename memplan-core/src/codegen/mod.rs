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
//! }
//! ```
//!
//! A model with `[[pools]]` gets instead one module per pool (`pub mod sram { ARENA_SIZE, TENSORS,
//! offset, Arena, static ARENA }`), an alias per pool (`SramArena`), and `Arenas<'a>`, which holds
//! every pool's arena and has the `op_<name>` views; `take()` hands out the pools' `static`s once.
//! App-owned (`external`) tensors are parameters of the op views; an output written in place over
//! an input is one `&mut` field (named after the output).
//!
//! The generated code is `no_std`, allocates nothing, and reaches only `::memplan::Placement` and
//! `::memplan::__private` (safe byte-to-element casts); it never names `memplan-core`.

mod docs;
mod items;
mod placeholder;
mod plan;

use proc_macro2::TokenStream;

pub use items::{generate, reported_lifetimes};
pub use placeholder::placeholder;
pub use plan::{ModelPlan, PlannedPool, TensorPlace, check, plan_model, single_arena_solution};

use crate::error::InputError;
use crate::model_file::parse_model;

/// Parses, plans and generates in one go: what the `memplan!` macro expands to (without the
/// `include_bytes!` the macro adds so cargo tracks the file).
///
/// `file_name` is only used in messages. Errors are located in the model file.
pub fn expand_model(file_name: &str, text: &str) -> Result<TokenStream, InputError> {
    let model = parse_model(file_name, text)?;
    let plan = plan_model(&model)?;
    Ok(generate(&model, &plan))
}
