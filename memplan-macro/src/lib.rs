//! # memplan-macro
//!
//! The `memplan!("model.toml")` procedural macro. It is a thin shell: it finds and reads the file,
//! then calls [`memplan_core::expand_model`], which parses the model, plans its arena and
//! generates the code. Use it through the `memplan` crate, which re-exports it.
//!
//! Paths resolve like `include_str!`: relative to the directory of the source file that calls
//! the macro (`proc_macro::Span::local_file`, stable since Rust 1.88). When the compiler cannot
//! tell that file (a call produced by another macro, some IDE expansions), the path is taken
//! relative to `CARGO_MANIFEST_DIR` instead.
//!
//! The output always includes `const _: &[u8] = include_bytes!("<absolute path>");` so that
//! cargo rebuilds when the model file changes, even when the model has an error.

use std::path::{Path, PathBuf};

use proc_macro::TokenStream;
use quote::quote;

/// Plans a model file at compile time and expands to `pub mod <name> { ... }` with the arena
/// type, the offset tables and the views. See the `memplan` crate's README for the schema and
/// the generated items.
#[proc_macro]
pub fn memplan(input: TokenStream) -> TokenStream {
    let literal = match syn::parse::<syn::LitStr>(input) {
        Ok(literal) => literal,
        Err(error) => {
            let message = format!(
                "{error}\n  = help: call it with the model file's path, relative to this source \
                 file: `memplan!(\"model.toml\");`"
            );
            return syn::Error::new(error.span(), message)
                .into_compile_error()
                .into();
        }
    };
    expand(&literal).into()
}

fn expand(literal: &syn::LitStr) -> proc_macro2::TokenStream {
    let relative = literal.value();
    let path = resolve(&relative);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) => {
            // The absolute path is left out: it differs between machines (and ui tests).
            let message = format!(
                "cannot read model file `{relative}`: {error}\n  = help: the path is relative \
                 to the directory of the source file that calls `memplan!` (like \
                 `include_str!`); check the name, or create the file"
            );
            return syn::Error::new(literal.span(), message).into_compile_error();
        }
    };
    let track = path.to_str().map(|absolute| {
        quote! { const _: &[u8] = ::core::include_bytes!(#absolute); }
    });
    // Bad input never panics (every mistake is an `Err`); a panic here would be a bug in the
    // planner, reported as an error at the call rather than as a crashed macro.
    let expanded = std::panic::catch_unwind(|| {
        memplan_core::codegen::expand_model_for_macro(&relative, &text)
    });
    let Ok(expanded) = expanded else {
        let message = format!(
            "memplan internal error while planning `{relative}`: the planner panicked (see the \
             message above); please report this with the model file"
        );
        let compile_error = syn::Error::new(literal.span(), message).into_compile_error();
        let placeholder = std::panic::catch_unwind(|| memplan_core::codegen::placeholder(&text))
            .unwrap_or_default();
        return quote! { #compile_error #placeholder #track };
    };
    match expanded {
        Ok(items) => quote! { #items #track },
        Err(error) => {
            // `message\n --> model.toml:LINE:COL\n  = help: ...`
            let compile_error =
                syn::Error::new(literal.span(), error.to_string()).into_compile_error();
            let placeholder = memplan_core::codegen::placeholder(&text);
            quote! { #compile_error #placeholder #track }
        }
    }
}

/// The model file's path: next to the calling source file, or under `CARGO_MANIFEST_DIR`.
fn resolve(relative: &str) -> PathBuf {
    let relative = Path::new(relative);
    if relative.is_absolute() {
        return relative.to_owned();
    }
    let caller_dir = proc_macro::Span::call_site().local_file().and_then(|file| {
        let file = if file.is_absolute() {
            file
        } else {
            std::env::current_dir().ok()?.join(file)
        };
        file.parent().map(Path::to_owned)
    });
    let base = caller_dir.unwrap_or_else(|| {
        std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(PathBuf::new, PathBuf::from)
    });
    base.join(relative)
}
