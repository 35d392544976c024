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
//! Messages name the model file the way rustc names the calling source file, so the model's
//! `path:LINE:COL` opens wherever rustc's own `--> src/main.rs:1:1` does: relative to rustc's
//! working directory, which cargo sets to the workspace root (`src/model.toml:5:1` for
//! `memplan!("model.toml")` in `src/main.rs` of a lone crate, `app/src/model.toml:5:1` in the
//! workspace member `app`), and absolute when rustc names the calling file absolutely (a
//! dependency outside the workspace) or the model file is outside that directory. The path as
//! written in the call only says where to look next to the calling file, which neither a terminal
//! nor an editor knows.
//!
//! The output always includes `const _: &[u8] = include_bytes!("<path>");` so that cargo
//! rebuilds when the model file changes, even when the model has an error. The path is the one
//! written in the call when it resolved next to the calling file (`include_bytes!` resolves it
//! the same way, so the directory's name never has to be UTF-8), else the absolute path; an
//! absolute path that is not UTF-8 cannot be written as a literal and is a located error. (rustc
//! 1.95 itself stops with an internal error on any crate built by cargo in a non-UTF-8 directory,
//! so this is checked by a unit test of `tracked_path`, not by building such a crate.)
//!
//! Only a regular file of at most 64 MiB (`memplan_core::model_file::MAX_MODEL_FILE_BYTES`, the
//! CLI's limit too) is read: a FIFO would block the compiler forever and `/dev/zero` would fill
//! its memory.

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

/// The largest model file `memplan!` reads (shared with the CLI: see
/// [`memplan_core::model_file::MAX_MODEL_FILE_BYTES`]).
#[cfg(test)]
pub(crate) const MAX_MODEL_FILE_BYTES: u64 = memplan_core::model_file::MAX_MODEL_FILE_BYTES;

