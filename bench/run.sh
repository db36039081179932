#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make bench`: Spore and PyTorch side by side in the same run; one JSON line per figure.
# PyTorch is configured fairly (PERF-NOTES.md): OpenMP OpenBLAS, AVX-512 kernels, 2 threads max.
set -euo pipefail
build=${1:-build}
out=$(mktemp -d)
"$build/bin/spore_bench" --benchmark_format=json --benchmark_min_time=0.5 >"$out/spore.json"
LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp ATEN_CPU_CAPABILITY=avx512 \
  /usr/bin/python3 "$(dirname "$0")/torch_bench.py" >"$out/torch.json"
LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp ATEN_CPU_CAPABILITY=avx512 \
  /usr/bin/python3 "$(dirname "$0")/torch_autodiff_bench.py" >"$out/torch_autodiff.json"
/usr/bin/python3 "$(dirname "$0")/compare.py" "$out/spore.json" "$out/torch.json" "$out/torch_autodiff.json"
