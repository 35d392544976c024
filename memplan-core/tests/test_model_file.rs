//! The model file parser: a valid model, its lifetimes, a round trip, and one located error per
//! kind of mistake.
#![cfg(feature = "model-file")]

use memplan_core::{DType, Layout, Lifetime, parse_model};

const TINY: &str = r#"[model]
name = "tiny_cnn"
alignment = 64
budget = "512 KiB"
solver = "best-fit"
inputs = ["input"]
outputs = ["logits"]

[tensors]
input   = { dtype = "f32", shape = [1, 1, 28, 28], source = "input:0" }
conv1   = { dtype = "f32", shape = [1, 8, 26, 26] }
logits  = { dtype = "f32", shape = [1, 10] }
scratch = { bytes = "4 KiB", align = 128 }
flags   = { dtype = "bool", shape = [3] }

[[ops]]
name = "conv1"
kind = "Conv"
source = "/conv1/Conv"
inputs = ["input"]
outputs = ["conv1", "flags"]
scratch = ["scratch"]

[[ops]]
name = "dense"
inputs = ["conv1", "conv1"]
outputs = ["logits"]
"#;

#[test]
fn parses_every_field() {
    let model = parse_model("model.toml", TINY).unwrap();
    assert_eq!(model.name, "tiny_cnn");
    assert_eq!(model.alignment, 64);
    assert_eq!(model.budget, Some(512 * 1024));
    assert_eq!(model.solver.unwrap().name(), "best-fit");
    let names: Vec<&str> = model.tensors.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["input", "conv1", "logits", "scratch", "flags"]);
    assert_eq!(model.tensors[0].size, 28 * 28 * 4);
    assert_eq!(model.tensors[0].source.as_deref(), Some("input:0"));
    assert_eq!(
        model.tensors[0].layout,
        Layout::Typed {
            dtype: DType::F32,
            shape: vec![1, 1, 28, 28]
        }
    );
    assert_eq!(model.tensors[3].size, 4096);
    assert_eq!(model.tensors[3].alignment, 128);
    assert_eq!(model.tensors[4].size, 3);
    assert_eq!(model.tensors[4].alignment, 64);
    assert_eq!(model.ops[0].kind.as_deref(), Some("Conv"));
    assert_eq!(model.ops[0].source.as_deref(), Some("/conv1/Conv"));
    assert_eq!(model.ops[1].inputs, vec![1, 1]);
    assert_eq!(model.tensors[1].location.line, 11);
    assert_eq!(model.tensors[1].location.column, 1);
}

#[test]
fn lifetimes_come_from_the_ops() {
    let model = parse_model("model.toml", TINY).unwrap();
    let lifetimes: Vec<Lifetime> = model.tensors.iter().map(|t| t.lifetime).collect();
    assert_eq!(
        lifetimes,
        vec![
            Lifetime::new(0, 1), // input: graph input, read by op 0
            Lifetime::new(0, 2), // conv1: produced at 0, read at 1
            Lifetime::new(1, 2), // logits: produced at 1, graph output through the end
            Lifetime::new(0, 1), // scratch of op 0
            Lifetime::new(0, 1), // flags: produced at 0, never read
        ]
    );
    let problem = model.to_problem();
    assert_eq!(problem.len(), 5);
    assert_eq!(problem.buffers()[1].id, "conv1");
    assert_eq!(problem.buffers()[1].alignment, 64);
    assert_eq!(model.arena_alignment(), 128);
}

#[test]
fn writes_back_what_it_reads() {
    let model = parse_model("model.toml", TINY).unwrap();
    let text = model.to_toml();
    let again = parse_model("model.toml", &text).unwrap();
    assert_eq!(again.to_toml(), text);
    let strip = |m: &memplan_core::Model| {
        let mut m = m.clone();
        m.locations = Default::default();
        for t in &mut m.tensors {
            t.location = Default::default();
        }
        for o in &mut m.ops {
            o.location = Default::default();
        }
        m
    };
    assert_eq!(strip(&again), strip(&model));
}

/// Parses `text`, expects an error, and returns it as `LINE:COL message | help`.
fn error(text: &str) -> String {
    let e = parse_model("model.toml", text).expect_err("the model should be rejected");
    assert_eq!(e.file, "model.toml");
    format!("{}:{} {} | {}", e.line, e.column, e.message, e.help)
}

const HEAD: &str = "[model]\nname = \"m\"\ninputs = [\"a\"]\noutputs = [\"b\"]\n";

fn with(tensors: &str, ops: &str) -> String {
    format!("{HEAD}[tensors]\n{tensors}\n{ops}")
}

const AB: &str = "a = { dtype = \"f32\", shape = [4] }\nb = { dtype = \"f32\", shape = [4] }";
const OP: &str = "[[ops]]\nname = \"op\"\ninputs = [\"a\"]\noutputs = [\"b\"]\n";

#[test]
fn the_base_case_is_valid() {
    parse_model("model.toml", &with(AB, OP)).unwrap();
}

