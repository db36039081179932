# SPDX-License-Identifier: Apache-2.0
"""PyTorch's side of the autodiff figures (issue 3), the same computations as
bench/autodiff_bench.cc, run by bench/run.sh with the fair configuration of PERF-NOTES.md.
Prints one JSON object: {name: {"threads": n, "us": median microseconds}}."""
import json
import sys

import torch
import torch.nn.functional as F

from torch_bench import median_time


def mlp(sizes):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i + 2 < len(sizes):
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def mlp_functional(params, x):
    """The same MLP from a flat (w0, b0, w1, b1, ...) tuple: hvp needs a function of tensors."""
    h = x
    n = len(params) // 2
    for i in range(n):
        h = F.linear(h, params[2 * i], params[2 * i + 1])
        if i + 1 < n:
            h = torch.relu(h)
    return h


def mlp_step_us():
    model = mlp([784, 512, 256, 10])
    x, y = torch.randn(128, 784), torch.randint(0, 10, (128,))

    def step():
        model.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()

    return median_time(step)


def mlp_hvp_us():
    params = tuple(p.detach() for p in mlp([784, 512, 256, 10]).parameters())
    v = tuple(torch.randn_like(p) for p in params)
    x, y = torch.randn(128, 784), torch.randint(0, 10, (128,))

    def loss(*ps):
        return F.cross_entropy(mlp_functional(ps, x), y)

    return median_time(lambda: torch.autograd.functional.hvp(loss, params, v))


def per_example_loop_us():
    model = mlp([64, 32, 10])
    params = list(model.parameters())
    x, y = torch.randn(64, 64), torch.randint(0, 10, (64,))

    def loop():
        for i in range(64):
            loss = F.cross_entropy(model(x[i:i + 1]), y[i:i + 1])
            torch.autograd.grad(loss, params)

    return median_time(loop)


def per_example_functorch_us():
    """For reference only: functorch's vmap(grad) as shipped with torch 1.13."""
    try:
        from functorch import grad, vmap
    except ImportError:
        return None
    params = tuple(p.detach() for p in mlp([64, 32, 10]).parameters())
    x, y = torch.randn(64, 64), torch.randint(0, 10, (64,))

    def one(ps, xi, yi):
        return F.cross_entropy(mlp_functional(ps, xi[None]), yi[None])

    per_example = vmap(grad(one), in_dims=(None, 0, 0))
    return median_time(lambda: per_example(params, x, y))


def tiny_chain_us():
    x0 = torch.randn(8)

    def step():
        x = x0.detach().requires_grad_()
        h = x
        for i in range(100):
            if i % 3 == 0:
                h = h * 0.9
            elif i % 3 == 1:
                h = h + 0.1
            else:
                h = torch.sin(h)
        loss = h.sum()
        torch.autograd.grad(loss, x)

    return median_time(step)


def lstm_step_us():
    n, d, hd = 32, 256, 256
    leaves = [torch.randn(n, d), torch.randn(n, hd), torch.randn(n, hd), torch.randn(d, 4 * hd) * 0.05,
              torch.randn(hd, 4 * hd) * 0.05, torch.zeros(4 * hd)]
    leaves = [t.requires_grad_() for t in leaves]
    x, h, c, wx, wh, b = leaves

    def step():
        gates = torch.addmm(b, x, wx) + h @ wh
        i, f, u, o = gates.chunk(4, 1)
        c2 = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(u)
        h2 = torch.sigmoid(o) * torch.tanh(c2)
        loss = h2.sum() + c2.sum()
        torch.autograd.grad(loss, leaves)

    return median_time(step)


def main():
    torch.manual_seed(0)
    out = {}
    for t in (1, 2):
        torch.set_num_threads(t)
        out[f"ad_mlp_value_and_grad/{t}"] = {"threads": t, "us": mlp_step_us()}
        out[f"ad_mlp_hvp_params/{t}"] = {"threads": t, "us": mlp_hvp_us()}
    torch.set_num_threads(1)
    out["ad_per_example_grad_loop/1"] = {"threads": 1, "us": per_example_loop_us()}
    fx = per_example_functorch_us()
    if fx is not None:
        out["ad_per_example_grad_functorch/1"] = {"threads": 1, "us": fx}
    out["ad_tiny_chain_100/1"] = {"threads": 1, "us": tiny_chain_us()}
    for t in (1, 2):
        torch.set_num_threads(t)
        out[f"ad_lstm_step/{t}"] = {"threads": t, "us": lstm_step_us()}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
