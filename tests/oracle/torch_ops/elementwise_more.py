# SPDX-License-Identifier: Apache-2.0
"""PyTorch reference for tests/oracle/cases_elementwise_more.cc."""
import torch


def _clamp(ins, a):
    # Bounds are the inputs after x; attrs has_lo / has_hi say which are present.
    x = ins[0]
    lo = ins[1] if a.get("has_lo", True) else None
    hi = ins[2 if a.get("has_lo", True) else 1] if a.get("has_hi", True) else None
    return torch.clamp(x, min=lo, max=hi)


OPS = {
    "floor_divide": lambda ins, a: torch.floor_divide(ins[0], ins[1]),
    "remainder": lambda ins, a: torch.remainder(ins[0], ins[1]),
    "logical_not": lambda ins, a: torch.logical_not(ins[0]),
    "isnan": lambda ins, a: torch.isnan(ins[0]),
    "isinf": lambda ins, a: torch.isinf(ins[0]),
    "isfinite": lambda ins, a: torch.isfinite(ins[0]),
    "erfinv": lambda ins, a: torch.erfinv(ins[0]),
    "where": lambda ins, a: torch.where(ins[0], ins[1], ins[2]),
    "clamp": _clamp,
    "clamp_scalar": lambda ins, a: torch.clamp(ins[0], min=a["lo"], max=a["hi"]),
    "lerp": lambda ins, a: torch.lerp(ins[0], ins[1], ins[2]),
}
