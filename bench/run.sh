#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make bench`: Spore and PyTorch side by side in the same run; one JSON line per figure.
# PyTorch is configured fairly (PERF-NOTES.md): OpenMP OpenBLAS, AVX-512 kernels, 2 threads max.
# Then the accuracy comparison (bench/accuracy.sh, a longer run: 3 epochs of LeNet-5 each side).
set -euo pipefail
build=${1:-build}
here=$(dirname "$0")
out=$(mktemp -d)
torch_py() {
  "$here/torch_env.sh" /usr/bin/python3 "$@"
}
"$build/bin/spore_bench" --benchmark_format=json --benchmark_min_time=0.5 >"$out/spore.json"
torch_py "$here/torch_bench.py" >"$out/torch.json"
torch_py "$here/torch_autodiff_bench.py" >"$out/torch_autodiff.json"
torch_py "$here/torch_train_bench.py" >"$out/torch_train.json"
# The data pipeline alone (JSON lines from both sides).
"$build/bin/spore_data_bench" /usr/share/datasets/fashion-mnist 3 >"$out/spore_data.jsonl" 2>/dev/null
torch_py "$here/torch_data_bench.py" /usr/share/datasets/fashion-mnist 3 >"$out/torch_data.jsonl"
/usr/bin/python3 "$here/compare.py" "$out/spore.json" "$out/torch.json" "$out/torch_autodiff.json" \
  "$out/torch_train.json" --data "$out/spore_data.jsonl" "$out/torch_data.jsonl"
"$here/accuracy.sh" "$build"
# The model-level figures (issue 4): ResNet-18 / MobileNetV2 inference vs ONNX Runtime and
# PyTorch, ResNet-18 training (time, peak memory), the transformer encoder, compile time.
"$here/model_bench.sh" "$build"
