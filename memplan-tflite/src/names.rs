//! TFLite tensor names (`sequential/conv2d/Conv2D;sequential/conv2d/BiasAdd`) as unique
//! snake_case Rust identifiers, since the generated code names accessors after them (the same
//! rules as `memplan import` applies to ONNX names).

use std::collections::BTreeSet;

use memplan_core::model_file::identifier_problem;

/// `name` in snake_case: lower case, a `_` between a lower-case letter or digit and an upper-case
/// one, every run of other characters one `_`, no `_` at either end, a `t_` prefix before a
/// leading digit, a `_` suffix after a keyword. `fallback` is used when nothing is left.
pub(crate) fn snake_case(name: &str, fallback: &str) -> String {
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
        out.push('_');
    }
    out
}

/// Hands out unique identifiers: the first `base` as is, then `base_2`, `base_3`, ...
#[derive(Debug, Default)]
pub(crate) struct UniqueNames {
    taken: BTreeSet<String>,
}

impl UniqueNames {
    /// Names that may not be handed out (`new` clashes with `Arena::new`).
    pub(crate) fn reserving(reserved: &[&str]) -> Self {
        Self {
            taken: reserved.iter().map(|&r| r.to_string()).collect(),
        }
    }

    /// Whether `name` was handed out (or reserved).
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.taken.contains(name)
    }

    /// A name not handed out before, starting from `base`.
    pub(crate) fn claim(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut k = 2;
        while self.taken.contains(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        self.taken.insert(name.clone());
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tflite_names_become_snake_case_identifiers() {
        assert_eq!(
            snake_case("sequential/conv2d/Conv2D;sequential/conv2d/BiasAdd", "t"),
            "sequential_conv2d_conv2_d_sequential_conv2d_bias_add"
        );
        assert_eq!(snake_case("input_1", "t"), "input_1");
        assert_eq!(snake_case("Identity", "t"), "identity");
        let mut names = UniqueNames::reserving(&["new"]);
        assert_eq!(names.claim("a"), "a");
        assert_eq!(names.claim("a"), "a_2");
        assert_eq!(names.claim("new"), "new_2");
    }
}
