//! Generated arena modules extended with items of a build step's own (`memplan-build` adds a
//! network's constants, tables and `run` inside the module `memplan!` would generate).

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};

/// `module` (the tokens of [`crate::codegen::generate`]: outer attributes, then `pub mod <name>
/// { .. }`) with `items` appended inside the module's braces. With `docs` false the module's
/// `#[doc]` attributes (the plan's table and picture) are left out. `None` when `module` does
/// not end in a braced group (a `compile_error!` for a plan that does not validate).
pub fn append_to_module(
    module: TokenStream,
    items: TokenStream,
    docs: bool,
) -> Option<TokenStream> {
    let mut trees: Vec<TokenTree> = module.into_iter().collect();
    let last = trees.pop()?;
    let TokenTree::Group(body) = last else {
        return None;
    };
    if body.delimiter() != Delimiter::Brace {
        return None;
    }
    let mut inner = body.stream();
    inner.extend(items);
    let mut group = Group::new(Delimiter::Brace, inner);
    group.set_span(body.span());
    let mut out = TokenStream::new();
    let mut i = 0;
    while i < trees.len() {
        let is_doc = matches!(&trees[i], TokenTree::Punct(p) if p.as_char() == '#')
            && matches!(trees.get(i + 1), Some(TokenTree::Group(g))
                if g.delimiter() == Delimiter::Bracket
                    && matches!(g.stream().into_iter().next(), Some(TokenTree::Ident(id)) if id == "doc"));
        if is_doc && !docs {
            i += 2;
            continue;
        }
        out.extend([trees[i].clone()]);
        i += 1;
    }
    out.extend([TokenTree::Group(group)]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_go_inside_the_module_and_docs_can_be_left_out() {
        let module: TokenStream =
            "#[doc = \"plan\"] #[allow(dead_code)] pub mod net { pub const A: usize = 1; }"
                .parse()
                .unwrap();
        let items: TokenStream = "pub fn run() {}".parse().unwrap();
        let with = append_to_module(module.clone(), items.clone(), true)
            .unwrap()
            .to_string();
        assert!(with.contains("doc = \"plan\""), "{with}");
        assert!(
            with.contains("pub const A : usize = 1 ; pub fn run () { }"),
            "{with}"
        );
        let without = append_to_module(module, items, false).unwrap().to_string();
        assert!(!without.contains("doc"), "{without}");
        assert!(without.contains("allow"), "{without}");
        let error: TokenStream = "::core::compile_error!(\"x\");".parse().unwrap();
        assert!(append_to_module(error, TokenStream::new(), true).is_none());
    }
}
