#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make demo`: the main job. Trains LeNet-5 on Fashion-MNIST (Debian's dataset-fashion-mnist) in
# Graph mode for 3 epochs with a progress bar, evaluates it on the test set, saves a checkpoint,
# then reloads the checkpoint in a fresh process and evaluates it again: both accuracies must
# agree and reach the target.
set -euo pipefail
build=${1:-build}
spore="$build/bin/spore"
dir="$build/demo"
target=0.89
rm -rf "$dir"
echo "== spore train: LeNet-5 on Fashion-MNIST, Graph mode, 3 epochs"
out=$("$spore" train --model lenet --dataset fashion-mnist --epochs 3 --optimizer adam --lr 0.003 --batch-size 64 --schedule cosine \
  --mode graph --seed 0 --checkpoint-dir "$dir/checkpoints" --log-dir "$dir/logs" --json)
echo "$out" | sed '$d'
json=$(echo "$out" | tail -n 1)
field() { /usr/bin/python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
acc=$(field "$json" test_accuracy)
ckpt=$(field "$json" checkpoint)
echo "== spore eval: the saved checkpoint, reloaded in a fresh process"
json2=$("$spore" eval --checkpoint "$ckpt" --batch-size 64 --mode graph --json | tail -n 1)
acc2=$(field "$json2" test_accuracy)
echo "test accuracy after training: $acc; reloaded from $ckpt: $acc2 (target >= $target)"
/usr/bin/python3 - "$acc" "$acc2" "$target" <<'PY'
import sys
acc, acc2, target = map(float, sys.argv[1:])
if acc != acc2:
    sys.exit(f"demo: the reloaded checkpoint scores {acc2}, not the {acc} measured after training")
if acc < target:
    sys.exit(f"demo: test accuracy {acc} is below the target {target}")
print("demo: OK")
PY
