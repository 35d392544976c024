//! `--bench N`: the arena run against the heap run and against ONNX Runtime, in CPU time.
//!
//! One *sample* runs the network `reps` times (enough for about 50 ms of CPU, at least once) and
//! counts sample / reps; the figures are medians of N samples, arena and heap samples interleaved.
//! The clock is the process's CPU time (`CLOCK_PROCESS_CPUTIME_ID`), as
//! `bench/ort_times.py` measures ONNX Runtime (`time.process_time`, one intra-op thread): these
//! machines are shared, wall time counts the neighbours. The ratio is memplan's arena median over
//! the figure that script recorded for the same model file (`bench/ort_times.json`, matched by
//! file name and byte size; `MEMPLAN_ORT_TIMES` names another file).
//!
//! Then a profile: the heap interpreter (the same kernels on the same nodes) timed node by node,
//! the slowest nodes and the time per operator type.

use std::collections::BTreeMap;
use std::path::PathBuf;

use memplan_kernels::OwnedData;
use memplan_kernels::program::Operand;

use crate::clock::cpu_seconds;
use crate::network::net;
use crate::network::net::network::{NODES, VALUES};
use crate::{heap, run_arena};

/// CPU seconds per call of `f`, over `reps` calls.
fn per_run(reps: usize, mut f: impl FnMut() -> Result<(), String>) -> Result<f64, String> {
    let started = cpu_seconds();
    for _ in 0..reps {
        f()?;
    }
    Ok((cpu_seconds() - started) / reps as f64)
}

fn median(times: &mut [f64]) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// ONNX Runtime's recorded figures for this model: (default, ORT_DISABLE_ALL) in ms, and the file.
fn ort_figures() -> Result<(f64, f64, PathBuf), String> {
    let path = std::env::var_os("MEMPLAN_ORT_TIMES").map_or_else(
        || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/bench/ort_times.json")),
        PathBuf::from,
    );
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("`{}` is not JSON: {e}", path.display()))?;
    let file = net::network::SOURCE;
    let bytes: u64 = env!("MEMPLAN_RUNNER_MODEL_BYTES").parse().unwrap_or(0);
    let record = json["models"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["file"] == file && m["bytes"].as_u64() == Some(bytes))
        .ok_or_else(|| {
            format!(
                "no figure for `{file}` ({bytes} bytes) in `{}`; record one with `python3 memplan-runner/bench/ort_times.py --models {}`",
                path.display(),
                env!("MEMPLAN_RUNNER_MODEL")
            )
        })?;
    let ms = |key: &str| record[key].as_f64().ok_or(format!("`{key}` is missing"));
    Ok((ms("ort_default_ms")?, ms("ort_disable_all_ms")?, path))
}

/// Times `n` samples of arena runs and `n` of heap runs, interleaved, prints their medians, the
/// ratio against ONNX Runtime and the slowest ops.
pub(crate) fn bench(
    n: usize,
    arena: &mut net::Arena,
    inputs: &[(usize, OwnedData)],
) -> Result<(), String> {
    let once = per_run(1, || run_arena(arena, inputs).map(drop))?;
    let reps = ((0.05 / once.max(1e-7)) as usize).max(1);
    heap::run(inputs, None).map_err(|e| e.to_string())?;
    let mut arena_times = Vec::with_capacity(n);
    let mut heap_times = Vec::with_capacity(n);
    for _ in 0..n {
        let mut a = Vec::new();
        arena_times.push(per_run(reps, || {
            a = run_arena(arena, inputs)?;
            Ok(())
        })?);
        let mut h = Vec::new();
        heap_times.push(per_run(reps, || {
            h = heap::run(inputs, None).map_err(|e| e.to_string())?;
            Ok(())
        })?);
        if !a.iter().zip(&h).all(|(a, h)| a.same_bits(h)) {
            return Err("the arena and heap runs differ".to_owned());
        }
    }
    let (a, h) = (median(&mut arena_times), median(&mut heap_times));
    println!(
        "bench: {n} samples of {reps} run(s) each, CPU time | arena median {:.3} ms | heap median {:.3} ms | arena/heap {:.3}",
        a * 1e3,
        h * 1e3,
        a / h
    );
    match ort_figures() {
        Ok((default, disabled, path)) => println!(
            "vs ONNX Runtime (1 thread, CPU time, {}): memplan {:.3} ms | ORT default {default:.3} ms, ratio {:.2} | ORT_DISABLE_ALL {disabled:.3} ms, ratio {:.2}",
            path.display(),
            a * 1e3,
            a * 1e3 / default,
            a * 1e3 / disabled
        ),
        Err(why) => println!("vs ONNX Runtime: {why}"),
    }
    profile(inputs, reps)
}

/// The heap interpreter timed node by node: the slowest nodes and the time per operator type.
fn profile(inputs: &[(usize, OwnedData)], reps: usize) -> Result<(), String> {
    let mut times = vec![0.0f64; NODES.len()];
    for _ in 0..reps.max(3) {
        heap::run(inputs, Some(&mut times)).map_err(|e| e.to_string())?;
    }
    let total: f64 = times.iter().sum();
    let mut order: Vec<usize> = (0..NODES.len()).collect();
    order.sort_by(|&x, &y| times[y].total_cmp(&times[x]));
    let runs = reps.max(3) as f64;
    println!(
        "slowest ops (heap interpreter, same kernels; CPU time per run, share of {:.3} ms):",
        total / runs * 1e3
    );
    let shown = std::env::var("MEMPLAN_PROFILE_TOP")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(8);
    for &k in order.iter().take(shown) {
        let node = &NODES[k];
        let input = match node.inputs.first() {
            Some(&Operand::Value(v)) => VALUES[v].shape,
            _ => &[],
        };
        let out = node.outputs.first().map_or(&[][..], |&v| VALUES[v].shape);
        println!(
            "  {:9.3} ms {:5.1}%  node {k} `{}` {} {input:?} -> {out:?}",
            times[k] / runs * 1e3,
            100.0 * times[k] / total.max(1e-12),
            node.name,
            node.op_type,
        );
    }
    let mut by_op: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
    for (k, node) in NODES.iter().enumerate() {
        let e = by_op.entry(node.op_type).or_default();
        e.0 += times[k];
        e.1 += 1;
    }
    let mut by_op: Vec<_> = by_op.into_iter().collect();
    by_op.sort_by(|x, y| y.1.0.total_cmp(&x.1.0));
    let line: Vec<String> = by_op
        .iter()
        .map(|(op, (t, count))| {
            format!(
                "{op} {:.3} ms ({:.1}%, {count})",
                t / runs * 1e3,
                100.0 * t / total.max(1e-12)
            )
        })
        .collect();
    println!("by operator: {}", line.join(" | "));
    Ok(())
}
