//! Names from other formats (ONNX's `/layer1/layer1.0/relu/Relu_output_0`, TFLite's
//! `sequential/conv2d/Conv2D;sequential/conv2d/BiasAdd`) as unique snake_case Rust identifiers,
//! since the generated code names accessors after them: the one set of rules both importers and
//! `memplan-build` apply ([`snake_case`], [`model_name`], [`UniqueNames`]).

use std::collections::{BTreeMap, BTreeSet};

use super::ident::{identifier_problem, module_name_problem};

/// `name` in snake_case: lower case, a `_` between a lower-case letter or digit and an upper-case
/// one, every run of other characters one `_`, no `_` at either end, a `t_` prefix before a
/// leading digit, a `_` suffix after a keyword. `fallback` is used when nothing is left.
pub fn snake_case(name: &str, fallback: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut previous: Option<char> = None;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            let boundary = c.is_ascii_uppercase()
                && previous.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit());
            if boundary && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
        previous = Some(c);
    }
    while out.ends_with('_') {
        out.pop();
    }
    if out.is_empty() {
        out = fallback.to_string();
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "t_");
    }
    if identifier_problem(&out).is_some() {
        // Only keywords are left at this point (`type`, `self`, ...).
        out.push('_');
    }
    out
}

/// The model's name from `name` (a file's stem, or a name the user gave): in snake_case, and
/// with `_model` appended when memplan refuses the module name that gives (`std.onnx`, `u8.tflite`:
/// a crate or a primitive type the generated module would hide; see
/// [`module_name_problem`]).
pub fn model_name(name: &str) -> String {
    let name = snake_case(name, "model");
    if module_name_problem(&name).is_some() {
        format!("{name}_model")
    } else {
        name
    }
}

/// Hands out unique identifiers: the first `base` as is, then `base_2`, `base_3`, ...
///
/// # Runtime
/// Each base remembers the suffix after the last one it handed out, so `n` names that all
/// become `x` take `O(n log n)`, not `O(n^2)` (issue 36: 20,001 of them took 83 s when
/// every claim started again at `_2`). The names are the same: a suffix below the remembered one is taken
/// already, and stays taken.
#[derive(Debug, Default)]
pub struct UniqueNames {
    taken: BTreeSet<String>,
    /// Per base claimed twice or more: the suffix to try first next time.
    next: BTreeMap<String, u64>,
}

impl UniqueNames {
    /// Names that may not be handed out (for example `new`, which clashes with `Arena::new`).
    pub fn reserving(reserved: &[&str]) -> Self {
        Self {
            taken: reserved.iter().map(|&r| r.to_string()).collect(),
            next: BTreeMap::new(),
        }
    }

    /// Whether `name` is taken.
    pub fn contains(&self, name: &str) -> bool {
        self.taken.contains(name)
    }

    /// A name not handed out before, starting from `base`.
    pub fn claim(&mut self, base: &str) -> String {
        if self.taken.insert(base.to_string()) {
            return base.to_string();
        }
        let mut k = self.next.get(base).copied().unwrap_or(2);
        let mut name = format!("{base}_{k}");
        while self.taken.contains(&name) {
            k += 1;
            name = format!("{base}_{k}");
        }
        self.next.insert(base.to_string(), k + 1);
        self.taken.insert(name.clone());
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names_become_snake_case_identifiers() {
        assert_eq!(
            snake_case("/layer1/layer1.0/relu/Relu_output_0", "t"),
            "layer1_layer1_0_relu_relu_output_0"
        );
        assert_eq!(
            snake_case("sequential/conv2d/Conv2D;sequential/conv2d/BiasAdd", "t"),
            "sequential_conv2d_conv2_d_sequential_conv2d_bias_add"
        );
        assert_eq!(snake_case("Identity", "t"), "identity");
        assert_eq!(snake_case("inputIds", "t"), "input_ids");
        assert_eq!(snake_case("onnx::Add_123", "t"), "onnx_add_123");
        assert_eq!(snake_case("123", "t"), "t_123");
        assert_eq!(snake_case("type", "t"), "type_");
        assert_eq!(snake_case("///", "tensor"), "tensor");
        assert_eq!(snake_case("héllo wörld", "t"), "h_llo_w_rld");
        for name in ["a", "A", "0", "self", "Self", "_", "x.y:z"] {
            assert_eq!(identifier_problem(&snake_case(name, "t")), None, "{name}");
        }
    }

    #[test]
    fn names_are_deduplicated_with_suffixes() {
        let mut names = UniqueNames::reserving(&["new"]);
        assert_eq!(names.claim("a"), "a");
        assert_eq!(names.claim("a"), "a_2");
        assert_eq!(names.claim("a"), "a_3");
        assert_eq!(names.claim("new"), "new_2");
    }

    /// The claim of before issue 36: the first free `base`, `base_2`, ... from `_2` every time.
    fn claim_from_2(taken: &mut BTreeSet<String>, base: &str) -> String {
        let mut name = base.to_string();
        let mut k = 2;
        while taken.contains(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        taken.insert(name.clone());
        name
    }

    #[test]
    fn issue_36_remembered_suffixes_give_the_same_names() {
        // Bases that collide with each other's suffixes (`a_2` is a base and a suffix of `a`),
        // reserved names, repeats in every order.
        let bases = [
            "a", "a_2", "a", "b", "a", "a_3", "a_2", "new", "a", "b_2", "b", "b", "a_2_2", "a_2",
            "new", "a_4", "a", "x", "x_2", "x_3", "x", "x",
        ];
        let mut names = UniqueNames::reserving(&["new", "a_5"]);
        let mut reference: BTreeSet<String> =
            ["new", "a_5"].iter().map(|s| s.to_string()).collect();
        for base in bases {
            assert_eq!(
                names.claim(base),
                claim_from_2(&mut reference, base),
                "{base}"
            );
        }
    }

    #[test]
    fn issue_36_colliding_names_are_claimed_in_linear_time() {
        let mut names = UniqueNames::default();
        let claimed: BTreeSet<String> = (0..20_001).map(|_| names.claim("x")).collect();
        assert_eq!(claimed.len(), 20_001);
        assert!(claimed.contains("x") && claimed.contains("x_2") && claimed.contains("x_20001"));
    }
}
