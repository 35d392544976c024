//! End-to-end tests of `memplan import`, `memplan render`, and model TOML input to `plan`,
//! `check` and `bench`: exit codes, messages, figures, and no partial output.

mod common;

use common::{memplan, text};
use std::path::{Path, PathBuf};
use std::process::Output;

fn scratch(name: &str) -> PathBuf {
    common::scratch("import_render", name)
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// `<workspace>/../shared/bench`, or `MEMPLAN_BENCH_DIR`.
fn bench_dir() -> PathBuf {
    std::env::var_os("MEMPLAN_BENCH_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/bench"),
        PathBuf::from,
    )
}

fn plan_json(input: &Path) -> serde_json::Value {
    // The plain problem (`--no-inplace`), comparable with the bench's published figures.
    let out = memplan(&["plan", s(input), "--format", "json", "--no-inplace"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Asserts the command failed cleanly: non-zero exit, `expected` in stderr, no panic.
fn assert_fails(out: &Output, expected: &str) {
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "succeeded: {stderr}");
    assert!(
        stderr.contains(expected),
        "missing `{expected}` in: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn bench_models_import_then_plan_to_the_csv_figures() {
    let dir = bench_dir().join("models");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!("skipping: {} not found", dir.display());
        return;
    };
    let mut models: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".graph.onnx"))
        .collect();
    models.sort();
    if models.is_empty() {
        println!("skipping: no *.graph.onnx in {}", dir.display());
        return;
    }
    let out_dir = scratch("bench");
    for onnx in models {
        let stem = onnx
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace(".graph.onnx", "");
        let toml = out_dir.join(format!("{stem}.toml"));
        let out = memplan(&["import", s(&onnx), "-o", s(&toml)]);
        assert!(out.status.success(), "{stem}: {}", text(&out.stderr));
        let imported = plan_json(&toml);
        let csv = plan_json(&dir.join(format!("{stem}.csv")));
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("{stem}.json"))).unwrap(),
        )
        .unwrap();
        let tensors = json["tensors"].as_array().unwrap().len() as u64;
        assert_eq!(imported["buffers"], tensors, "{stem}: tensors vs JSON");
        assert_eq!(
            imported["buffers"], csv["buffers"],
            "{stem}: tensors vs CSV"
        );
        // Alignment (16 bytes by default) pads offsets, never sizes: the bound is the same.
        assert_eq!(
            imported["lower_bound"], csv["lower_bound"],
            "{stem}: lower bound"
        );
        println!(
            "{stem}: {} tensors, lower bound {} (CSV {}), arena {}",
            imported["buffers"],
            imported["lower_bound"],
            csv["lower_bound"],
            imported["arena_size"]
        );
    }
}

#[test]
fn import_writes_a_model_that_plans() {
    let dir = scratch("tiny");
    let toml = dir.join("tiny.toml");
    let out = memplan(&["import", &fixture("tiny.onnx"), "-o", s(&toml)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("6 nodes, 3 folded as constants; 3 ops, 4 tensors"));
    let written = std::fs::read_to_string(&toml).unwrap();
    assert!(written.contains("kind = \"Relu\""), "{written}");
    let plan = plan_json(&toml);
    assert_eq!(plan["buffers"], 4);
    assert_eq!(plan["lower_bound"], 32);
    // Without -o the model goes to stdout.
    let out = memplan(&["import", &fixture("tiny.onnx")]);
    assert_eq!(text(&out.stdout), written.replace(s(&toml), "<stdout>"));
}

#[test]
fn dynamic_dims_need_dim_and_fail_without_output() {
    let dir = scratch("dynamic");
    let toml = dir.join("model.toml");
    let out = memplan(&["import", &fixture("tiny_dynamic.onnx"), "-o", s(&toml)]);
    assert_fails(
        &out,
        "graph input `x` has dynamic dimension `batch` (axis 0)",
    );
    assert_fails(&out, "--dim batch=1");
    assert!(!toml.exists(), "no output on error");
    let out = memplan(&[
        "import",
        &fixture("tiny_dynamic.onnx"),
        "--dim",
        "batch=2",
        "-o",
        s(&toml),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        std::fs::read_to_string(&toml)
            .unwrap()
            .contains("shape = [2, 4]")
    );
    let out = memplan(&["import", &fixture("tiny_dynamic.onnx"), "--dim", "batch"]);
    assert_fails(&out, "is not NAME=VALUE");
}

#[test]
fn bad_onnx_fails_cleanly() {
    let dir = scratch("bad");
    let toml = dir.join("model.toml");
    let good = std::fs::read(fixture("tiny.onnx")).unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "truncated.onnx",
            good[..good.len() / 3].to_vec(),
            "is not an ONNX model",
        ),
        (
            "magic.onnx",
            b"\x7fELF\x02\x01\x01\x00garbage".to_vec(),
            "is not an ONNX model",
        ),
        ("empty.onnx", Vec::new(), "the file is empty"),
    ];
    for (name, bytes, expected) in cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = memplan(&["import", s(&path), "-o", s(&toml)]);
        assert_fails(&out, expected);
        assert!(!toml.exists(), "{name}: no output on error");
    }
    let out = memplan(&["import", &fixture("tiny_string.onnx"), "-o", s(&toml)]);
    assert_fails(&out, "has element type STRING");
    assert!(!toml.exists());
    let out = memplan(&["import", s(&dir.join("missing.onnx"))]);
    assert_fails(&out, "cannot read");
}

