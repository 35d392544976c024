//! Model-file mistakes that used to be silent or badly located (issue 12, item 9): a missing
//! table is reported where it belongs rather than at the file's first byte, and explicit in-place
//! pairs in a model with `[model] inplace = false` are an error instead of being dropped.
#![cfg(feature = "model-file")]

use memplan_core::parse_model;

fn error(text: &str) -> String {
    parse_model("model.toml", text)
        .expect_err("the model is refused")
        .to_string()
}

#[test]
fn missing_model_points_at_the_first_table() {
    let message = error("# a comment\n\n[tensors]\na = { bytes = 4 }\n");
    assert!(message.contains("missing `[model]` table"), "{message}");
    assert!(message.contains("model.toml:3:2"), "{message}");
}

#[test]
fn missing_tensors_points_at_the_model_header() {
    let message = error("# a comment\n\n[model]\nname = \"m\"\n");
    assert!(message.contains("missing `[tensors]` table"), "{message}");
    assert!(message.contains("model.toml:3:2"), "{message}");
}

#[test]
fn missing_ops_points_at_the_tensors_header() {
    let message = error("# a comment\n[model]\nname = \"m\"\n\n[tensors]\na = { bytes = 4 }\n");
    assert!(message.contains("the model has no ops"), "{message}");
    assert!(message.contains("model.toml:5:2"), "{message}");
}

const DECLARED_PAIR: &str = r#"[model]
name = "m"
inplace = false

[tensors]
a = { bytes = 4 }
b = { bytes = 4 }

[[ops]]
name = "x"
outputs = ["a"]

[[ops]]
name = "y"
inputs = ["a"]
outputs = ["b"]
inplace = { b = "a" }
"#;

#[test]
fn declared_pairs_in_a_model_without_inplace_are_an_error_at_the_pair() {
    let message = error(DECLARED_PAIR);
    assert!(
        message.contains("op `y` declares an in-place pair"),
        "{message}"
    );
    assert!(message.contains("model.toml:17:13"), "{message}");
    assert!(message.contains("remove `inplace = false`"), "{message}");
}

#[test]
fn the_same_model_with_inplace_on_uses_the_pair() {
    let model = parse_model(
        "model.toml",
        &DECLARED_PAIR.replace("inplace = false\n", ""),
    )
    .expect("the pair is allowed");
    assert_eq!(model.aliases.len(), 1);
    assert!(model.aliases[0].explicit);
}

#[test]
fn an_op_level_opt_out_in_a_model_without_inplace_is_fine() {
    let text = DECLARED_PAIR.replace("inplace = { b = \"a\" }", "inplace = false");
    let model = parse_model("model.toml", &text).expect("nothing is declared");
    assert!(model.aliases.is_empty());
}

/// An op of a kind memplan does not know (another format's operator, a custom one) writes over
/// its input with `inplace = true`, as an op of an in-place kind does without it; the model file
/// written back keeps the key.
#[test]
fn inplace_true_lets_an_op_of_any_kind_take_its_inputs_memory() {
    let model = |key: &str| {
        format!(
            "[model]\nname = \"m\"\n\n[tensors]\na = {{ bytes = 4 }}\nb = {{ bytes = 4 }}\nc = {{ bytes = 4 }}\n\n\
             [[ops]]\nname = \"x\"\noutputs = [\"a\"]\n\n\
             [[ops]]\nname = \"y\"\nkind = \"tflite.RESHAPE\"\ninputs = [\"a\"]\noutputs = [\"b\"]\n{key}\n\
             [[ops]]\nname = \"z\"\ninputs = [\"b\"]\noutputs = [\"c\"]\n"
        )
    };
    let without = parse_model("model.toml", &model("")).expect("the model parses");
    assert!(without.aliases.is_empty(), "{:?}", without.aliases);
    let with = parse_model("model.toml", &model("inplace = true")).expect("the model parses");
    let pairs: Vec<(usize, usize)> = with.aliases.iter().map(|a| (a.output, a.input)).collect();
    assert_eq!(pairs, [(1, 0)], "b takes a's memory");
    assert!(with.aliases.iter().all(|a| !a.explicit));
    let written = with.to_toml();
    assert!(written.contains("inplace = true"), "{written}");
    let again = parse_model("model.toml", &written).expect("the written model parses");
    assert_eq!(again.aliases.len(), 1);
}
