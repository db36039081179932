# SPDX-License-Identifier: Apache-2.0
"""PyTorch reference for the nn family (tests/oracle/cases_nn.cc)."""
import torch
import torch.nn.functional as F


def _layer_norm(ins, a):
    x, w, b = ins
    return F.layer_norm(x, a["shape"], w, b, a["eps"])


OPS = {
    "softmax": lambda ins, a: torch.softmax(ins[0], a["axis"]),
    "log_softmax": lambda ins, a: torch.log_softmax(ins[0], a["axis"]),
    "layer_norm": _layer_norm,
}


def _rms_norm(ins, a):
    # PyTorch 1.13 has no rms_norm: the formula of torch 2.4's, computed in float32 for 16-bit
    # inputs and rounded once.
    x, w = ins
    dims = tuple(range(x.dim() - len(a["shape"]), x.dim()))
    eps = a.get("eps", torch.finfo(x.dtype).eps)
    xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    y = xf * torch.rsqrt(xf.pow(2).mean(dims, keepdim=True) + eps)
    if w is not None:
        y = y * w.to(xf.dtype)
    return y.to(x.dtype)


def _batch_norm_train(ins, a):
    x, w, b, rm, rv = ins
    rm = None if rm is None else rm.clone()
    rv = None if rv is None else rv.clone()
    y = F.batch_norm(x, rm, rv, w, b, True, a["momentum"], a["eps"])
    return y if rm is None else (y, rm, rv)


OPS.update({
    "group_norm": lambda ins, a: F.group_norm(ins[0], a["groups"], ins[1], ins[2], a["eps"]),
    "rms_norm": _rms_norm,
    "batch_norm_train": _batch_norm_train,
    "batch_norm_eval": lambda ins, a: F.batch_norm(ins[0], ins[3], ins[4], ins[1], ins[2], False, 0.0, a["eps"]),
})


def _loss_kw(a):
    return dict(reduction=a["reduction"], ignore_index=a["ignore_index"])


OPS.update({
    "nll_loss": lambda ins, a: F.nll_loss(ins[0], ins[1], ins[2], **_loss_kw(a)),
    "cross_entropy": lambda ins, a: F.cross_entropy(ins[0], ins[1], ins[2], label_smoothing=a["label_smoothing"],
                                                    **_loss_kw(a)),
})


def _interpolate(ins, a):
    if a["mode"] == "nearest":
        return F.interpolate(ins[0], size=a["size"], mode="nearest")
    return F.interpolate(ins[0], size=a["size"], mode="bilinear", align_corners=a["align_corners"])


OPS.update({
    "embedding": lambda ins, a: F.embedding(ins[1], ins[0]),
    "interpolate": _interpolate,
})


def _attention(ins, a):
    # PyTorch 1.13 has no F.scaled_dot_product_attention: its definition, written out.
    q, k, v, mask = ins
    scale = a["scale"] if a["scale"] > 0 else 1.0 / (q.shape[-1] ** 0.5)
    s = torch.matmul(q, k.transpose(-2, -1)) * scale
    if a["causal"]:
        keep = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
        s = s.masked_fill(~keep, float("-inf"))
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else s + mask
    return torch.matmul(torch.softmax(s, -1), v)


OPS["attention"] = _attention