/// By default the model file names the weights the ops read and keeps each op's inputs in ONNX
/// order; `--no-weights` writes the tensor-only file of earlier versions. Both plan.
#[test]
fn import_names_weights_unless_told_not_to() {
    let dir = scratch("weights");
    let tiny = fixture("tiny.onnx");
    let with = dir.join("with.toml");
    let out = memplan(&["import", tiny.as_str(), "-o", s(&with)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(&with).unwrap();
    assert!(
        written.contains("[weights]\nw2 = { dtype = \"f32\", shape = [1, 4], source = \"w2\" }"),
        "{written}"
    );
    assert!(written.contains("inputs = [\"x\", \"w2\"]"), "{written}");
    assert!(plan_json(&with)["buffers"].as_u64().unwrap() > 0);
    let without = dir.join("without.toml");
    let out = memplan(&["import", tiny.as_str(), "-o", s(&without), "--no-weights"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(&without).unwrap();
    assert!(!written.contains("[weights]"), "{written}");
    assert!(written.contains("inputs = [\"x\"]"), "{written}");
    assert_eq!(plan_json(&with)["buffers"], plan_json(&without)["buffers"]);
}

/// Issue 12 item 8: bad flags are explained, not called a bug in the importer, and write nothing.
#[test]
fn bad_import_flags_fail_with_an_explanation() {
    let dir = scratch("bad_flags");
    let toml = dir.join("model.toml");
    for (flags, expected) in [
        (
            &["--alignment", "3"][..],
            "alignment 3 is not a power of two",
        ),
        (
            &["--name", ""][..],
            "model name `` is not a valid Rust identifier: it is empty",
        ),
        (&["--name", "my model"][..], "--name my_model"),
    ] {
        let tiny = fixture("tiny.onnx");
        let mut args = vec!["import", tiny.as_str(), "-o", s(&toml)];
        args.extend_from_slice(flags);
        let out = memplan(&args);
        assert_fails(&out, expected);
        let stderr = text(&out.stderr);
        assert!(!stderr.contains("bug in the importer"), "{stderr}");
        assert!(!stderr.contains("model.toml"), "{stderr}");
        assert!(!toml.exists(), "{flags:?}: no output on error");
    }
}

fn tiny_toml(dir: &Path) -> PathBuf {
    let toml = dir.join("tiny.toml");
    let out = memplan(&["import", &fixture("tiny.onnx"), "-o", s(&toml)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    toml
}

#[test]
fn render_writes_svg_and_html() {
    let dir = scratch("render");
    let toml = tiny_toml(&dir);
    let svg = dir.join("plan.svg");
    let out = memplan(&["render", s(&toml), "-o", s(&svg)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(picture.starts_with("<svg") && picture.contains("lower bound 32 B"));
    // Op kinds from the model appear in the tooltips; `Relu` and the output write in place over
    // the `Add`'s output, one rectangle from step 0.
    assert!(picture.contains("first step 0: Add /add/Add"), "{picture}");
    let plain = dir.join("plain.svg");
    let out = memplan(&["render", s(&toml), "--no-inplace", "-o", s(&plain)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let picture = std::fs::read_to_string(&plain).unwrap();
    assert!(
        picture.contains("first step 1: Relu /relu/Relu"),
        "{picture}"
    );
    let html = dir.join("report.html");
    let out = memplan(&["render", s(&toml), "-o", s(&html)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        std::fs::read_to_string(&html)
            .unwrap()
            .starts_with("<!DOCTYPE html>")
    );
    // Same input, same bytes.
    let again = dir.join("again.svg");
    assert!(
        memplan(&["render", s(&toml), "-o", s(&again)])
            .status
            .success()
    );
    assert_eq!(std::fs::read(&svg).unwrap(), std::fs::read(&again).unwrap());
    let out = memplan(&["render", s(&toml), "-o", s(&dir.join("plan.png"))]);
    assert_fails(&out, "`*.svg` for an image or `*.html`");
}

#[test]
fn render_draws_a_given_plan() {
    let dir = scratch("render_plan");
    let toml = tiny_toml(&dir);
    let plan = dir.join("plan.csv");
    let out = memplan(&["plan", s(&toml), "--solver", "naive", "--out", s(&plan)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let svg = dir.join("naive.svg");
    let out = memplan(&["render", s(&toml), "--plan", s(&plan), "-o", s(&svg)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("1 pool(s), 1 in-place chain(s), arenas 32 bytes"),
        "{}",
        text(&out.stdout)
    );
    assert!(text(&out.stderr).is_empty(), "{}", text(&out.stderr));
    let bad_plan = dir.join("bad_plan.csv");
    std::fs::write(&bad_plan, "id,lower,upper,size,offset\nx,0,1,16,0\n").unwrap();
    let out = memplan(&["render", s(&toml), "--plan", s(&bad_plan), "-o", s(&svg)]);
    assert_fails(&out, "gives no offset for tensor `add_add_output_0`");
}

#[test]
fn toml_models_work_in_plan_check_and_bench() {
    let dir = scratch("toml");
    let toml = tiny_toml(&dir);
    // The plan goes beside the folder `bench` reads, not into it.
    let plan = dir.with_extension("plan.csv");
    let out = memplan(&["plan", s(&toml), "--out", s(&plan)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = memplan(&["check", s(&toml), s(&plan)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("ok: 4 tensors, arena 32 bytes"));
    let out = memplan(&["bench", s(&dir), "--solver", "best-fit"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("tiny"), "{}", text(&out.stdout));
    // With a capacity: a `fits` column per solver, and the count of fits in the mean row.
    let arena = |capacity: &str| {
        let out = memplan(&[
            "bench",
            s(&toml),
            "--solver",
            "naive,auto",
            "--capacity",
            capacity,
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let table = text(&out.stdout);
        assert!(
            table.contains("| naive fits |") && table.contains("| auto fits |"),
            "{table}"
        );
        table
    };
    let roomy = arena("1000000");
    assert!(roomy.contains("| 1/1 |"), "{roomy}");
    let tight = arena("1");
    let mean = tight.lines().find(|l| l.starts_with("| **mean**")).unwrap();
    assert_eq!(mean.matches("| 0/1 |").count(), 2, "{tight}");
    // --format table|json|csv, and --json as an alias of json: the compiled plan.
    let table = text(&memplan(&["plan", s(&toml), "--format", "table"]).stdout);
    assert!(table.starts_with("tensors 4 | arena 32 bytes"), "{table}");
    let rows = table
        .lines()
        .skip_while(|l| !l.starts_with("tensor "))
        .count();
    assert_eq!(rows, 1 + 4, "{table}");
    assert!(
        table.contains("relu_0            arena                 16              16  [1, 2)"),
        "{table}"
    );
    let json = memplan(&["plan", s(&toml), "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json["plan"].as_array().unwrap().len(), 4);
    assert_eq!(json["plan"][0]["id"], "x");
    assert_eq!(json["arena_size"], 32);
    let csv = text(&memplan(&["plan", s(&toml), "--format", "csv"]).stdout);
    assert!(
        csv.starts_with("id,lower,upper,size,alignment,offset,pool,chain\nx,0,1,16,16,"),
        "{csv}"
    );
}

#[test]
fn toml_errors_show_the_source_line() {
    let dir = scratch("toml_error");
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        "[model]\nname = \"m\"\ninputs = [\"x\"]\noutputs = [\"x\"]\n\n[tensors]\nx = { dtype = \"f33\", shape = [1] }\n",
    )
    .unwrap();
    for command in ["plan", "render"] {
        let out = memplan(&[command, s(&bad)]);
        assert_fails(&out, "unknown dtype `f33`");
        let stderr = text(&out.stderr);
        assert!(stderr.contains("bad.toml:7:15"), "{stderr}");
        assert!(
            stderr.contains("x = { dtype = \"f33\", shape = [1] }"),
            "{stderr}"
        );
        assert!(stderr.contains("^^^^^"), "{stderr}");
        assert!(stderr.contains("help:"), "{stderr}");
    }
    let out = memplan(&["plan", &fixture("tiny.onnx")]);
    assert_fails(&out, "import it first");
}
