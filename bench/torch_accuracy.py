# SPDX-License-Identifier: Apache-2.0
"""PyTorch's side of bench/accuracy.sh: what `spore train --model lenet --epochs 3 --lr 0.003
--batch-size 128` does, in PyTorch: LeNet-5 (PyTorch's default initialization, which Spore's
layers follow), Adam lr 0.003, cross-entropy, Fashion-MNIST normalized with mean 0.2860 and std
0.3530, a full shuffle each epoch, batches of 128 with the last partial one dropped; then the test
set's accuracy. Prints one JSON line with test_accuracy (a fraction, as `spore train --json`)."""
import argparse
import json
import time

import numpy as np
import torch
import torch.nn.functional as F

from torch_train_bench import MEAN, STD, lenet5, loader, read_idx


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dir", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=0.003)
    a = p.parse_args()
    torch.set_num_threads(2)

    def split(prefix):
        images = torch.from_numpy(read_idx(f"{a.dir}/{prefix}-images-idx3-ubyte.gz", 16).reshape(-1, 28, 28).copy())
        labels = torch.from_numpy(read_idx(f"{a.dir}/{prefix}-labels-idx1-ubyte.gz", 8).astype(np.int64))
        return images, labels

    train_images, train_labels = split("train")
    test_images, test_labels = split("t10k")
    torch.manual_seed(a.seed)
    model = lenet5()
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    data = loader(train_images, train_labels, "batched", 0, seed=a.seed)
    t0 = time.perf_counter()
    loss_sum, n = 0.0, 0
    for _ in range(a.epochs):
        model.train()
        loss_sum, n = 0.0, 0
        for x, y in data:
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            loss_sum += loss.item() * x.shape[0]
            n += x.shape[0]
    seconds = time.perf_counter() - t0
    model.eval()
    correct, test_loss = 0, 0.0
    with torch.no_grad():
        for i in range(0, len(test_labels), 128):
            x = test_images[i:i + 128].unsqueeze(1).float().div_(255.0).sub_(MEAN).div_(STD)
            y = test_labels[i:i + 128]
            out = model(x)
            test_loss += F.cross_entropy(out, y, reduction="sum").item()
            correct += (out.argmax(1) == y).sum().item()
    print(json.dumps({"model": "lenet", "framework": "torch", "seed": a.seed, "epochs": a.epochs,
                      "train_loss": loss_sum / n, "test_accuracy": correct / len(test_labels),
                      "test_loss": test_loss / len(test_labels), "seconds": seconds}))


if __name__ == "__main__":
    main()
