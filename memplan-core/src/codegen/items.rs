//! The generated items: constants, the arena type, tensor accessors and op views.

use std::fmt::Write;

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};

use crate::codegen::docs;
use crate::codegen::layout::{
    aliases_by_op, op_fields, per_item_docs, reported_lifetimes, view_cuts,
};
use crate::codegen::names::camel;
use crate::codegen::tables::{Tables, tables, views_method};
use crate::model_file::{Alias, Model};
use crate::model_plan::{ModelPlan, check};

fn ident(name: &str) -> Ident {
    Ident::new(name, Span::call_site())
}

fn number(value: u64) -> Literal {
    Literal::u64_unsuffixed(value)
}

/// The items of a planned model (see the [module docs](crate::codegen)).
///
/// `plan` must be [`plan_model`](crate::codegen::plan_model)'s plan of `model`; if it does not
/// validate (a bug in the caller), the output is a `compile_error!` saying so rather than code
/// that could alias.
///
/// A model without `[[pools]]` gets one `Arena` type; a model with pools gets a module per pool
/// (each with its own `Arena`, offsets and `TENSORS`), a `<Pool>Arena` alias per pool, and an
/// `Arenas` struct holding all of them, whose `op_<name>` methods hand out views across pools.
///
/// # Runtime
/// Linear in the number of tensors and op references (plus sorting each op's tensors).
pub fn generate(model: &Model, plan: &ModelPlan) -> TokenStream {
    generate_with(model, plan, Tables::Interpreter)
}

