//! The stand-in for a model that has an error, so the user sees that one error and not also a
//! cascade of "cannot find `Arena`" or "no method `conv1`" wherever the module is used, and so
//! that an error costs the compiler next to nothing, whatever the model's size.
//!
//! The stand-in does not re-emit the model's items (a 20,000-tensor model's stand-in was 10 MB of
//! tokens, compiled as long as a third of a real build): its `Arena` is a type whose definition
//! holds the model's error (`[u8; compile_error!(..)]`), so rustc reports that error once and
//! takes `Arena` for an erroneous type, on which it reports nothing more: no method, field or
//! associated item is missing from it. The modules of per-name constants (`offset`, `len`, ...)
//! are aliases of that type, so `net::len::x` is no error either; the fixed constants keep their
//! types; `take` is a constant of the erroneous type, callable with any arguments. What remains
//! is the handful of names that must be modules (each pool's, `op`, `attrs`): the pools' names
//! are read from the model file's `[[pools]]` tables, and only they (and `[model]`) are parsed,
//! never `[tensors]` or `[[ops]]`.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};
use toml::de::{DeTable, DeValue};

use crate::codegen::names::camel;
use crate::model_file::identifier_problem;

/// Names the stand-in defines in the model's module itself; a pool named like one is left out.
const FIXED: [&str; 22] = [
    "Arena",
    "Arenas",
    "offset",
    "len",
    "shape",
    "dtype",
    "weight_shape",
    "weight_dtype",
    "op",
    "attrs",
    "take",
    "ARENA_SIZE",
    "ARENA_ALIGN",
    "LOWER_BOUND",
    "STEPS",
    "TENSORS",
    "TENSOR_INFO",
    "WEIGHTS",
    "OPS",
    "MAX_VIEWS",
    "CAPACITY",
    "MEMORY",
];

/// The stand-in module for a model file that failed to parse or plan, holding `error` (a
/// `compile_error!` invocation, which it places in expression position) as the one error (how:
/// the docs of `codegen/placeholder.rs`, a private module). When not even the model's name can
/// be read, `error` alone.
///
/// Read leniently: whatever is malformed is skipped (the real error is `error`).
///
/// # Runtime
/// Linear in the length of `text` (a scan for table headers), plus parsing the `[model]` and
/// `[[pools]]` tables: the stand-in has a fixed size plus a few items per pool.
pub fn placeholder(text: &str, error: TokenStream) -> TokenStream {
    let names = read_names(text);
    let Some(name) = names.model else {
        return quote! { #error };
    };
    let module = Ident::new(&name, Span::call_site());
    let pools = names.pools.iter().map(|pool| {
        let pool = Ident::new(pool, Span::call_site());
        quote! {
            pub mod #pool {
                pub type Arena = super::Arena;
                pub type Memory = super::Arena;
                pub type offset = super::Arena;
                pub const ARENA_SIZE: usize = 0;
                pub const ARENA_ALIGN: usize = 1;
                pub const LOWER_BOUND: usize = 0;
                pub const CAPACITY: ::core::option::Option<usize> = ::core::option::Option::None;
                pub const TENSORS: &[::memplan::Placement] = &[];
                pub static MEMORY: super::Arena = [];
                pub static ARENA: super::Arena = [];
            }
        }
    });
    let aliases = names.pools.iter().filter_map(|pool| {
        let alias = format!("{}Arena", camel(pool));
        (alias != "Arena" && !names.pools.contains(&alias)).then(|| {
            let alias = format_ident!("{}", alias);
            quote! { pub type #alias = Arena; }
        })
    });
    quote! {
        #[allow(dead_code, unused, clippy::all, non_upper_case_globals, non_camel_case_types)]
        pub mod #module {
            /// The model has an error (reported here): every item of the module is a stand-in.
            pub type Arena = [::core::primitive::u8; #error];
            pub type Arenas<'a> = Arena;
            pub type offset = Arena;
            pub type len = Arena;
            pub type shape = Arena;
            pub type dtype = Arena;
            pub type weight_shape = Arena;
            pub type weight_dtype = Arena;
            pub mod op {}
            pub mod attrs {}
            pub const take: Arena = [];
            pub const ARENA_SIZE: usize = 0;
            pub const ARENA_ALIGN: usize = 1;
            pub const LOWER_BOUND: usize = 0;
            pub const STEPS: usize = 0;
            pub const TENSORS: &[::memplan::Placement] = &[];
            pub const TENSOR_INFO: &[::memplan::TensorInfo] = &[];
            pub const WEIGHTS: &[::memplan::WeightInfo] = &[];
            pub const OPS: &[::memplan::OpInfo] = &[];
            pub const MAX_VIEWS: usize = 0;
            #(#pools)*
            #(#aliases)*
        }
    }
}

/// The model's name and its pools' names, as far as they can be read.
#[derive(Debug, Default, PartialEq)]
struct Names {
    model: Option<String>,
    pools: Vec<String>,
}

/// Reads the model's name and its pools' names from the tables that hold them: the text before
/// the first table header (dotted keys, inline tables), `[model]` and every `[[pools]]`, each
/// parsed on its own, so a 60,000-tensor file costs a scan, not a parse.
fn read_names(text: &str) -> Names {
    let mut names = Names::default();
    for chunk in chunks(text) {
        let (document, _errors) = DeTable::parse_recoverable(chunk);
        let document = document.get_ref();
        if names.model.is_none() {
            names.model = document
                .get("model")
                .and_then(|m| m.get_ref().get("name"))
                .and_then(|n| n.get_ref().as_str())
                .filter(|n| identifier_problem(n).is_none())
                .map(str::to_owned);
        }
        if let Some(DeValue::Array(pools)) = document.get("pools").map(|p| p.get_ref()) {
            for pool in pools.iter() {
                let name = pool
                    .get_ref()
                    .get("name")
                    .and_then(|n| n.get_ref().as_str())
                    .filter(|n| identifier_problem(n).is_none() && !FIXED.contains(n));
                if let Some(name) = name
                    && !names.pools.iter().any(|p| p == name)
                {
                    names.pools.push(name.to_owned());
                }
            }
        }
    }
    names
}

/// The parts of `text` that can name the model or a pool: the text before the first table header,
/// and each `[model]` and `[[pools]]` table (its header line included), in order.
fn chunks(text: &str) -> Vec<&str> {
    let mut chunks = Vec::new();
    // (start of the current part, whether it is kept)
    let mut current = (0, true);
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if let Some(key) = table_header(line) {
            if current.1 && current.0 < at {
                chunks.push(&text[current.0..at]);
            }
            current = (at, key == "model" || key == "[pools]");
        }
        at += line.len();
    }
    if current.1 && current.0 < at {
        chunks.push(&text[current.0..at]);
    }
    chunks
}

