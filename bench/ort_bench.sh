#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ONNX Runtime's side of the model inference figures: bench/ort_bench.sh MODELS_DIR NAME... runs
# bench/ort_bench.js with onnxruntime-node from $SPORE_ORT_DIR (default /tmp/ort), installed outside
# the repository as PERF-NOTES.md says:
#   mkdir -p /tmp/ort && cd /tmp/ort && npm install --ignore-scripts onnxruntime-node@1.30.0
# Without node or the package it prints one "skipped" JSON line and succeeds.
set -euo pipefail
ort_dir=${SPORE_ORT_DIR:-/tmp/ort}
if ! command -v node >/dev/null || [ ! -d "$ort_dir/node_modules/onnxruntime-node" ]; then
  echo '{"bench": "ort_skipped", "reason": "skipped: node/onnxruntime-node not installed (see PERF-NOTES)"}'
  exit 0
fi
exec node "$(dirname "$0")/ort_bench.js" "$ort_dir" "$@"
