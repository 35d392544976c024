//! `[weights]`, op `inputs` naming weights or `""`, and op `attrs`: what the parser exposes, the
//! round trip through `to_toml`, and one located error per mistake.
#![cfg(feature = "codegen")]

use memplan_core::{AttrValue, DType, OpInput, parse_model};

const CONV: &str = r#"[model]
name = "conv_net"
inputs = ["input"]
outputs = ["conv1"]

[tensors]
input = { dtype = "f32", shape = [1, 3, 8, 8] }
conv1 = { dtype = "f32", shape = [1, 4, 4, 4] }

[weights]
conv1_weight = { dtype = "f32", shape = [4, 3, 3, 3], source = "conv1.weight" }
conv1_bias   = { dtype = "f32", shape = [4], source = "conv1.bias" }
scale        = { dtype = "i64", shape = [] }
unused       = { dtype = "f16", shape = [5, 2] }

[[ops]]
name = "conv1"
kind = "Conv"
source = "/conv1/Conv"
inputs = ["input", "conv1_weight", "", "conv1_bias", "scale"]
outputs = ["conv1"]
attrs = { strides = [2, 2], pads = [1, 1, 1, 1], group = 1, dilations = [1, 1], auto_pad = "NOTSET", alpha = 0.2, "odd-name" = -3, empty = [], scales = [1, 2.5], names = ["a", "b"], on = true, big = 1e300, tiny = -1e-7 }
"#;

#[test]
fn weights_inputs_and_attrs_are_parsed_in_file_order() {
    let model = parse_model("model.toml", CONV).unwrap();
    let names: Vec<&str> = model.weights.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["conv1_weight", "conv1_bias", "scale", "unused"]);
    assert_eq!(model.weights[0].dtype, DType::F32);
    assert_eq!(model.weights[0].shape, vec![4, 3, 3, 3]);
    assert_eq!(model.weights[0].source.as_deref(), Some("conv1.weight"));
    assert_eq!(model.weights[0].size(), 4 * 27 * 4);
    assert_eq!(model.weights[2].shape, Vec::<u64>::new());
    assert_eq!(model.weights[3].size(), 5 * 2 * 2);
    assert_eq!(model.weight_index("scale"), Some(2));

    let op = &model.ops[0];
    assert_eq!(op.inputs, vec![0], "only activations are op.inputs");
    assert_eq!(
        op.all_inputs,
        vec![
            OpInput::Tensor(0),
            OpInput::Weight(0),
            OpInput::Absent,
            OpInput::Weight(1),
            OpInput::Weight(2)
        ]
    );
    let attr = |name: &str| &op.attrs.iter().find(|(n, _)| n == name).unwrap().1;
    assert_eq!(attr("strides"), &AttrValue::Ints(vec![2, 2]));
    assert_eq!(attr("group"), &AttrValue::Int(1));
    assert_eq!(attr("auto_pad"), &AttrValue::Str("NOTSET".into()));
    assert_eq!(attr("alpha"), &AttrValue::Float(0.2));
    assert_eq!(attr("odd-name"), &AttrValue::Int(-3));
    assert_eq!(attr("empty"), &AttrValue::Ints(vec![]));
    assert_eq!(attr("scales"), &AttrValue::Floats(vec![1.0, 2.5]));
    assert_eq!(
        attr("names"),
        &AttrValue::Strs(vec!["a".into(), "b".into()])
    );
    assert_eq!(attr("on"), &AttrValue::Bool(true));
    assert_eq!(attr("tiny"), &AttrValue::Float(-1e-7));
    let order: Vec<&str> = op.attrs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(order[..3], ["strides", "pads", "group"]);
}

#[test]
fn weights_take_no_lifetime_and_no_arena_space() {
    let model = parse_model("model.toml", CONV).unwrap();
    // Two tensors only: the weights are not buffers to plan.
    assert_eq!(model.to_problem().len(), 2);
    let without = CONV
        .replace(
            "inputs = [\"input\", \"conv1_weight\", \"\", \"conv1_bias\", \"scale\"]",
            "inputs = [\"input\"]",
        )
        .replace("[weights]", "[unused_section_marker]");
    let without = without
        .split("[unused_section_marker]")
        .next()
        .unwrap()
        .to_owned()
        + &without[without.find("[[ops]]").unwrap()..];
    let plain = parse_model("model.toml", &without).unwrap();
    let lifetimes =
        |m: &memplan_core::Model| m.tensors.iter().map(|t| t.lifetime).collect::<Vec<_>>();
    assert_eq!(lifetimes(&model), lifetimes(&plain));
    assert_eq!(
        memplan_core::expand_model("m.toml", CONV)
            .unwrap()
            .to_string()
            .matches("ARENA_SIZE : usize = 256")
            .count(),
        memplan_core::expand_model("m.toml", &without)
            .unwrap()
            .to_string()
            .matches("ARENA_SIZE : usize = 256")
            .count()
    );
}

