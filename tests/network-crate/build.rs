//! One `generate` call per network: the small CNN shipped with the runner always (also with
//! each option of `Network`), and every
//! runnable network of `../shared/bench` that is present (each then gets a `has_<name>` cfg).

use std::path::Path;

/// `(folder under ../shared/bench, network)`.
const SHARED: &[(&str, &str)] = &[
    ("runnable", "squeezenet1_1"),
    ("runnable", "mobilenet_v3_small"),
    ("runnable", "mobilenet_v2"),
    ("runnable", "bert_mini"),
    ("tinyml", "kws_ref_model_float32"),
];

fn main() -> Result<(), memplan_build::Error> {
    let default = "../../memplan-runner/models/default.onnx";
    memplan_build::Network::from_onnx(default)
        .name("default_cnn")
        .generate()?;
    // The same network with the options: no in-place ops; inputs and outputs in the arena; two
    // pools (a 64 KiB one first, then one without a limit); the exact solver; no plan docs.
    memplan_build::Network::from_onnx(default)
        .name("default_cnn_copies")
        .inplace(false)
        .generate()?;
    memplan_build::Network::from_onnx(default)
        .name("default_cnn_io_in_arena")
        .io_in_arena(true)
        .solver("exact")
        .plan_docs(false)
        .generate()?;
    memplan_build::Network::from_onnx(default)
        .name("default_cnn_pools")
        .pool("sram", Some(64 * 1024))
        .pool("psram", None)
        .generate()?;
    // Values named like the generated code's own words (`arena`, `v`, `blob`, `outputs`, ...).
    memplan_build::Network::from_onnx("models/awkward_names.onnx")
        .name("awkward_names")
        .generate()?;
    for (folder, name) in SHARED {
        println!("cargo::rustc-check-cfg=cfg(has_{name})");
        let path = format!("../../../shared/bench/{folder}/{name}.onnx");
        if Path::new(&path).is_file() {
            memplan_build::Network::from_onnx(&path)
                .name(name)
                .generate()?;
            println!("cargo::rustc-cfg=has_{name}");
        } else {
            println!("cargo::warning=skipping {name}: {path} not found");
        }
    }
    Ok(())
}