#[test]
fn the_node_budget_is_read_written_and_checked() {
    let text = with(AB, OP).replace("name = \"m\"", "name = \"m\"\nnodes = 20000");
    let model = parse_model("model.toml", &text).unwrap();
    assert_eq!(model.nodes, Some(20_000));
    assert!(model.to_toml().contains("nodes = 20000\n"));
    assert_eq!(
        parse_model("model.toml", &model.to_toml()).unwrap().nodes,
        Some(20_000)
    );
    let plain = parse_model("model.toml", &with(AB, OP)).unwrap();
    assert_eq!(plain.nodes, None);
    for (value, expected) in [
        ("\"many\"", "3:9 `nodes` must be an integer, not a string"),
        ("-1", "3:9 `nodes` is out of range (0 to 1000000000)"),
        (
            "1000000001",
            "3:9 `nodes` is out of range (0 to 1000000000)",
        ),
        ("2.5", "3:9 `nodes` must be an integer, not a float"),
    ] {
        let text = with(AB, OP).replace("name = \"m\"", &format!("name = \"m\"\nnodes = {value}"));
        let got = error(&text);
        assert!(
            got.starts_with(expected),
            "expected `{expected}`, got `{got}`"
        );
        assert!(got.contains("e.g. `nodes = 100000`"), "no help in {got}");
    }
}

#[test]
fn errors_are_located_and_say_how_to_fix() {
    let cases: Vec<(String, &str)> = vec![
        ("[model\nname = 1".into(), "1:7 TOML syntax error"),
        (
            with(AB, OP).replace("name = \"m\"", "name = \"m\"\ncolour = 1"),
            "3:1 unknown key `colour` in `[model]`",
        ),
        (
            with(AB, OP).replace(
                "dtype = \"f32\", shape = [4] }\nb",
                "dtyp = \"f32\", shape = [4] }\nb",
            ),
            "6:7 unknown key `dtyp` in tensor `a`",
        ),
        (
            with(AB, OP).replace(
                "dtype = \"f32\", shape = [4] }\nb",
                "dtype = \"f31\", shape = [4] }\nb",
            ),
            "6:15 unknown dtype `f31`",
        ),
        (
            with(AB, OP).replace("shape = [4] }\nb", "shape = [] }\nb"),
            "6:30 `shape` of tensor `a` is empty",
        ),
        (
            with(AB, OP).replace("shape = [4] }\nb", "shape = [4, 0] }\nb"),
            "6:34 tensor `a` has a zero dimension",
        ),
        (
            with(AB, OP).replace("shape = [4] }\nb", "shape = [4294967296, 4294967296] }\nb"),
            "6:30 size overflow",
        ),
        (
            with(AB, OP).replace("name = \"m\"", "name = \"m\"\nalignment = 24"),
            "3:13 `alignment` is 24",
        ),
        (
            with(AB, OP).replace("name = \"m\"", "name = \"my-model\""),
            "2:8 model name `my-model` is not a valid Rust identifier",
        ),
        (
            with(AB, OP).replace("name = \"op\"", "name = \"type\""),
            "9:8 op name `type` is not a valid Rust identifier: it is a Rust keyword",
        ),
        (
            with(AB, OP).replace("name = \"m\"", "name = \"m\"\nbudget = \"lots\""),
            "3:10 `budget` `lots` is not a byte size",
        ),
        (
            with(AB, OP)
                .replace(
                    "inputs = [\"a\"]\noutputs = [\"b\"]\n",
                    "inputs = [\"x\"]\noutputs = [\"b\"]\n",
                )
                .replacen("inputs = [\"x\"]", "inputs = [\"a\"]", 1),
            "10:11 unknown tensor `x` in `inputs` of op `op`",
        ),
        (
            with(&format!("{AB}\nc = {{ bytes = 8 }}"), OP),
            "8:1 no op touches tensor `c`",
        ),
        (
            with(
                AB,
                &format!("{OP}\n[[ops]]\nname = \"again\"\ninputs = [\"a\"]\noutputs = [\"b\"]\n"),
            ),
            "16:12 tensor `b` is produced twice: by op `op` and by op `again`",
        ),
        (
            with(
                &format!("{AB}\nc = {{ bytes = 8 }}"),
                "[[ops]]\nname = \"first\"\ninputs = [\"c\"]\noutputs = [\"b\"]\n\n[[ops]]\nname = \"second\"\ninputs = [\"a\"]\noutputs = [\"c\"]\n",
            ),
            "11:11 tensor `c` is read by op `first` (step 0) before it is produced by op `second` (step 1)",
        ),
        (
            with(AB, OP).replace("a = {", "b = {"),
            "7:1 TOML syntax error: duplicate key",
        ),
        (
            with(AB, OP).replace("name = \"m\"", "name = \"m\"\nsolver = \"fastest\""),
            "3:10 unknown solver `fastest`",
        ),
        (with(AB, ""), "5:2 the model has no ops"),
        (
            with(AB, OP).replace("[model]\nname = \"m\"\n", "[model]\n"),
            "1:1 `[model]` has no `name`",
        ),
        // Ops are named by their name (and index), not "op 0".
        (
            with(AB, OP).replace("name = \"op\"\n", "name = \"op\"\nkidn = \"Relu\"\n"),
            "10:1 unknown key `kidn` in op `op` (index 0)",
        ),
        (
            with(AB, OP).replace("name = \"op\"\n", ""),
            "8:1 the op at index 0 (counting `[[ops]]` from 0) has no `name`",
        ),
        (
            with(
                &format!("{AB}\nc = {{ bytes = 8 }}"),
                &format!("{OP}\n[[ops]]\nname = \"op\"\ninputs = [\"b\"]\noutputs = [\"c\"]\n"),
            ),
            "15:8 duplicate op name `op`: the op at index 0 (model.toml:9:1) has it too",
        ),
    ];
    let mut wrong = Vec::new();
    for (text, expected) in cases {
        let got = error(&text);
        if !got.starts_with(expected) {
            wrong.push(format!("expected `{expected}`\n     got `{got}`"));
        }
        assert!(!got.ends_with("| "), "no help in {got}");
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
