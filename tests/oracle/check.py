# SPDX-License-Identifier: Apache-2.0
"""PyTorch side of the oracle: recompute every case of a manifest and compare.

Each torch_ops/<family>.py defines OPS = {name: fn(inputs, attrs) -> tensor or tuple}.
A case "grad:<name>" (tests/oracle/cases_grad.cc) is a gradient: its inputs are fn's inputs
plus a cotangent of fn's output, attrs["wrt"] the differentiated positions and
attrs["out_index"] the element of a tuple result; the outputs are Spore's vjp, compared with
torch.autograd.grad.
Prints `oracle: N ops, M cases, all agree` or the disagreements, and exits non-zero on any.
"""
import importlib
import json
import math
import os
import pathlib
import sys

import numpy as np
import torch

torch.set_num_threads(1)
HERE = pathlib.Path(__file__).parent

# Default tolerances per output dtype: (rtol, atol).
TOL = {
    "float64": (1e-10, 1e-12),
    "float32": (2e-5, 1e-5),
    "float16": (2e-3, 1e-3),
    "bfloat16": (1.6e-2, 1e-2),
}

# Gradients (float32): a rule and torch's backward use different formulas and summation orders,
# and a gradient often sums many products, so its rounding exceeds a forward op's.
GRAD_TOL = (1e-4, 1e-5)  # for float32 gradients; other dtypes keep TOL

TORCH_DTYPE = {
    "bool": torch.bool, "uint8": torch.uint8, "int8": torch.int8, "int16": torch.int16,
    "int32": torch.int32, "int64": torch.int64, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "float32": torch.float32, "float64": torch.float64,
}


def load(d, spec):
    a = np.load(os.path.join(d, spec["file"]))
    if spec["dtype"] == "bfloat16":
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(np.array(a, copy=True, order="C"))


def ops_table():
    table = {}
    for f in sorted((HERE / "torch_ops").glob("[!_]*.py")):
        mod = importlib.import_module(f"torch_ops.{f.stem}")
        for k, v in mod.OPS.items():
            assert k not in table, f"op {k} defined twice"
            table[k] = v
    return table


def run_torch(fn, ins, attrs):
    """Runs fn; where PyTorch 1.13's CPU build lacks a 16-bit float kernel, computes in float32 and
    rounds back to float16, which is what Spore's 16-bit kernels do too."""
    try:
        return fn(ins, attrs)
    except RuntimeError as e:
        if "Half" not in str(e) and "BFloat16" not in str(e):
            raise
        low = torch.float16 if "Half" in str(e) else torch.bfloat16
    up = [x.float() if isinstance(x, torch.Tensor) and x.dtype == low else x for x in ins]
    out = fn(up, attrs)
    down = lambda t: t.to(low) if isinstance(t, torch.Tensor) and t.dtype == torch.float32 else t
    return tuple(down(t) for t in out) if isinstance(out, (tuple, list)) else down(out)


def _index_shaped_src(fn):
    """scatter/scatter_add read only the index-shaped corner of src; PyTorch 1.13's backward
    returns src's gradient in the index's shape and raises when src is larger. Slicing src first
    is the same function, with a backward that pads the gradient to src's shape."""
    def f(ins, a):
        ins = list(ins)
        ins[2] = ins[2][tuple(slice(0, n) for n in ins[1].shape)]
        return fn(ins, a)
    return f


# Where the forward table's torch function has no usable derivative in PyTorch 1.13, the same
# function written differently for autograd.
GRAD_FN = {
    "scatter": _index_shaped_src,
    "scatter_add": _index_shaped_src,
    # floor_divide has no derivative formula; div with floor rounding is the same function and
    # has one (zero).
    "floor_divide": lambda fn: lambda ins, a: torch.div(ins[0], ins[1], rounding_mode="floor"),
}


def run_grad(fn, ins, attrs):
    """torch.autograd.grad of fn's output (element out_index of a tuple) for the cotangent
    ins[-1], with respect to the inputs at attrs["wrt"]."""
    xs, ct = list(ins[:-1]), ins[-1]
    leaves = []
    for i in attrs["wrt"]:
        xs[i] = xs[i].detach().clone().requires_grad_(True)
        leaves.append(xs[i])
    fattrs = {k: v for k, v in attrs.items() if k not in ("wrt", "out_index", "_case")}
    with torch.enable_grad():
        out = fn(xs, fattrs)
    if isinstance(out, (tuple, list)):
        out = out[attrs["out_index"]]
    if not out.requires_grad:  # torch's function does not depend on the leaves (floor, sign ...)
        return tuple(torch.zeros_like(x) for x in leaves)
    grads = torch.autograd.grad(out, leaves, ct, allow_unused=True)
    return tuple(torch.zeros_like(x) if g is None else g for g, x in zip(grads, leaves))


