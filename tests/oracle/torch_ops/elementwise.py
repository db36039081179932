# SPDX-License-Identifier: Apache-2.0
"""PyTorch reference for the elementwise family (tests/oracle/cases_elementwise.cc)."""
import torch
import torch.nn.functional as F

from torch_ops.common import DTYPES


def unary(fn):
    return lambda ins, a: fn(ins[0])


def binary(fn):
    return lambda ins, a: fn(ins[0], ins[1])


def _floatish(fn):
    # torch keeps integer dtype for some ops where Spore (like NumPy for exp/log) goes to float.
    def f(x):
        if not x.is_floating_point():
            x = x.to(torch.float32)
        return fn(x)
    return f


OPS = {
    "neg": unary(torch.neg), "abs": unary(torch.abs), "sign": unary(torch.sign),
    "exp": unary(torch.exp), "expm1": unary(torch.expm1), "log": unary(torch.log),
    "log1p": unary(torch.log1p), "log2": unary(torch.log2), "sqrt": unary(torch.sqrt),
    "rsqrt": unary(torch.rsqrt), "reciprocal": unary(_floatish(torch.reciprocal)),
    "square": unary(torch.square), "sin": unary(torch.sin), "cos": unary(torch.cos),
    "tan": unary(torch.tan), "asin": unary(torch.asin), "acos": unary(torch.acos),
    "atan": unary(torch.atan), "sinh": unary(torch.sinh), "cosh": unary(torch.cosh),
    "tanh": unary(torch.tanh), "sigmoid": unary(torch.sigmoid), "relu": unary(torch.relu),
    "relu6": unary(F.relu6), "leaky_relu": unary(F.leaky_relu), "elu": unary(F.elu),
    "selu": unary(F.selu), "gelu": unary(F.gelu),
    "gelu_tanh": unary(lambda x: F.gelu(x, approximate="tanh")), "silu": unary(F.silu),
    "mish": unary(F.mish), "softplus": unary(F.softplus), "hardswish": unary(F.hardswish),
    "hardsigmoid": unary(F.hardsigmoid), "erf": unary(torch.erf), "floor": unary(torch.floor),
    "ceil": unary(torch.ceil), "round": unary(torch.round), "trunc": unary(torch.trunc),
    "add": binary(torch.add), "sub": binary(torch.sub), "mul": binary(torch.mul),
    "div": binary(torch.div), "maximum": binary(torch.maximum), "minimum": binary(torch.minimum),
    "pow": binary(torch.pow), "atan2": binary(torch.atan2), "equal": binary(torch.eq),
    "not_equal": binary(torch.ne), "less": binary(torch.lt), "less_equal": binary(torch.le),
    "greater": binary(torch.gt), "greater_equal": binary(torch.ge),
    "logical_and": binary(torch.logical_and), "logical_or": binary(torch.logical_or),
    "logical_xor": binary(torch.logical_xor), "bitwise_and": binary(torch.bitwise_and),
    "bitwise_or": binary(torch.bitwise_or), "bitwise_xor": binary(torch.bitwise_xor),
    "add_scalar": lambda ins, a: ins[0] + a["value"],
    "mul_scalar": lambda ins, a: ins[0] * a["value"],
    "cast": lambda ins, a: ins[0].to(DTYPES[a["dtype"]]),
}
