#!/usr/bin/env bash
# Per network: the runner's build time and peak memory for it (`cargo build --release -p
# memplan-runner` after a change of MEMPLAN_MODEL, incremental, in target/runner-e2e as the tests
# use), the binary's size, the arena against its bounds with in-place ops on and off, and
# whether the arena and heap runs agree bit for bit and match ONNX Runtime.
#
#   memplan-runner/tools/measure_builds.sh [model.onnx ...]   (default: the shipped CNN and the
#                                                              runnable and tinyml float models)
set -euo pipefail
cd "$(dirname "$0")/../.."
target="${CARGO_TARGET_DIR:-$PWD/target}/runner-e2e"
models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  models=("$PWD/memplan-runner/models/default.onnx")
  for m in squeezenet1_1 mobilenet_v3_small mobilenet_v2 bert_mini; do
    [ -f "../shared/bench/runnable/$m.onnx" ] && models+=("$(realpath ../shared/bench/runnable/$m.onnx)")
  done
  [ -f ../shared/bench/tinyml/kws_ref_model_float32.onnx ] &&
    models+=("$(realpath ../shared/bench/tinyml/kws_ref_model_float32.onnx)")
fi
printf '| model | in place | build s | build peak MiB | binary bytes | arena | bound without sharing | lower bound | vs ORT | arena == heap |\n'
printf '|---|---|---:|---:|---:|---:|---:|---:|---|---|\n'
for model in "${models[@]}"; do
  stem="${model%.onnx}"
  for inplace in 1 0; do
    log=$(mktemp)
    MEMPLAN_MODEL="$model" MEMPLAN_INPLACE=$inplace CARGO_TARGET_DIR="$target" \
      CARGO_PROFILE_RELEASE_INCREMENTAL=true \
      /usr/bin/time -f '%e %M' -o "$log.time" cargo build --quiet --release -p memplan-runner 2>"$log"
    read -r seconds kib <"$log.time"
    bin="$target/release/memplan-runner"
    out=$(mktemp) heap=$(mktemp)
    summary=$("$bin" "$stem.input.bin" "$out" --expect "$stem.output.bin" || true)
    "$bin" "$stem.input.bin" "$heap" --heap >/dev/null
    same=$(cmp -s "$out" "$heap" && echo yes || echo NO)
    arena=$(sed -n 's/^arena \([0-9]*\) bytes.*/\1/p' <<<"$summary")
    bound=$(sed -n 's/.*| bound without sharing \([0-9]*\) bytes.*/\1/p' <<<"$summary")
    lower=$(sed -n 's/.*| lower bound \([0-9]*\) bytes.*/\1/p' <<<"$summary")
    diff=$(sed -n 's/^reference: \([^|]*\)| max abs diff \([^ ]*\).*/\1\2/p' <<<"$summary")
    printf '| %s | %s | %s | %d | %d | %s | %s | %s | %s | %s |\n' "$(basename "$stem")" \
      "$([ $inplace = 1 ] && echo on || echo off)" "$seconds" $((kib / 1024)) \
      "$(stat -c %s "$bin")" "$arena" "$bound" "$lower" "$diff" "$same"
    rm -f "$log" "$log.time" "$out" "$heap"
  done
done