def compare(case, got, want, idx, default_tol=None):
    if not isinstance(want, torch.Tensor):
        want = torch.tensor(want)
    if got.dtype != want.dtype:
        return f"output {idx}: dtype {got.dtype} but torch gives {want.dtype}"
    if tuple(got.shape) != tuple(want.shape):
        return f"output {idx}: shape {tuple(got.shape)} but torch gives {tuple(want.shape)}"
    if case["shape_only"]:
        return None
    if case["attrs"].get("_sorted"):
        # Random permutations: the same multiset as torch's.
        got, want = got.flatten().sort().values, want.flatten().sort().values
    elif "_stat_atol" in case["attrs"]:
        # Random samples: the values cannot match torch's generator, the distribution must.
        tol = case["attrs"]["_stat_atol"]
        g, w = got.double(), want.double()
        for what, a, b in (("mean", g.mean(), w.mean()), ("std", g.std(), w.std()),
                           ("min", g.min(), w.min()), ("max", g.max(), w.max())):
            if abs(float(a) - float(b)) > tol * (1 + abs(float(b))):
                return f"output {idx}: sample {what} {float(a):.5g} but torch's sample gives {float(b):.5g} (tol {tol})"
        return None
    name = str(want.dtype).replace("torch.", "")
    if name in TOL:
        rtol, atol = default_tol if default_tol and name == "float32" else TOL[name]
        if case["rtol"] >= 0:
            rtol = case["rtol"]
        if case["atol"] >= 0:
            atol = case["atol"]
        g, w = got.double(), want.double()
        ok = torch.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        if not bool(ok.all()):
            bad = (~ok).nonzero()[0].tolist()
            return (f"output {idx}: {int((~ok).sum())} of {g.numel()} differ beyond rtol={rtol} atol={atol}; "
                    f"first at {bad}: spore {g[tuple(bad)].item()!r} torch {w[tuple(bad)].item()!r}")
    else:
        if not torch.equal(got, want):
            bad = (got != want).nonzero()[0].tolist()
            return f"output {idx}: differs at {bad}: spore {got[tuple(bad)].item()!r} torch {want[tuple(bad)].item()!r}"
    return None


def main():
    d = sys.argv[1]
    sys.path.insert(0, str(HERE))
    table = ops_table()
    failures, ops_seen, n = [], set(), 0
    with open(os.path.join(d, "manifest.jsonl")) as f:
        for line in f:
            case = json.loads(line)
            n += 1
            op = case["op"]
            ops_seen.add(op)
            is_grad = op.startswith("grad:")
            base = op[len("grad:"):] if is_grad else op
            if base not in table:
                failures.append(f"case {case['id']} {op}: no torch function in torch_ops/")
                continue
            if "_spore_error" in case["attrs"]:
                failures.append(f"case {case['id']} {op}: Spore raised: {case['attrs']['_spore_error']}")
                continue
            ins = [None if s is None else load(d, s) for s in case["inputs"]]
            outs = [load(d, s) for s in case["outputs"]]
            try:
                if is_grad:
                    fn = GRAD_FN[base](table[base]) if base in GRAD_FN else table[base]
                    want = run_grad(fn, ins, case["attrs"])
                else:
                    want = run_torch(table[op], ins, case["attrs"])
            except Exception as e:  # noqa: BLE001 - report any torch failure as a disagreement
                failures.append(f"case {case['id']} {op}: torch raised {type(e).__name__}: {e}")
                continue
            if not isinstance(want, (tuple, list)):
                want = [want]
            if len(want) != len(outs):
                failures.append(f"case {case['id']} {op}: {len(outs)} outputs, torch gives {len(want)}")
                continue
            for i, (g, w) in enumerate(zip(outs, want)):
                err = compare(case, g, w, i, GRAD_TOL if is_grad else None)
                if err:
                    shapes = ", ".join(f"{tuple(x.shape)} {str(x.dtype)[6:]}" for x in ins if x is not None)
                    failures.append(f"case {case['id']} {op}({shapes}) attrs={case['attrs']}: {err}")
    if n == 0:
        print("oracle: no cases in the manifest (did the driver build?)")
        sys.exit(1)
    if failures:
        for fl in failures[:60]:
            print("DISAGREE", fl)
        print(f"oracle: {len(ops_seen)} ops, {n} cases, {len(failures)} disagree")
        sys.exit(1)
    print(f"oracle: {len(ops_seen)} ops, {n} cases, all agree")


if __name__ == "__main__":
    main()