#[test]
fn weights_and_attrs_write_back_to_an_equal_model() {
    let model = parse_model("model.toml", CONV).unwrap();
    let text = model.to_toml();
    let again = parse_model("model.toml", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(again.to_toml(), text);
    assert_eq!(again.weights.len(), model.weights.len());
    for (a, b) in again.weights.iter().zip(&model.weights) {
        assert_eq!(
            (&a.name, a.dtype, &a.shape, &a.source),
            (&b.name, b.dtype, &b.shape, &b.source)
        );
    }
    assert_eq!(again.ops[0].all_inputs, model.ops[0].all_inputs);
    assert_eq!(again.ops[0].attrs, model.ops[0].attrs);
    // NaN and infinities survive too.
    let special = CONV.replace("big = 1e300", "big = nan, inf_ = -inf");
    let model = parse_model("model.toml", &special).unwrap();
    let again = parse_model("model.toml", &model.to_toml()).unwrap();
    assert_eq!(again.ops[0].attrs, model.ops[0].attrs);
}

fn error(text: &str) -> String {
    let e = parse_model("model.toml", text).expect_err("the model should be rejected");
    format!("{}:{} {} | {}", e.line, e.column, e.message, e.help)
}

#[test]
fn mistakes_are_located_and_say_how_to_fix() {
    let cases: Vec<(String, &str)> = vec![
        (
            CONV.replace("scale        =", "input ="),
            "13:1 `input` is declared both as a tensor and as a weight",
        ),
        (
            CONV.replace(
                "outputs = [\"conv1\"]\nattrs",
                "outputs = [\"conv1_bias\"]\nattrs",
            ),
            "`conv1_bias` in `outputs` of op `conv1` is a weight, not a tensor",
        ),
        (
            CONV.replace("outputs = [\"conv1\"]\n\n", "outputs = [\"scale\"]\n\n"),
            "4:12 `scale` in `outputs` of `[model]` is a weight",
        ),
        (
            CONV.replace("\"conv1_bias\", \"scale\"]", "\"conv1_bais\", \"scale\"]"),
            "20:40 unknown tensor or weight `conv1_bais`",
        ),
        // Issue 19, item 11: a weight with a zero dimension is refused like a tensor with one.
        (
            CONV.replace("shape = [5, 2]", "shape = [2, 0]"),
            "14:45 weight `unused` has a zero dimension | every dimension must be at least 1; a \
             weight with no elements holds nothing",
        ),
        (
            CONV.replace("source = \"conv1.bias\"", "bytes = 4"),
            "12:46 unknown key `bytes` in weight `conv1_bias`",
        ),
        (
            CONV.replace("dtype = \"i64\", shape = []", "dtype = \"i65\", shape = []"),
            "13:26 unknown dtype `i65`",
        ),
        (
            CONV.replace("dtype = \"i64\", shape = []", "dtype = \"i64\""),
            "13:1 weight `scale` has no `shape`",
        ),
        (
            CONV.replace("shape = [5, 2]", "shape = [-1, 2]"),
            "14:42 a dimension of weight `unused` must be a non-negative integer",
        ),
        (
            CONV.replace("scale        =", "\"1x\" ="),
            "13:1 weight name `1x` is not a valid Rust identifier",
        ),
        (
            CONV.replace("group = 1,", "group = { a = 1 },"),
            "is a table, which an attribute cannot be",
        ),
        (
            CONV.replace("empty = []", "empty = [1, \"x\"]"),
            "mixes kinds of values",
        ),
        (
            CONV.replace("empty = []", "empty = [[1]]"),
            "mixes kinds of values",
        ),
        (
            CONV.replace("empty = []", "empty = [true]"),
            "mixes kinds of values",
        ),
        (
            CONV.replace("group = 1,", "\"\" = 1,"),
            "an attribute of `attrs` of op `conv1` has an empty name",
        ),
        (
            CONV.replace("attrs = {", "attrs = [1] #"),
            "must be a table",
        ),
    ];
    for (text, expected) in cases {
        let got = error(&text);
        let (at, message) = expected
            .split_once(' ')
            .filter(|(at, _)| at.contains(':') && at.chars().next().unwrap().is_ascii_digit())
            .unwrap_or(("", expected));
        assert!(got.contains(message), "expected `{expected}`, got `{got}`");
        assert!(got.starts_with(at), "expected `{expected}`, got `{got}`");
        assert!(got.contains(" | "), "no help: {got}");
    }
}
