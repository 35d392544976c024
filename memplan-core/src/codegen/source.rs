//! Generated code as a source file for a build script: one item, statement or field per line,
//! not one line of a megabyte.
//!
//! `TokenStream::to_string` writes everything on one line, which editors, `rustc`'s error
//! snippets and diffs handle badly on real models. Formatting properly would need a Rust
//! formatter in the build; instead the token tree is printed with a line break after every `;`,
//! `,` that ends a field or an element at the top of a brace or bracket group, and around every
//! `{ ... }` block: cheap (linear), dependency-free and deterministic.

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

/// The tokens as Rust source, broken into lines and indented by nesting.
pub fn to_source(tokens: &TokenStream) -> String {
    let mut out = String::new();
    write_stream(tokens.clone(), 0, false, &mut out);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

fn newline(out: &mut String, depth: usize) {
    while out.ends_with(' ') {
        out.pop();
    }
    if !out.ends_with('\n') && !out.is_empty() {
        out.push('\n');
    }
    for _ in 0..depth {
        out.push_str("    ");
    }
}

/// What was written last, for the spacing before the next token.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Last {
    /// Start of a line or of a group: no space.
    Start,
    /// A punct glued to what follows (`::`, `->`, `'a`, `#`, `&`, `!`, `.`).
    Glued,
    /// An identifier (a keyword when `true`).
    Ident(bool),
    /// Anything else: a space before the next token.
    Other,
}

const SPACED_KEYWORDS: [&str; 14] = [
    "mut", "in", "return", "as", "dyn", "impl", "where", "else", "let", "if", "match", "while",
    "for", "unsafe",
];

/// Writes `tokens` at nesting `depth`; `list` when they are the inside of `{}` or `[]`, whose
/// long `,`-separated entries get a line each.
fn write_stream(tokens: TokenStream, depth: usize, list: bool, out: &mut String) {
    let mut last = Last::Start;
    // Generic arguments `<..>` at this level: their commas never end a line.
    let mut angles = 0usize;
    for tree in tokens {
        let space = match (&tree, last) {
            (_, Last::Start | Last::Glued) => false,
            (TokenTree::Punct(p), _) => match p.as_char() {
                ',' | ';' | '.' | '?' => false,
                ':' => p.spacing() == Spacing::Joint && !matches!(last, Last::Ident(false)),
                _ => true,
            },
            (TokenTree::Group(g), Last::Ident(false)) => {
                !matches!(g.delimiter(), Delimiter::Parenthesis | Delimiter::Bracket)
            }
            _ => true,
        };
        if space && !out.ends_with(['\n', ' ']) {
            out.push(' ');
        }
        last = Last::Other;
        match tree {
            TokenTree::Group(group) => {
                let (open, close, block) = match group.delimiter() {
                    Delimiter::Brace => ("{", "}", true),
                    Delimiter::Bracket => ("[", "]", false),
                    Delimiter::Parenthesis => ("(", ")", false),
                    Delimiter::None => ("", "", false),
                };
                let attribute = group.delimiter() == Delimiter::Bracket && out.ends_with('#');
                out.push_str(open);
                let inner = group.stream();
                let list = matches!(group.delimiter(), Delimiter::Brace | Delimiter::Bracket);
                if block && !inner.is_empty() {
                    newline(out, depth + 1);
                    write_stream(inner, depth + 1, list, out);
                    newline(out, depth);
                } else {
                    write_stream(inner, depth, list, out);
                }
                out.push_str(close);
                if block || attribute {
                    newline(out, depth);
                    last = Last::Start;
                }
            }
            TokenTree::Punct(punct) => {
                let c = punct.as_char();
                if c == '<' {
                    angles += 1;
                } else if c == '>' && !out.ends_with(['-', '=']) {
                    angles = angles.saturating_sub(1);
                }
                out.push(c);
                if c == ';' || (c == ',' && list && angles == 0 && ends_line_after_comma(out)) {
                    newline(out, depth);
                    last = Last::Start;
                } else if punct.spacing() == Spacing::Joint
                    || matches!(c, '\'' | '#' | '&' | '!' | '.')
                    || out.ends_with("::")
                {
                    last = Last::Glued;
                }
            }
            TokenTree::Ident(ident) => {
                let text = ident.to_string();
                last = Last::Ident(SPACED_KEYWORDS.contains(&text.as_str()));
                out.push_str(&text);
            }
            TokenTree::Literal(literal) => out.push_str(&literal.to_string()),
        }
    }
}

/// Whether the line so far is long enough that a `,` should end it (fields, table entries).
fn ends_line_after_comma(out: &str) -> bool {
    let line = out.rsplit('\n').next().unwrap_or(out);
    line.trim_start().len() > 60
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breaks_lines_and_keeps_the_tokens() {
        let tokens: TokenStream = "pub mod m { pub const A: usize = 1; pub fn f<'a>(x: &'a mut [u8]) -> &'a [u8] { &x[..] } #[doc = \"a; b\"] pub struct S { pub a: u8 } }"
            .parse()
            .unwrap();
        let source = to_source(&tokens);
        assert!(source.lines().count() >= 6, "{source}");
        assert!(source.contains("\"a; b\""), "{source}");
        assert!(source.contains("&'a mut [u8]"), "{source}");
        let again: TokenStream = source.parse().unwrap();
        assert_eq!(again.to_string(), tokens.to_string());
    }
}
