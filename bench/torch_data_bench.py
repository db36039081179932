# SPDX-License-Identifier: Apache-2.0
"""The PyTorch side of bench/data_bench.cc: decode Fashion-MNIST's IDX files, then epochs of
to-float -> normalize -> shuffle -> batch 128 through a DataLoader with 2 workers. The dataset
decodes once into one uint8 tensor and transforms each sample with tensor ops (no PIL), the
fast way to configure a map-style DataLoader. Run with /usr/bin/python3 and the environment
from /work/shared/PERF-NOTES.md (LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp
ATEN_CPU_CAPABILITY=avx512). Prints one JSON line per configuration."""
import gzip
import json
import sys
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class FashionMnist(Dataset):
    def __init__(self, images, labels):
        self.images, self.labels = images, labels

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        x = self.images[i].unsqueeze(0).float().div_(255.0).sub_(0.2860).div_(0.3530)
        return x, self.labels[i]


def read_idx(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), np.uint8, offset=offset)


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/datasets/fashion-mnist"
    epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    torch.set_num_threads(2)
    t0 = time.perf_counter()
    images = torch.from_numpy(read_idx(f"{d}/train-images-idx3-ubyte.gz", 16).reshape(-1, 28, 28).copy())
    labels = torch.from_numpy(read_idx(f"{d}/train-labels-idx1-ubyte.gz", 8).astype(np.int64))
    print(json.dumps({"bench": "torch_data_decode_idx", "seconds": round(time.perf_counter() - t0, 4),
                      "samples": len(labels)}))
    ds = FashionMnist(images, labels)
    g = torch.Generator().manual_seed(42)
    loader = DataLoader(ds, batch_size=128, shuffle=True, num_workers=2, persistent_workers=True, generator=g)
    best = float("inf")
    for _ in range(epochs):  # the first epoch includes starting the workers; take the best
        t = time.perf_counter()
        n = sum(x.shape[0] for x, _ in loader)
        best = min(best, time.perf_counter() - t)
    print(json.dumps({"bench": "torch_data_epoch", "workers": 2, "seconds": round(best, 4),
                      "samples_per_second": round(n / best)}))


if __name__ == "__main__":
    main()
