//! The entry points: a model file's text to the generated module, for the `memplan!` macro
//! ([`expand_model_for_macro`]) and for build scripts ([`expand_model`], [`expand_model_source`]).

use proc_macro2::TokenStream;

use crate::codegen::{ModelPlan, generate, items, placeholder, plan_model, to_source};
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
/// The macro passes as `file_name` the model file's path as rustc names the calling source file
/// (`src/model.toml`; `app/src/model.toml` in a workspace member `app`), so that every location
/// in a message opens where rustc's own do.
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
