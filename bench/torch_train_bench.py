# SPDX-License-Identifier: Apache-2.0
"""PyTorch's side of bench/train_bench.cc, same shapes and optimizer: one training step (batch
128, cross-entropy, SGD lr 0.01 momentum 0.9) of the MLP 784-512-256-10 and of LeNet-5, and one
full epoch of Fashion-MNIST through a DataLoader (decode once, shuffle, to-float, normalize,
batch 128, drop_last) with the same model and optimizer, loss and accuracy tracked per step as
Model::fit does. Run with /usr/bin/python3 and the environment of PERF-NOTES.md
(LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp ATEN_CPU_CAPABILITY=avx512), as
bench/run.sh does; 2 threads. The DataLoader is configured as fast as we found it on this machine:
a batch sampler feeding whole index batches to a dataset that slices one uint8 tensor (no per-
sample Python), in the main process (worker processes only add IPC on 2 cores; `--all-loaders`
also measures 2 workers and the usual per-sample dataset, and keeps the fastest). Prints one JSON object: {name: {"threads": 2, "us":
median microseconds, ...}} (the steps also at 1 thread, keys ending in /1); argv[1] (optional) is the Fashion-MNIST directory, "--steps-only"
skips the epochs."""
import json
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler

# Shared with the sibling scripts (bench/ is on sys.path when this file runs): the timing loop,
# the IDX reader and the usual one-sample-per-item dataset.
from torch_bench import median_time as _median_time
from torch_data_bench import FashionMnist, read_idx

MEAN, STD = 0.2860, 0.3530


def median_time(fn, min_time=1.0, warmup=3):
    return _median_time(fn, min_time, warmup)


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                         nn.Linear(256, 10))


def lenet5():
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                         nn.Linear(84, 10))


def make(lenet):
    torch.manual_seed(0)
    model = lenet5() if lenet else mlp()
    return model, torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)


def step_fn(model, opt, x, y):
    def step():
        opt.zero_grad(set_to_none=True)
        out = model(x)
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        return loss, out
    return step


class FashionMnistBatches(Dataset):
    """Indexed by a list of sample indices (a whole batch): one gather, one normalize."""

    def __init__(self, images, labels):
        self.images, self.labels = images, labels

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        idx = torch.as_tensor(idx)
        x = self.images[idx].unsqueeze(1).float().div_(255.0).sub_(MEAN).div_(STD)
        return x, self.labels[idx]


def loader(images, labels, kind, workers, seed=42):
    g = torch.Generator().manual_seed(seed)
    if kind == "per_sample":
        return DataLoader(FashionMnist(images, labels), batch_size=128, shuffle=True, drop_last=True,
                          num_workers=workers, persistent_workers=workers > 0, generator=g)
    ds = FashionMnistBatches(images, labels)
    sampler = BatchSampler(RandomSampler(ds, generator=g), batch_size=128, drop_last=True)
    return DataLoader(ds, sampler=sampler, batch_size=None, num_workers=workers, persistent_workers=workers > 0)


# DataLoader configurations tried (kind, workers); the fastest on this machine (2 cores) was the
# first: batched indexing in the main process. `--all-loaders` measures every one and keeps the best.
LOADERS = [("batched", 0), ("batched", 2), ("per_sample", 2)]


def epoch(model, opt, data):
    """One epoch as Model::fit runs it: step, then the loss as a number and the accuracy counts."""
    model.train()
    n, loss_sum, correct = 0, 0.0, 0
    for x, y in data:
        loss, out = step_fn(model, opt, x, y)()
        loss_sum += loss.item() * x.shape[0]
        correct += (out.argmax(1) == y).sum().item()
        n += x.shape[0]
    return n


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    d = args[0] if args else "/usr/share/datasets/fashion-mnist"
    torch.set_num_threads(2)
    out = {}
    for threads in (2, 1):
        torch.set_num_threads(threads)
        for lenet in (False, True):
            name = "lenet5" if lenet else "mlp"
            model, opt = make(lenet)
            torch.manual_seed(1)
            x, y = torch.randn(128, 1, 28, 28), torch.randint(0, 10, (128,))
            key = f"train_step_{name}" + ("" if threads == 2 else f"/{threads}")
            out[key] = {"threads": threads, "us": median_time(step_fn(model, opt, x, y))}
    torch.set_num_threads(2)
    if "--steps-only" in sys.argv:
        print(json.dumps(out))
        return
    images = torch.from_numpy(read_idx(f"{d}/train-images-idx3-ubyte.gz", 16).reshape(-1, 28, 28).copy())
    labels = torch.from_numpy(read_idx(f"{d}/train-labels-idx1-ubyte.gz", 8).astype(np.int64))
    for lenet in (False, True):
        name = "lenet5" if lenet else "mlp"
        best = None
        for kind, workers in (LOADERS if "--all-loaders" in sys.argv else LOADERS[:1]):
            data = loader(images, labels, kind, workers)
            times = []
            for _ in range(3):  # each epoch with a fresh model, as train_bench.cc's repetitions; median of 3
                model, opt = make(lenet)
                step_fn(model, opt, *next(iter(data)))()  # warm-up (and start the workers)
                t0 = time.perf_counter()
                n = epoch(model, opt, data)
                times.append(time.perf_counter() - t0)
            times.sort()
            us = times[1] * 1e6
            print(json.dumps({"train_epoch": name, "loader": kind, "workers": workers, "seconds": times}),
                  file=sys.stderr)
            if best is None or us < best["us"]:
                best = {"threads": 2, "us": us, "loader": kind, "workers": workers, "samples_per_s": n / times[1]}
        out[f"train_epoch_{name}"] = best
    print(json.dumps(out))


if __name__ == "__main__":
    main()
