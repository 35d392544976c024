//! `memplan-runner IN.bin OUT.bin [--heap]`: runs the ONNX or TFLite network this binary was
//! built for (`MEMPLAN_MODEL` at build time) out of its compile-time planned arena.
//!
//! IN.bin holds the graph's inputs as raw little-endian elements (each its own dtype and static
//! shape: int8 bytes for an int8 input), concatenated in graph order; OUT.bin receives the
//! graph's first output as raw little-endian elements of its dtype for float32, int8 and uint8
//! (bytes), float32 for the wider integer types (converted), written whole or not at all,
//! so a failed run never leaves half an output. `--heap` runs the same kernels with every value in a
//! heap buffer of its own. `--expect REF.bin` compares the output with a reference (absolute 1e-4
//! plus relative 1e-3 per element) and fails on a mismatch; `--bench N` times N arena runs
//! against N heap runs, interleaved, in CPU time, prints the ratio against ONNX Runtime's figure
//! recorded by `bench/ort_times.py` and the slowest ops; `--repeat N` runs the arena N times
//! more, for a profiler; `--simd avx2` (or `portable`) caps the kernels' vector instructions.

mod bench;
mod buffer;
mod clock;
mod heap;
mod network;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use memplan::StaticArena;
use memplan_kernels::{DataMut, OwnedData};

use network::net;
use network::net::network::{INPUTS, OUTPUTS, VALUES};

/// Runs the ONNX or TFLite network chosen at build time (`MEMPLAN_MODEL`) out of its planned
/// arena.
#[derive(Parser, Debug)]
#[command(name = "memplan-runner", version, about)]
struct Args {
    /// The graph's inputs: raw little-endian elements, row-major, one after the other in graph
    /// order (a network with inputs `input_ids` and `attention_mask` reads both from this file).
    input: PathBuf,
    /// Where to write the graph's first output, row-major: raw little-endian float32 for a float
    /// output, int8 or uint8 bytes for an int8 or uint8 one (other integer types as float32).
    output: PathBuf,
    /// Every value in its own heap buffer instead of the arena.
    #[arg(long)]
    heap: bool,
    /// A reference output to compare with, in the format OUT.bin is written in (bytes for an
    /// int8 or uint8 output: compared exactly, see --quanta).
    #[arg(long, value_name = "REF.bin")]
    expect: Option<PathBuf>,
    /// For an 8-bit output: how many quanta an element may differ from --expect's (default 0).
    #[arg(long, value_name = "N", default_value_t = 0)]
    quanta: u32,
    /// Also time N arena runs against N heap runs (interleaved, CPU time), print the medians, the
    /// ratio against ONNX Runtime's recorded figure (bench/ort_times.json) and the slowest ops.
    #[arg(long, value_name = "N")]
    bench: Option<usize>,
    /// Then run the arena N times more and print the mean CPU time of a run: a steady loop of
    /// the arena run alone, for a sampling profiler (`perf record`) to attribute to kernels.
    #[arg(long, value_name = "N")]
    repeat: Option<usize>,
    /// The widest vector instructions the kernels may use: `avx512` (the default: what the CPU
    /// has), `avx2` or `portable`. Every level computes the same bits; for comparing them.
    #[arg(long, value_name = "LEVEL", value_parser = ["avx512", "avx2", "portable"])]
    simd: Option<String>,
}

/// The arena: a `static` (zeroed, so in `.bss`), never on the stack; handed out once.
static ARENA: StaticArena<net::Arena> = StaticArena::new(net::Arena::new());

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The graph inputs in `bytes`, one after the other in graph order.
fn read_inputs(bytes: &[u8]) -> Result<Vec<(usize, OwnedData)>, String> {
    let mut inputs = Vec::with_capacity(INPUTS.len());
    let mut at = 0;
    for (i, &v) in INPUTS.iter().enumerate() {
        let value = &VALUES[v];
        let size = value.dtype.size() * value.elements();
        let rest = &bytes[at.min(bytes.len())..];
        let piece = if i + 1 == INPUTS.len() {
            rest
        } else {
            &rest[..size.min(rest.len())]
        };
        let buffer = buffer::from_le_bytes(value, piece).map_err(|e| {
            if INPUTS.len() == 1 {
                e
            } else {
                let all: usize = INPUTS
                    .iter()
                    .map(|&v| buffer::zeroed(&VALUES[v]).byte_len())
                    .sum();
                format!(
                    "{e}; the network has {} inputs ({}), read one after the other: {all} bytes in all, the file has {}",
                    INPUTS.len(),
                    INPUTS.iter().map(|&v| VALUES[v].onnx).collect::<Vec<_>>().join(", "),
                    bytes.len()
                )
            }
        })?;
        at += size;
        inputs.push((v, buffer));
    }
    Ok(inputs)
}

