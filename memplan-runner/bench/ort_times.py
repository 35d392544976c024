#!/usr/bin/env python3
"""ONNX Runtime's time per runnable model, recorded for `memplan-runner --bench N`.

For the developer, never needed by a user: `pip install onnxruntime onnx`, then

    python3 memplan-runner/bench/ort_times.py            # writes memplan-runner/bench/ort_times.json

Each model runs in ONNX Runtime's CPU execution provider with one intra-op and one inter-op
thread, sequential execution, twice: with the default graph optimisations (ORT_ENABLE_ALL, what
`InferenceSession` does unless told otherwise) and with ORT_DISABLE_ALL (the reference outputs of
../shared/bench were made that way). The figure is CPU time (`time.process_time`, all threads of
the process), not wall time: these machines are shared. One sample runs the model `reps` times
(enough for about 50 ms of CPU, at least once) and counts sample / reps; the figure is the median
of 5 samples, after two warm-up runs. The runner's `--bench N` measures memplan the same way and
prints the ratio against this file (matched by the model's file name and byte size).

Options: `--models A.onnx B.onnx ...` (default: the runnable models, the float KWS, the runner's
default model, the two hand-built fixtures and the thirteen networks of `make_unseen.py` when it has
made them in `target/unseen`, or `MEMPLAN_UNSEEN_DIR`), `--out FILE`, `--samples 5`.
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time

try:
    import numpy as np
    import onnxruntime as ort
except ImportError:  # run_all.py imports the model list only
    np = ort = None

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.dirname(HERE)
WORKSPACE = os.path.dirname(RUNNER)
SHARED = os.environ.get("MEMPLAN_BENCH_DIR", os.path.join(WORKSPACE, "..", "shared", "bench"))
# Where `make_unseen.py` writes its networks (its default `--out`).
UNSEEN = os.environ.get("MEMPLAN_UNSEEN_DIR", os.path.join(WORKSPACE, "target", "unseen"))
UNSEEN_NETWORKS = [
    "gpt2_tiny",
    "vit_tiny",
    "resnet8_32",
    "dwcnn_96",
    "mlp_784",
    "convnext_like_28",
    "unet_64",
    "bert_encoder",
    "effnet_like_96",
    "tcn_audio_200",
    "vgg_64",
    "lstm_kws_49",
    "gru_bidir_100",
]


def default_models():
    runnable = os.path.join(SHARED, "runnable")
    models = [
        os.path.join(runnable, f"{name}.onnx")
        for name in ["squeezenet1_1", "mobilenet_v3_small", "mobilenet_v2", "bert_mini"]
    ]
    models.append(os.path.join(SHARED, "tinyml", "kws_ref_model_float32.onnx"))
    models.append(os.path.join(RUNNER, "models", "default.onnx"))
    fixtures = os.path.join(RUNNER, "tests", "fixtures")
    models += [os.path.join(fixtures, f"{n}.onnx") for n in ["unseen_cnn", "unseen_transformer"]]
    # The networks of `make_unseen.py`, when made (families the kernels were not tuned on).
    models += [os.path.join(UNSEEN, f"{n}.onnx") for n in UNSEEN_NETWORKS]
    return [m for m in models if os.path.isfile(m)]


DTYPES = {
    "tensor(float)": "float32",
    "tensor(int64)": "int64",
    "tensor(int32)": "int32",
    "tensor(bool)": "bool",
}


def feeds_for(session, model_path):
    """The reference input beside the model (`<stem>.input.bin`), read in graph order."""
    stem = model_path[: -len(".onnx")]
    raw = open(stem + ".input.bin", "rb").read()
    feeds, at = {}, 0
    for inp in session.get_inputs():
        dtype = np.dtype(DTYPES[inp.type])
        n = int(np.prod(inp.shape)) if inp.shape else 1
        size = n * dtype.itemsize
        feeds[inp.name] = np.frombuffer(raw[at : at + size], dtype=dtype).reshape(inp.shape)
        at += size
    return feeds


def time_session(model_path, level, samples):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = level
    session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
    feeds = feeds_for(session, model_path)
    for _ in range(2):
        session.run(None, feeds)
    started = time.process_time()
    session.run(None, feeds)
    once = max(time.process_time() - started, 1e-6)
    reps = max(1, int(0.05 / once))
    figures = []
    for _ in range(samples):
        started = time.process_time()
        for _ in range(reps):
            session.run(None, feeds)
        figures.append((time.process_time() - started) / reps)
    return statistics.median(figures) * 1e3, reps


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="*", default=None)
    parser.add_argument("--out", default=os.path.join(HERE, "ort_times.json"))
    parser.add_argument("--samples", type=int, default=5)
    args = parser.parse_args()
    if ort is None:
        sys.exit("needs numpy and onnxruntime: pip install onnxruntime onnx")
    models = args.models or default_models()
    records = []
    for path in models:
        path = os.path.abspath(path)
        name = os.path.basename(path)[: -len(".onnx")]
        default_ms, reps = time_session(path, ort.GraphOptimizationLevel.ORT_ENABLE_ALL, args.samples)
        disabled_ms, _ = time_session(path, ort.GraphOptimizationLevel.ORT_DISABLE_ALL, args.samples)
        record = {
            "model": name,
            "file": os.path.basename(path),
            "bytes": os.path.getsize(path),
            "ort_default_ms": round(default_ms, 4),
            "ort_disable_all_ms": round(disabled_ms, 4),
            "runs_per_sample": reps,
        }
        print(json.dumps(record), file=sys.stderr)
        records.append(record)
    result = {
        "what": "ONNX Runtime CPU time per inference (ms): CPUExecutionProvider, 1 intra-op and 1 inter-op thread, sequential; median of "
        f"{args.samples} samples of time.process_time (each sample runs the model runs_per_sample times, after 2 warm-up runs)",
        "script": "memplan-runner/bench/ort_times.py",
        "onnxruntime": ort.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu": cpu_name(),
        "recorded": time.strftime("%Y-%m-%d"),
        "models": records,
    }
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    print(f"wrote {args.out}", file=sys.stderr)


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    main()
