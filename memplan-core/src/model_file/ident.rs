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

/// Why `name` cannot name the module a model generates, as [`crate::parse_model`] says it of
/// `[model] name` ("model name `Vec` ..."), or `None` when it can: it must be an identifier, not
/// a crate the generated code and its caller use (`memplan`, `core`, `std`, ...), and not a name
/// of Rust's prelude or a primitive type, which the module would hide from the code around it
/// (`Vec`, `Option`, `u8`).
///
/// For code that declares the module itself: the `memplan!` macro's stand-in for a model with an
/// error declares none when this is `Some` (a stand-in `pub mod Vec` would break the caller's
/// `Vec::new()`), and an importer can check a name it is given.
///
/// # Runtime
/// A parse of a one-op model with that name: the rules are `parse_model`'s by construction.
pub fn module_name_problem(name: &str) -> Option<String> {
    let probe = format!(
        "[model]\nname = {}\ninputs = [\"x\"]\noutputs = [\"y\"]\n\n[tensors]\n\
         x = {{ dtype = \"f32\", shape = [1] }}\ny = {{ dtype = \"f32\", shape = [1] }}\n\n\
         [[ops]]\nname = \"op\"\ninputs = [\"x\"]\noutputs = [\"y\"]\n",
        super::write::quote(name)
    );
    crate::parse_model("model name", &probe)
        .err()
        .map(|error| error.message)
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
    fn issue_36_module_names_follow_parse_model() {
        for good in [
            "net",
            "kws",
            "Net",
            "vec",
            "option",
            "memplan_model",
            "x",
            "op",
        ] {
            assert_eq!(module_name_problem(good), None, "{good}");
        }
        for (bad, why) in [
            ("Vec", "prelude"),
            ("Option", "prelude"),
            ("Some", "prelude"),
            ("u8", "primitive type"),
            ("str", "primitive type"),
            ("memplan", "name of a crate"),
            ("std", "name of a crate"),
            ("core", "name of a crate"),
            ("my-net", "not a valid Rust identifier"),
            ("type", "keyword"),
            ("a\"b", "not a valid Rust identifier"),
        ] {
            let problem = module_name_problem(bad).unwrap_or_default();
            assert!(
                problem.contains(&format!("`{bad}`")) && problem.contains(why),
                "{bad}: {problem}"
            );
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