/// [`generate`], with the tables `which` says: [`Tables::Named`] leaves out the index tables
/// (`TENSOR_INFO`, `WEIGHTS`, `attrs`, `OPS`, `MAX_VIEWS` and `views(k)`) for a caller that
/// describes the network in a table of its own.
pub fn generate_with(model: &Model, plan: &ModelPlan, which: Tables) -> TokenStream {
    let problems = check(model, plan);
    if !problems.is_empty() || plan.tensors.len() != model.tensors.len() {
        let message = format!(
            "memplan internal error: the plan for `{}` does not validate ({} violations); please report this",
            model.name,
            problems.len()
        );
        return quote! { ::core::compile_error!(#message); };
    }
    match plan.pools.as_slice() {
        [pool] if pool.default => single_pool(model, plan, which),
        _ => several_pools(model, plan, which),
    }
}

// The per-tensor and per-op items are written as source text and lexed once per group: a
// 10,000-tensor model expands to hundreds of thousands of tokens, and building them one by one
// (with `quote!`) costs about twice as much here, and far more inside the compiler, where every
// token built crosses the proc-macro bridge while lexed text does not.

/// Lexes generated source text. It is made from checked identifiers, numbers and escaped
/// strings, so it always lexes; if it did not, the error says so instead of panicking.
fn lex(source: &str) -> TokenStream {
    source.parse().unwrap_or_else(|error| {
        let message = format!("memplan internal error: generated code does not lex ({error})");
        quote! { ::core::compile_error!(#message); }
    })
}

/// `#[doc = "..."]`, the text escaped as a Rust string literal.
fn doc_attr(text: &str) -> String {
    format!("#[doc = {text:?}]")
}

/// The module's docs as one `#[doc]` per line (rustdoc joins them with line breaks), so that
/// a build script's source file has no line as long as the whole table and picture.
fn doc_lines(text: &str) -> Vec<String> {
    text.split('\n').map(str::to_owned).collect()
}

/// [`doc_attr`] for a per-tensor or per-op item: nothing on a big model (see
/// [`per_item_docs`](crate::codegen::tables::per_item_docs)), where the module's docs say it all.
fn item_doc(model: &Model, text: impl FnOnce() -> String) -> String {
    if per_item_docs(model) {
        doc_attr(&text())
    } else {
        String::new()
    }
}

/// The elements of `TENSORS`, comma separated.
fn placements(model: &Model, plan: &ModelPlan, tensors: &[usize]) -> TokenStream {
    let lifetimes = reported_lifetimes(model);
    let mut out = String::with_capacity(64 * tensors.len());
    for &i in tensors {
        let t = &model.tensors[i];
        let (start, end) = lifetimes[i];
        let _ = writeln!(
            out,
            "::memplan::__private::placement({:?}, {}, {}, {start}, {end}),",
            t.name,
            plan.offset(i),
            t.size
        );
    }
    lex(&out)
}

fn offset_consts(model: &Model, plan: &ModelPlan, tensors: &[usize], place: &str) -> TokenStream {
    let mut out = String::with_capacity(96 * tensors.len());
    for &i in tensors {
        let t = &model.tensors[i];
        let doc = format!("Byte offset of `{}` in the {place}.", t.name);
        let _ = writeln!(
            out,
            "{}\npub const {}: usize = {};",
            item_doc(model, || doc),
            t.name,
            plan.offset(i)
        );
    }
    lex(&out)
}

fn len_consts(model: &Model) -> TokenStream {
    let mut out = String::with_capacity(96 * model.tensors.len());
    for t in &model.tensors {
        let doc = if t.memory.external {
            format!(
                "Elements of `{}` ({} bytes), which the application owns (`external`).",
                t.name, t.size
            )
        } else {
            format!("Elements of `{}`'s view ({} bytes).", t.name, t.size)
        };
        let _ = writeln!(
            out,
            "{}\npub const {}: usize = {};",
            item_doc(model, || doc),
            t.name,
            t.len()
        );
    }
    lex(&out)
}

/// Typed accessors of `tensors`, on an arena with a `bytes` field; `len` is the path of the `len`
/// module from there.
fn accessors(model: &Model, plan: &ModelPlan, tensors: &[usize], len: &str) -> TokenStream {
    let index = docs::Index::new(model, plan);
    let mut out = String::with_capacity(320 * tensors.len());
    for &i in tensors {
        let t = &model.tensors[i];
        let _ = writeln!(
            out,
            "{}\n#[inline]\npub fn {name}(&mut self) -> &mut [::core::primitive::{}] {{\n\
             ::memplan::__private::tensor_mut(&mut self.bytes, offset::{name}, {len}::{name})\n}}",
            item_doc(model, || docs::accessor(model, plan, i, &index)),
            t.rust_type(),
            name = t.name
        );
    }
    lex(&out)
}

/// The `op_<name>` methods and the `op::<name>` structs of every op.
fn all_op_views(model: &Model, plan: &ModelPlan) -> (TokenStream, TokenStream) {
    let aliases = aliases_by_op(model);
    let mut methods = String::with_capacity(400 * model.ops.len());
    let mut structs = String::with_capacity(300 * model.ops.len());
    for (k, aliases) in aliases.iter().enumerate() {
        op_views(model, plan, k, aliases, &mut methods, &mut structs);
    }
    (lex(&methods), lex(&structs))
}

fn single_pool(model: &Model, plan: &ModelPlan, which: Tables) -> TokenStream {
    let pool = &plan.pools[0];
    let module = ident(&model.name);
    let placements = placements(model, plan, &pool.tensors);
    let offsets = offset_consts(model, plan, &pool.tensors, "arena");
    let lens = len_consts(model);
    let accessors = accessors(model, plan, &pool.tensors, "len");
    let (op_methods, op_structs) = all_op_views(model, plan);
    let tables = lex(&tables(model, plan, which));
    let views = match which {
        Tables::Interpreter => lex(&views_method(plan)),
        Tables::Named => TokenStream::new(),
    };

    let module_doc = doc_lines(&docs::module(model, plan));
    let arena_doc = docs::arena(model, plan, 0);
    let size_lit = number(pool.arena_size);
    let align_lit = number(pool.alignment);
    let bound_lit = number(pool.lower_bound);
    let steps = number(model.steps());
    let guard = pointer_width_guard(model, plan);

    quote! {
        #(#[doc = #module_doc])*
        #[allow(dead_code, clippy::all)]
        pub mod #module {
            #guard

            /// Bytes of the arena: the plan's height, rounded up to [`ARENA_ALIGN`].
            pub const ARENA_SIZE: usize = #size_lit;
            /// Alignment of the arena: the largest alignment any tensor needs.
            pub const ARENA_ALIGN: usize = #align_lit;
            /// The lower bound the arena is measured against: the most bytes live at one step,
            /// each in-place chain counted once, alignment padding ignored (so an optimal plan
            /// can be above it by padding). The module docs also give the bound without sharing
            /// (every tensor its own bytes), which `memplan import` prints.
            pub const LOWER_BOUND: usize = #bound_lit;
            /// Steps of the schedule: one per op.
            pub const STEPS: usize = #steps;
            /// Every tensor's place in the arena and its lifetime `[start, end)` in steps, in
            /// model order.
            pub const TENSORS: &[::memplan::Placement] = &[#placements];

            /// Byte offset of each tensor in the arena.
            #[allow(non_upper_case_globals)]
            pub mod offset {
                #offsets
            }

            /// Number of elements of each tensor's view.
            #[allow(non_upper_case_globals)]
            pub mod len {
                #lens
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

                #accessors

                #op_methods

                #views
            }

            impl ::core::default::Default for Arena {
                fn default() -> Self {
                    Self::new()
                }
            }

            // SAFETY: `Arena` is `repr(C)` with one field, a byte array, so all-zero bytes are a
            // valid `Arena` (what `Arena::new` builds); `memplan::boxed` relies on it to allocate
            // an arena zeroed on the heap without building it on the stack.
            unsafe impl ::memplan::__private::bytemuck::Zeroable for Arena {}

            #tables

            /// The views each op works on, all borrowed at once from the arena.
            #[allow(non_camel_case_types)]
            pub mod op {
                #op_structs
            }

            const _: () = {
                ::core::assert!(::core::mem::size_of::<Arena>() == ARENA_SIZE);
                ::core::assert!(::core::mem::align_of::<Arena>() == ARENA_ALIGN);
            };
        }
    }
}

/// The largest number the generated code writes as a `usize`: arena sizes, offsets, tensor
/// sizes and ends, element counts, dimensions (of tensors and weights), steps.
fn largest_constant(model: &Model, plan: &ModelPlan) -> u64 {
    let pools = plan.pools.iter().map(|p| p.arena_size.max(p.alignment));
    let tensors = model.tensors.iter().enumerate().map(|(i, t)| {
        let dims = match &t.layout {
            crate::model_file::Layout::Typed { shape, .. } => shape.iter().copied().max(),
            crate::model_file::Layout::Bytes => None,
        };
        (plan.offset(i) + t.size).max(dims.unwrap_or(0))
    });
    let weights = model.weights.iter().flat_map(|w| w.shape.iter().copied());
    pools
        .chain(tensors)
        .chain(weights)
        .chain([model.steps() + 1])
        .max()
        .unwrap_or(0)
}

/// The pointer widths whose `isize` cannot hold every number of the model, and the located
/// message for them: `None` when a 32-bit `isize` holds them. The macro and
/// [`expand_model`](crate::expand_model) compile the module only for the other widths and
/// give these the message and the stand-in items, so rustc never reaches its own unlocated "too
/// big for the target architecture" on them.
pub(crate) fn narrow_widths(
    model: &Model,
    plan: &ModelPlan,
) -> Option<(Vec<&'static str>, String)> {
    let largest = largest_constant(model, plan);
    // From 32 bits up: a module above 32 KiB would otherwise carry the stand-in items for 16-bit
    // targets (which keep the `const` guard, and rustc's own error beside it).
    if largest <= i32::MAX as u64 {
        return None;
    }
    let widths: Vec<&'static str> = [("16", 15u32), ("32", 31), ("64", 63)]
        .into_iter()
        .filter(|&(_, bits)| largest > (1u64 << bits) - 1)
        .map(|(width, _)| width)
        .collect();
    // Where: the largest tensor (or weight, by its largest dimension), else the model's name.
    let tensors = model.tensors.iter().map(|t| (t.size, t.location));
    let weights = model
        .weights
        .iter()
        .map(|w| (w.shape.iter().copied().max().unwrap_or(0), w.location));
    let at = tensors
        .chain(weights)
        .max_by_key(|&(value, _)| value)
        .map_or(model.locations.name, |(_, at)| at);
    let widest = widths[widths.len() - 1];
    let bits = match widest {
        "16" => 15,
        "32" => 31,
        _ => 63,
    };
    let message = format!(
        "memplan: model `{}` needs numbers up to {largest} (arena sizes, offsets, tensor sizes and \
         shapes), more than a {widest}-bit target allows{}: Rust limits every value, so every \
         arena, to `isize::MAX` bytes (2^{bits} - 1)\n --> {}:{}:{}\n  = help: build it for a 64-bit \
         target, or shrink the model's tensors or pools (the largest tensor is here) so every \
         arena fits this target's address space",
        model.name,
        if widths.len() > 1 {
            " (or a narrower one)"
        } else {
            ""
        },
        model.file,
        at.line,
        at.column
    );
    Some((widths, message))
}

/// A `const` assertion that every constant of the module fits in the target's `isize`: the plan
/// is computed in `u64` on the host, and a 4 GiB tensor would wrap on a 32-bit target; and Rust
/// limits every type (so every arena) to `isize::MAX` bytes, so a 3 GiB arena, which fits a
/// 32-bit `usize`, would fail in rustc with an unlocated "too big for the target architecture".
/// The numbers are compared as `u128`, which never wraps.
fn pointer_width_guard(model: &Model, plan: &ModelPlan) -> TokenStream {
    let largest = largest_constant(model, plan);
    let literal = Literal::u128_suffixed(u128::from(largest));
    let message = format!(
        "memplan: model `{}` ({}) needs numbers up to {largest}, more than this target allows \
         (Rust limits every value, so every arena, to `isize::MAX` bytes); build it for a \
         64-bit target, or shrink the model's tensors or pools",
        model.name, model.file
    );
    quote! {
        const _: () = ::core::assert!(
            #literal <= ::core::primitive::isize::MAX as ::core::primitive::u128,
            #message
        );
    }
}

fn several_pools(model: &Model, plan: &ModelPlan, which: Tables) -> TokenStream {
    let module = ident(&model.name);
    let lens = len_consts(model);
    let steps = number(model.steps());
    let module_doc = doc_lines(&docs::module(model, plan));
    let guard = pointer_width_guard(model, plan);

    let mut pool_modules = Vec::new();
    let mut aliases = Vec::new();
    let mut holder_fields = Vec::new();
    let mut holder_params = Vec::new();
    let mut holder_inits = Vec::new();
    let mut statics_taken = Vec::new();
    // The pools whose memory the application declares (in its section), with the line to write.
    let mut sectioned: Vec<(Ident, String)> = Vec::new();
    let mut statics_put_back = Vec::new();
    for (p, pool) in plan.pools.iter().enumerate() {
        let name = ident(&pool.name);
        let placements = placements(model, plan, &pool.tensors);
        let offsets = offset_consts(model, plan, &pool.tensors, "pool's arena");
        let accessors = accessors(model, plan, &pool.tensors, "super::len");
        let arena_doc = docs::arena(model, plan, p);
        let size_lit = number(pool.arena_size);
        let align_lit = number(pool.alignment);
        let bound_lit = number(pool.lower_bound);
        let capacity = match pool.capacity {
            Some(c) => {
                let c = number(c);
                quote! { ::core::option::Option::Some(#c) }
            }
            None => quote! { ::core::option::Option::None },
        };
        let arena_static = match &pool.link_section {
            None => {
                // Two statics: the bytes, which the compiler does not build (uninitialised to
                // `rustc`, so a 1 GiB pool costs it no gigabytes; zeroed by the first `take`),
                // and the flag beside them, both zero bytes in `.bss`.
                let memory_doc = format!(
                    "The memory of pool `{}`'s arena, a `static` (zero bytes: in `.bss`), zeroed \
                     when [`super::take`] first hands it out.",
                    pool.name
                );
                let flag_doc = format!(
                    "The hand-out flag of pool `{}`'s arena ([`MEMORY`]); [`super::take`] hands \
                     it out once.",
                    pool.name
                );
                quote! {
                    #[doc = #memory_doc]
                    pub static MEMORY: ::memplan::Memory<Arena> = ::memplan::Memory::zeroed();
                    #[doc = #flag_doc]
                    // SAFETY: the one `PlacedArena` over this module's own `Arena` type.
                    pub static ARENA: ::memplan::PlacedArena<Arena> = unsafe { ::memplan::PlacedArena::new() };
                }
            }
            Some(section) => {
                // The generated code places nothing in a section: that is `unsafe` (the section
                // decides what the bytes are), so the application writes it, where
                // `forbid(unsafe_code)` sees it.
                let memory_doc = docs::pool_memory(model, &pool.name, section);
                let flag_doc = format!(
                    "The hand-out flag of pool `{}`'s arena, in ordinary memory (zero bytes: in \
                     `.bss`); the bytes are the application's [`Memory`] static, which \
                     [`super::take`] takes.",
                    pool.name
                );
                sectioned.push((name.clone(), memory_doc.1));
                let memory_doc = memory_doc.0;
                quote! {
                    #[doc = #memory_doc]
                    pub type Memory = ::memplan::Memory<Arena>;
                    #[doc = #flag_doc]
                    // SAFETY: the one `PlacedArena` over this module's own `Arena` type.
                    pub static ARENA: ::memplan::PlacedArena<Arena> = unsafe { ::memplan::PlacedArena::new() };
                }
            }
        };
        let pool_doc = format!(
            "Pool `{}`: {} bytes{}, {} tensors.",
            pool.name,
            pool.arena_size,
            pool.capacity
                .map_or(String::new(), |c| format!(" of its {c}-byte limit")),
            pool.tensors.len()
        );
        pool_modules.push(quote! {
            #[doc = #pool_doc]
            pub mod #name {
                /// Bytes of this pool's arena: its plan's height, rounded up to [`ARENA_ALIGN`].
                pub const ARENA_SIZE: usize = #size_lit;
                /// Alignment of this pool's arena.
                pub const ARENA_ALIGN: usize = #align_lit;
                /// The lower bound this pool's arena is measured against: the most bytes live at
                /// one step in it, each in-place chain counted once, alignment padding ignored.
                pub const LOWER_BOUND: usize = #bound_lit;
                /// The pool's `size` limit from the model, if any.
                pub const CAPACITY: ::core::option::Option<usize> = #capacity;
                /// Every tensor of this pool: its place in the pool's arena and its lifetime.
                pub const TENSORS: &[::memplan::Placement] = &[#placements];

                /// Byte offset of each tensor of this pool in its arena.
                #[allow(non_upper_case_globals)]
                pub mod offset {
                    #offsets
                }

                #[doc = #arena_doc]
                #[repr(C, align(#align_lit))]
                pub struct Arena {
                    pub(super) bytes: [::core::primitive::u8; ARENA_SIZE],
                }

                impl Arena {
                    /// A zeroed arena; `const`, so it can initialise a `static`.
                    pub const fn new() -> Self {
                        Self { bytes: [0; ARENA_SIZE] }
                    }

                    #accessors
                }

                impl ::core::default::Default for Arena {
                    fn default() -> Self {
                        Self::new()
                    }
                }

                // SAFETY: `Arena` is `repr(C)` with one field, a byte array, so all-zero bytes
                // are a valid `Arena` (what `Arena::new` builds); `memplan::boxed` relies on it.
                unsafe impl ::memplan::__private::bytemuck::Zeroable for Arena {}

                #arena_static

                const _: () = {
                    ::core::assert!(::core::mem::size_of::<Arena>() == ARENA_SIZE);
                    ::core::assert!(::core::mem::align_of::<Arena>() == ARENA_ALIGN);
                };
            }
        });
        let alias = format_ident!("{}Arena", camel(&pool.name));
        let alias_doc = format!("The arena type of pool `{}`.", pool.name);
        aliases.push(quote! { #[doc = #alias_doc] pub type #alias = #name::Arena; });
        let field_doc = format!("The arena of pool `{}`.", pool.name);
        holder_fields.push(quote! { #[doc = #field_doc] pub #name: &'a mut #name::Arena });
        holder_params.push(quote! { #name: &'a mut #name::Arena });
        holder_inits.push(quote! { #name });
        statics_taken.push(match pool.link_section {
            None => quote! { #name::ARENA.take(&#name::MEMORY) },
            Some(_) => quote! { #name::ARENA.take(#name) },
        });
        statics_put_back.push(quote! { #name::ARENA.put_back(arena) });
    }
    let pool_names: Vec<Ident> = plan.pools.iter().map(|p| ident(&p.name)).collect();
    let memory_params = sectioned
        .iter()
        .map(|(name, _)| quote! { #name: &'static #name::Memory });
    let take_doc = take_doc(&model.name, &sectioned);
    let (op_methods, op_structs) = all_op_views(model, plan);
    let tables = lex(&tables(model, plan, which));
    let views = match which {
        Tables::Interpreter => lex(&views_method(plan)),
        Tables::Named => TokenStream::new(),
    };

    quote! {
        #(#[doc = #module_doc])*
        #[allow(dead_code, clippy::all)]
        pub mod #module {
            #guard

            /// Steps of the schedule: one per op.
            pub const STEPS: usize = #steps;

            /// Number of elements of each tensor's view.
            #[allow(non_upper_case_globals)]
            pub mod len {
                #lens
            }

            #(#pool_modules)*

            #(#aliases)*

            /// Every pool's arena, borrowed together: the op views reach across pools.
            pub struct Arenas<'a> {
                #(#holder_fields,)*
            }

            impl<'a> Arenas<'a> {
                /// Holds the pools' arenas (for example `static`s in their memories, or locals).
                pub fn new(#(#holder_params),*) -> Self {
                    Self { #(#holder_inits),* }
                }

                #op_methods

                #views
            }

            #tables

            #(#[doc = #take_doc])*
            #[cfg(all(target_has_atomic = "8", target_has_atomic = "ptr"))]
            pub fn take(#(#memory_params),*) -> ::core::option::Option<Arenas<'static>> {
                #(let #pool_names = #statics_taken;)*
                if #(#pool_names.is_some())&&* {
                    return ::core::option::Option::Some(Arenas { #(#pool_names: #pool_names?),* });
                }
                #(if let ::core::option::Option::Some(arena) = #pool_names {
                    let _ = #statics_put_back;
                })*
                ::core::option::Option::None
            }

            /// The views each op works on, all borrowed at once from the arenas.
            #[allow(non_camel_case_types)]
            pub mod op {
                #op_structs
            }
        }
    }
}

/// The docs of a model's `take`: what it hands out, and for each pool in a linker section the
/// `static` the application declares and passes.
fn take_doc(model: &str, sectioned: &[(Ident, String)]) -> Vec<String> {
    let mut lines = vec![
        "Every pool's arena, once: `None` if any was already taken, and then none is consumed \
         (the ones this call took are put back)."
            .to_owned(),
    ];
    if !sectioned.is_empty() {
        lines.push(String::new());
        lines.push(
            "A pool with a `link_section` is memory the application declares, in that section \
             (the `unsafe` of placing it is the application's to write), and passes here:"
                .to_owned(),
        );
        lines.push(String::new());
        lines.push("```ignore".to_owned());
        for (_, line) in sectioned {
            lines.extend(line.split('\n').map(str::to_owned));
        }
        let args: Vec<String> = sectioned
            .iter()
            .map(|(name, _)| format!("&{}", name.to_string().to_uppercase()))
            .collect();
        lines.push(format!(
            "let arenas = {model}::take({}).unwrap();",
            args.join(", ")
        ));
        lines.push("```".to_owned());
    }
    lines
}

/// The `op_<name>` method (into `methods`) and the `op::<name>` struct (into `structs`) of op
/// `k`.
///
/// The op's distinct arena tensors are all live at step `k`, so a valid plan gives them disjoint
/// bytes within each pool, except an input that the op overwrites in place: that input and its
/// output are one `&mut` field, named after the output. Sorted by offset, each pool's pieces are
/// cut one after the other by `__private::cut::<GAP, SIZE, REST, N>`, a split of a fixed-size
/// array whose sizes are constants: no bounds check, no branch, no panic path. A tensor read twice
/// by the op is one field. App-owned (`external`) tensors are parameters of the method, as arrays
/// of their exact length.
fn op_views(
    model: &Model,
    plan: &ModelPlan,
    k: usize,
    aliases: &[&Alias],
    methods: &mut String,
    structs: &mut String,
) {
    let op = &model.ops[k];
    let fields = op_fields(model, k, aliases);

    let several = !matches!(plan.pools.as_slice(), [pool] if pool.default);
    let mut statements = String::new();
    // Each pool's pieces in offset order, cut one after the other by `__private::cut`, whose
    // sizes are all constants: address arithmetic only, no bounds check, no branch.
    let mut current_pool = None;
    let mut remaining = 0u64;
    let cuts = view_cuts(model, plan, &fields);
    for (c, cut) in cuts.iter().enumerate() {
        if current_pool != Some(cut.pool) {
            current_pool = Some(cut.pool);
            remaining = plan.pools[cut.pool].arena_size;
            let bytes = if several {
                format!("&mut self.{}.bytes", plan.pools[cut.pool].name)
            } else {
                "&mut self.bytes".to_owned()
            };
            let _ = writeln!(statements, "let rest = {bytes};");
        }
        let last_of_pool = cuts.get(c + 1).is_none_or(|next| next.pool != cut.pool);
        let rest = remaining - cut.gap - cut.size;
        let _ = writeln!(
            statements,
            "let (piece_{}, {}) = ::memplan::__private::cut::<{}, {}, {rest}, {remaining}>(rest);",
            cut.field,
            if last_of_pool { "_" } else { "rest" },
            cut.gap,
            cut.size,
        );
        remaining = rest;
    }
    let name = &op.name;
    let _ = writeln!(
        structs,
        "{}\npub struct {name}<'a> {{",
        item_doc(model, || docs::op_struct(model, k))
    );
    let mut params = Vec::new();
    let mut values = String::new();
    for (f, field) in fields.iter().enumerate() {
        let tensor = &model.tensors[field.tensor];
        let element = format!("::core::primitive::{}", tensor.rust_type());
        let reference = if field.mutable { "&'a mut" } else { "&'a" };
        let _ = writeln!(
            structs,
            "{}\npub {}: {reference} [{element}],",
            item_doc(model, || docs::field(
                model,
                field.tensor,
                field.mutable,
                field.absorbs
            )),
            tensor.name
        );
        if tensor.memory.external {
            let reference = if field.mutable { "&'v mut" } else { "&'v" };
            params.push(format!(
                "{}: {reference} [{element}; len::{}]",
                tensor.name, tensor.name
            ));
            let _ = write!(values, "{}, ", tensor.name);
        } else {
            let view = if field.mutable { "piece_mut" } else { "piece" };
            let _ = write!(
                values,
                "{}: ::memplan::__private::{view}(piece_{f}), ",
                tensor.name
            );
        }
    }
    if fields.is_empty() {
        // An op that touches no tensor still borrows the arena: keep the lifetime used.
        structs.push_str(
            "#[doc = \"The op has no tensor views; this only keeps the arena borrowed.\"]\n\
             pub _arena: ::core::marker::PhantomData<&'a mut ()>,\n",
        );
        values.push_str("_arena: ::core::marker::PhantomData, ");
    }
    let _ = writeln!(structs, "}}");
    let signature = if params.is_empty() {
        format!("pub fn op_{name}(&mut self) -> op::{name}<'_>")
    } else {
        format!(
            "pub fn op_{name}<'v>(&'v mut self, {}) -> op::{name}<'v>",
            params.join(", ")
        )
    };
    let uses_self = if statements.is_empty() {
        "let _ = self;\n"
    } else {
        ""
    };
    let _ = writeln!(
        methods,
        "{}\n#[inline]\n{signature} {{\n{uses_self}{statements}op::{name} {{ {values}}}\n}}",
        item_doc(model, || docs::op_method(model, k, aliases))
    );
}
