# SPDX-License-Identifier: Apache-2.0
"""PyTorch's side of `make bench`, configured fairly (PERF-NOTES.md): run by bench/run.sh with
LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp ATEN_CPU_CAPABILITY=avx512.
Prints one JSON object: {name: {"threads": n, "us": median microseconds}}."""
import json
import sys
import time

import torch
import torch.nn.functional as F


def median_time(fn, min_time=0.5, warmup=3):
    for _ in range(warmup):
        fn()
    times = []
    start = time.perf_counter()
    while time.perf_counter() - start < min_time or len(times) < 5:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2] * 1e6


def tiny_add_us(literal=False):
    a, b = torch.ones(1), torch.ones(1)
    n = 200000
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        if literal:
            for _ in range(n):
                a + 1.0
        else:
            for _ in range(n):
                a + b
        best = min(best, (time.perf_counter() - t0) / n * 1e6)
    return best


def main():
    torch.manual_seed(0)
    out = {}
    torch.set_num_threads(1)
    out["dispatch_add_1elem"] = {"threads": 1, "us": tiny_add_us()}
    out["dispatch_add_literal"] = {"threads": 1, "us": tiny_add_us(literal=True)}
    for t in (1, 2):
        torch.set_num_threads(t)
        a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
        out[f"matmul_1024/{t}"] = {"threads": t, "us": median_time(lambda: a @ b)}
    torch.set_num_threads(2)
    x, w = torch.randn(8, 64, 56, 56), torch.randn(64, 64, 3, 3) * 0.05
    with torch.no_grad():
        out["conv2d_3x3_64_b8_56"] = {"threads": 2, "us": median_time(lambda: F.conv2d(x, w, padding=1))}
        s = torch.randn(16384, 768)
        out["softmax_16384x768"] = {"threads": 2, "us": median_time(lambda: torch.softmax(s, -1))}
        g, bb = torch.ones(768), torch.zeros(768)
        out["layer_norm_16384x768"] = {"threads": 2, "us": median_time(lambda: F.layer_norm(s, (768,), g, bb))}
        big = torch.randn(16 << 20)
        out["fresh_output_16M"] = {"threads": 2, "us": median_time(lambda: torch.relu(big))}
        # Issue 4's fusion figure: the same chain eager, 1 and 2 threads.
        x, w, b, z = (torch.randn(16 << 20) for _ in range(4))
        for t in (1, 2):
            torch.set_num_threads(t)
            out[f"fused_gelu_bias_sigmoid_16M/{t}"] = {
                "threads": t, "us": median_time(lambda: F.gelu(x * w + b) * torch.sigmoid(z))}
        torch.set_num_threads(2)
    # The row-fusion figure: value and gradients of sum(softmax(layer_norm(x)) * t), eager.
    x = torch.randn(4096, 1024, requires_grad=True)
    w, b = torch.randn(1024, requires_grad=True), torch.randn(1024, requires_grad=True)
    t = torch.randn(4096, 1024)

    def row_grad():
        loss = (torch.softmax(F.layer_norm(x, (1024,), w, b), -1) * t).sum()
        return torch.autograd.grad(loss, (x, w, b))

    out["row_fused_layer_norm_softmax_grad_4096x1024"] = {"threads": 2, "us": median_time(row_grad)}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
