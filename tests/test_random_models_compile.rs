//! Every model `memplan-core` accepts compiles (issue 19, item 5): random models named from a
//! pool of names the generated code or the prelude already uses (`views`, `new`, `Arenas`,
//! `SramArena`, `Vec`, `u8`, `rest`, ...) are either refused by `parse_model` with a located
//! error, or built, all together, in one scratch crate whose own code around each module uses
//! the prelude (so a module that hides `Vec` or `u8` fails too).
//!
//! The models come from a proptest strategy sampled with a fixed seed; one `cargo build`
//! compiles all of them, which keeps the test to one build of a small crate.

mod common;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRng, TestRunner};

/// Names the generated code, the prelude or the primitive types already use, and plain ones.
const NAMES: &[&str] = &[
    "views",
    "new",
    "rest",
    "piece_0",
    "piece_1",
    "Arenas",
    "Arena",
    "ARENA",
    "Memory",
    "SramArena",
    "sram",
    "Sram",
    "dram",
    "fast_mem",
    "FastMem",
    "Vec",
    "Option",
    "Some",
    "String",
    "Default",
    "u8",
    "usize",
    "f32",
    "str",
    "len",
    "op",
    "offset",
    "shape",
    "dtype",
    "attrs",
    "weight_shape",
    "take",
    "STEPS",
    "TENSORS",
    "OPS",
    "MAX_VIEWS",
    "TENSOR_INFO",
    "op_a",
    "op_b",
    "a",
    "b",
    "x",
    "y",
    "net",
    "default",
    "bytes",
    "__memplan",
    "arena",
    "k",
    "v",
];

/// One random model: a chain of ops over distinct tensors, maybe pools, maybe app-owned ends.
#[derive(Debug, Clone)]
struct Spec {
    model: usize,
    tensors: Vec<usize>,
    ops: Vec<usize>,
    pools: Vec<(usize, bool)>,
    external_ends: (bool, bool),
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        0..NAMES.len(),
        proptest::sample::subsequence((0..NAMES.len()).collect::<Vec<_>>(), 2..6),
        proptest::collection::vec(0..NAMES.len(), 5),
        proptest::collection::vec((0..NAMES.len(), any::<bool>()), 0..3),
        (any::<bool>(), any::<bool>()),
    )
        .prop_map(|(model, tensors, ops, pools, external_ends)| Spec {
            model,
            tensors,
            ops,
            pools,
            external_ends,
        })
}

fn text(spec: &Spec) -> String {
    let t: Vec<&str> = spec.tensors.iter().map(|&i| NAMES[i]).collect();
    let mut out = format!(
        "[model]\nname = \"{}\"\ninputs = [\"{}\"]\noutputs = [\"{}\"]\n\n",
        NAMES[spec.model],
        t[0],
        t[t.len() - 1]
    );
    for &(pool, section) in &spec.pools {
        out += &format!("[[pools]]\nname = \"{}\"\n", NAMES[pool]);
        if section {
            out += "link_section = \".data.memplan\"\n";
        }
        out += "\n";
    }
    out += "[tensors]\n";
    for (i, name) in t.iter().enumerate() {
        let external =
            (i == 0 && spec.external_ends.0) || (i == t.len() - 1 && spec.external_ends.1);
        out += &format!(
            "{name} = {{ dtype = \"f32\", shape = [{}]{} }}\n",
            4 * (i + 1),
            if external { ", external = true" } else { "" }
        );
    }
    for k in 0..t.len() - 1 {
        out += &format!(
            "\n[[ops]]\nname = \"{}\"\ninputs = [\"{}\"]\noutputs = [\"{}\"]\n",
            NAMES[spec.ops[k]],
            t[k],
            t[k + 1]
        );
    }
    out
}

#[test]
fn random_accepted_models_compile() {
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::deterministic_rng(proptest::test_runner::RngAlgorithm::ChaCha),
    );
    let strategy = spec();
    let (mut accepted, mut refused): (Vec<(String, String)>, usize) = (Vec::new(), 0);
    for _ in 0..600 {
        let text = text(&strategy.new_tree(&mut runner).unwrap().current());
        match memplan_core::parse_model("model.toml", &text) {
            Ok(model) => accepted.push((model.name.clone(), text)),
            Err(e) => {
                assert!(e.line > 0 && !e.help.is_empty(), "unlocated: {e}\n{text}");
                refused += 1;
            }
        }
        if accepted.len() >= 48 {
            break;
        }
    }
    assert!(
        accepted.len() >= 24 && refused > 0,
        "{} accepted, {refused} refused",
        accepted.len()
    );

    let mut lib = String::from("#![allow(dead_code)]\n");
    let dir = common::scratch_crate("memplan-random-models", "", "");
    for (i, (name, text)) in accepted.iter().enumerate() {
        common::write_if_changed(&dir.join(format!("m{i}.toml")), text.as_bytes());
        // The caller's own code uses the prelude and primitive types beside the module.
        lib += &format!(
            "mod m{i} {{\n    memplan::memplan!(\"../m{i}.toml\");\n    pub fn touch() -> usize {{\n        \
             let v: Vec<u8> = Vec::new();\n        let o: Option<String> = Some(String::new());\n        \
             let r: Result<f32, ()> = Ok(1.0);\n        v.len() + o.map_or(0, |s| s.len()) + r.map_or(0, |x| x as usize) + {name}::STEPS\n    }}\n}}\n"
        );
    }
    common::write_if_changed(&dir.join("src/lib.rs"), lib.as_bytes());
    let output = common::cargo(&dir, &["build"]);
    assert!(
        output.status.success(),
        "an accepted model does not compile:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
