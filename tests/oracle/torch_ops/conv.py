# SPDX-License-Identifier: Apache-2.0
"""PyTorch reference for the conv family (tests/oracle/cases_conv.cc): convolutions and pools."""
import warnings

import torch
import torch.nn.functional as F

# padding="same" with even kernels: PyTorch warns that it pads a copy; the result is what we check.
warnings.filterwarnings("ignore", message="Using padding='same'")


def _f32(fn):
    """16-bit inputs: Spore accumulates in float32 and rounds once; do the same here."""
    def f(ins, a):
        dt = ins[0].dtype
        low = dt in (torch.float16, torch.bfloat16)
        out = fn([x.float() if low else x for x in ins], a)
        if isinstance(out, tuple):
            return tuple(o.to(dt) if low and o.is_floating_point() else o for o in out)
        return out.to(dt) if low else out
    return f


def _conv(fn):
    def f(ins, a):
        bias = ins[2] if len(ins) == 3 else None
        pad = "same" if a["same"] else a["padding"]
        return fn(ins[0], ins[1], bias, stride=a["stride"], padding=pad, dilation=a["dilation"], groups=a["groups"])
    return _f32(f)


def _conv_t(ins, a):
    bias = ins[2] if len(ins) == 3 else None
    return F.conv_transpose2d(ins[0], ins[1], bias, stride=a["stride"], padding=a["padding"],
                              output_padding=a["output_padding"], groups=a["groups"], dilation=a["dilation"])


def _pool_args(a):
    return dict(kernel_size=a["kernel"], stride=a["stride"] or None, padding=a["padding"], ceil_mode=a["ceil_mode"])


OPS = {
    "conv1d": _conv(F.conv1d),
    "conv2d": _conv(F.conv2d),
    "conv3d": _conv(F.conv3d),
    "conv_transpose2d": _f32(_conv_t),
    "max_pool2d": _f32(lambda ins, a: F.max_pool2d(ins[0], **_pool_args(a))),
    "max_pool2d_with_indices": _f32(lambda ins, a: F.max_pool2d(ins[0], return_indices=True, **_pool_args(a))),
    "avg_pool2d": _f32(lambda ins, a: F.avg_pool2d(ins[0], count_include_pad=a["count_include_pad"],
                                                   **_pool_args(a))),
    "adaptive_avg_pool2d": _f32(lambda ins, a: F.adaptive_avg_pool2d(ins[0], a["output_size"])),
}
