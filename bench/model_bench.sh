#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The model-level figures of issue 4, each side by side in the same run, one JSON line per figure
# (bench/compare_models.py): ResNet-18 / MobileNetV2 inference against ONNX Runtime and PyTorch,
# the ResNet-18 training step (time and peak memory) and the transformer encoder fwd+bwd against
# PyTorch, and compile time (cold and warm kernel cache). Usage: bench/model_bench.sh [BUILD] [--quick].
# Spore runs at the default optimization level unless SPORE_OPT_LEVEL is set; the compile-time
# figures at level 2 (fusion on: the only level that generates kernels, so the only one where the
# kernel cache matters). The weights of the inference models come from torchvision, exported at
# bench time (bench/export_models.py) to .npy for Spore and .onnx for ONNX Runtime.
set -euo pipefail
build=${1:-build}
quick=${2:-}
here=$(dirname "$0")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
torch_py() {
  "$here/torch_env.sh" /usr/bin/python3 "$@"
}
spore() {
  "$build/bin/spore_model_bench" $quick "$@" 2>>"$out/spore.log" || { cat "$out/spore.log" >&2; return 1; }
}
if ! torch_py "$here/export_models.py" "$out/models" resnet18 mobilenet_v2 >"$out/export.log" 2>&1; then
  cat "$out/export.log" >&2
  echo '{"bench": "model figures", "error": "bench/export_models.py failed (log above)"}'
  exit 1
fi
r="$out/results.jsonl"
for m in resnet18 mobilenet_v2; do
  spore infer "$out/models" "$m" >>"$r"
  torch_py "$here/torch_model_bench.py" $quick "$m" >>"$r"
  "$here/ort_bench.sh" "$out/models" "$m" >>"$r"
done
spore train >>"$r"
torch_py "$here/torch_model_bench.py" $quick train >>"$r"
spore transformer >>"$r"
torch_py "$here/torch_model_bench.py" $quick transformer >>"$r"
for what in resnet18 transformer; do
  cache=$(mktemp -d -p "$out")
  for state in cold warm; do
    SPORE_OPT_LEVEL=${SPORE_OPT_LEVEL:-2} SPORE_KERNEL_CACHE="$cache" spore compile "$what" "$state" >>"$r"
  done
done
# SPORE_MODEL_BENCH_RAW=file keeps every side's raw lines (for bench/RESULTS.md).
if [ -n "${SPORE_MODEL_BENCH_RAW:-}" ]; then cp "$r" "$SPORE_MODEL_BENCH_RAW"; fi
if [ -s "$out/spore.log" ]; then
  echo "spore_model_bench stderr:" >&2
  cat "$out/spore.log" >&2
fi
/usr/bin/python3 "$here/compare_models.py" "$r"
