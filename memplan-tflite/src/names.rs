//! TFLite tensor names (`sequential/conv2d/Conv2D;sequential/conv2d/BiasAdd`) as unique
//! snake_case Rust identifiers, since the generated code names accessors after them (the same
//! rules as `memplan import` applies to ONNX names).

use std::collections::{BTreeMap, BTreeSet};

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

/// The model's name from `name` (a file's stem, or a name the user gave): in snake_case, and
/// with `_model` appended when memplan refuses the module name that gives (`std.onnx`, `u8.tflite`:
/// a crate or a primitive type the generated module would hide; see
/// [`memplan_core::model_file::module_name_problem`]).
pub(crate) fn model_name(name: &str) -> String {
    let name = snake_case(name, "model");
    if memplan_core::model_file::module_name_problem(&name).is_some() {
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
pub(crate) struct UniqueNames {
    taken: BTreeSet<String>,
    /// Per base claimed twice or more: the suffix to try first next time.
    next: BTreeMap<String, u64>,
}

impl UniqueNames {
    /// Names that may not be handed out (`new` clashes with `Arena::new`).
    pub(crate) fn reserving(reserved: &[&str]) -> Self {
        Self {
            taken: reserved.iter().map(|&r| r.to_string()).collect(),
            next: BTreeMap::new(),
        }
    }

    /// Whether `name` is taken.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.taken.contains(name)
    }

    /// A name not handed out before, starting from `base`.
    pub(crate) fn claim(&mut self, base: &str) -> String {
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

    #[test]
    fn issue_36_twenty_thousand_tensors_named_x_import_with_distinct_names() {
        use crate::fixture::FileBuilder;
        use crate::fixture::schema::{BuiltinOptions, TensorType};
        let mut file = FileBuilder::new();
        let inputs: Vec<i32> = (0..20_001)
            .map(|_| file.tensor("x", TensorType::Float32, &[1]))
            .collect();
        let y = file.tensor("x", TensorType::Float32, &[20_001]);
        let options = BuiltinOptions::ConcatenationOptions(Box::default());
        file.operator("CONCATENATION", &inputs, &[y], Some(options));
        file.inputs = inputs;
        file.outputs = vec![y];
        let imported = crate::import(
            "collide.tflite",
            "collide.toml",
            &file.bytes(),
            &crate::ImportOptions::default(),
        )
        .unwrap();
        let names: BTreeSet<&str> = imported
            .model
            .tensors
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(names.len(), 20_002);
        assert_eq!(imported.model.tensors[0].name, "x");
        assert_eq!(imported.model.tensors[1].name, "x_2");
        assert_eq!(imported.model.tensors[20_001].name, "x_20002");
    }

    #[test]
    fn issue_36_tensors_named_views_and_rest_are_renamed_not_refused() {
        use crate::fixture::FileBuilder;
        use crate::fixture::schema::TensorType;
        let mut file = FileBuilder::new();
        let x = file.tensor("views", TensorType::Float32, &[4]);
        let y = file.tensor("rest", TensorType::Float32, &[4]);
        file.operator("RELU", &[x], &[y], None);
        file.inputs = vec![x];
        file.outputs = vec![y];
        let imported = crate::import(
            "views.tflite",
            "views.toml",
            &file.bytes(),
            &crate::ImportOptions::default(),
        )
        .unwrap();
        let names: Vec<&str> = imported
            .model
            .tensors
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(names, ["views_2", "rest_2"]);
        assert_eq!(imported.model.tensors[0].source.as_deref(), Some("views"));
    }

    #[test]
    fn issue_36_model_names_the_module_cannot_have_are_suffixed_or_refused() {
        use crate::fixture::FileBuilder;
        use crate::fixture::schema::TensorType;
        let mut file = FileBuilder::new();
        let x = file.tensor("x", TensorType::Float32, &[4]);
        let y = file.tensor("y", TensorType::Float32, &[4]);
        file.operator("RELU", &[x], &[y], None);
        file.inputs = vec![x];
        file.outputs = vec![y];
        let bytes = file.bytes();
        let import = |path: &str, name: Option<&str>| {
            let options = crate::ImportOptions {
                name: name.map(str::to_owned),
                ..crate::ImportOptions::default()
            };
            crate::import(path, "model.toml", &bytes, &options)
        };
        // From the file's name: a crate or a primitive type gets `_model` (it was refused,
        // asking to rename the model).
        for (path, name) in [
            ("models/u8.tflite", "u8_model"),
            ("std.tflite", "std_model"),
            ("memplan.tflite", "memplan_model"),
            ("Vec.tflite", "vec"),
            ("kws.tflite", "kws"),
        ] {
            assert_eq!(import(path, None).unwrap().model.name, name, "{path}");
        }
        // Given: refused, with a name that works.
        for (given, why, suggested) in [
            ("Vec", "prelude", "--name vec"),
            ("u8", "primitive type", "--name u8_model"),
            ("core", "name of a crate", "--name core_model"),
        ] {
            let error = import("kws.tflite", Some(given)).unwrap_err().message;
            assert!(
                error.contains(&format!("`{given}`"))
                    && error.contains(why)
                    && error.contains(suggested),
                "{error}"
            );
        }
    }
}
