# SPDX-License-Identifier: Apache-2.0
"""PyTorch reference for factories (tests/oracle/cases_creation.cc)."""
import torch

from torch_ops.common import DTYPES

OPS = {
    "zeros": lambda ins, a: torch.zeros(a["shape"], dtype=DTYPES[a["dtype"]]),
    "ones": lambda ins, a: torch.ones(a["shape"], dtype=DTYPES[a["dtype"]]),
    "full": lambda ins, a: torch.full(a["shape"], a["value"], dtype=DTYPES[a["dtype"]]),
    # torch 1.13 has no bfloat16 eye kernel; 0/1 values are exact in every dtype.
    "eye": lambda ins, a: torch.eye(a["n"], a["m"]).to(DTYPES[a["dtype"]]),
    "arange_int": lambda ins, a: torch.arange(a["start"], a["end"], a["step"]),
    "arange_float": lambda ins, a: torch.arange(a["start"], a["end"], a["step"], dtype=DTYPES[a["dtype"]]),
    "linspace": lambda ins, a: torch.linspace(a["start"], a["end"], a["steps"], dtype=DTYPES[a["dtype"]]),
}
