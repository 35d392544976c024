//! `memplan plan` and `memplan render --generated` on model TOMLs show what `memplan!` generates:
//! pools, pinned tensors, app-owned tensors and in-place chains; and on every bench model imported
//! from ONNX (with op kinds), in-place sharing brings the arena below the bound without sharing.

mod common;

use common::{memplan, text};
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    common::scratch("generated_plan", name)
}

fn golden(case: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../memplan-core/tests/golden")
        .join(case)
        .join("model.toml")
        .display()
        .to_string()
}

/// The number after `prefix` in `line`.
fn number_after(line: &str, prefix: &str) -> u64 {
    let at = line
        .find(prefix)
        .unwrap_or_else(|| panic!("no `{prefix}` in {line}"))
        + prefix.len();
    line[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn plan_prints_pools_pins_externals_and_chains() {
    let out = memplan(&["plan", &golden("pools")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("pool sram: 3072 bytes (3.00 KiB) of 8192 allowed"),
        "{stdout}"
    );
    assert!(stdout.contains("1 pinned"), "{stdout}");
    assert!(stdout.contains("section .sram.memplan"), "{stdout}");
    assert!(stdout.contains("pool dram: 16384 bytes"), "{stdout}");
    assert!(
        stdout.contains("in place: 2 alias chain(s) of 4 tensors"),
        "{stdout}"
    );

    let out = memplan(&["plan", &golden("inplace")]);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("external: 2 tensor(s)"), "{stdout}");
    assert!(stdout.contains("image, probs"), "{stdout}");
}

#[test]
fn plan_fails_located_when_a_pool_is_over_full() {
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/ui/pool-overfull.toml");
    let out = memplan(&["plan", model.to_str().unwrap()]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("pool `sram` is over-full: it holds 4096 bytes"),
        "{stderr}"
    );
    assert!(stderr.contains("pool-overfull.toml:8:8"), "{stderr}");
    assert!(!stderr.contains("panicked"));
}

#[test]
fn render_generated_draws_one_picture_per_pool() {
    let dir = scratch("render");
    let svg = dir.join("pools.svg");
    let out = memplan(&[
        "render",
        "--generated",
        &golden("pools"),
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("2 pool(s), 2 in-place chain(s)"));
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(
        picture.contains("pool sram: 3.00 KiB of 8.00 KiB"),
        "{picture}"
    );
    assert!(picture.contains("pool dram"));
    assert!(picture.contains("big = act"));
    assert!(picture.contains("dma [pinned]"));
    // HTML too, and by default (no `--generated`): the compiled plan is what `render` draws.
    let html = dir.join("pools.html");
    let out = memplan(&["render", &golden("pools"), "-o", html.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    assert!(page.contains("pool sram: 3.00 KiB of 8.00 KiB"), "{page}");
    assert!(page.contains("<td>big</td><td>dram</td>"), "{page}");
    assert!(page.contains("big = act"), "{page}");
}

#[test]
fn render_no_inplace_draws_the_plain_problem() {
    let dir = scratch("render_plain");
    let svg = dir.join("plain.svg");
    let out = memplan(&[
        "render",
        &golden("pools"),
        "--no-inplace",
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(!picture.contains("big = act"), "{picture}");
}

/// `<workspace>/../shared/bench`, or `MEMPLAN_BENCH_DIR`.
fn bench_dir() -> PathBuf {
    std::env::var_os("MEMPLAN_BENCH_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/bench"),
        PathBuf::from,
    )
}

#[test]
fn imported_bench_models_shrink_with_inplace_ops() {
    let models = bench_dir().join("models");
    let Ok(entries) = std::fs::read_dir(&models) else {
        println!(
            "skipping: {} not found (set MEMPLAN_BENCH_DIR)",
            models.display()
        );
        return;
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".graph.onnx"))
        .collect();
    files.sort();
    let dir = scratch("bench");
    let mut seen_bert = false;
    for onnx in files {
        let name = onnx
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace(".graph.onnx", "");
        let toml = dir.join(format!("{name}.toml"));
        let out = memplan(&[
            "import",
            onnx.to_str().unwrap(),
            "-o",
            toml.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let imported = text(&out.stderr);
        let out = memplan(&["plan", toml.to_str().unwrap(), "--solver", "best-fit"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let stdout = text(&out.stdout);
        let first = stdout.lines().next().unwrap();
        let inplace = stdout.lines().find(|l| l.starts_with("in place:")).unwrap();
        let arena = number_after(first, "| arena ");
        let bound = number_after(inplace, "bound without sharing ");
        // The importer names both bounds as `memplan plan` does, with the same numbers.
        assert_eq!(
            number_after(&imported, "bound without sharing "),
            bound,
            "{name}: {imported}"
        );
        assert_eq!(
            number_after(&imported, ", lower bound "),
            number_after(first, "| lower bound "),
            "{name}: {imported}"
        );
        let chains = number_after(inplace, "in place: ");
        println!(
            "{name}: arena {arena} bytes with in-place ops, bound without sharing {bound}, {chains} chains"
        );
        assert!(chains > 0, "{name}: {stdout}");
        assert!(arena < bound, "{name}: {stdout}");
        if name == "bert_base_seq128" {
            seen_bert = true;
            assert_eq!(bound, 5_112_320, "the bench's 4.88 MiB");
            assert!(arena < 4 * 1024 * 1024, "{stdout}");
        }
    }
    assert!(seen_bert, "bert_base_seq128.graph.onnx is in the bench");
}

#[test]
fn bench_of_a_model_reports_the_compiled_arena() {
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/models/two_pools.toml");
    let out = memplan(&[
        "bench",
        model.to_str().unwrap(),
        "--solver",
        "best-fit,naive",
        "--capacity",
        "49152",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    // 6 arena tensors, the pools' lower bounds 32768 + 16384; best-fit compiles 49152 bytes (the
    // bound without sharing is 65536, so a plain-problem row could not reach ratio 1).
    let row = stdout
        .lines()
        .find(|l| l.starts_with("| models/two_pools (compiled) |"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(row.contains("| 6 | 49152 | 1.0000"), "{row}");
    assert!(row.contains("yes"), "{row}");
    assert!(stdout.contains("`(compiled)` = a model TOML planned as `memplan!`"));
}
