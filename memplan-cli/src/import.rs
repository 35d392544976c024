//! `memplan import`: ONNX or TensorFlow Lite to model TOML (see the `memplan-onnx` and
//! `memplan-tflite` crates).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};

use crate::output;
use memplan_onnx::ImportOptions;

#[derive(clap::Args, Debug)]
pub(crate) struct ImportArgs {
    /// The ONNX model (weights may be external; their data is not read), or a TensorFlow Lite
    /// model (`.tflite`: subgraph 0, NHWC as in the file).
    input: PathBuf,
    /// Where to write the model TOML; default: standard output.
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// The value of a symbolic dimension, e.g. `--dim batch=1` (repeatable).
    #[arg(long = "dim", value_name = "NAME=VALUE")]
    dims: Vec<String>,
    /// The model's name (a Rust identifier); default: the file name up to its first `.`.
    #[arg(long)]
    name: Option<String>,
    /// `[model] alignment` of the written model, in bytes (a power of two).
    #[arg(long, default_value_t = memplan_core::model_file::DEFAULT_ALIGNMENT)]
    alignment: u64,
    /// Leave out `[weights]`, the ops' full input lists and their `attrs`: ops list their tensor
    /// inputs only (the model file of earlier versions). By default the file lists the weights
    /// (initializers and folded constants the ops read: dtype, shape and ONNX name, never data),
    /// each op's inputs in ONNX order (weights included, `""` for an absent optional input) and
    /// its `attrs`.
    #[arg(long)]
    no_weights: bool,
}

fn parse_dims(dims: &[String]) -> anyhow::Result<BTreeMap<String, u64>> {
    let mut out = BTreeMap::new();
    for dim in dims {
        let Some((name, value)) = dim.split_once('=') else {
            bail!("`--dim {dim}` is not NAME=VALUE; write for example `--dim batch=1`");
        };
        let value: u64 = match value.trim().parse() {
            Ok(v) if v > 0 => v,
            _ => bail!("`--dim {dim}`: the value must be a whole number of at least 1"),
        };
        out.insert(name.trim().to_string(), value);
    }
    Ok(out)
}

pub(crate) fn run(args: &ImportArgs) -> anyhow::Result<ExitCode> {
    let options = ImportOptions {
        name: args.name.clone(),
        dims: parse_dims(&args.dims)?,
        alignment: args.alignment,
        with_weights: !args.no_weights,
        ..ImportOptions::default()
    };
    let bytes = std::fs::read(&args.input)
        .with_context(|| format!("cannot read `{}`", args.input.display()))?;
    let toml_name = args
        .out
        .as_ref()
        .map_or_else(|| "<stdout>".to_string(), |p| p.display().to_string());
    if memplan_tflite::is_tflite(&args.input, &bytes) {
        return import_tflite(args, &toml_name, &bytes);
    }
    let imported = memplan_onnx::import(
        &args.input.display().to_string(),
        &toml_name,
        &bytes,
        &options,
    )?;
    for note in &imported.notes {
        eprintln!("note: {note}");
    }
    write_toml(args, &imported.toml)?;
    let model = &imported.model;
    eprintln!(
        "imported `{}`: {} nodes, {} folded as constants; {} ops, {} tensors, {}",
        model.name,
        imported.nodes,
        imported.folded,
        model.ops.len(),
        model.tensors.len(),
        bounds(model)
    );
    Ok(ExitCode::SUCCESS)
}

/// `memplan import model.tflite`: subgraph 0's activations and operators.
fn import_tflite(args: &ImportArgs, toml_name: &str, bytes: &[u8]) -> anyhow::Result<ExitCode> {
    if !args.dims.is_empty() {
        bail!("`--dim` names ONNX symbolic dimensions; a TFLite file has static shapes");
    }
    let options = memplan_tflite::ImportOptions {
        name: args.name.clone(),
        alignment: args.alignment,
        ..memplan_tflite::ImportOptions::default()
    };
    let imported = memplan_tflite::import(
        &args.input.display().to_string(),
        toml_name,
        bytes,
        &options,
    )?;
    write_toml(args, &imported.toml)?;
    let model = &imported.model;
    eprintln!(
        "imported `{}`: {} TFLite operators; {} ops, {} tensors, {}",
        model.name,
        imported.graph.operators.len(),
        model.ops.len(),
        model.tensors.len(),
        bounds(model)
    );
    Ok(ExitCode::SUCCESS)
}

/// Writes the model file to `--out` (atomically) or to standard output.
fn write_toml(args: &ImportArgs, toml: &str) -> anyhow::Result<()> {
    match &args.out {
        Some(path) => output::write_atomically(path, toml)?,
        None => std::io::stdout()
            .write_all(toml.as_bytes())
            .context("cannot write to standard output")?,
    }
    Ok(())
}

/// The imported model's two bounds, named apart: `bound without sharing N bytes` (every tensor
/// its own bytes) and `lower bound M bytes (in-place chains merged, alignment ignored)`, the
/// one `memplan plan` and the generated `LOWER_BOUND` measure the arena against.
fn bounds(model: &memplan_core::Model) -> String {
    match memplan_core::model_plan::lower_bounds(model) {
        Ok(bounds) => format!(
            "bound without sharing {} bytes, lower bound {} bytes (in-place chains merged, \
             alignment ignored: what the arena is measured against)",
            bounds.without_sharing, bounds.chains_merged
        ),
        // Not expected for a model the importer wrote; the plain bound is still right.
        Err(_) => format!(
            "bound without sharing {} bytes",
            memplan_core::lower_bound(&model.to_problem())
        ),
    }
}
