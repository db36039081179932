# SPDX-License-Identifier: Apache-2.0
"""PyTorch samples for the random family (tests/oracle/cases_random.cc): check.py compares the
distributions (mean, std, min, max) or the sorted values, not the raw numbers."""
import math

import torch
import torch.nn.functional as F

from torch_ops.common import DTYPES

torch.manual_seed(0)


def _f32(dtype):
    # torch 1.13 lacks some 16-bit random kernels: sample in float32 and round.
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def uniform(ins, a):
    d = DTYPES[a["dtype"]]
    return torch.empty(a["n"], dtype=_f32(d)).uniform_(a["low"], a["high"]).to(d)


def normal(ins, a):
    d = DTYPES[a["dtype"]]
    return torch.empty(a["shape"], dtype=_f32(d)).normal_(a["mean"], a["std"]).to(d)


def truncated_normal(ins, a):
    d = DTYPES[a["dtype"]]
    t = torch.empty(a["n"], dtype=torch.float64)
    torch.nn.init.trunc_normal_(t, a["mean"], a["std"], a["a"], a["b"])
    return t.to(d)


OPS = {
    "uniform": uniform,
    "normal": normal,
    "truncated_normal": truncated_normal,
    "bernoulli_p": lambda ins, a: torch.bernoulli(torch.full((a["n"],), a["p"])).to(DTYPES[a["dtype"]]),
    "bernoulli": lambda ins, a: torch.bernoulli(ins[0].float()).to(ins[0].dtype),
    "dropout": lambda ins, a: F.dropout(ins[0].float(), a["p"], training=True).to(ins[0].dtype),
    "randint": lambda ins, a: torch.randint(a["low"], a["high"], (a["n"],), dtype=DTYPES[a.get("dtype", "int64")]),
    "permutation": lambda ins, a: torch.randperm(a["n"]),
}
