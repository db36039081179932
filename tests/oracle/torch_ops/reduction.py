# SPDX-License-Identifier: Apache-2.0
"""PyTorch reference for the reduction family (tests/oracle/cases_reduction.cc).

Attrs: "axes" (list; empty = all), "keepdims", "correction", "axis", "p".
"""
import torch


def _prod(x, dim, keepdim):
    # torch.prod takes one dim: reduce the listed dims one at a time (highest first).
    dims = sorted(dim, reverse=True) if dim else []
    if not dims:
        return torch.prod(x) if not keepdim else torch.prod(x).reshape([1] * x.dim())
    for d in dims:
        x = torch.prod(x, dim=d, keepdim=True)
    if not keepdim:
        for d in dims:
            x = x.squeeze(d)
    return x


def _boolred(fn):
    def g(x, dim, keepdim):
        dims = sorted(dim, reverse=True) if dim else list(range(x.dim() - 1, -1, -1))
        x = x.bool() if x.dtype == torch.uint8 else x  # torch keeps uint8 for all/any; Spore gives bool
        if not dims:
            return fn(x)
        for d in dims:
            x = fn(x, dim=d, keepdim=True)
        if not keepdim:
            for d in dims:
                x = x.squeeze(d)
        return x
    return g


def _norm(x, dim, keepdim, p):
    return torch.linalg.vector_norm(x, ord=p, dim=dim if dim else None, keepdim=keepdim)


def red(fn, extra=None):
    """Calls fn(x, dims, keepdim[, attrs[extra]]); dims None for a 0-d input (reduce nothing)."""
    def f(ins, a):
        x = ins[0]
        if x.dim() == 0:
            dim = None
        else:
            dim = tuple(d % x.dim() for d in a["axes"]) if a["axes"] else tuple(range(x.dim()))
        if extra is not None:
            return fn(x, dim, a["keepdims"], a[extra])
        return fn(x, dim, a["keepdims"])
    return f


OPS = {
    "sum": red(lambda x, d, k: torch.sum(x) if d is None else torch.sum(x, dim=d, keepdim=k)),
    "mean": red(lambda x, d, k: torch.mean(x) if d is None else torch.mean(x, dim=d, keepdim=k)),
    "prod": red(lambda x, d, k: _prod(x, d, k)),
    "amax": red(lambda x, d, k: torch.amax(x) if d is None else torch.amax(x, dim=d, keepdim=k)),
    "amin": red(lambda x, d, k: torch.amin(x) if d is None else torch.amin(x, dim=d, keepdim=k)),
    "all": red(_boolred(torch.all)),
    "any": red(_boolred(torch.any)),
    "var": red(lambda x, d, k, c: torch.var(x, dim=d, correction=c, keepdim=k), "correction"),
    "std": red(lambda x, d, k, c: torch.std(x, dim=d, correction=c, keepdim=k), "correction"),
    "logsumexp": red(lambda x, d, k: torch.logsumexp(x, dim=d if d is not None else (), keepdim=k)),
    "norm": red(lambda x, d, k, p: _norm(x, d, k, p), "p"),
    "argmax": lambda ins, a: torch.argmax(ins[0]) if a.get("flat") else
    torch.argmax(ins[0], dim=a["axis"], keepdim=a["keepdims"]),
    "argmin": lambda ins, a: torch.argmin(ins[0]) if a.get("flat") else
    torch.argmin(ins[0], dim=a["axis"], keepdim=a["keepdims"]),
    "cumsum": lambda ins, a: torch.cumsum(ins[0], dim=a["axis"]),
    "cumprod": lambda ins, a: torch.cumprod(ins[0], dim=a["axis"]),
}
