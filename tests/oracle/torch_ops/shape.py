# SPDX-License-Identifier: Apache-2.0
"""PyTorch reference for the shape family (tests/oracle/cases_shape.cc): views and copies."""
import torch
import torch.nn.functional as F


def _slice(x, a):
    idx = [slice(None)] * x.dim()
    idx[a["axis"]] = slice(a["start"], a["stop"], a["step"])
    return x[tuple(idx)]


def _squeeze(x, a):
    return x.squeeze(a["axis"]) if "axis" in a else x.squeeze()


def _pad(x, a):
    mode, pads = a["mode"], a["pads"]
    if mode == "constant":
        v = a["value"]
        if x.dtype == torch.bool:
            v = bool(v)
        elif not x.is_floating_point():
            v = int(v)
        return F.pad(x, pads, mode, v)
    # PyTorch 1.13 has reflect/replicate kernels for floating dtypes only: pad in float64
    # (exact for every value tested) and convert back.
    return F.pad(x.double(), pads, mode).to(x.dtype)


def _roll(x, a):
    return torch.roll(x, a["shifts"], a["axes"]) if a["axes"] else torch.roll(x, a["shifts"])


def _masked_fill(ins, a):
    x, v = ins[0], a["value"]
    if x.dtype == torch.bool:
        v = bool(v)
    elif not x.is_floating_point():
        v = int(v)
    return x.masked_fill(ins[1], v)


def _sort(ins, a):
    x = ins[0]
    up = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    v, i = torch.sort(up, dim=a["axis"], descending=a["descending"], stable=True)
    return v.to(x.dtype), i


def _topk(ins, a):
    x = ins[0]
    up = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    v, i = torch.topk(up, a["k"], dim=a["axis"], largest=a["largest"], sorted=True)
    return v.to(x.dtype), i


OPS = {
    "reshape": lambda ins, a: ins[0].reshape(a["shape"]),
    "flatten": lambda ins, a: torch.flatten(ins[0], a["start"], a["end"]),
    "transpose": lambda ins, a: ins[0].transpose(a["a"], a["b"]),
    "permute": lambda ins, a: ins[0].permute(a["axes"]),
    "slice": lambda ins, a: _slice(ins[0], a),
    "select": lambda ins, a: ins[0].select(a["axis"], a["i"]),
    "squeeze": lambda ins, a: _squeeze(ins[0], a),
    "unsqueeze": lambda ins, a: ins[0].unsqueeze(a["axis"]),
    "expand": lambda ins, a: ins[0].expand(a["shape"]),
    "broadcast_to": lambda ins, a: torch.broadcast_to(ins[0], a["shape"]),
    "stop_gradient": lambda ins, a: ins[0].detach(),
    "diagonal": lambda ins, a: torch.diagonal(ins[0], a["offset"], a["axis1"], a["axis2"]),
    "concat": lambda ins, a: torch.cat(ins, a["axis"]),
    "stack": lambda ins, a: torch.stack(ins, a["axis"]),
    "split": lambda ins, a: torch.split(ins[0], a["sizes"], a["axis"]),
    "chunk": lambda ins, a: torch.chunk(ins[0], a["chunks"], a["axis"]),
    "pad": lambda ins, a: _pad(ins[0], a),
    "flip": lambda ins, a: torch.flip(ins[0], a["axes"]),
    "roll": lambda ins, a: _roll(ins[0], a),
    "tile": lambda ins, a: torch.tile(ins[0], a["reps"]),
    "repeat_interleave": lambda ins, a: torch.repeat_interleave(ins[0], a["repeats"], a["axis"]),
    "tril": lambda ins, a: torch.tril(ins[0], a["diagonal"]),
    "triu": lambda ins, a: torch.triu(ins[0], a["diagonal"]),
    "gather": lambda ins, a: torch.gather(ins[0], a["axis"], ins[1].long()),
    "scatter": lambda ins, a: torch.scatter(ins[0], a["axis"], ins[1], ins[2]),
    "scatter_add": lambda ins, a: torch.scatter_add(ins[0], a["axis"], ins[1], ins[2]),
    "index_select": lambda ins, a: torch.index_select(ins[0], a["axis"], ins[1]),
    "take_along_axis": lambda ins, a: torch.take_along_dim(ins[0], ins[1], a["axis"]),
    "masked_fill": _masked_fill,
    "one_hot": lambda ins, a: F.one_hot(ins[0], a["num_classes"]),
    "sort": _sort,
    "argsort": lambda ins, a: _sort(ins, a)[1],
    "topk": _topk,
    "nonzero": lambda ins, a: torch.nonzero(ins[0]),
    "shape_of": lambda ins, a: torch.tensor(list(ins[0].shape), dtype=torch.int64),
}