fn expand(literal: &syn::LitStr) -> proc_macro2::TokenStream {
    let relative = literal.value();
    let caller_file = proc_macro::Span::call_site().local_file();
    let (path, next_to_caller) = resolve(&relative, caller_file.as_deref());
    let base = message_base(
        caller_file.as_deref(),
        std::env::current_dir().ok(),
        std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from),
    );
    let shown = shown_path(&path, base.as_deref());
    let text = match read_model(&path) {
        Ok(text) => text,
        Err(reason) => {
            let looked_for = if shown == relative {
                String::new()
            } else {
                format!(" (looked for `{shown}`)")
            };
            let message = format!("cannot read model file `{relative}`{looked_for}: {reason}");
            return syn::Error::new(literal.span(), message).into_compile_error();
        }
    };
    let track = match tracked_path(&relative, next_to_caller, &path) {
        Some(tracked) => quote! { const _: &[u8] = ::core::include_bytes!(#tracked); },
        None => syn::Error::new(
            literal.span(),
            format!(
                "model file `{relative}` resolves to a path that is not valid UTF-8, so cargo \
                 cannot be told to rebuild when it changes\n  = help: call `memplan!` from a \
                 source file (the path is then resolved next to it), or move the crate to a \
                 UTF-8 path"
            ),
        )
        .into_compile_error(),
    };
    // Bad input never panics (every mistake is an `Err`); a panic here would be a bug in the
    // planner, reported as an error at the call rather than as a crashed macro.
    let expanded =
        std::panic::catch_unwind(|| memplan_core::codegen::expand_model_for_macro(&shown, &text));
    let Ok(expanded) = expanded else {
        let message = format!(
            "memplan internal error while planning `{shown}`: the planner panicked (see the \
             message above); please report this with the model file"
        );
        let compile_error = syn::Error::new(literal.span(), message).into_compile_error();
        let placeholder = std::panic::catch_unwind(|| stand_in(&text, compile_error.clone()))
            .unwrap_or(compile_error);
        return quote! { #placeholder #track };
    };
    match expanded {
        Ok(items) => quote! { #items #track },
        Err(error) => {
            // `message\n --> src/model.toml:LINE:COL\n  = help: ...`
            // The stand-in holds the error, so it is the only one (see `stand_in`).
            let compile_error =
                syn::Error::new(literal.span(), error.to_string()).into_compile_error();
            let placeholder = stand_in(&text, compile_error);
            quote! { #placeholder #track }
        }
    }
}

/// What a model with an error expands to: `compile_error` inside the stand-in module of
/// `memplan_core::codegen::placeholder` (which has every name the caller may use, so the model's
/// error is the only one), unless that module would have a name memplan refuses
/// ([`memplan_core::model_file::module_name_problem`]): a stand-in `pub mod Vec` (or `std`,
/// `u8`, ...) would hide the prelude's `Vec` from the code around the call, and rustc would add
/// errors at the user's own `Vec::new()`. A refused name gets no stand-in: `compile_error` alone.
fn stand_in(text: &str, compile_error: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    let placeholder = memplan_core::codegen::placeholder(text, compile_error.clone());
    match declared_module(&placeholder) {
        Some(name) if memplan_core::model_file::module_name_problem(&name).is_some() => {
            compile_error
        }
        _ => placeholder,
    }
}

/// The name of the module `tokens` declare at their top level (`.. mod <name> { .. }`), if any.
fn declared_module(tokens: &proc_macro2::TokenStream) -> Option<String> {
    let mut trees = tokens.clone().into_iter();
    while let Some(tree) = trees.next() {
        if let proc_macro2::TokenTree::Ident(keyword) = &tree
            && keyword == "mod"
            && let Some(proc_macro2::TokenTree::Ident(name)) = trees.next()
        {
            return Some(name.to_string());
        }
    }
    None
}

/// Reads the model file as the CLI does ([`memplan_core::model_file::read_model_file`]): only
/// a regular file, of at most 64 MiB, in UTF-8. The error says why and how to fix it.
fn read_model(path: &Path) -> Result<String, String> {
    let help_path = "the path is relative to the directory of the source file that calls \
                     `memplan!` (like `include_str!`); check the name, or create the file";
    memplan_core::model_file::read_model_file(path, help_path)
}

/// The path `include_bytes!` in the expansion is given, so that cargo tracks the model file.
///
/// When the path was resolved next to the calling source file, `include_bytes!` resolves the
/// call's own (UTF-8) string the same way, so that string is used and the directory's name
/// never has to be UTF-8. Otherwise the absolute path is used, which must be UTF-8 to be a
/// string literal: `None` when it is not.
fn tracked_path(relative: &str, next_to_caller: bool, resolved: &Path) -> Option<String> {
    if next_to_caller {
        Some(relative.to_owned())
    } else {
        resolved.to_str().map(str::to_owned)
    }
}

/// The directory messages name the model file from: the one rustc names the calling file from.
/// cargo runs rustc in the workspace root and names a member's files relative to it
/// (`app/src/main.rs`), so a relative `caller_file` means rustc's working directory `cwd`; an
/// absolute one (a dependency outside the workspace) means absolute paths (`None`). When the
/// compiler cannot tell the calling file, `cwd` still (rustc names every other file from it),
/// else the crate root.
fn message_base(
    caller_file: Option<&Path>,
    cwd: Option<PathBuf>,
    manifest_dir: Option<PathBuf>,
) -> Option<PathBuf> {
    match caller_file {
        Some(file) if file.is_absolute() => None,
        _ => cwd.or(manifest_dir),
    }
}

/// The model file's name in messages: `resolved` relative to `base` (see [`message_base`])
/// when it is inside it, else `resolved` itself (absolute, unless the compiler named the calling
/// file relatively and the working directory is unknown). `.` and `..` are folded away when the
/// folded path names the same file (a `..` after a symlink may not).
fn shown_path(resolved: &Path, base: Option<&Path>) -> String {
    let folded = fold_dots(resolved);
    let same_file = match (resolved.canonicalize(), folded.canonicalize()) {
        (Ok(original), Ok(folded)) => original == folded,
        (Err(_), _) => true, // a missing file: nothing to mix up
        (Ok(_), Err(_)) => false,
    };
    let path = if same_file {
        folded
    } else {
        resolved.to_owned()
    };
    let inside = base
        .map(fold_dots)
        .and_then(|root| path.strip_prefix(root).ok().map(Path::to_owned))
        .filter(|inside| !inside.as_os_str().is_empty());
    inside.unwrap_or(path).to_string_lossy().into_owned()
}

/// `path` without `.` components, and with each `..` cancelling the name before it.
fn fold_dots(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut folded = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(folded.components().next_back(), Some(Component::Normal(_))) =>
            {
                folded.pop();
            }
            other => folded.push(other),
        }
    }
    folded
}

/// The model file's path: next to the calling source file (`true`), or under
/// `CARGO_MANIFEST_DIR` (`false`). An absolute path is used as is (`true`: `include_bytes!`
/// takes it as is too).
fn resolve(relative: &str, caller_file: Option<&Path>) -> (PathBuf, bool) {
    let relative = Path::new(relative);
    if relative.is_absolute() {
        return (relative.to_owned(), true);
    }
    let caller_dir = caller_file.and_then(|file| {
        let file = if file.is_absolute() {
            file.to_owned()
        } else {
            std::env::current_dir().ok()?.join(file)
        };
        file.parent().map(Path::to_owned)
    });
    match caller_dir {
        Some(dir) => (dir.join(relative), true),
        None => {
            let base =
                std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(PathBuf::new, PathBuf::from);
            (base.join(relative), false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("memplan_macro_{}_{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn issue_36_a_refused_model_name_gets_no_stand_in_module() {
        let error = quote! { ::core::compile_error! { "the model's error" } };
        let stand_in_of = |name: &str| {
            let text = format!("[model]\nname = \"{name}\"\n[tensors]\nx = {{ bytes = 1 }}\n");
            stand_in(&text, error.clone())
        };
        // A name memplan accepts: the module, with every name the caller may use.
        let accepted = stand_in_of("net");
        assert_eq!(declared_module(&accepted).as_deref(), Some("net"));
        // Names that would hide the prelude's `Vec`, a primitive type, or a crate: the error
        // alone.
        for refused in ["Vec", "Option", "u8", "std", "memplan"] {
            let tokens = stand_in_of(refused);
            assert_eq!(declared_module(&tokens), None, "{refused}: {tokens}");
            assert_eq!(tokens.to_string(), error.to_string(), "{refused}");
        }
    }

    #[test]
    fn reads_a_regular_file() {
        let dir = scratch("regular");
        let file = dir.join("m.toml");
        std::fs::write(&file, "[model]\n").unwrap();
        assert_eq!(read_model(&file).unwrap(), "[model]\n");
    }

    #[test]
    fn refuses_directories_and_devices_without_reading_them() {
        let dir = scratch("dir");
        let error = read_model(&dir).unwrap_err();
        assert!(error.starts_with("it is a directory"), "{error}");
        // `/dev/zero` never ends: reading it would fill the memory.
        let zero = Path::new("/dev/zero");
        if zero.exists() {
            let error = read_model(zero).unwrap_err();
            assert!(error.starts_with("it is not a regular file"), "{error}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn refuses_a_fifo_without_blocking() {
        let dir = scratch("fifo");
        let fifo = dir.join("m.toml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipped: `mkfifo` is not available");
            return;
        }
        let error = read_model(&fifo).unwrap_err();
        assert!(error.starts_with("it is not a regular file"), "{error}");
    }

    #[test]
    fn refuses_files_above_the_cap() {
        let dir = scratch("large");
        let file = dir.join("m.toml");
        let handle = std::fs::File::create(&file).unwrap();
        handle.set_len(MAX_MODEL_FILE_BYTES + 1).unwrap(); // sparse: no disk space used
        let error = read_model(&file).unwrap_err();
        assert!(error.starts_with("it is larger than 64 MiB"), "{error}");
        handle.set_len(MAX_MODEL_FILE_BYTES).unwrap();
        let at_the_cap = read_model(&file).map(|text| text.len() as u64);
        assert_eq!(at_the_cap, Ok(MAX_MODEL_FILE_BYTES));
    }

    #[test]
    fn messages_name_the_file_as_rustc_names_the_caller() {
        let cwd = || Some(PathBuf::from("/home/me/ws"));
        let member = || Some(PathBuf::from("/home/me/ws/app"));
        // A workspace member: rustc says `app/src/main.rs`, so the model is `app/src/model.toml`
        // (the crate root's `src/model.toml` would not open from where cargo prints them).
        let base = message_base(Some(Path::new("app/src/main.rs")), cwd(), member());
        assert_eq!(base.as_deref(), Some(Path::new("/home/me/ws")));
        let resolved = Path::new("/home/me/ws/app/src/model.toml");
        assert_eq!(shown_path(resolved, base.as_deref()), "app/src/model.toml");
        // A dependency rustc names absolutely: absolute too.
        let absolute = Path::new("/home/me/.cargo/git/net/src/lib.rs");
        assert_eq!(message_base(Some(absolute), cwd(), member()), None);
        assert_eq!(shown_path(resolved, None), "/home/me/ws/app/src/model.toml");
        // The calling file unknown: rustc's working directory, else the crate root.
        assert_eq!(message_base(None, cwd(), member()), cwd());
        assert_eq!(message_base(None, None, member()), member());
    }

    #[test]
    fn messages_name_the_file_from_the_base() {
        let root = Path::new("/home/me/net");
        let shown = |resolved: &str| shown_path(Path::new(resolved), Some(root));
        assert_eq!(shown("/home/me/net/src/model.toml"), "src/model.toml");
        assert_eq!(shown("/home/me/net/src/./model.toml"), "src/model.toml");
        assert_eq!(shown("/home/me/net/src/../model.toml"), "model.toml");
        assert_eq!(
            shown("/home/me/net/src/bin/../../models/a.toml"),
            "models/a.toml"
        );
        // Outside the crate: absolute, which opens from anywhere.
        assert_eq!(shown("/home/me/models/a.toml"), "/home/me/models/a.toml");
        assert_eq!(
            shown("/home/me/net/../models/a.toml"),
            "/home/me/models/a.toml"
        );
        assert_eq!(shown("/home/me/network/a.toml"), "/home/me/network/a.toml");
        assert_eq!(
            shown_path(Path::new("/dev/zero"), None),
            "/dev/zero",
            "no crate root: as resolved"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_directory_keeps_its_dot_dot() {
        // `link/..` is the link's target's parent, not `dir`: folding it would name another file.
        let dir = scratch("symlink");
        std::fs::create_dir_all(dir.join("elsewhere/deep")).unwrap();
        std::fs::write(dir.join("elsewhere/m.toml"), "[model]\n").unwrap();
        std::fs::write(dir.join("m.toml"), "[model]\n").unwrap(); // the folded path's file
        std::os::unix::fs::symlink(dir.join("elsewhere/deep"), dir.join("link")).unwrap();
        let resolved = dir.join("link/../m.toml");
        assert!(resolved.is_file());
        let shown = shown_path(&resolved, Some(&dir));
        assert_eq!(shown, "link/../m.toml");
    }

    #[cfg(unix)]
    #[test]
    fn a_non_utf8_directory_is_tracked_through_the_written_path() {
        use std::os::unix::ffi::OsStrExt;
        let dir = Path::new(std::ffi::OsStr::from_bytes(b"/tmp/caf\xe9"));
        let resolved = dir.join("model.toml");
        assert_eq!(
            tracked_path("model.toml", true, &resolved).as_deref(),
            Some("model.toml")
        );
        assert_eq!(tracked_path("model.toml", false, &resolved), None);
        let utf8 = Path::new("/tmp/cafe/model.toml");
        assert_eq!(
            tracked_path("model.toml", false, utf8).as_deref(),
            Some("/tmp/cafe/model.toml")
        );
    }
}
