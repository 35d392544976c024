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

mod docs;
mod extend;
mod items;
pub(crate) mod names;
mod placeholder;
mod plan;
mod source;
mod tables;

use proc_macro2::TokenStream;

pub use extend::append_to_module;
pub use items::{generate, reported_lifetimes};
pub use placeholder::placeholder;
pub use plan::MAX_ARENA_BYTES;
pub use plan::{
    LowerBounds, ModelPlan, PlannedPool, TensorPlace, check, lower_bounds, plan_model,
    single_arena_solution,
};
pub use source::to_source;

use crate::error::InputError;
use crate::model_file::parse_model;

/// [`expand_model`] as a source file for a build script to write (`include!`d by the crate):
/// the same tokens, one item, statement or field per line (see [`to_source`]).
pub fn expand_model_source(file_name: &str, text: &str) -> Result<String, InputError> {
    expand_model(file_name, text).map(|tokens| to_source(&tokens))
}

/// The most tensors (and the most ops) a model may have for the `memplan!` macro: planning and
/// code generation stay `O(n log n)` beyond it, but the compiler holds the whole expansion at
/// once (a 30,001-tensor model: about 3 minutes and 5.4 GB of memory for `rustc` in a debug
/// build, growing linearly). Larger models use a build script
/// ([`expand_model`] from `build.rs`, see `examples/build-script`), which has no limit.
pub const MAX_MACRO_TENSORS: usize = 50_000;

/// [`expand_model`] for the `memplan!` macro: the same, but a model with more than
/// [`MAX_MACRO_TENSORS`] tensors or ops is a located error that recommends a build script.
///
/// The macro passes as `file_name` the model file's path from the crate root
/// (`src/model.toml`), so that every location in a message opens from there.
pub fn expand_model_for_macro(file_name: &str, text: &str) -> Result<TokenStream, InputError> {
    let model = parse_model(file_name, text)?;
    let too_many = |what: &str, count: usize, at: crate::model_file::Location| {
        InputError::new(
            file_name,
            at.line,
            at.column,
            format!(
                "the model has {count} {what}, more than the {MAX_MACRO_TENSORS} the `memplan!` \
                 macro supports (this is the first one past the limit)"
            ),
            "generate the code from a build script instead: call \
             `memplan_core::expand_model` in `build.rs` and `include!` the file it writes (see \
             `examples/build-script`); it has no size limit",
        )
    };
    if let Some(t) = model.tensors.get(MAX_MACRO_TENSORS) {
        return Err(too_many("tensors", model.tensors.len(), t.location));
    }
    if let Some(op) = model.ops.get(MAX_MACRO_TENSORS) {
        return Err(too_many("ops", model.ops.len(), op.location));
    }
    let plan = plan_model(&model)?;
    Ok(per_pointer_width(&model, &plan, text))
}

/// [`generate`]'s module, compiled only for the pointer widths whose `isize` holds every number
/// of the model; on the others, a located `compile_error!` and the [`placeholder`] items (so the
/// user's code sees the same names, and rustc never reaches its own unlocated "too big for the
/// target architecture").
fn per_pointer_width(model: &crate::Model, plan: &ModelPlan, text: &str) -> TokenStream {
    let items = generate(model, plan);
    let Some((widths, message)) = items::narrow_widths(model, plan) else {
        return items;
    };
    let narrow = quote::quote! { any(#(target_pointer_width = #widths),*) };
    let stand_in = placeholder(text, quote::quote! { ::core::compile_error! { #message } });
    quote::quote! {
        #[cfg(not(#narrow))]
        #items
        #[cfg(#narrow)]
        #stand_in
    }
}

/// Parses, plans and generates in one go: what the `memplan!` macro expands to (without the
/// `include_bytes!` the macro adds so cargo tracks the file).
///
/// `file_name` is only used in messages (and the generated docs): give the path the user can
/// open, from the crate root for a build script (`model.toml`, `src/model.toml`). Errors are
/// located in the model file.
pub fn expand_model(file_name: &str, text: &str) -> Result<TokenStream, InputError> {
    let model = parse_model(file_name, text)?;
    let plan = plan_model(&model)?;
    Ok(per_pointer_width(&model, &plan, text))
}