/// One arena run: every node on its views of the arena, the outputs written to their own buffers.
pub(crate) fn run_arena(
    arena: &mut net::Arena,
    inputs: &[(usize, OwnedData)],
) -> Result<Vec<OwnedData>, String> {
    let mut outputs: Vec<OwnedData> = OUTPUTS
        .iter()
        .map(|&v| buffer::zeroed(&VALUES[v]))
        .collect();
    let views: Vec<_> = inputs.iter().map(|(_, b)| b.data()).collect();
    let mut outs: Vec<DataMut<'_>> = outputs.iter_mut().map(OwnedData::data_mut).collect();
    net::run_dyn(arena, &views, &mut outs).map_err(|e| e.to_string())?;
    Ok(outputs)
}

fn run_heap(inputs: &[(usize, OwnedData)]) -> Result<Vec<OwnedData>, String> {
    heap::run(inputs, None).map_err(|e| e.to_string())
}

fn mib(bytes: u64) -> String {
    format!("{:.2} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn run(args: &Args) -> Result<ExitCode, String> {
    if let Some(level) = &args.simd {
        use memplan_kernels::simd::{Level, limit};
        limit(match level.as_str() {
            "portable" => Level::Portable,
            "avx2" => Level::Avx2,
            _ => Level::Avx512,
        });
    }
    let bytes = std::fs::read(&args.input)
        .map_err(|e| format!("cannot read `{}`: {e}", args.input.display()))?;
    let inputs = read_inputs(&bytes).map_err(|e| format!("`{}`: {e}", args.input.display()))?;
    let out_dtype = VALUES[OUTPUTS[0]].dtype;
    let int8_output = matches!(
        out_dtype,
        memplan_kernels::DType::I8 | memplan_kernels::DType::U8
    );
    let reference = match &args.expect {
        Some(path) if int8_output => Some(read_bytes(path, out_dtype)?),
        Some(path) => Some(read_f32(path)?),
        None => None,
    };
    let arena = ARENA.take().ok_or("the arena is taken")?;
    let arena_bytes = net::ARENA_SIZE as u64;
    let bound = net::network::BOUND_WITHOUT_SHARING as u64;
    println!("model {}", net::network::SOURCE);
    println!(
        "arena {} bytes ({}) | bound without sharing {} bytes ({}) | ratio {:.4} to it | lower bound {} bytes (in-place chains merged, alignment ignored) | in place {} ({} pairs) | all activations {} bytes",
        arena_bytes,
        mib(arena_bytes),
        bound,
        mib(bound),
        arena_bytes as f64 / bound.max(1) as f64,
        net::LOWER_BOUND,
        if net::network::INPLACE { "on" } else { "off" },
        net::network::INPLACE_PAIRS,
        net::network::SUM_OF_SIZES,
    );
    if !net::network::WRITTEN_IN_PLACE.is_empty() || !net::network::BAND_BY_BAND.is_empty() {
        let stages: Vec<String> = net::network::BAND_BY_BAND
            .iter()
            .map(|(nodes, calls)| format!("`{nodes}` in {calls} calls"))
            .collect();
        println!(
            "schedule (RAM budget, cache): {} node(s) written over their input | band by band: {}",
            net::network::WRITTEN_IN_PLACE.len(),
            if stages.is_empty() {
                "none".to_owned()
            } else {
                stages.join(", ")
            }
        );
    }
    let started = clock::cpu_seconds();
    let outputs = if args.heap {
        run_heap(&inputs)?
    } else {
        run_arena(arena, &inputs)?
    };
    let seconds = clock::cpu_seconds() - started;
    let output = buffer::to_f32(outputs[0].data());
    match outputs[0].data() {
        // An int8 or uint8 output is written as its own bytes; float32 and the others as
        // float32.
        memplan_kernels::Data::I8(q) => {
            write_bytes(
                &args.output,
                &q.iter().map(|&v| v.cast_unsigned()).collect::<Vec<_>>(),
            )?;
        }
        memplan_kernels::Data::U8(q) => write_bytes(&args.output, q)?,
        _ => write_f32(&args.output, &output)?,
    }
    println!(
        "{} run: {:.1} ms (CPU) | output `{}` {:?} | checksum (sum) {:.6} | mean |x| {:.6}",
        if args.heap { "heap" } else { "arena" },
        seconds * 1e3,
        VALUES[OUTPUTS[0]].onnx,
        VALUES[OUTPUTS[0]].shape,
        output.iter().map(|&x| f64::from(x)).sum::<f64>(),
        output.iter().map(|&x| f64::from(x).abs()).sum::<f64>() / output.len().max(1) as f64,
    );
    if VALUES[OUTPUTS[0]].shape.iter().filter(|&&d| d > 1).count() == 1 {
        println!("top classes: {}", top(&output, 5));
    }
    let mut code = ExitCode::SUCCESS;
    if let Some(reference) = &reference {
        let ok = if int8_output {
            compare_quanta(&output, reference, args.quanta)
        } else {
            compare(&output, reference)
        };
        if !ok {
            code = ExitCode::FAILURE;
        }
    }
    if let Some(n) = args.bench {
        bench::bench(n.max(1), arena, &inputs)?;
    }
    if let Some(n) = args.repeat.filter(|&n| n > 0) {
        let started = clock::cpu_seconds();
        for _ in 0..n {
            run_arena(arena, &inputs)?;
        }
        let mean = (clock::cpu_seconds() - started) / n as f64;
        println!("repeat: {n} arena runs, mean {:.3} ms (CPU)", mean * 1e3);
    }
    Ok(code)
}

/// The `k` largest values as `index (value)`.
fn top(values: &[f32], k: usize) -> String {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[b].total_cmp(&values[a]).then(a.cmp(&b)));
    let items: Vec<String> = order
        .iter()
        .take(k)
        .map(|&i| format!("{i} ({:.4})", values[i]))
        .collect();
    items.join(", ")
}

