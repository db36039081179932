# SPDX-License-Identifier: Apache-2.0
"""PyTorch reference for optimizers, gradient clipping and learning-rate schedules
(tests/oracle/cases_optim.cc)."""
import warnings

import torch

# Stepping a schedule before any optimizer step is what these cases mean to do.
warnings.filterwarnings("ignore", module="torch.optim.lr_scheduler")

N_SHAPES = 3
BOOLS = ("nesterov", "amsgrad", "centered")


class Lamb(torch.optim.Optimizer):
    """LAMB (You et al. 2019, Algorithm 2) with bias correction; torch has none built in."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if not st:
                    st["step"] = 0
                    st["exp_avg"] = torch.zeros_like(p)
                    st["exp_avg_sq"] = torch.zeros_like(p)
                st["step"] += 1
                g, m, v = p.grad, st["exp_avg"], st["exp_avg_sq"]
                m.mul_(b1).add_(g, alpha=1 - b1)
                v.mul_(b2).addcmul_(g, g, value=1 - b2)
                m_hat = m / (1 - b1 ** st["step"])
                v_hat = v / (1 - b2 ** st["step"])
                u = m_hat / (v_hat.sqrt() + group["eps"])
                if group["weight_decay"] != 0:
                    u = u + group["weight_decay"] * p
                wn, un = p.norm(), u.norm()
                trust = wn / un if (wn > 0 and un > 0) else torch.tensor(1.0)
                p.sub_(group["lr"] * trust * u)


def _options(a, prefix=""):
    o = {k[len(prefix):]: v for k, v in a.items()
         if k.startswith(prefix) and "." not in k[len(prefix):]
         and k[len(prefix):] not in ("optimizer", "steps", "skip")
         and not k[len(prefix):].startswith("onecycle_")}
    for k in BOOLS:
        if k in o:
            o[k] = bool(o[k])
    if "beta1" in o or "beta2" in o:
        o["betas"] = (o.pop("beta1", 0.9), o.pop("beta2", 0.999))
    return o


CLASSES = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW,
           "rmsprop": torch.optim.RMSprop, "adagrad": torch.optim.Adagrad, "lamb": Lamb}


def optim_steps(ins, a):
    params = [x.clone().requires_grad_(True) for x in ins[:N_SHAPES]]
    grads = ins[N_SHAPES:]
    defaults = _options(a)
    g1 = _options(a, "g1.")
    if any(k.startswith("g1.") for k in a):
        groups = [{"params": params[:2]}, dict(params=params[2:], **g1)]
    else:
        groups = [{"params": params}]
    lr = defaults.pop("lr")
    opt = CLASSES[a["optimizer"]](groups, lr=lr, **defaults)
    sched = None
    if "onecycle_total" in a:  # PyTorch's defaults: momentum (or betas[0]) cycled
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, a["onecycle_max_lr"], total_steps=a["onecycle_total"])
    skip = set(a["skip"])
    hist = [[] for _ in params]
    for s in range(a["steps"]):
        for i, p in enumerate(params):
            p.grad = None if s * 3 + i in skip else grads[i][s].clone()
        opt.step()
        if sched is not None:
            sched.step()
        for i, p in enumerate(params):
            hist[i].append(p.detach().clone())
    return tuple(torch.stack(h) for h in hist)


def clip_grad_norm(ins, a):
    ps = [torch.zeros_like(g, requires_grad=True) for g in ins]
    for p, g in zip(ps, ins):
        p.grad = g.clone()
    total = torch.nn.utils.clip_grad_norm_(ps, a["max_norm"], a["norm_type"])
    return tuple(p.grad for p in ps) + (total,)


def clip_grad_value(ins, a):
    ps = [torch.zeros_like(g, requires_grad=True) for g in ins]
    for p, g in zip(ps, ins):
        p.grad = g.clone()
    torch.nn.utils.clip_grad_value_(ps, a["clip"])
    return tuple(p.grad for p in ps)


def _two_group_sgd():
    a, b = torch.zeros(2, requires_grad=True), torch.zeros(2, requires_grad=True)
    return torch.optim.SGD([{"params": [a], "lr": 0.1}, {"params": [b], "lr": 0.05}], lr=0.1)


def lr_schedule(ins, a):
    S = torch.optim.lr_scheduler
    opt = _two_group_sgd()
    kind = a["schedule"]
    if kind == "step":
        sched = S.StepLR(opt, a["step_size"], a["gamma"])
    elif kind == "multistep":
        sched = S.MultiStepLR(opt, a["milestones"], a["gamma"])
    elif kind == "exponential":
        sched = S.ExponentialLR(opt, a["gamma"])
    elif kind == "cosine" and a["warmup"] == 0:
        sched = S.CosineAnnealingLR(opt, a["t_max"], a["eta_min"])
    elif kind == "cosine":
        warm = S.LinearLR(opt, start_factor=a["start_factor"], end_factor=1.0, total_iters=a["warmup"])
        cos = S.CosineAnnealingLR(opt, a["t_max"], a["eta_min"])
        sched = S.SequentialLR(opt, [warm, cos], milestones=[a["warmup"]])
    elif kind == "polynomial":
        sched = S.PolynomialLR(opt, a["total_iters"], a["power"])
    elif kind == "onecycle":
        max_lr = a["max_lr"] if len(a["max_lr"]) > 1 else a["max_lr"][0]
        sched = S.OneCycleLR(opt, max_lr, total_steps=a["total_steps"], pct_start=a["pct_start"],
                             anneal_strategy=a["anneal"], cycle_momentum=False, three_phase=a["three_phase"])
    else:
        raise ValueError(f"unknown schedule {kind}")
    lrs = []
    for s in range(a["steps"]):
        if s > 0:
            sched.step()
        lrs.append([g["lr"] for g in opt.param_groups])
    t = torch.tensor(lrs, dtype=torch.float64)
    return t, t


def lr_plateau(ins, a):
    opt = _two_group_sgd()
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(
        opt, mode=a["mode"], factor=a["factor"], patience=a["patience"], threshold=a["threshold"],
        threshold_mode=a["threshold_mode"], cooldown=a["cooldown"], min_lr=a["min_lr"], eps=a["eps"])
    lrs = []
    for m in ins[0].tolist():
        sched.step(m)
        lrs.append([g["lr"] for g in opt.param_groups])
    return torch.tensor(lrs, dtype=torch.float64)


OPS = {
    "optim_steps": optim_steps,
    "clip_grad_norm_": clip_grad_norm,
    "clip_grad_value_": clip_grad_value,
    "lr_schedule": lr_schedule,
    "lr_plateau": lr_plateau,
}
