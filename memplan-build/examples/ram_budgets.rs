//! The arena of TFLite and ONNX networks under a series of RAM budgets (`Network::ram_budget`): for each
//! model, the whole-tensor plan, then budgets from 90% of it down to 40% in steps of 10%, and the
//! least arena any schedule reaches; each with the nodes written in place and the chains run band
//! by band (and their calls). Writing in place and running band by band add no multiply-
//! accumulate (every row of every layer is computed once); the instructions they cost are
//! measured on the Cortex-M4 by `scripts/cortex_m_figures.py -b BYTES`.
//!
//! ```sh
//! cargo run --release -p memplan-build --example ram_budgets -- model.tflite model.onnx ...
//! ```
//! Without arguments: the MLPerf-Tiny-like int8 fixtures, the shared keyword spotter and the
//! shared MobileNetV2 and MobileNetV3-small (ONNX, float32).

use std::path::{Path, PathBuf};

use memplan_build::Network;

fn generate(model: &Path, dir: &Path, budget: Option<u64>) -> Result<(u64, String), String> {
    let mut network = Network::from_file(model)
        .name("net")
        .out_dir(dir)
        .emit_rerun_if_changed(false)
        .plan_docs(false);
    if let Some(bytes) = budget {
        network = network.ram_budget(bytes);
    }
    let generated = network.generate().map_err(|e| e.to_string())?;
    let source = std::fs::read_to_string(&generated.rust).map_err(|e| e.to_string())?;
    // The two lists of the generated module, as written.
    let list = |name: &str| -> String {
        source.find(name).map_or_else(String::new, |at| {
            let rest = &source[at..];
            let rest = &rest[rest.find('=').map_or(0, |e| e + 1)..];
            rest[..rest.find(';').unwrap_or(rest.len())]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
    };
    Ok((
        generated.arena_size,
        format!(
            "in place {} | band by band {}",
            list("WRITTEN_IN_PLACE"),
            list("BAND_BY_BAND")
        ),
    ))
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut models: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    if models.is_empty() {
        let fixtures = root.join("memplan-runner/tests/fixtures/tflite");
        for name in [
            "vww_like",
            "mobilenet_like",
            "resnet8_like",
            "autoencoder_like",
        ] {
            models.push(fixtures.join(format!("{name}.tflite")));
        }
        for shared in [
            "tinyml/kws_ref_model.tflite",
            "runnable/mobilenet_v2.onnx",
            "runnable/mobilenet_v3_small.onnx",
        ] {
            let path = root.join("../shared/bench").join(shared);
            if path.is_file() {
                models.push(path);
            } else {
                println!("(skipped {shared}: {} is absent)", path.display());
            }
        }
    }
    let dir = std::env::temp_dir().join(format!("memplan-ram-budgets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    println!("| model | RAM budget | arena | of the whole-tensor bound | schedule |");
    println!("|---|---:|---:|---:|---|");
    for model in &models {
        let name = model
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let whole = match generate(model, &dir, None) {
            Ok((arena, _)) => arena,
            Err(e) => {
                println!(
                    "| {name} | | | | cannot build: {} |",
                    e.lines().next().unwrap_or("")
                );
                continue;
            }
        };
        println!("| {name} | none | {whole} | 100% | whole tensors |");
        let mut least = None;
        for tenths in (4..=9).rev() {
            let budget = whole * tenths / 10;
            match generate(model, &dir, Some(budget)) {
                Ok((arena, how)) => {
                    println!(
                        "| {name} | {budget} | {arena} | {:.1}% | {how} |",
                        100.0 * arena as f64 / whole as f64
                    );
                }
                Err(e) => {
                    least = e
                        .split("the least arena this network can run in is ")
                        .nth(1)
                        .and_then(|rest| rest.split(' ').next())
                        .and_then(|n| n.parse::<u64>().ok());
                    break;
                }
            }
        }
        let Some(least) = least.or_else(|| {
            generate(model, &dir, Some(1)).err().and_then(|e| {
                e.split("the least arena this network can run in is ")
                    .nth(1)
                    .and_then(|rest| rest.split(' ').next())
                    .and_then(|n| n.parse().ok())
            })
        }) else {
            continue;
        };
        match generate(model, &dir, Some(least)) {
            Ok((arena, how)) => println!(
                "| {name} | {least} (least) | {arena} | {:.1}% | {how} |",
                100.0 * arena as f64 / whole as f64
            ),
            Err(e) => println!(
                "| {name} | {least} (least) | | | {} |",
                e.lines().next().unwrap_or("")
            ),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