/// Prints how `output` compares with `reference`; true when every element is within absolute
/// 1e-4 plus relative 1e-3.
fn compare(output: &[f32], reference: &[f32]) -> bool {
    if output.len() != reference.len() {
        println!(
            "reference: MISMATCH: {} values, the output has {}",
            reference.len(),
            output.len()
        );
        return false;
    }
    let mut worst = 0.0f32;
    let mut bad = 0;
    for (&x, &r) in output.iter().zip(reference) {
        let diff = (x - r).abs();
        worst = worst.max(diff);
        if diff.is_nan() || diff > 1e-4 + 1e-3 * r.abs() {
            bad += 1;
        }
    }
    println!(
        "reference: {} | max abs diff {worst:.3e} | top classes {}",
        if bad == 0 {
            "match (abs 1e-4 + rel 1e-3)".to_owned()
        } else {
            format!("MISMATCH in {bad} of {} values", output.len())
        },
        if VALUES[OUTPUTS[0]].shape.iter().filter(|&&d| d > 1).count() == 1 {
            top(reference, 5)
        } else {
            "-".to_owned()
        }
    );
    bad == 0
}

/// Prints how an int8 `output` compares with `reference` (both as the int8 values): how many
/// elements differ and by how many quanta at most; true when none differs by more than `quanta`.
fn compare_quanta(output: &[f32], reference: &[f32], quanta: u32) -> bool {
    if output.len() != reference.len() {
        println!(
            "reference: MISMATCH: {} values, the output has {}",
            reference.len(),
            output.len()
        );
        return false;
    }
    let diffs: Vec<f32> = output
        .iter()
        .zip(reference)
        .map(|(a, b)| (a - b).abs())
        .collect();
    let differ = diffs.iter().filter(|&&d| d > 0.0).count();
    let worst = diffs.iter().copied().fold(0.0f32, f32::max);
    // a count of quanta
    let bad = diffs.iter().filter(|&&d| d > quanta as f32).count();
    println!(
        "reference: {} | {differ} of {} 8-bit elements differ (max {worst} quanta)",
        if bad == 0 {
            if quanta == 0 {
                "match (bit for bit)".to_owned()
            } else {
                format!("match (within {quanta} quanta)")
            }
        } else {
            format!("MISMATCH in {bad} of {} values", output.len())
        },
        output.len()
    );
    bad == 0
}

/// An int8 reference file: one byte per element.
/// An int8 or uint8 reference file's values.
fn read_bytes(path: &Path, dtype: memplan_kernels::DType) -> Result<Vec<f32>, String> {
    let bytes =
        std::fs::read(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    Ok(if dtype == memplan_kernels::DType::U8 {
        bytes.iter().map(|&b| f32::from(b)).collect()
    } else {
        bytes.iter().map(|&b| f32::from(b.cast_signed())).collect()
    })
}

fn read_f32(path: &Path) -> Result<Vec<f32>, String> {
    let bytes =
        std::fs::read(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    if bytes.len() % 4 != 0 {
        return Err(format!(
            "`{}` has {} bytes, not a whole number of float32 values",
            path.display(),
            bytes.len()
        ));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// Writes `values` as raw little-endian float32: `path` is either the whole output or untouched.
fn write_f32(path: &Path, values: &[f32]) -> Result<(), String> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    write_bytes(path, &bytes)
}

/// Writes `bytes` to `path` whole or not at all, never replacing a device, FIFO or symlink
/// (`memplan_output::write_file`: a random temporary created exclusively, renamed over a regular
/// file, which keeps its mode).
fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), String> {
    memplan_output::write_file(path, bytes).map_err(|e| e.to_string())
}