/// The key of a table header line (`[model]` is `model`, `[[pools]]` is `[pools]`, spaces
/// inside the brackets dropped), or `None` for any other line. Lenient: a line of an array that
/// looks like a header only splits a table the stand-in does not read anyway.
fn table_header(line: &str) -> Option<String> {
    let line = line.trim();
    let (array, inner) = if let Some(rest) = line.strip_prefix("[[") {
        (true, rest.split_once("]]")?)
    } else {
        (false, line.strip_prefix('[')?.split_once(']')?)
    };
    let (key, rest) = inner;
    let rest = rest.trim_start();
    let key_chars = |c: char| c.is_ascii_alphanumeric() || "_-.\"' \t".contains(c);
    if key.trim().is_empty()
        || !key.chars().all(key_chars)
        || !(rest.is_empty() || rest.starts_with('#'))
    {
        return None;
    }
    let key: String = key.chars().filter(|c| !c.is_whitespace()).collect();
    Some(if array { format!("[{key}]") } else { key })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_model_and_pools_tables_only() {
        let text = "[model]\nname = \"net\"\n\n[[pools]]\nname = \"sram\"\nsize = 4\n\n\
                    [tensors]\nx = { dtype = \"f32\" shape = [1] }\n\n[[pools]] # fast\n\
                    name = \"dram\"\n\n[[ops]]\nname = \"op\"\n";
        assert_eq!(
            read_names(text),
            Names {
                model: Some("net".to_owned()),
                pools: vec!["sram".to_owned(), "dram".to_owned()],
            }
        );
        let chunks = chunks(text);
        assert_eq!(chunks.len(), 3, "{chunks:?}");
        assert!(
            chunks
                .iter()
                .all(|c| !c.contains("[tensors]") && !c.contains("[[ops]]"))
        );
        // A name given as a dotted key before any table; pools inline.
        let dotted = "model.name = \"m\"\npools = [{ name = \"a\" }, { name = \"offset\" }]\n";
        assert_eq!(
            read_names(dotted),
            Names {
                model: Some("m".to_owned()),
                pools: vec!["a".to_owned()],
            }
        );
        // An unreadable or invalid name: no stand-in.
        assert_eq!(read_names("[model]\nname = \"9x\"\n").model, None);
        assert_eq!(read_names("not toml [").model, None);
    }

    #[test]
    fn headers_are_told_from_other_lines() {
        assert_eq!(table_header("[model]\n").as_deref(), Some("model"));
        assert_eq!(
            table_header("  [[ pools ]]  # sram\n").as_deref(),
            Some("[pools]")
        );
        assert_eq!(table_header("[1, 2],\n"), None);
        assert_eq!(table_header("name = \"[model]\"\n"), None);
        assert_eq!(table_header("[model] x = 1\n"), None);
    }
}
