//! How an import names a TFLite file's tensors and its model: the rules are
//! [`memplan_core::model_file::names`]'s (shared with the ONNX importer and tested there); these
//! tests check the import applies them.

use std::collections::BTreeSet;

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
