#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Test accuracy after the same training on both sides: LeNet-5 on Fashion-MNIST, Adam lr 0.003,
# batch 128, 3 epochs (`spore train` in Graph mode vs bench/torch_accuracy.py). Prints one JSON
# line (compare.py --accuracy). SEEDS="0 1 2" averages several seeds on each side (default: 0).
# Takes ~20-60 s per side and seed.
set -euo pipefail
build=${1:-build}
here=$(dirname "$0")
out=$(mktemp -d)
for seed in ${SEEDS:-0}; do
  "$build/bin/spore" train --model lenet --epochs 3 --lr 0.003 --batch-size 128 --seed "$seed" --json \
    | tail -n 1 >>"$out/spore.jsonl"
  "$here/torch_env.sh" /usr/bin/python3 "$here/torch_accuracy.py" --seed "$seed" >>"$out/torch.jsonl"
done
/usr/bin/python3 "$here/compare.py" --accuracy "$out/spore.jsonl" "$out/torch.jsonl"
