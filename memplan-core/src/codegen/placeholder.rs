//! Stand-in items for a model that has an error, so the user sees that one error and not also a
//! cascade of "cannot find `Arena`" or "no method `conv1`" wherever the module is used.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};
use toml::de::{DeTable, DeValue};

use crate::model_file::source::closest;
use crate::model_file::{DType, identifier_problem};

/// Best-effort items for a model file that failed to parse or plan: the module with every
/// constant at 0, an empty `Arena`, and each accessor and op view whose name can be read from
/// the text, returning empty slices. Empty when not even the model's name can be read.
///
/// Read leniently: whatever is malformed is skipped (the real error is reported separately).
pub fn placeholder(text: &str) -> TokenStream {
    let (document, _errors) = DeTable::parse_recoverable(text);
    let document = document.get_ref();
    let name = document
        .get("model")
        .and_then(|m| m.get_ref().get("name"))
        .and_then(|n| n.get_ref().as_str())
        .filter(|n| identifier_problem(n).is_none());
    let Some(name) = name else {
        return TokenStream::new();
    };
    let module = Ident::new(name, Span::call_site());

    // (name, element type) of every tensor whose name is an identifier.
    let mut tensors: Vec<(String, &'static str)> = Vec::new();
    // Those that are `external = true`: op views take them as parameters.
    let mut external: Vec<String> = Vec::new();
    if let Some(DeValue::Table(table)) = document.get("tensors").map(|t| t.get_ref()) {
        let mut entries: Vec<_> = table.iter().collect();
        entries.sort_by_key(|(k, _)| k.span().start);
        for (key, value) in entries {
            let name: &str = key.get_ref();
            if identifier_problem(name).is_some() || name == "new" {
                continue;
            }
            let element = value
                .get_ref()
                .get("dtype")
                .and_then(|d| d.get_ref().as_str())
                .and_then(|d| {
                    // A misspelt dtype most likely meant the closest one: use its type so the
                    // user's code does not also get type errors.
                    d.parse::<DType>().ok().or_else(|| {
                        closest(d, DType::ALL.iter().map(|t| t.name()))?
                            .parse()
                            .ok()
                    })
                })
                .map_or("u8", DType::rust_type);
            if value
                .get_ref()
                .get("external")
                .and_then(|e| e.get_ref().as_bool())
                == Some(true)
            {
                external.push(name.to_owned());
            }
            tensors.push((name.to_owned(), element));
        }
    }
    // A model past the macro's limit gets only the module: its stand-ins would cost the
    // compiler as much as the real items.
    let too_big = tensors.len() > crate::codegen::MAX_MACRO_TENSORS;
    if too_big {
        tensors.clear();
        external.clear();
    }
    let elements: std::collections::BTreeMap<&str, &'static str> = tensors
        .iter()
        .map(|(name, element)| (name.as_str(), *element))
        .collect();
    let element_of = |name: &str| elements.get(name).copied();
    let names_in = |value: Option<&toml::Spanned<DeValue<'_>>>| -> Vec<String> {
        match value.map(|v| v.get_ref()) {
            Some(DeValue::Array(items)) => items
                .iter()
                .filter_map(|i| i.get_ref().as_str())
                .filter(|n| element_of(n).is_some())
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        }
    };

    let accessors = tensors.iter().map(|(name, element)| {
        let name = Ident::new(name, Span::call_site());
        let element = format_ident!("{}", element);
        quote! { pub fn #name(&mut self) -> &mut [::core::primitive::#element] { &mut [] } }
    });

    let mut op_methods = Vec::new();
    let mut op_structs = Vec::new();
    let mut seen_ops: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    let ops = match document.get("ops").map(|o| o.get_ref()) {
        Some(DeValue::Array(ops)) if !too_big && ops.len() <= crate::codegen::MAX_MACRO_TENSORS => {
            Some(ops)
        }
        _ => None,
    };
    if let Some(ops) = ops {
        for op in ops.iter() {
            let op = op.get_ref();
            let Some(op_name) = op.get("name").and_then(|n| n.get_ref().as_str()) else {
                continue;
            };
            if identifier_problem(op_name).is_some() || !seen_ops.insert(op_name.to_owned()) {
                continue;
            }
            let inputs = names_in(op.get("inputs"));
            let mut fields: Vec<(String, bool)> = Vec::new();
            for name in inputs {
                if !fields.iter().any(|(f, _)| *f == name) {
                    fields.push((name, false));
                }
            }
            for name in names_in(op.get("outputs"))
                .into_iter()
                .chain(names_in(op.get("scratch")))
            {
                if !fields.iter().any(|(f, _)| *f == name) {
                    fields.push((name, true));
                }
            }
            let struct_name = Ident::new(op_name, Span::call_site());
            let method = format_ident!("op_{}", op_name);
            let decls = fields.iter().map(|(name, mutable)| {
                let field = Ident::new(name, Span::call_site());
                let element = format_ident!("{}", element_of(name).unwrap_or("u8"));
                if *mutable {
                    quote! { pub #field: &'a mut [::core::primitive::#element] }
                } else {
                    quote! { pub #field: &'a [::core::primitive::#element] }
                }
            });
            let values = fields.iter().map(|(name, mutable)| {
                let field = Ident::new(name, Span::call_site());
                if external.contains(name) {
                    quote! { #field }
                } else if *mutable {
                    quote! { #field: &mut [] }
                } else {
                    quote! { #field: &[] }
                }
            });
            // App-owned tensors are parameters; slices accept the user's arrays of any length.
            let params = fields
                .iter()
                .filter(|(name, _)| external.contains(name))
                .map(|(name, mutable)| {
                    let field = Ident::new(name, Span::call_site());
                    let element = format_ident!("{}", element_of(name).unwrap_or("u8"));
                    if *mutable {
                        quote! { #field: &'v mut [::core::primitive::#element] }
                    } else {
                        quote! { #field: &'v [::core::primitive::#element] }
                    }
                });
            op_methods.push(quote! {
                pub fn #method<'v>(&'v mut self, #(#params),*) -> op::#struct_name<'v> {
                    op::#struct_name { #(#values,)* _arena: ::core::marker::PhantomData }
                }
            });
            // `_arena` uses 'a even when no tensor of the op could be read.
            op_structs.push(quote! {
                pub struct #struct_name<'a> { #(#decls,)* _arena: ::core::marker::PhantomData<&'a mut ()> }
            });
        }
    }

    let zeros: Vec<TokenStream> = tensors
        .iter()
        .map(|(name, _)| {
            let name = Ident::new(name, Span::call_site());
            quote! { pub const #name: usize = 0; }
        })
        .collect();
    let pools = pool_items(document, &tensors, &op_methods, &zeros);

    quote! {
        #[allow(dead_code, unused, clippy::all, non_upper_case_globals)]
        pub mod #module {
            #pools
            pub const ARENA_SIZE: usize = 0;
            pub const ARENA_ALIGN: usize = 1;
            pub const LOWER_BOUND: usize = 0;
            pub const STEPS: usize = 0;
            pub const TENSORS: &[::memplan::Placement] = &[];
            pub const TENSOR_INFO: &[::memplan::TensorInfo] = &[];
            pub const WEIGHTS: &[::memplan::WeightInfo] = &[];
            pub const OPS: &[::memplan::OpInfo] = &[];
            pub const MAX_VIEWS: usize = 0;
            pub mod offset { #(#zeros)* }
            pub mod len { #(#zeros)* }
            pub struct Arena { bytes: [::core::primitive::u8; 0] }
            impl Arena {
                pub const fn new() -> Self { Self { bytes: [] } }
                pub fn views(&mut self, k: usize) -> ::core::option::Option<::memplan::Views<'_, MAX_VIEWS>> {
                    ::core::option::Option::None
                }
                #(#accessors)*
                #(#op_methods)*
            }
            impl ::core::default::Default for Arena {
                fn default() -> Self { Self::new() }
            }
            #[allow(non_camel_case_types)]
            pub mod op {
                #(#op_structs)*
            }
        }
    }
}

/// For a model with `[[pools]]`: each pool's module, its `<Pool>Arena` alias, `Arenas` with the op
/// views, and `take()`, all empty.
fn pool_items(
    document: &DeTable<'_>,
    tensors: &[(String, &'static str)],
    op_methods: &[TokenStream],
    zeros: &[TokenStream],
) -> TokenStream {
    let mut names: Vec<&str> = Vec::new();
    // Whether each pool names a `link_section`: its memory is then a `take` parameter.
    let mut sectioned: Vec<bool> = Vec::new();
    if let Some(DeValue::Array(pools)) = document.get("pools").map(|p| p.get_ref()) {
        for pool in pools.iter() {
            let name = pool
                .get_ref()
                .get("name")
                .and_then(|n| n.get_ref().as_str())
                .filter(|n| identifier_problem(n).is_none())
                .filter(|n| !["offset", "len", "op"].contains(n));
            let section = pool.get_ref().get("link_section").is_some();
            if let Some(name) = name
                && !names.contains(&name)
            {
                names.push(name);
                sectioned.push(section);
            }
        }
    }
    if names.is_empty() {
        return TokenStream::new();
    }
    let accessors: Vec<TokenStream> = tensors
        .iter()
        .map(|(name, element)| {
            let name = Ident::new(name, Span::call_site());
            let element = format_ident!("{}", element);
            quote! { pub fn #name(&mut self) -> &mut [::core::primitive::#element] { &mut [] } }
        })
        .collect();
    let idents: Vec<Ident> = names
        .iter()
        .map(|n| Ident::new(n, Span::call_site()))
        .collect();
    let aliases = names.iter().zip(&idents).map(|(name, ident)| {
        let camel: String = name
            .split('_')
            .filter(|p| !p.is_empty())
            .map(|p| p[..1].to_ascii_uppercase() + &p[1..])
            .collect();
        let alias = format_ident!("{}Arena", camel);
        quote! { pub type #alias = #ident::Arena; }
    });
    let modules = idents.iter().zip(&sectioned).map(|(ident, &section)| {
        let arena = if section {
            quote! {
                pub type Memory = ::memplan::Memory<Arena>;
                pub static ARENA: ::memplan::PlacedArena<Arena> = unsafe { ::memplan::PlacedArena::new() };
            }
        } else {
            quote! {
                pub static MEMORY: ::memplan::Memory<Arena> = ::memplan::Memory::zeroed();
                pub static ARENA: ::memplan::PlacedArena<Arena> = unsafe { ::memplan::PlacedArena::new() };
            }
        };
        quote! {
            pub mod #ident {
                pub const ARENA_SIZE: usize = 0;
                pub const ARENA_ALIGN: usize = 1;
                pub const LOWER_BOUND: usize = 0;
                pub const CAPACITY: ::core::option::Option<usize> = ::core::option::Option::None;
                pub const TENSORS: &[::memplan::Placement] = &[];
                pub mod offset { #(#zeros)* }
                pub struct Arena { bytes: [::core::primitive::u8; 0] }
                impl Arena {
                    pub const fn new() -> Self { Self { bytes: [] } }
                    #(#accessors)*
                }
                impl ::core::default::Default for Arena {
                    fn default() -> Self { Self::new() }
                }
                unsafe impl ::memplan::__private::bytemuck::Zeroable for Arena {}
                #arena
            }
        }
    });
    let memory_params = idents
        .iter()
        .zip(&sectioned)
        .filter(|(_, section)| **section)
        .map(|(ident, _)| quote! { #ident: &'static #ident::Memory });
    quote! {
        #(#modules)*
        #(#aliases)*
        pub struct Arenas<'a> { #(pub #idents: &'a mut #idents::Arena,)* }
        impl<'a> Arenas<'a> {
            pub fn new(#(#idents: &'a mut #idents::Arena),*) -> Self { Self { #(#idents),* } }
            pub fn views(&mut self, k: usize) -> ::core::option::Option<::memplan::Views<'_, MAX_VIEWS>> {
                ::core::option::Option::None
            }
            #(#op_methods)*
        }
        #[cfg(all(target_has_atomic = "8", target_has_atomic = "ptr"))]
        pub fn take(#(#memory_params),*) -> ::core::option::Option<Arenas<'static>> { ::core::option::Option::None }
    }
}
