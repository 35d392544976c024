#!/usr/bin/env python3
"""memplan against ONNX Runtime on every runnable model: one table.

    python3 memplan-runner/bench/run_all.py [--samples 5] [--json OUT.json] [--models NAME ...]

For each model (the same list as `ort_times.py`), builds the runner for it (`cargo build --release
-p memplan-runner` with `MEMPLAN_MODEL`, in `target/runner-e2e` as the tests do, incrementally),
runs it on the reference input with `--expect <reference> --bench N`, and prints a Markdown
table: memplan's CPU time (median), ONNX Runtime's recorded figures (`ort_times.json`, default
and ORT_DISABLE_ALL), the ratio, the arena, the max abs diff against the reference; then the
geometric mean of the ratios. Needs only cargo (ONNX Runtime's figures are read from the file).
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ort_times  # noqa: E402  (the model list; importing it does not need onnxruntime to run)

WORKSPACE = ort_times.WORKSPACE


def reference_for(model):
    stem = model[: -len(".onnx")]
    return stem + ".output.bin"


def run_one(model, samples, target):
    env = dict(os.environ)
    env.update(
        {
            "MEMPLAN_MODEL": model,
            "CARGO_TARGET_DIR": target,
            "CARGO_PROFILE_RELEASE_INCREMENTAL": "true",
        }
    )
    build = subprocess.run(
        ["cargo", "build", "--release", "-p", "memplan-runner"],
        cwd=WORKSPACE,
        env=env,
        capture_output=True,
        text=True,
    )
    if build.returncode != 0:
        raise RuntimeError(f"build failed for {model}:\n{build.stderr}")
    binary = os.path.join(target, "release", "memplan-runner")
    stem = model[: -len(".onnx")]
    out = subprocess.run(
        [
            binary,
            stem + ".input.bin",
            os.path.join(target, "run_all.out.bin"),
            "--expect",
            reference_for(model),
            "--bench",
            str(samples),
        ],
        capture_output=True,
        text=True,
    )
    text = out.stdout
    if out.returncode != 0:
        raise RuntimeError(f"run failed for {model}:\n{text}\n{out.stderr}")
    field = lambda pattern: re.search(pattern, text, re.M)
    arena = int(field(r"^arena (\d+) bytes")[1]) if field(r"^arena (\d+) bytes") else None
    diff = float(field(r"max abs diff ([0-9.e+-]+)")[1])
    ms = float(field(r"arena median ([0-9.]+) ms")[1])
    heap = float(field(r"heap median ([0-9.]+) ms")[1])
    ort = field(r"ORT default ([0-9.]+) ms, ratio ([0-9.]+) \| ORT_DISABLE_ALL ([0-9.]+) ms, ratio ([0-9.]+)")
    record = {
        "model": os.path.basename(stem),
        "memplan_ms": ms,
        "heap_ms": heap,
        "arena_bytes": arena,
        "max_abs_diff": diff,
        "match": "reference: match" in text,
        "stdout": text,
    }
    if ort:
        record.update(
            {
                "ort_default_ms": float(ort[1]),
                "ratio": ms / float(ort[1]),
                "ort_disable_all_ms": float(ort[3]),
                "ratio_disable_all": ms / float(ort[3]),
            }
        )
    return record


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--json", default=None)
    parser.add_argument("--models", nargs="*", default=None, help="names (file stems) to keep")
    parser.add_argument("--verbose", action="store_true", help="print each run's output")
    args = parser.parse_args()
    target = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(WORKSPACE, "target")), "runner-e2e")
    models = ort_times.default_models()
    if args.models:
        models = [m for m in models if os.path.basename(m)[: -len(".onnx")] in args.models]
    records = []
    for model in models:
        record = run_one(model, args.samples, target)
        if args.verbose:
            print(record["stdout"], file=sys.stderr)
        print(
            f"{record['model']}: {record['memplan_ms']:.3f} ms, ratio {record.get('ratio', float('nan')):.2f}",
            file=sys.stderr,
        )
        records.append(record)
    print("| model | memplan ms | ORT ms (default) | ORT ms (DISABLE_ALL) | ratio (vs default) | ratio (vs DISABLE_ALL) | arena bytes | max abs diff |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in records:
        print(
            f"| {r['model']} | {r['memplan_ms']:.3f} | {r.get('ort_default_ms', float('nan')):.3f} | "
            f"{r.get('ort_disable_all_ms', float('nan')):.3f} | {r.get('ratio', float('nan')):.2f} | "
            f"{r.get('ratio_disable_all', float('nan')):.2f} | {r['arena_bytes']:,} | {r['max_abs_diff']:.1e}"
            + ("" if r["match"] else " MISMATCH") + " |"
        )
    ratios = [r["ratio"] for r in records if "ratio" in r]
    if ratios:
        geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        print(f"\ngeometric mean of memplan / ORT (default): {geo:.2f} over {len(ratios)} models; worst {max(ratios):.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{k: v for k, v in r.items() if k != "stdout"} for r in records], f, indent=1)


if __name__ == "__main__":
    main()
