//! The generated items: constants, the arena type, tensor accessors and op views.

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};

use crate::bounds::lower_bound;
use crate::codegen::docs;
use crate::model::align_up;
use crate::model_file::Model;
use crate::solve::Solution;
use crate::validate::validate;

fn ident(name: &str) -> Ident {
    Ident::new(name, Span::call_site())
}

/// An element type, spelled so no generated item (an op named `f32`) can shadow it.
fn element(name: &str) -> TokenStream {
    let name = ident(name);
    quote! { ::core::primitive::#name }
}

fn number(value: u64) -> Literal {
    Literal::u64_unsuffixed(value)
}

/// The items of a planned model (see the [module docs](crate::codegen)).
///
/// `solution` must be a plan of `model.to_problem()`; if it is not valid for it (a bug in the
/// caller), the output is a `compile_error!` saying so rather than code that could alias.
///
/// # Runtime
/// Linear in the number of tensors and op references (plus sorting each op's tensors).
pub fn generate(model: &Model, solution: &Solution) -> TokenStream {
    let problem = model.to_problem();
    let plan = &solution.plan;
    let violations = validate(&problem, plan);
    if !violations.is_empty() {
        let message = format!(
            "memplan internal error: the plan for `{}` does not validate ({} violations); please report this",
            model.name,
            violations.len()
        );
        return quote! { ::core::compile_error!(#message); };
    }

    let arena_align = model.arena_alignment();
    let arena_size = align_up(plan.arena_size, arena_align);
    let bound = lower_bound(&problem);
    let module = ident(&model.name);

    let placements = model.tensors.iter().zip(&plan.offsets).map(|(t, &offset)| {
        let name = &t.name;
        let (offset, size) = (number(offset), number(t.size));
        let (start, end) = (number(t.lifetime.start), number(t.lifetime.end));
        quote! {
            ::memplan::Placement { name: #name, offset: #offset, size: #size, start: #start, end: #end }
        }
    });
    let offsets = model.tensors.iter().zip(&plan.offsets).map(|(t, &offset)| {
        let name = ident(&t.name);
        let offset = number(offset);
        let doc = format!("Byte offset of `{}` in the arena.", t.name);
        quote! { #[doc = #doc] pub const #name: usize = #offset; }
    });
    let lens = model.tensors.iter().map(|t| {
        let name = ident(&t.name);
        let len = number(t.len());
        let doc = format!("Elements of `{}`'s view ({} bytes).", t.name, t.size);
        quote! { #[doc = #doc] pub const #name: usize = #len; }
    });
    let accessors = model.tensors.iter().enumerate().map(|(i, t)| {
        let name = ident(&t.name);
        let element = element(t.rust_type());
        let doc = docs::accessor(model, i, plan.offsets[i]);
        quote! {
            #[doc = #doc]
            #[inline]
            pub fn #name(&mut self) -> &mut [#element] {
                ::memplan::__private::view_mut::<#element>(
                    &mut self.bytes[offset::#name..offset::#name + len::#name * ::core::mem::size_of::<#element>()],
                )
            }
        }
    });
    let (op_methods, op_structs): (Vec<_>, Vec<_>) = (0..model.ops.len())
        .map(|k| op_views(model, k, &plan.offsets))
        .unzip();

    let module_doc = docs::module(model, solution, arena_size, bound);
    let arena_doc = docs::arena(model, arena_size, arena_align, bound);
    let size_lit = number(arena_size);
    let align_lit = number(arena_align);
    let bound_lit = number(bound);
    let steps = number(model.steps());

    quote! {
        #[doc = #module_doc]
        #[allow(dead_code, clippy::all)]
        pub mod #module {
            /// Bytes of the arena: the plan's height, rounded up to [`ARENA_ALIGN`].
            pub const ARENA_SIZE: usize = #size_lit;
            /// Alignment of the arena: the largest alignment any tensor needs.
            pub const ARENA_ALIGN: usize = #align_lit;
            /// The most bytes live at one step: no plan can be smaller (alignment padding aside).
            pub const LOWER_BOUND: usize = #bound_lit;
            /// Steps of the schedule: one per op.
            pub const STEPS: usize = #steps;
            /// Every tensor's place in the arena and its lifetime `[start, end)` in steps, in
            /// model order.
            pub const TENSORS: &[::memplan::Placement] = &[#(#placements),*];

            /// Byte offset of each tensor in the arena.
            #[allow(non_upper_case_globals)]
            pub mod offset {
                #(#offsets)*
            }

            /// Number of elements of each tensor's view.
            #[allow(non_upper_case_globals)]
            pub mod len {
                #(#lens)*
            }

            #[doc = #arena_doc]
            #[repr(C, align(#align_lit))]
            pub struct Arena {
                bytes: [::core::primitive::u8; ARENA_SIZE],
            }

            impl Arena {
                /// A zeroed arena; `const`, so it can initialise a `static`.
                pub const fn new() -> Self {
                    Self { bytes: [0; ARENA_SIZE] }
                }

                #(#accessors)*

                #(#op_methods)*
            }

            impl ::core::default::Default for Arena {
                fn default() -> Self {
                    Self::new()
                }
            }

            /// The views each op works on, all borrowed at once from the arena.
            #[allow(non_camel_case_types)]
            pub mod op {
                #(#op_structs)*
            }

            const _: () = {
                ::core::assert!(::core::mem::size_of::<Arena>() == ARENA_SIZE);
                ::core::assert!(::core::mem::align_of::<Arena>() == ARENA_ALIGN);
            };
        }
    }
}

/// The `op_<name>` method and the `op::<name>` struct of op `k`.
///
/// The op's distinct tensors are all live at step `k`, so a valid plan gives them disjoint bytes:
/// sorted by offset, they are cut from the arena with `split_at_mut`, one after the other. A tensor
/// read twice by the op is one field.
fn op_views(model: &Model, k: usize, offsets: &[u64]) -> (TokenStream, TokenStream) {
    let op = &model.ops[k];
    // (tensor, mutable) in declaration order, each tensor once.
    let mut fields: Vec<(usize, bool)> = Vec::new();
    let roles = op
        .inputs
        .iter()
        .map(|&t| (t, false))
        .chain(op.outputs.iter().chain(&op.scratch).map(|&t| (t, true)));
    for (t, mutable) in roles {
        if !fields.iter().any(|&(seen, _)| seen == t) {
            fields.push((t, mutable));
        }
    }
    let mut by_offset: Vec<usize> = (0..fields.len()).collect();
    by_offset.sort_by_key(|&f| (offsets[fields[f].0], fields[f].0));

    let mut statements = Vec::new();
    let mut cursor = 0u64;
    for &f in &by_offset {
        let tensor = &model.tensors[fields[f].0];
        let offset = offsets[fields[f].0];
        let size = number(tensor.size);
        let piece = format_ident!("piece_{}", f);
        if offset > cursor {
            let skip = number(offset - cursor);
            statements.push(quote! { let (_, rest) = rest.split_at_mut(#skip); });
        }
        statements.push(quote! { let (#piece, rest) = rest.split_at_mut(#size); });
        cursor = offset + tensor.size;
    }

    let struct_name = ident(&op.name);
    let struct_fields = fields.iter().map(|&(t, mutable)| {
        let tensor = &model.tensors[t];
        let name = ident(&tensor.name);
        let element = element(tensor.rust_type());
        let doc = docs::field(tensor, mutable);
        if mutable {
            quote! { #[doc = #doc] pub #name: &'a mut [#element] }
        } else {
            quote! { #[doc = #doc] pub #name: &'a [#element] }
        }
    });
    let field_values = fields.iter().enumerate().map(|(f, &(t, mutable))| {
        let tensor = &model.tensors[t];
        let name = ident(&tensor.name);
        let element = element(tensor.rust_type());
        let piece = format_ident!("piece_{}", f);
        if mutable {
            quote! { #name: ::memplan::__private::view_mut::<#element>(#piece) }
        } else {
            quote! { #name: ::memplan::__private::view::<#element>(#piece) }
        }
    });
    let method = format_ident!("op_{}", op.name);
    let method_doc = docs::op_method(model, k);
    let struct_doc = docs::op_struct(model, k);
    let method_tokens = quote! {
        #[doc = #method_doc]
        pub fn #method(&mut self) -> op::#struct_name<'_> {
            let rest: &mut [::core::primitive::u8] = &mut self.bytes;
            #(#statements)*
            let _ = rest;
            op::#struct_name { #(#field_values),* }
        }
    };
    let struct_tokens = quote! {
        #[doc = #struct_doc]
        pub struct #struct_name<'a> {
            #(#struct_fields),*
        }
    };
    (method_tokens, struct_tokens)
}
