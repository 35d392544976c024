//! Random edits of a valid model file never make the parser, the planner or the code generator
//! panic: every outcome is a model that plans validly, or an error located inside the file.
#![cfg(feature = "codegen")]

use memplan_core::{codegen, expand_model, parse_model};
use proptest::prelude::*;

const BASE: &str = r#"[model]
name = "net"
alignment = 16
budget = "64 KiB"
inputs = ["input"]
outputs = ["out"]

[tensors]
input = { dtype = "f32", shape = [1, 16] }
hidden = { dtype = "i8", shape = [2, 8] }
act = { dtype = "f16", shape = [16] }
out = { dtype = "f32", shape = [1, 4] }
tmp = { bytes = 256, align = 32 }

[[ops]]
name = "dense"
kind = "Gemm"
inputs = ["input", "input"]
outputs = ["hidden"]
scratch = ["tmp"]

[[ops]]
name = "relu"
inputs = ["hidden"]
outputs = ["act"]

[[ops]]
name = "head"
inputs = ["act"]
outputs = ["out"]
"#;

/// One edit: at a relative position, delete some characters or insert a short snippet.
#[derive(Clone, Debug)]
enum Edit {
    Delete(f64, usize),
    Insert(f64, &'static str),
}

fn edit() -> impl Strategy<Value = Edit> {
    let snippets = prop::sample::select(vec![
        "[",
        "]",
        "{",
        "}",
        "\"",
        "=",
        ",",
        "\n",
        "0",
        "99999999999999999999",
        "-1",
        "x",
        "type",
        "shape = []",
        "dtype = \"u4\"",
        "[[ops]]\nname = \"z\"\n",
        "inputs = [\"nope\"]",
        "budget = 1\n",
        "alignment = 3\n",
        "\"hidden\", ",
        "é",
        " ",
        "#",
    ]);
    prop_oneof![
        (0.0..1.0f64, 1..8usize).prop_map(|(at, n)| Edit::Delete(at, n)),
        (0.0..1.0f64, snippets).prop_map(|(at, s)| Edit::Insert(at, s)),
    ]
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for e in edits {
        match *e {
            Edit::Delete(at, n) => {
                let start = ((chars.len() as f64) * at) as usize;
                let end = (start + n).min(chars.len());
                chars.drain(start.min(end)..end);
            }
            Edit::Insert(at, snippet) => {
                let start = ((chars.len() as f64) * at) as usize;
                chars.splice(start..start, snippet.chars());
            }
        }
    }
    chars.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn edited_models_plan_validly_or_fail_located(edits in prop::collection::vec(edit(), 1..4)) {
        let text = apply(BASE, &edits);
        let lines = text.lines().count().max(1) + 1;
        match parse_model("model.toml", &text) {
            Ok(model) => {
                let problem = model.to_problem();
                if let Ok(plan) = codegen::plan_model(&model) {
                    prop_assert!(plan.tensors.len() == model.tensors.len());
                    let problems = codegen::check(&model, &plan);
                    prop_assert!(problems.is_empty(), "{:?}", problems);
                    let tokens = codegen::generate(&model, &plan).to_string();
                    prop_assert!(!tokens.contains("internal error"), "{}", tokens);
                }
                prop_assert!(problem.len() == model.tensors.len());
                // Expanding is parse + plan + generate: it must agree with the steps above.
                let _ = expand_model("model.toml", &text);
            }
            Err(error) => {
                prop_assert!(error.line >= 1 && error.line <= lines, "{error} in\n{text}");
                prop_assert!(error.column >= 1, "{error}");
                prop_assert!(!error.message.is_empty() && !error.help.is_empty(), "{error}");
                // The stand-in items for a broken file never panic either.
                let _ = codegen::placeholder(&text, proc_macro2::TokenStream::new());
            }
        }
    }
}
