# SPDX-License-Identifier: Apache-2.0
"""PyTorch reference for the linalg family (tests/oracle/cases_linalg.cc)."""
import torch


def _f32(fn):
    """Spore's 16-bit GEMMs accumulate in float32 and round once (PyTorch 1.13's CPU bf16 bmm and
    addmm round intermediates, which is less exact): compute in float32, round back. Operands of
    mixed dtypes are promoted first (torch.matmul refuses them; Spore promotes)."""
    def f(ins, a):
        dt = ins[0].dtype
        for x in ins[1:]:
            dt = torch.promote_types(dt, x.dtype)
        low = dt in (torch.float16, torch.bfloat16)
        xs = [x.to(torch.float32 if low else dt) for x in ins]
        out = fn(xs, a)
        return out.to(dt) if low else out
    return f


OPS = {
    "matmul": _f32(lambda ins, a: torch.matmul(ins[0], ins[1])),
    "addmm": _f32(lambda ins, a: torch.addmm(ins[0], ins[1], ins[2], beta=a["beta"], alpha=a["alpha"])),
    "outer": lambda ins, a: torch.outer(ins[0], ins[1]),
    "einsum": _f32(lambda ins, a: torch.einsum(a["equation"], *ins)),
}
