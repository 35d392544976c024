//! In-place ops on the real models of `../shared/bench/models`: each `<model>.json` (tensors with
//! their producing op type and inclusive `first`/`last` steps, `step_nodes` with each step's op
//! type) becomes a model file whose ops carry their ONNX `kind`; it is planned with and without
//! in-place sharing, both plans must validate, and the figures are printed
//! (`cargo test -p memplan-core --test test_bench_inplace -- --nocapture`).
//!
//! The JSON does not list each node's inputs, only when each tensor is last read, so op `k`'s
//! `inputs` here are the tensors whose last reader is op `k`. That gives every tensor its exact
//! lifetime, and exactly the inputs an in-place op may overwrite (an input still read later never
//! qualifies). Skipped, with a message, when the bench data is absent.
#![cfg(feature = "model-file")]

use std::fmt::Write;
use std::path::PathBuf;

use memplan_core::codegen::{check, plan_model};
use memplan_core::{format_byte_size, lower_bound, parse_model};

mod common;

fn models_dir() -> Option<PathBuf> {
    common::bench_dir("models")
}

/// The model file for a bench JSON, with `[model] inplace` set as given.
fn model_toml(json: &serde_json::Value, inplace: bool) -> String {
    let tensors = json["tensors"].as_array().expect("tensors");
    let steps = json["step_nodes"].as_array().expect("step_nodes");
    let name = |i: usize| format!("t{i}");
    let quoted = |list: &[usize]| {
        list.iter()
            .map(|&i| format!("\"{}\"", name(i)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let flag = |t: &serde_json::Value, key: &str| t[key].as_bool().unwrap_or(false);
    let step_of = |t: &serde_json::Value, key: &str| t[key].as_u64().expect("step") as usize;
    let inputs: Vec<usize> = (0..tensors.len())
        .filter(|&i| flag(&tensors[i], "is_graph_input"))
        .collect();
    let outputs: Vec<usize> = (0..tensors.len())
        .filter(|&i| flag(&tensors[i], "is_graph_output"))
        .collect();
    let mut text = String::new();
    let _ = writeln!(
        text,
        "[model]\nname = \"bench\"\nsolver = \"best-fit\"\ninplace = {inplace}\ninputs = [{}]\noutputs = [{}]\n\n[tensors]",
        quoted(&inputs),
        quoted(&outputs)
    );
    for (i, t) in tensors.iter().enumerate() {
        let _ = writeln!(
            text,
            "{} = {{ bytes = {}, source = {} }}",
            name(i),
            t["size"].as_u64().expect("size"),
            serde_json::to_string(t["name"].as_str().unwrap_or("")).unwrap()
        );
    }
    for (k, step) in steps.iter().enumerate() {
        let produced: Vec<usize> = (0..tensors.len())
            .filter(|&i| !flag(&tensors[i], "is_graph_input") && step_of(&tensors[i], "first") == k)
            .collect();
        let read_last: Vec<usize> = (0..tensors.len())
            .filter(|&i| {
                let t = &tensors[i];
                step_of(t, "last") == k
                    && !flag(t, "is_graph_output")
                    && (flag(t, "is_graph_input") || step_of(t, "first") < k)
            })
            .collect();
        let _ = writeln!(
            text,
            "\n[[ops]]\nname = \"s{k}\"\nkind = {}\ninputs = [{}]\noutputs = [{}]",
            serde_json::to_string(step["op"].as_str().unwrap_or("")).unwrap(),
            quoted(&read_last),
            quoted(&produced)
        );
    }
    text
}

struct Figures {
    tensors: usize,
    chains: usize,
    members: usize,
    bound_without: u64,
    arena_without: u64,
    bound_with: u64,
    arena_with: u64,
}

fn figures(text_without: &str, text_with: &str) -> Figures {
    let without = parse_model("model.toml", text_without).unwrap_or_else(|e| panic!("{e}"));
    let with = parse_model("model.toml", text_with).unwrap_or_else(|e| panic!("{e}"));
    assert!(without.aliases.is_empty());
    let plan_without = plan_model(&without).unwrap_or_else(|e| panic!("{e}"));
    let plan_with = plan_model(&with).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(check(&without, &plan_without), Vec::<String>::new());
    assert_eq!(check(&with, &plan_with), Vec::<String>::new());
    // The plain problem's bound is the bench's lower bound; sharing never raises the arena.
    assert_eq!(
        plan_without.lower_bound_without_aliasing,
        lower_bound(&without.to_problem())
    );
    assert!(plan_with.pools[0].lower_bound <= plan_without.pools[0].lower_bound);
    Figures {
        tensors: with.tensors.len(),
        chains: plan_with.chains.len(),
        members: plan_with.chains.iter().map(Vec::len).sum(),
        bound_without: plan_without.pools[0].lower_bound,
        arena_without: plan_without.pools[0].arena_size,
        bound_with: plan_with.pools[0].lower_bound,
        arena_with: plan_with.pools[0].arena_size,
    }
}

#[test]
fn inplace_sharing_shrinks_the_bench_models() {
    let Some(dir) = models_dir() else {
        println!("skipping: ../shared/bench/models not found (set MEMPLAN_BENCH_DIR)");
        return;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    println!(
        "{:<20} {:>7} {:>6} {:>14} {:>14} {:>14} {:>14}",
        "model",
        "tensors",
        "chains",
        "LB no alias",
        "arena no alias",
        "LB in place",
        "arena in place"
    );
    let mut bert = None;
    for file in files {
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let f = figures(&model_toml(&json, false), &model_toml(&json, true));
        let model = file.file_stem().unwrap().to_string_lossy().into_owned();
        println!(
            "{model:<20} {:>7} {:>6} {:>14} {:>14} {:>14} {:>14}   ({} -> {}; {} tensors in chains)",
            f.tensors,
            f.chains,
            f.bound_without,
            f.arena_without,
            f.bound_with,
            f.arena_with,
            format_byte_size(f.arena_without),
            format_byte_size(f.arena_with),
            f.members
        );
        assert!(f.arena_with <= f.arena_without, "{model}");
        if model == "bert_base_seq128" {
            bert = Some(f);
        }
    }
    if let Some(f) = bert {
        // The bench's no-alias lower bound of bert_base_seq128 is 4.88 MiB.
        assert_eq!(f.bound_without, 5_112_320);
        assert!(
            f.arena_with < f.bound_without,
            "with in-place ops bert's arena ({}) is below its no-alias lower bound ({})",
            f.arena_with,
            f.bound_without
        );
    }
}
