#!/usr/bin/env bash
# Runs run.sh for every model given (default: the MLPerf Tiny KWS pair and memplan's
# *_like fixtures) with both kernel sets, one line each.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SHARED=${SHARED:-$HERE/../../../shared/bench/tinyml}
FIXTURES=${FIXTURES:-$HERE/../../memplan-runner/tests/fixtures/tflite}
if [ $# -eq 0 ]; then
  set -- "$SHARED/kws_ref_model.tflite" "$SHARED/kws_ref_model_float32.tflite" \
    "$FIXTURES"/{vww_like,mobilenet_like,resnet8_like,autoencoder_like}.tflite \
    "$FIXTURES"/{mobilenet_like_f32,resnet8_like_f32,autoencoder_like_f32}.tflite
fi
for model in "$@"; do
  for kernels in cmsis reference; do
    "$HERE/run.sh" "$model" "$kernels" 2>&1 | tail -1
  done
done
