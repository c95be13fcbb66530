#!/usr/bin/python3
"""PyTorch twin of trex's optimisers (AdamW: torch.optim.AdamW; Muon: DEEPSEEK_V4.md §9 written in torch).

Writes tests/train/fixtures/optimizer_steps.json: initial tensors, per-step gradients and learning rates, and the
parameters after every step for both optimisers. Run with Debian's torch: /usr/bin/python3 gen_optimizer_fixture.py
"""
import json
import math
import os

import torch

torch.manual_seed(1234)
STEPS = 3
LRS = [1e-2, 2e-2, 5e-3]
shapes = {"layers.0.attn.wq_a.weight": (6, 4), "layers.0.ffn.w1.weight": (3, 8), "layers.0.attn_norm.weight": (5,)}
init = {k: torch.randn(*s, dtype=torch.float64).float() for k, s in shapes.items()}
grads = [{k: torch.randn(*s, dtype=torch.float64).float() for k, s in shapes.items()} for _ in range(STEPS)]


def adamw_run():
    params = {k: v.clone().requires_grad_(True) for k, v in init.items()}
    decay = [p for k, p in params.items() if p.dim() >= 2]
    no_decay = [p for k, p in params.items() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=LRS[0], betas=(0.9, 0.999), eps=1e-8)
    out = []
    for s in range(STEPS):
        for g in opt.param_groups:
            g["lr"] = LRS[s]
        for k, p in params.items():
            p.grad = grads[s][k].clone()
        opt.step()
        out.append({k: p.detach().flatten().tolist() for k, p in params.items()})
    return out


def newton_schulz(g, steps=10):
    x = g.clone()
    transposed = x.shape[0] > x.shape[1]
    if transposed:
        x = x.T
    x = x / (x.norm() + 1e-7)
    for i in range(steps):
        a, b, c = (3.4445, -4.7750, 2.0315) if i < 8 else (2.0, -1.5, 0.5)
        A = x @ x.T
        B = b * A + c * A @ A
        x = a * x + B @ x
    return x.T if transposed else x


def muon_run():
    params = {k: v.clone() for k, v in init.items()}
    mom = {k: torch.zeros_like(v) for k, v in init.items()}
    m1 = {k: torch.zeros_like(v) for k, v in init.items()}
    v2 = {k: torch.zeros_like(v) for k, v in init.items()}
    out = []
    for s in range(STEPS):
        lr = LRS[s]
        t = s + 1
        for k, p in params.items():
            g = grads[s][k]
            if p.dim() >= 2 and "norm" not in k:
                mom[k] = 0.95 * mom[k] + g
                u = 0.95 * mom[k] + g
                o = newton_schulz(u) * math.sqrt(max(p.shape)) * 0.18
                params[k] = p * (1 - lr * 0.1) - lr * o
            else:  # AdamW for norms (1-D: no decay)
                m1[k] = 0.9 * m1[k] + 0.1 * g
                v2[k] = 0.999 * v2[k] + 0.001 * g * g
                denom = v2[k].sqrt() / math.sqrt(1 - 0.999 ** t) + 1e-8
                params[k] = p - (lr / (1 - 0.9 ** t)) * m1[k] / denom
        out.append({k: p.flatten().tolist() for k, p in params.items()})
    return out


fixture = {
    "shapes": {k: list(s) for k, s in shapes.items()},
    "lrs": LRS,
    "init": {k: v.flatten().tolist() for k, v in init.items()},
    "grads": [{k: v.flatten().tolist() for k, v in g.items()} for g in grads],
    "adamw": adamw_run(),
    "muon": muon_run(),
    "torch_version": torch.__version__,
}
here = os.path.dirname(os.path.abspath(__file__))
dst = os.path.join(here, "..", "..", "train", "fixtures", "optimizer_steps.json")
os.makedirs(os.path.dirname(dst), exist_ok=True)
with open(dst, "w") as f:
    json.dump(fixture, f)
print("wrote", os.path.normpath(dst))
