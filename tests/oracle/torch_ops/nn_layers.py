# SPDX-License-Identifier: Apache-2.0
"""PyTorch reference for spore::nn cells and losses (tests/oracle/cases_nn_layers.cc).

nn_layer: builds torch.nn.<module>(**kwargs) in the inputs' dtype, copies Spore's parameters and
buffers into it, runs the call, and returns the forward outputs, the buffers afterwards, and the
gradients of the first output (for the given cotangent) with respect to every floating call input
and every parameter, in Spore's order.
nn_loss: torch.nn.functional.<fn>(input, target, ...) and its gradient with respect to the input.
"""
import json

import torch
import torch.nn.functional as F


class RMSNorm(torch.nn.Module):
    """PyTorch 1.13 has no nn.RMSNorm: torch 2.4's definition."""

    def __init__(self, normalized_shape, eps=None):
        super().__init__()
        self.shape = tuple(normalized_shape)
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(self.shape))

    def forward(self, x):
        dims = tuple(range(x.dim() - len(self.shape), x.dim()))
        eps = self.eps if self.eps is not None else torch.finfo(x.dtype).eps
        return x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps) * self.weight


def _kwargs(a):
    # The C++ side writes the JSON with single quotes (manifest strings are not escaped).
    return json.loads(a["kwargs"].replace("'", '"'))


def _module(name, kwargs):
    if name == "RMSNorm":
        return RMSNorm(**kwargs)
    return getattr(torch.nn, name)(**kwargs)


def _call(m, call, xs):
    if call == "unary":
        return [m(xs[0])]
    if call == "mha":
        q, k, v, am, kpm = xs
        return [m(q, k, v, key_padding_mask=kpm, attn_mask=am, need_weights=False)[0]]
    if call == "encoder":
        return [m(xs[0], src_mask=xs[1])]
    if call == "decoder":
        return [m(xs[0], xs[1], tgt_mask=xs[2], memory_key_padding_mask=xs[3])]
    if call == "lstm":
        out, (h, c) = m(xs[0], (xs[1], xs[2]))
        return [out, h, c]
    if call == "gru":
        out, h = m(xs[0], xs[1])
        return [out, h]
    if call in ("lstm_packed", "lstm_packed_state", "gru_packed"):
        x, state, lengths = xs[0], tuple(xs[1:-1]), xs[-1]
        steps = x.shape[1 if m.batch_first else 0]
        packed = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=m.batch_first, enforce_sorted=False)
        out, final = m(packed, state if call != "gru_packed" else state[0])
        out, _ = torch.nn.utils.rnn.pad_packed_sequence(out, batch_first=m.batch_first, total_length=steps)
        if call == "lstm_packed_state":
            return [final[0] + final[1], out]
        return [out, final[0], final[1]] if call == "lstm_packed" else [final, out]
    raise ValueError(f"unknown call {call}")


def _nn_layer(ins, a):
    n_in = a["n_in"]
    pnames = [n for n in a["params"].split(",") if n]
    bnames = [n for n in a["buffers"].split(",") if n]
    xs = list(ins[:n_in])
    pvals = ins[n_in:n_in + len(pnames)]
    bvals = ins[n_in + len(pnames):n_in + len(pnames) + len(bnames)]
    ct = ins[-1]
    dtype = pvals[0].dtype if pvals else next(x.dtype for x in xs if x is not None and x.is_floating_point())
    m = _module(a["module"], _kwargs(a)).to(dtype)
    m.train(a["train"])
    params = dict(m.named_parameters())
    assert sorted(params) == sorted(pnames), f"parameter names differ: torch {sorted(params)} spore {sorted(pnames)}"
    buffers = dict(m.named_buffers())
    with torch.no_grad():
        for n, v in zip(pnames, pvals):
            params[n].copy_(v)
        for n, v in zip(bnames, bvals):
            buffers[n].copy_(v)
    diff = [i for i, x in enumerate(xs) if x is not None and x.is_floating_point() and i < n_in]
    # Float attention masks are inputs too, so they are differentiated like Spore's.
    for i in diff:
        xs[i] = xs[i].detach().clone().requires_grad_(True)
    with torch.enable_grad():
        outs = _call(m, a["call"], xs)
        leaves = [xs[i] for i in diff] + [params[n] for n in pnames]
        grads = torch.autograd.grad(outs[0], leaves, ct, allow_unused=True)
    grads = [torch.zeros_like(l) if g is None else g for g, l in zip(grads, leaves)]
    outs = [o.detach() for o in outs]
    return tuple(outs + [buffers[n].detach().clone() for n in bnames] + grads)


def _nn_loss(ins, a):
    kw = _kwargs(a)
    fn = a["fn"]
    x = ins[0].detach().clone().requires_grad_(True)
    rest = list(ins[1:])
    with torch.enable_grad():
        if fn in ("cross_entropy", "nll_loss"):
            out = getattr(F, fn)(x, rest[0], weight=rest[1], **kw)
        elif fn == "binary_cross_entropy":
            out = F.binary_cross_entropy(x, rest[0], weight=rest[1], **kw)
        elif fn == "binary_cross_entropy_with_logits":
            out = F.binary_cross_entropy_with_logits(x, rest[0], weight=rest[1], pos_weight=rest[2], **kw)
        else:
            out = getattr(F, fn)(x, rest[0], **kw)
        (g,) = torch.autograd.grad(out.sum(), [x])
    return out.detach(), g


OPS = {"nn_layer": _nn_layer, "nn_loss": _nn_loss}
