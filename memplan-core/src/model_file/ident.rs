//! Which names can become Rust identifiers in the generated code.

/// Rust keywords (strict and reserved, all editions up to 2024): not usable as plain identifiers.
const KEYWORDS: [&str; 52] = [
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];

/// Why a name is not a usable identifier, as a fragment ("is a Rust keyword"), or `None` if it
/// is one: ASCII letters, digits and `_`, not starting with a digit, not `_` alone, not a keyword.
pub fn identifier_problem(name: &str) -> Option<&'static str> {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return Some("is empty");
    };
    if !(first.is_ascii_alphabetic() || first == '_') {
        return Some("must start with an ASCII letter or `_`");
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Some("may only contain ASCII letters, digits and `_`");
    }
    if name == "_" {
        return Some("is `_`, which is not an identifier");
    }
    if KEYWORDS.contains(&name) {
        return Some("is a Rust keyword");
    }
    None
}

/// `name` turned into a valid identifier: invalid characters become `_`, a leading digit or a
/// keyword gets a `_` prefix. For tools that write model files from other formats (ONNX names
/// like `conv1/Relu:0`); they keep the original in `source`.
pub fn sanitize_identifier(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) || out == "_" {
        out.insert(0, '_');
    }
    if out == "_" {
        out.push('_');
    }
    if KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_identifiers() {
        for good in ["conv1", "_x", "Input", "a_b_2"] {
            assert_eq!(identifier_problem(good), None, "{good}");
        }
        for bad in ["", "1x", "conv-1", "type", "_", "self", "héllo", "a b"] {
            assert!(identifier_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn sanitized_names_are_identifiers() {
        for name in ["conv1/Relu:0", "0", "", "type", "_", "a.b"] {
            let fixed = sanitize_identifier(name);
            assert_eq!(identifier_problem(&fixed), None, "{name} -> {fixed}");
        }
    }
}
